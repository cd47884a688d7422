#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "log.h"

static int g_level = SC_LOG_INFO;
static char g_prefix[64];
static _Atomic int g_warnings; /* counted from any thread */

void sc_log_set_level(int level) { g_level = level; }
int sc_log_level(void) { return g_level; }
int sc_log_warning_count(void) { return g_warnings; }

void sc_log_set_prefix(const char *prefix) { snprintf(g_prefix, sizeof g_prefix, "%s", prefix ? prefix : ""); }

static void emit(int level, const char *tag, const char *fmt, va_list ap)
{
    if (level > g_level) return;
    fprintf(stderr, "%s%s", g_prefix, tag);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

#define SC_LOG_FN(name, level, tag, extra) \
    void name(const char *fmt, ...)        \
    {                                      \
        extra;                             \
        va_list ap;                        \
        va_start(ap, fmt);                 \
        emit(level, tag, fmt, ap);         \
        va_end(ap);                        \
    }
SC_LOG_FN(sc_log_error, SC_LOG_QUIET, "error: ", (void)0)
SC_LOG_FN(sc_log_warn, SC_LOG_WARN, "warning: ", g_warnings++)
SC_LOG_FN(sc_log_info, SC_LOG_INFO, "", (void)0)
SC_LOG_FN(sc_log_debug, SC_LOG_DEBUG, "debug: ", (void)0)

double sc_peak_memory_bytes(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) ? 0 : 1024.0 * (double)ru.ru_maxrss; /* Linux: kilobytes */
}

double sc_wall_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void sc_progress_begin(sc_progress *p, const char *label, int64_t total)
{
    memset(p, 0, sizeof *p);
    snprintf(p->label, sizeof p->label, "%s", label);
    p->total = total > 0 ? total : 1;
    p->t_start = p->t_last = sc_wall_time();
    p->tty = isatty(STDERR_FILENO);
}

static void progress_draw(sc_progress *p, int final)
{
    double now = sc_wall_time(), frac = (double)p->done / (double)p->total;
    double el = now - p->t_start, eta = frac > 0 ? el * (1 - frac) / frac : 0;
    if (p->tty) {
        char bar[31];
        int n = (int)(frac * 30 + 0.5);
        for (int i = 0; i < 30; i++) bar[i] = i < n ? '#' : '.';
        bar[30] = 0;
        fprintf(stderr, "\r%s%s [%s] %5.1f%% %6.1fs eta %6.1fs%s", g_prefix, p->label, bar, 100 * frac, el, eta, final ? "\n" : "");
    } else {
        fprintf(stderr, "%s%s: %lld/%lld (%.1f%%) %.1fs elapsed, eta %.1fs\n", g_prefix, p->label, (long long)p->done, (long long)p->total,
                100 * frac, el, eta);
    }
    fflush(stderr);
}

void sc_progress_update(sc_progress *p, int64_t done)
{
    p->done = done;
    if (g_level < SC_LOG_INFO) return;
    double now = sc_wall_time();
    /* Terminals redraw ~10x/s; logs (Slurm) get one line every 10 s. */
    if (now - p->t_last < (p->tty ? 0.1 : 10.0)) return;
    p->t_last = now;
    progress_draw(p, 0);
}

void sc_progress_end(sc_progress *p)
{
    p->done = p->total;
    if (g_level >= SC_LOG_INFO && (p->tty || sc_wall_time() - p->t_start > 10.0)) progress_draw(p, 1);
}

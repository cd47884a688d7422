/* Logging on stderr with a verbosity level and an optional prefix (MPI rank), and
 * progress reporting: a bar when stderr is a terminal, periodic lines otherwise. */
#ifndef SC_LOG_H
#define SC_LOG_H
#include <stdint.h>

enum { SC_LOG_QUIET = 0, SC_LOG_WARN = 1, SC_LOG_INFO = 2, SC_LOG_DEBUG = 3 };

void sc_log_set_level(int level);
int sc_log_level(void);
void sc_log_set_prefix(const char *prefix); /* e.g. "[rank 3] " */
void sc_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sc_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sc_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sc_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Number of warnings emitted so far (MuJoCo counts warnings, so do we). */
int sc_log_warning_count(void);

typedef struct sc_progress {
    char label[64];
    int64_t total, done;
    double t_start, t_last;
    int tty;
} sc_progress;

void sc_progress_begin(sc_progress *p, const char *label, int64_t total);
void sc_progress_update(sc_progress *p, int64_t done);
void sc_progress_end(sc_progress *p);

double sc_wall_time(void);         /* seconds, monotonic */
double sc_peak_memory_bytes(void); /* this process's peak resident memory */

#endif

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/cleanup.h"

/* A slot is free (0), being written (1) or live (2 + kind); a signal handler only reads live
 * slots, so it never sees a half-copied path. */
enum { SLOT_FREE = 0, SLOT_BUSY = 1, SLOT_LIVE = 2 };

static struct {
    _Atomic int state;
    char path[PATH_MAX];
} g_slot[SC_CLEANUP_SLOTS];
static volatile sig_atomic_t g_child;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* The signals whose handlers read the registry are blocked while it changes. */
static void block_signals(sigset_t *old)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &s, old);
    pthread_mutex_lock(&g_lock);
}

static void unblock_signals(const sigset_t *old)
{
    pthread_mutex_unlock(&g_lock);
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

int sc_cleanup_add(const char *path, sc_cleanup_kind kind)
{
    if (!path || !path[0] || strlen(path) >= PATH_MAX) return -1;
    sigset_t old;
    block_signals(&old);
    int rc = -1;
    for (int i = 0; i < SC_CLEANUP_SLOTS; i++) {
        if (atomic_load(&g_slot[i].state) != SLOT_FREE) continue;
        atomic_store(&g_slot[i].state, SLOT_BUSY);
        memcpy(g_slot[i].path, path, strlen(path) + 1);
        atomic_store(&g_slot[i].state, SLOT_LIVE + (int)kind);
        rc = 0;
        break;
    }
    unblock_signals(&old);
    return rc;
}

void sc_cleanup_forget(const char *path)
{
    if (!path) return;
    sigset_t old;
    block_signals(&old);
    for (int i = 0; i < SC_CLEANUP_SLOTS; i++)
        if (atomic_load(&g_slot[i].state) >= SLOT_LIVE && !strcmp(g_slot[i].path, path)) atomic_store(&g_slot[i].state, SLOT_FREE);
    unblock_signals(&old);
}

void sc_cleanup_set_child(pid_t pid) { g_child = pid; }

void sc_cleanup_run(int include_outputs)
{
    int saved = errno;
    pid_t child = (pid_t)g_child;
    if (child > 0) {
        /* the child writes into files about to be removed: stop it first (SIGKILL: the HDF5
           guard's reader ignores the stop signals, which are the parent's to handle) */
        kill(child, SIGKILL);
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {}
        g_child = 0;
    }
    /* files first (newest first), then the directories that held them */
    for (int pass = 0; pass < 2; pass++)
        for (int i = SC_CLEANUP_SLOTS - 1; i >= 0; i--) {
            int st = atomic_load(&g_slot[i].state);
            if (st < SLOT_LIVE) continue;
            int kind = st - SLOT_LIVE;
            if (kind == SC_CLEANUP_DIR ? pass != 1 || !include_outputs : pass != 0) continue;
            if (kind == SC_CLEANUP_OUTPUT && !include_outputs) continue;
            if (kind == SC_CLEANUP_DIR) rmdir(g_slot[i].path);
            else unlink(g_slot[i].path);
            atomic_store(&g_slot[i].state, SLOT_FREE);
        }
    errno = saved;
}

void sc_cleanup_keep_outputs(void)
{
    sigset_t old;
    block_signals(&old);
    for (int i = 0; i < SC_CLEANUP_SLOTS; i++)
        if (atomic_load(&g_slot[i].state) > SLOT_LIVE) atomic_store(&g_slot[i].state, SLOT_FREE);
    unblock_signals(&old);
}

int sc_cleanup_count(void)
{
    int n = 0;
    for (int i = 0; i < SC_CLEANUP_SLOTS; i++) n += atomic_load(&g_slot[i].state) >= SLOT_LIVE;
    return n;
}

static _Atomic unsigned g_temp_counter;

static int temp_fits(const char *path, size_t extra)
{
    size_t n = strlen(path);
    const char *slash = strrchr(path, '/');
    size_t base = slash ? n - (size_t)(slash + 1 - path) : n;
    return n + extra < PATH_MAX && base + extra <= NAME_MAX;
}

int sc_temp_name_fits(const char *path) { return path && path[0] && temp_fits(path, SC_TEMP_SUFFIX_MAX); }

int sc_temp_name(const char *path, char *out, size_t n)
{
    if (!path || !path[0]) return -1;
    unsigned r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = (unsigned)ts.tv_nsec * 2654435761u;
    }
    /* the counter keeps names distinct within a process whatever the random bits */
    unsigned v = r + atomic_fetch_add(&g_temp_counter, 1u) * 0x9e3779b9u;
    int len = snprintf(out, n, "%s.tmp.%ld.%08x", path, (long)getpid(), v);
    if (len < 0 || (size_t)len >= n || !temp_fits(path, (size_t)len - strlen(path))) return -1;
    return 0;
}

static sc_fatal_fn g_fatal;

void sc_set_fatal_handler(sc_fatal_fn fn) { g_fatal = fn; }

void sc_fatal(int code, const char *msg)
{
    if (g_fatal) g_fatal(code, msg);
    fprintf(stderr, "softcon: fatal: %s\n", msg);
    sc_cleanup_run(1);
    abort();
}

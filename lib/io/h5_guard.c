/* HDF5 layer: whole-file reads guarded by a child process (sc_h5_read_file, sc_h5_read_image),
 * since libhdf5 itself can crash, loop or allocate without limit on a damaged file. */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/cleanup.h"
#include "core/log.h"
#include "io/h5_internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define SC_H5_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SC_H5_ASAN 1
#endif
#endif

static int g_guard = 1;
static double g_guard_seconds;    /* 0: the default */
static double g_guard_memory_mib; /* 0: the default */

void sc_h5_guard_config(int enabled, double seconds)
{
    if (enabled >= 0) g_guard = enabled ? 1 : 0;
    if (seconds > 0) g_guard_seconds = seconds;
}

void sc_h5_guard_memory_limit(double mib)
{
    if (mib > 0) g_guard_memory_mib = mib;
}

/* MiB a guarded read may grow the process by: sc_h5_guard_memory_limit's, else 1 GiB + 16 x the file */
static double guard_memory_mib(double bytes) { return g_guard_memory_mib > 0 ? g_guard_memory_mib : 1024 + 16 * bytes / (1 << 20); }

static int open_any(const char *path, const void *data, size_t size, const char *name, sc_h5 **f, sc_err *err)
{
    return path ? sc_h5_open(path, f, err) : sc_h5_open_image(data, size, name, f, err);
}

/* Runs the reader in a child; SC_OK when the reader succeeded there, the reader's own error when
 * it failed there, SC_EINPUT when the child crashed, ran out of time or took too much memory. */
#ifndef SC_H5_ASAN
/* This process's virtual memory size (/proc/self/statm), 0 when unknown. */
static double address_space_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0;
    if (f) {
        if (fscanf(f, "%llu", &pages) != 1) pages = 0;
        fclose(f);
    }
    return (double)pages * (double)sysconf(_SC_PAGESIZE);
}
#endif

/* What the child tells the parent: the read's outcome and how much the process grew. */
struct guard_report {
    char tag[4]; /* "done": the child got to the end */
    int64_t grew_kib;
    int32_t rc;
    sc_err err;
};

static int guard_child(const char *path, const void *data, size_t size, const char *name, sc_h5_reader reader, void *arg, sc_err *err)
{
    struct stat st;
    double bytes = path ? (stat(path, &st) == 0 ? (double)st.st_size : 0) : (double)size;
    double seconds = g_guard_seconds > 0 ? g_guard_seconds : 10 + bytes / (10 << 20);
    int fds[2];
    if (pipe(fds) != 0) return SC_OK; /* cannot guard: read unguarded */
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return SC_OK;
    }
    if (pid == 0) {
        /* the child: no clean-up handlers (the registry is the parent's), no output, limits. The
           stop signals are ignored: a SIGTERM sent to the whole job (Slurm's requeue, a Ctrl-C to
           the process group) is the parent's to act on, not a crash of the reader; the parent
           kills the child when it must (core/cleanup.h) */
        static const int stops[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1}, fatal[] = {SIGPIPE, SIGXCPU};
        for (size_t i = 0; i < sizeof stops / sizeof *stops; i++) signal(stops[i], SIG_IGN);
        for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) signal(fatal[i], SIG_DFL);
        close(fds[0]);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
#ifndef SC_H5_ASAN
        /* above the address space the fork inherited: MPI libraries map gigabytes of it on big
           machines, and a limit below that makes every allocation fail (a "crash" of libhdf5) */
        rlim_t as = (rlim_t)(address_space_bytes() + 8.0 * (1 << 30) + 64 * bytes);
        struct rlimit lim = {as, as};
        setrlimit(RLIMIT_AS, &lim);
#endif
        /* CPU time, not wall time: a busy machine must not turn a slow honest read into
           "damaged" (SIGXCPU at the limit, SIGKILL a second later) */
        struct rlimit cpu = {(rlim_t)ceil(seconds), (rlim_t)ceil(seconds) + 1};
        setrlimit(RLIMIT_CPU, &cpu);
        struct guard_report rep;
        memset(&rep, 0, sizeof rep);
        memcpy(rep.tag, "done", 4);
        sc_err_clear(&rep.err);
        struct rusage r0, r1;
        getrusage(RUSAGE_SELF, &r0); /* the peak so far: what the fork inherited */
        sc_h5 *f;
        rep.rc = open_any(path, data, size, name, &f, &rep.err);
        if (!rep.rc) {
            rep.rc = reader(f, arg, &rep.err);
            sc_h5_close(f);
        }
        getrusage(RUSAGE_SELF, &r1);
        rep.grew_kib = r1.ru_maxrss - r0.ru_maxrss;
        (void)!write(fds[1], &rep, sizeof rep);
        _exit(0);
    }
    close(fds[1]);
    sc_cleanup_set_child(pid);
    struct guard_report rep;
    char *buf = (char *)&rep;
    size_t got = 0;
    /* the parent's wall-clock backstop is only for a child that cannot run at all (stopped,
       stuck in the kernel): far above what any load makes of the CPU limit */
    double deadline = sc_wall_time() + 20 * seconds + 60;
    int killed = 0;
    for (;;) {
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int left = (int)((deadline - sc_wall_time()) * 1000);
        int pr = left > 0 ? poll(&pfd, 1, left) : 0;
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) {
            kill(pid, SIGKILL);
            killed = 1;
            break;
        }
        ssize_t k = read(fds[0], buf + got, sizeof rep - got);
        if (k > 0 && (got += (size_t)k) < sizeof rep) continue;
        if (k < 0 && errno == EINTR) continue;
        break;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    sc_cleanup_set_child(0);
    const char *who = path ? path : name;
    if (got == sizeof rep && !memcmp(rep.tag, "done", 4) && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        /* memory: damaged lengths make libhdf5 allocate and fill gigabytes for a small file, and the
           read in this process would do the same */
        const double grew = (double)rep.grew_kib / 1024, limit = guard_memory_mib(bytes);
        if (grew > limit)
            return sc_fail(err, SC_EINPUT,
                           "%s: damaged HDF5 file: the HDF5 library took %.0f MiB of memory reading it (a file "
                           "of %.0f KiB; at most %.0f MiB, SOFTCON_H5_GUARD_MEMORY_MB)",
                           who, grew, bytes / 1024, limit);
        /* a read that failed in the child is not repeated here: without the child's limits the same
           damaged file can take another path (an allocation the limit refused succeeds, and libhdf5
           then loops unguarded) */
        if (rep.rc) {
            rep.err.msg[sizeof rep.err.msg - 1] = 0;
            return sc_fail(err, rep.rc, "%s", rep.err.msg);
        }
        return SC_OK;
    }
    if (killed || (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL)))
        return sc_fail(err, SC_EINPUT,
                       "%s: damaged HDF5 file: the HDF5 library did not finish reading it in %.0f s of CPU time "
                       "(damaged files can make it loop forever)",
                       who, seconds);
    if (WIFSIGNALED(status))
        return sc_fail(err, SC_EINPUT,
                       "%s: damaged HDF5 file: the HDF5 library crashed reading it (%s, in a guard "
                       "process; nothing was read)",
                       who, strsignal(WTERMSIG(status)));
    return sc_fail(err, SC_EINPUT, "%s: damaged HDF5 file: reading it failed in a guard process (exit status %d%s)", who,
                   WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                   WIFEXITED(status) && WEXITSTATUS(status) ? "; out of memory or a sanitizer report" : "");
}

static int read_guarded(const char *path, const void *data, size_t size, const char *name, sc_h5_reader reader, void *arg, sc_err *err)
{
    h5_init();
    if (g_guard) {
        int rc = guard_child(path, data, size, name, reader, arg, err);
        if (rc) return rc;
    }
    sc_h5 *f;
    int rc = open_any(path, data, size, name, &f, err);
    if (rc) return rc;
    rc = reader(f, arg, err);
    sc_h5_close(f);
    return rc;
}

int sc_h5_read_file(const char *path, sc_h5_reader reader, void *arg, sc_err *err)
{
    if (!path || !path[0]) return sc_fail(err, SC_EIO, "sc_h5_read_file: no path");
    return read_guarded(path, NULL, 0, NULL, reader, arg, err);
}

int sc_h5_read_image(const void *data, size_t size, const char *name, sc_h5_reader reader, void *arg, sc_err *err)
{
    return read_guarded(NULL, data, size, name ? name : "<memory>", reader, arg, err);
}

/* One test executable, tiny ENSURE macros, tests register themselves (Box2D style).
 * Run: build/release/softcon_test [substring-filter ...] */
#ifndef SC_TEST_H
#define SC_TEST_H
#include <math.h>
#include <stddef.h>
#include <stdio.h>

typedef void (*sc_test_fn)(void);
void sc_test_register(const char *name, const char *file, sc_test_fn fn);
void sc_test_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A measured figure worth keeping in the log (momentum drift, errors, ...). */
void sc_test_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define TEST(name)                                                                                                     \
    static void test_##name(void);                                                                                     \
    __attribute__((constructor)) static void register_##name(void) { sc_test_register(#name, __FILE__, test_##name); } \
    static void test_##name(void)

#define ENSURE(c)                                       \
    do {                                                \
        if (!(c)) {                                     \
            sc_test_fail(__FILE__, __LINE__, "%s", #c); \
            return;                                     \
        }                                               \
    } while (0)
#define ENSURE_MSG(c, ...)                                 \
    do {                                                   \
        if (!(c)) {                                        \
            sc_test_fail(__FILE__, __LINE__, __VA_ARGS__); \
            return;                                        \
        }                                                  \
    } while (0)
#define ENSURE_NEAR(a, b, tol)                                                                                                      \
    do {                                                                                                                            \
        double ea_ = (a), eb_ = (b), et_ = (tol);                                                                                   \
        if (!(fabs(ea_ - eb_) <= et_)) {                                                                                            \
            sc_test_fail(__FILE__, __LINE__, "%s = %.17g, %s = %.17g, |diff| %.3g > %.3g", #a, ea_, #b, eb_, fabs(ea_ - eb_), et_); \
            return;                                                                                                                 \
        }                                                                                                                           \
    } while (0)
/* For helper functions returning int: report and return 0. */
#define CHECK(c, ...)                                      \
    do {                                                   \
        if (!(c)) {                                        \
            sc_test_fail(__FILE__, __LINE__, __VA_ARGS__); \
            return 0;                                      \
        }                                                  \
    } while (0)
/* Library call that must succeed: prints the error message otherwise. */
#define ENSURE_OK(call, errp)                                                          \
    do {                                                                               \
        int rc_ = (call);                                                              \
        if (rc_ != 0) {                                                                \
            sc_test_fail(__FILE__, __LINE__, "%s -> %d: %s", #call, rc_, (errp)->msg); \
            return;                                                                    \
        }                                                                              \
    } while (0)

/* Paths: a per-run scratch directory, a CMU clip from SOFTCON_MOCAP_PATH, a real body from
 * SOFTCON_MESH_PATH, a file in the repository (SOFTCON_ROOT), a tool in SOFTCON_BIN. Each
 * returns a static-lifetime copy. */
const char *sc_test_tmpdir(void);
const char *sc_test_tmp(const char *name);
const char *sc_test_mocap(const char *name);
const char *sc_test_mesh(const char *name);
const char *sc_test_repo(const char *rel);
const char *sc_test_tool(const char *name);
/* This test program (absolute path), and its mode as one rank of an MPI job of sc_par_map checks
 * (test_par.c: softcon_test --par-ranks THREADS under mpiexec; exit 0 when every check holds). */
const char *sc_test_self(void);
int sc_test_par_ranks(int threads);
/* Write text to a file (returns its path = sc_test_tmp(name)). */
const char *sc_test_write(const char *name, const char *text);
/* Run a shell command, capturing stdout+stderr into out (may be NULL); returns exit status
 * (or 128+signal). */
int sc_test_sh(char *out, size_t out_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int sc_test_file_exists(const char *path);
/* simulate -c NAME (text written to it) on character: 1 when it is refused as a bad config must
 * be: exit 2, the message (in out) naming NAME:LINE: and holding want, and no output written. */
int sc_test_simulate_refuses(char *out, size_t out_size, const char *character, const char *name, const char *text, int line, const char *want);
/* A child process for what must not outlive the test (a resource limit, a signal handler): in
 * the child (return 0) *fd is the end it writes its findings to; in the parent (return the pid,
 * -1 on failure) the end sc_test_child_output reads them from. */
int sc_test_fork(int *fd);
/* The parent: what the child wrote, NUL-terminated (at most n - 1 bytes), once it has ended; its
 * wait status in *status (may be NULL). Returns the bytes read. */
size_t sc_test_child_output(int pid, int fd, char *buf, size_t n, int *status);
/* Polls done(arg) every 20 ms while a process whose command line starts with `command` runs
 * (pgrep -f, checked every second), at most max_s seconds: 1 when done() held. A busy or
 * sanitized machine is slower, never a reason to give up while the run goes on. */
int sc_test_wait_while_running(int (*done)(const void *arg), const void *arg, const char *command, double max_s);
/* Whether a writer's temporary of path is there: path.tmp, or a run's path.tmp.<pid>.<random>. */
int sc_test_temporary_left(const char *path);
/* Whether A and B hold the same results (scripts/h5-same.py: every dataset's shape, type and
 * bytes and every attribute, provenance and timing aside; h5diff 1.10's exit status misses a
 * shape difference). only: comma-separated groups to compare ("/bones,/nodes"), NULL: the whole
 * file. 1 same; 0 different or unreadable, the differences in out. */
int sc_test_h5_same(char *out, size_t out_size, const char *a, const char *b, const char *only);
/* The whole file, NUL-terminated (free() it); NULL when unreadable. len may be NULL. */
char *sc_test_read_file(const char *path, size_t *len);

#endif

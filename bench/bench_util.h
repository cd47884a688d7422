/* Small helpers the benchmark programs share (each bench .c file is one program). */
#ifndef SC_BENCH_UTIL_H
#define SC_BENCH_UTIL_H
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v and returns its median. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return v[n / 2];
}

/* Runs work(ctx, worker) in two processes at once, one per core, and returns the sum of the
 * rates they return; -1 when one of them fails (returns a negative rate or dies). */
static inline double bench_two_at_once(double (*work)(void *ctx, int worker), void *ctx)
{
    int fds[2][2];
    for (int c = 0; c < 2; c++) {
        if (pipe(fds[c])) return -1;
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            double r = work(ctx, c);
            _exit(write(fds[c][1], &r, sizeof r) == sizeof r && r >= 0 ? 0 : 1);
        }
    }
    double total = 0;
    for (int c = 0; c < 2; c++) {
        double r = -1;
        if (read(fds[c][0], &r, sizeof r) != sizeof r || r < 0) total = -1;
        else if (total >= 0) total += r;
        close(fds[c][0]);
        close(fds[c][1]);
    }
    while (wait(NULL) > 0) {}
    return total;
}

#endif

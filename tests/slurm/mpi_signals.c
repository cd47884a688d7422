/* A small MPI job for the Slurm tests (scripts/slurm/lib.sh builds it with mpicc.mpich): it
 * works in steps of 0.2 s joined by an MPI_Allreduce, rank 0 checkpoints the step count after
 * every step (write + rename), and each rank logs to DIR/rank<R>.log every signal it receives,
 * with the time and the sending pid. It stands in for the sampler: after a requeue it resumes
 * from the checkpoint.
 *
 *   mpi_signals DIR STEPS [--stubborn]
 *
 * On SIGTERM, SIGUSR1 or SIGINT it finishes the step, rank 0 writes the checkpoint, and every
 * rank exits with code 75 ("requeue me", EX_TEMPFAIL). --stubborn: log the signal and keep
 * working (to measure when Slurm's SIGKILL follows). Exit 0 after STEPS steps in all. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXIT_REQUEUE 75

static volatile sig_atomic_t g_stop;
static int g_log = -1, g_stubborn;

/* async-signal-safe decimal */
static size_t put_long(char *b, long v)
{
    char t[24];
    size_t n = 0, k = 0;
    if (v < 0) { b[k++] = '-'; v = -v; }
    do { t[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) b[k++] = t[--n];
    return k;
}

static size_t put_str(char *b, const char *s)
{
    size_t k = 0;
    while (s[k]) { b[k] = s[k]; k++; }
    return k;
}

/* "<unix time in ms> <event> [from pid N]" */
static void log_event(const char *event, long from_pid)
{
    char b[160];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    size_t k = put_long(b, (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    b[k++] = ' ';
    k += put_str(b + k, event);
    if (from_pid >= 0) {
        k += put_str(b + k, " from pid ");
        k += put_long(b + k, from_pid);
    }
    b[k++] = '\n';
    if (g_log >= 0 && write(g_log, b, k) < 0) { /* nothing to do from a handler */ }
}

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    char ev[32];
    size_t k = put_str(ev, "signal ");
    k += put_str(ev + k, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
    ev[k] = 0;
    log_event(ev, si ? (long)si->si_pid : -1);
    if (!g_stubborn && (sig == SIGTERM || sig == SIGUSR1 || sig == SIGINT)) g_stop = 1;
}

static long read_checkpoint(const char *path)
{
    FILE *f = fopen(path, "r");
    long step = 0;
    if (f) {
        if (fscanf(f, "%ld", &step) != 1) step = 0;
        fclose(f);
    }
    return step;
}

static int write_checkpoint(const char *path, long step)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    fprintf(f, "%ld\n", step);
    if (fclose(f) || rename(tmp, path)) return -1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "--stubborn"))) {
        fprintf(stderr, "usage: mpi_signals DIR STEPS [--stubborn]\n");
        return 1;
    }
    g_stubborn = argc == 4;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGTERM, SIGUSR1, SIGUSR2, SIGINT, SIGHUP, SIGCONT, SIGQUIT, SIGALRM};
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[4200], ckpt[4200];
    snprintf(path, sizeof path, "%s/rank%d.log", argv[1], rank);
    snprintf(ckpt, sizeof ckpt, "%s/checkpoint", argv[1]);
    g_log = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (g_log < 0) {
        fprintf(stderr, "mpi_signals: %s: %s\n", path, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaction(sigs[i], &sa, NULL);
    long steps = atol(argv[2]), step = rank == 0 ? read_checkpoint(ckpt) : 0;
    MPI_Bcast(&step, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    char ev[128];
    snprintf(ev, sizeof ev, "start rank %d of %d pid %d parent %d step %ld of %ld", rank, size, (int)getpid(), (int)getppid(), step, steps);
    log_event(ev, -1);
    int code = 0;
    while (step < steps) {
        struct timespec d = {0, 200 * 1000 * 1000};
        while (nanosleep(&d, &d) && errno == EINTR) {}
        long local = g_stop, any = 0;
        MPI_Allreduce(&local, &any, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD); /* stop together */
        step++;
        if (rank == 0 && write_checkpoint(ckpt, step)) log_event("cannot write the checkpoint", -1);
        if (step % 5 == 0) {
            snprintf(ev, sizeof ev, "step %ld", step);
            log_event(ev, -1);
        }
        if (any) {
            snprintf(ev, sizeof ev, "checkpointed at step %ld, exiting %d to be requeued", step, EXIT_REQUEUE);
            log_event(ev, -1);
            code = EXIT_REQUEUE;
            break;
        }
    }
    if (!code) {
        snprintf(ev, sizeof ev, "done: %ld steps", step);
        log_event(ev, -1);
    }
    close(g_log);
    MPI_Finalize();
    return code;
}

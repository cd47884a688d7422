/* The coupled step on a character (default: results/bench/character.h5 from scripts/bench.sh):
 * median per-step cost with a per-stage breakdown over 2000 steps after a warm-up, one
 * thread; then two independent simulations at once, one per core. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/log.h"
#include "io/character.h"
#include "sim/sim.h"

#define WARMUP 300
#define STEPS 2000

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

static int run(const sc_model *m, int steps, double stage[6][STEPS], double *wall)
{
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    sc_sim *s;
    sc_err err;
    if (sc_sim_create(m, &o, &s, &err)) { fprintf(stderr, "bench_sim: %s\n", err.msg); return 1; }
    for (int k = 0; k < WARMUP; k++)
        if (sc_sim_step(s, &err)) { fprintf(stderr, "bench_sim: %s\n", err.msg); return 1; }
    double t0 = sc_wall_time();
    for (int k = 0; k < steps; k++) {
        sc_sim_timing before = s->timing;
        if (sc_sim_step(s, &err)) { fprintf(stderr, "bench_sim: %s\n", err.msg); return 1; }
        if (stage) {
            stage[0][k] = s->timing.total - before.total;
            stage[1][k] = s->timing.fem - before.fem;
            stage[2][k] = s->timing.skin - before.skin;
            stage[3][k] = s->timing.contact - before.contact;
            stage[4][k] = (s->timing.coupling - before.coupling) + (s->timing.damping - before.damping);
            stage[5][k] = s->timing.ode - before.ode;
        }
    }
    *wall = sc_wall_time() - t0;
    sc_sim_free(s);
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "results/bench/character.h5";
    sc_model m;
    sc_err err;
    if (sc_character_read(path, &m, 1, &err)) { fprintf(stderr, "bench_sim: %s\n", err.msg); return 1; }
    static double stage[6][STEPS];
    double wall;
    if (run(&m, STEPS, stage, &wall)) return 1;
    static const char *const names[6] = {"step", "fem_forces", "rest_shape_skinning", "contact", "coupling_and_damping", "ode_step"};
    printf("bench_sim: %s: %d nodes, %d tets, %d surface vertices, %d bones; standing on the ground, dt 0.5 ms, %d steps after %d\n",
           path, m.nnodes, m.ntets, m.nsurf_verts, m.nbones, STEPS, WARMUP);
    for (int i = 0; i < 6; i++) {
        double med = 1e6 * median(stage[i], STEPS);
        printf("bench_sim: %-22s median %7.1f us\n@ sim_%s_median %.1f us\n", names[i], med, names[i], med);
    }
    printf("@ sim_realtime_factor_one_core %.2f x\n", STEPS * 0.5e-3 / wall);
    /* two simulations at once, one per core */
    int fds[2][2];
    for (int c = 0; c < 2; c++) {
        if (pipe(fds[c])) return 1;
        pid_t pid = fork();
        if (pid == 0) {
            double w;
            if (run(&m, STEPS, NULL, &w)) _exit(1);
            if (write(fds[c][1], &w, sizeof w) != sizeof w) _exit(1);
            _exit(0);
        }
    }
    double rate = 0;
    for (int c = 0; c < 2; c++) {
        double w = 0;
        if (read(fds[c][0], &w, sizeof w) != sizeof w) return 1;
        rate += STEPS / w;
    }
    while (wait(NULL) > 0) {}
    printf("bench_sim: two simulations in parallel: %.0f steps/s together (%.0f each, one alone: %.0f)\n", rate, rate / 2, STEPS / wall);
    printf("@ sim_two_cores_steps_per_s %.0f steps/s\n@ sim_one_core_steps_per_s %.0f steps/s\n", rate, STEPS / wall);
    sc_model_free(&m);
    return 0;
}

/* The coupled step on a character (default: results/bench/character.h5 from scripts/bench.sh),
 * standing on the ground with the options of configs/stand.yaml and push.yaml (the exact ODE
 * solver, pose-based plasticity and damping): the median cost of a step and of every stage
 * over STEPS steps after a warm-up, one thread; then two independent simulations at once,
 * one per core.
 * Unless --only, a second simulation with the FEM pass in single precision
 * (simulation.fem_precision: single) steps alongside the first, the two alternating every
 * 100 steps so that both see the same machine: its stage medians (prefixed f32_) and the
 * ratios double / single.
 * Usage: bench_sim [character.h5] [--steps N] [--quick-solver] [--only double|single]
 *   --only P: only the one-core figures of one simulation with the FEM pass in precision P
 *   (the scaling series runs it on every mesh size). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_util.h"
#include "core/log.h"
#include "store/character.h"
#include "sim/sim.h"
#include "../cmd/common/environment.h"

#define WARMUP 300
#define NSTAGE 8

static const char *const stage_names[NSTAGE] = {"step", "fem_forces", "rest_shape_skinning", "damping", "contact", "coupling", "ode_step", "integrate"};

static void stage_times(const sc_sim_timing *a, const sc_sim_timing *b, double *t)
{
    t[0] = b->total - a->total;
    t[1] = b->fem - a->fem;
    t[2] = b->skin - a->skin;
    t[3] = b->damping - a->damping;
    t[4] = b->contact - a->contact;
    t[5] = b->coupling - a->coupling;
    t[6] = b->ode - a->ode;
    t[7] = b->integrate - a->integrate;
}

static int make_sim(const sc_model *m, int exact, int fem_single, sc_sim **s)
{
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.skeleton.exact_solver = exact;
    o.fem_single = fem_single;
    sc_err err;
    if (sc_sim_create(m, &o, s, &err)) { fprintf(stderr, "bench_sim: %s\n", err.msg); return 1; }
    for (int k = 0; k < WARMUP; k++)
        if (sc_sim_step(*s, &err)) { fprintf(stderr, "bench_sim: %s\n", err.msg); return 1; }
    return 0;
}

/* n steps of s; stage[i][k0 + k] (may be NULL) receives stage i of step k */
static int steps_of(sc_sim *s, int n, double **stage, int k0, double *wall)
{
    sc_err err;
    double t0 = sc_wall_time();
    for (int k = 0; k < n; k++) {
        sc_sim_timing before = s->timing;
        if (sc_sim_step(s, &err)) { fprintf(stderr, "bench_sim: %s\n", err.msg); return 1; }
        if (stage) {
            double t[NSTAGE];
            stage_times(&before, &s->timing, t);
            for (int i = 0; i < NSTAGE; i++) stage[i][k0 + k] = t[i];
        }
    }
    *wall += sc_wall_time() - t0;
    return 0;
}

/* steps a standing simulation, its FEM pass in single precision when fem_single (a
 * single-precision one alongside when stage32 is not NULL) */
static int run(const sc_model *m, int exact, int fem_single, int steps, double **stage, double **stage32, double *wall, long *redone)
{
    sc_sim *s, *s32 = NULL;
    if (make_sim(m, exact, fem_single, &s) || (stage32 && make_sim(m, exact, 1, &s32))) return 1;
    long redone0 = sc_skeleton_redone_steps(s->skel);
    double w32 = 0;
    *wall = 0;
    for (int k = 0; k < steps; k += 100) {
        const int n = steps - k < 100 ? steps - k : 100;
        if (steps_of(s, n, stage, k, wall) || (s32 && steps_of(s32, n, stage32, k, &w32))) return 1;
    }
    if (redone) *redone = sc_skeleton_redone_steps(s->skel) - redone0;
    sc_sim_free(s);
    sc_sim_free(s32);
    return 0;
}

typedef struct { const sc_model *m; int exact, steps; } two_ctx;
static double two_work(void *ctx, int worker)
{
    (void)worker;
    const two_ctx *c = ctx;
    double w;
    return run(c->m, c->exact, 0, c->steps, NULL, NULL, &w, NULL) ? -1 : c->steps / w;
}

int main(int argc, char **argv)
{
    sc_environment_apply(); /* the settings the tools take from the environment */
    const char *path = "results/bench/character.h5";
    int steps = 2000, exact = 1, only = 0, fem_single = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick-solver")) exact = 0;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            only = 1;
            fem_single = !strcmp(argv[++i], "single");
            if (!fem_single && strcmp(argv[i], "double")) { fprintf(stderr, "bench_sim: --only double|single\n"); return 1; }
        }
        else path = argv[i];
    }
    if (steps < 10) steps = 10;
    sc_model m;
    sc_err err;
    if (sc_character_read(path, &m, 1, &err)) { fprintf(stderr, "bench_sim: %s\n", err.msg); return 1; }
    double *stage[NSTAGE], *stage32[NSTAGE], wall;
    for (int i = 0; i < NSTAGE; i++) {
        stage[i] = malloc((size_t)steps * sizeof(double));
        stage32[i] = malloc((size_t)steps * sizeof(double));
    }
    long redone = 0;
    if (run(&m, exact, fem_single, steps, stage, only ? NULL : stage32, &wall, &redone)) return 1;
    printf("bench_sim: %s: %d nodes, %d tets, %d surface vertices, %d bones; standing on the ground, dt 0.5 ms, %s ODE solver, "
           "FEM kernel %s, %d steps after %d (%ld ODE steps redone with every torque bound)\n",
           path, m.nnodes, m.ntets, m.nsurf_verts, m.nbones, exact ? "exact" : "quick (20 iterations)",
           sc_fem_kernel_name(fem_single ? sc_fem_kernel_id_single() : sc_fem_kernel_id()), steps, WARMUP, redone);
    printf("@ sim_tets %d count\n@ sim_nodes %d count\n", m.ntets, m.nnodes);
    double sum = 0, med[NSTAGE];
    for (int i = 0; i < NSTAGE; i++) {
        med[i] = 1e6 * bench_median(stage[i], steps);
        if (i) sum += med[i];
        printf("bench_sim: %-22s median %7.1f us\n@ sim_%s_median %.1f us\n", stage_names[i], med[i], stage_names[i], med[i]);
    }
    printf("bench_sim: (sum of the stage medians %.1f us)\n", sum);
    printf("@ sim_one_core_steps_per_s %.0f steps/s\n@ sim_realtime_factor_one_core %.2f x\n", steps / wall, steps * 0.5e-3 / wall);
    if (!only) { /* two simulations at once, one per core */
        two_ctx ctx = {&m, exact, steps};
        double rate = bench_two_at_once(two_work, &ctx);
        if (rate < 0) { fprintf(stderr, "bench_sim: a simulation of the two failed\n"); return 1; }
        printf("bench_sim: two simulations in parallel: %.0f steps/s together (%.0f each, one alone: %.0f)\n", rate, rate / 2,
               steps / wall);
        printf("@ sim_two_cores_steps_per_s %.0f steps/s\n", rate);
        printf("bench_sim: alongside, FEM in single precision (kernel %s):\n", sc_fem_kernel_name(sc_fem_kernel_id_single()));
        double med32[NSTAGE];
        for (int i = 0; i < NSTAGE; i++) {
            med32[i] = 1e6 * bench_median(stage32[i], steps);
            printf("bench_sim: %-22s median %7.1f us  (double / single %.2f)\n@ sim_f32_%s_median %.1f us\n", stage_names[i], med32[i],
                   med[i] / med32[i], stage_names[i], med32[i]);
        }
        printf("@ sim_step_double_over_single %.2f x\n@ sim_fem_forces_double_over_single %.2f x\n", med[0] / med32[0], med[1] / med32[1]);
    }
    for (int i = 0; i < NSTAGE; i++) {
        free(stage[i]);
        free(stage32[i]);
    }
    sc_model_free(&m);
    return 0;
}

/* Sampling throughput: the unit of work of sample-openloop ([L13] 5, SAMCON) on the built-in
 * character, as the sampler does it (lib/sampling/samcon.c, sample_task): restore an elite's
 * snapshot, draw PD target offsets, run a 0.1 s segment (200 steps of 0.5 ms, exact ODE
 * solver, the failure check after every step), evaluate the cost against the reference and
 * save the end state's snapshot. Prints the rollouts per second on one core, and per core with
 * two processes at once (both cores busy), the snapshot size and the cost of saving and
 * restoring one. Rates come from the CPU time of each rollout (its thread's clock; median over
 * the rollouts), which is what a core delivers when the process has it to itself; on a shared
 * machine the wall-clock rate also counts the time other processes held the core, and is
 * printed beside it. All of it for the FEM pass in double precision (the default) and in single
 * precision (simulation.fem_precision: single; metrics prefixed f32_): the one-core rollouts
 * of the two alternate, so that both see the same machine.
 * Usage: bench_rollout [character.h5 [reference.h5]]   (defaults: results/bench/character.h5,
 * results/bench/march_ref.h5, made by scripts/bench.sh) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_util.h"
#include "sampling/controller.h"
#include "sampling/cost.h"
#include "store/reference.h"
#include "sampling/segments.h"
#include "core/log.h"
#include "core/rng.h"
#include "store/character.h"
#include "sim/sim.h"
#include "../cmd/common/environment.h"

#define SEGMENT 0.1   /* s of reference time per segment */
#define BOX 0.1       /* rad: offsets drawn uniformly in [-BOX, BOX] on every DoF */
#define ELITES 4
#define N_ROLLOUTS 100 /* per measurement */

typedef struct {
    const sc_model *m;
    const sc_reference *ref;
    sc_control_dofs dofs;
    sc_sim *sim;
    sc_tracker tracker;
    sc_segment seg;
    sc_segment_controller ctrl;
    sc_quat *targets;
    unsigned char *scratch;
    size_t cap;
    unsigned char *elite[ELITES];
    size_t elite_size[ELITES];
    double *offset;
} bench;

static int failure_hook(void *ctx, const sc_sim *s, const sc_quat *targets, const double push[3])
{
    (void)targets;
    (void)push;
    const bench *B = ctx;
    return sc_tracker_failure(&B->tracker, s, sc_segment_ref_time(&B->ctrl, s->step, NULL));
}

static int setup(bench *B, const sc_model *m, const sc_reference *ref, int fem_single, sc_err *err)
{
    memset(B, 0, sizeof *B);
    B->m = m;
    B->ref = ref;
    sc_control_dofs_init(m, &B->dofs);
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.skeleton.exact_solver = 1; /* as configs/stand.yaml, push.yaml and the sampler's defaults */
    o.fem_single = fem_single;
    int rc;
    if ((rc = sc_sim_create(m, &o, &B->sim, err)) || (rc = sc_tracker_init(&B->tracker, m, ref, NULL, err))) return rc;
    B->cap = sc_sim_snapshot_capacity(B->sim);
    B->scratch = malloc(B->cap);
    B->targets = malloc(sizeof(sc_quat) * (size_t)m->nbones);
    B->offset = calloc((size_t)B->dofs.n, sizeof(double));
    if (!B->scratch || !B->targets || !B->offset) return sc_fail(err, SC_EIO, "out of memory");
    B->ctrl = (sc_segment_controller){m, &B->dofs, ref->time, ref->target_quat, ref->n, &B->seg, 1};
    /* elites: the reference's first state, then a few segments on from it */
    double root[3], root_vel[3], w[3 * SC_SIM_MAX_BONES];
    sc_quat q[SC_SIM_MAX_BONES];
    if ((rc = sc_reference_state_at(ref, m, ref->time[0], root, q, root_vel, w, err))) return rc;
    sc_sim_set_pose(B->sim, root, q, root_vel, w);
    for (int e = 0; e < ELITES; e++) {
        B->elite_size[e] = sc_sim_snapshot_save(B->sim, B->scratch, B->cap);
        B->elite[e] = malloc(B->elite_size[e]);
        if (!B->elite[e]) return sc_fail(err, SC_EIO, "out of memory");
        memcpy(B->elite[e], B->scratch, B->elite_size[e]);
        B->seg = (sc_segment){ref->time[0] + e * SEGMENT, ref->time[0] + (e + 1) * SEGMENT, B->sim->step, 200, B->offset};
        sc_rollout_result rr;
        if ((rc = sc_rollout(B->sim, sc_segment_source(&B->ctrl), NULL, B->sim->step + 200, NULL, NULL, B->targets, &rr, err))) return rc;
    }
    return SC_OK;
}

static void teardown(bench *B)
{
    for (int e = 0; e < ELITES; e++) free(B->elite[e]);
    free(B->scratch);
    free(B->targets);
    free(B->offset);
    sc_tracker_free(&B->tracker);
    sc_sim_free(B->sim);
}

/* One sample: restore, offsets, 200 steps with the failure check, cost, save. */
static int rollout(bench *B, sc_rng *r, int i, double *cost, int *failed, sc_err *err)
{
    const int e = i % ELITES;
    int rc = sc_sim_snapshot_restore(B->sim, B->elite[e], B->elite_size[e], err);
    if (rc) return rc;
    for (int d = 0; d < B->dofs.n; d++) B->offset[d] = BOX * (2 * sc_rng_uniform(r) - 1);
    const double t0 = B->ref->time[0] + e * SEGMENT;
    B->seg = (sc_segment){t0, t0 + SEGMENT, B->sim->step, 200, B->offset};
    sc_rollout_result rr;
    sc_err step_err;
    rc = sc_rollout(B->sim, sc_segment_source(&B->ctrl), NULL, B->sim->step + 200, failure_hook, B, B->targets, &rr, &step_err);
    *failed = rc == SC_ENUMERIC || rr.stopped;
    if (rc && rc != SC_ENUMERIC) { *err = step_err; return rc; }
    if (!*failed) {
        double terms[SC_COST_TERMS];
        *cost = sc_tracker_cost(&B->tracker, B->sim, t0 + SEGMENT, terms);
        sc_sim_snapshot_save(B->sim, B->scratch, B->cap);
    }
    return SC_OK;
}

static double cpu_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* n rollouts; returns the wall time, fills per-rollout CPU times when t is not NULL */
/* rollouts i0 .. i0+n-1 drawing from r: t[i - i0] (may be NULL) receives each one's CPU time;
 * their wall time and failures are added to *wall and *nfailed */
static int run(bench *B, sc_rng *r, int i0, int n, double *t, double *wall, int *nfailed, sc_err *err)
{
    double w0 = sc_wall_time();
    for (int i = i0; i < i0 + n; i++) {
        double c = 0, a = cpu_time();
        int failed = 0, rc = rollout(B, r, i, &c, &failed, err);
        if (rc) return rc;
        *nfailed += failed;
        if (t) t[i - i0] = cpu_time() - a;
    }
    *wall += sc_wall_time() - w0;
    return SC_OK;
}

/* a worker of the two: rollouts per CPU second (median), or per wall second with `wall` */
static int g_wall;
static double two_work(void *ctx, int worker)
{
    static double t[N_ROLLOUTS];
    double w = 0;
    int f = 0;
    sc_err err;
    sc_rng r;
    sc_rng_init(&r, 3 + (uint64_t)worker, 0, 0);
    if (run(ctx, &r, 0, N_ROLLOUTS, t, &w, &f, &err)) return -1;
    return g_wall ? N_ROLLOUTS / w : 1 / bench_median(t, N_ROLLOUTS);
}

int main(int argc, char **argv)
{
    sc_environment_apply(); /* the settings the tools take from the environment */
    const char *chr = argc > 1 ? argv[1] : "results/bench/character.h5";
    const char *refp = argc > 2 ? argv[2] : "results/bench/march_ref.h5";
    sc_model m;
    sc_reference ref;
    sc_err err;
    if (sc_character_read(chr, &m, 1, &err) || sc_reference_read(refp, &ref, &err) ||
        sc_reference_check_character(&ref, refp, &m, &err)) {
        fprintf(stderr, "bench_rollout: %s\n", err.msg);
        return 1;
    }
    bench B[2];
    const char *pre[2] = {"", "f32_"};
    for (int p = 0; p < 2; p++)
        if (setup(&B[p], &m, &ref, p, &err)) { fprintf(stderr, "bench_rollout: %s\n", err.msg); return 1; }

    /* snapshot size and cost */
    enum { NS = 2000 };
    static double ts[NS], tr[NS];
    for (int p = 0; p < 2; p++) {
        size_t bytes = 0;
        for (int k = 0; k < NS; k++) {
            double a = sc_wall_time();
            bytes = sc_sim_snapshot_save(B[p].sim, B[p].scratch, B[p].cap);
            double b = sc_wall_time();
            if (sc_sim_snapshot_restore(B[p].sim, B[p].scratch, bytes, &err)) { fprintf(stderr, "bench_rollout: %s\n", err.msg); return 1; }
            tr[k] = sc_wall_time() - b;
            ts[k] = b - a;
        }
        qsort(ts, NS, sizeof *ts, bench_cmp_double);
        qsort(tr, NS, sizeof *tr, bench_cmp_double);
        printf("bench_rollout: %s, reference %s; FEM kernel %s\n", chr, refp, sc_fem_kernel_name(B[p].sim->fem.kernel));
        printf("bench_rollout: snapshot %zu bytes (capacity %zu, %d surface vertices in contact); save median %.1f us, restore %.1f us\n",
               bytes, B[p].cap, B[p].sim->contact.count, 1e6 * ts[NS / 2], 1e6 * tr[NS / 2]);
        printf("@ %ssnapshot_bytes %zu bytes\n@ %ssnapshot_save_median %.1f us\n@ %ssnapshot_restore_median %.1f us\n", pre[p], bytes,
               pre[p], 1e6 * ts[NS / 2], pre[p], 1e6 * tr[NS / 2]);
    }

    /* one core: the two precisions' rollouts alternate */
    enum { N = N_ROLLOUTS };
    static double t[2][N];
    double wall[2] = {0, 0};
    int failed[2] = {0, 0};
    sc_rng rng[2];
    for (int p = 0; p < 2; p++) {
        double w = 0;
        int f = 0;
        sc_rng_init(&rng[p], 1, 0, 0);
        run(&B[p], &rng[p], 0, 10, NULL, &w, &f, &err); /* warm-up */
        sc_rng_init(&rng[p], 2, 0, 0);
    }
    for (int i = 0; i < N; i++)
        for (int p = 0; p < 2; p++)
            if (run(&B[p], &rng[p], i, 1, &t[p][i], &wall[p], &failed[p], &err)) {
                fprintf(stderr, "bench_rollout: %s\n", err.msg);
                return 1;
            }
    double med[2];
    for (int p = 0; p < 2; p++) {
        med[p] = bench_median(t[p], N);
        printf("bench_rollout: %s: one core: %d rollouts (restore + 200 steps + failure checks + cost + save; %d failed): median "
               "%.2f ms of CPU each: %.1f rollouts/s (by the wall clock, with the machine's other load: %.1f)\n",
               sc_fem_kernel_name(B[p].sim->fem.kernel), N, failed[p], 1e3 * med[p], 1 / med[p], N / wall[p]);
        printf("@ %srollout_median %.2f ms\n@ %srollouts_per_s_one_core %.1f 1/s\n@ %srollouts_per_wall_s_one_core %.1f 1/s\n", pre[p],
               1e3 * med[p], pre[p], 1 / med[p], pre[p], N / wall[p]);
    }
    printf("@ rollouts_single_over_double_one_core %.2f x\n", med[0] / med[1]);

    /* both cores busy: one process per core */
    for (int p = 0; p < 2; p++) {
        g_wall = 0;
        double rate = bench_two_at_once(two_work, &B[p]);
        g_wall = 1;
        double wall_rate = bench_two_at_once(two_work, &B[p]);
        if (rate < 0 || wall_rate < 0) { fprintf(stderr, "bench_rollout: a worker failed\n"); return 1; }
        printf("bench_rollout: %s: two processes at once: %.1f rollouts/s per core by CPU time (by the wall clock: %.1f)\n",
               sc_fem_kernel_name(B[p].sim->fem.kernel), rate / 2, wall_rate / 2);
        printf("@ %srollouts_per_s_per_core_two_busy %.1f 1/s\n@ %srollouts_per_wall_s_per_core_two_busy %.1f 1/s\n", pre[p], rate / 2,
               pre[p], wall_rate / 2);
        teardown(&B[p]);
    }
    sc_reference_free(&ref);
    sc_model_free(&m);
    return 0;
}

/* Benchmark of the soft-body force kernels ([L13] 4.2).
 * 1. Every FEM kernel this CPU runs (the plain scalar reference, AVX2, AVX-512), side by side in
 *    one process: the elastic pass with pose-based plasticity on the states of a simulation of
 *    the character (standing, pushed), recorded and replayed to each kernel in turn, step by
 *    step; medians and their ratios.
 * 2. The selected kernel on a block of 9 x 9 x 10 cubes (1100 nodes, 4050 tets, 2 cm cells,
 *    jittered nodes) that bends and wobbles at realistic per-step rates (dt = 0.5 ms), so the
 *    warm-started rotations see typical increments: median time per call over >= 2000 calls.
 * Usage: bench_fem [character.h5] [calls]   (scripts/bench.sh passes the character) */
#include <stdint.h>
#include <stdio.h>
#include "bench_util.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/mathx.h"
#include "core/log.h"
#include "core/rng.h"
#include "store/character.h"
#include "sim/sim.h"
#include "../cmd/common/environment.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static sc_mat3 shape_mat(const double *x, const int *tn)
{
    sc_vec3 x0 = sc_v3_load(x + 3 * tn[0]);
    return sc_m3_from_cols(sc_v3_sub(sc_v3_load(x + 3 * tn[1]), x0), sc_v3_sub(sc_v3_load(x + 3 * tn[2]), x0),
                           sc_v3_sub(sc_v3_load(x + 3 * tn[3]), x0));
}

/* nx*ny*nz cubes of side h split into 5 tets each (alternating so faces match) */
static int block_mesh(sc_model *m, int nx, int ny, int nz, double h, double jitter)
{
    static const int even[5][4] = {{0, 3, 5, 6}, {1, 0, 3, 5}, {2, 0, 3, 6}, {4, 0, 5, 6}, {7, 3, 5, 6}};
    static const int odd[5][4] = {{1, 2, 4, 7}, {0, 1, 2, 4}, {3, 1, 2, 7}, {5, 1, 4, 7}, {6, 2, 4, 7}};
    memset(m, 0, sizeof *m);
    const int NX = nx + 1, NY = ny + 1, NZ = nz + 1;
    m->nnodes = NX * NY * NZ;
    m->ntets = 5 * nx * ny * nz;
    m->rest_pos = calloc(3 * (size_t)m->nnodes, sizeof(double));
    m->node_mass = calloc((size_t)m->nnodes, sizeof(double));
    m->tets = calloc(4 * (size_t)m->ntets, sizeof(int));
    m->density = 1000;
    m->youngs = 2e5;
    m->poisson = 0.45;
    sc_rng r;
    sc_rng_init(&r, 1, 0, 0);
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                double *p = m->rest_pos + 3 * (i + NX * (j + NY * k));
                p[0] = h * (i + jitter * (2 * sc_rng_uniform(&r) - 1));
                p[1] = h * (j + jitter * (2 * sc_rng_uniform(&r) - 1));
                p[2] = h * (k + jitter * (2 * sc_rng_uniform(&r) - 1));
            }
    int t = 0;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                int c[8];
                for (int b = 0; b < 8; b++) c[b] = (i + (b & 1)) + NX * ((j + (b >> 1 & 1)) + NY * (k + (b >> 2)));
                const int(*pat)[4] = (i + j + k) & 1 ? odd : even;
                for (int e = 0; e < 5; e++, t++) {
                    int *tn = m->tets + 4 * t;
                    for (int a = 0; a < 4; a++) tn[a] = c[pat[e][a]];
                    double det = sc_m3_det(shape_mat(m->rest_pos, tn));
                    if (det < 0) { int tmp = tn[2]; tn[2] = tn[3]; tn[3] = tmp; det = -det; }
                    if (!(det > 0)) return 0;
                    for (int a = 0; a < 4; a++) m->node_mass[tn[a]] += m->density * det / 24;
                }
            }
    return 1; /* Bm^-1 and volumes: sc_fem_init derives them from rest_pos */
}

/* A bend about a y axis through the block's centre line, growing along z (a limb at a
 * joint), angle theta at the top. */
static void bend(const sc_model *m, double theta, double height, double xc, const double *in, double *out)
{
    for (int i = 0; i < m->nnodes; i++) {
        double z = m->rest_pos[3 * i + 2] / height, s = z * z * (3 - 2 * z);
        sc_quat q = sc_q_axis_angle(sc_v3(0, 1, 0), theta * s);
        sc_vec3 p = sc_v3_load(in + 3 * i);
        p.x -= xc;
        p = sc_q_rotate(q, p);
        p.x += xc;
        sc_v3_store(out + 3 * i, p);
    }
}

static void report(const char *what, double *t, int n, double extra, const char *extra_name)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    printf("bench_fem: %-24s median %7.1f us  min %7.1f  p10 %7.1f  p90 %7.1f  (%d calls)", what, t[n / 2], t[0],
           t[n / 10], t[n - 1 - n / 10], n);
    if (extra_name) printf("  %s %.3g", extra_name, extra);
    printf("\n@ fem_");
    for (const char *c = what; *c; c++) putchar(*c == ' ' || *c == '(' || *c == ')' || *c == ',' ? '_' : *c); /* metric name for scripts/bench.sh */
    printf("_median %.1f us\n", t[n / 2]);
}

/* Part 1: the kernels side by side on recorded states of the character. */
static int character_kernels(const char *path)
{
    enum { REC = 400, ROUNDS = 5 };
    sc_model m;
    sc_err err;
    if (sc_character_read(path, &m, 1, &err)) { fprintf(stderr, "bench_fem: %s\n", err.msg); return 1; }
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.skeleton.exact_solver = 1;
    sc_sim *s;
    if (sc_sim_create(&m, &o, &s, &err)) { fprintf(stderr, "bench_fem: %s\n", err.msg); return 1; }
    const size_t n3 = 3 * (size_t)m.nnodes;
    double *xs = malloc(REC * n3 * sizeof(double)), *xps = malloc(REC * n3 * sizeof(double)), *force = malloc(n3 * sizeof(double));
    int spine = -1;
    for (int b = 0; b < m.nbones; b++)
        if (!strcmp(m.bone_name[b], "spine")) spine = b;
    for (int k = 0; k < 300 + REC; k++) { /* stand, then a 150 N push on the spine during the recording */
        if (spine >= 0) s->push[3 * spine] = k >= 350 && k < 550 ? 150 : 0;
        if (sc_sim_step(s, &err)) { fprintf(stderr, "bench_fem: %s\n", err.msg); return 1; }
        if (k < 300) continue;
        memcpy(xs + (k - 300) * n3, s->x, n3 * sizeof(double));
        memcpy(xps + (k - 300) * n3, s->xbar, n3 * sizeof(double)); /* the step's x~ (eq. 12-13) */
    }
    int ids[SC_FEM_KERNEL_MAX], nk = 0;
    for (int id = 1; id <= SC_FEM_KERNEL_MAX; id++)
        if (sc_fem_kernel_available(id)) ids[nk++] = id;
    sc_fem fem[SC_FEM_KERNEL_MAX];
    double *warm[SC_FEM_KERNEL_MAX], *t[SC_FEM_KERNEL_MAX], med[SC_FEM_KERNEL_MAX];
    for (int k = 0; k < nk; k++) {
        if (sc_fem_init(&fem[k], &m, &err) || sc_fem_set_kernel(&fem[k], ids[k], &err)) {
            fprintf(stderr, "bench_fem: %s\n", err.msg);
            return 1;
        }
        warm[k] = malloc(sc_fem_warm_size(&fem[k]) * sizeof(double));
        sc_fem_warm_reset(&fem[k], warm[k]);
        t[k] = malloc(ROUNDS * REC * sizeof(double));
    }
    /* the SIMD kernels take turns, RUN consecutive states each: a simulation's FEM pass finds
     * its own data (about 0.5-1 MB) in L2 from one step to the next, which alternating four
     * kernels state by state would not (it measured L3: the float kernels 10 % slower). The
     * scalar one (tens of times slower) on every 20th state of the first round only. Each
     * state is copied in before its call, as a simulation has x and x~ at hand. */
    enum { RUN = 50 };
    double *x = malloc(n3 * sizeof(double)), *xp = malloc(n3 * sizeof(double));
    int nt[SC_FEM_KERNEL_MAX] = {0};
    for (int round = 0; round < ROUNDS; round++)
        for (int i0 = 0; i0 < REC; i0 += RUN)
            for (int k = 0; k < nk; k++)
                for (int i = i0; i < i0 + RUN; i++) { /* the recording forwards, then backwards: the rotations move on smoothly */
                    if (ids[k] == SC_FEM_KERNEL_SCALAR && (round || i % 20)) continue;
                    int j = round % 2 ? REC - 1 - i : i;
                    memcpy(x, xs + j * n3, n3 * sizeof(double));
                    memcpy(xp, xps + j * n3, n3 * sizeof(double));
                    memset(force, 0, n3 * sizeof(double));
                    double a = sc_wall_time();
                    sc_fem_elastic_forces(&fem[k], x, xp, warm[k], force, NULL);
                    t[k][nt[k]++] = sc_wall_time() - a;
                }
    free(x);
    free(xp);
    printf("bench_fem: %s: %d tets (%d fixed rigidly to one bone, not stored), elastic pass with pose-based plasticity on %d "
           "recorded simulation states x %d, the SIMD kernels taking turns every %d states\n", path, m.ntets, fem[0].nrigid, REC, ROUNDS, RUN);
    for (int k = 0; k < nk; k++) {
        qsort(t[k], (size_t)nt[k], sizeof(double), bench_cmp_double);
        med[k] = 1e6 * t[k][nt[k] / 2];
    }
    for (int k = 0; k < nk; k++) {
        printf("bench_fem: kernel %-13s median %7.1f us  (scalar / this: %.2f)\n", sc_fem_kernel_name(ids[k]), med[k], med[0] / med[k]);
        printf("@ fem_character_%s_median %.1f us\n", sc_fem_kernel_name(ids[k]), med[k]);
        if (k) printf("@ fem_character_scalar_over_%s %.2f x\n", sc_fem_kernel_name(ids[k]), med[0] / med[k]);
    }
    for (int k = 0; k < nk; k++)
        for (int q = 0; q < nk; q++)
            if ((ids[k] == SC_FEM_KERNEL_AVX512 && ids[q] == SC_FEM_KERNEL_AVX2) ||
                (ids[k] == SC_FEM_KERNEL_AVX512_F32 && ids[q] == SC_FEM_KERNEL_AVX512) ||
                (ids[k] == SC_FEM_KERNEL_AVX2_F32 && ids[q] == SC_FEM_KERNEL_AVX2))
                printf("bench_fem: %s / %s: %.2f\n@ fem_character_%s_over_%s %.2f x\n", sc_fem_kernel_name(ids[q]), sc_fem_kernel_name(ids[k]),
                       med[q] / med[k], sc_fem_kernel_name(ids[q]), sc_fem_kernel_name(ids[k]), med[q] / med[k]);
    for (int k = 0; k < nk; k++) {
        sc_fem_free(&fem[k]);
        free(warm[k]);
        free(t[k]);
    }
    free(xs);
    free(xps);
    free(force);
    sc_sim_free(s);
    sc_model_free(&m);
    return 0;
}

int main(int argc, char **argv)
{
    sc_environment_apply(); /* the settings the tools take from the environment */
    int arg = 1;
    if (argc > 1 && strstr(argv[1], ".h5")) {
        if (character_kernels(argv[1])) return 1;
        arg = 2;
    }
    int calls = argc > arg && atoi(argv[arg]) > 0 ? atoi(argv[arg]) : 3000;
    if (calls < 10) calls = 10;
    const int warmup = 200;
    const double h = 0.02, dt = 5e-4, height = 10 * h;
    sc_model m;
    if (!block_mesh(&m, 9, 9, 10, h, 0.15)) { fprintf(stderr, "bench_fem: bad mesh\n"); return 1; }
    sc_fem fem;
    sc_err err;
    if (sc_fem_init(&fem, &m, &err)) { fprintf(stderr, "bench_fem: %s\n", err.msg); return 1; }
    const int n = m.nnodes, n3 = 3 * n;
    double *warm = malloc(sc_fem_warm_size(&fem) * sizeof(double));
    double *x = malloc(n3 * sizeof(double)), *xp = malloc(n3 * sizeof(double)), *tmp = malloc(n3 * sizeof(double));
    double *v = malloc(n3 * sizeof(double)), *xpd = malloc(n3 * sizeof(double)), *force = calloc(n3, sizeof(double));
    double *react = malloc(n3 * sizeof(double)), *a = malloc(n3 * sizeof(double)), *b = malloc(n3 * sizeof(double));
    double *times = malloc((size_t)calls * sizeof(double));
    sc_rng r;
    sc_rng_init(&r, 2, 0, 0);
    for (int i = 0; i < n3; i++) { a[i] = 0.05 * h * sc_rng_normal(&r); b[i] = 0.05 * h * sc_rng_normal(&r); }
    for (int i = 0; i < n3; i++) { v[i] = 0.1 * sc_rng_normal(&r); xpd[i] = 0.1 * sc_rng_normal(&r); }
    sc_fem_warm_reset(&fem, warm);
    printf("bench_fem: %d nodes, %d tets, SIMD width %d\n", n, m.ntets, sc_fem_simd_width());

    /* state at step k: pose_rest = bend(theta), x = bend(1.1 theta) of (rest + wobble) */
    double theta_prev = 0;
    long fallbacks = 0, newton = 0;
    int inverted = 0;
    double max_step = 0;
#define SET_STATE(k)                                                                             \
    do {                                                                                         \
        double tt = (k) * dt, th = 0.5 * sin(2 * SC_PI * 1.5 * tt);                              \
        double s1 = sin(2 * SC_PI * 20 * tt), s2 = cos(2 * SC_PI * 13 * tt);                     \
        bend(&m, th, height, 4.5 * h, m.rest_pos, xp);                                                    \
        for (int i = 0; i < n3; i++) tmp[i] = m.rest_pos[i] + a[i] * s1 + b[i] * s2;             \
        bend(&m, 1.1 * th, height, 4.5 * h, tmp, x);                                                      \
        max_step = fmax(max_step, fabs(th - theta_prev));                                        \
        theta_prev = th;                                                                         \
    } while (0)

    sc_fem_stats st;
    SET_STATE(100); /* a bent pose from identity warm starts: the fallback's cost */
    double tc = now_us();
    sc_fem_elastic_forces(&fem, x, xp, warm, force, &st);
    tc = now_us() - tc;
    printf("bench_fem: cold start (reset warm state, bent pose): %.1f us, %d fallbacks\n", tc, st.fallbacks);
    sc_fem_warm_reset(&fem, warm);
    theta_prev = 0;
    for (int k = 0; k < warmup; k++) {
        SET_STATE(k);
        sc_fem_elastic_forces(&fem, x, xp, warm, force, &st);
    }
    max_step = 0;
    for (int k = 0; k < calls; k++) {
        SET_STATE(warmup + k);
        double t0 = now_us();
        sc_fem_elastic_forces(&fem, x, xp, warm, force, &st);
        times[k] = now_us() - t0;
        fallbacks += st.fallbacks;
        newton += st.newton_steps;
        if (st.inverted > inverted) inverted = st.inverted;
    }
    const int groups = (m.ntets + sc_fem_simd_width() - 1) / sc_fem_simd_width();
    report("elastic (plastic)", times, calls, (double)fallbacks / calls, "fallbacks/call");
    printf("bench_fem: Newton steps per SIMD group and rotation: %.2f\n", (double)newton / calls / groups / 2);
    printf("bench_fem: max bend increment %.2g rad/step, energy %.3g J, max inverted %d\n", max_step,
           st.elastic_energy, inverted);

    sc_fem_warm_reset(&fem, warm);
    fallbacks = newton = 0;
    for (int k = 0; k < warmup + calls; k++) {
        SET_STATE(k);
        double t0 = now_us();
        sc_fem_elastic_forces(&fem, x, NULL, warm, force, &st);
        if (k >= warmup) times[k - warmup] = now_us() - t0;
        if (k >= warmup) fallbacks += st.fallbacks, newton += st.newton_steps;
    }
    report("elastic (no plasticity)", times, calls, (double)fallbacks / calls, "fallbacks/call");
    printf("bench_fem: Newton steps per SIMD group: %.2f\n", (double)newton / calls / groups);

    for (int k = 0; k < calls; k++) {
        double t0 = now_us();
        sc_fem_rayleigh_damping(&fem, m.node_mass, v, warm, 0.1, 0.01, force);
        times[k] = now_us() - t0;
    }
    report("rayleigh damping", times, calls, 0, NULL);

    for (int k = 0; k < calls; k++) {
        double t0 = now_us();
        sc_fem_pose_damping(n, m.node_mass, x, v, xp, xpd, 10, force, react);
        times[k] = now_us() - t0;
    }
    report("pose damping", times, calls, 0, NULL);
    double chk = 0;
    for (int i = 0; i < n3; i++) chk += force[i];
    if (!isfinite(chk)) { fprintf(stderr, "bench_fem: non-finite forces\n"); return 1; }

    free(warm); free(x); free(xp); free(tmp); free(v); free(xpd); free(force); free(react); free(a); free(b);
    free(times);
    sc_fem_free(&fem);
    free(m.rest_pos); free(m.node_mass); free(m.tets);
    return 0;
}

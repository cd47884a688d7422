/* Determinism pinned per FEM kernel (Box2D's test_determinism.c): a short simulation of the
 * Michelin test character (tests/fixtures.c) with kicking PD targets and a push, hashed
 * (core/hash.h) over node positions and velocities and bone poses, must give the hash pinned
 * for its kernel. A kernel the CPU cannot run is skipped, and the skip reported. The bits depend
 * on the kernel (SIMD width, precision) but not on the machine otherwise; they also depend on
 * the fixture's TetGen, on libm and on the build: the pins are the release build's (GCC,
 * -O2 -march=x86-64-v3). Other builds give other bits (measured: GCC -O1 for plain x86-64, the
 * flags of make asan, and clang -O1), so they only report their hashes. A deliberate change to the simulation changes the hashes: the failure prints the new
 * value, to pin with a comment saying what changed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/hash.h"
#include "core/log.h"
#include "core/mathx.h"
#include "fixtures.h"
#include "store/character.h"
#include "sim/sim.h"
#include "test.h"

/* the release build's compiler and instruction set (__AVX2__: -march=x86-64-v3) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX2__) && defined(__OPTIMIZE__)
#define PINNED_BUILD 1
#else
#define PINNED_BUILD 0
#endif
#define STEPS 80 /* 0.04 s at dt 0.5 ms; the scalar kernel takes most of the test (~0.3-1 s) */

static const struct {
    const char *override; /* sc_fem_kernel_override's name (SOFTCON_FEM_KERNEL) */
    int id, single;       /* single: simulation.fem_precision: single */
    uint64_t pinned;
} k_kernels[] = {
    /* pinned again when skin-weights' factorization became simplicial: the character (its skin
       weights) no longer depends on the BLAS kernels OpenBLAS picks for the CPU */
    {"scalar", SC_FEM_KERNEL_SCALAR, 0, 0xc2cbcbe516d52d97ull},         {"avx2", SC_FEM_KERNEL_AVX2, 0, 0xb41733ee8f48d7f6ull},
    {"avx512", SC_FEM_KERNEL_AVX512, 0, 0xff11249776f113bcull},         {"avx2-f32", SC_FEM_KERNEL_AVX2_F32, 1, 0xd0836a29835945e4ull},
    {"avx512-f32", SC_FEM_KERNEL_AVX512_F32, 1, 0xfefa0a4ada52b425ull},
};

static int bone(const sc_model *m, const char *name)
{
    for (int b = 0; b < m->nbones; b++)
        if (!strcmp(m->bone_name[b], name)) return b;
    return 0;
}

/* a kick of the right leg and swinging arms, period 0.1 s: the joints move within STEPS */
static void targets(const sc_model *m, double t, sc_quat *q)
{
    for (int b = 0; b < m->nbones; b++) q[b] = sc_q_identity();
    const double s = sin(2 * SC_PI * t / 0.1);
    q[bone(m, "r_thigh")] = sc_q_axis_angle(sc_v3(1, 0, 0), -0.6 * (s > 0 ? s : 0));
    q[bone(m, "r_shin")] = sc_q_axis_angle(sc_v3(1, 0, 0), 0.5 * (s > 0 ? s : 0));
    q[bone(m, "l_upperarm")] = sc_q_axis_angle(sc_v3(0, 0, 1), -0.6 * s);
    q[bone(m, "r_upperarm")] = sc_q_axis_angle(sc_v3(0, 0, 1), 0.6 * s);
}

static uint64_t state_hash(const sc_sim *s)
{
    uint64_t h = SC_HASH_INIT;
    h = sc_hash_bytes(h, s->x, 3 * (size_t)s->nn * sizeof *s->x);
    h = sc_hash_bytes(h, s->v, 3 * (size_t)s->nn * sizeof *s->v);
    for (int b = 0; b < s->nb; b++) {
        const sc_xform *p = &s->pose[b];
        const double c[7] = {p->q.w, p->q.x, p->q.y, p->q.z, p->p.x, p->p.y, p->p.z};
        h = sc_hash_bytes(h, c, sizeof c);
    }
    return h;
}

/* STEPS steps with the kernel the override and precision select; its hash into *hash */
static int run(const sc_model *m, int single, int *kernel, uint64_t *hash, sc_err *err)
{
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.fem_single = single;
    sc_sim *s;
    int rc = sc_sim_create(m, &o, &s, err);
    if (rc) return rc;
    *kernel = s->fem.kernel;
    const int spine = bone(m, "spine");
    sc_quat q[SC_SIM_MAX_BONES];
    for (int k = 0; k < STEPS && !rc; k++) {
        targets(m, s->t, q);
        sc_sim_set_targets(s, q);
        s->push[3 * spine + 2] = k >= 30 && k < 70 ? 80 : 0;
        rc = sc_sim_step(s, err);
    }
    *hash = state_hash(s);
    sc_sim_free(s);
    return rc;
}

TEST(determinism_pinned_hash_per_fem_kernel)
{
    const char *h5 = sc_fixture_michelin();
    ENSURE_MSG(h5, "building the character failed: %s", sc_fixture_log());
    sc_model m;
    sc_err err;
    ENSURE_OK(sc_character_read(h5, &m, 1, &err), &err);
    const char *saved = getenv("SOFTCON_FEM_KERNEL"); /* what main handed the library */
    int ran = 0, wrong = 0;
    const double t0 = sc_wall_time();
    for (size_t i = 0; i < sizeof k_kernels / sizeof *k_kernels; i++) {
        const char *name = sc_fem_kernel_name(k_kernels[i].id);
        if (!sc_fem_kernel_available(k_kernels[i].id)) {
            sc_test_report("skipped %s: this CPU cannot run it", name);
            continue;
        }
        sc_fem_kernel_override(k_kernels[i].override);
        int kernel = 0;
        uint64_t hash = 0;
        int rc = run(&m, k_kernels[i].single, &kernel, &hash, &err);
        sc_fem_kernel_override(saved);
        if (rc) sc_test_fail(__FILE__, __LINE__, "%s: %s", name, err.msg);
        else if (kernel != k_kernels[i].id) sc_test_fail(__FILE__, __LINE__, "%s: the simulation ran %s", name, sc_fem_kernel_name(kernel));
        else if (!PINNED_BUILD)
            sc_test_report("%s: state hash 0x%016llxull after %d steps (not compared: pinned for the release build)", name, (unsigned long long)hash,
                           STEPS);
        else if (hash != k_kernels[i].pinned)
            sc_test_fail(__FILE__, __LINE__,
                         "%s: state hash 0x%016llxull after %d steps, pinned 0x%016llxull (pin the new value "
                         "when the change was deliberate)",
                         name, (unsigned long long)hash, STEPS, (unsigned long long)k_kernels[i].pinned);
        else ran++;
        wrong += rc || kernel != k_kernels[i].id || (PINNED_BUILD && hash != k_kernels[i].pinned);
    }
    sc_model_free(&m);
    sc_test_report("%d FEM kernels reproduced their pinned state hash after %d steps (%.2f s)", ran, STEPS, sc_wall_time() - t0);
    ENSURE(!wrong && (ran >= 1 || !PINNED_BUILD));
}

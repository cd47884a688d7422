/* The physics of the coupled simulation ([L13] section 4): momentum, plasticity, energy on
 * impact, friction, determinism, numerical failure. Each test asserts the numbers. */
#include <stdlib.h>
#include <string.h>
#include "core/mathx.h"
#include "store/character.h"
#include "io/h5.h"
#include "mesh/tetmesh.h"
#include "sim/sim.h"
#include "fixtures.h"
#include "test.h"

static char out[8192];

/* the built-in Michelin character with skin weights, built once per run */
static const char *michelin(void)
{
    static int built;
    const char *h5 = sc_test_tmp("sim_character.h5");
    if (!built) {
        int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s && %s -q -c %s -o %s %s", sc_test_tool("mesh-prep"),
                            sc_test_repo("configs/michelin.yaml"), h5, sc_test_tool("skin-weights"), sc_test_repo("configs/michelin.yaml"), h5, h5);
        if (rc) return NULL;
        built = 1;
    }
    return h5;
}

static int bone_index(const sc_model *m, const char *name)
{
    for (int b = 0; b < m->nbones; b++)
        if (!strcmp(m->bone_name[b], name)) return b;
    return -1;
}

/* a kicking and arm-swinging target sequence, period 1.6 s ([L13] Figure 7) */
static void kick_targets(const sc_model *m, double t, sc_quat *q)
{
    for (int b = 0; b < m->nbones; b++) q[b] = sc_q_identity();
    double s = sin(2 * SC_PI * t / 1.6);
    q[bone_index(m, "r_thigh")] = sc_q_axis_angle(sc_v3(1, 0, 0), -0.9 * (s > 0 ? s : 0));
    q[bone_index(m, "r_shin")] = sc_q_axis_angle(sc_v3(1, 0, 0), 0.8 * (s > 0 ? s : 0));
    q[bone_index(m, "l_upperarm")] = sc_q_axis_angle(sc_v3(0, 0, 1), -0.8 * s);
    q[bone_index(m, "r_upperarm")] = sc_q_axis_angle(sc_v3(0, 0, 1), 0.8 * s);
    q[bone_index(m, "l_forearm")] = sc_q_axis_angle(sc_v3(0, -1, 0), 0.7 * (1 + s));
}

static void momentum_run(const sc_model *m, int damping, double *lin_rel, double *ang_rel, double *ang0_out)
{
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.gravity[1] = 0;
    o.contact.enabled = 0;
    o.damping = damping;
    o.plasticity = 1;
    sc_sim *s;
    sc_err err;
    *lin_rel = *ang_rel = -1;
    if (sc_sim_create(m, &o, &s, &err)) {
        sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
        return;
    }
    /* a drift and a spin, so both momenta start non-zero */
    double v0[3] = {0.3, 0.1, -0.2}, w0[3] = {0.2, 1.0, 0.1};
    sc_sim_add_velocity(s, v0, w0);
    sc_sim_diag d0, d;
    sc_sim_diagnostics(s, &d0);
    sc_quat q[SC_SIM_MAX_BONES];
    double scale = 0, lmax = 0, amax = 0;
    for (int i = 0; i < 3; i++) scale += d0.linear[i] * d0.linear[i];
    scale = sqrt(scale);
    double a0 = sqrt(d0.angular[0] * d0.angular[0] + d0.angular[1] * d0.angular[1] + d0.angular[2] * d0.angular[2]);
    int steps = (int)(3.0 / o.dt);
    for (int k = 0; k < steps; k++) {
        kick_targets(m, s->t, q);
        sc_sim_set_targets(s, q);
        if (sc_sim_step(s, &err)) {
            sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
            sc_sim_free(s);
            return;
        }
        if (k % 50 == 0 || k == steps - 1) {
            sc_sim_diagnostics(s, &d);
            double dl = 0, da = 0;
            for (int i = 0; i < 3; i++) {
                dl += pow(d.linear[i] - d0.linear[i], 2);
                da += pow(d.angular[i] - d0.angular[i], 2);
            }
            lmax = fmax(lmax, sqrt(dl) / scale);
            double an = sqrt(d.angular[0] * d.angular[0] + d.angular[1] * d.angular[1] + d.angular[2] * d.angular[2]);
            amax = fmax(amax, fabs(an - a0) / a0);
        }
    }
    *lin_rel = lmax;
    *ang_rel = amax;
    *ang0_out = a0;
    sc_sim_free(s);
}

TEST(sim_momentum_kicking_in_free_space)
{
    const char *h5 = michelin();
    ENSURE_MSG(h5, "building the character failed: %s", out);
    sc_model m;
    sc_err err;
    ENSURE_OK(sc_character_read(h5, &m, 1, &err), &err);
    double lin, ang, a0, lin_r, ang_r, a0r;
    momentum_run(&m, SC_DAMP_POSE, &lin, &ang, &a0);
    momentum_run(&m, SC_DAMP_RAYLEIGH, &lin_r, &ang_r, &a0r);
    sc_test_report("3 s of kicking, no gravity or contact, |L0| = %.3f kg m^2/s: pose-based damping: linear momentum drift %.2e (relative), "
                   "|angular momentum| change %.3f%%; Rayleigh damping: linear %.2e, angular %.3f%%",
                   a0, lin, 100 * ang, lin_r, 100 * ang_r);
    ENSURE(lin >= 0 && lin < 1e-9);
    ENSURE(ang >= 0 && ang < 0.01);
    ENSURE(lin_r >= 0 && ang_r > ang); /* Rayleigh's mass-proportional term drags momentum ([L13] Figure 7) */
    sc_model_free(&m);
}

/* elbow angle after bending it to `target` under PD in free space */
static double elbow_error(const sc_model *m, int plasticity, double target)
{
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.gravity[1] = 0;
    o.contact.enabled = 0;
    o.plasticity = plasticity;
    sc_sim *s;
    sc_err err;
    if (sc_sim_create(m, &o, &s, &err)) {
        sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
        return -1;
    }
    int fa = bone_index(m, "l_forearm");
    sc_quat q[SC_SIM_MAX_BONES];
    for (int b = 0; b < m->nbones; b++) q[b] = sc_q_identity();
    for (int k = 0; k < (int)(3.0 / o.dt); k++) {
        double ramp = fmin(1, s->t / 1.0); /* bend over 1 s, then hold */
        q[fa] = sc_q_axis_angle(sc_v3_load(m->hinge_axis + 3 * fa), ramp * target);
        sc_sim_set_targets(s, q);
        if (sc_sim_step(s, &err)) {
            sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
            sc_sim_free(s);
            return -1;
        }
    }
    sc_quat local[SC_SIM_MAX_BONES];
    sc_skeleton_local_rotations(s->skel, local);
    double angle = sc_q_angle_between(local[fa], sc_q_identity());
    sc_sim_free(s);
    return fabs(angle - target) * 180 / SC_PI;
}

TEST(sim_plasticity_lets_the_elbow_bend)
{
    const char *h5 = michelin();
    ENSURE_MSG(h5, "building the character failed: %s", out);
    sc_model m;
    sc_err err;
    ENSURE_OK(sc_character_read(h5, &m, 1, &err), &err);
    double target = 120 * SC_PI / 180;
    double with = elbow_error(&m, 1, target), without = elbow_error(&m, 0, target);
    sc_test_report("elbow bent to 120 deg under PD: error %.2f deg with pose-based plasticity, %.2f deg without", with, without);
    ENSURE(with >= 0 && with < 5);
    ENSURE(without > with);
    sc_model_free(&m);
}

/* block on a slope of `deg` degrees (gravity tilted instead of the ground) with friction mu:
   returns the distance moved along the slope during `secs`, measured from 0.3 s after the
   tilt (when the elastic shear of the soft block has settled) */
static double slide_distance(double deg, double mu, double secs, double *accel)
{
    sc_model m;
    if (!sc_fixture_block(&m, 4, 0.05, 1e5)) return -1;
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.plasticity = 0;
    o.damping = SC_DAMP_RAYLEIGH;
    o.contact.mu = mu;
    double a = deg * SC_PI / 180;
    sc_sim *s;
    sc_err err;
    /* settle on flat ground first, then tilt gravity */
    if (sc_sim_create(&m, &o, &s, &err)) {
        sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
        sc_model_free(&m);
        return -1;
    }
    double lift[3] = {0, 0.001, 0}, zero[3] = {0, 0, 0};
    sc_sim_translate(s, lift, zero);
    sc_sim_diag d0, d1;
    int settle = (int)(0.5 / o.dt), shear = (int)(0.3 / o.dt), run = (int)(secs / o.dt);
    for (int k = 0; k < settle + shear + run; k++) {
        if (k == settle) {
            double g[3] = {9.81 * sin(a), -9.81 * cos(a), 0};
            sc_sim_set_gravity(s, g);
        }
        if (k == settle + shear) sc_sim_diagnostics(s, &d0);
        if (sc_sim_step(s, &err)) {
            sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
            sc_sim_free(s);
            sc_model_free(&m);
            return -1;
        }
    }
    sc_sim_diagnostics(s, &d1);
    double dist = d1.com[0] - d0.com[0];
    if (accel) { /* from the velocity gained over the measured interval */
        double v0 = d0.linear[0] / d0.mass, v1 = d1.linear[0] / d1.mass;
        *accel = (v1 - v0) / secs;
    }
    sc_sim_free(s);
    sc_model_free(&m);
    return dist;
}

TEST(sim_friction_block_on_a_slope)
{
    /* mu = 0.5: tan(20 deg) = 0.36 sticks, tan(35 deg) = 0.70 slides */
    double a_slide;
    double stick = slide_distance(20, 0.5, 1.0, NULL), slide = slide_distance(35, 0.5, 1.0, &a_slide);
    double a35 = 35 * SC_PI / 180, coulomb = 9.81 * (sin(a35) - 0.5 * cos(a35));
    double mu_eff = (sin(a35) - a_slide / 9.81) / cos(a35); /* the friction coefficient the sliding block shows */
    sc_test_report("soft block, mu 0.5: 20 deg slope (tan 0.36) moved %.2e m in 1 s; 35 deg (tan 0.70) slid %.3f m in 1 s, "
                   "mean acceleration %.2f m/s^2 (Coulomb: %.2f), effective mu %.3f",
                   stick, slide, a_slide, coulomb, mu_eff);
    ENSURE(fabs(stick) < 2e-4);
    ENSURE(slide > 0.3);
    ENSURE(fabs(mu_eff - 0.5) < 0.1);
}

TEST(sim_drop_energy_never_increases)
{
    const char *h5 = michelin();
    ENSURE_MSG(h5, "building the character failed: %s", out);
    sc_model m;
    sc_err err;
    ENSURE_OK(sc_character_read(h5, &m, 1, &err), &err);
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    sc_sim *s;
    ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
    double up[3] = {0, 0.5, 0}, zero[3] = {0, 0, 0};
    sc_sim_translate(s, up, zero);
    sc_sim_diag d;
    double e_prev = -1, worst_rise = 0, e_impact = 0, ke_end = 0, max_depth = 0;
    int impact = 0;
    for (int k = 0; k < (int)(4.0 / o.dt); k++) {
        ENSURE_OK(sc_sim_step(s, &err), &err);
        max_depth = fmax(max_depth, s->contact.max_depth);
        if (k % 10) continue;
        sc_sim_diagnostics(s, &d);
        double e = d.kinetic + d.elastic + d.potential;
        if (!impact && d.contacts > 0) {
            impact = 1;
            e_impact = e;
        }
        if (impact && e_prev >= 0) worst_rise = fmax(worst_rise, e - e_prev);
        e_prev = e;
        ke_end = d.kinetic;
    }
    sc_test_report("dropped from 0.5 m: energy at impact %.1f J, largest rise between samples (5 ms apart) after impact %.3f J "
                   "(%.3f%% of it), kinetic energy after 4 s %.4f J, deepest penetration %.4f m",
                   e_impact, worst_rise, 100 * worst_rise / e_impact, ke_end, max_depth);
    ENSURE(impact);
    ENSURE(worst_rise < 0.005 * e_impact); /* tolerance: 0.5% of the impact energy per 5 ms */
    ENSURE(ke_end < 0.5);
    sc_sim_free(s);
    sc_model_free(&m);
}

TEST(sim_snapshot_restore_bit_identical)
{
    const char *h5 = michelin();
    ENSURE_MSG(h5, "building the character failed: %s", out);
    sc_model m;
    sc_err err;
    ENSURE_OK(sc_character_read(h5, &m, 1, &err), &err);
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    sc_sim *a, *b;
    ENSURE_OK(sc_sim_create(&m, &o, &a, &err), &err);
    ENSURE_OK(sc_sim_create(&m, &o, &b, &err), &err);
    size_t cap = sc_sim_snapshot_capacity(a);
    unsigned char *snap = malloc(cap), *end_a = malloc(cap), *end_b = malloc(cap);
    sc_quat q[SC_SIM_MAX_BONES];
    size_t nsnap = 0, na, nb;
    sc_sim_diag da, db;
    double push[3] = {40, 0, 15};
    /* walk on: kick while standing on the ground, so contact anchors and warm starts matter;
       a push in force and changed gravity at the moment of the snapshot must be carried too */
    for (int k = 0; k < 400; k++) {
        if (k == 150) memcpy(a->push + 3 * 0, push, sizeof push);
        if (k == 180) sc_sim_set_gravity(a, (double[]){0.3, -9.6, 0});
        if (k == 200) {
            nsnap = sc_sim_snapshot_save(a, snap, cap);
            sc_sim_diagnostics(a, &da);
        }
        kick_targets(&m, a->t, q);
        sc_sim_set_targets(a, q);
        ENSURE_OK(sc_sim_step(a, &err), &err);
    }
    ENSURE(nsnap > 0);
    na = sc_sim_snapshot_save(a, end_a, cap);
    ENSURE(na > 0 && sc_sim_snapshot_save(a, end_b, na - 1) == 0); /* too small a buffer is refused */
    /* restore into another simulation that has run something else meanwhile */
    for (int k = 0; k < 50; k++) ENSURE_OK(sc_sim_step(b, &err), &err);
    ENSURE_OK(sc_sim_snapshot_restore(b, snap, nsnap, &err), &err);
    sc_sim_diagnostics(b, &db);
    ENSURE_MSG(da.elastic == db.elastic && da.contacts == db.contacts && da.contact_force[1] == db.contact_force[1] && da.kinetic == db.kinetic,
               "diagnostics after restore describe another state: elastic %g vs %g, contacts %d vs %d", da.elastic, db.elastic, da.contacts,
               db.contacts);
    ENSURE(da.contacts > 0);
    for (int k = 200; k < 400; k++) {
        kick_targets(&m, b->t, q);
        sc_sim_set_targets(b, q);
        ENSURE_OK(sc_sim_step(b, &err), &err);
    }
    nb = sc_sim_snapshot_save(b, end_b, cap);
    ENSURE_MSG(na == nb && memcmp(end_a, end_b, na) == 0, "restored run differs from the uninterrupted one");
    sc_test_report("snapshot of %zu bytes at step 200 (%d vertices in contact; capacity %zu bytes); restored run equals the "
                   "uninterrupted one bit for bit after 200 more steps, with a push in force and changed gravity",
                   nsnap, da.contacts, cap);
    free(snap);
    free(end_a);
    free(end_b);
    sc_sim_free(a);
    sc_sim_free(b);
    sc_model_free(&m);
}

TEST(sim_snapshot_rejects_foreign_buffers)
{
    const char *h5 = michelin();
    ENSURE_MSG(h5, "building the character failed: %s", out);
    sc_model m, m2;
    sc_err err;
    ENSURE_OK(sc_character_read(h5, &m, 1, &err), &err);
    ENSURE_OK(sc_model_clone(&m, &m2, &err), &err);
    m2.kp[3] *= 1.5; /* another character (the gains are part of the model) */
    sc_sim_opts o, o2;
    sc_sim_default_opts(&o);
    o2 = o;
    o2.contact.mu = 0.5;
    sc_sim *a, *other_model, *other_opts;
    ENSURE_OK(sc_sim_create(&m, &o, &a, &err), &err);
    ENSURE_OK(sc_sim_create(&m2, &o, &other_model, &err), &err);
    ENSURE_OK(sc_sim_create(&m, &o2, &other_opts, &err), &err);
    for (int k = 0; k < 20; k++) ENSURE_OK(sc_sim_step(a, &err), &err);
    size_t cap = sc_sim_snapshot_capacity(a);
    unsigned char *buf = malloc(cap);
    size_t n = sc_sim_snapshot_save(a, buf, cap);
    ENSURE(n > 0);
    ENSURE(sc_sim_snapshot_restore(other_model, buf, n, &err) == SC_EINPUT && strstr(err.msg, "another character"));
    ENSURE(sc_sim_snapshot_restore(other_opts, buf, n, &err) == SC_EINPUT && strstr(err.msg, "other simulation options"));
    ENSURE(sc_sim_snapshot_restore(a, buf, n - 8, &err) == SC_EINPUT && strstr(err.msg, "truncated"));
    ENSURE(sc_sim_snapshot_restore(a, buf, 10, &err) == SC_EINPUT);
    buf[n / 2] ^= 0x10;
    ENSURE(sc_sim_snapshot_restore(a, buf, n, &err) == SC_EINPUT && strstr(err.msg, "checksum"));
    buf[n / 2] ^= 0x10;
    buf[0] = 'X';
    ENSURE(sc_sim_snapshot_restore(a, buf, n, &err) == SC_EINPUT && strstr(err.msg, "not a softcon"));
    buf[0] = 'S';
    double t = a->t;
    ENSURE_OK(sc_sim_snapshot_restore(a, buf, n, &err), &err);
    ENSURE(a->t == t);
    ENSURE(sc_model_hash(&m) != sc_model_hash(&m2));
    sc_test_report("restore refuses another model, other options, a truncated, damaged or non-snapshot buffer");
    free(buf);
    sc_sim_free(a);
    sc_sim_free(other_model);
    sc_sim_free(other_opts);
    sc_model_free(&m);
    sc_model_free(&m2);
}

TEST(sim_cli_deterministic_and_failure_reported)
{
    const char *h5 = michelin();
    ENSURE_MSG(h5, "building the character failed: %s", out);
    const char *cfg = sc_test_write("short_push.yaml",
                                    "simulation: {duration: 0.6}\ncontroller: {type: hold}\noutput: {every: 20}\n"
                                    "perturbations:\n  - {type: push, bone: spine, time: 0.2, duration: 0.1, force: [100, 0, 0]}\n"
                                    "  - {type: velocity, time: 0.4, delta: [0.1, 0, 0]}\n");
    const char *s1 = sc_test_tmp("det1.h5"), *s2 = sc_test_tmp("det2.h5");
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s && %s -q -c %s -o %s %s", sc_test_tool("simulate"), cfg, s1, h5,
                        sc_test_tool("simulate"), cfg, s2, h5);
    ENSURE_MSG(rc == 0, "simulate exit %d: %s", rc, out);
    /* every dataset but wall-clock timing identical */
    sc_test_write("cmp.py",
                  "import h5py, sys\n"
                  "a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2]); bad = []; n = [0]\n"
                  "def cmp(name, o):\n"
                  "    if isinstance(o, h5py.Dataset) and not name.startswith('timing'):\n"
                  "        n[0] += 1\n"
                  "        x, y = a[name][()], b[name][()]\n"
                  "        same = x.tolist() == y.tolist() if x.dtype.kind == 'O' else x.tobytes() == y.tobytes()\n"
                  "        if not same: bad.append(name)\n"
                  "a.visititems(cmp)\n"
                  "print(n[0], 'datasets compared, differing:', bad)\n"
                  "sys.exit(1 if bad or n[0] < 10 else 0)\n");
    rc = sc_test_sh(out, sizeof out, "/usr/bin/python3 %s %s %s", sc_test_tmp("cmp.py"), s1, s2);
    ENSURE_MSG(rc == 0, "two identical runs differ: %s", out);
    sc_test_report("two identical simulate runs: %s", out);
    /* a numerical blow-up: exit 4, message with step and node, the output kept and marked failed */
    const char *bad = sc_test_write("blowup.yaml", "simulation: {duration: 0.5, youngs_modulus: 1.0e9}\ncontroller: {type: hold}\n");
    const char *s3 = sc_test_tmp("blowup.h5");
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("simulate"), bad, s3, h5);
    sc_test_report("blow-up: exit %d: %s", rc, out);
    ENSURE_MSG(rc == 4 && strstr(out, "step ") && (strstr(out, "node ") || strstr(out, "tet")), "exit %d: %s", rc, out);
    sc_h5 *f;
    sc_err err;
    char *status = NULL;
    ENSURE_OK(sc_h5_open(s3, &f, &err), &err);
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "status", &status, &err), &err);
    size_t nt = 0;
    double *t = NULL;
    ENSURE_OK(sc_h5_read_f64(f, "/time", 1, &nt, &t, &err), &err);
    sc_h5_close(f);
    ENSURE_MSG(!strncmp(status, "failed: step", 12) && nt >= 1, "status '%s', %zu frames", status, nt);
    free(status);
    free(t);
    /* bad config: unknown bone in a push */
    const char *bc = sc_test_write("badbone.yaml", "perturbations:\n  - {type: push, bone: tail, time: 0.1, force: [1, 0, 0]}\n");
    rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s", sc_test_tool("simulate"), bc, sc_test_tmp("bb.h5"), h5);
    ENSURE_MSG(rc == 2 && strstr(out, "badbone.yaml:2:") && strstr(out, "'tail' is not a bone"), "exit %d: %s", rc, out);
    ENSURE(!sc_test_file_exists(sc_test_tmp("bb.h5")));
}

TEST(sim_heightfield_supports_weight)
{
    /* a soft block dropped on a sinusoidal height field comes to rest carried by it */
    sc_model m;
    ENSURE(sc_fixture_block(&m, 4, 0.05, 1e5));
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.plasticity = 0;
    o.damping = SC_DAMP_RAYLEIGH;
    o.contact.ground.bump_height = 0.02;
    o.contact.ground.bump_length = 0.4;
    sc_sim *s;
    sc_err err;
    ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
    /* start above the bump's crest under the block's corner region */
    double lift[3] = {0.05, 0.05, 0.05}, zero[3] = {0, 0, 0};
    sc_sim_translate(s, lift, zero);
    double weight = 0, fy = 0, depth = 0;
    for (int i = 0; i < m.nnodes; i++) weight += m.node_mass[i] * 9.81;
    int n = (int)(2.0 / o.dt), avg = 0;
    for (int k = 0; k < n; k++) {
        ENSURE_OK(sc_sim_step(s, &err), &err);
        if (k > n - 400) {
            fy += s->contact.total_force.y;
            avg++;
            depth = fmax(depth, s->contact.max_depth);
        }
    }
    fy /= avg;
    sc_test_report("block on a height field (2 cm bumps, 0.4 m wavelength): mean vertical contact force %.2f N vs weight %.2f N, "
                   "deepest penetration %.4f m",
                   fy, weight, depth);
    ENSURE(fabs(fy - weight) < 0.02 * weight);
    ENSURE(depth < 0.01);
    sc_sim_free(s);
    sc_model_free(&m);
}

TEST(sim_tiles_support_weight)
{
    /* a soft block dropped on [J11]'s bumpy tiles (5 cm, raised up to 2 cm) comes to rest carried
     * by them: the contact force balances the weight; a snapshot of it is refused on another floor */
    sc_model m;
    ENSURE(sc_fixture_block(&m, 4, 0.05, 1e5));
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.plasticity = 0;
    o.damping = SC_DAMP_RAYLEIGH;
    o.contact.ground.tile_size = 0.05;
    o.contact.ground.tile_height = 0.02;
    o.contact.ground.tile_seed = 1;
    sc_sim *s;
    sc_err err;
    ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
    double lift[3] = {0.013, 0.03, 0.021}, zero[3] = {0, 0, 0};
    sc_sim_translate(s, lift, zero);
    double weight = 0, f[3] = {0, 0, 0}, depth = 0;
    for (int i = 0; i < m.nnodes; i++) weight += m.node_mass[i] * 9.81;
    int n = (int)(5.0 / o.dt), avg = 0, count = 0; /* it rocks on its few contacts for a while */
    for (int k = 0; k < n; k++) {
        ENSURE_OK(sc_sim_step(s, &err), &err);
        if (k > n - 400) {
            f[0] += s->contact.total_force.x;
            f[1] += s->contact.total_force.y;
            f[2] += s->contact.total_force.z;
            avg++;
            depth = fmax(depth, s->contact.max_depth);
            count = s->contact.count;
        }
    }
    for (int d = 0; d < 3; d++) f[d] /= avg;
    sc_test_report("block on bumpy tiles (5 cm, raised up to 2 cm, seed 1): mean contact force (%.3f, %.2f, %.3f) N vs weight %.2f N (%.4f of it), "
                   "%d vertices in contact, deepest penetration %.4f m",
                   f[0], f[1], f[2], weight, f[1] / weight, count, depth);
    ENSURE(fabs(f[1] - weight) < 0.02 * weight && hypot(f[0], f[2]) < 0.02 * weight);
    ENSURE(count >= 3 && depth < 0.01);
    /* the floor is part of the options: another seed or a flat floor refuses the snapshot */
    size_t cap = sc_sim_snapshot_capacity(s), ns;
    void *buf = malloc(cap);
    ENSURE((ns = sc_sim_snapshot_save(s, buf, cap)) > 0);
    for (int v = 0; v < 3; v++) {
        sc_sim_opts p = o;
        if (v == 0) p.contact.ground.tile_seed = 2;
        if (v == 1) p.contact.ground.tile_height = 0.01;
        if (v == 2) p.contact.ground.tile_size = 0;
        sc_sim *t;
        ENSURE_OK(sc_sim_create(&m, &p, &t, &err), &err);
        int rc = sc_sim_snapshot_restore(t, buf, ns, &err);
        sc_sim_free(t);
        ENSURE_MSG(rc == SC_EINPUT && strstr(err.msg, "other simulation options"), "floor %d: %d %s", v, rc, err.msg);
    }
    free(buf);
    sc_sim_free(s);
    sc_model_free(&m);
}

TEST(sim_set_pose_is_consistent_and_stress_free)
{
    const char *h5 = michelin();
    ENSURE_MSG(h5, "building the character failed: %s", out);
    sc_model m;
    sc_err err;
    ENSURE_OK(sc_character_read(h5, &m, 1, &err), &err);
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.gravity[1] = 0;
    o.contact.enabled = 0;
    sc_sim *s;
    ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
    sc_quat q[SC_SIM_MAX_BONES];
    kick_targets(&m, 0.4, q);
    q[0] = sc_q_axis_angle(sc_v3(0, 1, 0), 0.7);
    double root[3] = {1, 1.2, -0.5};
    sc_sim_set_pose(s, root, q, NULL, NULL);
    sc_sim_set_targets(s, q);
    sc_quat local[SC_SIM_MAX_BONES];
    sc_skeleton_local_rotations(s->skel, local);
    double rot_err = 0;
    for (int b = 1; b < m.nbones; b++) rot_err = fmax(rot_err, sc_q_angle_between(local[b], q[b]));
    ENSURE_OK(sc_sim_step(s, &err), &err);
    sc_sim_diag d;
    sc_sim_diagnostics(s, &d);
    sc_test_report("posed character: local rotations reproduced to %.1e rad; after one step elastic energy %.2e J, kinetic %.2e J", rot_err,
                   d.elastic, d.kinetic);
    ENSURE(rot_err < 1e-9);
    ENSURE(d.elastic < 1e-6 && d.kinetic < 1e-6);
    sc_sim_free(s);
    sc_model_free(&m);
}

/* Peak vertical ground force over the first `seconds` after a posed start at root height `lift`
 * above the rest pose, in units of the weight; the first step's in *first. */
static double start_peak(const sc_model *m, double settle, double lift, double seconds, double *first, double *sink, sc_sim **keep)
{
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.settle = settle;
    sc_sim *s;
    sc_err err;
    if (sc_sim_create(m, &o, &s, &err)) return NAN;
    sc_quat q[SC_SIM_MAX_BONES];
    for (int b = 0; b < m->nbones; b++) q[b] = sc_q_identity();
    double root[3] = {m->joint_pos[0], m->joint_pos[1] + lift, m->joint_pos[2]};
    sc_sim_set_pose(s, root, q, NULL, NULL);
    sc_sim_set_targets(s, q);
    double peak = NAN;
    if (!sc_sim_settle(s, &err)) {
        *sink = s->start_sink;
        if (keep) {
            *keep = s;
            return 0;
        }
        peak = 0;
        for (long k = 0; k < lround(seconds / o.dt); k++) {
            if (sc_sim_step(s, &err)) {
                peak = NAN;
                break;
            }
            sc_sim_diag d;
            sc_sim_diagnostics(s, &d);
            double fy = d.contact_force[1] / (d.mass * 9.81);
            if (k == 0) *first = fy;
            peak = fmax(peak, fy);
        }
    }
    sc_sim_free(s);
    return peak;
}

TEST(sim_settle_removes_the_start_jolt)
{
    const char *h5 = michelin();
    ENSURE_MSG(h5, "building the character failed: %s", out);
    sc_model m;
    sc_err err;
    ENSURE_OK(sc_character_read(h5, &m, 1, &err), &err);
    double f0 = NAN, f1 = NAN, sink0 = NAN, sink1 = NAN;
    double jolt = start_peak(&m, 0, 0, 0.2, &f0, &sink0, NULL), settled = start_peak(&m, 0.3, 0, 0.2, &f1, &sink1, NULL);
    sc_test_report("standing start, peak ground force in the first 0.2 s: %.2f m g unsettled (first step %.2f), %.2f m g settled "
                   "(first step %.2f, sunk %.1f mm)",
                   jolt, f0, settled, f1, 1e3 * sink1);
    ENSURE(jolt > 1.15 && f0 < 0.05);             /* the flesh starts unloaded and drops */
    ENSURE(fabs(f1 - 1) < 0.05 && settled < 1.1); /* carried from the first step, no jolt */
    ENSURE(isnan(sink0) && sink1 > 0 && sink1 < 0.02);
    /* deterministic, and a start in flight is left exactly as posed */
    sc_sim *a = NULL, *b = NULL, *c = NULL;
    double sa, sb, sc;
    start_peak(&m, 0.3, 0, 0, &f1, &sa, &a);
    start_peak(&m, 0.3, 0, 0, &f1, &sb, &b);
    ENSURE(a && b && !memcmp(a->x, b->x, sizeof(double) * 3 * (size_t)a->nn) && !memcmp(a->v, b->v, sizeof(double) * 3 * (size_t)a->nn));
    sc_sim_free(a);
    sc_sim_free(b);
    start_peak(&m, 0.3, 0.3, 0, &f1, &sa, &a);
    start_peak(&m, 0, 0.3, 0, &f1, &sc, &c);
    ENSURE(a && c && isnan(sa) && isnan(sc) && a->t == c->t && a->step == c->step);
    size_t ns = sc_skeleton_state_size(a->skel);
    double *ka = malloc(ns * sizeof(double)), *kc = malloc(ns * sizeof(double));
    ENSURE(ka && kc);
    sc_skeleton_save(a->skel, ka);
    sc_skeleton_save(c->skel, kc);
    int same = !memcmp(a->x, c->x, sizeof(double) * 3 * (size_t)a->nn) && !memcmp(a->v, c->v, sizeof(double) * 3 * (size_t)a->nn) &&
        !memcmp(ka, kc, ns * sizeof(double)) && !memcmp(a->in_contact, c->in_contact, (size_t)a->nv);
    free(ka);
    free(kc);
    /* a snapshot of a settling simulation is refused by one that does not settle */
    int hash_differs = a->options_hash != c->options_hash;
    sc_sim_free(a);
    sc_sim_free(c);
    sc_model_free(&m);
    ENSURE(same);
    ENSURE(hash_differs);
}

typedef struct {
    double max_tilt, min_height_ratio, max_depth;
    int max_inverted;
    long frames;
    char status[256];
} stand_result;

/* runs simulate on a config with an optional Young's modulus override and measures standing */
static int stand_run(const char *ch, const char *config, double youngs, stand_result *r, int *exit_code)
{
    char cfg[4096];
    FILE *f = fopen(sc_test_repo(config), "r");
    CHECK(f, "cannot read %s", config);
    size_t n = fread(cfg, 1, sizeof cfg - 200, f);
    fclose(f);
    cfg[n] = 0;
    char name[64], outp[64];
    snprintf(name, sizeof name, "stand_%g.yaml", youngs);
    snprintf(outp, sizeof outp, "stand_%g.h5", youngs);
    if (youngs > 0) { /* the override goes into the simulation section */
        char *sim = strstr(cfg, "simulation:\n");
        CHECK(sim, "no simulation section in %s", config);
        char tail[4096];
        snprintf(tail, sizeof tail, "%s", sim + 12);
        snprintf(sim + 12, sizeof cfg - (size_t)(sim + 12 - cfg), "  youngs_modulus: %g\n%s", youngs, tail);
    }
    const char *yaml = sc_test_write(name, cfg);
    *exit_code = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("simulate"), yaml, sc_test_tmp(outp), ch);
    sc_h5 *h;
    sc_err err;
    CHECK(sc_h5_open(sc_test_tmp(outp), &h, &err) == 0, "%s", err.msg);
    size_t nt = 0, d3[3] = {0, 0, 4}, d1 = 0, nn = 0;
    double *q = NULL, *pos = NULL, *depth = NULL;
    int *inv = NULL;
    char **names = NULL, *status = NULL;
    sc_h5_read_strings(h, "/bones/names", &nn, &names, &err);
    d3[1] = nn;
    int rc = sc_h5_read_f64(h, "/bones/orientation", 3, d3, &q, &err);
    size_t p3[3] = {0, nn, 3};
    rc = rc || sc_h5_read_f64(h, "/bones/position", 3, p3, &pos, &err) || sc_h5_read_f64(h, "/contact/max_depth", 1, &d1, &depth, &err) ||
        sc_h5_read_i32(h, "/fem/inverted", 1, &nt, &inv, &err) || sc_h5_read_attr_str(h, "/", "status", &status, &err);
    sc_h5_close(h);
    CHECK(rc == 0, "%s", err.msg);
    int spine = 0;
    for (size_t b = 0; b < nn; b++)
        if (!strcmp(names[b], "spine")) spine = (int)b;
    memset(r, 0, sizeof *r);
    r->min_height_ratio = 1e9;
    r->frames = (long)nt;
    for (size_t k = 0; k < nt; k++) {
        const double *s = q + (k * nn + (size_t)spine) * 4;
        sc_vec3 up = sc_q_rotate(sc_q_normalize((sc_quat){s[0], s[1], s[2], s[3]}), sc_v3(0, 1, 0));
        r->max_tilt = fmax(r->max_tilt, acos(fmax(-1, fmin(1, up.y))) * 180 / SC_PI);
        r->min_height_ratio = fmin(r->min_height_ratio, pos[k * nn * 3 + 1] / pos[1]);
        r->max_depth = fmax(r->max_depth, depth[k]);
        if (inv[k] > r->max_inverted) r->max_inverted = inv[k];
    }
    snprintf(r->status, sizeof r->status, "%s", status);
    free(q);
    free(pos);
    free(depth);
    free(inv);
    free(status);
    sc_h5_free_strings(names, nn);
    return 1;
}

TEST(sim_standing_five_seconds)
{
    const char *h5 = michelin();
    ENSURE_MSG(h5, "building the character failed: %s", out);
    stand_result r;
    int code;
    if (!stand_run(h5, "configs/stand.yaml", 0, &r, &code)) return;
    sc_test_report("stand.yaml, 5 s: torso tilt at most %.2f deg, pelvis height at least %.3f of its start, deepest ground penetration "
                   "%.2f mm, at most %d inverted tets, %ld frames, status %s",
                   r.max_tilt, r.min_height_ratio, 1e3 * r.max_depth, r.max_inverted, r.frames, r.status);
    ENSURE(code == 0 && !strcmp(r.status, "completed") && r.frames >= 500);
    ENSURE(r.max_tilt < 10);
    ENSURE(r.min_height_ratio > 0.9);
    ENSURE(r.max_depth < 0.01);
    ENSURE(r.max_inverted == 0);
    /* and a push: it is shoved and stays up */
    if (!stand_run(h5, "configs/push.yaml", 0, &r, &code)) return;
    sc_test_report("push.yaml (150 N on the spine for 0.2 s): torso tilt at most %.2f deg, pelvis at least %.3f, penetration %.2f mm, "
                   "%d inverted",
                   r.max_tilt, r.min_height_ratio, 1e3 * r.max_depth, r.max_inverted);
    ENSURE(code == 0 && r.max_tilt < 20 && r.min_height_ratio > 0.9 && r.max_inverted == 0);
}

TEST(sim_stiffness_range_for_standing)
{
    /* scripts/stiffness-sweep.sh maps the whole range; here its two ends and the blow-up past it */
    const char *h5 = michelin();
    ENSURE_MSG(h5, "building the character failed: %s", out);
    static const double ok[] = {5e3, 5e5};
    stand_result r;
    int code;
    for (int i = 0; i < 2; i++) {
        if (!stand_run(h5, "configs/stand.yaml", ok[i], &r, &code)) return;
        sc_test_report("E = %g Pa: exit %d, tilt %.2f deg, height %.3f, penetration %.2f mm, %d inverted", ok[i], code, r.max_tilt,
                       r.min_height_ratio, 1e3 * r.max_depth, r.max_inverted);
        ENSURE(code == 0 && r.max_tilt < 10 && r.min_height_ratio > 0.9 && r.max_depth < 0.01 && r.max_inverted == 0);
    }
    stand_run(h5, "configs/stand.yaml", 3e6, &r, &code);
    sc_test_report("E = 3e6 Pa: exit %d (%s)", code, r.status);
    ENSURE(code == 4 && !strncmp(r.status, "failed: step", 12));
}

TEST(sim_contact_culling_matches_full)
{
    /* The step tests only the surface vertices whose embedding tet has a node near the ground:
     * forces, anchors, contact flags and totals equal sc_contact_forces on every vertex, to the
     * bit, on flat ground, a slope, a height field, bumpy tiles and a box, over a standing run;
     * the contacts against the box are counted as obstacle contacts, the others not. */
    const char *h5 = michelin();
    ENSURE_MSG(h5, "building the character failed: %s", out);
    sc_model m;
    sc_err err;
    ENSURE_OK(sc_character_read(h5, &m, 1, &err), &err);
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    sc_sim *s;
    ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
    const int nv = m.nsurf_verts, n3 = 3 * m.nnodes;
    double *p = malloc(3 * (size_t)nv * sizeof(double)), *fa = malloc(n3 * sizeof(double)), *fb = malloc(n3 * sizeof(double));
    double *aa = malloc(3 * (size_t)nv * sizeof(double)), *ab = malloc(3 * (size_t)nv * sizeof(double));
    unsigned char *ca = malloc((size_t)nv), *cb = malloc((size_t)nv);
    sc_embedding e = {nv, m.tets, m.surf_tet, m.surf_bary};
    int compared = 0, most = 0, tested = 0, on_box = 0, on_floor = 0;
    for (int k = 1; k <= 600; k++) {
        ENSURE_OK(sc_sim_step(s, &err), &err);
        if (k % 100) continue;
        for (int g = 0; g < 6; g++) {
            sc_contact_opts c = o.contact;
            if (g == 1 || g == 4) {
                c.ground.normal = sc_v3(sin(0.05), cos(0.05), 0);
                c.ground.offset = 0.01;
            }
            if (g == 2 || g == 4) {
                c.ground.bump_height = 0.01;
                c.ground.bump_length = 0.25;
            }
            if (g >= 3) { /* [J11]'s tiles, raised up to 2 cm above the plane: the feet sink into them */
                c.ground.tile_size = 0.05;
                c.ground.tile_height = 0.02;
                c.ground.tile_seed = (uint64_t)k;
            }
            if (g == 5) { /* a box 1 cm high under the feet on the +x side: its top carries them */
                c.ground.nboxes = 1;
                const double lo[3] = {0, -0.5, -1}, hi[3] = {1, 0.01, 1};
                memcpy(c.ground.box_lo[0], lo, sizeof lo);
                memcpy(c.ground.box_hi[0], hi, sizeof hi);
            }
            sc_sim_surface(s, p);
            memcpy(aa, s->anchor, 3 * (size_t)nv * sizeof(double));
            memcpy(ab, s->anchor, 3 * (size_t)nv * sizeof(double));
            memcpy(ca, s->in_contact, (size_t)nv);
            memcpy(cb, s->in_contact, (size_t)nv);
            for (int i = 0; i < n3; i++) fa[i] = fb[i] = s->f[i];
            sc_contact_result ra, rb;
            sc_contact_forces(&c, &e, p, s->v, aa, ca, fa, &ra);
            sc_contact_forces_culled(&c, &e, &s->cull, s->x, s->v, ab, cb, fb, &rb);
            ENSURE_MSG(!memcmp(fa, fb, n3 * sizeof(double)) && !memcmp(aa, ab, 3 * (size_t)nv * sizeof(double)) && !memcmp(ca, cb, (size_t)nv) &&
                           !memcmp(&ra, &rb, sizeof ra),
                       "step %d ground %d: culled contact differs", k, g);
            most = ra.count > most ? ra.count : most;
            if (g == 5) on_box = ra.obstacles, on_floor = ra.count - ra.obstacles;
            else ENSURE(ra.obstacles == 0);
            tested = s->cull.candidates > tested ? s->cull.candidates : tested;
            compared++;
        }
    }
    sc_test_report("%d states on flat ground, a slope, bumps, tiles, all three and a box: culled contact bit-identical to the full pass; up "
                   "to %d of %d vertices tested, up to %d in contact; on the box %d vertices, beside it on the floor %d",
                   compared, tested, nv, most, on_box, on_floor);
    ENSURE(most > 50 && tested < nv / 4 && on_box > 10 && on_floor > 10);
    free(p);
    free(fa);
    free(fb);
    free(aa);
    free(ab);
    free(ca);
    free(cb);
    sc_sim_free(s);
    sc_model_free(&m);
}

TEST(sim_fem_single_precision_tracks_double)
{
    /* simulation.fem_precision: single against the default double: standing, then pushed on the
     * spine, 1.5 s; every node and bone stays within 1e-5 m of the double run, and a snapshot of
     * one is refused by the other */
    const char *h5 = michelin();
    ENSURE_MSG(h5, "building the character failed: %s", out);
    sc_model m;
    sc_err err;
    ENSURE_OK(sc_character_read(h5, &m, 1, &err), &err);
    if (!sc_fem_kernel_is_f32(sc_fem_kernel_id_single())) {
        sc_test_report("no single-precision kernel on this CPU (no AVX2): nothing to compare");
        sc_model_free(&m);
        return;
    }
    sc_sim_opts o, o32;
    sc_sim_default_opts(&o);
    o32 = o;
    o32.fem_single = 1;
    sc_sim *s, *s32;
    ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
    ENSURE_OK(sc_sim_create(&m, &o32, &s32, &err), &err);
    ENSURE(sc_fem_kernel_is_f32(s32->fem.kernel) && !sc_fem_kernel_is_f32(s->fem.kernel));
    const int spine = bone_index(&m, "spine");
    double dx = 0, db = 0, tilt = 0;
    for (int k = 0; k < 3000; k++) {
        const double push = k >= 1000 && k < 1400 ? 150 : 0;
        s->push[3 * spine] = s32->push[3 * spine] = push;
        ENSURE_OK(sc_sim_step(s, &err), &err);
        ENSURE_OK(sc_sim_step(s32, &err), &err);
        for (int i = 0; i < 3 * m.nnodes; i++) dx = fmax(dx, fabs(s->x[i] - s32->x[i]));
        for (int b = 0; b < m.nbones; b++) db = fmax(db, sc_v3_dist(s->pose[b].p, s32->pose[b].p));
        sc_vec3 up = sc_q_rotate(s->pose[spine].q, sc_v3(0, 1, 0));
        tilt = fmax(tilt, acos(fmin(1, up.y)) * 180 / SC_PI);
    }
    sc_test_report("1.5 s standing, 150 N push for 0.2 s (spine tilts up to %.2f deg): single vs double precision FEM: nodes within "
                   "%.2g m, bones within %.2g m (kernel %s)",
                   tilt, dx, db, sc_fem_kernel_name(s32->fem.kernel));
    ENSURE(tilt > 0.5); /* the push did move the body */
    ENSURE(dx < 1e-5 && db < 1e-5);
    size_t cap = sc_sim_snapshot_capacity(s32);
    unsigned char *buf = malloc(cap);
    size_t n = sc_sim_snapshot_save(s32, buf, cap);
    ENSURE(n > 0 && sc_sim_snapshot_restore(s, buf, n, &err) == SC_EINPUT);
    ENSURE_OK(sc_sim_snapshot_restore(s32, buf, n, &err), &err);
    free(buf);
    sc_sim_free(s);
    sc_sim_free(s32);
    sc_model_free(&m);
}

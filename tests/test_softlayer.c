/* [J11]'s soft contact layer and Wang et al. 2010's motor noise: the layer carries the
 * character's weight with the deflection its stiffness implies, a dropped box meets the ground
 * as [J11] Fig. 9 compares (rigid LCP contact against softcon's penalty contact on soft flesh),
 * and motor noise is an internal, seeded torque. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/mathx.h"
#include "fixtures.h"
#include "sim/sim.h"
#include "store/character.h"
#include "test.h"

static void load(sc_model *m)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    sc_err err = {0};
    ENSURE_OK(sc_character_read(ch, m, 0, &err), &err);
}

/* Surface vertex v where the nodes x put it (its embedding). */
static sc_vec3 surface_vertex(const sc_sim *s, const double *x, int v)
{
    const int *t = s->m->tets + 4 * s->m->surf_tet[v];
    sc_vec3 p = {0, 0, 0};
    for (int k = 0; k < 4; k++) p = sc_v3_axpy(s->m->surf_bary[4 * v + k], sc_v3_load(x + 3 * t[k]), p);
    return p;
}

/* Where surface vertex v would be if its tet's nodes were all carried by their bones. */
static sc_vec3 carried_vertex(const sc_sim *s, int v)
{
    const sc_model *m = s->m;
    const int *t = m->tets + 4 * m->surf_tet[v];
    sc_vec3 p = {0, 0, 0};
    for (int k = 0; k < 4; k++) {
        const int n = t[k], b = s->node_owner[n];
        const sc_vec3 x = sc_v3_add(s->pose[b].p, sc_q_rotate(s->pose[b].q, sc_v3_load(s->node_local + 3 * n)));
        p = sc_v3_axpy(m->surf_bary[4 * v + k], x, p);
    }
    return p;
}

/* The mean height of the skin in contact above where the bones would carry it. */
static double skin_lift(const sc_sim *s, int *down)
{
    double sum = 0;
    *down = 0;
    for (int v = 0; v < s->nv; v++)
        if (s->in_contact[v]) {
            sum += surface_vertex(s, s->x, v).y - carried_vertex(s, v).y;
            ++*down;
        }
    return *down ? sum / *down : 0;
}

/* A pad of thickness h under pressure p compresses by p h / E when free to bulge sideways and by
   p h / E_c when confined, E_c = E (1 - nu) / ((1 + nu) (1 - 2 nu)): the block's bottom layer of
   tets, bonded to the carried core above, lies between the two. */
TEST(softlayer_carries_the_weight_with_the_expected_deflection)
{
    sc_model block, m;
    sc_err err = {0};
    const double h = 0.05, E = 2e4, nu = 0.3;  /* nodes heavy enough for the contact's explicit damping */
    ENSURE(sc_fixture_block(&block, 6, h, E)); /* 25 cm */
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.plasticity = 0;
    o.damping = SC_DAMP_RAYLEIGH;
    o.contact_model = SC_CONTACT_LAYER;
    o.layer.thickness = 0.5 * h; /* the skin's nodes: one tet deep */
    o.layer.bones = 1;
    sc_sim *s;
    ENSURE_OK(sc_sim_create(&block, &o, &s, &err), &err);
    sc_sim_diag d;
    int down, soft = 0, samples = 0;
    double force = 0, lift = 0; /* averaged over the last second: the core bobs slowly on its soft skin */
    for (long k = 0; k < 6000; k++) {
        ENSURE_OK(sc_sim_step(s, &err), &err);
        if (k < 4000 || k % 10) continue;
        sc_sim_diagnostics(s, &d);
        force += d.contact_force[1];
        lift += skin_lift(s, &down);
        samples++;
    }
    force /= samples;
    lift /= samples;
    for (int i = 0; i < s->nn; i++) soft += s->m->node_bone[i] < 0;
    const double weight = d.mass * 9.81, p = weight / (25 * h * h);
    const double free_bulge = p * h / E, confined = free_bulge * (1 + nu) * (1 - 2 * nu) / (1 - nu);
    sc_test_report("25 cm block (E = 20 kPa), its skin's %d nodes soft: mean ground force %.3f N against its weight %.3f N, bottom layer (5 cm) "
                   "compressed by %.3f mm, between %.3f (confined) and %.3f mm (free to bulge); penetration %.2f mm",
                   soft, force, weight, 1e3 * lift, 1e3 * confined, 1e3 * free_bulge, 1e3 * s->contact.max_depth);
    ENSURE(soft == 6 * 6 * 6 - 4 * 4 * 4 && down == 36);
    ENSURE(fabs(force / weight - 1) < 1e-2);
    ENSURE(lift > 0.9 * confined && lift < 1.1 * free_bulge);
    sc_sim_free(s);
    sc_model_free(&block);

    /* the Michelin on walk_softlayer.yaml's feet: the carried flesh's mass is in the bones, the
       layer's in its nodes, and the ground carries all of it */
    load(&m);
    sc_sim_default_opts(&o);
    o.contact_model = SC_CONTACT_LAYER;
    o.layer.thickness = 0.03;
    o.layer.bones = 1ull << sc_model_bone_index(&m, "l_foot") | 1ull << sc_model_bone_index(&m, "r_foot");
    ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
    soft = 0;
    for (int i = 0; i < s->nn; i++) soft += s->m->node_bone[i] < 0;
    const double raise[3] = {0, 0.005, 0}, still[3] = {0, 0, 0};
    sc_sim_translate(s, raise, still);
    for (long k = 0; k < 4000; k++) ENSURE_OK(sc_sim_step(s, &err), &err);
    sc_sim_diagnostics(s, &d);
    double flesh = 0;
    for (int i = 0; i < m.nnodes; i++) flesh += m.node_mass[i];
    const double skin = skin_lift(s, &down), speed = hypot(d.linear[0], hypot(d.linear[1], d.linear[2])) / d.mass;
    sc_test_report("Michelin, 3 cm layer on the feet (%d of %d nodes soft), 2 s after a 5 mm drop: mass %.3f kg (flesh %.3f), ground force "
                   "%.2f N against the weight %.2f N, %d vertices down, the skin in contact %.2f mm above where the bones would carry it, "
                   "penetration %.2f mm, centre of mass speed %.1f mm/s",
                   soft, s->nn, d.mass, flesh, d.contact_force[1], d.mass * 9.81, down, 1e3 * skin, 1e3 * s->contact.max_depth, 1e3 * speed);
    ENSURE(soft > 0 && soft < s->nn / 4);
    ENSURE(fabs(d.mass - flesh) < 1e-9 * flesh);
    ENSURE(fabs(d.contact_force[1] / (d.mass * 9.81) - 1) < 5e-3 && speed < 0.01);
    ENSURE(skin > 0);
    sc_sim_free(s);
    sc_model_free(&m);
}

/* [J11] Fig. 9: a box dropped on the ground. ODE's contact (an LCP, as [J11]'s) stops the rigid
   box dead but for the pop of its error correction; a soft box, or the soft layer around a rigid
   core, stores the impact in its flesh and gives it back: softcon's penalty contact does not
   take the energy out, the flesh's damping does. */
static void drop_box(int contact_model, double *rebound, double *penetration, double *contact_time)
{
    sc_model m;
    sc_err err = {0};
    ENSURE(sc_fixture_block(&m, 6, 0.05, 1e5)); /* 25 cm, 15.6 kg */
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.plasticity = 0;
    o.damping = SC_DAMP_RAYLEIGH;
    o.contact_model = contact_model;
    o.layer.thickness = 0.025; /* the outer shell of nodes */
    o.layer.bones = 1;
    sc_sim *s;
    ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
    const double up[3] = {0, 0.2, 0}, still[3] = {0, 0, 0};
    sc_sim_translate(s, up, still);
    sc_sim_diag d;
    sc_sim_diagnostics(s, &d);
    const double rest = d.com[1] - 0.2;
    double low = INFINITY, high = -INFINITY, first = NAN, last = NAN;
    *penetration = 0;
    for (long k = 0; k < 1600; k++) { /* 0.8 s: the fall takes 0.2 s */
        ENSURE_OK(sc_sim_step(s, &err), &err);
        sc_sim_diagnostics(s, &d);
        *penetration = fmax(*penetration, s->contact.max_depth);
        if (d.contacts && isnan(first)) first = s->t;
        if (d.contacts) last = s->t;
        if (!isnan(first)) {
            low = fmin(low, d.com[1]);
            if (d.com[1] > low + 1e-4) high = fmax(high, d.com[1]);
        }
    }
    *rebound = isfinite(high) ? high - rest : 0;
    *contact_time = last - first;
    sc_sim_free(s);
    sc_model_free(&m);
}

TEST(softlayer_box_drop_against_rigid_contact)
{
    double rb[3], pen[3], ct[3];
    const int models[3] = {SC_CONTACT_RIGID, SC_CONTACT_LAYER, SC_CONTACT_SOFT};
    for (int k = 0; k < 3; k++) drop_box(models[k], &rb[k], &pen[k], &ct[k]);
    sc_test_report("25 cm box dropped 20 cm (E = 100 kPa): centre of mass back above its resting height by %.2f / %.2f / %.2f mm after "
                   "impact, deepest penetration %.2f / %.2f / %.2f mm, first to last contact %.3f / %.3f / %.3f s of 0.6 s (rigid LCP / soft layer / "
                   "soft box, penalty contact)",
                   1e3 * rb[0], 1e3 * rb[1], 1e3 * rb[2], 1e3 * pen[0], 1e3 * pen[1], 1e3 * pen[2], ct[0], ct[1], ct[2]);
    ENSURE(rb[0] < 5e-3 && pen[0] < 2e-3); /* the LCP: no bounce, no sinking in (erp 0.2 pops the box up by mm) */
    for (int k = 1; k < 3; k++) ENSURE(rb[k] > 0.02 && rb[k] < 0.2 && pen[k] < 0.01); /* soft: a bounce, lower than the drop */
}

/* Motor noise is a torque pair on each joint: the character's momentum in free space does not
   change, its pose does, per seed and bit for bit. */
static void noisy_float(const sc_model *m, double b, uint64_t seed, double lin[3], double ang[3], sc_quat *pose_out)
{
    sc_err err = {0};
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.contact_model = SC_CONTACT_RIGID;
    o.contact.enabled = 0;
    o.gravity[1] = 0;
    o.motor_noise.b = b;
    o.motor_noise.seed = seed;
    sc_sim *s;
    ENSURE_OK(sc_sim_create(m, &o, &s, &err), &err);
    sc_quat *t = malloc((size_t)m->nbones * sizeof *t);
    for (int i = 0; i < m->nbones; i++) t[i] = sc_q_axis_angle(sc_v3(1, 0, 0), i % 2 ? 0.4 : -0.3); /* the servos work */
    sc_sim_set_targets(s, t);
    for (long k = 0; k < 1000; k++) ENSURE_OK(sc_sim_step(s, &err), &err);
    sc_sim_diag d;
    sc_sim_diagnostics(s, &d);
    memcpy(lin, d.linear, sizeof d.linear);
    memcpy(ang, d.angular, sizeof d.angular);
    for (int i = 0; i < m->nbones; i++) pose_out[i] = s->pose[i].q;
    free(t);
    sc_sim_free(s);
}

TEST(motor_noise_is_internal_and_seeded)
{
    sc_model m;
    load(&m);
    sc_quat *q0 = malloc(3 * (size_t)m.nbones * sizeof *q0), *q1 = q0 + m.nbones, *q2 = q1 + m.nbones;
    double l0[3], a0[3], l1[3], a1[3], l2[3], a2[3], l3[3], a3[3];
    noisy_float(&m, 0, 1, l0, a0, q0);
    noisy_float(&m, 75, 1, l1, a1, q1);
    noisy_float(&m, 75, 2, l2, a2, q2);
    double diff = 0, dseed = 0;
    for (int i = 0; i < m.nbones; i++) {
        diff = fmax(diff, sc_q_angle_between(q0[i], q1[i]));
        dseed = fmax(dseed, sc_q_angle_between(q1[i], q2[i]));
    }
    noisy_float(&m, 75, 1, l3, a3, q2); /* seed 1 again */
    const int same = !memcmp(q1, q2, (size_t)m.nbones * sizeof *q1) && !memcmp(l1, l3, sizeof l1) && !memcmp(a1, a3, sizeof a1);
    const double dl = hypot(l1[0], hypot(l1[1], l1[2])), da = hypot(a1[0] - a0[0], hypot(a1[1] - a0[1], a1[2] - a0[2]));
    sc_test_report(
        "0.5 s in free space with b = 75: linear momentum %.2g kg m/s, angular %.2g kg m^2/s from the noiseless run's (which has %.2g, %.2g); "
        "the pose differs from the noiseless one by up to %.2e rad and between seeds by %.2e rad; the same seed again %s",
        dl, da, hypot(l0[0], hypot(l0[1], l0[2])), hypot(a0[0], hypot(a0[1], a0[2])), diff, dseed, same ? "bit-identical" : "DIFFERS");
    ENSURE(dl < 1e-9 && da < 1e-5); /* the noise adds none (ODE's own drift: 2e-4) */
    ENSURE(diff > 1e-5 && dseed > 1e-5 && same);
    free(q0);
    sc_model_free(&m);
}

/* scripts/softcontact-experiment.py as a user runs it: one push bisection per seed on the rigid
   walker (0, 1200 N, then 600 N), the same rows whatever the number of processes, and a bad
   config exit 2 naming its key. */
TEST(softcontact_experiment_runner)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    static char out[8192], cfg[1024];
    snprintf(cfg, sizeof cfg,
             "experiment: push\nwalkers: {rigid: %s}\nseeds: 2\nduration: 3.0\n"
             "push: {window: [1.5, 1.7], directions: {forward: [0, 0, 1]}, max: 1200, resolution: 700}\n",
             sc_test_repo("configs/simbicon/walk_rigid.yaml"));
    const char *c = sc_test_write("exp.yaml", cfg), *h1 = sc_test_tmp("exp1.h5"), *h2 = sc_test_tmp("exp2.h5");
    const char *script = sc_test_repo("scripts/softcontact-experiment.py");
    int rc = sc_test_sh(out, sizeof out, "%s -j 1 -o %s %s %s && %s -j 2 -o %s %s %s", script, h1, c, ch, script, h2, c, ch);
    ENSURE_MSG(rc == 0, "exit %d: %s", rc, out);
    rc = sc_test_sh(
        out, sizeof out,
        "/usr/bin/python3 -c \"import h5py, numpy as np; a, b = h5py.File('%s'), h5py.File('%s'); t = a['trials']; "
        "assert a.attrs['schema'] == 'softcon.experiment/1' and t['largest'].shape == (2,), t['largest'][:]; "
        "assert all(np.array_equal(t[k][:], b['trials'][k][:], equal_nan=True) for k in ('largest', 'fall_time', 'distance', 'cop_tv_per_step')); "
        "assert (t['trials'][:] == 3).all() and (t['largest'][:] %% 600 == 0).all() and np.isinf(t['fall_time'][:]).all() and (t['distance'][:] > "
        "0.5).all(); "
        "assert t['force_y_mean'].attrs['units'] == 'N' and abs(t['force_y_mean'][0] / 638.4 - 1) < 0.2, t['force_y_mean'][:]; "
        "print('largest', t['largest'][:], 'N; distance', t['distance'][:], 'm')\"",
        h1, h2);
    ENSURE_MSG(rc == 0, "%s", out);
    sc_test_report("2 seeds, 3 simulations each, -j 1 and -j 2 give the same rows: %s", out);
    const char *bad = sc_test_write("exp_bad.yaml", "experiment: jump\nwalkers: {}\n");
    rc = sc_test_sh(out, sizeof out, "%s -o %s %s %s", script, sc_test_tmp("exp_bad.h5"), bad, ch);
    ENSURE_MSG(rc == 2 && strstr(out, "exp_bad.yaml: experiment: push, floor or gait") && !sc_test_file_exists(sc_test_tmp("exp_bad.h5")),
               "exit %d: %s", rc, out);
    snprintf(cfg, sizeof cfg, "experiment: floor\nwalkers: {rigid: %s}\nrigid_shape: ball\n", sc_test_repo("configs/simbicon/walk_rigid.yaml"));
    bad = sc_test_write("exp_bad.yaml", cfg);
    rc = sc_test_sh(out, sizeof out, "%s -o %s %s %s", script, sc_test_tmp("exp_bad.h5"), bad, ch);
    ENSURE_MSG(rc == 2 && strstr(out, "exp_bad.yaml: rigid_shape: box or skin") && !sc_test_file_exists(sc_test_tmp("exp_bad.h5")), "exit %d: %s", rc,
               out);
    /* SIGTERM while a simulation runs: its simulate stopped, the temporary folder gone, no output */
    snprintf(cfg, sizeof cfg, "experiment: floor\nwalkers: {soft: %s}\nseeds: 2\nduration: 20.0\nfloor: {size: 0.05, height: 0.02}\n",
             sc_test_repo("configs/simbicon/walk_soft.yaml"));
    c = sc_test_write("exp_term.yaml", cfg);
    const char *tdir = sc_test_tmp("exp_term_tmp"), *term = sc_test_tmp("exp_term.h5");
    rc = sc_test_sh(
        out, sizeof out,
        "mkdir -p %s && (TMPDIR=%s exec %s -j 2 -o %s %s %s) & p=$!; "
        "for i in $(seq 600); do ls %s/softcon-exp.*/*.yaml >/dev/null 2>&1 && break; sleep 0.1; done; sleep 0.5; "
        "kill -TERM $p; wait $p; echo \"rc=$? left=$(ls -A %s | wc -l) running=$(pgrep -f '^[^ ]*(python3|simulate) .*exp_term' | wc -l)\"",
        tdir, tdir, script, term, c, ch, tdir, tdir);
    ENSURE_MSG(strstr(out, "rc=143 left=0 running=0") && !sc_test_file_exists(term), "%s", out);
    sc_test_report("SIGTERM during the trials: %s", out);
}

/* sample-openloop and the library under it: segment controller, cost, determinism whatever
 * the number of MPI ranks, checkpoints that survive kill -9 and SIGTERM, replay through
 * simulate bit for bit, and bad input. Small presets on the march (no external data). */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sampling/controller.h"
#include "sampling/cost.h"
#include "store/reference.h"
#include "sampling/segments.h"
#include "fixtures.h"
#include "store/character.h"
#include "io/h5.h"
#include "test.h"

static char out[16384];

/* 6 segments of 0.05 s, 12 samples, 3 elites: a few seconds */
static const char *preset(void)
{
    static const char *p;
    if (p) return p;
    return p = sc_fixture_keep(sc_test_write("samcon_preset.yaml",
                                             "simulation:\n  solver: quick\nsampling:\n  segment: 0.05\n  samples: 12\n  elites: 3\n"
                                             "  end: 0.3\n"));
}

/* The same, with more samples, so a run lasts long enough to be interrupted. */
static const char *long_preset(void)
{
    static const char *p;
    if (p) return p;
    return p = sc_fixture_keep(sc_test_write("samcon_long.yaml",
                                             "simulation:\n  solver: quick\nsampling:\n  segment: 0.05\n  samples: 24\n  elites: 4\n"
                                             "  end: 0.5\n"));
}

static int run_sampler(int ranks, const char *cfg, const char *outp, const char *extra)
{
    const char *ch = sc_fixture_michelin(), *ref = sc_fixture_march_reference();
    if (!ch || !ref) return -1;
    if (ranks > 0)
        return sc_test_sh(out, sizeof out, "mpiexec.mpich -n %d %s -q -c %s -o %s %s %s %s", ranks, sc_test_tool("sample-openloop"), cfg, outp,
                          extra ? extra : "", ch, ref);
    return sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s %s", sc_test_tool("sample-openloop"), cfg, outp, extra ? extra : "", ch, ref);
}

/* Every dataset and every attribute outside /run and the root's provenance equal. */
static int same_controller(const char *a, const char *b)
{
    CHECK(sc_test_h5_same(out, sizeof out, a, b, "/time,/bones,/targets,/start,/segments,/achieved,/report"), "%s", out);
    int rc = sc_test_sh(out, sizeof out,
                        "for a in status seed base_targets time_scaling dt config; do "
                        "h5dump -a /$a %s | tail -n +2 > %s.attr; h5dump -a /$a %s | tail -n +2 | cmp -s - %s.attr || echo $a; done",
                        a, a, b, a);
    CHECK(rc == 0 && out[0] == 0, "root attributes differ: %s", out);
    return 1;
}

static const char *baseline(void)
{
    static int state;
    static const char *p;
    if (!p) p = sc_fixture_keep(sc_test_tmp("samcon_n1.h5"));
    if (!state) state = run_sampler(0, preset(), p, NULL) == 0 ? 1 : -1;
    return state > 0 ? p : NULL;
}

TEST(samcon_segment_controller_plays_the_reference_stretched)
{
    const char *ch = sc_fixture_michelin(), *refp = sc_fixture_march_reference();
    ENSURE_MSG(ch && refp, "fixtures: %s", sc_fixture_log());
    sc_model m;
    sc_reference r;
    sc_err err;
    ENSURE_OK(sc_character_read(ch, &m, 1, &err), &err);
    ENSURE_OK(sc_reference_read(refp, &r, &err), &err);
    sc_control_dofs d;
    sc_control_dofs_init(&m, &d);
    ENSURE(d.n == 3 * 11 + 4); /* 11 ball joints and 4 hinges below the root */
    ENSURE(sc_control_dof_index(&d, "l_thigh.x") >= 0 && sc_control_dof_index(&d, "l_shin") >= 0 && sc_control_dof_index(&d, "pelvis.x") < 0);
    double zero[SC_MAX_DOFS] = {0}, off[SC_MAX_DOFS] = {0};
    /* segment 0 at scale 1 (200 steps over 0.1 s), segment 1 stretched to 1.25 (250 steps over 0.1 s) */
    sc_segment seg[2] = {{r.time[0], r.time[200], 0, 200, zero}, {r.time[200], r.time[400], 200, 250, off}};
    sc_segment_controller c = {&m, &d, r.time, r.target_quat, r.n, seg, 2};
    sc_quat q[SC_SIM_MAX_BONES], qr[SC_SIM_MAX_BONES];
    for (long k = 0; k <= 200; k += 50) { /* scale 1: the reference's own samples (to rounding of the time) */
        sc_segment_targets(&c, k, q);
        sc_reference_targets_at(&r, r.time[k], qr);
        for (int b = 0; b < m.nbones; b++)
            ENSURE_MSG(sc_q_angle_between(q[b], qr[b]) < 1e-9, "step %ld, bone %d differs from the reference sample", k, b);
    }
    sc_segment_targets(&c, 0, q); /* a segment's first step plays its first sample exactly */
    sc_reference_targets_at(&r, r.time[0], qr);
    ENSURE(!memcmp(q, qr, sizeof(sc_quat) * (size_t)m.nbones));
    /* step 200 + 125 of the stretched segment plays reference time t[300] */
    ENSURE_NEAR(sc_segment_ref_time(&c, 325, NULL), r.time[300], 1e-12);
    /* an offset of 0.3 rad on a hinge turns its target by 0.3 rad about the axis */
    int knee = sc_model_bone_index(&m, "l_shin"), hip = sc_model_bone_index(&m, "r_thigh");
    off[d.first[knee]] = 0.3;
    off[d.first[hip] + 2] = -0.2;
    sc_segment_targets(&c, 325, q);
    off[d.first[knee]] = 0;
    off[d.first[hip] + 2] = 0;
    sc_segment_targets(&c, 325, qr);
    ENSURE_NEAR(sc_q_angle_between(q[knee], qr[knee]), 0.3, 1e-12);
    ENSURE_NEAR(sc_q_angle_between(q[hip], qr[hip]), 0.2, 1e-12);
    sc_reference_free(&r);
    sc_model_free(&m);
}

TEST(samcon_cost_is_zero_on_the_reference_and_grows_off_it)
{
    const char *ch = sc_fixture_michelin(), *refp = sc_fixture_march_reference();
    ENSURE_MSG(ch && refp, "fixtures: %s", sc_fixture_log());
    sc_model m;
    sc_reference r;
    sc_err err;
    ENSURE_OK(sc_character_read(ch, &m, 1, &err), &err);
    ENSURE_OK(sc_reference_read(refp, &r, &err), &err);
    sc_tracker tr;
    ENSURE_OK(sc_tracker_init(&tr, &m, &r, NULL, &err), &err);
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    sc_sim *s;
    ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
    double root[3], rv[3], w[3 * SC_SIM_MAX_BONES], terms[SC_COST_TERMS];
    sc_quat q[SC_SIM_MAX_BONES];
    int k = 2600; /* a swing phase: bending the knee moves the foot up whatever the stance knee's flexion */
    ENSURE_OK(sc_reference_state_at(&r, &m, r.time[k], root, q, rv, w, &err), &err);
    sc_sim_set_pose(s, root, q, rv, w);
    sc_tracker_cost(&tr, s, r.time[k], terms);
    sc_test_report("cost terms in the reference's own state: pose %.2e, root %.2e, end effector %.2e m, balance %.2e, com %.2e m", terms[0], terms[1],
                   terms[2], terms[3], terms[4]);
    ENSURE(terms[SC_COST_POSE] < 1e-6 && terms[SC_COST_ROOT] < 1e-6 && terms[SC_COST_EE] < 1e-9);
    ENSURE(sc_tracker_failure(&tr, s, r.time[k]) == SC_FAIL_NONE);
    /* bend the left knee by 0.5 rad: the pose term is 0.5 / 14 joints */
    int knee = sc_model_bone_index(&m, "l_shin");
    q[knee] = sc_q_mul(q[knee], sc_q_axis_angle(sc_v3_load(m.hinge_axis + 3 * knee), 0.5));
    sc_sim_set_pose(s, root, q, rv, w);
    sc_tracker_cost(&tr, s, r.time[k], terms);
    ENSURE_NEAR(terms[SC_COST_POSE], 0.5 / 15, 1e-6);
    ENSURE_MSG(terms[SC_COST_EE] > 1e-3 && terms[SC_COST_BALANCE] > 1e-3, "end effector %g m, balance %g", terms[SC_COST_EE], terms[SC_COST_BALANCE]);
    sc_test_report("the left knee bent 0.5 rad more: pose %.4f (0.5 / 15 joints), end effector %.4f m, balance %.4f", terms[0], terms[2], terms[3]);
    /* a root 40 cm low has failed; so has a body on its side */
    double low[3] = {root[0], root[1] - 0.4, root[2]};
    sc_sim_set_pose(s, low, q, rv, w);
    ENSURE(sc_tracker_failure(&tr, s, r.time[k]) == SC_FAIL_ROOT_LOW);
    q[0] = sc_q_mul(sc_q_axis_angle(sc_v3(0, 0, 1), 1.2), q[0]);
    sc_sim_set_pose(s, root, q, rv, w);
    ENSURE(sc_tracker_failure(&tr, s, r.time[k]) == SC_FAIL_TILT);
    /* a reference lying on the floor (root 15 cm up): sinking 3/4 of 5 % of the character's
       height (over 0.3 of 15 cm) is no fall, 5/4 of it is */
    ENSURE_OK(sc_reference_state_at(&r, &m, r.time[k], root, q, rv, w, &err), &err);
    double lying = 0.15, sink[2] = {0.75 * 0.05 * tr.height, 1.25 * 0.05 * tr.height};
    int expect[2] = {SC_FAIL_NONE, SC_FAIL_ROOT_LOW};
    for (int i = 0; i < 2; i++) {
        r.root_pos[3 * k + 1] = lying;
        double sunk[3] = {root[0], lying - sink[i], root[2]};
        sc_sim_set_pose(s, sunk, q, rv, w);
        ENSURE_MSG(sc_tracker_failure(&tr, s, r.time[k]) == expect[i], "a body lying at %.2f m sunk by %.3f m", lying, sink[i]);
    }
    sc_sim_free(s);
    sc_tracker_free(&tr);
    sc_reference_free(&r);
    sc_model_free(&m);
}

/* Issue 28 item 2: the default allowed set is the reference's contacts plus every bone whose
   lowest point comes within allowed_margin (3 cm) of the floor, so a contact the estimation
   dropped (a roll's back) is not a failure. */
TEST(samcon_allowed_contacts_include_bones_near_the_floor)
{
    const char *ch = sc_fixture_michelin(), *refp = sc_fixture_march_reference();
    ENSURE_MSG(ch && refp, "fixtures: %s", sc_fixture_log());
    sc_model m;
    sc_reference r;
    sc_err err;
    ENSURE_OK(sc_character_read(ch, &m, 1, &err), &err);
    ENSURE_OK(sc_reference_read(refp, &r, &err), &err);
    const int spine = sc_model_bone_index(&m, "spine"), foot = sc_model_bone_index(&m, "l_foot");
    ENSURE(spine >= 0 && foot >= 0);
    double lowest = INFINITY;
    for (int k = 0; k < r.n; k++) lowest = fmin(lowest, r.contact_height[(size_t)k * r.nb + spine]);
    static const struct {
        double height, margin;
        int allowed;
    } cases[] = {{-1, 0.03, 0}, {0.029, 0.03, 1}, {0.031, 0.03, 0}, {0.02, 0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].height >= 0) r.contact_height[(size_t)(r.n / 2) * r.nb + spine] = cases[i].height;
        sc_tracker_opts o;
        sc_tracker_default_opts(&o);
        o.allowed_margin = cases[i].margin;
        sc_tracker tr;
        ENSURE_OK(sc_tracker_init(&tr, &m, &r, &o, &err), &err);
        sc_test_report("spine's lowest point %.3f m (march: %.3f m), margin %.2f m: spine %s, l_foot %s", cases[i].height >= 0 ? cases[i].height : lowest,
                       lowest, cases[i].margin, tr.allowed[spine] ? "allowed" : "watched", tr.allowed[foot] ? "allowed" : "watched");
        ENSURE(tr.allowed[spine] == cases[i].allowed && tr.allowed[foot]);
        sc_tracker_free(&tr);
    }
    sc_reference_free(&r);
    sc_model_free(&m);
}

TEST(samcon_cost_in_the_heading_frame_sees_a_turn_only_as_heading)
{
    const char *ch = sc_fixture_michelin(), *refp = sc_fixture_march_reference();
    ENSURE_MSG(ch && refp, "fixtures: %s", sc_fixture_log());
    sc_model m;
    sc_reference r;
    sc_err err;
    ENSURE_OK(sc_character_read(ch, &m, 1, &err), &err);
    ENSURE_OK(sc_reference_read(refp, &r, &err), &err);
    sc_tracker_opts o[2];
    sc_tracker tr[2];
    for (int f = 0; f < 2; f++) {
        sc_tracker_default_opts(&o[f]);
        o[f].frame = f ? SC_COST_FRAME_HEADING : SC_COST_FRAME_WORLD;
        ENSURE_OK(sc_tracker_init(&tr[f], &m, &r, &o[f], &err), &err);
    }
    sc_sim_opts so;
    sc_sim_default_opts(&so);
    sc_sim *s;
    ENSURE_OK(sc_sim_create(&m, &so, &s, &err), &err);
    double root[3], rv[3], w[3 * SC_SIM_MAX_BONES], base[2][SC_COST_TERMS], turned[2][SC_COST_TERMS];
    sc_quat q[SC_SIM_MAX_BONES];
    int k = 2600;
    ENSURE_OK(sc_reference_state_at(&r, &m, r.time[k], root, q, rv, w, &err), &err);
    sc_sim_set_pose(s, root, q, rv, w);
    for (int f = 0; f < 2; f++) sc_tracker_cost(&tr[f], s, r.time[k], base[f]);
    /* the whole body turned 0.3 rad about the vertical through the root, moving as before */
    sc_quat yaw = sc_q_axis_angle(sc_v3(0, 1, 0), 0.3);
    q[0] = sc_q_mul(yaw, q[0]);
    sc_v3_store(rv, sc_q_rotate(yaw, sc_v3_load(rv)));
    sc_v3_store(w, sc_q_rotate(yaw, sc_v3_load(w)));
    sc_sim_set_pose(s, root, q, rv, w);
    for (int f = 0; f < 2; f++) sc_tracker_cost(&tr[f], s, r.time[k], turned[f]);
    sc_test_report("turned 0.3 rad: world frame root %.4f (was %.4f), balance %.4f (was %.4f); heading frame root %.2e, balance %.4f (was %.4f), "
                   "heading %.4f",
                   turned[0][SC_COST_ROOT], base[0][SC_COST_ROOT], turned[0][SC_COST_BALANCE], base[0][SC_COST_BALANCE], turned[1][SC_COST_ROOT],
                   turned[1][SC_COST_BALANCE], base[1][SC_COST_BALANCE], turned[1][SC_COST_HEADING]);
    ENSURE(turned[0][SC_COST_ROOT] > 0.29 && turned[0][SC_COST_BALANCE] > base[0][SC_COST_BALANCE] + 0.01);
    ENSURE_NEAR(turned[1][SC_COST_HEADING], 0.3, 1e-9);
    ENSURE_NEAR(base[1][SC_COST_HEADING], 0, 1e-12);
    for (int i = 0; i < SC_COST_TERMS; i++) {
        if (i == SC_COST_HEADING || i == SC_COST_COM) continue;
        ENSURE_NEAR(turned[1][i], base[1][i], 1e-6);
        ENSURE_NEAR(base[1][i], base[0][i], i == SC_COST_ROOT || i == SC_COST_BALANCE ? 1e-6 : 0);
    }
    sc_sim_free(s);
    for (int f = 0; f < 2; f++) sc_tracker_free(&tr[f]);
    sc_reference_free(&r);
    sc_model_free(&m);
}

TEST(samcon_identical_for_1_2_3_ranks)
{
    const char *b = baseline();
    ENSURE_MSG(b, "sample-openloop failed: %s", out);
    for (int n = 1; n <= 3; n++) {
        char name[64];
        snprintf(name, sizeof name, "samcon_mpi%d.h5", n);
        const char *p = sc_fixture_keep(sc_test_tmp(name));
        int rc = run_sampler(n, preset(), p, NULL);
        ENSURE_MSG(rc == 0, "mpiexec -n %d: exit %d: %s", n, rc, out);
        ENSURE(same_controller(b, p));
    }
    sc_h5 *f;
    sc_err err;
    long long samples = 0, completed = 0;
    char *kernel = NULL;
    ENSURE_OK(sc_h5_open(b, &f, &err), &err);
    ENSURE_OK(sc_h5_read_attr_i64(f, "/report", "samples", &samples, &err), &err);
    ENSURE_OK(sc_h5_read_attr_i64(f, "/report", "completed", &completed, &err), &err);
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "fem_kernel", &kernel, &err), &err);
    sc_h5_close(f);
    ENSURE(completed == 1 && samples >= 6 * 12);
    sc_sim_opts so;
    sc_sim_default_opts(&so); /* the preset samples in double precision */
    ENSURE_MSG(!strcmp(kernel, sc_fem_kernel_name(sc_sim_fem_kernel(&so))), "fem_kernel %s", kernel);
    free(kernel);
    sc_test_report("openloop.h5 identical (every dataset, /report and the root's controller attributes) without MPI and under "
                   "mpiexec.mpich -n 1, 2, 3; %lld samples",
                   samples);
}

/* /run's threads attribute of an openloop.h5 (-1: unreadable) */
static long long run_threads(const char *path)
{
    sc_h5 *f;
    sc_err err;
    long long t = -1;
    if (sc_h5_open(path, &f, &err)) return -1;
    if (sc_h5_read_attr_i64(f, "/run", "threads", &t, &err)) t = -1;
    sc_h5_close(f);
    return t;
}

/* --threads: a rank's samples on several threads, each with its own simulation, sharing the
   elites. The preset quicksteps (its shuffle seed is ODE's one global, behind a lock); the same
   with the exact solver steps on the threads at once. */
TEST(samcon_identical_for_threads_and_ranks_x_threads)
{
    const char *b = baseline();
    ENSURE_MSG(b, "sample-openloop failed: %s", out);
    const char *t2 = sc_test_tmp("samcon_t2.h5"), *r2t2 = sc_test_tmp("samcon_r2t2.h5");
    int rc = run_sampler(0, preset(), t2, "--threads 2");
    ENSURE_MSG(rc == 0, "--threads 2: exit %d: %s", rc, out);
    ENSURE(same_controller(b, t2));
    rc = run_sampler(2, preset(), r2t2, "--threads 2");
    ENSURE_MSG(rc == 0, "mpiexec -n 2, --threads 2: exit %d: %s", rc, out);
    ENSURE(same_controller(b, r2t2));
    ENSURE_MSG(run_threads(t2) == 2 && run_threads(b) == 1, "/run threads %lld and %lld", run_threads(t2), run_threads(b));
    const char *cfg = sc_test_write("samcon_exact.yaml", "sampling:\n  segment: 0.05\n  samples: 12\n  elites: 3\n  end: 0.15\n");
    const char *e1 = sc_test_tmp("samcon_exact_t1.h5"), *e3 = sc_test_tmp("samcon_exact_t3.h5"), *e22 = sc_test_tmp("samcon_exact_r2t2.h5");
    rc = run_sampler(0, cfg, e1, NULL);
    ENSURE_MSG(rc == 0, "exact solver: exit %d: %s", rc, out);
    rc = run_sampler(0, cfg, e3, "--threads 3");
    ENSURE_MSG(rc == 0, "exact solver, --threads 3: exit %d: %s", rc, out);
    ENSURE(same_controller(e1, e3));
    rc = run_sampler(2, cfg, e22, "--threads 2");
    ENSURE_MSG(rc == 0, "exact solver, mpiexec -n 2, --threads 2: exit %d: %s", rc, out);
    ENSURE(same_controller(e1, e22));
    sc_test_report("openloop.h5 identical on 1 rank x 1 thread, 1 x 2 and 2 ranks x 2 threads (quickstep), and 1 x 1, 1 x 3, 2 x 2 "
                   "(exact solver); /run records the threads");
}

TEST(samcon_segment_elites_and_heading_cost_identical_for_ranks)
{
    const char *cfg = sc_test_write("samcon_heading.yaml",
                                    "simulation:\n  solver: quick\nsampling:\n  segment: 0.05\n  samples: 12\n"
                                    "  elites: 3\n  end: 0.3\n  elite_cost: segment\n  cost:\n    frame: heading\n"
                                    "    heading: 3\n");
    const char *a = sc_test_tmp("samcon_heading_n0.h5"), *b = sc_test_tmp("samcon_heading_n2.h5");
    int rc = run_sampler(0, cfg, a, NULL);
    ENSURE_MSG(rc == 0, "sample-openloop: exit %d: %s", rc, out);
    rc = run_sampler(2, cfg, b, NULL);
    ENSURE_MSG(rc == 0, "mpiexec -n 2: exit %d: %s", rc, out);
    ENSURE(same_controller(a, b));
    sc_h5 *f;
    sc_err err;
    char *frame = NULL;
    double *terms = NULL;
    size_t dims[2] = {0, 0};
    ENSURE_OK(sc_h5_open(a, &f, &err), &err);
    ENSURE_OK(sc_h5_read_attr_str(f, "/segments/cost_terms", "frame", &frame, &err), &err);
    ENSURE_OK(sc_h5_read_f64(f, "/segments/cost_terms", 2, dims, &terms, &err), &err);
    sc_h5_close(f);
    ENSURE(!strcmp(frame, "heading") && dims[1] == SC_COST_TERMS);
    double worst = 0;
    for (size_t k = 0; k < dims[0]; k++) {
        double h = terms[k * SC_COST_TERMS + SC_COST_HEADING];
        ENSURE(isfinite(h));
        if (h > worst) worst = h;
    }
    free(frame);
    free(terms);
    /* the march's first 0.3 s, tracked: its heading stays near the reference's */
    ENSURE_MSG(worst < 0.2, "heading error %g rad", worst);
    sc_test_report("elite_cost: segment, cost.frame: heading: openloop.h5 identical without MPI and on 2 ranks; largest heading error at a "
                   "segment's end %.4f rad over %zu segments",
                   worst, dims[0]);
}

TEST(samcon_replay_through_simulate_is_bit_identical)
{
    const char *b = baseline(), *ch = sc_fixture_michelin();
    ENSURE_MSG(b, "sample-openloop failed: %s", out);
    const char *sim = sc_fixture_keep(sc_test_tmp("samcon_replay_sim.h5"));
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --trajectory %s %s", sc_test_tool("simulate"), preset(), sim, b, ch);
    ENSURE_MSG(rc == 0, "simulate: %s", out);
    sc_h5 *fa, *fb;
    sc_err err;
    ENSURE_OK(sc_h5_open(b, &fa, &err), &err);
    ENSURE_OK(sc_h5_open(sim, &fb, &err), &err);
    size_t da[3] = {0, 0, 3}, db[3] = {0, 0, 3}, qa[3] = {0, 0, 4}, qb[3] = {0, 0, 4};
    double *pa, *pb, *oa, *ob;
    ENSURE_OK(sc_h5_read_f64(fa, "/achieved/bone_position", 3, da, &pa, &err), &err);
    ENSURE_OK(sc_h5_read_f64(fb, "/bones/position", 3, db, &pb, &err), &err);
    ENSURE_OK(sc_h5_read_f64(fa, "/achieved/bone_orientation", 3, qa, &oa, &err), &err);
    ENSURE_OK(sc_h5_read_f64(fb, "/bones/orientation", 3, qb, &ob, &err), &err);
    sc_h5_close(fa);
    sc_h5_close(fb);
    ENSURE_MSG(da[0] == db[0] && da[0] > 10, "%zu frames achieved, %zu simulated", da[0], db[0]);
    size_t n3 = da[0] * da[1] * 3, n4 = qa[0] * qa[1] * 4;
    double worst = 0;
    for (size_t i = 0; i < n3; i++) worst = fmax(worst, fabs(pa[i] - pb[i]));
    int same = !memcmp(pa, pb, n3 * sizeof(double)) && !memcmp(oa, ob, n4 * sizeof(double));
    free(pa);
    free(pb);
    free(oa);
    free(ob);
    ENSURE_MSG(same, "the replay differs from the sampler's achieved motion (largest position difference %.3g m)", worst);
    sc_test_report("simulate --trajectory openloop.h5 reproduces the %zu achieved frames bit for bit", da[0]);
}

static long long checkpoint_segment(const char *path)
{
    sc_h5 *f;
    sc_err err;
    long long k = -1;
    if (sc_h5_open(path, &f, &err)) return -1;
    if (sc_h5_read_attr_i64(f, "/", "next_segment", &k, &err)) k = -1;
    sc_h5_close(f);
    return k;
}

/* Starts the long preset in the background; returns once its checkpoint says segment >= k. */
struct reached {
    const char *checkpoint;
    long long segment;
};
static int checkpoint_reached(const void *arg)
{
    const struct reached *r = arg;
    return checkpoint_segment(r->checkpoint) >= r->segment;
}

/* Starts the long preset in the background and waits (while it runs, however slowly) for its
   checkpoint of segment k. */
static int start_and_wait(const char *outp, const char *log, int ranks, int k)
{
    const char *ch = sc_fixture_michelin(), *ref = sc_fixture_march_reference();
    char ck[1100];
    snprintf(ck, sizeof ck, "%s.ckpt", outp);
    unlink(ck);
    unlink(outp);
    char launcher[64] = "";
    if (ranks) snprintf(launcher, sizeof launcher, "mpiexec.mpich -n %d ", ranks);
    sc_test_sh(NULL, 0, "(%s%s -q -c %s -o %s %s %s > %s 2>&1; echo $? > %s.rc) > /dev/null 2>&1 &", launcher, sc_test_tool("sample-openloop"),
               long_preset(), outp, ch, ref, log, log);
    char command[4400];
    snprintf(command, sizeof command, "%s -q -c %s -o %s", sc_test_tool("sample-openloop"), long_preset(), outp);
    struct reached r = {ck, k};
    return sc_test_wait_while_running(checkpoint_reached, &r, command, 1800);
}

static int wait_rc(const char *log)
{
    char rcfile[1100];
    snprintf(rcfile, sizeof rcfile, "%s.rc", log);
    for (int i = 0; i < 12000; i++) { /* the run is ending (signalled or killed): up to 10 min on a busy machine */
        FILE *f = fopen(rcfile, "r");
        int rc = -1;
        if (f && fscanf(f, "%d", &rc) == 1) {
            fclose(f);
            unlink(rcfile);
            return rc;
        }
        if (f) fclose(f);
        usleep(50000);
    }
    return -1;
}

static const char *long_baseline(void)
{
    static int state;
    static const char *p;
    if (!p) p = sc_fixture_keep(sc_test_tmp("samcon_long.h5"));
    if (!state) state = run_sampler(0, long_preset(), p, NULL) == 0 ? 1 : -1;
    return state > 0 ? p : NULL;
}

TEST(samcon_kill9_then_resume_is_identical)
{
    const char *b = long_baseline();
    ENSURE_MSG(b, "sample-openloop failed: %s", out);
    const char *p = sc_fixture_keep(sc_test_tmp("samcon_killed.h5")), *log = sc_fixture_keep(sc_test_tmp("samcon_killed.log"));
    /* twice: once early, once later, each time mid-segment */
    int kills = 0;
    for (int round = 0; round < 2; round++) {
        if (round == 0) ENSURE_MSG(start_and_wait(p, log, 2, 2), "no checkpoint appeared");
        else {
            sc_test_sh(NULL, 0, "(mpiexec.mpich -n 2 %s -q -c %s -o %s --resume %s %s > %s 2>&1; echo $? > %s.rc) > /dev/null 2>&1 &",
                       sc_test_tool("sample-openloop"), long_preset(), p, sc_fixture_michelin(), sc_fixture_march_reference(), log, log);
            char ck[1100];
            snprintf(ck, sizeof ck, "%s.ckpt", p);
            for (int i = 0; i < 1200 && checkpoint_segment(ck) < 6; i++) usleep(50000);
        }
        ENSURE_MSG(!sc_test_file_exists(p), "the run finished before it could be killed");
        sc_test_sh(NULL, 0, "pkill -KILL -f '^%s -q -c %s -o %s'", sc_test_tool("sample-openloop"), long_preset(), p);
        wait_rc(log);
        kills++;
        ENSURE(!sc_test_file_exists(p));
    }
    int rc = run_sampler(2, long_preset(), p, "--resume");
    ENSURE_MSG(rc == 0, "resume: exit %d: %s", rc, out);
    ENSURE(same_controller(b, p));
    char ck[1100];
    snprintf(ck, sizeof ck, "%s.ckpt", p);
    ENSURE_MSG(!sc_test_file_exists(ck), "the checkpoint of a completed search is removed");
    sc_test_report("killed with SIGKILL %d times (2 ranks, after segments 2 and 6), resumed: openloop.h5 identical to the uninterrupted run", kills);
}

TEST(samcon_sigterm_writes_a_checkpoint_and_exits_6)
{
    const char *b = long_baseline();
    ENSURE_MSG(b, "sample-openloop failed: %s", out);
    const char *p = sc_fixture_keep(sc_test_tmp("samcon_term.h5")), *log = sc_fixture_keep(sc_test_tmp("samcon_term.log"));
    ENSURE_MSG(start_and_wait(p, log, 0, 1), "no checkpoint appeared");
    sc_test_sh(NULL, 0, "pkill -TERM -f '^%s -q -c %s -o %s'", sc_test_tool("sample-openloop"), long_preset(), p);
    int rc = wait_rc(log);
    char ck[1100];
    snprintf(ck, sizeof ck, "%s.ckpt", p);
    ENSURE_MSG(rc == 6, "exit %d after SIGTERM", rc);
    ENSURE(sc_test_file_exists(ck) && sc_test_file_exists(p)); /* the path so far: samcon_sigterm_leaves_the_path_so_far */
    long long k = checkpoint_segment(ck);
    /* the ranks, signalled as Slurm signals a job, under MPI */
    rc = run_sampler(0, long_preset(), p, NULL);
    ENSURE_MSG(rc == 1 && strstr(out, "--resume"), "a run that would overwrite a checkpoint is refused: exit %d: %s", rc, out);
    ENSURE_MSG(start_and_wait(p, log, 2, 2), "no checkpoint appeared under MPI");
    sc_test_sh(NULL, 0, "pkill -USR1 -f '^%s -q -c %s -o %s'", sc_test_tool("sample-openloop"), long_preset(), p);
    rc = wait_rc(log);
    ENSURE_MSG(rc == 6, "exit %d after SIGUSR1 to the ranks", rc);
    rc = run_sampler(0, long_preset(), p, "--resume");
    ENSURE_MSG(rc == 0, "resume: exit %d: %s", rc, out);
    ENSURE(same_controller(b, p));
    sc_test_report("SIGTERM after segment %lld: exit 6 with a checkpoint; SIGUSR1 to 2 MPI ranks likewise; --resume "
                   "completes to the uninterrupted result",
                   k);
}

/* Starts `LAUNCHER sample-openloop` on the small preset in the background (its exit status to
   LOG.rc) and waits for the checkpoint of segment 1: the run has 5 segments to go. */
static int start_small(const char *launcher, const char *outp, const char *log)
{
    char ck[1100], command[4400];
    snprintf(ck, sizeof ck, "%s.ckpt", outp);
    unlink(ck);
    unlink(outp);
    sc_test_sh(NULL, 0, "(%s%s -q -c %s -o %s %s %s > %s 2>&1; echo $? > %s.rc) > /dev/null 2>&1 &", launcher, sc_test_tool("sample-openloop"),
               preset(), outp, sc_fixture_michelin(), sc_fixture_march_reference(), log, log);
    snprintf(command, sizeof command, "%s -q -c %s -o %s", sc_test_tool("sample-openloop"), preset(), outp);
    struct reached r = {ck, 1};
    return sc_test_wait_while_running(checkpoint_reached, &r, command, 1800);
}

/* Issue 28 item 4: SIGTERM to mpiexec.mpich (a user's kill, Slurm, the batch scripts): Hydra
   forwards it to the ranks and then reports 0 for the rank each proxy reaps last, so the ranks'
   exit 6 was lost: in 3 of 8 tries on 2 ranks, in every try with one rank per proxy (one rank per
   node, here two proxies on this machine). The code now comes through an abort: 6 every time. */
TEST(samcon_sigterm_to_mpiexec_exits_6)
{
    ENSURE_MSG(sc_fixture_michelin() && sc_fixture_march_reference(), "fixtures: %s", sc_fixture_log());
    const char *p = sc_fixture_keep(sc_test_tmp("samcon_mpiexec.h5")), *log = sc_fixture_keep(sc_test_tmp("samcon_mpiexec.log"));
    static const char *const layouts[] = {"mpiexec.mpich -n 2 ", "mpiexec.mpich -n 2 -ppn 1 -hosts 127.0.0.1,localhost "};
    char ck[1100], lock[1100];
    snprintf(ck, sizeof ck, "%s.ckpt", p);
    snprintf(lock, sizeof lock, "%s.lock", p);
    for (int i = 0; i < 2; i++) {
        ENSURE_MSG(start_small(layouts[i], p, log), "%s: no checkpoint appeared", layouts[i]);
        /* to mpiexec alone (Hydra rewrites its -hosts list in its command line) */
        ENSURE_MSG(sc_test_sh(NULL, 0, "pkill -TERM -f '^mpiexec.mpich -n 2 .*%s -q -c %s -o %s '", sc_test_tool("sample-openloop"), preset(), p) == 0,
                   "%s: mpiexec.mpich was not running", layouts[i]);
        int rc = wait_rc(log);
        sc_test_sh(out, sizeof out, "cat %s", log);
        ENSURE_MSG(rc == 6, "%s: exit %d after SIGTERM: %s", layouts[i], rc, out);
        ENSURE_MSG(sc_test_file_exists(ck) && sc_test_file_exists(p), "%s: no checkpoint or no output", layouts[i]);
        ENSURE_MSG(strstr(out, "stopped by a signal") && strstr(out, "--resume") && !strstr(out, "Abort("), "%s: the message: %s", layouts[i], out);
        int alive = 1; /* the launcher ends the other rank after the abort */
        for (int j = 0; j < 100 && alive; j++) {
            alive = sc_test_sh(NULL, 0, "pgrep -f '^%s -q -c %s -o %s ' > /dev/null", sc_test_tool("sample-openloop"), preset(), p) == 0;
            if (alive) usleep(50000);
        }
        ENSURE_MSG(!alive, "%s: a rank is still running 5 s after mpiexec ended", layouts[i]);
        ENSURE_MSG(!sc_test_file_exists(lock), "%s: the output's lock file is left", layouts[i]);
    }
    sc_test_report("SIGTERM to mpiexec.mpich -n 2 (one proxy; one rank per proxy) after segment 1: the shell saw exit 6 both times");
}

static char *root_status(const char *path)
{
    sc_h5 *f;
    sc_err err;
    char *status = NULL;
    if (sc_h5_open(path, &f, &err)) return NULL;
    if (sc_h5_read_attr_str(f, "/", "status", &status, &err)) status = NULL;
    sc_h5_close(f);
    return status;
}

/* Issue 28 item 5: an interrupted run leaves, besides its checkpoint, the path it held as
   openloop.h5 (status "interrupted: ..."), which simulate replays as it replays an exit-7 partial
   output; --resume then completes to the uninterrupted result. */
TEST(samcon_sigterm_leaves_the_path_so_far)
{
    const char *b = baseline(), *ch = sc_fixture_michelin();
    ENSURE_MSG(b, "sample-openloop failed: %s", out);
    const char *p = sc_fixture_keep(sc_test_tmp("samcon_partial.h5")), *log = sc_fixture_keep(sc_test_tmp("samcon_partial.log"));
    ENSURE_MSG(start_small("", p, log), "no checkpoint appeared");
    sc_test_sh(NULL, 0, "pkill -TERM -f '^%s -q -c %s -o %s '", sc_test_tool("sample-openloop"), preset(), p);
    int rc = wait_rc(log);
    sc_test_sh(out, sizeof out, "cat %s", log);
    ENSURE_MSG(rc == 6, "exit %d after SIGTERM: %s", rc, out);
    char ck[1100];
    snprintf(ck, sizeof ck, "%s.ckpt", p);
    long long k = checkpoint_segment(ck);
    ENSURE_MSG(k >= 1 && k < 6, "the checkpoint's next segment: %lld", k);
    ENSURE_MSG(strstr(out, "holds the path so far"), "the message: %s", out);
    char *status = root_status(p);
    ENSURE_MSG(status && !strncmp(status, "interrupted: ", 13), "status %s", status ? status : "(none)");
    char want[64];
    snprintf(want, sizeof want, "(%lld of 6 segments)", k);
    int says = strstr(status, want) != NULL;
    free(status);
    ENSURE_MSG(says, "the status does not say %s", want);
    /* the path so far: the checkpoint's segments, replayed by simulate bit for bit */
    sc_h5 *f;
    sc_err err;
    size_t dims[1] = {0};
    double *cost;
    ENSURE_OK(sc_h5_open(p, &f, &err), &err);
    ENSURE_OK(sc_h5_read_f64(f, "/segments/cost", 1, dims, &cost, &err), &err);
    sc_h5_close(f);
    free(cost);
    ENSURE_MSG((long long)dims[0] == k, "%zu segments in the output, the checkpoint is at %lld", dims[0], k);
    const char *sim = sc_fixture_keep(sc_test_tmp("samcon_partial_sim.h5"));
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --trajectory %s %s", sc_test_tool("simulate"), preset(), sim, p, ch);
    ENSURE_MSG(rc == 0, "simulate --trajectory of the interrupted output: exit %d: %s", rc, out);
    size_t da[3] = {0, 0, 3}, db[3] = {0, 0, 3};
    double *pa, *pb;
    sc_h5 *fa, *fb;
    ENSURE_OK(sc_h5_open(p, &fa, &err), &err);
    ENSURE_OK(sc_h5_open(sim, &fb, &err), &err);
    ENSURE_OK(sc_h5_read_f64(fa, "/achieved/bone_position", 3, da, &pa, &err), &err);
    ENSURE_OK(sc_h5_read_f64(fb, "/bones/position", 3, db, &pb, &err), &err);
    sc_h5_close(fa);
    sc_h5_close(fb);
    int same = da[0] == db[0] && da[0] > 1 && !memcmp(pa, pb, da[0] * da[1] * 3 * sizeof(double));
    free(pa);
    free(pb);
    ENSURE_MSG(same, "simulate's replay differs from the interrupted output's achieved motion (%zu and %zu frames)", da[0], db[0]);
    /* --resume (2 ranks) replaces it with the uninterrupted result */
    rc = run_sampler(2, preset(), p, "--resume");
    ENSURE_MSG(rc == 0, "resume: exit %d: %s", rc, out);
    ENSURE(same_controller(b, p));
    status = root_status(p);
    says = status && !strcmp(status, "completed");
    free(status);
    ENSURE_MSG(says, "the resumed output is not completed");
    ENSURE_MSG(!sc_test_file_exists(ck), "the checkpoint of a completed search is removed");
    sc_test_report("SIGTERM after segment %lld of 6: exit 6, openloop.h5 'interrupted' with %lld segments, replayed by simulate bit for bit "
                   "(%zu frames); --resume on 2 ranks: identical to the uninterrupted run",
                   k, k, db[0]);
}

static int expect(const char *name, const char *cfg_text, const char *ch, const char *ref, int code, const char *msg)
{
    const char *cfg = sc_fixture_keep(sc_test_write(name, cfg_text));
    const char *o = sc_fixture_keep(sc_test_tmp("samcon_bad.h5"));
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("sample-openloop"), cfg, o, ch, ref);
    sc_test_report("%s: exit %d: %s", name, rc, out);
    CHECK(rc == code, "%s: exit %d, expected %d: %s", name, rc, code, out);
    CHECK(strstr(out, msg), "%s: '%s' not in: %s", name, msg, out);
    CHECK(!sc_test_file_exists(o), "%s left an output", name);
    return 1;
}

TEST(samcon_bad_input)
{
    const char *ch = sc_fixture_michelin(), *ref = sc_fixture_march_reference(), *cmu = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch && ref && cmu, "fixtures: %s", sc_fixture_log());
    const char *ok = "sampling: {samples: 4, elites: 2, end: 0.05}\n";
    ENSURE(expect("samcon_other_character.yaml", ok, cmu, ref, 2, "made for another character"));
    ENSURE(expect("samcon_elites.yaml", "sampling: {samples: 10, elites: 20}\n", ch, ref, 2, "elites = 20 is more than sampling.samples = 10"));
    ENSURE(expect("samcon_joint.yaml", "sampling:\n  joints: {tail: 0.1}\n", ch, ref, 2, "samcon_joint.yaml:2:18: sampling.joints names 'tail'"));
    ENSURE(expect("samcon_class.yaml", "sampling:\n  boxes: {hip: 0.1}\n", ch, ref, 2, "no joint class 'hip'"));
    ENSURE(expect("samcon_hinge.yaml", "sampling:\n  joints: {l_shin: [0.1, 0.2, 0.3]}\n", ch, ref, 2, "a hinge"));
    ENSURE(expect("samcon_scale.yaml", "sampling: {time_scale_min: 1.3, time_scale_max: 1.1}\n", ch, ref, 2, "is above time_scale_max"));
    ENSURE(expect("samcon_key.yaml", "sampling: {sample: 10}\n", ch, ref, 2, "did you mean 'samples'"));
    ENSURE(expect("samcon_missing.yaml", ok, ch, sc_test_tmp("no_such_reference.h5"), 3, "no_such_reference.h5"));
    ENSURE(expect("samcon_not_h5.yaml", ok, ch, sc_test_repo("configs/march.yaml"), 2, "not an HDF5 file"));
    ENSURE(expect("samcon_ref_as_character.yaml", ok, ref, ref, 2, "fixture_march_ref.h5"));
    /* one process started where Slurm expects several */
    int rc = sc_test_sh(out, sizeof out, "SLURM_NTASKS=4 %s -q -c %s -o %s %s %s", sc_test_tool("sample-openloop"),
                        sc_test_write("samcon_ok.yaml", ok), sc_test_tmp("samcon_bad.h5"), ch, ref);
    ENSURE_MSG(rc == 1 && strstr(out, "mpiexec.mpich -n 4"), "exit %d: %s", rc, out);
}

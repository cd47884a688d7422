/* Gait cycles and learn-feedback: cycle detection on a motion of known period, repetition,
 * policy.h5 identical whatever the number of ranks and across kill -9 and --resume, the closed
 * loop with zero gains equal to the open loop bit for bit, and bad input. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "motion/cycle.h"
#include "store/policy.h"
#include "learn/policy.h"
#include "sim/sim.h"
#include "fixtures.h"
#include "store/character.h"
#include "io/h5.h"
#include "test.h"

static char out[16384];

/* A walk-like motion of period T: joints swing sinusoidally, the root bobs at twice the rate,
   moves forward at a constant speed and turns at a constant rate (so the cycle's ends differ by
   a planar motion). */
static int synthetic(sc_reference *r, double T, double seconds, sc_err *err)
{
    int nb = 6, n = (int)lround(seconds / 0.0005) + 1;
    int rc = sc_reference_alloc(r, n, nb, err);
    if (rc) return rc;
    r->dt = 0.0005;
    for (int j = 0; j < nb; j++) snprintf(r->names[j], SC_NAME_LEN, "b%d", j);
    double w = 2 * SC_PI / T, turn = 0.2; /* rad/s */
    for (int k = 0; k < n; k++) {
        double t = k * r->dt, yaw = turn * t;
        r->time[k] = t;
        sc_vec3 fwd = sc_v3(sin(yaw), 0, cos(yaw));
        /* position: integral of 1.2 m/s along the turning heading */
        double x = 1.2 / turn * (1 - cos(yaw)), z = 1.2 / turn * sin(yaw);
        r->root_pos[3 * k] = x;
        r->root_pos[3 * k + 1] = 0.95 + 0.02 * sin(2 * w * t);
        r->root_pos[3 * k + 2] = z;
        sc_v3_store(r->root_vel + 3 * k, sc_v3_add(sc_v3_scale(fwd, 1.2), sc_v3(0, 0.04 * w * cos(2 * w * t), 0)));
        sc_quat root = sc_q_mul(sc_q_axis_angle(sc_v3(0, 1, 0), yaw), sc_q_axis_angle(sc_v3(1, 0, 0), 0.05 * sin(w * t)));
        double *q = r->local_quat + 4 * ((size_t)k * nb);
        q[0] = root.w;
        q[1] = root.x;
        q[2] = root.y;
        q[3] = root.z;
        for (int j = 1; j < nb; j++) {
            double amp = 0.3 + 0.1 * j, ph = 0.7 * j;
            sc_quat lq = sc_q_axis_angle(sc_v3(1, 0, 0), amp * sin(w * t + ph));
            double *p = r->local_quat + 4 * ((size_t)k * nb + j);
            p[0] = lq.w;
            p[1] = lq.x;
            p[2] = lq.y;
            p[3] = lq.z;
            r->local_ang_vel[3 * ((size_t)k * nb + j)] = amp * w * cos(w * t + ph);
        }
        sc_v3_store(r->local_ang_vel + 3 * ((size_t)k * nb), sc_v3(0.05 * w * cos(w * t), turn, 0));
        memcpy(r->target_quat + 4 * ((size_t)k * nb), q, 4 * sizeof(double) * (size_t)nb);
        for (int j = 0; j < nb; j++) {
            sc_v3_store(r->bone_pos + 3 * ((size_t)k * nb + j), sc_v3(x, 0.95 - 0.1 * j, z));
            double *bq = r->bone_quat + 4 * ((size_t)k * nb + j);
            bq[0] = root.w;
            bq[1] = root.x;
            bq[2] = root.y;
            bq[3] = root.z;
        }
        sc_v3_store(r->com + 3 * k, sc_v3(x, 0.9, z));
        sc_v3_store(r->com_vel + 3 * k, sc_v3_scale(fwd, 1.2));
    }
    return SC_OK;
}

/* every path of a 2-element list (the second may be NULL) exists */
static int all_exist(const void *arg)
{
    const char *const *paths = arg;
    return sc_test_file_exists(paths[0]) && (!paths[1] || sc_test_file_exists(paths[1]));
}

TEST(cycle_found_on_a_motion_of_known_period)
{
    sc_err err;
    for (int trial = 0; trial < 2; trial++) {
        double T = trial ? 1.1 : 0.8;
        sc_reference r;
        ENSURE_OK(synthetic(&r, T, 3.2, &err), &err);
        sc_cycle c;
        ENSURE_OK(sc_cycle_find(&r, 0.4, 2.0, &c, &err), &err);
        double period = c.t1 - c.t0;
        sc_test_report("period %.4f s found for a motion of period %.4f s (a double period also repeats it); pose mismatch %.2e rad, "
                       "velocity %.2e rad/s",
                       period, T, c.pose_error, c.velocity_error);
        ENSURE_NEAR(period, T, 0.0005 + 1e-12);
        ENSURE(c.pose_error < 1e-3);
        /* repeated, the cycle continues the motion: the repetition's first sample is the clip's
           sample one period later (to the turn and advance the clip itself makes) */
        sc_reference rep;
        ENSURE_OK(sc_cycle_repeat(&r, &c, 3, &rep, &err), &err);
        ENSURE(rep.n == 3 * (c.i1 - c.i0) + 1);
        int P = c.i1 - c.i0;
        double worst = 0;
        for (int k = 0; k <= 2 * P && c.i0 + k < r.n; k += 7) {
            worst = fmax(worst, sc_v3_dist(sc_v3_load(rep.root_pos + 3 * k), sc_v3_load(r.root_pos + 3 * (c.i0 + k))));
            sc_quat a = {rep.local_quat[4 * (size_t)k * 6], rep.local_quat[4 * (size_t)k * 6 + 1], rep.local_quat[4 * (size_t)k * 6 + 2],
                         rep.local_quat[4 * (size_t)k * 6 + 3]};
            const double *b = r.local_quat + 4 * (size_t)(c.i0 + k) * 6;
            worst = fmax(worst, sc_q_angle_between(a, (sc_quat){b[0], b[1], b[2], b[3]}));
        }
        sc_test_report("the cycle repeated 3 times follows the clip itself within %.2e (m, rad) over two periods", worst);
        ENSURE(worst < 5e-3);
        sc_reference_free(&rep);
        sc_reference_free(&r);
    }
}

/* a tiny learning config: seconds, not minutes */
static const char *learning_config(const char *name, int iterations, const char *pairs, const char *extra)
{
    char text[1536];
    snprintf(text, sizeof text,
             "simulation: {solver: exact}\n"
             "sampling: {samples: 8, elites: 3, cycle: auto, cycles: 1, max_retries: 1}\n"
             "feedback:\n  iterations: %d\n  cycles: 1\n  samples: 8\n  elites: 3\n  pairs: %s\n"
             "  evaluate: {seconds: 1.5, pushes: [150], directions: 1, phases: 1, after: 1, stiffness: [2]}\n%s",
             iterations, pairs, extra ? extra : "");
    return sc_test_write(name, text);
}

/* the learning preset (2 iterations) with more keys in `feedback.model` and `feedback`: fit: model
   (the default) on few actions and features, so the second iteration's 16 transitions per
   fragment are enough rows (2 x (3 + 3)) to fit each fragment's map */
static const char *preset_with(const char *name, const char *model_extra, const char *extra)
{
    char text[512];
    snprintf(text, sizeof text, "  actions: [l_thigh]\n  model: {features: [root_pitch, root_roll, com_vel_x]%s}\n%s", model_extra, extra);
    return sc_fixture_keep(learning_config(name, 2, "elites", text));
}

/* a cyclic open-loop controller of the march and the learning preset */
static const char *preset(void)
{
    static const char *p;
    if (!p) p = preset_with("feedback_preset.yaml", "", "");
    return p;
}

static const char *cyclic_openloop(void)
{
    static int state;
    static const char *p;
    if (!p) p = sc_fixture_keep(sc_test_tmp("feedback_openloop.h5"));
    const char *ch = sc_fixture_michelin(), *ref = sc_fixture_march_reference();
    if (!state)
        state = ch && ref && !sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("sample-openloop"), preset(), p, ch, ref) ? 1 : -1;
    return state > 0 ? p : NULL;
}

static int learn_with(const char *cfg, int ranks, const char *outp, const char *extra)
{
    const char *ol = cyclic_openloop(), *ch = sc_fixture_michelin();
    if (!ol) return -1;
    char launcher[64] = "";
    if (ranks) snprintf(launcher, sizeof launcher, "mpiexec.mpich -n %d ", ranks);
    return sc_test_sh(out, sizeof out, "%s%s -q -c %s -o %s %s %s %s", launcher, sc_test_tool("learn-feedback"), cfg, outp, extra ? extra : "", ch,
                      ol);
}
static int learn(int ranks, const char *outp, const char *extra) { return learn_with(preset(), ranks, outp, extra); }

static int same_groups(const char *a, const char *b, const char *const *groups, size_t n)
{
    char only[1024] = "";
    for (size_t i = 0; i < n; i++) snprintf(only + strlen(only), sizeof only - strlen(only), "%s%s", i ? "," : "", groups[i]);
    CHECK(sc_test_h5_same(out, sizeof out, a, b, only), "%s", out);
    return 1;
}
static int same_policy(const char *a, const char *b)
{
    CHECK(sc_test_h5_same(out, sizeof out, a, b,
                          "/policy,/cycle,/start,/learning/survived,/learning/joint_error,/learning/pairs,/learning/residual,"
                          "/learning/model_error,/evaluation,/bones"),
          "%s", out);
    return 1;
}

static const char *baseline(void)
{
    static int state;
    static const char *p;
    if (!p) p = sc_fixture_keep(sc_test_tmp("feedback_n1.h5"));
    if (!state) state = learn(0, p, NULL) == 0 ? 1 : -1;
    return state > 0 ? p : NULL;
}

TEST(feedback_policy_identical_for_1_2_3_ranks)
{
    const char *b = baseline();
    ENSURE_MSG(b, "learn-feedback failed: %s", out);
    for (int n = 1; n <= 3; n++) {
        char name[64];
        snprintf(name, sizeof name, "feedback_mpi%d.h5", n);
        const char *p = sc_fixture_keep(sc_test_tmp(name));
        int rc = learn(n, p, NULL);
        ENSURE_MSG(rc == 0, "mpiexec -n %d: exit %d: %s", n, rc, out);
        ENSURE(same_policy(b, p));
    }
    sc_h5 *f;
    sc_err err;
    char *kernel = NULL;
    ENSURE_OK(sc_h5_open(b, &f, &err), &err);
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "fem_kernel", &kernel, &err), &err);
    sc_h5_close(f);
    sc_sim_opts so;
    sc_sim_default_opts(&so); /* the preset learns in double precision */
    ENSURE_MSG(!strcmp(kernel, sc_fem_kernel_name(sc_sim_fem_kernel(&so))), "fem_kernel %s", kernel);
    free(kernel);
    sc_test_report("policy.h5 (policy, learning history, evaluation) identical without MPI and under mpiexec.mpich -n 1, 2, 3");
}

TEST(feedback_kill9_then_resume_is_identical)
{
    const char *b = baseline();
    ENSURE_MSG(b, "learn-feedback failed: %s", out);
    const char *p = sc_fixture_keep(sc_test_tmp("feedback_killed.h5")), *log = sc_fixture_keep(sc_test_tmp("feedback_killed.log"));
    char ck[1100], inner[1200];
    snprintf(ck, sizeof ck, "%s.ckpt", p);
    snprintf(inner, sizeof inner, "%s.samcon", ck);
    unlink(ck);
    unlink(inner);
    sc_test_sh(NULL, 0, "(mpiexec.mpich -n 2 %s -q -c %s -o %s %s %s > %s 2>&1) > /dev/null 2>&1 &", sc_test_tool("learn-feedback"), preset(), p,
               sc_fixture_michelin(), cyclic_openloop(), log);
    /* kill it while it samples the second iteration: after the first iteration's checkpoint */
    char command[4400];
    snprintf(command, sizeof command, "%s -q -c %s -o %s", sc_test_tool("learn-feedback"), preset(), p);
    const char *both[] = {ck, inner};
    int seen = sc_test_wait_while_running(all_exist, both, command, 1800);
    ENSURE_MSG(seen, "no checkpoint of the first iteration appeared");
    ENSURE(!sc_test_file_exists(p));
    sc_test_sh(NULL, 0, "pkill -KILL -f '^%s -q -c %s -o %s'", sc_test_tool("learn-feedback"), preset(), p);
    for (int i = 0; i < 200 && !sc_test_sh(NULL, 0, "pgrep -f '^%s -q -c %s -o %s' > /dev/null", sc_test_tool("learn-feedback"), preset(), p); i++)
        usleep(50000);
    /* a copy of the checkpoint with one byte of /learner flipped: exit 2 naming it, no output */
    const char *bad = sc_fixture_keep(sc_test_tmp("feedback_damaged.ckpt")), *bad_out = sc_fixture_keep(sc_test_tmp("feedback_damaged.h5"));
    int rc = sc_test_sh(out, sizeof out,
                        "cp %s %s && cp %s %s.samcon && /usr/bin/python3 -c \"import h5py; f = h5py.File('%s', 'r+'); d = f['/learner']; "
                        "x = d[()]; x[len(x) // 2] ^= 1; d[...] = x\"",
                        ck, bad, inner, bad, bad);
    ENSURE_MSG(rc == 0, "damaging a copy of the checkpoint: %s", out);
    char opts[1200];
    snprintf(opts, sizeof opts, "--resume --checkpoint %s", bad);
    rc = learn(2, bad_out, opts);
    sc_test_report("a learn-feedback checkpoint with one byte flipped: exit %d: %s", rc, out);
    ENSURE_MSG(rc == 2 && strstr(out, bad) && !sc_test_file_exists(bad_out), "a damaged checkpoint: exit %d: %s", rc, out);
    rc = learn(2, p, "--resume");
    ENSURE_MSG(rc == 0, "resume: exit %d: %s", rc, out);
    ENSURE(same_policy(b, p));
    ENSURE(!sc_test_file_exists(ck) && !sc_test_file_exists(inner));
    sc_test_report("killed with SIGKILL during the second iteration (2 ranks), resumed: policy.h5 identical to the uninterrupted run");
}

/* Issue 28 item 4, for learn-feedback (it ends through the same code as sample-openloop):
   SIGTERM to mpiexec.mpich with one rank per proxy, where Hydra reported 0 every time. */
TEST(feedback_sigterm_to_mpiexec_exits_6)
{
    ENSURE_MSG(cyclic_openloop(), "fixtures: %s %s", out, sc_fixture_log());
    const char *p = sc_fixture_keep(sc_test_tmp("feedback_term.h5")), *log = sc_fixture_keep(sc_test_tmp("feedback_term.log"));
    char ck[1100], inner[1200], rcfile[1100];
    snprintf(ck, sizeof ck, "%s.ckpt", p);
    snprintf(inner, sizeof inner, "%s.samcon", ck);
    snprintf(rcfile, sizeof rcfile, "%s.rc", log);
    unlink(ck);
    unlink(inner);
    unlink(rcfile);
    sc_test_sh(NULL, 0, "(mpiexec.mpich -n 2 -ppn 1 -hosts 127.0.0.1,localhost %s -q -c %s -o %s %s %s > %s 2>&1; echo $? > %s) > /dev/null 2>&1 &",
               sc_test_tool("learn-feedback"), preset(), p, sc_fixture_michelin(), cyclic_openloop(), log, rcfile);
    char command[4400];
    snprintf(command, sizeof command, "%s -q -c %s -o %s", sc_test_tool("learn-feedback"), preset(), p);
    const char *first[] = {inner, NULL}; /* the first search's checkpoint: the run is under way */
    ENSURE_MSG(sc_test_wait_while_running(all_exist, first, command, 1800), "no checkpoint appeared");
    ENSURE_MSG(sc_test_sh(NULL, 0, "pkill -TERM -f '^mpiexec.mpich -n 2 .*%s'", command) == 0, "mpiexec.mpich was not running");
    int rc = -1;
    for (int i = 0; i < 12000 && rc < 0; i++) { /* up to 10 min on a busy machine */
        FILE *f = fopen(rcfile, "r");
        if (!f || fscanf(f, "%d", &rc) != 1) rc = -1;
        if (f) fclose(f);
        if (rc < 0) usleep(50000);
    }
    sc_test_sh(out, sizeof out, "cat %s", log);
    ENSURE_MSG(rc == 6, "exit %d after SIGTERM to mpiexec: %s", rc, out);
    ENSURE_MSG(sc_test_file_exists(ck) || sc_test_file_exists(inner), "no checkpoint");
    ENSURE_MSG(!strstr(out, "Abort("), "MPICH's abort line reached the user: %s", out);
    sc_test_report("SIGTERM to mpiexec.mpich -n 2 (one rank per proxy) during learning: exit 6 with a checkpoint");
}

/* pairs: paths (the default) regresses on the elites whose descendants reached the last segment:
   all of the last segment's, never a level's dead ends; pairs: elites (the preset) on every
   elite, 3 per segment (a fragment with fewer than 2 pairs is not refit and not counted) */
TEST(feedback_regresses_on_the_good_paths)
{
    const char *b = baseline(), *ol = cyclic_openloop(), *ch = sc_fixture_michelin();
    ENSURE_MSG(b && ol, "learn-feedback failed: %s", out);
    /* on fit: actions, the regression of the pairs (fit: model, the preset's, uses them for s_bar and a_bar only) */
    const char *cfg = learning_config("feedback_paths.yaml", 1, "paths", "  fit: actions\n");
    const char *p = sc_fixture_keep(sc_test_tmp("feedback_paths.h5"));
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"), cfg, p, ch, ol);
    ENSURE_MSG(rc == 0, "learn-feedback, pairs: paths: exit %d: %s", rc, out);
    int frag = 0, all = 0, paths = 0;
    rc = sc_test_sh(out, sizeof out,
                    "/usr/bin/python3 -c \"import h5py; a = h5py.File('%s', 'r'); b = h5py.File('%s', 'r'); "
                    "print(a['/policy/steps'].shape[0], int(a['/learning/pairs'][0]), int(b['/learning/pairs'][0]))\"",
                    b, p);
    ENSURE_MSG(rc == 0 && sscanf(out, "%d %d %d", &frag, &all, &paths) == 3, "reading the pairs: %s", out);
    sc_test_report("iteration 1, %d segments of 3 elites: %d regression pairs from every elite, %d from the good paths", frag, all, paths);
    ENSURE_MSG(all == 3 * frag, "pairs: elites gave %d pairs, expected %d", all, 3 * frag);
    ENSURE_MSG(paths >= 3 && paths < all, "pairs: paths gave %d pairs (every elite: %d)", paths, all);
}

/* the heading feature: the root's yaw from the policy's start heading, across the +-pi seam; its
   target the reference cycle's heading at each fragment's start */
TEST(feedback_heading_feature_and_its_target)
{
    sc_err err = {0};
    sc_model m;
    const char *ch = sc_fixture_michelin();
    ENSURE(ch);
    ENSURE_OK(sc_character_read(ch, &m, 0, &err), &err);
    sc_features f;
    sc_policy p;
    ENSURE_OK(sc_policy_alloc(&p, m.nbones, 1, 1, 2, 3, &err), &err);
    const double yaw0 = 2.5, turn[3] = {0, 0.3, 0.7}; /* the cycle's root turns across +pi */
    sc_quat *start = (sc_quat *)(void *)p.start_quat;
    for (int b = 0; b < m.nbones; b++) start[b] = sc_q_axis_angle(sc_v3(0, 1, 0), b ? 0 : yaw0);
    for (int k = 0; k < 3; k++) {
        p.base_time[k] = 0.5 * k;
        sc_quat *ref = (sc_quat *)(void *)(p.ref_quat + (size_t)k * m.nbones * 4);
        for (int b = 0; b < m.nbones; b++) ref[b] = sc_q_axis_angle(sc_v3(0, 1, 0), b ? 0 : yaw0 + turn[k]);
    }
    p.ref_t0[0] = 0, p.ref_t0[1] = 0.5;
    ENSURE(fabs(sc_policy_heading_target(&p, 0)) < 1e-12 && fabs(sc_policy_heading_target(&p, 1) - 0.3) < 1e-12);
    ENSURE_OK(sc_features_init(&f, &m, &p, &err), &err);
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    sc_sim *s;
    ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
    double x[SC_FEATURES], worst = 0, root[3] = {0, 1, 0}, zero[3] = {0, 0, 0};
    for (double turned = -3.0; turned <= 3.0; turned += 0.5) { /* yaw0 + turned reaches 5.5: past the seam */
        start[0] = sc_q_axis_angle(sc_v3(0, 1, 0), yaw0 + turned);
        sc_sim_set_pose(s, root, start, zero, NULL);
        sc_features_eval(&f, s, x);
        worst = fmax(worst, fabs(x[SC_FEATURE_HEADING] - turned));
    }
    ENSURE_MSG(worst < 1e-9, "heading feature off by %g rad", worst);
    /* the law acts on the heading's deviation the short way round: 3.0 rad against a target of -3.0 is -0.28 */
    p.s_bar[SC_FEATURES + SC_FEATURE_HEADING] = -3.0;
    p.M[SC_FEATURES + SC_FEATURE_HEADING] = 1;
    p.max_action = 10;
    double s_now[SC_FEATURES] = {0}, a;
    s_now[SC_FEATURE_HEADING] = 3.0;
    sc_policy_actions(&p, 1, s_now, 1, &a);
    ENSURE_MSG(fabs(a - (6.0 - 2 * SC_PI)) < 1e-12, "action %g", a);
    sc_sim_free(s);
    sc_policy_free(&p);
    sc_features_free(&f);
    sc_model_free(&m);
    sc_test_report("the heading feature equals the root's turn from the policy's start within %.1e rad for turns of -3 to 3 rad across "
                   "the +-pi seam; its target is the cycle's own turn (0, 0.3 rad); the law takes the short way round",
                   worst);
}

/* model.heading: true adds the heading to the regulated features (/learning/regulated_features),
   whose target is the cycle's own heading (0 at the first fragment); the evaluation records the
   closed loop's turn */
TEST(feedback_model_heading_regulates_the_heading)
{
    const char *b = baseline(), *ol = cyclic_openloop();
    ENSURE_MSG(b && ol, "learn-feedback failed: %s", out);
    const char *cfg = preset_with("feedback_heading.yaml", ", heading: true", "");
    const char *p = sc_fixture_keep(sc_test_tmp("feedback_heading.h5"));
    int rc = learn_with(cfg, 0, p, NULL);
    ENSURE_MSG(rc == 0, "learn-feedback, model.heading: true: exit %d: %s", rc, out);
    rc = sc_test_sh(out, sizeof out,
                    "/usr/bin/python3 -c \"import h5py, numpy as np\n"
                    "def get(path):\n    f = h5py.File(path, 'r'); n = [x.decode() for x in f['/learning/regulated_features'][...]]\n"
                    "    k = [x.decode() for x in f['/policy/features'][...]].index('heading')\n"
                    "    return 'heading' in n, f['/policy/s_bar'][0, k], f['/evaluation'].attrs['closedloop_turned_rad']\n"
                    "w, s0, t = get('%s'); wo, _, _ = get('%s')\n"
                    "print(w, wo, s0, t)\"",
                    p, b);
    char w[8], wo[8];
    double s0 = 1, turned = NAN;
    ENSURE_MSG(rc == 0 && sscanf(out, "%7s %7s %lf %lf", w, wo, &s0, &turned) == 4, "reading the policies: %s", out);
    sc_test_report("heading regulated with the key: %s, without: %s; its target at the first fragment %g rad; the closed loop turned %.4f rad", w, wo,
                   s0, turned);
    ENSURE(!strcmp(w, "True") && !strcmp(wo, "False") && s0 == 0 && isfinite(turned));
}

TEST(feedback_zero_gains_reproduce_the_open_loop)
{
    const char *b = baseline(), *ch = sc_fixture_michelin();
    ENSURE_MSG(b, "learn-feedback failed: %s", out);
    /* the learned policy with every gain zeroed, closed loop, against its open loop */
    const char *zero = sc_fixture_keep(sc_test_tmp("feedback_zero.h5"));
    int rc = sc_test_sh(out, sizeof out, "cp %s %s && /usr/bin/python3 -c \"import h5py; f = h5py.File('%s', 'r+'); f['/policy/M'][...] = 0\"", b,
                        zero, zero);
    ENSURE_MSG(rc == 0, "zeroing the gains: %s", out);
    const char *closed = sc_fixture_keep(sc_test_tmp("feedback_zero_closed.h5")), *open = sc_fixture_keep(sc_test_tmp("feedback_zero_open.h5"));
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --policy %s --cycles 2 %s && %s -q -c %s -o %s --policy %s --cycles 2 --open-loop %s",
                    sc_test_tool("simulate"), preset(), closed, zero, ch, sc_test_tool("simulate"), preset(), open, zero, ch);
    ENSURE_MSG(rc == 0, "simulate --policy: %s", out);
    ENSURE_MSG(sc_test_h5_same(out, sizeof out, closed, open, "/bones,/nodes"), "closed loop with M = 0 differs from the open loop: %s", out);
    /* and the learned gains do change the motion */
    const char *learned = sc_fixture_keep(sc_test_tmp("feedback_learned.h5"));
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --policy %s --cycles 2 %s", sc_test_tool("simulate"), preset(), learned, b, ch);
    ENSURE_MSG(rc == 0, "simulate --policy: %s", out);
    ENSURE_MSG(!sc_test_h5_same(out, sizeof out, learned, open, "/bones/position"), "the learned gains changed nothing");
    sc_test_report("simulate --policy with every gain zero equals --open-loop bit for bit (bones and nodes, 2 cycles); the learned gains "
                   "change the motion");
}

/* feedback.stiffness: the guided runs sample at each factor of Young's modulus in turn, and every
   iteration's policy is tested at all of them (its survival: the mean) */
TEST(feedback_learns_across_stiffness)
{
    const char *b = baseline(), *ol = cyclic_openloop();
    ENSURE_MSG(b && ol, "learn-feedback failed: %s", out);
    const char *cfg = preset_with("feedback_stiffness.yaml", "", "  stiffness: [1, 2]\n");
    const char *p = sc_fixture_keep(sc_test_tmp("feedback_stiffness.h5")), *p2 = sc_fixture_keep(sc_test_tmp("feedback_stiffness_mpi2.h5"));
    int rc = learn_with(cfg, 0, p, NULL);
    ENSURE_MSG(rc == 0, "learn-feedback, stiffness [1, 2]: exit %d: %s", rc, out);
    rc = learn_with(cfg, 2, p2, NULL);
    ENSURE_MSG(rc == 0, "mpiexec -n 2: exit %d: %s", rc, out);
    ENSURE(same_policy(p, p2));
    static const char *const also[] = {"/learning/stiffness", "/learning/survived_at"};
    ENSURE(same_groups(p, p2, also, 2));
    rc = sc_test_sh(out, sizeof out,
                    "/usr/bin/python3 -c \"import h5py, numpy as np; a = h5py.File('%s', 'r')['/learning']; b = h5py.File('%s', 'r')['/learning']; "
                    "at = a['survived_at'][...]; "
                    "print(*a['stiffness'][...], *at.shape, int(np.allclose(a['survived'][...], at.mean(1), rtol=0, atol=1e-9)), "
                    "repr(at[0, 0]), repr(b['survived'][0]), repr(a['model_error'][0]), repr(b['model_error'][0]), "
                    "repr(a['model_error'][1]), repr(b['model_error'][1]))\"",
                    p, b);
    double f0, f1, at00, b0, me0, bme0, me1, bme1;
    int ni, nf, mean_ok;
    ENSURE_MSG(rc == 0 &&
                   sscanf(out, "%lf %lf %d %d %d %lf %lf %lf %lf %lf %lf", &f0, &f1, &ni, &nf, &mean_ok, &at00, &b0, &me0, &bme0, &me1, &bme1) == 11,
               "reading /learning: %s", out);
    sc_test_report("factors [%g, %g], survived_at %d x %d; iteration 1 at 1 x E: survived %.3f s (the single-stiffness run: %.3f s), "
                   "model error %.4f (%.4f); iteration 2, sampled at 2 x E: model error %.4f (single stiffness: %.4f)",
                   f0, f1, ni, nf, at00, b0, me0, bme0, me1, bme1);
    ENSURE(f0 == 1 && f1 == 2 && ni == 2 && nf == 2);
    ENSURE_MSG(mean_ok, "/learning/survived is not the mean of /learning/survived_at");
    /* iteration 1 samples at the character's own modulus: the same samples, fit and test as without the key */
    ENSURE_MSG(me0 == bme0 && at00 == b0, "iteration 1 differs from the single-stiffness run's");
    /* iteration 2 samples a stiffer body: other transitions */
    ENSURE_MSG(me1 != bme1, "iteration 2's data did not change with its stiffness");
}

/* model.action_cost as a list: each iteration fits its maps once, tests the gains of every cost
   closed loop, and keeps the cost whose gains go furthest */
TEST(feedback_chooses_the_action_cost_by_the_closed_loop)
{
    const char *b = baseline(), *ol = cyclic_openloop();
    ENSURE_MSG(b && ol, "learn-feedback failed: %s", out);
    const char *cfg = preset_with("feedback_costs.yaml", ", action_cost: [0.01, 1, 100]", "");
    const char *p = sc_fixture_keep(sc_test_tmp("feedback_costs.h5"));
    int rc = learn_with(cfg, 0, p, NULL);
    ENSURE_MSG(rc == 0, "learn-feedback, action_cost [0.01, 1, 100]: exit %d: %s", rc, out);
    rc =
        sc_test_sh(out, sizeof out,
                   "/usr/bin/python3 -c \"import h5py, numpy as np; a = h5py.File('%s', 'r')['/learning']; b = h5py.File('%s', 'r')['/learning']; "
                   "cs = a['cost_survived'][...]; ce = a['cost_joint_error'][...]; c = list(a['action_costs'][...]); "
                   "k = [c.index(x) for x in a['action_cost'][...]]; "
                   "best = [min(range(len(c)), key=lambda j: (-cs[i, j], ce[i, j])) for i in range(cs.shape[0])]; "
                   "print(*cs.shape, int((a['survived'][...] == cs.max(1)).all()), int(k == best), "
                   "repr(cs[0, 1]), repr(b['survived'][0]), repr(a['model_error'][0]), repr(b['model_error'][0]), ' '.join(map(repr, cs.ravel())))\"",
                   p, b);
    int ni, nc, best, kept;
    double c1, b0, me, bme;
    ENSURE_MSG(rc == 0 && sscanf(out, "%d %d %d %d %lf %lf %lf %lf", &ni, &nc, &best, &kept, &c1, &b0, &me, &bme) == 8, "reading /learning: %s", out);
    sc_test_report("cost_survived %d x %d: %s; iteration 1 with cost 1: %.3f s (the single-cost run: %.3f s)", ni, nc, out, c1, b0);
    ENSURE(ni == 2 && nc == 3);
    ENSURE_MSG(best && kept, "an iteration did not keep the cost that went furthest (then tracked best)");
    ENSURE_MSG(c1 == b0 && me == bme, "the gains of cost 1 differ from the single-cost run's");
}

/* More candidates (the gains of bootstrap resamples of the transitions) and closed-loop rounds
   (rollouts of the policy with its actions explored, their transitions added to the maps' data, the
   gains chosen again) never leave a worse policy than the iteration chose without them (the
   baseline: the same preset and seed); the rounds add the rollouts' fragments to the data; the same
   policy on 1 and 2 ranks. */
TEST(feedback_bootstraps_and_closed_loop_rounds_never_worse_and_rank_identical)
{
    const char *b = baseline(), *ol = cyclic_openloop();
    ENSURE_MSG(b && ol, "learn-feedback failed: %s", out);
    const char *rounds = preset_with("feedback_rounds.yaml", ", bootstraps: 2, ensemble: true", "  closed_loop: {rollouts: 2, rounds: 1}\n");
    const char *p1 = sc_fixture_keep(sc_test_tmp("feedback_rounds1.h5")), *p2 = sc_fixture_keep(sc_test_tmp("feedback_rounds2.h5"));
    int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s %s 2>&1", sc_test_tool("learn-feedback"), rounds, p1, sc_fixture_michelin(), ol);
    ENSURE_MSG(rc == 0, "learn-feedback, bootstraps 2, rollouts 2: exit %d: %s", rc, out);
    int nround = 0;
    long rows_before = -1, rows = 0;
    for (const char *at = out; (at = strstr(at, "closed-loop round ")); at++) {
        const char *n = strstr(at, "rollouts, ");
        ENSURE_MSG(n && sscanf(n, "rollouts, %ld transitions", &rows) == 1, "round line: %.200s", at);
        ENSURE_MSG(rows > rows_before, "a round added no transitions: %.200s", at);
        rows_before = rows;
        nround++;
    }
    ENSURE_MSG(nround == 2, "expected a round in each of 2 iterations: %s", out);
    rc = learn_with(rounds, 2, p2, NULL);
    ENSURE_MSG(rc == 0, "mpiexec -n 2: exit %d: %s", rc, out);
    ENSURE(same_policy(p1, p2));
    rc = sc_test_sh(out, sizeof out,
                    "/usr/bin/python3 -c \"import h5py; a = h5py.File('%s', 'r')['/learning']; b = h5py.File('%s', 'r')['/learning']; "
                    "print(repr(a['survived'][0]), repr(b['survived'][0]), int(a['maps_kept'][:].max()))\"",
                    p1, b);
    double with_rounds, without;
    int maps_kept = -1;
    ENSURE_MSG(rc == 0 && sscanf(out, "%lf %lf %d", &with_rounds, &without, &maps_kept) == 3, "reading /learning: %s", out);
    sc_test_report("iteration 1: %.3f s with 2 bootstraps, their ensemble and a closed-loop round, %.3f s without; %ld transitions in the end; "
                   "identical on 1 and 2 ranks; maps kept up to %d",
                   with_rounds, without, rows, maps_kept);
    ENSURE(with_rounds >= without); /* the variants include the gains of all the data; a worse round is undone */
    ENSURE(maps_kept >= 0 && maps_kept <= 3);
    /* an ensemble needs resampled maps */
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"),
                    sc_test_write("feedback_ensemble_alone.yaml", "feedback:\n  model:\n    ensemble: true\n"),
                    sc_test_tmp("feedback_ensemble_alone.h5"), sc_fixture_michelin(), ol);
    ENSURE_MSG(rc == 2 && strstr(out, "feedback_ensemble_alone.yaml:3") && strstr(out, "bootstraps"), "exit %d: %s", rc, out);
    /* a heading weight with no heading regulated would do nothing */
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"),
                    sc_test_write("feedback_heading_scale_alone.yaml", "feedback:\n  model:\n    heading_scale: 0.1\n"),
                    sc_test_tmp("feedback_heading_scale_alone.h5"), sc_fixture_michelin(), ol);
    ENSURE_MSG(rc == 2 && strstr(out, "feedback_heading_scale_alone.yaml:3") && strstr(out, "heading: true"), "exit %d: %s", rc, out);
    /* rounds need maps: with fit: actions they would do nothing */
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"),
                    sc_test_write("feedback_rollouts_actions.yaml", "feedback:\n  fit: actions\n  closed_loop:\n    rollouts: 4\n"),
                    sc_test_tmp("feedback_rollouts_actions.h5"), sc_fixture_michelin(), ol);
    ENSURE_MSG(rc == 2 && strstr(out, "feedback_rollouts_actions.yaml:4") && strstr(out, "fit: actions has none"), "exit %d: %s", rc, out);
    ENSURE(!sc_test_file_exists(sc_test_tmp("feedback_rollouts_actions.h5")));
    /* trials without noise would repeat one run */
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"),
                    sc_test_write("feedback_trials_quiet.yaml", "feedback:\n  trials: 3\n  trial_noise: 0\n"),
                    sc_test_tmp("feedback_trials_quiet.h5"), sc_fixture_michelin(), ol);
    ENSURE_MSG(rc == 2 && strstr(out, "feedback_trials_quiet.yaml:3") && strstr(out, "every trial"), "exit %d: %s", rc, out);
}

/* One /evaluation push entry and the same push replayed by simulate --policy: its /fall. */
typedef struct push_entry {
    double survived, length; /* s: the evaluation's time before the fall, the pushed run's length */
    int success;
} push_entry;

static int replay_push(const char *pol, int open, const double force[3], double length, const char *cfg_name, double *time_s, int *fell, char *cause,
                       size_t ncause)
{
    char text[512], simout[64];
    snprintf(text, sizeof text,
             "simulation: {solver: exact, duration: %.17g}\n"
             "perturbations:\n  - {type: push, bone: spine, frame: heading, cycle: 1, phase: 0, duration: 0.1, force: [%g, %g, %g]}\n",
             length, force[0], force[1], force[2]);
    snprintf(simout, sizeof simout, "%s.h5", cfg_name);
    const char *o = sc_fixture_keep(sc_test_tmp(simout));
    int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s --policy %s %s %s 2>&1", sc_test_tool("simulate"), sc_test_write(cfg_name, text), o, pol,
                        open ? "--open-loop" : "", sc_fixture_michelin());
    CHECK(rc == 0, "simulate --policy with a heading push: exit %d: %s", rc, out);
    CHECK(strstr(out, "simulate: fell at") || strstr(out, "simulate: did not fall"), "simulate did not log the fall: %s", out);
    sc_h5 *f;
    sc_err err;
    long long fl = 0;
    char *c = NULL;
    CHECK(!sc_h5_open(o, &f, &err), "%s", err.msg);
    int ok = !sc_h5_read_attr_f64(f, "/fall", "time_s", time_s, &err) && !sc_h5_read_attr_i64(f, "/fall", "fell", &fl, &err) &&
        !sc_h5_read_attr_str(f, "/fall", "cause", &c, &err);
    sc_h5_close(f);
    CHECK(ok, "%s: /fall: %s", o, err.msg);
    *fell = (int)fl;
    snprintf(cause, ncause, "%s", c);
    free(c);
    return 1;
}

/* The evaluation's pushes are judged over the whole test (evaluate.seconds, 4 s here, past the
   push's end and `after` cycle), and simulate --policy, given the same push in the heading frame
   at the cycle's phase, reproduces an entry bit for bit and says when and how it fell. */
TEST(feedback_push_judged_over_the_test_and_replayed_by_simulate)
{
    const char *ol = cyclic_openloop();
    ENSURE_MSG(ol, "fixtures: %s", out);
    const char *cfg = sc_fixture_keep(sc_test_write("feedback_pushes.yaml",
                                                    "simulation: {solver: exact}\n"
                                                    "sampling: {samples: 8, elites: 3, cycle: auto, cycles: 1, max_retries: 1}\n"
                                                    "feedback:\n  iterations: 2\n  cycles: 1\n  samples: 8\n  elites: 3\n  pairs: elites\n"
                                                    "  evaluate: {seconds: 4, pushes: [200], phases: 1, after: 1, stiffness: [2]}\n"
                                                    "  actions: [l_thigh]\n  model: {features: [root_pitch, root_roll, com_vel_x]}\n"));
    const char *p = sc_fixture_keep(sc_test_tmp("feedback_pushes.h5"));
    int rc = learn_with(cfg, 0, p, NULL);
    ENSURE_MSG(rc == 0, "learn-feedback: exit %d: %s", rc, out);
    sc_h5 *f;
    sc_err err;
    double *surv[2] = {0}, *start = NULL, *length = NULL, dur = 0;
    int *succ[2] = {0};
    long long after = 0;
    ENSURE_OK(sc_h5_open(p, &f, &err), &err);
    size_t d3[2][3] = {{1, 4, 1}, {1, 4, 1}}, di[2][3] = {{1, 4, 1}, {1, 4, 1}}, d1 = 1, d1b = 1;
    int ok = !sc_h5_read_f64(f, "/evaluation/push_survived_openloop", 3, d3[0], &surv[0], &err) &&
        !sc_h5_read_f64(f, "/evaluation/push_survived_closedloop", 3, d3[1], &surv[1], &err) &&
        !sc_h5_read_i32(f, "/evaluation/push_success_openloop", 3, di[0], &succ[0], &err) &&
        !sc_h5_read_i32(f, "/evaluation/push_success_closedloop", 3, di[1], &succ[1], &err) &&
        !sc_h5_read_f64(f, "/evaluation/push_start", 1, &d1, &start, &err) &&
        !sc_h5_read_f64(f, "/evaluation/push_test_length", 1, &d1b, &length, &err) &&
        !sc_h5_read_attr_f64(f, "/evaluation", "push_duration_s", &dur, &err) &&
        !sc_h5_read_attr_i64(f, "/evaluation", "cycles_after_push", &after, &err);
    sc_h5_close(f);
    ENSURE_MSG(ok, "%s: %s", p, err.msg);
    /* phase 0 of the second cycle: the push starts one cycle in; the old test ended `after` cycles past its end */
    double cycle = start[0], old_end = start[0] + dur + (double)after * cycle;
    push_entry e[2][4];
    int late = 0, late_loop = -1, late_dir = -1;
    for (int loop = 0; loop < 2; loop++)
        for (int d = 0; d < 4; d++) {
            e[loop][d] = (push_entry){surv[loop][d], length[0], succ[loop][d]};
            ENSURE_MSG(e[loop][d].success == (e[loop][d].survived >= e[loop][d].length), "%s loop, direction %d: success %d, survived %.4f of %.4f s",
                       loop ? "closed" : "open", d, e[loop][d].success, e[loop][d].survived, e[loop][d].length);
            if (!e[loop][d].success && e[loop][d].survived > old_end) {
                late++;
                if (late_loop < 0) late_loop = loop, late_dir = d;
            }
        }
    sc_test_report("200 N pushes at the second cycle's start (%.3f s), 4 directions, open and closed loop: survived %.4f %.4f %.4f %.4f (open), "
                   "%.4f %.4f %.4f %.4f s (closed) of a %.3f s test; %d fell after the old test's end (%.3f s) and count as falls",
                   start[0], surv[0][0], surv[0][1], surv[0][2], surv[0][3], surv[1][0], surv[1][1], surv[1][2], surv[1][3], length[0], late,
                   old_end);
    ENSURE_MSG(length[0] == 4, "the pushed runs are not the test's 4 s: %.17g", length[0]);
    ENSURE_MSG(late > 0, "no push toppled the character after the old window: the test shows nothing");
    /* simulate: the late fall and a closed-loop entry, each the same push given in its config */
    static const double dirs[4][3] = {{0, 0, 1}, {0, 0, -1}, {1, 0, 0}, {-1, 0, 0}};
    int cases[2][2] = {{late_loop, late_dir}, {1, 0}};
    for (int k = 0; k < 2; k++) {
        int loop = cases[k][0], d = cases[k][1], fell;
        double force[3] = {200 * dirs[d][0], 200 * dirs[d][1], 200 * dirs[d][2]}, t;
        char cause[64];
        ENSURE(replay_push(p, !loop, force, e[loop][d].length, k ? "feedback_replay_closed.yaml" : "feedback_replay_late.yaml", &t, &fell, cause,
                           sizeof cause));
        sc_test_report("simulate%s, push [%g, %g, %g] N in the heading frame at cycle 1, phase 0: %s at %.17g s (/evaluation: %.17g s, %s)",
                       loop ? "" : " --open-loop", force[0], force[1], force[2], fell ? cause : "no fall", t, e[loop][d].survived,
                       e[loop][d].success ? "survived" : "fell");
        ENSURE_MSG(t == e[loop][d].survived && fell == !e[loop][d].success, "simulate: %s at %.17g s; the evaluation: %.17g s, success %d",
                   fell ? cause : "no fall", t, e[loop][d].survived, e[loop][d].success);
        ENSURE(!fell || !strcmp(cause, "tilt") || !strcmp(cause, "root_height") || !strcmp(cause, "numerical_failure"));
    }
    for (int loop = 0; loop < 2; loop++) {
        free(surv[loop]);
        free(succ[loop]);
    }
    free(start);
    free(length);
}

/* frame and phase: unknown values, a phase outside [0, 1), a phase and a time, a phase without a
   policy's cycle: exit 2 naming the line */
TEST(simulate_push_frame_and_phase_bad_values_exit_2)
{
    const char *ch = sc_fixture_michelin();
    ENSURE_MSG(ch, "fixtures: %s", sc_fixture_log());
    static const struct {
        const char *push, *msg;
    } bad[] = {
        {"{type: push, bone: spine, frame: sideways, force: [0, 0, 100]}", "frame"},
        {"{type: push, bone: spine, frame: heading, phase: 1, force: [0, 0, 100]}", "outside [0, 1)"},
        {"{type: push, bone: spine, phase: -0.1, force: [0, 0, 100]}", "phase"},
        {"{type: push, bone: spine, time: 1, phase: 0.5, force: [0, 0, 100]}", "at a time or at a phase, not both"},
        {"{type: push, bone: spine, cycle: 1, force: [0, 0, 100]}", "cycle needs a phase"},
        {"{type: push, bone: spine, phase: 0.5, force: [0, 0, 100]}", "needs a policy's cycle"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[256], name[64];
        snprintf(text, sizeof text, "simulation: {duration: 0.01}\nperturbations:\n  - %s\n", bad[i].push);
        snprintf(name, sizeof name, "push_bad_%zu.yaml", i);
        const char *cfg = sc_test_write(name, text), *o = sc_test_tmp("push_bad.h5");
        int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("simulate"), cfg, o, ch);
        char where[96];
        snprintf(where, sizeof where, "%s:3:", name);
        sc_test_report("%s: exit %d: %s", bad[i].push, rc, out);
        ENSURE_MSG(rc == 2 && strstr(out, bad[i].msg) && strstr(out, where) && !sc_test_file_exists(o), "%s: exit %d: %s", bad[i].push, rc, out);
    }
}

static int expect(const char *name, const char *pol, int code, const char *msg)
{
    const char *o = sc_fixture_keep(sc_test_tmp("feedback_bad_sim.h5"));
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --policy %s %s", sc_test_tool("simulate"), preset(), o, pol, sc_fixture_michelin());
    sc_test_report("%s: exit %d: %s", name, rc, out);
    CHECK(rc == code && strstr(out, msg), "%s: exit %d (expected %d), '%s' not in: %s", name, rc, code, msg, out);
    CHECK(!sc_test_file_exists(o), "%s left an output", name);
    return 1;
}

TEST(feedback_bad_input)
{
    const char *b = baseline(), *ch = sc_fixture_michelin(), *cmu = sc_fixture_michelin_cmu();
    ENSURE_MSG(b && cmu, "fixtures: %s %s", out, sc_fixture_log());
    /* a policy for another character */
    const char *o = sc_fixture_keep(sc_test_tmp("feedback_bad_sim.h5"));
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --policy %s %s", sc_test_tool("simulate"), preset(), o, b, cmu);
    ENSURE_MSG(rc == 2 && strstr(out, "another character"), "exit %d: %s", rc, out);
    /* a number of cycles that is not one */
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --policy %s --cycles 2x %s", sc_test_tool("simulate"), preset(), o, b, ch);
    ENSURE_MSG(rc == 1 && strstr(out, "--cycles expects a positive number of gait cycles, got '2x'") && !sc_test_file_exists(o), "exit %d: %s", rc,
               out);
    /* a feature this build does not know */
    const char *feat = sc_fixture_keep(sc_test_tmp("feedback_feature.h5"));
    sc_test_sh(out, sizeof out,
               "cp %s %s && /usr/bin/python3 -c \"import h5py; f = h5py.File('%s', 'r+'); n = [x.decode() for x in f['/policy/features'][()]]; "
               "n[3] = 'zmp_x'; del f['/policy/features']; f['/policy/features'] = n\"",
               b, feat, feat);
    ENSURE(expect("unknown feature", feat, 2, "feature 3 is 'zmp_x', unknown here"));
    /* a controller that is not a cycle, and a file that is not an openloop.h5 */
    const char *notcyc = sc_fixture_keep(sc_test_tmp("feedback_notcycle.h5"));
    rc =
        sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("sample-openloop"),
                   sc_test_write("feedback_nocycle.yaml", "sampling: {samples: 4, elites: 2, end: 0.1}\n"), notcyc, ch, sc_fixture_march_reference());
    ENSURE_MSG(rc == 0, "%s", out);
    const char *pol = sc_fixture_keep(sc_test_tmp("feedback_bad_policy.h5"));
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"), preset(), pol, ch, notcyc);
    ENSURE_MSG(rc == 2 && strstr(out, "/cycle: missing"), "exit %d: %s", rc, out);
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"), preset(), pol, ch, sc_fixture_march_reference());
    ENSURE_MSG(rc == 2 && strstr(out, "expected an openloop.h5"), "exit %d: %s", rc, out);
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"),
                    sc_test_write("feedback_actions.yaml", "feedback: {actions: [l_thigh, tail]}\n"), pol, ch, cyclic_openloop());
    ENSURE_MSG(rc == 2 && strstr(out, "feedback.actions names 'tail'"), "exit %d: %s", rc, out);
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"),
                    sc_test_write("feedback_search_feature.yaml", "feedback: {method: search, search: {features: [root_roll, zmp_x]}}\n"), pol, ch,
                    cyclic_openloop());
    ENSURE_MSG(rc == 2 && strstr(out, "feedback.search.features names 'zmp_x', not a feature"), "exit %d: %s", rc, out);
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"),
                    sc_test_write("feedback_model_feature.yaml", "feedback: {fit: model, model: {features: [root_roll, zmp_x]}}\n"), pol, ch,
                    cyclic_openloop());
    ENSURE_MSG(rc == 2 && strstr(out, "feedback.model.features: 'zmp_x' is not a feature"), "exit %d: %s", rc, out);
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"),
                    sc_test_write("feedback_model_cost.yaml", "feedback: {model: {action_cost: 0}}\n"), pol, ch, cyclic_openloop());
    ENSURE_MSG(rc == 2 && strstr(out, "action_cost"), "exit %d: %s", rc, out);
    ENSURE(!sc_test_file_exists(pol));
}

/* --threads: the samples of the guided sampling, the survival runs and the evaluation on a rank's
   threads (the guide's callbacks run on them too) */
TEST(feedback_policy_identical_for_threads_and_ranks_x_threads)
{
    const char *b = baseline();
    ENSURE_MSG(b, "learn-feedback failed: %s", out);
    const char *t2 = sc_fixture_keep(sc_test_tmp("feedback_t2.h5")), *r2t2 = sc_fixture_keep(sc_test_tmp("feedback_r2t2.h5"));
    int rc = learn(0, t2, "--threads 2");
    ENSURE_MSG(rc == 0, "--threads 2: exit %d: %s", rc, out);
    ENSURE(same_policy(b, t2));
    rc = learn(2, r2t2, "--threads 2");
    ENSURE_MSG(rc == 0, "mpiexec -n 2, --threads 2: exit %d: %s", rc, out);
    ENSURE(same_policy(b, r2t2));
    sc_h5 *f;
    sc_err err;
    long long threads = 0;
    ENSURE_OK(sc_h5_open(t2, &f, &err), &err);
    ENSURE_OK(sc_h5_read_attr_i64(f, "/learning", "threads", &threads, &err), &err);
    sc_h5_close(f);
    ENSURE(threads == 2);
    sc_test_report("policy.h5 identical on 1 rank x 1 thread, 1 x 2 and 2 ranks x 2 threads; /learning records the threads");
}

/* method: search, tiny: 3 generations of 4 candidates, each scored by an unpushed and a pushed run */
static const char *search_preset(void)
{
    static const char *p;
    if (!p)
        p = sc_fixture_keep(learning_config("feedback_search.yaml", 1, "elites",
                                            "  method: search\n"
                                            "  search: {generations: 3, population: 4, seconds: 1.5, rollouts: 2, push: 150,\n"
                                            "           features: [root_pitch, root_roll, com_vel_x, com_vel_z]}\n"));
    return p;
}

static int same_search(const char *a, const char *b)
{
    static const char *const groups[] = {"/policy",         "/learning/score",   "/learning/mean_score", "/learning/sigma", "/learning/survived",
                                         "/learning/gains", "/learning/role_of", "/evaluation"};
    return same_groups(a, b, groups, sizeof groups / sizeof *groups);
}

static const char *search_baseline(void)
{
    static int state;
    static const char *p;
    if (!p) p = sc_fixture_keep(sc_test_tmp("feedback_search_n0.h5"));
    if (!state) state = learn_with(search_preset(), 0, p, NULL) == 0 ? 1 : -1;
    return state > 0 ? p : NULL;
}

TEST(feedback_search_identical_for_threads)
{
    const char *b = search_baseline();
    ENSURE_MSG(b, "learn-feedback, method: search: %s", out);
    const char *p = sc_test_tmp("feedback_search_t3.h5");
    int rc = learn_with(search_preset(), 0, p, "--threads 3");
    ENSURE_MSG(rc == 0, "method: search, --threads 3: exit %d: %s", rc, out);
    ENSURE(same_search(b, p));
    sc_test_report("method: search: policy.h5 identical on 1 thread and 3 (each thread scores with its own candidate policy)");
}

TEST(feedback_search_identical_for_ranks_and_after_kill9)
{
    const char *b = search_baseline();
    ENSURE_MSG(b, "learn-feedback, method: search: %s", out);
    int rc;
    for (int n = 2; n <= 3; n++) {
        char name[64];
        snprintf(name, sizeof name, "feedback_search_mpi%d.h5", n);
        const char *p = sc_fixture_keep(sc_test_tmp(name));
        rc = learn_with(search_preset(), n, p, NULL);
        ENSURE_MSG(rc == 0, "mpiexec -n %d: exit %d: %s", n, rc, out);
        ENSURE(same_search(b, p));
    }
    /* killed after the first generation's checkpoint, resumed */
    const char *p = sc_fixture_keep(sc_test_tmp("feedback_search_killed.h5")), *log = sc_fixture_keep(sc_test_tmp("feedback_search_killed.log"));
    char ck[1100];
    snprintf(ck, sizeof ck, "%s.ckpt", p);
    unlink(ck);
    sc_test_sh(NULL, 0, "(mpiexec.mpich -n 2 %s -q -c %s -o %s %s %s > %s 2>&1) > /dev/null 2>&1 &", sc_test_tool("learn-feedback"), search_preset(),
               p, sc_fixture_michelin(), cyclic_openloop(), log);
    char command[4400];
    snprintf(command, sizeof command, "%s -q -c %s -o %s", sc_test_tool("learn-feedback"), search_preset(), p);
    const char *one[] = {ck, NULL};
    int seen = sc_test_wait_while_running(all_exist, one, command, 1800);
    ENSURE_MSG(seen || sc_test_file_exists(p), "no checkpoint of the first generation appeared");
    sc_test_sh(NULL, 0, "pkill -KILL -f '^%s -q -c %s -o %s'", sc_test_tool("learn-feedback"), search_preset(), p);
    for (int i = 0; i < 200 && !sc_test_sh(NULL, 0, "pgrep -f '^%s -q -c %s -o %s' > /dev/null", sc_test_tool("learn-feedback"), search_preset(), p);
         i++)
        usleep(50000);
    int finished = sc_test_file_exists(p);
    rc = learn_with(search_preset(), 2, p, "--resume");
    ENSURE_MSG(rc == 0 || finished, "resume: exit %d: %s", rc, out);
    ENSURE(same_search(b, p));
    /* the file says what it is: every fragment's gains are its roles' (M = gain / scale), every
       other entry of M zero, and a_j the open loop's offset plus the role's bias */
    rc = sc_test_sh(out, sizeof out,
                    "/usr/bin/python3 -c \"import h5py, numpy as np\n"
                    "f = h5py.File('%s', 'r'); L = f['/learning']; P = f['/policy']\n"
                    "names = [x.decode() for x in P['features'][()]]; inputs = [x.decode() for x in L['gain_inputs'][()]]\n"
                    "M = P['M'][()]; g = L['gains'][()]; ro = L['role_of'][()]; sc = L['feature_scale'][()]\n"
                    "E = np.zeros_like(M)\n"
                    "for j in range(M.shape[0]):\n"
                    "  for i in range(M.shape[1]):\n"
                    "    for q, n in enumerate(inputs[:-1]): k = names.index(n); E[j, i, k] = g[ro[j, i], q] / sc[k]\n"
                    "bias = P['a_bar'][()] - P['offsets'][()][:, P['action_dof'][()]]\n"
                    "print(np.abs(M - E).max(), len(L['roles']), M.shape[1], g.shape[1], np.abs(bias - g[ro, -1]).max(), np.abs(g[:, -1]).max(), "
                    "int((ro != ro[0]).any()), M.shape[0])\"",
                    b);
    double dm = 1, db = 1, bmax = 0;
    int roles = 0, nact = 0, width = 0, swapped = 0, frags = 0;
    ENSURE_MSG(rc == 0 && sscanf(out, "%lf %d %d %d %lf %lf %d %d", &dm, &roles, &nact, &width, &db, &bmax, &swapped, &frags) == 8, "reading %s: %s",
               b, out);
    ENSURE_MSG(dm < 1e-12, "/policy/M differs from the roles' gains by %g", dm);
    ENSURE_MSG(db < 1e-12 && bmax > 0, "a_j - the open loop's offsets differs from the roles' biases by %g (largest bias %g)", db, bmax);
    /* one role per action in each fragment; the legs change roles with the stance foot */
    ENSURE_MSG(width == 5 && roles == nact && swapped,
               "%d roles for %d actions (legs swapping roles: %d), %d gains each (4 features + a bias expected)", roles, nact, swapped, width);
    sc_test_report("method: search: policy.h5 identical without MPI and under mpiexec.mpich -n 2, 3, and after kill -9 and --resume; "
                   "%d fragments x %d actions played by %d roles (legs swap with the stance foot) x 5 gains; M = gains / scale exactly",
                   frags, nact, roles);
}

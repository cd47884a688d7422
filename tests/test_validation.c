/* Inputs validated the same way everywhere (issue 27, items 6, 7 and 9): a trajectory made for
 * another character is refused like a policy is; inverse-dynamics refuses frame ranges too short
 * for its stencils; sample-openloop refuses a segment longer than what it tracks and an end past
 * the clip; learn-feedback refuses an action named twice. Each runs the real tools and checks
 * the exit code, that the message names the file (and the key's line:col), and that no output
 * is left. */
#include <stdio.h>
#include <string.h>
#include "fixtures.h"
#include "test.h"

static char out[16384];

/* A failed run: its exit code, the message's pieces (b may be NULL) and no output left. */
static int refused(const char *what, int rc, int code, const char *o, const char *a, const char *b)
{
    sc_test_report("%s: exit %d: %s", what, rc, out);
    CHECK(rc == code, "%s: exit %d, expected %d: %s", what, rc, code, out);
    CHECK(strstr(out, a), "%s: '%s' not in: %s", what, a, out);
    CHECK(!b || strstr(out, b), "%s: '%s' not in: %s", what, b, out);
    CHECK(!o || !sc_test_file_exists(o), "%s left an output", what);
    return 1;
}

/* The Michelin fixture with twice its Young's modulus: the same bones, another character_hash. */
static const char *stiffer_michelin(void)
{
    static int state;
    static const char *p;
    const char *ch = sc_fixture_michelin();
    if (!p) p = sc_fixture_keep(sc_test_tmp("val_stiffer.h5"));
    if (!state)
        state = ch &&
                !sc_test_sh(out, sizeof out,
                            "cp %s %s && /usr/bin/python3 -c \"import h5py; f = h5py.File('%s', 'r+'); "
                            "f['/material'].attrs['youngs_modulus'] = 2 * f['/material'].attrs['youngs_modulus']\"",
                            ch, p, p)
            ? 1
            : -1;
    return state > 0 ? p : NULL;
}

/* A one-segment openloop.h5 of the march on the Michelin fixture. */
static const char *small_openloop(void)
{
    static int state;
    static const char *p;
    if (!p) p = sc_fixture_keep(sc_test_tmp("val_openloop.h5"));
    const char *ch = sc_fixture_michelin(), *ref = sc_fixture_march_reference();
    if (!state) {
        const char *cfg =
            sc_test_write("val_openloop.yaml", "simulation: {solver: quick}\nsampling: {segment: 0.05, samples: 4, elites: 2, end: 0.05}\n");
        int rc = ch && ref ? sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("sample-openloop"), cfg, p, ch, ref) : -1;
        state = (rc == 0 || rc == 7) && sc_test_file_exists(p) ? 1 : -1; /* a partial controller is still one */
    }
    return state > 0 ? p : NULL;
}

/* item 6: simulate --trajectory (and controller.file) with a reference.h5 or an openloop.h5 made
   for another character: exit 2 naming the file, as a policy.h5 for another character is. */
TEST(validation_trajectory_for_another_character_is_refused)
{
    const char *ch = sc_fixture_michelin(), *ref = sc_fixture_march_reference(), *other = stiffer_michelin(), *ol = small_openloop();
    ENSURE_MSG(ch && ref && other && ol, "fixtures: %s %s", out, sc_fixture_log());
    const char *sim = sc_test_tool("simulate"), *cfg = sc_fixture_keep(sc_test_write("val_sim.yaml", "simulation: {duration: 0.005}\n"));
    const char *o = sc_fixture_keep(sc_test_tmp("val_sim.h5"));
    /* the files are good for their own character */
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --trajectory %s %s && rm %s", sim, cfg, o, ol, ch, o);
    ENSURE_MSG(rc == 0, "the openloop on its own character: exit %d: %s", rc, out);
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --trajectory %s --raw %s", sim, cfg, o, ref, other);
    ENSURE(refused("a reference for another character", rc, 2, o, ref, "made for another character"));
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --trajectory %s %s", sim, cfg, o, ol, other);
    ENSURE(refused("an openloop for another character", rc, 2, o, ol, "made for another character"));
    char text[1300];
    snprintf(text, sizeof text, "simulation: {duration: 0.005}\ncontroller: {type: trajectory, file: %s}\n", ol);
    const char *ccfg = sc_fixture_keep(sc_test_write("val_sim_file.yaml", text));
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sim, ccfg, o, other);
    ENSURE(refused("controller.file for another character", rc, 2, o, ol, "made for another character"));
    /* learn-feedback reads an openloop.h5 through the same check */
    const char *lo = sc_fixture_keep(sc_test_tmp("val_policy.h5"));
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"), cfg, lo, other, ol);
    ENSURE(refused("learn-feedback, an openloop for another character", rc, 2, lo, ol, "made for another character"));
}

/* The march's first frames under inverse-dynamics: cfg_extra goes into the motion section. */
static int run_id(const char *name, const char *motion, const char *extra, const char *o)
{
    char text[1024];
    snprintf(text, sizeof text, "motion:\n  bvh: %s\n  %s\n  filter: none\nkinematics: {dt: 0.0005}\n%s", sc_test_repo("mocap/march_in_place.bvh"),
             motion, extra);
    const char *cfg = sc_test_write(name, text);
    return sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("inverse-dynamics"), cfg, o, sc_fixture_michelin());
}

/* item 7: 2 to 4 frames gave start velocities of 12 to 307 m/s with exit 0; the minimum follows
   from the stencils the settings use (5 with the balance fit, 3 without it). */
TEST(validation_id_refuses_too_few_frames)
{
    ENSURE_MSG(sc_fixture_michelin(), "fixtures: %s", sc_fixture_log());
    const char *o = sc_fixture_keep(sc_test_tmp("val_id.h5"));
    for (int last = 2; last <= 4; last++) {
        char motion[64], what[64];
        snprintf(motion, sizeof motion, "frames: [1, %d]", last);
        snprintf(what, sizeof what, "frames [1, %d]", last);
        int rc = run_id("val_frames.yaml", motion, "", o);
        ENSURE(refused(what, rc, 2, o, "val_frames.yaml:3:11: motion.frames", "at least 5 are needed for the balance fit"));
    }
    int rc = run_id("val_frames_nobalance.yaml", "frames: [1, 2]", "retarget: {balance: false}\n", o);
    ENSURE(refused("frames [1, 2] without the balance fit", rc, 2, o, "val_frames_nobalance.yaml:3:11", "at least 3 are needed"));
    /* the clip's end by default: the motion section is named */
    const char *bvh = sc_test_tmp("val_short.bvh");
    ENSURE(sc_test_sh(out, sizeof out,
                      "sed -n '1,/^Frame Time/p' %s | sed 's/^Frames: .*/Frames: 4/' > %s && sed -n '/^Frame Time/{n;p;n;p;n;p;n;p}' %s >> %s",
                      sc_test_repo("mocap/march_in_place.bvh"), bvh, sc_test_repo("mocap/march_in_place.bvh"), bvh) == 0);
    char text[1024];
    snprintf(text, sizeof text, "motion:\n  bvh: %s\n", bvh);
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("inverse-dynamics"), sc_test_write("val_short.yaml", text), o,
                    sc_fixture_michelin());
    ENSURE(refused("a 4-frame clip, frames by default", rc, 2, o, "val_short.yaml:2:3: motion.frames [1, -1] selects 3 frames", "at least 5"));
    /* five frames are enough; sample-openloop then refuses a segment longer than the reference */
    const char *ref = sc_fixture_keep(sc_test_tmp("val_ref5.h5"));
    rc = run_id("val_frames5.yaml", "frames: [1, 5]", "", ref);
    ENSURE_MSG(rc == 0, "frames [1, 5]: exit %d: %s", rc, out);
    const char *so = sc_fixture_keep(sc_test_tmp("val_ol5.h5"));
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("sample-openloop"),
                    sc_test_write("val_seg5.yaml", "simulation: {solver: quick}\nsampling: {segment: 0.1, samples: 4, elites: 2}\n"), so,
                    sc_fixture_michelin(), ref);
    ENSURE(refused("sample-openloop, 5 frames of reference", rc, 2, so, "val_seg5.yaml:2:21: sampling.segment 0.1 s is longer than", "val_ref5.h5"));
}

static int sample(const char *name, const char *sampling, const char *o)
{
    char text[512];
    snprintf(text, sizeof text, "simulation: {solver: quick}\nsampling: {samples: 2, elites: 1, %s}\n", sampling);
    const char *cfg = sc_test_write(name, text);
    /* the refusal is immediate: the time limit only stops a regression that would search */
    return sc_test_sh(out, sizeof out, "timeout 300 %s -q -c %s -o %s %s %s", sc_test_tool("sample-openloop"), cfg, o, sc_fixture_michelin(),
                      sc_fixture_march_reference());
}

/* item 9: sampling.segment longer than the clip or than the span tracked, and sampling.end past
   the clip (it was clamped silently), refused up front naming the key, like sampling.start. */
TEST(validation_sampling_span_refused_up_front)
{
    ENSURE_MSG(sc_fixture_michelin() && sc_fixture_march_reference(), "fixtures: %s", sc_fixture_log());
    const char *o = sc_fixture_keep(sc_test_tmp("val_span.h5"));
    int rc = sample("val_seg_clip.yaml", "segment: 8", o);
    ENSURE(refused("segment longer than the clip", rc, 2, o, "val_seg_clip.yaml:2:44: sampling.segment 8 s is longer than", NULL));
    rc = sample("val_seg_span.yaml", "segment: 0.2, end: 0.1", o);
    ENSURE(refused("segment longer than start..end", rc, 2, o, "val_seg_span.yaml:2:44: sampling.segment 0.2 s is longer than the 0.1 s", NULL));
    rc = sample("val_end.yaml", "end: 999", o);
    ENSURE(refused("end past the clip", rc, 2, o, "val_end.yaml:2:40: sampling.end 999 s is past the end of", NULL));
    rc = sample("val_start.yaml", "start: 999", o);
    ENSURE(refused("start past the clip", rc, 2, o, "val_start.yaml:2:42: sampling.start 999 s is not before the end of", NULL));
}

/* Issue 28 item 3: a config whose motion section is not the one the reference was made with
   (configs/march.yaml's: march_in_place.bvh, frames [1, -1], filter none, no edit) is refused
   naming the key and both values; the reference's own section passes and the log says what is sampled. */
TEST(validation_motion_section_must_be_the_references)
{
    ENSURE_MSG(sc_fixture_michelin() && sc_fixture_march_reference(), "fixtures: %s", sc_fixture_log());
    const char *o = sc_fixture_keep(sc_test_tmp("val_motion.h5"));
    static const struct {
        const char *name, *motion, *expect;
    } bad[] = {
        {"val_frames.yaml", "{bvh: march_in_place.bvh, frames: [1, 40], filter: none}", "val_frames.yaml:1:43: motion.frames is [1, 40], but"},
        {"val_clip.yaml", "{bvh: cmu_02_01_walk.bvh, frames: [1, -1], filter: none}", "val_clip.yaml:1:15: motion.bvh is cmu_02_01_walk.bvh"},
        {"val_mirror.yaml", "{bvh: march_in_place.bvh, mirror: true, filter: none}", "val_mirror.yaml:1:43: motion.mirror is true"},
        {"val_filter.yaml", "{bvh: march_in_place.bvh, filter: butterworth}", "val_filter.yaml:1:43: motion.filter is butterworth"},
        {"val_edit.yaml",
         "{bvh: march_in_place.bvh, filter: none, edit: {nodes: [{name: l, spline: [[0, 0], [0.5, 0.05]]}], moves: [{bone: l_foot, y: l}]}}",
         "motion.edit is an edit of 1 move, but"},
    };
    char text[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "motion: %s\nsimulation: {solver: quick}\nsampling: {samples: 2, elites: 1}\n", bad[i].motion);
        const char *cfg = sc_test_write(bad[i].name, text);
        int rc = sc_test_sh(out, sizeof out, "timeout 300 %s -q -c %s -o %s %s %s", sc_test_tool("sample-openloop"), cfg, o, sc_fixture_michelin(),
                            sc_fixture_march_reference());
        ENSURE(refused(bad[i].name, rc, 2, o, bad[i].expect, "run inverse-dynamics again"));
    }
    const char *cfg = sc_test_write("val_same.yaml", "motion: {bvh: march_in_place.bvh, frames: [1, -1], filter: none}\n"
                                                     "simulation: {solver: quick}\nsampling: {segment: 0.05, samples: 2, elites: 1, end: 0.05}\n");
    int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s %s", sc_test_tool("sample-openloop"), cfg, o, sc_fixture_michelin(),
                        sc_fixture_march_reference());
    sc_test_report("the reference's own motion section: exit %d: %.400s", rc, out);
    ENSURE_MSG(rc == 0 && strstr(out, "holds frames 1..") && strstr(out, "march_in_place.bvh; sampling its time [0.000, 0.050] s in 1 segment\n"),
               "exit %d: %s", rc, out);
}

/* item 9: feedback.actions naming a joint twice listed its DoFs twice. */
TEST(validation_duplicate_actions_refused)
{
    const char *ch = sc_fixture_michelin();
    ENSURE_MSG(ch, "fixtures: %s", sc_fixture_log());
    const char *o = sc_fixture_keep(sc_test_tmp("val_actions.h5"));
    const char *cfg = sc_test_write("val_actions.yaml", "feedback:\n  actions: [l_thigh, l_shin, l_thigh]\n");
    /* the config is read before the openloop.h5: any readable file stands for it */
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"), cfg, o, ch, ch);
    ENSURE(refused("an action twice", rc, 2, o, "val_actions.yaml:2:30: feedback.actions names 'l_thigh' twice", "val_actions.yaml:2:13)"));
}

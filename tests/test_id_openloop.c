/* [L13] 5.1's claim, measured: tracking a real clip open loop with the inverse-dynamics PD
 * targets versus the raw reference poses as targets (issue 5, test 4). */
#include <string.h>
#include "store/sim.h"
#include "core/mathx.h"
#include "test.h"

static char out[16384];

static int track(const char *clip, const char *cfg, const char *ch, double secs, sc_fall_report *raw, sc_fall_report *id)
{
    char ref[64], s_raw[64], s_id[64];
    snprintf(ref, sizeof ref, "%s_ref.h5", clip);
    snprintf(s_raw, sizeof s_raw, "%s_raw.h5", clip);
    snprintf(s_id, sizeof s_id, "%s_id.h5", clip);
    char sim_cfg[256];
    snprintf(sim_cfg, sizeof sim_cfg, "simulation: {duration: %g}\noutput: {every: 20, nodes: false}\n", secs);
    const char *scfg = sc_test_write("track.yaml", sim_cfg);
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s && %s -q -c %s -o %s --trajectory %s --raw %s && %s -q -c %s -o %s --trajectory %s %s",
                        sc_test_tool("inverse-dynamics"), sc_test_repo(cfg), sc_test_tmp(ref), ch, sc_test_tool("simulate"), scfg, sc_test_tmp(s_raw),
                        sc_test_tmp(ref), ch, sc_test_tool("simulate"), scfg, sc_test_tmp(s_id), sc_test_tmp(ref), ch);
    CHECK(rc == 0, "%s: exit %d: %s", clip, rc, out);
    sc_err err;
    CHECK(sc_sim_judge_fall(sc_test_tmp(s_raw), sc_test_tmp(ref), 60, 0, raw, &err) == 0, "%s", err.msg);
    CHECK(sc_sim_judge_fall(sc_test_tmp(s_id), sc_test_tmp(ref), 60, 0, id, &err) == 0, "%s", err.msg);
    sc_test_report("%s, open loop: raw reference targets: %s at %.2f s, tracking %.1f deg RMS until then; "
                   "inverse-dynamics targets: %s at %.2f s, tracking %.1f deg RMS",
                   clip, raw->fell ? raw->reason : "no fall", raw->fall_time, raw->tracking_rms * 180 / SC_PI, id->fell ? id->reason : "no fall",
                   id->fall_time, id->tracking_rms * 180 / SC_PI);
    return 1;
}

TEST(id_openloop_raw_vs_id_targets_on_real_clips)
{
    const char *ch = sc_test_tmp("ol_character.h5");
    int rc =
        sc_test_sh(out, sizeof out, "%s -q -c %s -o %s && %s -q -c %s -o %s %s", sc_test_tool("mesh-prep"), sc_test_repo("configs/michelin_cmu.yaml"),
                   ch, sc_test_tool("skin-weights"), sc_test_repo("configs/michelin_cmu.yaml"), ch, ch);
    ENSURE_MSG(rc == 0, "character: %s", out);
    sc_fall_report wr, wi, rr, ri;
    if (!track("walk", "configs/walk.yaml", ch, 2.5, &wr, &wi)) return;
    if (!track("run", "configs/run.yaml", ch, 1.4, &rr, &ri)) return;
    /* the inverse-dynamics targets already carry gravity and the ground reaction: they must
       track better than the raw poses */
    ENSURE(wi.tracking_rms < wr.tracking_rms);
    ENSURE(ri.tracking_rms < rr.tracking_rms);
    ENSURE(wi.fall_time > 0 && ri.fall_time > 0);
}

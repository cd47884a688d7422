#include <stdio.h>
#include <string.h>
#include "settings/simbicon.h"

#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)

static int read_state(sc_cfg_node *e, sc_simbicon_state *s, int first, sc_err *err)
{
    char w[256];
    int rc;
    if (!sc_cfg_is_map(e)) return sc_fail(err, SC_EINPUT, "%s: a SIMBICON state is a map", sc_cfg_where(e, w, sizeof w));
    /* state 0 ends after its duration; state 1 may end at the swing foot's touchdown (0) */
    TRY(sc_cfg_double_range(e, "duration", s->duration, first ? 0.01 : 0, 10, &s->duration, err));
    const double lim = 3.2; /* rad */
    TRY(sc_cfg_double_range(e, "swing_hip", s->swing_hip, -lim, lim, &s->swing_hip, err));
    TRY(sc_cfg_double_range(e, "swing_knee", s->swing_knee, -lim, lim, &s->swing_knee, err));
    TRY(sc_cfg_double_range(e, "swing_ankle", s->swing_ankle, -lim, lim, &s->swing_ankle, err));
    TRY(sc_cfg_double_range(e, "stance_knee", s->stance_knee, -lim, lim, &s->stance_knee, err));
    TRY(sc_cfg_double_range(e, "stance_ankle", s->stance_ankle, -lim, lim, &s->stance_ankle, err));
    TRY(sc_cfg_double_range(e, "torso", s->torso, -lim, lim, &s->torso, err));
    TRY(sc_cfg_double_range(e, "cd_sagittal", s->cd_sagittal, -100, 100, &s->cd_sagittal, err));
    TRY(sc_cfg_double_range(e, "cv_sagittal", s->cv_sagittal, -100, 100, &s->cv_sagittal, err));
    TRY(sc_cfg_double_range(e, "cd_coronal", s->cd_coronal, -100, 100, &s->cd_coronal, err));
    TRY(sc_cfg_double_range(e, "cv_coronal", s->cv_coronal, -100, 100, &s->cv_coronal, err));
    return SC_OK;
}

/* `left: [thigh, shin, foot, upper arm]` */
static int read_side(sc_cfg_node *bones, const char *key, sc_simbicon_params *p, int side, sc_err *err)
{
    char w[256];
    sc_cfg_node *list;
    int rc;
    TRY(sc_cfg_list(bones, key, 0, &list, err));
    if (!list) return SC_OK;
    if (sc_cfg_len(list) != 4)
        return sc_fail(err, SC_EINPUT, "%s: simbicon.bones.%s lists [thigh, shin, foot, upper arm]: 4 bone names, not %d",
                       sc_cfg_where(list, w, sizeof w), key, sc_cfg_len(list));
    char *dst[4] = {p->thigh[side], p->shin[side], p->foot[side], p->upperarm[side]};
    for (int i = 0; i < 4; i++) {
        const char *v = sc_cfg_scalar(sc_cfg_at(list, i));
        if (!v || !*v || strlen(v) >= SC_NAME_LEN)
            return sc_fail(err, SC_EINPUT, "%s: simbicon.bones.%s[%d] must be a bone name", sc_cfg_where(sc_cfg_at(list, i), w, sizeof w), key, i);
        snprintf(dst[i], SC_NAME_LEN, "%s", v);
    }
    return SC_OK;
}

int sc_simbicon_read(sc_cfg_node *controller, sc_simbicon_params *p, sc_err *err)
{
    static const char *const sides[] = {"left", "right"};
    sc_cfg_node *sb, *bones, *states;
    char w[256];
    int rc;
    sc_simbicon_default_params(p);
    TRY(sc_cfg_section(controller, "simbicon", &sb, err));
    TRY(sc_cfg_list(sb, "states", 0, &states, err));
    if (states && sc_cfg_len(states) != 2)
        return sc_fail(err, SC_EINPUT, "%s: simbicon.states has the 2 states of a step (after foot strike, then until touchdown), not %d",
                       sc_cfg_where(states, w, sizeof w), sc_cfg_len(states));
    for (int i = 0; states && i < 2; i++) TRY(read_state(sc_cfg_at(states, i), &p->state[i], i == 0, err));
    TRY(sc_cfg_section(sb, "bones", &bones, err));
    TRY(sc_cfg_string(bones, "pelvis", p->pelvis, p->pelvis, sizeof p->pelvis, err));
    TRY(read_side(bones, "left", p, SC_LEFT, err));
    TRY(read_side(bones, "right", p, SC_RIGHT, err));
    TRY(sc_cfg_vec_range(sb, "forward", 3, p->forward, -1, 1, p->forward, err));
    TRY(sc_cfg_double_range(sb, "arm_down", p->arm_down, 0, 1.6, &p->arm_down, err));
    TRY(sc_cfg_double_range(sb, "heading", p->heading, -3.2, 3.2, &p->heading, err));
    TRY(sc_cfg_enum(sb, "first_stance", sides, 2, p->first_stance, &p->first_stance, err));
    sc_cfg_node *gains = sc_cfg_get(sb, "gains");
    if (gains && !sc_cfg_is_map(gains))
        return sc_fail(err, SC_EINPUT, "%s: simbicon.gains is a map of bone: [kp, kd]", sc_cfg_where(gains, w, sizeof w));
    for (int i = 0; gains && i < sc_cfg_len(gains); i++) {
        if (i >= SC_SIMBICON_MAX_GAINS)
            return sc_fail(err, SC_EINPUT, "%s: more than %d gains", sc_cfg_where(gains, w, sizeof w), SC_SIMBICON_MAX_GAINS);
        const char *name = sc_cfg_key_at(gains, i);
        double g[2];
        if (strlen(name) >= SC_NAME_LEN) return sc_fail(err, SC_EINPUT, "%s: bone name too long", sc_cfg_where(sc_cfg_at(gains, i), w, sizeof w));
        TRY(sc_cfg_vec_range(gains, name, 2, NULL, 0, 1e6, g, err));
        if (!(g[1] > 0))
            return sc_fail(err, SC_EINPUT, "%s: simbicon.gains.%s: kd must be > 0 (the stable PD servo divides by it)",
                           sc_cfg_where(sc_cfg_at(gains, i), w, sizeof w), name);
        snprintf(p->gain_bone[i], SC_NAME_LEN, "%s", name);
        p->gain_kp[i] = g[0];
        p->gain_kd[i] = g[1];
        p->ngains = i + 1;
    }
    return SC_OK;
}

/* The fit of a skeleton into a body by the body's own joint centres (issue 28 item 1;
 * lib/mesh/landmarks, lib/mesh/fit): on a synthetic body of capsules whose joint centres are
 * known, on MakeHuman's male_generic against a person's anatomy, and the fit report printed when
 * mesh-prep fails after the fit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/mathx.h"
#include "io/config.h"
#include "io/h5.h"
#include "io/obj.h"
#include "mesh/envelope.h"
#include "mesh/fit.h"
#include "mesh/isosurface.h"
#include "settings/mesh.h"
#include "test.h"

static char out[1 << 16];

/* ---- a body of capsules with known joint centres ----------------------------------------- */

/* Height 1.75 m, soles on y = 0, facing +z, arms 45 deg down (A-pose), straight limbs. Its flesh
   sits on the joints where a person's does relative to the landmarks the fit reads: the torso's
   lowest point between the legs (the crotch) 0.045 H below the hips, the top of the gap between
   arm and torso (the armpit) 0.05 H below the shoulders. */
#define BODY_H 1.75
static const double ARM_DOWN = 45 * SC_PI / 180, TORSO_HALF_WIDTH = 0.207, UPPER_ARM_R = 0.05;

typedef struct capsule_body {
    sc_vec3 hip[2], knee[2], ankle[2], shoulder[2], elbow[2], wrist[2], tip[2];
} capsule_body;

static sc_vec3 arm_dir(int side) { return sc_v3(side ? -sin(ARM_DOWN) : sin(ARM_DOWN), -cos(ARM_DOWN), 0); }

static void capsule_body_joints(capsule_body *b)
{
    for (int s = 0; s < 2; s++) {
        const double x = s ? -1 : 1;
        b->hip[s] = sc_v3(0.09 * x, 0.92, 0);
        b->knee[s] = sc_v3(0.10 * x, 0.50, 0);
        b->ankle[s] = sc_v3(0.10 * x, 0.04 * BODY_H, 0);
        b->shoulder[s] = sc_v3(0.19 * x, 1.40, 0);
        b->elbow[s] = sc_v3_add(b->shoulder[s], sc_v3_scale(arm_dir(s), 0.28));
        b->wrist[s] = sc_v3_add(b->elbow[s], sc_v3_scale(arm_dir(s), 0.25));
        b->tip[s] = sc_v3_add(b->wrist[s], sc_v3_scale(arm_dir(s), 0.14));
    }
}

/* distance to the segment a-b with radius going from ra to rb (a round cone, near enough) */
static double cone(sc_vec3 p, sc_vec3 a, sc_vec3 b, double ra, double rb)
{
    sc_vec3 ab = sc_v3_sub(b, a);
    double t = fmin(1, fmax(0, sc_v3_dot(sc_v3_sub(p, a), ab) / sc_v3_dot(ab, ab)));
    return sc_v3_dist(p, sc_v3_add(a, sc_v3_scale(ab, t))) - (ra + (rb - ra) * t);
}

static double ellipsoid(sc_vec3 p, sc_vec3 c, sc_vec3 u, sc_vec3 v, sc_vec3 w, double a, double b, double d)
{
    sc_vec3 q = sc_v3_sub(p, c);
    double x = sc_v3_dot(q, u) / a, y = sc_v3_dot(q, v) / b, z = sc_v3_dot(q, w) / d;
    return (sqrt(x * x + y * y + z * z) - 1) * fmin(a, fmin(b, d));
}

static double capsule_body_field(const void *ctx, sc_vec3 p)
{
    const capsule_body *b = ctx;
    /* torso: a capsule 0.6 as deep as wide, its lowest point the crotch (0.045 H below the hips),
       its side at the armpit's height TORSO_HALF_WIDTH from the middle; shoulders across */
    const double crotch = 0.92 - 0.045 * BODY_H;
    sc_vec3 pt = sc_v3(p.x, p.y, p.z / 0.6);
    double f = cone(pt, sc_v3(0, crotch + TORSO_HALF_WIDTH, 0), sc_v3(0, 1.30, 0), TORSO_HALF_WIDTH, TORSO_HALF_WIDTH) * 0.6;
    f = fmin(f, cone(p, b->shoulder[1], b->shoulder[0], 0.06, 0.06));
    f = fmin(f, cone(p, sc_v3(0, 1.40, 0), sc_v3(0, 1.60, 0), 0.055, 0.055));                                           /* neck */
    f = fmin(f, ellipsoid(p, sc_v3(0, 1.655, 0.01), sc_v3(0, 1, 0), sc_v3(1, 0, 0), sc_v3(0, 0, 1), 0.095, 0.08, 0.1)); /* head */
    for (int s = 0; s < 2; s++) {
        f = fmin(f, cone(p, b->hip[s], b->knee[s], 0.075, 0.055));
        f = fmin(f, cone(p, b->knee[s], b->ankle[s], 0.055, 0.04));
        f = fmin(f, cone(p, sc_v3(b->ankle[s].x, 0.045, -0.05), sc_v3(b->ankle[s].x, 0.04, 0.16), 0.045, 0.04)); /* foot, sole on y = 0 */
        f = fmin(f, cone(p, b->shoulder[s], b->elbow[s], UPPER_ARM_R, 0.042));
        f = fmin(f, cone(p, b->elbow[s], b->wrist[s], 0.042, 0.027));
        sc_vec3 d = arm_dir(s), across = sc_v3(0, 0, 1), thick = sc_v3_cross(d, across);
        f = fmin(f, ellipsoid(p, sc_v3_add(b->wrist[s], sc_v3_scale(d, 0.06)), d, across, thick, 0.08, 0.05, 0.02)); /* hand */
    }
    return f;
}

/* extracted on a grid of `spacing` (m) */
static int make_capsule_body(const capsule_body *b, double spacing, sc_trimesh *m, sc_err *err)
{
    sc_field f = {capsule_body_field, b, sc_v3(-0.8, -0.05, -0.3), sc_v3(0.8, 1.8, 0.3)};
    sc_iso_opts o = {.spacing = spacing, .level = 0, .shift = 0, .project = 3, .smooth = 0, .tangential = 0};
    return sc_isosurface(&f, &o, m, err);
}

/* The CMU bone map's skeleton in a T-pose of other proportions than the body's (hips 6 cm higher,
   shoulders 4 cm higher and 3 cm wider, neck low), so that the fit has to move every joint. */
static void tpose_rig(sc_rig *r)
{
    memset(r, 0, sizeof *r);
    const struct {
        const char *name;
        int parent;
        double head[3], tail[3];
    } bones[] = {
        {"pelvis", -1, {0, 1.00, 0}, {0, 1.10, 0}},
        {"spine", 0, {0, 1.10, 0}, {0, 1.38, 0}},
        {"neck", 1, {0, 1.40, 0}, {0, 1.50, 0}},
        {"head", 2, {0, 1.50, 0}, {0, 1.706, 0}},
        {"l_upperarm", 1, {0.22, 1.44, 0}, {0.50, 1.44, 0}},
        {"l_forearm", 4, {0.50, 1.44, 0}, {0.75, 1.44, 0}},
        {"l_hand", 5, {0.75, 1.44, 0}, {0.92, 1.44, 0}},
        {"r_upperarm", 1, {-0.22, 1.44, 0}, {-0.50, 1.44, 0}},
        {"r_forearm", 7, {-0.50, 1.44, 0}, {-0.75, 1.44, 0}},
        {"r_hand", 8, {-0.75, 1.44, 0}, {-0.92, 1.44, 0}},
        {"l_thigh", 0, {0.09, 0.98, 0}, {0.10, 0.52, 0}},
        {"l_shin", 10, {0.10, 0.52, 0}, {0.10, 0.07, 0}},
        {"l_foot", 11, {0.10, 0.07, 0}, {0.10, 0.035, 0.15}},
        {"r_thigh", 0, {-0.09, 0.98, 0}, {-0.10, 0.52, 0}},
        {"r_shin", 13, {-0.10, 0.52, 0}, {-0.10, 0.07, 0}},
        {"r_foot", 14, {-0.10, 0.07, 0}, {-0.10, 0.035, 0.15}},
    };
    r->nbones = (int)(sizeof bones / sizeof *bones);
    for (int i = 0; i < r->nbones; i++) {
        sc_rig_bone *b = &r->bone[i];
        snprintf(b->name, sizeof b->name, "%s", bones[i].name);
        b->parent = bones[i].parent;
        b->head = sc_v3_load(bones[i].head);
        b->tail = sc_v3_load(bones[i].tail);
        b->joint_type = i == 0 ? SC_JOINT_FREE : SC_JOINT_BALL;
    }
}

/* distance of p from the line through a and b, and how far along it p is from a (m) */
static void line_offsets(sc_vec3 p, sc_vec3 a, sc_vec3 b, double *across, double *along)
{
    sc_vec3 d = sc_v3_normalize(sc_v3_sub(b, a)), q = sc_v3_sub(p, a);
    *along = sc_v3_dot(q, d);
    *across = sc_v3_norm(sc_v3_sub(q, sc_v3_scale(d, *along)));
}

TEST(fit_joint_centres_of_a_capsule_body)
{
    capsule_body cb;
    capsule_body_joints(&cb);
    sc_trimesh body;
    sc_err err;
    ENSURE_OK(make_capsule_body(&cb, 0.01, &body, &err), &err);
    sc_rig rig;
    tpose_rig(&rig);
    sc_fit_info info;
    ENSURE_OK(sc_rig_fit_body(&rig, &body, 1, &info, &err), &err);
    const sc_body_landmarks *lm = &info.landmarks;
    ENSURE(lm->have_crotch && lm->have_armpit[0] && lm->have_armpit[1] && lm->have_neck);
    /* the landmarks where the geometry puts them: the torso's lowest point; the arm's underside
       meeting the torso's side (a line TORSO_HALF_WIDTH out: y = shoulder + tan(45) (shoulder.x
       - side) - r / cos(45)) */
    const double crotch = 0.92 - 0.045 * BODY_H, pit = 1.40 - (TORSO_HALF_WIDTH - 0.19) - UPPER_ARM_R / cos(ARM_DOWN);
    sc_test_report("capsule body (%d triangles): crotch y %.4f m (built %.4f), armpits y %.4f / %.4f m (built %.4f), neck base y %.3f, "
                   "narrowest y %.3f m",
                   body.ntris, lm->crotch.y, crotch, lm->armpit[0].y, lm->armpit[1].y, pit, lm->neck_base.y, lm->neck_narrowest.y);
    ENSURE(fabs(lm->crotch.y - crotch) < 0.005 && fabs(lm->crotch.x) < 0.005);
    for (int s = 0; s < 2; s++) ENSURE(fabs(lm->armpit[s].y - pit) < 0.008);
    /* joints against the body's: across each limb's axis and along it */
    static const char *const names[2][6] = {{"l_thigh", "l_shin", "l_foot", "l_upperarm", "l_forearm", "l_hand"},
                                            {"r_thigh", "r_shin", "r_foot", "r_upperarm", "r_forearm", "r_hand"}};
    /* along: hips and shoulders from the landmarks (the scan's 3.5 mm step), knees and elbows
       from the skeleton's proportions between them (the body was built in the same ones), the
       ankle from the shin's sections, the wrist from the narrowest section (the hand's ellipsoid
       overlaps the forearm's end by 2 cm) */
    static const double along_tol[6] = {0.01, 0.015, 0.01, 0.01, 0.015, 0.02};
    double worst_across = 0, worst_along[6] = {0};
    for (int s = 0; s < 2; s++) {
        const sc_vec3 want[6] = {cb.hip[s], cb.knee[s], cb.ankle[s], cb.shoulder[s], cb.elbow[s], cb.wrist[s]};
        const sc_vec3 axis[6][2] = {{cb.hip[s], cb.knee[s]},       {cb.knee[s], cb.ankle[s]},  {cb.knee[s], cb.ankle[s]},
                                    {cb.shoulder[s], cb.elbow[s]}, {cb.elbow[s], cb.wrist[s]}, {cb.elbow[s], cb.wrist[s]}};
        for (int j = 0; j < 6; j++) {
            const int b = sc_rig_find(&rig, names[s][j]);
            ENSURE(b >= 0);
            double across, along, want_along, unused;
            line_offsets(rig.bone[b].head, axis[j][0], axis[j][1], &across, &along);
            line_offsets(want[j], axis[j][0], axis[j][1], &unused, &want_along);
            worst_across = fmax(worst_across, across);
            worst_along[j] = fmax(worst_along[j], fabs(along - want_along));
            sc_test_report("%-10s at (%.3f, %.3f, %.3f), built (%.3f, %.3f, %.3f): %.1f mm off its limb's axis, %.1f mm along it; %s", names[s][j],
                           rig.bone[b].head.x, rig.bone[b].head.y, rig.bone[b].head.z, want[j].x, want[j].y, want[j].z, 1000 * across,
                           1000 * (along - want_along), info.joint_how[b]);
        }
    }
    ENSURE(worst_across < 0.01);
    for (int j = 0; j < 6; j++) ENSURE_MSG(worst_along[j] < along_tol[j], "%s: %.4f m along its limb", names[0][j], worst_along[j]);
    /* neck and head on the neck's axis, between the torso's top and the head */
    const int neck = sc_rig_find(&rig, "neck"), head = sc_rig_find(&rig, "head");
    sc_test_report("neck at y %.3f, head at y %.3f (the neck shows from 1.507 to 1.56)", rig.bone[neck].head.y, rig.bone[head].head.y);
    ENSURE(hypot(rig.bone[neck].head.x, rig.bone[neck].head.z) < 0.01 && hypot(rig.bone[head].head.x, rig.bone[head].head.z) < 0.01);
    ENSURE(rig.bone[neck].head.y > 1.45 && rig.bone[neck].head.y < rig.bone[head].head.y && rig.bone[head].head.y < 1.57);
    /* the root came down with the hips (it was 2 cm above them) */
    ENSURE(fabs(rig.bone[0].head.y - (rig.bone[sc_rig_find(&rig, "l_thigh")].head.y + 0.02)) < 0.01);
    sc_trimesh_free(&body);
}

/* ---- MakeHuman's male_generic ------------------------------------------------------------- */

TEST(fit_male_generic_joints_anatomical)
{
    const char *mg = sc_test_mesh("male_generic.obj");
    ENSURE_MSG(sc_test_file_exists(mg), "%s: the MakeHuman body is missing (../shared/meshes, SOFTCON_MESH_PATH)", mg);
    char text[2048];
    snprintf(text, sizeof text, "skeleton: {bvh: %s}\nbody: {obj: %s, scale: 0.1}\n", sc_test_mocap("cmu_02_01_walk.bvh"), mg);
    sc_err err;
    sc_cfg *cfg;
    ENSURE_OK(sc_cfg_load_string(text, "male_generic.yaml", &cfg, &err), &err);
    static sc_prep_opts o;
    int rc = sc_prep_read_config(cfg, &o, &err);
    sc_cfg_free(cfg);
    ENSURE_OK(rc, &err);
    sc_trimesh body;
    ENSURE_OK(sc_obj_load(mg, &body, &err), &err);
    double lo = INFINITY;
    for (int i = 0; i < body.nverts; i++) lo = fmin(lo, 0.1 * body.verts[3 * i + 1]);
    for (int i = 0; i < 3 * body.nverts; i++) body.verts[i] = 0.1 * body.verts[i] - (i % 3 == 1 ? lo : 0); /* m, soles on y = 0 */
    sc_fit_info info;
    ENSURE_OK(sc_rig_fit_body(&o.rig, &body, 1, &info, &err), &err);
    const double H = info.body_height;
    /* A man's joint centres as fractions of stature (ANSUR II men's means, the joint centres
       from the surface landmarks: hip at the trochanterion, knee at the lateral femoral
       epicondyle, ankle at the lateral malleolus, shoulder 4 cm below the acromion, elbow at the
       radiale in this A-pose's own arm, neck at the cervicale), and how far this body may differ */
    const struct {
        const char *bone;
        double height, tol; /* fraction of H, m */
    } want[] = {
        {"l_thigh", 0.519, 0.03}, {"r_thigh", 0.519, 0.03},    {"l_shin", 0.285, 0.03},     {"r_shin", 0.285, 0.03}, {"l_foot", 0.040, 0.02},
        {"r_foot", 0.040, 0.02},  {"l_upperarm", 0.795, 0.03}, {"r_upperarm", 0.795, 0.03}, {"neck", 0.845, 0.03},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const int b = sc_rig_find(&o.rig, want[i].bone);
        ENSURE(b >= 0);
        const double y = o.rig.bone[b].head.y;
        sc_test_report("%-10s at (%.3f, %.3f, %.3f) m: %.3f H (a man's %.3f H, %.3f m); %s", want[i].bone, o.rig.bone[b].head.x, y,
                       o.rig.bone[b].head.z, y / H, want[i].height, want[i].height * H, info.joint_how[b]);
        ENSURE_MSG(fabs(y - want[i].height * H) < want[i].tol, "%s at %.3f m, a man's at %.3f m", want[i].bone, y, want[i].height * H);
    }
    /* every joint and bone middle inside the body; shoulders inside at the armpits' level or
       above, hips above the crotch, elbows and wrists down the arm */
    for (int b = 0; b < o.rig.nbones; b++)
        for (int k = 0; k < 2; k++) {
            double p[3];
            sc_v3_store(p, k ? sc_v3_scale(sc_v3_add(o.rig.bone[b].head, o.rig.bone[b].tail), 0.5) : o.rig.bone[b].head);
            ENSURE_MSG(sc_winding_number(&body, p) > 0.5, "%s%s outside the body", o.rig.bone[b].name, k ? " (middle)" : "");
        }
    const sc_body_landmarks *lm = &info.landmarks;
    ENSURE(lm->have_crotch && lm->have_armpit[0] && lm->have_armpit[1] && lm->have_neck);
    sc_test_report("landmarks: crotch y %.3f m (%.3f H; ANSUR II men 0.474 H), armpits y %.3f / %.3f m (%.3f H), neck base y %.3f m", lm->crotch.y,
                   lm->crotch.y / H, lm->armpit[0].y, lm->armpit[1].y, lm->armpit[0].y / H, lm->neck_base.y);
    ENSURE(fabs(lm->crotch.y / H - 0.474) < 0.02 && fabs(lm->armpit[0].y - lm->armpit[1].y) < 0.005);
    for (int s = 0; s < 2; s++) {
        const sc_rig_bone *up = &o.rig.bone[sc_rig_find(&o.rig, s ? "r_upperarm" : "l_upperarm")];
        const sc_rig_bone *hand = &o.rig.bone[sc_rig_find(&o.rig, s ? "r_hand" : "l_hand")];
        ENSURE(up->head.y > lm->armpit[s].y && fabs(up->head.x) < fabs(lm->armpit[s].x)); /* above the armpit, no further out */
        /* the wrist 40..75 % of the way from the elbow to the hand's end (a man's: 57 %) */
        const double fore = sc_v3_dist(up->tail, hand->head), whole = fore + sc_rig_length(hand);
        ENSURE_MSG(fore / whole > 0.4 && fore / whole < 0.75, "wrist at %.2f of elbow to fingertips", fore / whole);
    }
    sc_trimesh_free(&body);
}

/* ---- the report when mesh-prep fails -------------------------------------------------------- */

TEST(fit_report_printed_when_meshprep_fails)
{
    capsule_body cb;
    capsule_body_joints(&cb);
    sc_trimesh body;
    sc_err err;
    ENSURE_OK(make_capsule_body(&cb, 0.02, &body, &err), &err); /* coarse: only the report's lines matter */
    const char *obj = sc_test_tmp("capsules.obj");
    ENSURE_OK(sc_obj_write(obj, &body, &err), &err);
    sc_trimesh_free(&body);
    /* an envelope around the chest only: the legs' fixed nodes lie outside it, issue 28's error */
    char text[2048];
    int n = 0;
    for (int i = 0; i < 8; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, "v %g %g %g\n", i & 1 ? 0.1 : -0.1, i & 2 ? 1.2 : 1.0, i & 4 ? 0.1 : -0.1);
    snprintf(text + n, sizeof text - (size_t)n, "f 1 3 4 2\nf 5 6 8 7\nf 1 2 6 5\nf 3 7 8 4\nf 1 5 7 3\nf 2 4 8 6\n");
    const char *box = sc_test_write("chest_box.obj", text);
    snprintf(text, sizeof text, "skeleton: {bvh: cmu_02_01_walk.bvh}\nbody: {obj: %s}\nenvelope: {obj: %s}\n", obj, box);
    const char *yaml = sc_test_write("capsules.yaml", text), *h5 = sc_test_tmp("capsules.h5");
    int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s 2>&1", sc_test_tool("mesh-prep"), yaml, h5);
    const char *pit = strstr(out, "fit landmarks crotch ("), *joint = strstr(out, "fit joint     l_upperarm"),
               *error = strstr(out, "mesh-prep: error:");
    sc_test_report("mesh-prep with an envelope around the chest only: exit %d; landmarks line %s, joint lines %s, then the error: %.200s", rc,
                   pit ? "printed" : "missing", joint ? "printed" : "missing", error ? error : "(none)");
    ENSURE_MSG(rc == 2 && pit && joint && error && joint < error && strstr(error, "lies outside the body envelope"), "%s", out);
    ENSURE(strstr(joint, "shoulder: on the upper arm's axis 0.05 H above the armpit"));
    ENSURE(!sc_test_file_exists(h5));
}

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "mesh/envelope.h"
#include "mesh/fit.h"
#include "mesh/landmarks.h"

/* Fixed nodes of one bone: a box (4 corners per layer) or a capsule (6 around the axis per
 * layer, plus the axis ends) between the bone's margins, layers about `spacing` apart; or a
 * sole: a box parallel to the ground (per layer 3 nodes across its bottom, 2 on top) whose
 * bottom is `fixed_clearance` above `ground`, so that the rigid foot reaches down to a flat
 * sole whatever the bone's slope (the flesh under a bone-aligned box is thick at the heel and
 * gives the standing body too little rotational stiffness: it tips over). */
int sc_rig_fixed_points(const sc_rig_bone *b, double radius, double radius_min, double radius_max, int default_shape, double ground, double *pts,
                        int cap)
{
    sc_vec3 u = sc_v3_normalize(sc_v3_sub(b->tail, b->head));
    sc_vec3 hint = fabs(u.y) < 0.9 ? sc_v3(0, 1, 0) : sc_v3(0, 0, 1);
    sc_vec3 v = sc_v3_normalize(sc_v3_cross(u, hint)), w = sc_v3_cross(u, v);
    double len = sc_rig_length(b);
    double r = b->fixed_radius > 0 ? b->fixed_radius : fmin(radius_max, fmax(radius_min, radius * len));
    int shape = b->fixed_shape ? b->fixed_shape : default_shape;
    double t0 = b->fixed_from, t1 = b->fixed_to;
    sc_vec3 axis = sc_v3_sub(b->tail, b->head);
    if (shape == SC_FIXED_SOLE) {
        axis.y = 0; /* along the ground */
        len = sc_v3_norm(axis);
        if (!(len > 1e-9)) { /* a vertical bone: an ordinary box */
            shape = SC_FIXED_BOX;
            axis = sc_v3_sub(b->tail, b->head);
            len = sc_rig_length(b);
        }
    }
    int layers = (int)fmax(2, 1 + round((t1 - t0) * len / b->fixed_spacing));
    int n = 0;
    for (int l = 0; l < layers; l++) {
        sc_vec3 c = sc_v3_add(b->head, sc_v3_scale(axis, t0 + (t1 - t0) * l / (layers - 1)));
        if (shape == SC_FIXED_SOLE) {
            sc_vec3 side = sc_v3_scale(sc_v3_normalize(sc_v3_cross(sc_v3(0, 1, 0), axis)), r);
            double y0 = ground + b->fixed_clearance, y1 = y0 + (b->fixed_height > 0 ? b->fixed_height : r);
            /* bottom row: three across (the sole's support), top row: two */
            static const double across[5][2] = {{-1, 0}, {0, 0}, {1, 0}, {-1, 1}, {1, 1}};
            for (int i = 0; i < 5 && n < cap; i++)
                sc_v3_store(pts + 3 * n++, sc_v3_add(sc_v3(c.x, across[i][1] ? y1 : y0, c.z), sc_v3_scale(side, across[i][0])));
            continue;
        }
        int k = shape == SC_FIXED_BOX ? 4 : 6;
        for (int i = 0; i < k && n < cap; i++) {
            double a = 2 * SC_PI * i / k + (shape == SC_FIXED_BOX ? SC_PI / 4 : 0);
            double rr = shape == SC_FIXED_BOX ? r * sqrt(2.0) : r;
            sc_v3_store(pts + 3 * n++, sc_v3_add(c, sc_v3_add(sc_v3_scale(v, rr * cos(a)), sc_v3_scale(w, rr * sin(a)))));
        }
    }
    return n;
}

/* ---- chains of the skeleton ------------------------------------------------------------- */

static sc_vec3 bone_dir(const sc_rig_bone *b) { return sc_v3_normalize(sc_v3_sub(b->tail, b->head)); }
static int lateral(const sc_rig_bone *b) { return fabs(bone_dir(b).x) >= 0.7; }

static int is_below(const sc_rig *rig, int b, int root)
{
    for (; b >= 0; b = rig->bone[b].parent)
        if (b == root) return 1;
    return 0;
}

static int has_child(const sc_rig *rig, int b)
{
    for (int c = 0; c < rig->nbones; c++)
        if (rig->bone[c].parent == b) return 1;
    return 0;
}

/* First bones of the arm chains (at most 2), sorted left (+x) first. */
static int arm_roots(const sc_rig *rig, int *roots)
{
    int n = 0;
    for (int b = 1; b < rig->nbones && n < 2; b++) {
        const sc_rig_bone *x = &rig->bone[b];
        if (!lateral(x) || (x->parent >= 0 && lateral(&rig->bone[x->parent]))) continue;
        int r = b;
        /* a clavicle: short, with a sideways child that is longer */
        for (int c = 0; c < rig->nbones; c++)
            if (rig->bone[c].parent == b && lateral(&rig->bone[c]) && sc_rig_length(&rig->bone[c]) > 1.2 * sc_rig_length(x)) r = c;
        roots[n++] = r;
    }
    if (n == 2 && rig->bone[roots[0]].head.x < rig->bone[roots[1]].head.x) {
        int t = roots[0];
        roots[0] = roots[1];
        roots[1] = t;
    }
    return n;
}

/* Turns the chain from bone r by rotation q about point c (hinge axes with it, bone frames being
 * world-aligned at rest); scales it about c by k first. */
static void move_chain(sc_rig *rig, int r, sc_vec3 c, sc_quat q, double k)
{
    for (int b = 0; b < rig->nbones; b++) {
        if (!is_below(rig, b, r)) continue;
        sc_rig_bone *x = &rig->bone[b];
        x->head = sc_v3_add(c, sc_q_rotate(q, sc_v3_scale(sc_v3_sub(x->head, c), k)));
        x->tail = sc_v3_add(c, sc_q_rotate(q, sc_v3_scale(sc_v3_sub(x->tail, c), k)));
        if (x->joint_type == SC_JOINT_HINGE) x->hinge_axis = sc_v3_normalize(sc_q_rotate(q, x->hinge_axis));
    }
}

int sc_rig_arms_down(sc_rig *rig, double angle)
{
    int roots[2], n = arm_roots(rig, roots);
    for (int i = 0; i < n; i++) {
        sc_rig_bone *a = &rig->bone[roots[i]];
        sc_vec3 axis = sc_v3_normalize(sc_v3_cross(bone_dir(a), sc_v3(0, -1, 0)));
        move_chain(rig, roots[i], a->head, sc_q_axis_angle(axis, angle), 1);
    }
    return n;
}

/* ---- size ------------------------------------------------------------------------------- */

int sc_body_size_check(const sc_trimesh *body, double scale, const char *where, sc_err *err)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < body->nverts; i++) {
        lo = fmin(lo, body->verts[3 * i + 1]);
        hi = fmax(hi, body->verts[3 * i + 1]);
    }
    double h = hi - lo;
    if (h >= 0.25 && h <= 4) return SC_OK;
    static const struct {
        double f;
        const char *unit;
    } units[] = {{0.001, "millimetres"}, {0.01, "centimetres"}, {0.0254, "inches"}, {0.1, "decimetres"}, {0.3048, "feet"}, {1, "metres"}};
    double raw = h / scale, bd = INFINITY;
    int best = -1;
    for (int i = 0; i < (int)(sizeof units / sizeof *units); i++) {
        double hi_ = raw * units[i].f, d = fabs(log(hi_ / 1.7));
        if (hi_ >= 0.25 && hi_ <= 4 && d < bd) {
            bd = d;
            best = i;
        }
    }
    if (best >= 0)
        return sc_fail(err, SC_EINPUT,
                       "%s: the body is %.3g m tall (%.4g OBJ units x body.scale %g), implausible for a person or a "
                       "character (0.25 .. 4 m); if the OBJ is in %s, set body.scale: %g (it would be %.2f m tall)",
                       where, h, raw, scale, units[best].unit, units[best].f, raw * units[best].f);
    double f = 1.7 / raw, p10 = pow(10, floor(log10(f)) - 1);
    return sc_fail(err, SC_EINPUT,
                   "%s: the body is %.3g m tall (%.4g OBJ units x body.scale %g), implausible for a person or a "
                   "character (0.25 .. 4 m) in any usual unit; body.scale: %g would make it 1.7 m tall",
                   where, h, raw, scale, round(f / p10) * p10);
}

/* ---- fitting ---------------------------------------------------------------------------- */

/* How well a chain lies inside: mean over points along its bones of the depth below the
 * surface (capped at `cap`), points outside counting three times their distance against. */
static double chain_depth(const sc_rig *rig, int r, const sc_sdf *g, double cap)
{
    double s = 0;
    int n = 0;
    for (int b = 0; b < rig->nbones; b++) {
        if (!is_below(rig, b, r)) continue;
        for (int i = 0; i < 8; i++) {
            sc_vec3 p = sc_v3_add(rig->bone[b].head, sc_v3_scale(sc_v3_sub(rig->bone[b].tail, rig->bone[b].head), (i + 0.5) / 8));
            double d = sc_sdf_eval(g, p);
            s += d < 0 ? fmin(-d, cap) : -3 * d;
            n++;
        }
    }
    return n ? s / n : 0;
}

/* ---- limb axes from cross-sections ------------------------------------------------------ */

/* The only child of b (-1: none or several). */
static int only_child(const sc_rig *rig, int b)
{
    int c = -1;
    for (int k = 0; k < rig->nbones; k++)
        if (rig->bone[k].parent == b) {
            if (c >= 0) return -1;
            c = k;
        }
    return c;
}

/* The axis of the limb around bone b: a line through the centres of its cross-sections at 30,
 * 50 and 70 % of it (each no wider than max_r), as a point and a unit direction along b. */
static int limb_axis(const sc_rig_bone *b, const sc_trimesh *body, double max_r, sc_vec3 *point, sc_vec3 *dir)
{
    sc_vec3 d = bone_dir(b), c[3], mean = sc_v3(0, 0, 0);
    int n = 0;
    for (int i = 0; i < 3; i++) {
        sc_section s;
        sc_vec3 p = sc_v3_add(b->head, sc_v3_scale(sc_v3_sub(b->tail, b->head), 0.3 + 0.2 * i));
        if (sc_body_section(body, p, d, max_r, &s) > 0 && s.radius < max_r) {
            c[n] = s.centre;
            mean = sc_v3_add(mean, c[n++]);
        }
    }
    if (n < 2) return 0;
    mean = sc_v3_scale(mean, 1.0 / n);
    /* its direction: first centre to last */
    sc_vec3 a = sc_v3_sub(c[n - 1], c[0]);
    if (!(sc_v3_norm(a) > 1e-6)) return 0;
    a = sc_v3_normalize(a);
    if (sc_v3_dot(a, d) < 0.5) return 0; /* the sections did not follow the bone: keep it */
    *point = mean;
    *dir = a;
    return 1;
}

/* The point of line (p, d) nearest to line (q, e), averaged with its counterpart (the lines'
 * closest approach); q itself when they are (nearly) parallel. */
static sc_vec3 lines_meet(sc_vec3 p, sc_vec3 d, sc_vec3 q, sc_vec3 e)
{
    sc_vec3 w = sc_v3_sub(p, q);
    double b = sc_v3_dot(d, e), den = 1 - b * b;
    if (den < 1e-3) return q;
    double s = (b * sc_v3_dot(e, w) - sc_v3_dot(d, w)) / den, t = (sc_v3_dot(e, w) - b * sc_v3_dot(d, w)) / den;
    return sc_v3_scale(sc_v3_add(sc_v3_add(p, sc_v3_scale(d, s)), sc_v3_add(q, sc_v3_scale(e, t))), 0.5);
}

static sc_vec3 onto_line(sc_vec3 x, sc_vec3 p, sc_vec3 d) { return sc_v3_add(p, sc_v3_scale(d, sc_v3_dot(sc_v3_sub(x, p), d))); }

/* A limb (an arm from its upper arm, a leg from its thigh) laid along the body's own limb: its
 * two long bones re-aimed along the axes of their cross-sections, each joint moved across onto
 * them (so the skeleton's proportions along the limb stay): the first (shoulder, hip) onto the
 * first axis, the third (wrist, ankle) onto the second, the middle one (elbow, knee) where the
 * axes meet when they bend by more than 20 degrees, else onto both, averaged; the end bone moved
 * with the third joint. Repeated until the joints settle. Returns 1 when the limb was moved. */
static int centre_limb(sc_rig *rig, int first, const sc_trimesh *body, double H)
{
    const int mid = only_child(rig, first), end = mid >= 0 ? only_child(rig, mid) : -1;
    if (mid < 0) return 0;
    int moved = 0;
    for (int it = 0; it < 4; it++) {
        sc_rig_bone *a = &rig->bone[first], *b = &rig->bone[mid];
        sc_vec3 pa, da, pb, db;
        if (!limb_axis(a, body, 0.06 * H, &pa, &da) || !limb_axis(b, body, 0.06 * H, &pb, &db)) break;
        sc_vec3 joint = sc_v3_dot(da, db) < cos(20 * SC_PI / 180)
            ? lines_meet(pa, da, pb, db)
            : sc_v3_scale(sc_v3_add(onto_line(b->head, pa, da), onto_line(b->head, pb, db)), 0.5);
        sc_vec3 head = onto_line(a->head, pa, da), tail = onto_line(b->tail, pb, db);
        double change = fmax(sc_v3_dist(head, a->head), fmax(sc_v3_dist(joint, b->head), sc_v3_dist(tail, b->tail)));
        sc_vec3 shift = sc_v3_sub(tail, b->tail);
        a->head = head;
        a->tail = joint;
        b->head = joint;
        b->tail = tail;
        for (int k = 0; k < rig->nbones && end >= 0; k++)
            if (is_below(rig, k, end)) {
                rig->bone[k].head = sc_v3_add(rig->bone[k].head, shift);
                rig->bone[k].tail = sc_v3_add(rig->bone[k].tail, shift);
            }
        moved = 1;
        if (change < 0.002 * H) break;
    }
    return moved;
}

/* A foot (the leaf bone at the end of a leg) turned about the vertical through its ankle to point
 * along the body's own foot: the principal horizontal direction of the body below half the
 * ankle's height within a foot length of it (a body's toes may turn out where the skeleton's
 * point straight ahead). Returns the turn in degrees. */
static double aim_foot(sc_rig *rig, int foot, const sc_trimesh *body, double ground)
{
    sc_rig_bone *f = &rig->bone[foot];
    sc_vec3 d = sc_v3_sub(f->tail, f->head);
    const double flen = hypot(d.x, d.z), top = ground + 0.5 * (f->head.y - ground);
    if (!(flen > 1e-6)) return 0;
    double sx = 0, sz = 0, sxx = 0, sxz = 0, szz = 0;
    int n = 0;
    for (int i = 0; i < body->nverts; i++) {
        const double *p = body->verts + 3 * i, x = p[0] - f->head.x, z = p[2] - f->head.z;
        if (p[1] > top || hypot(x, z) > 1.2 * flen || (x * d.x + z * d.z) / flen < -0.5 * flen) continue;
        sx += x, sz += z, sxx += x * x, sxz += x * z, szz += z * z, n++;
    }
    if (n < 10) return 0;
    const double cxx = sxx / n - (sx / n) * (sx / n), cxz = sxz / n - (sx / n) * (sz / n), czz = szz / n - (sz / n) * (sz / n);
    const double ang = 0.5 * atan2(2 * cxz, cxx - czz); /* the major axis of the footprint */
    double ux = cos(ang), uz = sin(ang);
    if (ux * d.x + uz * d.z < 0) ux = -ux, uz = -uz;
    const double turn = atan2(d.x * uz - d.z * ux, d.x * ux + d.z * uz); /* from d to u about -y */
    if (fabs(turn) > 45 * SC_PI / 180) return 0;                         /* not a foot's shape: keep the skeleton's */
    move_chain(rig, foot, f->head, sc_q_axis_angle(sc_v3(0, -1, 0), turn), 1);
    return turn * 180 / SC_PI;
}

/* ---- joints at the body's joint centres -------------------------------------------------- */

/* The point of line (p, d) at height y; 0 when the line is too near horizontal to say. */
static int line_at_height(sc_vec3 p, sc_vec3 d, double y, sc_vec3 *out)
{
    if (fabs(d.y) < 0.2) return 0;
    *out = sc_v3_add(p, sc_v3_scale(d, (y - p.y) / d.y));
    return 1;
}

/* Moves the joint of bone b (its head), and its parent's tail with it where they were one point. */
static void move_joint(sc_rig *rig, int b, sc_vec3 to)
{
    sc_rig_bone *x = &rig->bone[b];
    if (x->parent >= 0 && sc_v3_dist(rig->bone[x->parent].tail, x->head) < 1e-9) rig->bone[x->parent].tail = to;
    x->head = to;
}

/* A leg's hip, knee and ankle at the body's joint centres (sc_rig_fit_body, step 5); the foot's
   tail (the toes) stays. Returns the hip's vertical move (0 when the hip stayed). */
static double place_leg(sc_rig *rig, int thigh, const sc_trimesh *body, const sc_body_landmarks *lm, const char **how)
{
    const double H = lm->height;
    const int shin = only_child(rig, thigh), foot = shin >= 0 ? only_child(rig, shin) : -1;
    sc_vec3 pa, da, pb, db;
    if (shin < 0 || !limb_axis(&rig->bone[thigh], body, 0.06 * H, &pa, &da) || !limb_axis(&rig->bone[shin], body, 0.06 * H, &pb, &db)) {
        how[thigh] = "leg laid on the axes of the body's leg; kept there: no cross-sections along it";
        return 0;
    }
    /* ankle: the lower leg's axis from two horizontal sections, at the malleoli's height */
    sc_vec3 ankle = rig->bone[shin].tail, lower[2];
    int got = 0;
    for (int i = 0; i < 2; i++) {
        sc_section s;
        sc_vec3 p;
        if (line_at_height(pb, db, lm->ground + (i ? 0.15 : 0.08) * H, &p) && sc_body_section(body, p, sc_v3(0, 1, 0), 0.03 * H, &s) > 0)
            lower[got++] = s.centre;
    }
    const char *ankle_how = "ankle: on the lower leg's axis (sections at 8 and 15 % of H), 0.04 H above the sole";
    if (got < 2 || !line_at_height(lower[0], sc_v3_normalize(sc_v3_sub(lower[1], lower[0])), lm->ground + 0.04 * H, &ankle)) {
        ankle_how = "ankle: on the shin's axis 0.04 H above the sole (no sections of the lower leg)";
        if (!line_at_height(pb, db, lm->ground + 0.04 * H, &ankle)) ankle = rig->bone[shin].tail, ankle_how = "ankle: kept (shin not upright)";
    }
    /* hip: above the crotch */
    sc_vec3 hip = rig->bone[thigh].head;
    const char *hip_how = "hip: kept on the thigh's axis: the body shows no crotch (legs together?)";
    if (lm->have_crotch) {
        if (line_at_height(pa, da, lm->crotch.y + 0.045 * H, &hip)) hip_how = "hip: on the thigh's axis 0.045 H above the crotch";
        else hip_how = "hip: kept: the thigh is not upright";
    }
    /* knee: the skeleton's proportion between them, on both axes */
    const double la = sc_rig_length(&rig->bone[thigh]), lb = sc_rig_length(&rig->bone[shin]);
    const double ky = hip.y + (ankle.y - hip.y) * la / (la + lb);
    sc_vec3 k1, k2, knee = rig->bone[shin].head;
    const char *knee_how = "knee: kept (leg not upright)";
    if (line_at_height(pa, da, ky, &k1) && line_at_height(pb, db, ky, &k2)) {
        knee = sc_v3_scale(sc_v3_add(k1, k2), 0.5);
        knee_how = "knee: on the leg's axes between hip and ankle in the skeleton's thigh : shin proportion";
    }
    const double dy = hip.y - rig->bone[thigh].head.y;
    move_joint(rig, thigh, hip);
    move_joint(rig, shin, knee);
    rig->bone[shin].tail = ankle;
    if (foot >= 0) move_joint(rig, foot, ankle);
    how[thigh] = hip_how;
    how[shin] = knee_how;
    if (foot >= 0) how[foot] = ankle_how;
    return dy;
}

/* An arm's shoulder, elbow and wrist at the body's joint centres (sc_rig_fit_body, step 5); the
   hand's tail (1 cm inside the fingertips) stays. */
static void place_arm(sc_rig *rig, int upper, int side, const sc_trimesh *body, const sc_body_landmarks *lm, const char **how)
{
    const double H = lm->height;
    const int fore = only_child(rig, upper), hand = fore >= 0 ? only_child(rig, fore) : -1;
    sc_vec3 pa, da, pb, db;
    if (hand < 0 || !limb_axis(&rig->bone[upper], body, 0.06 * H, &pa, &da) || !limb_axis(&rig->bone[fore], body, 0.06 * H, &pb, &db)) {
        how[upper] = "arm laid on the body's arm; kept there: no cross-sections along it (or no hand)";
        return;
    }
    sc_vec3 shoulder = rig->bone[upper].head;
    const char *shoulder_how = "shoulder: kept on the upper arm's axis: no armpit (a T-pose body shows none)";
    /* a person's armpit lies about a third of the way down the upper arm; far lower, the arm lies
       against the trunk down to there */
    const double upper_low = rig->bone[upper].head.y + 0.75 * (rig->bone[upper].tail.y - rig->bone[upper].head.y);
    if (lm->have_armpit[side] && lm->armpit[side].y < upper_low)
        shoulder_how = "shoulder: kept on the upper arm's axis: the arm leaves the trunk only near the elbow (arms against the body)";
    else if (lm->have_armpit[side]) {
        if (line_at_height(pa, da, lm->armpit[side].y + 0.05 * H, &shoulder))
            shoulder_how = "shoulder: on the upper arm's axis 0.05 H above the armpit";
        else shoulder_how = "shoulder: kept on the upper arm's axis: the arm is too near horizontal to place it by the armpit";
    }
    /* wrist: the narrowest section across the forearm's axis towards the fingertips, where it is
       over 10 % narrower than the first section searched (a person's forearm tapers to the wrist:
       male_generic's by 23 %; a body of grooved rings has minima anywhere: its wrist stays) */
    const sc_vec3 e = rig->bone[fore].head, tip = rig->bone[hand].tail;
    const double s0 = sc_v3_dot(sc_v3_sub(e, pb), db), s1 = sc_v3_dot(sc_v3_sub(tip, pb), db);
    double best = INFINITY, forearm_r = 0;
    sc_vec3 narrowest = rig->bone[hand].head, wrist = rig->bone[hand].head;
    const char *wrist_how = "wrist: kept: no sections across the forearm";
    for (int i = 0; i <= 25 && s1 > s0; i++) {
        sc_section s;
        sc_vec3 p = sc_v3_add(pb, sc_v3_scale(db, s0 + (s1 - s0) * (0.45 + 0.35 * i / 25)));
        if (sc_body_section(body, p, db, 0.02 * H, &s) <= 0) continue;
        if (forearm_r == 0) forearm_r = s.radius;
        if (s.radius < best) best = s.radius, narrowest = s.centre;
    }
    if (best < INFINITY && best < 0.9 * forearm_r) {
        wrist = narrowest;
        wrist_how = "wrist: centre of the forearm's narrowest section, 45..80 % from the elbow to the fingertips";
    } else if (best < INFINITY) wrist_how = "wrist: kept: the forearm narrows by less than 10 % towards the hand";
    sc_vec3 elbow = rig->bone[fore].head;
    const char *elbow_how = "elbow: where the axes of upper arm and forearm meet (bent over 20 deg)";
    if (sc_v3_dot(da, db) >= cos(20 * SC_PI / 180)) {
        const double la = sc_rig_length(&rig->bone[upper]), lb = sc_rig_length(&rig->bone[fore]);
        sc_vec3 x = sc_v3_add(shoulder, sc_v3_scale(sc_v3_sub(wrist, shoulder), la / (la + lb)));
        elbow = sc_v3_scale(sc_v3_add(onto_line(x, pa, da), onto_line(x, pb, db)), 0.5);
        elbow_how = "elbow: on the arm's axes between shoulder and wrist in the skeleton's upper arm : forearm proportion";
    }
    move_joint(rig, upper, shoulder);
    move_joint(rig, fore, elbow);
    move_joint(rig, hand, wrist);
    how[upper] = shoulder_how;
    how[fore] = elbow_how;
    how[hand] = wrist_how;
}

/* The neck and head joints (the topmost upright leaf bone is the head, its upright parent the
   neck): the head's joint at the centre of the neck's narrowest section, the neck's at its base. */
static void place_neck(sc_rig *rig, const sc_trimesh *body, const sc_body_landmarks *lm, const char **how)
{
    int head = -1;
    for (int b = 1; b < rig->nbones; b++)
        if (!has_child(rig, b) && bone_dir(&rig->bone[b]).y > 0.7 && (head < 0 || rig->bone[b].tail.y > rig->bone[head].tail.y)) head = b;
    if (head < 0) return;
    if (!lm->have_neck) {
        how[head] = "head: kept: no neck found (narrowest section above the armpits)";
        return;
    }
    const int neck = rig->bone[head].parent;
    if (lm->neck_narrowest.y >= rig->bone[head].tail.y) {
        how[head] = "head: kept: the neck's narrowest section is above the head bone's end";
        return;
    }
    double at[3];
    sc_v3_store(at, lm->neck_narrowest);
    if (sc_winding_number(body, at) < 0.5) {
        how[head] = "head: kept: the centre of the neck's narrowest section lies outside the body";
        return;
    }
    move_joint(rig, head, lm->neck_narrowest);
    how[head] = "head: centre of the neck's narrowest horizontal section";
    if (neck > 0 && bone_dir(&rig->bone[neck]).y > 0.7 && lm->neck_base.y < lm->neck_narrowest.y - 0.01 * lm->height) {
        move_joint(rig, neck, lm->neck_base);
        how[neck] = "neck: the neck's base (its section 1.5 x as wide as the narrowest), under the neck's centre";
    }
}

int sc_rig_fit_body(sc_rig *rig, const sc_trimesh *body, int joints_at_landmarks, sc_fit_info *info, sc_err *err)
{
    sc_fit_info inf;
    memset(&inf, 0, sizeof inf);
    if (rig->nbones < 2 || body->nverts < 4) return sc_fail(err, SC_EINPUT, "fit: %d bones, %d body vertices", rig->nbones, body->nverts);
    sc_vec3 lo = sc_v3(INFINITY, INFINITY, INFINITY), hi = sc_v3(-INFINITY, -INFINITY, -INFINITY);
    for (int i = 0; i < body->nverts; i++) {
        lo = sc_v3_min(lo, sc_v3_load(body->verts + 3 * i));
        hi = sc_v3_max(hi, sc_v3_load(body->verts + 3 * i));
    }
    double H = hi.y - lo.y;
    inf.body_height = H;
    double rlo = INFINITY, rhi = -INFINITY;
    for (int b = 0; b < rig->nbones; b++) {
        rlo = fmin(rlo, fmin(rig->bone[b].head.y, rig->bone[b].tail.y));
        rhi = fmax(rhi, fmax(rig->bone[b].head.y, rig->bone[b].tail.y));
    }
    if (!(rhi - rlo > 1e-6)) return sc_fail(err, SC_EINPUT, "fit: the skeleton has no height");
    int cap = 2 * body->ntris + 16;
    double *pts = malloc((size_t)cap * 2 * sizeof *pts);
    sc_slice_cluster cl[64];
    sc_sdf g;
    memset(&g, 0, sizeof g);
    if (!pts) return sc_fail(err, SC_EIO, "out of memory");
    int rc = sc_sdf_build(body, H / 100, 0.05 * H, &g, err);
    if (!rc) rc = sc_body_landmarks_find(body, &inf.landmarks, err);
    if (rc) {
        sc_sdf_free(&g);
        free(pts);
        return rc;
    }
    /* 1. scale and place: lowest joint 2 % of the height above the floor, top 2.5 % below the crown */
    double s = H / ((rhi - rlo) * 1.045);
    inf.scale = s;
    sc_vec3 root = rig->bone[0].head;
    double root_y = lo.y + 0.02 * H + (root.y - rlo) * s;
    int nc = sc_body_slice(body, root_y, 0.02 * H, pts, cl, 64);
    double cx = 0.5 * (lo.x + hi.x), cz = 0.5 * (lo.z + hi.z);
    for (int i = 0, best = -1; i < nc; i++) /* the cluster around the centre: the pelvis */
        if (cl[i].x0 <= cx && cl[i].x1 >= cx && (best < 0 || cl[i].n > cl[best].n)) {
            best = i;
            cz = cl[i].cz;
        }
    for (int b = 0; b < rig->nbones; b++) {
        sc_rig_bone *x = &rig->bone[b];
        sc_vec3 *p[2] = {&x->head, &x->tail};
        for (int k = 0; k < 2; k++) *p[k] = sc_v3(cx + (p[k]->x - root.x) * s, lo.y + 0.02 * H + (p[k]->y - rlo) * s, cz + (p[k]->z - root.z) * s);
    }
    sc_vec3 scaled[SC_MAX_BONES]; /* the report's reference: the skeleton scaled to the body */
    for (int b = 0; b < rig->nbones; b++) {
        scaled[b] = rig->bone[b].head;
        inf.joint_how[b] = "scaled to the body's height";
    }
    /* 2. legs onto the body's legs: the cross-section at the knee */
    for (int b = 1; b < rig->nbones && inf.legs < 2; b++) {
        sc_rig_bone *x = &rig->bone[b];
        if (x->parent != 0 || bone_dir(x).y > -0.7) continue;
        int knee = -1;
        for (int c = 0; c < rig->nbones; c++)
            if (rig->bone[c].parent == b) knee = c;
        sc_vec3 k = knee >= 0 ? rig->bone[knee].head : x->tail;
        nc = sc_body_slice(body, k.y, 0.02 * H, pts, cl, 64);
        int best = -1;
        for (int i = 0; i < nc; i++) {
            double d = k.x < cl[i].x0 ? cl[i].x0 - k.x : k.x > cl[i].x1 ? k.x - cl[i].x1 : 0;
            double db = best < 0 ? INFINITY : k.x < cl[best].x0 ? cl[best].x0 - k.x : k.x > cl[best].x1 ? k.x - cl[best].x1 : 0;
            if (d < db || (d == db && best >= 0 && fabs(cl[i].cx - k.x) < fabs(cl[best].cx - k.x))) best = i;
        }
        if (best < 0) continue;
        sc_vec3 d = sc_v3(cl[best].cx - k.x, 0, cl[best].cz - k.z);
        for (int c = 0; c < rig->nbones; c++)
            if (is_below(rig, c, b)) {
                rig->bone[c].head = sc_v3_add(rig->bone[c].head, d);
                rig->bone[c].tail = sc_v3_add(rig->bone[c].tail, d);
            }
        inf.leg_shift[inf.legs++] = sc_v3_norm(d);
        for (int c = 0; c < rig->nbones; c++)
            if (is_below(rig, c, b)) inf.joint_how[c] = "leg moved onto the body's leg at the knee";
    }
    /* 3. arms: turned to where they lie deepest, then scaled to the fingertips */
    int roots[2];
    inf.arms = arm_roots(rig, roots);
    for (int i = 0; i < inf.arms; i++) {
        int r = roots[i];
        sc_vec3 c = rig->bone[r].head, d0 = bone_dir(&rig->bone[r]);
        sc_vec3 down = sc_v3_normalize(sc_v3_cross(d0, sc_v3(0, -1, 0))), fwd = sc_v3(d0.x > 0 ? -1 : 1, 0, 0);
        sc_rig saved = *rig;
        double best = -INFINITY, bt = 0, bp = 0;
        for (double th = -15; th <= 85; th += 2.5)
            for (double ph = -30; ph <= 30; ph += 5) {
                *rig = saved;
                sc_quat q = sc_q_mul(sc_q_axis_angle(fwd, ph * SC_PI / 180), sc_q_axis_angle(down, th * SC_PI / 180));
                move_chain(rig, r, c, q, 1);
                double v = chain_depth(rig, r, &g, 0.05 * H);
                if (v > best) {
                    best = v;
                    bt = th;
                    bp = ph;
                }
            }
        *rig = saved;
        sc_quat q = sc_q_mul(sc_q_axis_angle(fwd, bp * SC_PI / 180), sc_q_axis_angle(down, bt * SC_PI / 180));
        move_chain(rig, r, c, q, 1);
        /* laid along the body's arm, then the forearm and hand scaled about the elbow to end 1 cm
           inside the fingertips (a march from the elbow towards the hand's end while inside) */
        centre_limb(rig, r, body, H);
        int mid = only_child(rig, r), end = r;
        for (int b = 0; b < rig->nbones; b++)
            if (is_below(rig, b, r) && !has_child(rig, b)) end = b;
        double k = 1;
        if (mid >= 0) {
            sc_vec3 e = rig->bone[mid].head, tip = rig->bone[end].tail, u = sc_v3_normalize(sc_v3_sub(tip, e));
            double len = sc_v3_dist(tip, e), t = 0.5 * len;
            while (t < 1.6 * len && sc_sdf_eval(&g, sc_v3_add(e, sc_v3_scale(u, t + 0.005 * H))) < 0) t += 0.005 * H;
            k = fmin(1.4, fmax(0.7, (t - 0.01) / len));
            move_chain(rig, mid, e, sc_q_identity(), k);
            centre_limb(rig, r, body, H);
        }
        for (int b = 0; b < rig->nbones; b++)
            if (is_below(rig, b, r)) inf.joint_how[b] = "arm turned into the body's, laid on its axes, forearm to the fingertips";
        /* 5. shoulder, elbow and wrist at the body's joint centres */
        if (joints_at_landmarks) place_arm(rig, r, rig->bone[r].head.x >= inf.landmarks.cx ? 0 : 1, body, &inf.landmarks, inf.joint_how);
        inf.arm_down_deg[i] = bt;
        inf.arm_forward_deg[i] = bp;
        inf.arm_length_scale[i] = k;
    }
    /* 4. legs laid along the body's legs (5. hip, knee and ankle at the body's joint centres), feet
       turned along the body's feet */
    double hips_dy = 0;
    int hips_placed = 0;
    for (int b = 1; b < rig->nbones; b++) {
        if (rig->bone[b].parent != 0 || bone_dir(&rig->bone[b]).y > -0.7 || !centre_limb(rig, b, body, H)) continue;
        for (int c = 0; c < rig->nbones; c++)
            if (is_below(rig, c, b)) inf.joint_how[c] = "leg laid on the axes of the body's leg";
        const double dy = joints_at_landmarks ? place_leg(rig, b, body, &inf.landmarks, inf.joint_how) : 0;
        if (dy != 0) hips_dy += dy, hips_placed++;
        const int shin = only_child(rig, b), foot = shin >= 0 ? only_child(rig, shin) : -1;
        if (foot >= 0 && !has_child(rig, foot) && fabs(aim_foot(rig, foot, body, lo.y)) > 0) inf.foot_turned[foot] = 1;
    }
    /* the root (the pelvis) keeps the skeleton's height above its hips */
    if (hips_placed) {
        rig->bone[0].head.y += hips_dy / hips_placed;
        inf.joint_how[0] = "root: moved up or down with the hips (their mean), the skeleton's height above them kept";
    }
    if (joints_at_landmarks) place_neck(rig, body, &inf.landmarks, inf.joint_how);
    inf.njoints = rig->nbones;
    for (int b = 0; b < rig->nbones; b++) {
        snprintf(inf.joint_name[b], SC_NAME_LEN, "%s", rig->bone[b].name);
        sc_v3_store(inf.joint_pos + 3 * b, rig->bone[b].head);
        sc_v3_store(inf.joint_scaled + 3 * b, scaled[b]);
        inf.joint_moved[b] = sc_v3_dist(rig->bone[b].head, scaled[b]);
    }
    sc_rig_hinge_axes_to_limbs(rig);
    sc_sdf_free(&g);
    free(pts);
    if (info) *info = inf;
    return SC_OK;
}

void sc_fit_info_shift_y(sc_fit_info *info, double dy)
{
    for (int b = 0; b < info->njoints; b++) {
        info->joint_pos[3 * b + 1] += dy;
        info->joint_scaled[3 * b + 1] += dy;
    }
    sc_body_landmarks *l = &info->landmarks;
    l->ground += dy;
    l->crown += dy;
    sc_vec3 *p[5] = {&l->crotch, &l->armpit[0], &l->armpit[1], &l->neck_base, &l->neck_narrowest};
    for (int i = 0; i < 5; i++) p[i]->y += dy;
}

/* ---- fixed-node boxes ------------------------------------------------------------------- */

/* The first fixed node of b outside the body, as a fraction of the nodes (0 heel .. 1 toe for
 * a sole, whose layers run from fixed_from to fixed_to); -1 when all are inside. With g, a
 * sole's bottom nodes count as inside within `tol` of the skin (a rounded sole curves up at its
 * edges and heel: they stay in the envelope's flesh). */
static double first_outside(const sc_rig_bone *b, const sc_trimesh *body, double radius, double rmin, double rmax, int shape, double ground,
                            const sc_sdf *g, double tol)
{
    double pts[3 * 256];
    int n = sc_rig_fixed_points(b, radius, rmin, rmax, shape, ground, pts, 256);
    const int sole = (b->fixed_shape ? b->fixed_shape : shape) == SC_FIXED_SOLE;
    for (int i = 0; i < n; i++) {
        double p[3] = {pts[3 * i], pts[3 * i + 1], pts[3 * i + 2]};
        if (g && sole && p[1] < ground + b->fixed_clearance + 1e-9 && sc_sdf_eval(g, sc_v3_load(p)) < tol) continue;
        if (sc_winding_number(body, p) < 0.5) return n > 1 ? (double)i / (n - 1) : 0;
    }
    return -1;
}

static int all_inside(const sc_rig_bone *b, const sc_trimesh *body, double radius, double rmin, double rmax, int shape, double ground)
{
    return first_outside(b, body, radius, rmin, rmax, shape, ground, NULL, 0) < 0;
}

int sc_rig_fit_fixed(sc_rig *rig, const sc_trimesh *body, double radius, double radius_min, double radius_max, int shape)
{
    double ground = INFINITY, top = -INFINITY;
    for (int i = 0; i < body->nverts; i++) {
        ground = fmin(ground, body->verts[3 * i + 1]);
        top = fmax(top, body->verts[3 * i + 1]);
    }
    double H = top - ground;
    int changed = 0, have_sdf = 0;
    sc_sdf g;
    memset(&g, 0, sizeof g);
    for (int bi = 0; bi < rig->nbones; bi++) {
        sc_rig_bone *b = &rig->bone[bi];
        if (b->fixed_given) continue;
        sc_vec3 d = bone_dir(b);
        int foot = !has_child(rig, bi) && b->head.y - ground < 0.125 * H && fabs(d.y) < 0.8;
        if (foot) {
            /* the body around the foot, below the ankle: its extent along the foot's horizontal
               direction (heel to toe) and across it */
            sc_vec3 f = sc_v3_normalize(sc_v3(d.x, 0, d.z)), side = sc_v3_cross(sc_v3(0, 1, 0), f);
            double flen = hypot(b->tail.x - b->head.x, b->tail.z - b->head.z), s0 = 0, s1 = 0, w = 0;
            for (int i = 0; i < body->nverts; i++) {
                sc_vec3 p = sc_v3_sub(sc_v3_load(body->verts + 3 * i), b->head);
                if (p.y > 0 || body->verts[3 * i + 1] - ground > 0.5 * (b->head.y - ground) + 0.02 * H) continue;
                double a = sc_v3_dot(p, f), c = sc_v3_dot(p, side);
                if (a < -flen || a > 2 * flen || fabs(c) > 0.6 * flen) continue;
                s0 = fmin(s0, a);
                s1 = fmax(s1, a);
                w = fmax(w, fabs(c));
            }
            if (!(flen > 1e-6) || !(w > 0)) continue;
            if (!have_sdf) have_sdf = sc_sdf_build(body, H / 150, 0.05 * H, &g, NULL) == SC_OK; /* else the strict test */
            sc_rig_bone t = *b;
            t.fixed_shape = SC_FIXED_SOLE;
            t.fixed_radius = 0.55 * w;
            t.fixed_clearance = fmax(0.003, 0.003 * H);
            t.fixed_from = fmax(-1, (s0 + 0.35 * w) / flen);
            t.fixed_to = fmin(2, (s1 - 0.35 * w) / flen);
            /* shrink until every node is inside, keeping the length longest (a sole resists tipping
               as its length cubed): first the height down to 1 % of the body's (a foot thins
               towards its toes), then the width down to half, then the end a node sticks out of
               (a rounded heel, the toes) down to 60 % of the length, then width and length
               together */
            const double full = t.fixed_to - t.fixed_from, wide = t.fixed_radius;
            t.fixed_height = t.fixed_radius;
            double out;
            for (int it = 0;
                 it < 80 && (out = first_outside(&t, body, radius, radius_min, radius_max, shape, ground, have_sdf ? &g : NULL, 0.006 * H)) >= 0;
                 it++) {
                if (t.fixed_height > 0.01 * H) t.fixed_height = fmax(0.01 * H, 0.9 * t.fixed_height);
                else if (t.fixed_radius > 0.5 * wide) t.fixed_radius = fmax(0.5 * wide, 0.92 * t.fixed_radius);
                else if (t.fixed_to - t.fixed_from > 0.6 * full + 1e-9)
                    *(out < 0.5 ? &t.fixed_from : &t.fixed_to) += (out < 0.5 ? 0.04 : -0.04) * full;
                else {
                    t.fixed_radius *= 0.92;
                    double mid = 0.5 * (t.fixed_from + t.fixed_to), half = 0.5 * (t.fixed_to - t.fixed_from) * 0.96;
                    t.fixed_from = mid - half;
                    t.fixed_to = mid + half;
                }
            }
            *b = t;
            changed++;
            continue;
        }
        sc_rig_bone t = *b;
        t.fixed_radius = b->fixed_radius > 0 ? b->fixed_radius : fmin(radius_max, fmax(radius_min, radius * sc_rig_length(b)));
        int it = 0;
        for (; it < 25 && t.fixed_radius > 0.002 && !all_inside(&t, body, radius, radius_min, radius_max, shape, ground); it++)
            t.fixed_radius *= 0.85;
        if (it > 0) {
            *b = t;
            changed++;
        }
    }
    sc_sdf_free(&g);
    return changed;
}

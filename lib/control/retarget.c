#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "control/retarget.h"
#include "io/config.h"
#include "mesh/rig.h"

int sc_retarget_default_opts(sc_retarget_opts *o, sc_err *err)
{
    memset(o, 0, sizeof *o);
    o->unit = 0.056444;
    o->first = 1;
    o->last = -1;
    o->recentre = 1;
    o->hinge_ik = 1;
    snprintf(o->map_where, sizeof o->map_where, "default CMU map");
    /* the CMU map of mesh/rig.c, as YAML list lines "- {name: .., joint: .., tail: .., ...}" */
    const char *list = sc_rig_cmu_map_yaml();
    size_t n = strlen(list);
    char *text = malloc(2 * n + 16);
    if (!text) return sc_fail(err, SC_EIO, "out of memory");
    size_t c = (size_t)sprintf(text, "map:\n");
    for (const char *p = list; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        c += (size_t)sprintf(text + c, "  %.*s\n", (int)len, p);
        p += len + (e ? 1 : 0);
    }
    sc_cfg *cfg;
    int rc = sc_cfg_load_string(text, "default CMU map", &cfg, err);
    free(text);
    if (rc) return rc;
    sc_cfg_node *map = NULL;
    rc = sc_cfg_list(sc_cfg_root(cfg), "map", 1, &map, err);
    for (int i = 0; !rc && i < sc_cfg_len(map) && i < SC_RETARGET_MAX; i++) {
        sc_cfg_node *e = sc_cfg_at(map, i);
        sc_retarget_entry *x = &o->map[o->nmap];
        if ((rc = sc_cfg_string(e, "name", NULL, x->bone, sizeof x->bone, err)) ||
            (rc = sc_cfg_string(e, "joint", NULL, x->joint, sizeof x->joint, err)) ||
            (rc = sc_cfg_string(e, "tail", "", x->tail, sizeof x->tail, err)))
            break;
        snprintf(x->where, sizeof x->where, "default CMU map");
        o->nmap++;
    }
    sc_cfg_free(cfg);
    return rc;
}

static int swap_sub(const char *name, const char *a, const char *b, char *out, size_t size)
{
    const char *p = strstr(name, a);
    if (!p) return 0;
    snprintf(out, size, "%.*s%s%s", (int)(p - name), name, b, p + strlen(a));
    return 1;
}

void sc_retarget_mirror_name(const char *name, char *out, size_t size)
{
    static const char *const pairs[][2] = {{"Left", "Right"}, {"Right", "Left"}, {"left", "right"}, {"right", "left"},
                                           {"LEFT", "RIGHT"}, {"RIGHT", "LEFT"}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (swap_sub(name, pairs[i][0], pairs[i][1], out, size)) return;
    snprintf(out, size, "%s", name);
    size_t n = strlen(name);
    if (n >= 2 && (name[0] == 'l' || name[0] == 'r' || name[0] == 'L' || name[0] == 'R') && (name[1] == '_' || name[1] == '.')) {
        out[0] = name[0] == 'l' ? 'r' : name[0] == 'r' ? 'l' : name[0] == 'L' ? 'R' : 'L';
        return;
    }
    if (n >= 2 && (name[0] == 'L' || name[0] == 'R') && isupper((unsigned char)name[1])) { /* LHipJoint */
        out[0] = name[0] == 'L' ? 'R' : 'L';
        return;
    }
    if (n >= 2 && (name[n - 2] == '_' || name[n - 2] == '.') && strchr("lrLR", name[n - 1])) {
        char c = name[n - 1];
        out[n - 1] = c == 'l' ? 'r' : c == 'r' ? 'l' : c == 'L' ? 'R' : 'L';
    }
}

/* The smallest rotation taking unit a to unit b. */
static sc_quat q_between(sc_vec3 a, sc_vec3 b)
{
    double c = sc_v3_dot(a, b);
    sc_vec3 ax = sc_v3_cross(a, b);
    if (c < -1 + 1e-12) { /* opposite: a half turn about any normal of a */
        sc_vec3 t = fabs(a.x) < 0.9 ? sc_v3(1, 0, 0) : sc_v3(0, 1, 0);
        return sc_q_axis_angle(sc_v3_cross(a, t), SC_PI);
    }
    sc_quat q = {1 + c, ax.x, ax.y, ax.z};
    return sc_q_normalize(q);
}

/* The hinge rotation (about unit axis a) closest to the local rotation l: SC_HINGE_TWIST keeps
 * the twist of l about a (swing-twist); SC_HINGE_DIRECTION turns the bone (rest direction c) to
 * where l points it as nearly as a rotation about a can: the signed angle between the
 * projections of c and l c on the plane normal to a. */
static sc_quat hinge_fit(sc_quat l, sc_vec3 a, sc_vec3 c, int mode)
{
    if (mode == SC_HINGE_TWIST) return sc_kin_twist(l, a);
    c = sc_v3_normalize(c);
    sc_vec3 d = sc_q_rotate(l, c);
    sc_vec3 pc = sc_v3_sub(c, sc_v3_scale(a, sc_v3_dot(a, c))), pd = sc_v3_sub(d, sc_v3_scale(a, sc_v3_dot(a, d)));
    if (sc_v3_norm(pc) < 1e-9 || sc_v3_norm(pd) < 1e-9) return sc_kin_twist(l, a); /* bone along the axis */
    double th = atan2(sc_v3_dot(a, sc_v3_cross(pc, pd)), sc_v3_dot(pc, pd));
    return sc_q_axis_angle(a, th);
}

static sc_vec3 bone_dir(const sc_model *m, int j)
{
    return sc_v3_normalize(sc_v3_sub(sc_v3_load(m->bone_end + 3 * j), sc_v3_load(m->joint_pos + 3 * j)));
}

/* Character bone origins for world rotations Q, the root at the origin (only differences matter). */
static void fk_positions(const sc_model *m, const sc_quat *Q, sc_vec3 *P)
{
    P[0] = sc_v3(0, 0, 0);
    for (int j = 1; j < m->nbones; j++) {
        int p = m->parent[j];
        P[j] = sc_v3_add(P[p], sc_q_rotate(Q[p], sc_v3_sub(sc_v3_load(m->joint_pos + 3 * j), sc_v3_load(m->joint_pos + 3 * p))));
    }
}

static sc_vec3 bvh_pos(const sc_xform *W, int j, int mirror)
{
    sc_vec3 p = W[j].p;
    if (mirror) p.x = -p.x;
    return p;
}

/* Angle of the direction fit of local rotation l of hinge bone j. */
static double hinge_angle_fit(sc_quat l, const sc_model *m, int j)
{
    sc_vec3 a = sc_v3_normalize(sc_v3_load(m->hinge_axis + 3 * j));
    sc_quat t = hinge_fit(l, a, bone_dir(m, j), SC_HINGE_DIRECTION);
    return sc_kin_twist_angle(t, a);
}

static double wrap_angle(double a) { return remainder(a, 2 * SC_PI); }

/* Two-bone IK: parent t (ball) and hinge bone j. Puts the hinge bone's tail at `target` (relative
 * to t's origin) when reachable (else as near as the hinge allows), choosing the hinge angle
 * on the side of th_fit (the BVH's bend) and the swivel about the target direction that keeps the hinge axis nearest to
 * where the BVH-derived rotation *qt of t holds it (fallback: j's origin nearest `kdir`, the
 * BVH's middle joint). */
static void solve_limb(const sc_model *m, int j, sc_vec3 target, sc_vec3 kdir, double th_fit, int *branch, sc_quat *qt,
                       sc_quat *qj)
{
    int t = m->parent[j];
    sc_vec3 a = sc_v3_normalize(sc_v3_load(m->hinge_axis + 3 * j));
    sc_vec3 u = sc_v3_sub(sc_v3_load(m->joint_pos + 3 * j), sc_v3_load(m->joint_pos + 3 * t));
    sc_vec3 s = sc_v3_sub(sc_v3_load(m->bone_end + 3 * j), sc_v3_load(m->joint_pos + 3 * j));
    /* |u + R(th) s|^2 = |u|^2 + |s|^2 + 2 (A + B cos th + C sin th) */
    double A = sc_v3_dot(s, a) * sc_v3_dot(u, a), B = sc_v3_dot(u, s) - A, C = sc_v3_dot(u, sc_v3_cross(a, s));
    double D = sc_v3_norm(target), K = 0.5 * (D * D - sc_v3_dot(u, u) - sc_v3_dot(s, s)) - A, R = hypot(B, C);
    double th = th_fit;
    if (R > 1e-12) {
        /* two solutions ph +- dl about the fully extended angle ph; take the side the BVH bends
           to, and near full extension (where that side is unclear) the side taken before, so the
           limb does not flicker between the two */
        double ph = atan2(C, B), dl = acos(fmax(-1.0, fmin(1.0, K / R))), d = wrap_angle(th_fit - ph);
        if (fabs(d) > 2 * SC_PI / 180 || !*branch) *branch = d >= 0 ? 1 : -1;
        th = ph + *branch * dl;
    }
    sc_quat qh = sc_q_axis_angle(a, th);
    if (D < 1e-9) {
        *qj = sc_q_normalize(sc_q_mul(*qt, qh));
        return;
    }
    sc_vec3 dir = sc_v3_scale(target, 1.0 / D);
    sc_vec3 v = sc_v3_add(u, sc_q_rotate(qh, s));
    sc_quat q1 = sc_q_normalize(sc_q_mul(q_between(sc_v3_normalize(sc_q_rotate(*qt, v)), dir), *qt));
    /* swivel about the target direction: the hinge axis as near as it gets to where the BVH's
       parent segment holds it (well defined for a straight limb, unlike the middle joint's
       position, whose projection then vanishes); the middle joint only as a fallback */
    sc_vec3 k = sc_q_rotate(q1, a), kt = sc_q_rotate(*qt, a);
    sc_vec3 pk = sc_v3_sub(k, sc_v3_scale(dir, sc_v3_dot(dir, k))), pt = sc_v3_sub(kt, sc_v3_scale(dir, sc_v3_dot(dir, kt)));
    if (sc_v3_norm(pk) < 0.1 || sc_v3_norm(pt) < 0.1) {
        k = sc_q_rotate(q1, u);
        pk = sc_v3_sub(k, sc_v3_scale(dir, sc_v3_dot(dir, k)));
        pt = sc_v3_sub(kdir, sc_v3_scale(dir, sc_v3_dot(dir, kdir)));
    }
    double psi = 0;
    if (sc_v3_norm(pk) > 1e-9 && sc_v3_norm(pt) > 1e-9) psi = atan2(sc_v3_dot(dir, sc_v3_cross(pk, pt)), sc_v3_dot(pk, pt));
    *qt = sc_q_normalize(sc_q_mul(sc_q_axis_angle(dir, psi), q1));
    *qj = sc_q_normalize(sc_q_mul(*qt, qh));
}

static sc_quat reflect_q(sc_quat q)
{
    sc_quat r = {q.w, q.x, -q.y, -q.z};
    return r;
}

static int find_bone(const sc_model *m, const char *name)
{
    for (int j = 0; j < m->nbones; j++)
        if (!strcmp(m->bone_name[j], name)) return j;
    return -1;
}

int sc_retarget(const sc_bvh *bvh, const char *bvh_name, const sc_model *m, const sc_retarget_opts *o,
                sc_motion *out, sc_retarget_info *info, sc_err *err)
{
    memset(out, 0, sizeof *out);
    sc_retarget_info inf;
    memset(&inf, 0, sizeof inf);
    int nb = m->nbones;
    if (nb < 1 || nb > SC_BODY_MAX_BONES) return sc_fail(err, SC_EINPUT, "retarget: the character has %d bones", nb);
    if (!(o->unit > 0)) return sc_fail(err, SC_EINPUT, "retarget: unit %g m must be > 0", o->unit);
    /* the map: every entry names a character bone, every bone has exactly one entry */
    int entry_of[SC_BODY_MAX_BONES];
    for (int j = 0; j < nb; j++) entry_of[j] = -1;
    for (int i = 0; i < o->nmap; i++) {
        int j = find_bone(m, o->map[i].bone);
        if (j < 0)
            return sc_fail(err, SC_EINPUT, "%s: the retarget map names bone '%s', which the character does not have",
                           o->map[i].where, o->map[i].bone);
        if (entry_of[j] >= 0)
            return sc_fail(err, SC_EINPUT, "%s: bone '%s' appears twice in the retarget map", o->map[i].where, o->map[i].bone);
        entry_of[j] = i;
    }
    for (int j = 0; j < nb; j++)
        if (entry_of[j] < 0)
            return sc_fail(err, SC_EINPUT, "%s: character bone '%s' has no entry in the retarget map (every bone needs a "
                           "BVH joint)", o->map_where, m->bone_name[j]);
    /* source BVH joints per bone (the mirror bone's when mirroring) */
    int J[SC_BODY_MAX_BONES], Tl[SC_BODY_MAX_BONES];
    for (int j = 0; j < nb; j++) {
        int src = j;
        if (o->mirror) {
            char mn[SC_NAME_LEN];
            sc_retarget_mirror_name(m->bone_name[j], mn, sizeof mn);
            int mj = find_bone(m, mn);
            if (mj >= 0) src = mj;
        }
        const sc_retarget_entry *e = &o->map[entry_of[src]];
        J[j] = sc_bvh_find(bvh, e->joint);
        if (J[j] < 0)
            return sc_fail(err, SC_EINPUT, "%s: bone '%s' is mapped to BVH joint '%s', which %s does not have", e->where,
                           e->bone, e->joint, bvh_name);
        if (e->tail[0]) {
            Tl[j] = sc_bvh_find(bvh, e->tail);
            if (Tl[j] < 0)
                return sc_fail(err, SC_EINPUT, "%s: bone '%s' has tail '%s', a BVH joint which %s does not have", e->where,
                               e->bone, e->tail, bvh_name);
        } else {
            Tl[j] = -1;
            for (int c = J[j] + 1; c < bvh->njoints && Tl[j] < 0; c++)
                if (bvh->joints[c].parent == J[j]) Tl[j] = c;
            if (Tl[j] < 0)
                return sc_fail(err, SC_EINPUT, "%s: BVH joint '%s' of bone '%s' has no child to align the bone with; give a "
                               "tail", e->where, e->joint, e->bone);
        }
    }
    /* frame range */
    int first = o->first, last = o->last < 0 ? bvh->nframes + o->last : o->last;
    if (first < 0 || last > bvh->nframes - 1 || first > last || o->last < -bvh->nframes)
        return sc_fail(err, SC_EINPUT, "%s: frame range [%d, %d] is outside the clip, which has frames 0..%d (frame 0 is "
                       "the T-pose of the CMU conversions)", bvh_name, o->first, o->last, bvh->nframes - 1);
    if (last - first < 1)
        return sc_fail(err, SC_EINPUT, "%s: frame range [%d, %d] has a single frame; at least two are needed", bvh_name, first, last);
    inf.first = first;
    inf.last = last;

    sc_xform *W = malloc((size_t)bvh->njoints * sizeof *W);
    if (!W) return sc_fail(err, SC_EIO, "out of memory");
    sc_bvh_world(bvh, -1, W); /* rest: every channel zero, every world rotation identity */
    sc_quat A[SC_BODY_MAX_BONES];
    sc_vec3 rest[SC_BODY_MAX_BONES]; /* BVH rest positions of the source joints (m, reflected) */
    for (int j = 0; j < nb; j++) {
        sc_vec3 D = sc_v3_sub(W[Tl[j]].p, W[J[j]].p), c = sc_v3_sub(sc_v3_load(m->bone_end + 3 * j), sc_v3_load(m->joint_pos + 3 * j));
        rest[j] = sc_v3_scale(W[J[j]].p, o->unit);
        if (o->mirror) {
            D.x = -D.x;
            rest[j].x = -rest[j].x;
        }
        if (!(sc_v3_norm(D) > 1e-9)) {
            free(W);
            return sc_fail(err, SC_EINPUT, "%s: bone '%s': BVH segment %s -> %s has zero length in the rest pose", bvh_name,
                           m->bone_name[j], bvh->joints[J[j]].name, bvh->joints[Tl[j]].name);
        }
        if (!(sc_v3_norm(c) > 1e-9)) {
            free(W);
            return sc_fail(err, SC_EINPUT, "retarget: character bone '%s' has zero length", m->bone_name[j]);
        }
        A[j] = q_between(sc_v3_normalize(c), sc_v3_normalize(D));
        double ang = sc_v3_norm(sc_q_log(A[j])) * 180 / SC_PI;
        if (ang > inf.max_align_deg) {
            inf.max_align_deg = ang;
            inf.align_bone = j;
        }
    }
    /* leg length: hip to ankle along the chain above the bone with the lowest rest joint */
    int low = -1;
    for (int j = 1; j < nb; j++)
        if (low < 0 || m->joint_pos[3 * j + 1] < m->joint_pos[3 * low + 1]) low = j;
    for (int c = low; c > 0 && m->parent[c] > 0; c = m->parent[c]) {
        int p = m->parent[c];
        inf.leg_char += sc_v3_dist(sc_v3_load(m->joint_pos + 3 * c), sc_v3_load(m->joint_pos + 3 * p));
        inf.leg_bvh += sc_v3_dist(rest[c], rest[p]);
    }
    inf.root_scale = o->root_scale > 0 ? o->root_scale : (inf.leg_bvh > 1e-6 ? inf.leg_char / inf.leg_bvh : 1.0);

    int n = last - first + 1, rc = sc_motion_alloc(out, n, nb, bvh->frame_time, err);
    if (rc) {
        free(W);
        return rc;
    }
    /* hinge chains solved by IK: a hinge bone whose parent is a (non-root) ball joint */
    int ik[SC_BODY_MAX_BONES];
    double limb_scale[SC_BODY_MAX_BONES];
    int branch[SC_BODY_MAX_BONES];
    for (int j = 0; j < nb; j++) {
        int t = m->parent[j];
        ik[j] = o->hinge_ik && j > 0 && m->joint_type[j] == SC_JOINT_HINGE && t > 0 && m->joint_type[t] == SC_JOINT_BALL;
        if (!ik[j]) continue;
        sc_vec3 hip = sc_v3_load(m->joint_pos + 3 * t), knee = sc_v3_load(m->joint_pos + 3 * j), ankle = sc_v3_load(m->bone_end + 3 * j);
        sc_vec3 bh = W[J[t]].p, bk = W[J[j]].p, ba = W[Tl[j]].p; /* rest: lengths need no reflection */
        /* the BVH limb's full reach (its joints straighten it) maps to the character's, which a
           hinge whose axis is not normal to both bones cannot fully straighten */
        sc_vec3 a = sc_v3_normalize(sc_v3_load(m->hinge_axis + 3 * j)), u = sc_v3_sub(knee, hip), s = sc_v3_sub(ankle, knee);
        double A = sc_v3_dot(s, a) * sc_v3_dot(u, a), R = hypot(sc_v3_dot(u, s) - A, sc_v3_dot(u, sc_v3_cross(a, s)));
        double reach = sqrt(fmax(0, sc_v3_dot(u, u) + sc_v3_dot(s, s) + 2 * (A + R)));
        double lb = (sc_v3_dist(bh, bk) + sc_v3_dist(bk, ba)) * o->unit;
        limb_scale[j] = lb > 1e-9 ? reach / lb : 1;
        branch[j] = 0;
    }
    for (int f = 0; f < n; f++) {
        sc_bvh_world(bvh, first + f, W);
        sc_quat Q[SC_BODY_MAX_BONES];
        sc_vec3 P[SC_BODY_MAX_BONES];
        sc_quat *L = out->local + (size_t)f * nb;
        for (int j = 0; j < nb; j++) {
            sc_quat s = o->mirror ? reflect_q(W[J[j]].q) : W[J[j]].q;
            Q[j] = sc_q_normalize(sc_q_mul(s, A[j])); /* the BVH segment's world rotation */
        }
        for (int j = 1; j < nb; j++) {
            if (!ik[j]) continue;
            int t = m->parent[j];
            fk_positions(m, Q, P);
            sc_vec3 hip = bvh_pos(W, J[t], o->mirror), knee = bvh_pos(W, J[j], o->mirror), ankle = bvh_pos(W, Tl[j], o->mirror);
            double sc = o->unit * limb_scale[j];
            sc_vec3 target = sc_v3_scale(sc_v3_sub(ankle, hip), sc), kdir = sc_v3_scale(sc_v3_sub(knee, hip), sc);
            double th_fit = hinge_angle_fit(sc_q_mul(sc_q_conj(Q[t]), Q[j]), m, j);
            solve_limb(m, j, target, kdir, th_fit, &branch[j], &Q[t], &Q[j]);
            fk_positions(m, Q, P);
            sc_vec3 tip = sc_v3_add(P[j], sc_q_rotate(Q[j], sc_v3_sub(sc_v3_load(m->bone_end + 3 * j), sc_v3_load(m->joint_pos + 3 * j))));
            inf.max_hinge_tip_error = fmax(inf.max_hinge_tip_error, sc_v3_dist(sc_v3_sub(tip, P[t]), target));
        }
        for (int j = 0; j < nb; j++) {
            if (j == 0) {
                L[0] = Q[0];
                continue;
            }
            sc_quat qp = Q[m->parent[j]];
            sc_quat l = sc_q_normalize(sc_q_mul(sc_q_conj(qp), Q[j]));
            if (m->joint_type[j] == SC_JOINT_HINGE) {
                sc_vec3 ax = sc_v3_normalize(sc_v3_load(m->hinge_axis + 3 * j)), c = bone_dir(m, j);
                sc_quat t = ik[j] ? sc_kin_twist(l, ax) /* exact: IK made it a pure hinge rotation */
                                  : hinge_fit(l, ax, c, o->hinge_fit);
                double sw = sc_q_angle_between(l, t) * 180 / SC_PI;
                if (sw > inf.max_hinge_swing_deg) {
                    inf.max_hinge_swing_deg = sw;
                    inf.hinge_bone = j;
                }
                if (!ik[j]) {
                    double len = sc_v3_dist(sc_v3_load(m->bone_end + 3 * j), sc_v3_load(m->joint_pos + 3 * j));
                    inf.max_hinge_tip_error = fmax(inf.max_hinge_tip_error, len * sc_v3_dist(sc_q_rotate(l, c), sc_q_rotate(t, c)));
                }
                l = t;
                Q[j] = sc_q_normalize(sc_q_mul(qp, l)); /* the hinge bone deviates; its children do not */
            }
            L[j] = l;
        }
        sc_vec3 p = W[J[0]].p;
        if (o->mirror) p.x = -p.x;
        sc_v3_store(out->root_pos + 3 * f, sc_v3_scale(p, o->unit * inf.root_scale));
    }
    free(W);
    if (o->recentre) {
        double x0 = out->root_pos[0], z0 = out->root_pos[2];
        for (int f = 0; f < n; f++) {
            out->root_pos[3 * f] -= x0;
            out->root_pos[3 * f + 2] -= z0;
        }
    }
    sc_motion_make_continuous(out);
    if (info) *info = inf;
    return SC_OK;
}

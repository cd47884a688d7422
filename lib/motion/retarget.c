/* BVH -> character retargeting and the contact-preserving fit (see retarget.h). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "motion/retarget.h"
#include "model/world.h"

static int swap_sub(const char *name, const char *a, const char *b, char *out, size_t size)
{
    const char *p = strstr(name, a);
    if (!p) return 0;
    snprintf(out, size, "%.*s%s%s", (int)(p - name), name, b, p + strlen(a));
    return 1;
}

void sc_retarget_mirror_name(const char *name, char *out, size_t size)
{
    static const char *const pairs[][2] = {{"Left", "Right"}, {"Right", "Left"}, {"left", "right"},
                                           {"right", "left"}, {"LEFT", "RIGHT"}, {"RIGHT", "LEFT"}};
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

/* Two-bone IK: parent t (ball) and hinge bone j. Puts the point s of the hinge bone (relative to
 * its origin, rest frame: its tail, or a child's joint) at `target` (relative
 * to t's origin) when reachable (else as near as the hinge allows), choosing the hinge angle
 * on the side of th_fit (the BVH's bend, remembered in *branch near full extension; branch NULL: always
 * the side of th_fit) and the swivel about the target direction that keeps the hinge axis nearest to
 * where the BVH-derived rotation *qt of t holds it (fallback: j's origin nearest `kdir`, the
 * BVH's middle joint). */
static void solve_limb(const sc_model *m, int j, sc_vec3 s, sc_vec3 target, sc_vec3 kdir, double th_fit, int *branch, sc_quat *qt, sc_quat *qj)
{
    int t = m->parent[j];
    sc_vec3 a = sc_v3_normalize(sc_v3_load(m->hinge_axis + 3 * j));
    sc_vec3 u = sc_v3_sub(sc_v3_load(m->joint_pos + 3 * j), sc_v3_load(m->joint_pos + 3 * t));
    /* |u + R(th) s|^2 = |u|^2 + |s|^2 + 2 (A + B cos th + C sin th) */
    double A = sc_v3_dot(s, a) * sc_v3_dot(u, a), B = sc_v3_dot(u, s) - A, C = sc_v3_dot(u, sc_v3_cross(a, s));
    double D0 = sc_v3_norm(target), D = D0, R = hypot(B, C);
    double K = 0.5 * (D * D - sc_v3_dot(u, u) - sc_v3_dot(s, s)) - A;
    double th = th_fit;
    if (R > 1e-12) {
        /* two solutions ph +- dl about the fully extended angle ph; take the side the BVH bends
           to, and near full extension (where that side is unclear) the side taken before, so the
           limb does not flicker between the two */
        double ph = atan2(C, B), dl = acos(fmax(-1.0, fmin(1.0, K / R))), d = wrap_angle(th_fit - ph);
        if (!branch) /* the side of th_fit, whatever the bend */
            th = ph + (wrap_angle(th_fit - ph) >= 0 ? dl : -dl);
        else {
            if (fabs(d) > 2 * SC_PI / 180 || !*branch) *branch = d >= 0 ? 1 : -1;
            th = ph + *branch * dl;
        }
    }
    sc_quat qh = sc_q_axis_angle(a, th);
    if (D0 < 1e-9) {
        *qj = sc_q_normalize(sc_q_mul(*qt, qh));
        return;
    }
    sc_vec3 dir = sc_v3_scale(target, 1.0 / D0);
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

/* Largest (and smallest, *min) distance a hinge about unit a can put the end of s (from the
 * hinge) from the start of u (the parent bone, ending at the hinge). */
static double limb_reach(sc_vec3 a, sc_vec3 u, sc_vec3 s, double *min)
{
    double A = sc_v3_dot(s, a) * sc_v3_dot(u, a), R = hypot(sc_v3_dot(u, s) - A, sc_v3_dot(u, sc_v3_cross(a, s)));
    double c = sc_v3_dot(u, u) + sc_v3_dot(s, s) + 2 * A;
    if (min) *min = sqrt(fmax(0, c - 2 * R));
    return sqrt(fmax(0, c + 2 * R));
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

/* What the stages of sc_retarget share. */
typedef struct retarget_ctx {
    const sc_bvh *bvh;
    const char *bvh_name;
    const sc_model *m;
    const sc_retarget_opts *o;
    int nb;
    int J[SC_BODY_MAX_BONES], Tl[SC_BODY_MAX_BONES]; /* each bone's BVH joint and the joint at its tail */
    sc_quat A[SC_BODY_MAX_BONES];                    /* rest-pose alignment */
    sc_vec3 rest[SC_BODY_MAX_BONES];                 /* BVH rest positions of the source joints (m, reflected) */
    int ik[SC_BODY_MAX_BONES];                       /* hinge bones solved by two-bone IK */
    double limb_scale[SC_BODY_MAX_BONES];
    int branch[SC_BODY_MAX_BONES];
    sc_xform *W; /* [njoints] BVH world transforms of one frame */
} retarget_ctx;

/* The map: every entry names a character bone, every bone has exactly one entry; then the source
 * BVH joints per bone (the mirror bone's when mirroring). */
static int map_joints(retarget_ctx *x, sc_err *err)
{
    const sc_model *m = x->m;
    const sc_retarget_opts *o = x->o;
    const sc_bvh *bvh = x->bvh;
    int nb = x->nb, *J = x->J, *Tl = x->Tl;
    int entry_of[SC_BODY_MAX_BONES];
    for (int j = 0; j < nb; j++) entry_of[j] = -1;
    for (int i = 0; i < o->nmap; i++) {
        int j = find_bone(m, o->map[i].bone);
        if (j < 0)
            return sc_fail(err, SC_EINPUT, "%s: the retarget map names bone '%s', which the character does not have", o->map[i].where,
                           o->map[i].bone);
        if (entry_of[j] >= 0) return sc_fail(err, SC_EINPUT, "%s: bone '%s' appears twice in the retarget map", o->map[i].where, o->map[i].bone);
        entry_of[j] = i;
    }
    for (int j = 0; j < nb; j++)
        if (entry_of[j] < 0)
            return sc_fail(err, SC_EINPUT,
                           "%s: character bone '%s' has no entry in the retarget map (every bone needs a "
                           "BVH joint)",
                           o->map_where, m->bone_name[j]);
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
            return sc_fail(err, SC_EINPUT, "%s: bone '%s' is mapped to BVH joint '%s', which %s does not have", e->where, e->bone, e->joint,
                           x->bvh_name);
        if (e->tail[0]) {
            Tl[j] = sc_bvh_find(bvh, e->tail);
            if (Tl[j] < 0)
                return sc_fail(err, SC_EINPUT, "%s: bone '%s' has tail '%s', a BVH joint which %s does not have", e->where, e->bone, e->tail,
                               x->bvh_name);
        } else {
            Tl[j] = -1;
            for (int c = J[j] + 1; c < bvh->njoints && Tl[j] < 0; c++)
                if (bvh->joints[c].parent == J[j]) Tl[j] = c;
            if (Tl[j] < 0)
                return sc_fail(err, SC_EINPUT,
                               "%s: BVH joint '%s' of bone '%s' has no child to align the bone with; give a "
                               "tail",
                               e->where, e->joint, e->bone);
        }
    }
    return SC_OK;
}

/* Rest-pose alignment A_j of every bone (x->W: the BVH's rest pose), the largest in inf. */
static int rest_alignment(retarget_ctx *x, sc_retarget_info *inf, sc_err *err)
{
    const sc_model *m = x->m;
    const sc_retarget_opts *o = x->o;
    const sc_xform *W = x->W;
    for (int j = 0; j < x->nb; j++) {
        sc_vec3 D = sc_v3_sub(W[x->Tl[j]].p, W[x->J[j]].p), c = sc_v3_sub(sc_v3_load(m->bone_end + 3 * j), sc_v3_load(m->joint_pos + 3 * j));
        x->rest[j] = sc_v3_scale(W[x->J[j]].p, o->unit);
        if (o->mirror) {
            D.x = -D.x;
            x->rest[j].x = -x->rest[j].x;
        }
        if (!(sc_v3_norm(D) > 1e-9))
            return sc_fail(err, SC_EINPUT, "%s: bone '%s': BVH segment %s -> %s has zero length in the rest pose", x->bvh_name, m->bone_name[j],
                           x->bvh->joints[x->J[j]].name, x->bvh->joints[x->Tl[j]].name);
        if (!(sc_v3_norm(c) > 1e-9)) return sc_fail(err, SC_EINPUT, "retarget: character bone '%s' has zero length", m->bone_name[j]);
        x->A[j] = q_between(sc_v3_normalize(c), sc_v3_normalize(D));
        double ang = sc_v3_norm(sc_q_log(x->A[j])) * 180 / SC_PI;
        if (ang > inf->max_align_deg) {
            inf->max_align_deg = ang;
            inf->align_bone = j;
        }
    }
    return SC_OK;
}

/* Leg length: hip to ankle along the chain above the bone with the lowest rest joint, on the
 * character and on the BVH; their ratio is the root scale unless given. */
static void leg_lengths(const retarget_ctx *x, sc_retarget_info *inf)
{
    const sc_model *m = x->m;
    int low = -1;
    for (int j = 1; j < x->nb; j++)
        if (low < 0 || m->joint_pos[3 * j + 1] < m->joint_pos[3 * low + 1]) low = j;
    for (int c = low; c > 0 && m->parent[c] > 0; c = m->parent[c]) {
        int p = m->parent[c];
        inf->leg_char += sc_v3_dist(sc_v3_load(m->joint_pos + 3 * c), sc_v3_load(m->joint_pos + 3 * p));
        inf->leg_bvh += sc_v3_dist(x->rest[c], x->rest[p]);
    }
    inf->root_scale = x->o->root_scale > 0 ? x->o->root_scale : (inf->leg_bvh > 1e-6 ? inf->leg_char / inf->leg_bvh : 1.0);
}

/* Hinge chains solved by IK: a hinge bone whose parent is a (non-root) ball joint (x->W: the
 * BVH's rest pose). */
static void ik_setup(retarget_ctx *x)
{
    const sc_model *m = x->m;
    const sc_xform *W = x->W;
    for (int j = 0; j < x->nb; j++) {
        int t = m->parent[j];
        x->ik[j] = x->o->hinge_ik && j > 0 && m->joint_type[j] == SC_JOINT_HINGE && t > 0 && m->joint_type[t] == SC_JOINT_BALL;
        if (!x->ik[j]) continue;
        sc_vec3 hip = sc_v3_load(m->joint_pos + 3 * t), knee = sc_v3_load(m->joint_pos + 3 * j), ankle = sc_v3_load(m->bone_end + 3 * j);
        sc_vec3 bh = W[x->J[t]].p, bk = W[x->J[j]].p, ba = W[x->Tl[j]].p; /* rest: lengths need no reflection */
        /* the BVH limb's full reach (its joints straighten it) maps to the character's, which a
           hinge whose axis is not normal to both bones cannot fully straighten */
        double reach = limb_reach(sc_v3_normalize(sc_v3_load(m->hinge_axis + 3 * j)), sc_v3_sub(knee, hip), sc_v3_sub(ankle, knee), NULL);
        double lb = (sc_v3_dist(bh, bk) + sc_v3_dist(bk, ba)) * x->o->unit;
        x->limb_scale[j] = lb > 1e-9 ? reach / lb : 1;
        x->branch[j] = 0;
    }
}

/* Local rotations L (and the root position) of BVH frame `frame`: aligned segment rotations, IK
 * limbs, hinges fitted. */
static void retarget_frame(retarget_ctx *x, int frame, sc_quat *L, double *root_pos, sc_retarget_info *inf)
{
    const sc_model *m = x->m;
    const sc_retarget_opts *o = x->o;
    const int *J = x->J, *Tl = x->Tl, *ik = x->ik;
    int nb = x->nb;
    sc_xform *W = x->W;
    sc_bvh_world(x->bvh, frame, W);
    sc_quat Q[SC_BODY_MAX_BONES];
    sc_vec3 P[SC_BODY_MAX_BONES];
    for (int j = 0; j < nb; j++) {
        sc_quat s = o->mirror ? reflect_q(W[J[j]].q) : W[J[j]].q;
        Q[j] = sc_q_normalize(sc_q_mul(s, x->A[j])); /* the BVH segment's world rotation */
    }
    for (int j = 1; j < nb; j++) {
        if (!ik[j]) continue;
        int t = m->parent[j];
        fk_positions(m, Q, P);
        sc_vec3 hip = bvh_pos(W, J[t], o->mirror), knee = bvh_pos(W, J[j], o->mirror), ankle = bvh_pos(W, Tl[j], o->mirror);
        double sc = o->unit * x->limb_scale[j];
        sc_vec3 target = sc_v3_scale(sc_v3_sub(ankle, hip), sc), kdir = sc_v3_scale(sc_v3_sub(knee, hip), sc);
        double th_fit = hinge_angle_fit(sc_q_mul(sc_q_conj(Q[t]), Q[j]), m, j);
        solve_limb(m, j, sc_v3_sub(sc_v3_load(m->bone_end + 3 * j), sc_v3_load(m->joint_pos + 3 * j)), target, kdir, th_fit, &x->branch[j], &Q[t],
                   &Q[j]);
        fk_positions(m, Q, P);
        sc_vec3 tip = sc_v3_add(P[j], sc_q_rotate(Q[j], sc_v3_sub(sc_v3_load(m->bone_end + 3 * j), sc_v3_load(m->joint_pos + 3 * j))));
        inf->max_hinge_tip_error = fmax(inf->max_hinge_tip_error, sc_v3_dist(sc_v3_sub(tip, P[t]), target));
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
            if (sw > inf->max_hinge_swing_deg) {
                inf->max_hinge_swing_deg = sw;
                inf->hinge_bone = j;
            }
            if (!ik[j]) {
                double len = sc_v3_dist(sc_v3_load(m->bone_end + 3 * j), sc_v3_load(m->joint_pos + 3 * j));
                inf->max_hinge_tip_error = fmax(inf->max_hinge_tip_error, len * sc_v3_dist(sc_q_rotate(l, c), sc_q_rotate(t, c)));
            }
            l = t;
            Q[j] = sc_q_normalize(sc_q_mul(qp, l)); /* the hinge bone deviates; its children do not */
        }
        L[j] = l;
    }
    sc_vec3 p = W[J[0]].p;
    if (o->mirror) p.x = -p.x;
    sc_v3_store(root_pos, sc_v3_scale(p, o->unit * inf->root_scale));
}

int sc_retarget(const sc_bvh *bvh, const char *bvh_name, const sc_model *m, const sc_retarget_opts *o, sc_motion *out, sc_retarget_info *info,
                sc_err *err)
{
    memset(out, 0, sizeof *out);
    sc_retarget_info inf;
    memset(&inf, 0, sizeof inf);
    int nb = m->nbones;
    if (nb < 1 || nb > SC_BODY_MAX_BONES) return sc_fail(err, SC_EINPUT, "retarget: the character has %d bones", nb);
    if (!(o->unit > 0)) return sc_fail(err, SC_EINPUT, "retarget: unit %g m must be > 0", o->unit);
    retarget_ctx *x = calloc(1, sizeof *x);
    if (!x) return sc_fail(err, SC_EIO, "out of memory");
    x->bvh = bvh, x->bvh_name = bvh_name, x->m = m, x->o = o, x->nb = nb;
    int rc = map_joints(x, err);
    /* frame range */
    int first = o->first, last = o->last < 0 ? bvh->nframes + o->last : o->last;
    if (!rc && (first < 0 || last > bvh->nframes - 1 || first > last || o->last < -bvh->nframes))
        rc = sc_fail(err, SC_EINPUT,
                     "%s: frame range [%d, %d] is outside the clip, which has frames 0..%d (frame 0 is "
                     "the T-pose of the CMU conversions)",
                     bvh_name, o->first, o->last, bvh->nframes - 1);
    if (!rc && last - first < 1)
        rc = sc_fail(err, SC_EINPUT, "%s: frame range [%d, %d] has a single frame; at least two are needed", bvh_name, first, last);
    if (!rc && !(x->W = malloc((size_t)bvh->njoints * sizeof *x->W))) rc = sc_fail(err, SC_EIO, "out of memory");
    if (rc) goto done;
    inf.first = first;
    inf.last = last;
    sc_bvh_world(bvh, -1, x->W); /* rest: every channel zero, every world rotation identity */
    if ((rc = rest_alignment(x, &inf, err))) goto done;
    leg_lengths(x, &inf);
    int n = last - first + 1;
    if ((rc = sc_motion_alloc(out, n, nb, bvh->frame_time, err))) goto done;
    ik_setup(x);
    for (int f = 0; f < n; f++) retarget_frame(x, first + f, out->local + (size_t)f * nb, out->root_pos + 3 * f, &inf);
    if (o->recentre) {
        double x0 = out->root_pos[0], z0 = out->root_pos[2];
        for (int f = 0; f < n; f++) {
            out->root_pos[3 * f] -= x0;
            out->root_pos[3 * f + 2] -= z0;
        }
    }
    sc_motion_make_continuous(out);
    if (info) *info = inf;
done:
    free(x->W);
    free(x);
    return rc;
}

/* ---- contact-preserving fit --------------------------------------------------------------- */

static double smoothstep(double x)
{
    x = x < 0 ? 0 : x > 1 ? 1 : x;
    return x * x * (3 - 2 * x);
}

/* Limb ends: bone e whose parent h is a hinge under a ball joint t (a foot under the knee,
 * a hand under the elbow): contacts of e are met by two-bone IK of (t, h). */
static int limb_end(const sc_model *m, int e)
{
    if (e <= 0) return 0;
    int h = m->parent[e];
    if (h <= 0 || m->joint_type[h] != SC_JOINT_HINGE) return 0;
    int t = m->parent[h];
    return t > 0 && m->joint_type[t] == SC_JOINT_BALL;
}

/* x[i * stride], i < n: centred box average of half-width r (ends clamped). */
static void box_smooth(double *x, size_t stride, double *tmp, int n, int r)
{
    for (int f = 0; f < n; f++) {
        double s = 0;
        for (int k = f - r; k <= f + r; k++) s += x[(size_t)(k < 0 ? 0 : k >= n ? n - 1 : k) * stride];
        tmp[f] = s / (2 * r + 1);
    }
    for (int f = 0; f < n; f++) x[(size_t)f * stride] = tmp[f];
}

static void frame_fk(const sc_body *b, const sc_motion *mo, int f, sc_bone_kin *kin)
{
    sc_vec3 zero = {0, 0, 0};
    sc_kin_forward_raw(b, sc_v3_load(mo->root_pos + 3 * f), zero, zero, mo->local + (size_t)f * mo->nbones, NULL, NULL, kin);
}

static double lowest_height(const sc_gc_geom *g, int j, const sc_bone_kin *kin)
{
    sc_gc_probe p;
    sc_vec3 zero = {0, 0, 0};
    return sc_gc_lowest(g, j, kin, zero, 0, &p) ? p.height : INFINITY;
}

static sc_vec3 frame_com(const sc_body *b, const sc_bone_kin *kin)
{
    sc_vec3 c = {0, 0, 0};
    for (int j = 0; j < b->nb; j++) c = sc_v3_axpy(b->mass[j] / b->total_mass, sc_kin_com(b, kin, j), c);
    return c;
}

void sc_contact_fit_default_opts(sc_contact_fit_opts *o)
{
    memset(o, 0, sizeof *o);
    o->ramp_time = 0.15;
    o->smooth_time = 0.1;
    o->settle_time = 0.1;
    o->keep_tol = 0.02;
    o->balance = 1;
    o->mu = SC_DEFAULT_FRICTION;
    o->gravity = SC_STANDARD_GRAVITY;
    o->balance_offset = 0.03;
    o->flatten = 0.5;
    o->start_level_time = 0.3;
}

typedef struct fit_ctx {
    const sc_model *m;
    const sc_body *b;
    const sc_gc_geom *g;
    const unsigned char *flags;
    const sc_contact_fit_opts *o;
    int n, nb;
    int isend[SC_BODY_MAX_BONES];
    double straight[SC_BODY_MAX_BONES], side[SC_BODY_MAX_BONES];
    sc_bone_kin *kin;
    double *corr, *tmp; /* [n*nb*3], [n] */
} fit_ctx;

/* Values v[f * stride] given on the contact frames of bone j become a smooth signal: outside the
 * contacts they fade to zero over ramp_time (or blend across a shorter gap), then two box
 * filters of settle_time in all take the kinks out where a contact starts or ends. */
static void ramp(fit_ctx *x, int j, double *v, size_t stride, double frame_time)
{
    int n = x->n, nb = x->nb, prev = -1;
    const unsigned char *flags = x->flags;
    int R = (int)fmax(1, round(x->o->ramp_time / frame_time)), rs = (int)fmax(1, round(0.5 * x->o->settle_time / frame_time));
    for (int f = 0; f < n; f++) {
        if (flags[(size_t)f * nb + j]) {
            prev = f;
            continue;
        }
        int next = -1;
        for (int k = f + 1; k < n && k <= f + 2 * R; k++)
            if (flags[(size_t)k * nb + j]) {
                next = k;
                break;
            }
        double cp = prev >= 0 ? v[(size_t)prev * stride] : 0, cn = next >= 0 ? v[(size_t)next * stride] : 0, c = 0;
        if (prev >= 0 && next >= 0 && next - prev <= 2 * R) c = cp + (cn - cp) * smoothstep((double)(f - prev) / (next - prev));
        else {
            if (prev >= 0 && f - prev < R) c += cp * smoothstep(1 - (double)(f - prev) / R);
            if (next >= 0 && next - f < R) c += cn * smoothstep(1 - (double)(next - f) / R);
        }
        v[(size_t)f * stride] = c;
    }
    box_smooth(v, stride, x->tmp, n, rs);
    box_smooth(v, stride, x->tmp, n, rs);
}

/* Limb ends in contact turn part of the way (flatten of it) towards their rest orientation's
 * up being the world's up, keeping their heading: a flat shoe lands flatter than the capture's
 * foot rolls, so its heel and toe dig in less. */
static void flatten_ends(fit_ctx *x, sc_motion *mo)
{
    int n = x->n, nb = x->nb;
    double *w = x->corr; /* [n*nb*3], first component used */
    double settle = x->o->start_level_time;
    /* a contact the clip starts in and that lasts lies level at first (the whole sole or palm on
       the floor: a start with only a heel edge touching drops the body onto it), then as usual */
    int first_len[SC_BODY_MAX_BONES];
    for (int j = 0; j < nb; j++) {
        first_len[j] = 0;
        while (first_len[j] < n && x->flags[(size_t)first_len[j] * nb + j]) first_len[j]++;
    }
    for (int f = 0; f < n; f++)
        for (int j = 0; j < nb; j++) {
            double a = x->o->flatten, t = f * mo->frame_time;
            if (f < first_len[j] && first_len[j] * mo->frame_time > settle && t < settle) a = fmax(a, 1 - (1 - a) * smoothstep(t / settle));
            w[3 * ((size_t)f * nb + j)] = x->isend[j] && x->flags[(size_t)f * nb + j] ? a : 0;
        }
    for (int j = 0; j < nb; j++)
        if (x->isend[j]) ramp(x, j, w + 3 * (size_t)j, 3 * (size_t)nb, mo->frame_time);
    for (int f = 0; f < n; f++) {
        frame_fk(x->b, mo, f, x->kin);
        for (int e = 0; e < nb; e++) {
            double a = w[3 * ((size_t)f * nb + e)];
            if (!x->isend[e] || a <= 0) continue;
            sc_quat qe = x->kin[e].q, qh = x->kin[x->m->parent[e]].q;
            sc_quat r = q_between(sc_v3_normalize(sc_q_rotate(qe, sc_v3(0, 1, 0))), sc_v3(0, 1, 0));
            sc_quat qn = sc_q_normalize(sc_q_mul(sc_q_slerp(sc_q_identity(), r, fmin(1, a)), qe));
            mo->local[(size_t)f * nb + e] = sc_q_normalize(sc_q_mul(sc_q_conj(qh), qn));
        }
    }
}

/* Moves limb end e (a foot under a knee, a hand under an elbow) of one frame by c (world, m),
 * keeping its world orientation: two-bone IK of its grandparent t and hinge parent h, bending
 * to the side of th_fit; kin is that frame's forward kinematics, L its local rotations. */
static void move_limb_end(const sc_model *m, const sc_bone_kin *kin, sc_quat *L, int e, sc_vec3 c, double th_fit)
{
    int h = m->parent[e], t = m->parent[h];
    sc_quat qe = kin[e].q, qt = kin[t].q, qh;
    sc_vec3 target = sc_v3_sub(sc_v3_add(kin[e].p, c), kin[t].p), kdir = sc_v3_sub(kin[h].p, kin[t].p);
    sc_vec3 s = sc_v3_sub(sc_v3_load(m->joint_pos + 3 * e), sc_v3_load(m->joint_pos + 3 * h));
    sc_vec3 a = sc_v3_normalize(sc_v3_load(m->hinge_axis + 3 * h));
    solve_limb(m, h, s, target, kdir, th_fit, NULL, &qt, &qh);
    L[t] = sc_q_normalize(sc_q_mul(sc_q_conj(kin[m->parent[t]].q), qt));
    L[h] = sc_kin_twist(sc_q_normalize(sc_q_mul(sc_q_conj(qt), qh)), a);
    qh = sc_q_normalize(sc_q_mul(qt, L[h]));
    L[e] = sc_q_normalize(sc_q_mul(sc_q_conj(qh), qe));
}

/* Limb ends in contact: the end moves by -(its height) vertically and by -shift[f] (the root's
 * horizontal move since the contacts were placed, NULL: none) horizontally, keeping its world
 * orientation; the correction ramps in and out over ramp_time around each contact and is
 * low-passed over settle_time, then two-bone IK bends the limb (always to the side it usually
 * bends to). */
static void limb_fit(fit_ctx *x, const double *shift, sc_motion *mo)
{
    int n = x->n, nb = x->nb;
    const unsigned char *flags = x->flags;
    double *corr = x->corr;
    for (int f = 0; f < n; f++) {
        frame_fk(x->b, mo, f, x->kin);
        for (int j = 0; j < nb; j++) {
            double *c = corr + 3 * ((size_t)f * nb + j);
            c[0] = c[1] = c[2] = 0;
            if (!x->isend[j] || !flags[(size_t)f * nb + j]) continue;
            c[1] = -lowest_height(x->g, j, x->kin);
            if (shift) {
                c[0] = -shift[3 * f];
                c[2] = -shift[3 * f + 2];
            }
        }
    }
    for (int j = 0; j < nb; j++)
        if (x->isend[j])
            for (int d = 0; d < 3; d++) ramp(x, j, corr + 3 * (size_t)j + d, 3 * (size_t)nb, mo->frame_time);
    const sc_model *m = x->m;
    for (int f = 0; f < n; f++)
        for (int e = 0; e < nb; e++) {
            sc_vec3 c = sc_v3_load(corr + 3 * ((size_t)f * nb + e));
            if (!x->isend[e] || (c.x == 0 && c.y == 0 && c.z == 0)) continue;
            frame_fk(x->b, mo, f, x->kin);
            move_limb_end(m, x->kin, mo->local + (size_t)f * nb, e, c, x->straight[m->parent[e]] + x->side[m->parent[e]]);
        }
    sc_motion_make_continuous(mo);
}

/* The whole-body balance the ground can give ([L13] eq. 29-30 on the resultant of eq. 25):
 * per frame, the centre-of-mass acceleration a_c is feasible when in contact if the force
 * per mass a_c - g lies in the friction cone (up, |horizontal| <= mu up), and in the air if it
 * is exactly g. A root translation d(f) (all three axes) is found that makes the character's
 * centre of mass c + d feasible: alternately project (c + d)'' onto the feasible set and fit d
 * to the projected accelerations, least squares with a penalty keeping d small (weight
 * 1 / balance_offset^2 per (m/s^2)^2 of misfit). */
static int balance(fit_ctx *x, sc_motion *mo, double *d, sc_contact_fit_info *inf, sc_err *err)
{
    int n = x->n, nb = x->nb;
    if (n < SC_OFFSET_FIT_MIN_FRAMES) return SC_OK;
    double h = mo->frame_time, g = x->o->gravity, mu = x->o->mu;
    double *c = malloc((size_t)n * 3 * sizeof *c), *t = malloc((size_t)n * 3 * sizeof *t), *w = malloc((size_t)n * 6 * sizeof *w);
    if (!c || !t || !w) {
        free(c);
        free(t);
        free(w);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (int f = 0; f < n; f++) {
        frame_fk(x->b, mo, f, x->kin);
        sc_v3_store(c + 3 * f, frame_com(x->b, x->kin));
    }
    memset(d, 0, (size_t)n * 3 * sizeof *d);
    /* a body lying on the floor (a contact not at a limb end: back, hip, knee) cannot move up or
       down without leaving or entering it: its root height stays */
    double *pin = w + 5 * n;
    for (int f = 0; f < n; f++) {
        pin[f] = 1;
        for (int j = 0; j < nb; j++)
            if (x->flags[(size_t)f * nb + j] && !x->isend[j]) pin[f] = 1e6;
    }
    /* a 1 m/s^2 misfit weighs as much as balance_offset of root translation */
    double lambda = 1 / (x->o->balance_offset * x->o->balance_offset);
    double worst = 0;
    for (int it = 0; it < 30; it++) {
        worst = 0;
        for (int f = 0; f < n; f++) {
            int k = f < 1 ? 1 : f > n - 2 ? n - 2 : f, contact = 0;
            for (int j = 0; j < nb; j++) contact |= x->flags[(size_t)f * nb + j];
            sc_vec3 cc = sc_v3_scale(
                sc_v3_add(sc_v3_sub(sc_v3_load(c + 3 * (k + 1)), sc_v3_scale(sc_v3_load(c + 3 * k), 2)), sc_v3_load(c + 3 * (k - 1))), 1 / (h * h));
            sc_vec3 dd = sc_v3_scale(
                sc_v3_add(sc_v3_sub(sc_v3_load(d + 3 * (k + 1)), sc_v3_scale(sc_v3_load(d + 3 * k), 2)), sc_v3_load(d + 3 * (k - 1))), 1 / (h * h));
            sc_vec3 a = sc_v3_add(cc, dd), fa = sc_v3(a.x, a.y + g, a.z), p = fa; /* force per mass */
            if (!contact) p = sc_v3(0, 0, 0);
            else {
                double r = hypot(fa.x, fa.z), s = fa.y;
                if (mu * r <= -s) p = sc_v3(0, 0, 0);
                else if (r > mu * s) {
                    double s2 = (mu * r + s) / (mu * mu + 1), r2 = mu * s2;
                    p = sc_v3(r > 0 ? fa.x * r2 / r : 0, s2, r > 0 ? fa.z * r2 / r : 0);
                }
            }
            worst = fmax(worst, sc_v3_dist(p, fa));
            sc_v3_store(t + 3 * f, sc_v3_sub(sc_v3_sub(p, sc_v3(0, g, 0)), cc)); /* wanted d'' */
        }
        if (worst < 1e-3 * g) break;
        for (int a = 0; a < 3; a++) {
            double *ta = w, *xa = w + n;
            for (int f = 0; f < n; f++) ta[f] = t[3 * f + a];
            sc_offset_fit(n, h, lambda, a == 1 ? pin : NULL, ta, xa, w + 2 * n, w + 3 * n, w + 4 * n);
            for (int f = 0; f < n; f++) d[3 * f + a] = xa[f];
        }
    }
    for (int f = 0; f < n; f++) inf->max_balance_offset = fmax(inf->max_balance_offset, sc_v3_norm(sc_v3_load(d + 3 * f)));
    inf->balance_misfit = worst;
    free(c);
    free(t);
    free(w);
    return SC_OK;
}

/* The hinge angle at which limb end e's limb is straight (its hinge parent's axis). */
static double limb_straight(const sc_model *m, int e)
{
    int h = m->parent[e], t = m->parent[h];
    sc_vec3 a = sc_v3_normalize(sc_v3_load(m->hinge_axis + 3 * h));
    sc_vec3 u = sc_v3_sub(sc_v3_load(m->joint_pos + 3 * h), sc_v3_load(m->joint_pos + 3 * t)),
            s = sc_v3_sub(sc_v3_load(m->joint_pos + 3 * e), sc_v3_load(m->joint_pos + 3 * h));
    double A = sc_v3_dot(s, a) * sc_v3_dot(u, a);
    return atan2(sc_v3_dot(u, sc_v3_cross(a, s)), sc_v3_dot(u, s) - A);
}

/* The side (+-1) limb end e's hinge bends to from straight over the motion. */
static double limb_bend_side(const sc_model *m, const sc_motion *mo, int e)
{
    int h = m->parent[e], nb = mo->nbones;
    sc_vec3 a = sc_v3_normalize(sc_v3_load(m->hinge_axis + 3 * h));
    double ph = limb_straight(m, e), sum = 0;
    for (int f = 0; f < mo->nframes; f++) sum += wrap_angle(sc_kin_twist_angle(mo->local[(size_t)f * nb + h], a) - ph);
    return sum >= 0 ? 1 : -1;
}

/* The limb ends (x->isend), their reach (a little short of full extension: there a limb's angle
 * changes as the square root of its shortening, and a straight stance leg would jerk) and the
 * side each knee or elbow usually bends to (the sum of its angles from full extension): the IK
 * bends it to that side only, so a straight leg that must bend does not flip between the two
 * solutions; bent past full extension (a capture's knee hyperextends a few degrees) it is
 * straightened, the end keeping its world orientation. */
static void limb_setup(fit_ctx *x, sc_motion *mo, double *reach)
{
    const sc_model *m = x->m;
    int n = x->n, nb = x->nb;
    for (int e = 0; e < nb; e++) {
        x->isend[e] = limb_end(m, e);
        reach[e] = 0;
        if (!x->isend[e]) continue;
        int h = m->parent[e], t = m->parent[h];
        sc_vec3 a = sc_v3_normalize(sc_v3_load(m->hinge_axis + 3 * h));
        sc_vec3 u = sc_v3_sub(sc_v3_load(m->joint_pos + 3 * h), sc_v3_load(m->joint_pos + 3 * t)),
                s = sc_v3_sub(sc_v3_load(m->joint_pos + 3 * e), sc_v3_load(m->joint_pos + 3 * h));
        reach[e] = 0.995 * limb_reach(a, u, s, NULL);
        const double ph = limb_straight(m, e);
        x->straight[h] = ph;
        x->side[h] = limb_bend_side(m, mo, e);
        for (int f = 0; f < n; f++) {
            sc_quat *L = mo->local + (size_t)f * nb;
            if (wrap_angle(sc_kin_twist_angle(L[h], a) - ph) * x->side[h] >= 0) continue;
            sc_quat keep = sc_q_mul(L[h], L[e]);
            L[h] = sc_q_axis_angle(a, ph);
            L[e] = sc_q_normalize(sc_q_mul(sc_q_conj(L[h]), keep));
        }
    }
}

/* Step 1: per frame with contacts, the root height offset wanted (want[f]): the one that keeps
 * each limb in contact as long as it is (a straight stance leg whose foot must rise 1 cm would
 * otherwise bend its knee 17 deg), averaged over the limbs, and the corridor [lo, hi] every limb
 * end can reach the floor from (its hip or shoulder within the limb's reach). Other bones in
 * contact (knee, back, upper arm) decide alone, by least squares: a body lying with straight legs
 * has its heels at full reach, whose corridor would pull the hips onto the floor, 12 cm through a
 * back. has[f]: frame f has contacts. */
static void root_corridor(fit_ctx *x, const sc_motion *mo, const double *reach, double *lo, double *hi, unsigned char *has, double *want)
{
    const sc_model *m = x->m;
    sc_bone_kin *kin = x->kin;
    int n = x->n, nb = x->nb;
    for (int f = 0; f < n; f++) {
        frame_fk(x->b, mo, f, kin);
        lo[f] = -INFINITY;
        hi[f] = INFINITY;
        has[f] = 0;
        double sum = 0, body = 0;
        int nlimb = 0, nbody = 0;
        for (int j = 0; j < nb; j++) {
            if (!x->flags[(size_t)f * nb + j]) continue;
            double hj = lowest_height(x->g, j, kin), a, z;
            if (!isfinite(hj)) continue;
            if (x->isend[j]) {
                int t = m->parent[m->parent[j]];
                sc_vec3 d = sc_v3_sub(sc_v3(kin[j].p.x, kin[j].p.y - hj, kin[j].p.z), kin[t].p);
                double dxz2 = d.x * d.x + d.z * d.z, w = sqrt(fmax(0, reach[j] * reach[j] - dxz2));
                double len = sc_v3_dist(kin[j].p, kin[t].p);
                a = d.y - w;
                z = d.y + w;
                sum += d.y + sqrt(fmax(0, len * len - dxz2));
                nlimb++;
                lo[f] = fmax(lo[f], a);
                hi[f] = fmin(hi[f], z);
            } else {
                body -= hj;
                nbody++;
            }
            has[f] = 1;
        }
        if (nbody) { /* the body's own contacts decide: least squares over them; the limbs bend to what remains */
            lo[f] = body / nbody - 0.002;
            hi[f] = body / nbody + 0.002;
        } else if (has[f] && lo[f] > hi[f]) lo[f] = hi[f] = 0.5 * (lo[f] + hi[f]);
        want[f] = has[f] ? fmin(fmax(nbody ? body / nbody : sum / nlimb, lo[f]), hi[f]) : NAN;
    }
}

/* Step 2: a smooth offset dy: the wanted one, linear across the frames without contact,
 * low-passed (three box filters of half-width r), then lowered wherever it exceeds a corridor's
 * top by that excess spread with a maximum filter over 3r and the same box filters (which never
 * fall short of it): C2, and within reach everywhere. Added to the root height. */
static void smooth_root_offset(fit_ctx *x, sc_motion *mo, const double *lo, const double *hi, const unsigned char *has, double *want, double *dy,
                               sc_contact_fit_info *inf)
{
    int n = x->n;
    int r = (int)fmax(1, round(x->o->smooth_time / mo->frame_time)), last = -1;
    for (int f = 0; f <= n; f++) {
        if (f < n && !has[f]) continue;
        for (int k = last + 1; k < f; k++) /* fill the gap (last, f) */
            dy[k] = last < 0 ? (f < n ? want[f] : 0) : f >= n ? want[last] : want[last] + (want[f] - want[last]) * (k - last) / (f - last);
        if (f < n) dy[f] = want[f];
        last = f;
    }
    for (int pass = 0; pass < 3; pass++) box_smooth(dy, 1, x->tmp, n, r);
    for (int f = 0; f < n; f++) x->tmp[f] = has[f] ? fmax(0, dy[f] - hi[f]) : 0;
    for (int f = 0; f < n; f++) {
        double v = 0;
        for (int k = f - 3 * r; k <= f + 3 * r; k++) v = fmax(v, x->tmp[k < 0 ? 0 : k >= n ? n - 1 : k]);
        want[f] = v;
    }
    for (int pass = 0; pass < 3; pass++) box_smooth(want, 1, x->tmp, n, r);
    for (int f = 0; f < n; f++) {
        dy[f] -= want[f];
        if (has[f]) dy[f] = fmax(dy[f], lo[f]);
        mo->root_pos[3 * f + 1] += dy[f];
        inf->max_root_offset = fmax(inf->max_root_offset, fabs(dy[f]));
    }
}

/* Step 5: what came of every contact: the largest distance of its lowest point from the floor. */
static void contact_gaps(fit_ctx *x, const sc_motion *mo, sc_contact_fit_info *inf)
{
    int n = x->n, nb = x->nb;
    for (int j = 0; j < nb; j++) {
        double gap = 0;
        int in = 0;
        for (int f = 0; f <= n; f++) {
            int c = f < n && x->flags[(size_t)f * nb + j];
            if (c) {
                frame_fk(x->b, mo, f, x->kin);
                gap = fmax(gap, fabs(lowest_height(x->g, j, x->kin)));
                in = 1;
            } else if (in) {
                inf->intervals++;
                inf->kept += gap <= x->o->keep_tol;
                if (gap > inf->max_gap) {
                    inf->max_gap = gap;
                    inf->max_gap_bone = j;
                }
                gap = 0;
                in = 0;
            }
        }
    }
}

int sc_retarget_fit_contacts(const sc_model *m, const sc_body *b, const sc_gc_geom *g, const unsigned char *flags, const sc_contact_fit_opts *o,
                             sc_motion *mo, sc_contact_fit_info *info, sc_err *err)
{
    int n = mo->nframes, nb = mo->nbones;
    sc_contact_fit_info inf;
    memset(&inf, 0, sizeof inf);
    if (nb != m->nbones || nb != b->nb || nb > SC_BODY_MAX_BONES)
        return sc_fail(err, SC_EINPUT, "contact fit: %d bones in the motion, %d in the character", nb, m->nbones);
    fit_ctx x;
    memset(&x, 0, sizeof x);
    x.m = m, x.b = b, x.g = g, x.flags = flags, x.o = o, x.n = n, x.nb = nb;
    double *lo = malloc((size_t)n * sizeof *lo), *hi = malloc((size_t)n * sizeof *hi), *dy = malloc((size_t)n * 3 * sizeof *dy);
    double *want = malloc((size_t)n * sizeof *want);
    unsigned char *has = malloc((size_t)n);
    x.tmp = malloc((size_t)n * sizeof *x.tmp);
    x.corr = malloc((size_t)n * nb * 3 * sizeof *x.corr);
    x.kin = malloc((size_t)nb * sizeof *x.kin);
    int rc = SC_OK;
    if (!lo || !hi || !dy || !want || !has || !x.tmp || !x.corr || !x.kin) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    double reach[SC_BODY_MAX_BONES];
    limb_setup(&x, mo, reach);
    if (o->flatten > 0) flatten_ends(&x, mo);
    root_corridor(&x, mo, reach, lo, hi, has, want);
    smooth_root_offset(&x, mo, lo, hi, has, want, dy, &inf);
    /* 3. limb ends onto the floor */
    limb_fit(&x, NULL, mo);
    /* 4. a centre of mass the ground can carry: the root moves by the balance correction, the
       limbs in contact stay where they were */
    for (int it = 0; o->balance && it < 3; it++) {
        if ((rc = balance(&x, mo, dy, &inf, err))) goto done;
        for (int f = 0; f < n; f++)
            for (int a = 0; a < 3; a++) mo->root_pos[3 * f + a] += dy[3 * f + a];
        limb_fit(&x, dy, mo);
    }
    contact_gaps(&x, mo, &inf);
done:
    free(lo);
    free(hi);
    free(dy);
    free(want);
    free(has);
    free(x.tmp);
    free(x.corr);
    free(x.kin);
    if (info) *info = inf;
    return rc;
}

sc_vec3 sc_limb_edit_offset(const sc_limb_edit *ed, int k, double t)
{
    const double u = fmax(0, t / ed->dt);
    const int i = (int)fmin(floor(u), ed->nsamples - 1), i1 = i + 1 < ed->nsamples ? i + 1 : i;
    const double w = i1 > i ? u - i : 0;
    const double *o0 = ed->offset + 3 * ((size_t)i * ed->nmoves + k), *o1 = ed->offset + 3 * ((size_t)i1 * ed->nmoves + k);
    return sc_v3(o0[0] + w * (o1[0] - o0[0]), o0[1] + w * (o1[1] - o0[1]), o0[2] + w * (o1[2] - o0[2]));
}

int sc_retarget_edit_limbs(const sc_model *m, const sc_body *b, const sc_limb_edit *ed, const int *bones, sc_motion *mo, double *miss, sc_err *err)
{
    const int n = mo->nframes, nb = mo->nbones;
    *miss = 0;
    for (int k = 0; k < ed->nmoves; k++)
        if (!limb_end(m, bones[k]))
            return sc_fail(err, SC_EINPUT,
                           "%s: motion.edit moves '%s', which is no limb end (a bone under a hinge under a ball joint: a foot, a hand)", ed->where[k],
                           m->bone_name[bones[k]]);
    sc_bone_kin *kin = malloc((size_t)nb * sizeof *kin);
    if (!kin) return sc_fail(err, SC_EIO, "out of memory");
    double th_fit[SC_LIMB_EDIT_MAX];
    for (int k = 0; k < ed->nmoves; k++) th_fit[k] = limb_straight(m, bones[k]) + limb_bend_side(m, mo, bones[k]);
    for (int f = 0; f < n; f++)
        for (int k = 0; k < ed->nmoves; k++) {
            const sc_vec3 c = sc_limb_edit_offset(ed, k, f * mo->frame_time);
            if (c.x == 0 && c.y == 0 && c.z == 0) continue;
            frame_fk(b, mo, f, kin);
            const sc_vec3 want = sc_v3_add(kin[bones[k]].p, c);
            move_limb_end(m, kin, mo->local + (size_t)f * nb, bones[k], c, th_fit[k]);
            frame_fk(b, mo, f, kin);
            *miss = fmax(*miss, sc_v3_dist(kin[bones[k]].p, want));
        }
    free(kin);
    sc_motion_make_continuous(mo);
    return SC_OK;
}

#include <stdlib.h>
#include <string.h>
#include "mesh/body.h"

#define MAX_GROUPS SC_MAX_BONES

static sc_prim *push(sc_implicit *f, sc_err *err)
{
    if (f->nprims == f->cap) {
        int cap = f->cap ? 2 * f->cap : 64;
        sc_prim *p = realloc(f->prims, (size_t)cap * sizeof *p);
        if (!p) {
            sc_fail(err, SC_EIO, "out of memory building the body");
            return NULL;
        }
        f->prims = p;
        f->cap = cap;
    }
    sc_prim *p = &f->prims[f->nprims++];
    memset(p, 0, sizeof *p);
    return p;
}

/* Orthonormal frame whose first column is `axis`, the second as close to `up_hint` as possible. */
static sc_mat3 frame_along(sc_vec3 axis, sc_vec3 hint)
{
    sc_vec3 u = sc_v3_normalize(axis);
    if (fabs(sc_v3_dot(u, sc_v3_normalize(hint))) > 0.95) hint = fabs(u.x) < 0.9 ? sc_v3(1, 0, 0) : sc_v3(0, 0, 1);
    sc_vec3 w = sc_v3_normalize(sc_v3_cross(u, hint));
    sc_vec3 v = sc_v3_cross(w, u);
    return sc_m3_from_cols(u, v, w);
}

static int add_capsule(sc_implicit *f, int group, sc_vec3 a, sc_vec3 b, double ra, double rb, sc_err *err)
{
    sc_prim *p = push(f, err);
    if (!p) return SC_EIO;
    p->type = SC_PRIM_CAPSULE;
    p->group = group;
    p->a = a;
    p->b = b;
    p->ra = ra;
    p->rb = rb;
    double r = fmax(ra, rb);
    p->lo = sc_v3_sub(sc_v3_min(a, b), sc_v3(r, r, r));
    p->hi = sc_v3_add(sc_v3_max(a, b), sc_v3(r, r, r));
    return SC_OK;
}

static int add_ellipsoid(sc_implicit *f, int group, sc_vec3 c, sc_mat3 frame, sc_vec3 radii, sc_err *err)
{
    sc_prim *p = push(f, err);
    if (!p) return SC_EIO;
    p->type = SC_PRIM_ELLIPSOID;
    p->group = group;
    p->a = c;
    p->frame = frame;
    p->radii = radii;
    sc_vec3 ext = sc_v3(0, 0, 0); /* half-extent of the rotated ellipsoid's box */
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) {
            double e = frame.m[i][k] * sc_v3_get(radii, k);
            if (i == 0) ext.x += e * e;
            else if (i == 1) ext.y += e * e;
            else ext.z += e * e;
        }
    ext = sc_v3(sqrt(ext.x), sqrt(ext.y), sqrt(ext.z));
    p->lo = sc_v3_sub(c, ext);
    p->hi = sc_v3_add(c, ext);
    return SC_OK;
}

static int add_roundbox(sc_implicit *f, int group, sc_vec3 c, sc_mat3 frame, sc_vec3 half, double round, sc_err *err)
{
    int rc = add_ellipsoid(f, group, c, frame, half, err); /* same bounding box */
    if (rc) return rc;
    sc_prim *p = &f->prims[f->nprims - 1];
    p->type = SC_PRIM_ROUNDBOX;
    p->round = round;
    return SC_OK;
}

static double prim_eval(const sc_prim *p, sc_vec3 x)
{
    if (p->type == SC_PRIM_ROUNDBOX) { /* exact distance to a box with rounded edges */
        sc_vec3 l = sc_m3_mulv_t(p->frame, sc_v3_sub(x, p->a));
        sc_vec3 q = sc_v3(fabs(l.x) - p->radii.x + p->round, fabs(l.y) - p->radii.y + p->round, fabs(l.z) - p->radii.z + p->round);
        sc_vec3 qp = sc_v3(fmax(q.x, 0), fmax(q.y, 0), fmax(q.z, 0));
        return sc_v3_norm(qp) + fmin(fmax(q.x, fmax(q.y, q.z)), 0) - p->round;
    }
    if (p->type == SC_PRIM_CAPSULE) {
        sc_vec3 ab = sc_v3_sub(p->b, p->a), ax = sc_v3_sub(x, p->a);
        double l2 = sc_v3_dot(ab, ab);
        double t = l2 > 0 ? fmin(1, fmax(0, sc_v3_dot(ax, ab) / l2)) : 0;
        return sc_v3_norm(sc_v3_sub(ax, sc_v3_scale(ab, t))) - (p->ra + t * (p->rb - p->ra));
    }
    /* ellipsoid: first-order distance estimate k0 (k0 - 1) / k1 (exact on spheres) */
    sc_vec3 l = sc_m3_mulv_t(p->frame, sc_v3_sub(x, p->a));
    sc_vec3 q1 = sc_v3(l.x / p->radii.x, l.y / p->radii.y, l.z / p->radii.z);
    sc_vec3 q2 = sc_v3(q1.x / p->radii.x, q1.y / p->radii.y, q1.z / p->radii.z);
    double k0 = sc_v3_norm(q1), k1 = sc_v3_norm(q2);
    if (k1 < 1e-12) return -fmin(p->radii.x, fmin(p->radii.y, p->radii.z));
    return k0 * (k0 - 1.0) / k1;
}

static double smin(double a, double b, double k)
{
    double h = fmax(k - fabs(a - b), 0.0) / k;
    return fmin(a, b) - h * h * k * 0.25;
}

static double box_distance(sc_vec3 lo, sc_vec3 hi, sc_vec3 x)
{
    double dx = fmax(fmax(lo.x - x.x, x.x - hi.x), 0), dy = fmax(fmax(lo.y - x.y, x.y - hi.y), 0), dz = fmax(fmax(lo.z - x.z, x.z - hi.z), 0);
    return sqrt(dx * dx + dy * dy + dz * dz);
}

double sc_implicit_eval(const sc_implicit *f, sc_vec3 x)
{
    double group_val[MAX_GROUPS];
    unsigned char seen[MAX_GROUPS];
    memset(seen, 0, sizeof seen);
    double far = 1e30;
    for (int i = 0; i < f->nprims; i++) {
        const sc_prim *p = &f->prims[i];
        double db = box_distance(p->lo, p->hi, x);
        if (db > 0.25) {
            far = fmin(far, db);
            continue;
        } /* cannot matter near the surface */
        double d = prim_eval(p, x);
        int g = p->group;
        group_val[g] = seen[g] ? smin(group_val[g], d, f->ring_blend) : d;
        seen[g] = 1;
    }
    double v = far;
    int first = 1;
    for (int g = 0; g < MAX_GROUPS; g++) {
        if (!seen[g]) continue;
        v = first ? fmin(group_val[g], far) : smin(v, group_val[g], f->blend);
        first = 0;
    }
    /* the smooth union bulges below the soles where the shin blends into the shoe: a rocker
       sole (radius ~0.2 m, far below the centre-of-mass height) on which nothing stands */
    if (f->has_floor) v = fmax(v, f->floor - x.y);
    return v;
}

static double field_eval(const void *ctx, sc_vec3 p) { return sc_implicit_eval(ctx, p); }

sc_field sc_implicit_field(const sc_implicit *f)
{
    sc_field fl = {field_eval, f, f->lo, f->hi};
    return fl;
}

void sc_implicit_free(sc_implicit *f)
{
    free(f->prims);
    memset(f, 0, sizeof *f);
}

/* Bone roles from names, so any skeleton with conventional names gets a sensible body;
 * unknown bones get a limb-like segment sized from their length. */
typedef enum {
    ROLE_LIMB,
    ROLE_PELVIS,
    ROLE_SPINE,
    ROLE_NECK,
    ROLE_HEAD,
    ROLE_UPPERARM,
    ROLE_FOREARM,
    ROLE_HAND,
    ROLE_THIGH,
    ROLE_SHIN,
    ROLE_FOOT
} role;

static int has(const char *name, const char *const *keys)
{
    char low[SC_NAME_LEN];
    size_t i;
    for (i = 0; name[i] && i + 1 < sizeof low; i++) low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
    low[i] = 0;
    for (; *keys; keys++)
        if (strstr(low, *keys)) return 1;
    return 0;
}

static role bone_role(const sc_rig *rig, int b)
{
    const char *n = rig->bone[b].name;
    static const char
        *const pelvis[] = {"pelvis", "hip", NULL},
               *const spine[] = {"spine", "chest", "back", "torso", "abdomen", NULL}, *const neck[] = {"neck", NULL}, *const head[] = {"head", NULL},
               *const upperarm[] = {"upperarm", "upper_arm", "uparm", "arm", NULL}, *const forearm[] = {"forearm", "lowerarm", "lower_arm", NULL},
               *const hand[] = {"hand", "wrist", NULL}, *const thigh[] = {"thigh", "upleg", "upperleg", "upper_leg", NULL},
               *const shin[] = {"shin", "calf", "lowerleg", "lower_leg", "knee", "leg", NULL}, *const foot[] = {"foot", "toe", "ankle", NULL};
    if (rig->bone[b].parent < 0 || has(n, pelvis)) return ROLE_PELVIS;
    if (has(n, spine)) return ROLE_SPINE;
    if (has(n, neck)) return ROLE_NECK;
    if (has(n, head)) return ROLE_HEAD;
    if (has(n, forearm)) return ROLE_FOREARM;
    if (has(n, hand)) return ROLE_HAND;
    if (has(n, foot)) return ROLE_FOOT;
    if (has(n, thigh)) return ROLE_THIGH;
    if (has(n, shin)) return ROLE_SHIN;
    if (has(n, upperarm)) return ROLE_UPPERARM;
    return ROLE_LIMB;
}

/* Radius of a bone's flesh as a fraction of the character height. */
static double base_radius(role r, int panda)
{
    switch (r) {
        case ROLE_PELVIS: return panda ? 0.12 : 0.105;
        case ROLE_SPINE: return panda ? 0.12 : 0.105;
        case ROLE_NECK: return 0.045;
        case ROLE_HEAD: return panda ? 0.085 : 0.065;
        case ROLE_UPPERARM: return panda ? 0.05 : 0.045;
        case ROLE_FOREARM: return panda ? 0.045 : 0.038;
        case ROLE_HAND: return panda ? 0.035 : 0.032;
        case ROLE_THIGH: return panda ? 0.07 : 0.06;
        case ROLE_SHIN: return panda ? 0.055 : 0.048;
        case ROLE_FOOT: return 0.03;
        default: return 0.035;
    }
}

static double sole_bottom(const sc_rig_bone *b, double rad) { return fmin(b->head.y, b->tail.y) - 0.8 * rad; }

static int build_bone(const sc_rig *rig, int b, const sc_body_params *p, double height, sc_implicit *f, sc_err *err)
{
    const sc_rig_bone *bone = &rig->bone[b];
    int panda = p->kind == SC_BODY_PANDA;
    role r = bone_role(rig, b);
    double len = sc_rig_length(bone), rad = base_radius(r, panda) * height * p->girth;
    sc_vec3 h = bone->head, t = bone->tail, axis = sc_v3_sub(t, h);
    sc_mat3 fr = frame_along(axis, sc_v3(0, 0, 1));
    int rc = SC_OK;
    switch (r) {
        case ROLE_HEAD: {
            sc_vec3 c = sc_v3_add(h, sc_v3_scale(axis, 0.55));
            double hr = fmax(rad, 0.45 * len);
            if (panda) {
                rc = add_ellipsoid(f, b, c, sc_m3_identity(), sc_v3(1.1 * hr, hr, hr), err);
                for (int s = -1; s <= 1 && !rc; s += 2) /* ears */
                    rc = add_ellipsoid(f, b, sc_v3_add(c, sc_v3(s * 0.75 * hr, 0.8 * hr, 0)), sc_m3_identity(), sc_v3(0.32 * hr, 0.32 * hr, 0.2 * hr),
                                       err);
                if (!rc) /* muzzle */
                    rc = add_ellipsoid(f, b, sc_v3_add(c, sc_v3(0, -0.25 * hr, 0.8 * hr)), sc_m3_identity(), sc_v3(0.45 * hr, 0.35 * hr, 0.35 * hr),
                                       err);
            } else {
                rc = add_ellipsoid(f, b, c, sc_m3_identity(), sc_v3(0.95 * hr, 1.05 * hr, hr), err);
            }
            return rc;
        }
        case ROLE_HAND: {
            sc_vec3 c = sc_v3_add(h, sc_v3_scale(axis, 0.5));
            return add_ellipsoid(f, b, c, fr, sc_v3(fmax(0.6 * len, rad), rad, 0.8 * rad), err);
        }
        case ROLE_FOOT: {
            /* a shoe with a flat sole from past the toe to as far behind the ankle: the centre of
           mass of a body standing over its ankles is then over the middle of the sole, where
           the support is stiffest and a landing's impulse does not pitch the body */
            sc_vec3 fwd = sc_v3(axis.x, 0, axis.z);
            double flen = sc_v3_norm(fwd), heel = flen + 0.6 * rad;
            double top = fmax(h.y, t.y) + 0.9 * rad, bottom = sole_bottom(bone, rad);
            sc_vec3 dir = sc_v3_normalize(fwd);
            sc_vec3 c = sc_v3_add(sc_v3(h.x, 0.5 * (top + bottom), h.z), sc_v3_scale(dir, 0.5 * (flen + 0.6 * rad - heel)));
            sc_vec3 half = sc_v3(0.5 * (flen + 0.6 * rad + heel), 0.5 * (top - bottom), 1.7 * rad);
            double round = fmin(0.6 * rad, 0.4 * fmin(half.y, half.z)); /* keep a flat sole */
            return add_roundbox(f, b, c, frame_along(fwd, sc_v3(0, 1, 0)), half, round, err);
        }
        case ROLE_PELVIS:
        case ROLE_SPINE: {
            if (panda) {
                if (r == ROLE_PELVIS) { /* the belly covers pelvis and spine */
                    sc_vec3 c = sc_v3_add(h, sc_v3(0, 0.5 * len, 0.02 * height));
                    rc = add_ellipsoid(f, b, c, sc_m3_identity(), sc_v3(1.9 * rad, 1.9 * rad + 0.5 * len, 1.75 * rad), err);
                } else {
                    rc = add_ellipsoid(f, b, sc_v3_add(h, sc_v3_scale(axis, 0.6)), sc_m3_identity(), sc_v3(1.5 * rad, 0.8 * len + rad, 1.3 * rad),
                                       err);
                }
                return rc;
            }
            /* Michelin: stacked tyres, wider than deep */
            int n = (int)fmax(1, round(len / (0.055 * height)));
            for (int i = 0; i < n && !rc; i++) {
                sc_vec3 c = sc_v3_add(h, sc_v3_scale(axis, (i + 0.5) / n));
                double bulge = r == ROLE_PELVIS ? 1.15 : 1.25 - 0.1 * i / n;
                rc = add_ellipsoid(f, b, c, sc_m3_identity(), sc_v3(1.25 * rad * bulge, 0.62 * len / n + 0.01 * height, rad * bulge), err);
            }
            if (!rc) rc = add_capsule(f, b, h, t, 0.85 * rad, 0.85 * rad, err);
            return rc;
        }
        default: {
            /* limbs and neck: Michelin rings around a tapered core; panda: a fat tapered capsule */
            double taper = r == ROLE_NECK ? 1.0 : 0.85;
            if (panda) return add_capsule(f, b, h, t, rad, rad * taper, err);
            int n = (int)fmax(1, round(len / (0.05 * height)));
            for (int i = 0; i < n && !rc; i++) {
                double s = (i + 0.5) / n;
                sc_vec3 c = sc_v3_add(h, sc_v3_scale(axis, s));
                double rr = rad * (1 + (taper - 1) * s) * 1.18;
                rc = add_ellipsoid(f, b, c, fr, sc_v3(0.6 * len / n, rr, rr), err);
            }
            if (!rc) rc = add_capsule(f, b, h, t, 0.82 * rad, 0.82 * rad * taper, err);
            return rc;
        }
    }
}

int sc_body_build(const sc_rig *rig, const sc_body_params *p, sc_implicit *f, sc_err *err)
{
    memset(f, 0, sizeof *f);
    if (rig->nbones < 1 || rig->nbones > MAX_GROUPS)
        return sc_fail(err, SC_EINPUT, "body: skeleton has %d bones (1..%d supported)", rig->nbones, MAX_GROUPS);
    double height = sc_rig_height(rig);
    if (!(height > 0.1)) return sc_fail(err, SC_EINPUT, "body: skeleton is %.3g m tall; a body needs at least 0.1 m", height);
    int panda = p->kind == SC_BODY_PANDA;
    f->blend = (panda ? 0.05 : 0.03) * height * p->girth;
    f->ring_blend = (panda ? 0.05 : 0.008) * height * p->girth;
    for (int b = 0; b < rig->nbones; b++) {
        int rc = build_bone(rig, b, p, height, f, err);
        if (rc) {
            sc_implicit_free(f);
            return rc;
        }
        if (bone_role(rig, b) == ROLE_FOOT) { /* the sole plane: the highest shoe bottom */
            double y = sole_bottom(&rig->bone[b], base_radius(ROLE_FOOT, panda) * height * p->girth);
            f->floor = f->has_floor ? fmax(f->floor, y) : y;
            f->has_floor = 1;
        }
    }
    f->lo = sc_v3(1e30, 1e30, 1e30);
    f->hi = sc_v3(-1e30, -1e30, -1e30);
    for (int i = 0; i < f->nprims; i++) {
        f->lo = sc_v3_min(f->lo, f->prims[i].lo);
        f->hi = sc_v3_max(f->hi, f->prims[i].hi);
    }
    double m = f->blend;
    f->lo = sc_v3_sub(f->lo, sc_v3(m, m, m));
    f->hi = sc_v3_add(f->hi, sc_v3(m, m, m));
    return SC_OK;
}

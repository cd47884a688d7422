/* mesh-prep's settings: the skeleton (an inline bone list or a BVH through a bone map, with PD
 * gains and fixed-node shapes), the body, the envelope, the fixed nodes, TetGen and the material
 * (sc_prep_opts). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "io/bvh.h"
#include "io/paths.h"
#include "settings/mesh.h"

static int parent_index(const sc_rig *rig, const char *parent, sc_cfg_node *at, sc_err *err)
{
    if (!parent[0] || !strcmp(parent, "~")) return -1;
    int p = sc_rig_find(rig, parent);
    if (p < 0) {
        char w[256];
        return -sc_fail(err, SC_EINPUT, "%s: parent '%s' is not a bone listed before this one", sc_cfg_where(at, w, sizeof w), parent);
    }
    return p;
}

static void default_bone(sc_rig_bone *b)
{
    memset(b, 0, sizeof *b);
    b->parent = -1;
    for (int i = 0; i < 3; i++) {
        b->lo[i] = 1;
        b->hi[i] = -1;
    }
}

static int from_bvh(sc_cfg_node *sk, const char *config_path, sc_rig *rig, sc_err *err)
{
    char name[512], path[1024], w[256];
    int rc = sc_cfg_string(sk, "bvh", NULL, name, sizeof name, err);
    if (rc) return rc;
    double scale;
    if ((rc = sc_cfg_double_range(sk, "scale", 0.056444, 1e-6, 1e3, &scale, err))) return rc;
    if ((rc = sc_find_input(name, config_path, 1, sc_cfg_where(sc_cfg_get(sk, "bvh"), w, sizeof w), path, sizeof path, err))) return rc;
    sc_bvh bvh;
    if ((rc = sc_bvh_load(path, &bvh, err))) return rc;
    sc_xform world[512];
    if (bvh.njoints > 512) {
        sc_bvh_free(&bvh);
        return sc_fail(err, SC_EINPUT, "%s: more than 512 joints", path);
    }
    sc_bvh_world(&bvh, -1, world); /* rest pose: all channels zero */

    sc_cfg_node *map = NULL;
    if ((rc = sc_cfg_list(sk, "bone_map", 0, &map, err))) {
        sc_bvh_free(&bvh);
        return rc;
    }
    int ncmu;
    const sc_rig_map_entry *cmu_map = sc_rig_cmu_map(&ncmu);
    int n = map ? sc_cfg_len(map) : ncmu;
    if (n > SC_MAX_BONES) {
        sc_bvh_free(&bvh);
        return sc_fail(err, SC_EINPUT, "%s: at most %d bones", config_path, SC_MAX_BONES);
    }
    rig->nbones = 0;
    for (int i = 0; i < n; i++) {
        sc_rig_bone *b = &rig->bone[rig->nbones];
        default_bone(b);
        char joint[SC_NAME_LEN], tail[SC_NAME_LEN], parent[SC_NAME_LEN] = "";
        int type;
        double axis[3] = {1, 0, 0};
        sc_cfg_node *e = map ? sc_cfg_at(map, i) : NULL;
        if (e) {
            if (!sc_cfg_is_map(e)) {
                sc_bvh_free(&bvh);
                return sc_fail(err, SC_EINPUT, "%s: each bone_map entry must be a map", sc_cfg_where(e, w, sizeof w));
            }
            if ((rc = sc_cfg_string(e, "name", NULL, b->name, sizeof b->name, err)) ||
                (rc = sc_cfg_string(e, "joint", NULL, joint, sizeof joint, err)) || (rc = sc_cfg_string(e, "tail", NULL, tail, sizeof tail, err)) ||
                (rc = sc_cfg_string(e, "parent", "", parent, sizeof parent, err)) ||
                (rc = sc_cfg_enum(e, "type", sc_rig_joint_names, 3, i == 0 ? SC_JOINT_FREE : SC_JOINT_BALL, &type, err)) ||
                (rc = sc_cfg_vec_range(e, "axis", 3, axis, -1e3, 1e3, axis, err))) {
                sc_bvh_free(&bvh);
                return rc;
            }
        } else {
            snprintf(b->name, sizeof b->name, "%s", cmu_map[i].name);
            snprintf(joint, sizeof joint, "%s", cmu_map[i].joint);
            snprintf(tail, sizeof tail, "%s", cmu_map[i].tail);
            snprintf(parent, sizeof parent, "%s", cmu_map[i].parent ? cmu_map[i].parent : "");
            type = cmu_map[i].type;
            memcpy(axis, cmu_map[i].axis, sizeof axis);
        }
        const char *where = e ? sc_cfg_where(e, w, sizeof w) : "default CMU bone map";
        int jh = sc_bvh_find(&bvh, joint), jt = sc_bvh_find(&bvh, tail);
        if (jh < 0 || jt < 0) {
            sc_bvh_free(&bvh);
            return sc_fail(err, SC_EINPUT, "%s: bone '%s' names BVH joint '%s', which %s does not have", where, b->name, jh < 0 ? joint : tail, path);
        }
        b->parent = i == 0 ? -1 : sc_rig_find(rig, parent);
        if (i > 0 && b->parent < 0) {
            sc_bvh_free(&bvh);
            return sc_fail(err, SC_EINPUT, "%s: parent '%s' of bone '%s' is not a bone listed before it", where, parent, b->name);
        }
        snprintf(b->source, sizeof b->source, "%s", joint);
        b->joint_type = i == 0 ? SC_JOINT_FREE : type;
        b->head = sc_v3_scale(world[jh].p, scale);
        b->tail = sc_v3_scale(world[jt].p, scale);
        b->hinge_axis = sc_v3_normalize(sc_v3_load(axis));
        rig->nbones++;
    }
    sc_bvh_free(&bvh);
    sc_rig_hinge_axes_to_limbs(rig);
    return SC_OK;
}

static int inline_bones(sc_cfg_node *list, sc_rig *rig, sc_err *err)
{
    int n = sc_cfg_len(list);
    char w[256];
    if (n > SC_MAX_BONES) return sc_fail(err, SC_EINPUT, "%s: at most %d bones", sc_cfg_where(list, w, sizeof w), SC_MAX_BONES);
    rig->nbones = 0;
    for (int i = 0; i < n; i++) {
        sc_cfg_node *e = sc_cfg_at(list, i);
        sc_rig_bone *b = &rig->bone[i];
        default_bone(b);
        if (!sc_cfg_is_map(e)) return sc_fail(err, SC_EINPUT, "%s: each bone must be a map", sc_cfg_where(e, w, sizeof w));
        char parent[SC_NAME_LEN];
        double head[3], tail[3], axis[3] = {1, 0, 0};
        int type, rc;
        if ((rc = sc_cfg_string(e, "name", NULL, b->name, sizeof b->name, err)) ||
            (rc = sc_cfg_string(e, "parent", "", parent, sizeof parent, err)) ||
            (rc = sc_cfg_enum(e, "joint", sc_rig_joint_names, 3, i == 0 ? SC_JOINT_FREE : SC_JOINT_BALL, &type, err)) ||
            (rc = sc_cfg_vec_range(e, "head", 3, NULL, -1e3, 1e3, head, err)) || (rc = sc_cfg_vec_range(e, "tail", 3, NULL, -1e3, 1e3, tail, err)) ||
            (rc = sc_cfg_vec_range(e, "axis", 3, axis, -1e3, 1e3, axis, err)))
            return rc;
        int p = parent_index(rig, parent, e, err);
        if (p < -1) return err->code;
        b->parent = p;
        b->joint_type = i == 0 ? SC_JOINT_FREE : type;
        if (i > 0 && type == SC_JOINT_FREE)
            return sc_fail(err, SC_EINPUT, "%s: only the root bone may have a free joint", sc_cfg_where(e, w, sizeof w));
        b->head = sc_v3_load(head);
        b->tail = sc_v3_load(tail);
        b->hinge_axis = sc_v3_normalize(sc_v3_load(axis));
        rig->nbones++;
    }
    return SC_OK;
}

static int read_gains(sc_cfg_node *m, sc_rig_bone *b, const sc_rig_bone *def, sc_err *err)
{
    int rc;
    double lo[3], hi[3];
    if ((rc = sc_cfg_double_range(m, "kp", def->kp, 0, 1e7, &b->kp, err)) || (rc = sc_cfg_double_range(m, "kd", def->kd, 1e-6, 1e6, &b->kd, err)) ||
        (rc = sc_cfg_double_range(m, "torque_limit", def->torque_limit, 0, 1e6, &b->torque_limit, err)) ||
        (rc = sc_cfg_vec_range(m, "lo", 3, def->lo, -100, 100, lo, err)) || (rc = sc_cfg_vec_range(m, "hi", 3, def->hi, -100, 100, hi, err)) ||
        (rc = sc_cfg_double_range(m, "fixed_radius", def->fixed_radius, 0, 10, &b->fixed_radius, err)) ||
        (rc = sc_cfg_double_range(m, "fixed_from", def->fixed_from, -1, 0.95, &b->fixed_from, err)) ||
        (rc = sc_cfg_double_range(m, "fixed_to", def->fixed_to, 0.05, 2, &b->fixed_to, err)) ||
        (rc = sc_cfg_double_range(m, "fixed_spacing", def->fixed_spacing, 1e-3, 10, &b->fixed_spacing, err)) ||
        (rc = sc_cfg_double_range(m, "fixed_clearance", def->fixed_clearance, 0, 1, &b->fixed_clearance, err)) ||
        (rc = sc_cfg_double_range(m, "fixed_height", def->fixed_height, 0, 1, &b->fixed_height, err)))
        return rc;
    int shape;
    static const char *const shapes[] = {"box", "capsule", "sole"};
    if ((rc = sc_cfg_enum(m, "fixed_shape", shapes, 3, def->fixed_shape, &shape, err))) return rc;
    b->fixed_shape = shape;
    memcpy(b->lo, lo, sizeof lo);
    memcpy(b->hi, hi, sizeof hi);
    return SC_OK;
}

int sc_rig_from_config(sc_cfg_node *sk, const char *config_path, sc_rig *rig, sc_err *err)
{
    memset(rig, 0, sizeof *rig);
    char w[256];
    sc_cfg_node *bones = NULL;
    int rc = sc_cfg_list(sk, "bones", 0, &bones, err);
    if (rc) return rc;
    int has_bvh = sc_cfg_get(sk, "bvh") != NULL;
    if (bones && has_bvh) return sc_fail(err, SC_EINPUT, "%s: give either skeleton.bvh or skeleton.bones, not both", sc_cfg_where(sk, w, sizeof w));
    if (!bones && !has_bvh)
        return sc_fail(err, SC_EINPUT, "%s: skeleton needs `bvh:` (a BVH file) or `bones:` (an inline list)", sc_cfg_where(sk, w, sizeof w));
    rc = bones ? inline_bones(bones, rig, err) : from_bvh(sk, config_path, rig, err);
    if (rc) return rc;

    /* defaults for every joint, then per-bone overrides; fixed-node sizes in `fixed:` are set
       by the caller through these fields too */
    sc_rig_bone def;
    default_bone(&def);
    def.kp = 300;
    def.kd = 30;
    def.torque_limit = 200;
    def.fixed_radius = 0; /* 0: derived from the bone length by mesh-prep */
    def.fixed_from = 0.2;
    def.fixed_to = 0.8;
    def.fixed_spacing = 0.05;
    def.fixed_clearance = 0.01;
    sc_cfg_node *gains = NULL, *joints = NULL;
    if ((rc = sc_cfg_section(sk, "gains", &gains, err)) || (rc = read_gains(gains, &def, &def, err))) return rc;
    if ((rc = sc_cfg_section(sk, "joints", &joints, err))) return rc;
    for (int b = 0; b < rig->nbones; b++) {
        sc_cfg_node *o = sc_cfg_get(joints, rig->bone[b].name);
        if (o && !sc_cfg_is_map(o)) return sc_fail(err, SC_EINPUT, "%s: joints.%s must be a map", sc_cfg_where(o, w, sizeof w), rig->bone[b].name);
        if ((rc = read_gains(o, &rig->bone[b], &def, err))) return rc;
        static const char *const fixed_keys[] = {"fixed_shape", "fixed_radius", "fixed_from", "fixed_to", "fixed_clearance", "fixed_height"};
        for (int k = 0; k < 6 && o; k++) rig->bone[b].fixed_given |= sc_cfg_get(o, fixed_keys[k]) != NULL;
        if (!(rig->bone[b].fixed_to > rig->bone[b].fixed_from))
            return sc_fail(err, SC_EINPUT, "%s: joints.%s: fixed_to must exceed fixed_from", config_path, rig->bone[b].name);
    }
    return sc_rig_validate(rig, config_path, err);
}

int sc_prep_read_config(sc_cfg *cfg, sc_prep_opts *o, sc_err *err)
{
    memset(o, 0, sizeof *o);
    sc_cfg_node *root = sc_cfg_root(cfg), *sk, *body, *env, *fixed, *tg, *mat;
    const char *path = sc_cfg_path(cfg);
    char w[256], name[1024];
    int rc;
    if ((rc = sc_cfg_section(root, "body", &body, err))) return rc;
    sc_cfg_node *letter = sc_cfg_get(body, "letter");
    sk = sc_cfg_get(root, "skeleton");
    if (!sk && !letter && !sc_cfg_get(body, "obj"))
        return sc_fail(err, SC_EINPUT,
                       "%s: no `skeleton:`: a built-in body (body.builtin: michelin | panda) is built around a skeleton; "
                       "give `skeleton:`, or for a boneless character body.letter (%s) or body.obj (a closed OBJ)",
                       path, sc_letter_names());
    if (sk && letter)
        return sc_fail(err, SC_EINPUT, "%s: body.letter makes a boneless character: remove `skeleton:` (or give body.obj or body.builtin)",
                       sc_cfg_where(letter, w, sizeof w));
    if (sk && (rc = sc_rig_from_config(sk, path, &o->rig, err))) return rc; /* no skeleton: o->rig.nbones 0, boneless */
    if (sk && sc_cfg_get(sk, "bvh") &&                                      /* found again, as from_bvh did: the tool checks it is not the output */
        ((rc = sc_cfg_string(sk, "bvh", NULL, name, sizeof name, err)) ||
         (rc = sc_find_input(name, path, 1, sc_cfg_where(sc_cfg_get(sk, "bvh"), w, sizeof w), o->skeleton_bvh, sizeof o->skeleton_bvh, err))))
        return rc;

    static const char *const kinds[] = {"michelin", "panda"};
    int kind;
    if (letter) {
        if (sc_cfg_get(body, "obj") || sc_cfg_get(body, "builtin"))
            return sc_fail(err, SC_EINPUT, "%s: give one of body.letter, body.obj and body.builtin", sc_cfg_where(body, w, sizeof w));
        char lname[sizeof o->letter.name];
        if ((rc = sc_cfg_string(body, "letter", NULL, lname, sizeof lname, err))) return rc;
        if ((rc = sc_letter_get(lname, &o->letter, err))) return sc_err_prefix(err, "%s: body.letter: ", sc_cfg_where(letter, w, sizeof w));
        o->body_kind = SC_PREP_BODY_LETTER;
    } else if (sc_cfg_get(body, "obj")) {
        if ((rc = sc_cfg_string(body, "obj", NULL, name, sizeof name, err)) ||
            (rc = sc_find_input(name, path, 0, sc_cfg_where(sc_cfg_get(body, "obj"), w, sizeof w), o->body_obj, sizeof o->body_obj, err)))
            return rc;
        o->body_kind = SC_PREP_BODY_OBJ;
        if (sc_cfg_get(body, "builtin"))
            return sc_fail(err, SC_EINPUT, "%s: give body.obj or body.builtin, not both", sc_cfg_where(body, w, sizeof w));
    } else {
        if ((rc = sc_cfg_enum(body, "builtin", kinds, 2, SC_BODY_MICHELIN, &kind, err))) return rc;
        o->body_kind = kind;
    }
    long target;
    static const char *const poses[] = {"tpose", "apose"}, *const facings[] = {"+z", "-z", "+x", "-x"}, *const fits[] = {"auto", "true", "false"},
                             *const joint_rules[] = {"landmarks", "skeleton"};
    int fit;
    const int is_letter = o->body_kind == SC_PREP_BODY_LETTER, boneless = o->rig.nbones == 0;
    if (is_letter) { /* a letter has its size, its place (on y = 0, facing +z) and no skeleton */
        static const char *const not_for_letters[] = {"scale", "girth", "pose", "arm_angle", "facing", "fit_skeleton", "fit_joints"};
        for (int i = 0; i < 7; i++)
            if (sc_cfg_get(body, not_for_letters[i]))
                return sc_fail(err, SC_EINPUT, "%s: body.%s does not apply to a letter (body.letter takes target_vertices and ground)",
                               sc_cfg_where(sc_cfg_get(body, not_for_letters[i]), w, sizeof w), not_for_letters[i]);
        o->body_scale = 1;
        o->girth = 1;
        if ((rc = sc_cfg_int(body, "target_vertices", 5000, 200, 200000, &target, err)) || (rc = sc_cfg_bool(body, "ground", 1, &o->ground, err)))
            return rc;
        fit = 2;
    } else if ((rc = sc_cfg_double_range(body, "scale", 1.0, 1e-6, 1e6, &o->body_scale, err)) ||
               (rc = sc_cfg_double_range(body, "girth", 1.0, 0.3, 3.0, &o->girth, err)) ||
               (rc = sc_cfg_int(body, "target_vertices", 5000, 200, 200000, &target, err)) ||
               (rc = sc_cfg_bool(body, "ground", 1, &o->ground, err)) || (rc = sc_cfg_enum(body, "pose", poses, 2, 0, &o->apose, err)) ||
               (rc = sc_cfg_double_range(body, "arm_angle", 45, 0, 90, &o->arm_angle, err)) ||
               (rc = sc_cfg_enum(body, "facing", facings, 4, 0, &o->facing, err)) ||
               (rc = sc_cfg_enum(body, "fit_skeleton", fits, 3, 0, &fit, err)) ||
               (rc = sc_cfg_enum(body, "fit_joints", joint_rules, 2, 0, &o->fit_joints_kept, err)))
        return rc;
    o->arm_angle *= SC_PI / 180;
    sc_cfg_where(sc_cfg_get(body, "obj") ? sc_cfg_get(body, "obj") : body, o->body_where, sizeof o->body_where);
    if (o->body_kind == SC_PREP_BODY_OBJ && o->apose)
        return sc_fail(err, SC_EINPUT,
                       "%s: body.pose is for the built-in bodies; an OBJ body has its own pose (the skeleton is fitted "
                       "into it)",
                       sc_cfg_where(sc_cfg_get(body, "pose"), w, sizeof w));
    /* a BVH skeleton (T-pose, its own proportions) is fitted into an OBJ body; an inline one is
       taken as placed */
    if (boneless && fit == 1)
        return sc_fail(err, SC_EINPUT, "%s: body.fit_skeleton: true needs a `skeleton:` to fit",
                       sc_cfg_where(sc_cfg_get(body, "fit_skeleton"), w, sizeof w));
    if (boneless && o->apose)
        return sc_fail(err, SC_EINPUT, "%s: body.pose turns a skeleton's arms; this character has no `skeleton:`",
                       sc_cfg_where(sc_cfg_get(body, "pose"), w, sizeof w));
    o->fit_skeleton = !boneless && (fit == 1 || (fit == 0 && o->body_kind == SC_PREP_BODY_OBJ && o->rig.bone[0].source[0]));
    if (!o->fit_skeleton && sc_cfg_get(body, "fit_joints"))
        return sc_fail(err, SC_EINPUT,
                       "%s: body.fit_joints applies to a skeleton fitted into the body (a BVH skeleton and an OBJ body, or fit_skeleton: true)",
                       sc_cfg_where(sc_cfg_get(body, "fit_joints"), w, sizeof w));
    if (o->apose) sc_rig_arms_down(&o->rig, o->arm_angle);
    o->surface_target = (int)target;

    if ((rc = sc_cfg_section(root, "envelope", &env, err))) return rc;
    if (sc_cfg_get(env, "obj")) {
        if ((rc = sc_cfg_string(env, "obj", NULL, name, sizeof name, err)) ||
            (rc = sc_find_input(name, path, 0, sc_cfg_where(sc_cfg_get(env, "obj"), w, sizeof w), o->envelope_obj, sizeof o->envelope_obj, err)))
            return rc;
    }
    /* a boneless body's envelope may be the body itself (offset 0, a letter's default): its
       surface decimated to target_vertices, by default as many as make tetgen.target_tets tets */
    if ((rc = sc_cfg_double_range(env, "offset", is_letter ? 0 : 0.025, boneless ? 0 : 1e-4, 1.0, &o->envelope.offset, err))) return rc;
    const int conform = boneless && o->envelope.offset == 0 && !o->envelope_obj[0];
    if (conform && sc_cfg_get(env, "spacing"))
        return sc_fail(err, SC_EINPUT,
                       "%s: envelope.spacing is the grid of an offset envelope; with envelope.offset 0 the envelope is the body, "
                       "decimated to envelope.target_vertices",
                       sc_cfg_where(sc_cfg_get(env, "spacing"), w, sizeof w));
    if (!conform && (rc = sc_cfg_double_range(env, "spacing", 0, 0, 1.0, &o->envelope.spacing, err))) return rc;
    if (conform && !sc_cfg_get(env, "target_vertices")) target = 0;
    else if ((rc = sc_cfg_int(env, "target_vertices", 700, conform ? 8 : 50, 100000, &target, err))) return rc;
    o->envelope.target_vertices = (int)target;

    if (boneless && sc_cfg_get(root, "fixed"))
        return sc_fail(err, SC_EINPUT, "%s: `fixed:` places nodes on bones; this character has no `skeleton:`",
                       sc_cfg_where(sc_cfg_get(root, "fixed"), w, sizeof w));
    static const char *const shapes[] = {"box", "capsule"};
    if (!boneless &&
        ((rc = sc_cfg_section(root, "fixed", &fixed, err)) || (rc = sc_cfg_enum(fixed, "shape", shapes, 2, SC_FIXED_BOX, &o->fixed_shape, err)) ||
         (rc = sc_cfg_double_range(fixed, "radius", 0.1, 0.01, 1.0, &o->fixed_radius, err)) ||
         (rc = sc_cfg_double_range(fixed, "radius_min", 0.012, 0.001, 1.0, &o->fixed_radius_min, err)) ||
         (rc = sc_cfg_double_range(fixed, "radius_max", 0.03, 0.001, 1.0, &o->fixed_radius_max, err)) ||
         (rc = sc_cfg_bool(fixed, "fit", 1, &o->fixed_fit, err))))
        return rc;

    if ((rc = sc_cfg_section(root, "tetgen", &tg, err))) return rc;
    char prog[256];
    static char program[256];
    if ((rc = sc_cfg_double_range(tg, "radius_edge", 1.5, 1.05, 10, &o->tetgen.radius_edge, err)) ||
        (rc = sc_cfg_double_range(tg, "min_dihedral", 12, 0, 30, &o->tetgen.min_dihedral, err)) ||
        (rc = sc_cfg_double_range(tg, "sliver_angle", 8, 0, 30, &o->min_dihedral, err)) ||
        (rc = sc_cfg_double_range(tg, "max_volume", 0, 0, 1, &o->tetgen.max_volume, err)) ||
        (rc = sc_cfg_int(tg, "target_tets", 4000, 100, 10000000, &target, err)) || (rc = sc_cfg_string(tg, "program", "", prog, sizeof prog, err)) ||
        (rc = sc_cfg_bool(tg, "keep_files", 0, &o->tetgen.keep_files, err)))
        return rc;
    o->target_tets = (int)target;
    if (prog[0]) {
        snprintf(program, sizeof program, "%s", prog);
        o->tetgen.program = program;
    }

    if ((rc = sc_cfg_section(root, "material", &mat, err)) || (rc = sc_cfg_double_range(mat, "density", 1000, 1, 1e5, &o->density, err)) ||
        (rc = sc_cfg_double_range(mat, "youngs_modulus", 5e4, 1, 1e12, &o->youngs, err)) ||
        (rc = sc_cfg_double_range(mat, "poisson_ratio", 0.4, 0, 0.4999, &o->poisson, err)) ||
        (rc = sc_cfg_double_range(mat, "mass_floor", 0.1, 0, 1, &o->mass_floor, err)) ||
        (rc = sc_cfg_double_range(mat, "stable_youngs", 3.5e5, 0, 1e12, &o->stable_youngs, err)) ||
        (rc = sc_cfg_double_range(mat, "stable_dt", 0.5e-3, 0, 1, &o->stable_dt, err)))
        return rc;
    return SC_OK;
}

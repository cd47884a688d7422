#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "network/physics.h"
#include "network/rbf.h"
#include "settings/network.h"

static const char *const kinds[] = {"const", "spline", "step", "feedback", "add", "multiply", "modulate", "switch"};
enum { NKINDS = 8 };

/* [[t, v], [t, v, tangent], ...] into t, v, m (NAN: no tangent given) */
static int read_points(sc_cfg_node *list, const char *what, double **t, double **v, double **m, int *count, sc_err *err)
{
    char w[256];
    if (!sc_cfg_is_seq(list) || sc_cfg_len(list) < 1)
        return sc_fail(err, SC_EINPUT, "%s: %s is a list of points [time, value] or [time, value, tangent]", sc_cfg_where(list, w, sizeof w), what);
    const int k = sc_cfg_len(list);
    *t = malloc(3 * (size_t)k * sizeof **t);
    if (!*t) return sc_fail(err, SC_EIO, "out of memory");
    *v = *t + k;
    *m = *t + 2 * k;
    for (int i = 0; i < k; i++) {
        sc_cfg_node *p = sc_cfg_at(list, i);
        const int len = sc_cfg_is_seq(p) ? sc_cfg_len(p) : 0;
        if (len < 2 || len > 3 || (!strcmp(what, "step") && len != 2))
            return sc_fail(err, SC_EINPUT, "%s: %s point %d must be [time, value]%s", sc_cfg_where(p, w, sizeof w), what, i,
                           strcmp(what, "step") ? " or [time, value, tangent]" : "");
        double *dst[3] = {*t + i, *v + i, *m + i};
        (*m)[i] = NAN;
        for (int c = 0; c < len; c++) {
            int rc = sc_cfg_scalar_double(sc_cfg_at(p, c), dst[c], err);
            if (rc) return rc;
        }
    }
    *count = k;
    return SC_OK;
}

/* the inputs' names, resolved once every node is declared */
static int resolve_inputs(sc_cfg_node *list, sc_network *n, sc_net_node *d, sc_err *err)
{
    char w[256];
    for (int k = 0; k < sc_cfg_len(list); k++) {
        sc_cfg_node *e = sc_cfg_at(list, k);
        const char *name = sc_cfg_scalar(e);
        const int j = name ? sc_network_find(n, name) : -1;
        if (j < 0) {
            char known[512];
            int len = 0;
            known[0] = 0;
            for (int i = 0; i < n->nnodes && len < (int)sizeof known - 1; i++)
                len += snprintf(known + len, sizeof known - (size_t)len, "%s%s", i ? ", " : "", n->node[i].name);
            return sc_fail(err, SC_EINPUT, "%s: '%s' is not a node of the network (its nodes: %s)", sc_cfg_where(e, w, sizeof w), name ? name : "?",
                           known);
        }
        d->input[k] = j;
    }
    return SC_OK;
}

int sc_network_read(sc_cfg_node *nodes, const char *const *feedback, int nfeedback, sc_network *n, sc_err *err)
{
    char w[256];
    int rc = SC_OK;
    sc_network_init(n, nfeedback);
    if (!sc_cfg_is_seq(nodes) || sc_cfg_len(nodes) < 1)
        return sc_fail(err, SC_EINPUT, "%s: nodes is a list of the network's nodes", sc_cfg_where(nodes, w, sizeof w));
    const int count = sc_cfg_len(nodes);
    sc_cfg_node **inputs = calloc((size_t)count, sizeof *inputs);
    if (!inputs) return sc_fail(err, SC_EIO, "out of memory");
    for (int i = 0; i < count && !rc; i++) {
        sc_cfg_node *e = sc_cfg_at(nodes, i);
        sc_net_node d = {0};
        double *t = NULL, *v = NULL, *m = NULL;
        int idx;
        sc_cfg_where(e, d.where, sizeof d.where);
        if (!sc_cfg_is_map(e)) {
            rc = sc_fail(err, SC_EINPUT, "%s: a node is a map: {name: ..., <kind>: ...}", d.where);
            break;
        }
        if ((rc = sc_cfg_string(e, "name", NULL, d.name, sizeof d.name, err))) break;
        int kind = -1;
        for (int k = 0; k < NKINDS; k++)
            if (sc_cfg_get(e, kinds[k])) {
                if (kind >= 0) {
                    rc = sc_fail(err, SC_EINPUT, "%s: node '%s' is both a %s and a %s", d.where, d.name, kinds[kind], kinds[k]);
                    break;
                }
                kind = k;
            }
        if (rc) break;
        if (kind < 0) {
            rc = sc_fail(err, SC_EINPUT, "%s: node '%s' has no kind: one of const, spline, step, feedback, add, multiply, modulate, switch", d.where,
                         d.name);
            break;
        }
        d.kind = (sc_node_kind)kind;
        sc_cfg_node *body = sc_cfg_get(e, kinds[kind]);
        switch (d.kind) {
            case SC_NODE_CONST: rc = sc_cfg_double(e, "const", 0, &d.value, err); break;
            case SC_NODE_SPLINE:
            case SC_NODE_STEP:
                if (!(rc = read_points(body, kinds[kind], &t, &v, &m, &d.npoints, err))) rc = sc_cfg_bool(e, "loop", 0, &d.loop, err);
                break;
            case SC_NODE_FEEDBACK: rc = sc_cfg_enum(e, "feedback", feedback, nfeedback, 0, &d.feedback, err); break;
            default:
                if (!sc_cfg_is_seq(body) || sc_cfg_len(body) > SC_NODE_MAX_INPUTS)
                    rc = sc_fail(err, SC_EINPUT, "%s: %s of node '%s' is a list of at most %d node names", sc_cfg_where(body, w, sizeof w),
                                 kinds[kind], d.name, SC_NODE_MAX_INPUTS);
                d.ninputs = sc_cfg_len(body);
                inputs[i] = body;
                if (!rc && d.kind == SC_NODE_MODULATE) rc = sc_cfg_double_range(e, "expected", 0.3, 1e-3, 1e3, &d.value, err);
        }
        if (!rc) rc = sc_network_add(n, &d, t, v, m, &idx, err);
        free(t);
    }
    for (int i = 0; i < count && !rc; i++)
        if (inputs[i]) rc = resolve_inputs(inputs[i], n, &n->node[i], err);
    free(inputs);
    if (rc) return rc;
    return sc_network_finish(n, err);
}

/* a bone by name at key `key` of map e ("all" allowed when all_ok: -1) */
static int read_bone(sc_cfg_node *e, const char *key, const sc_model *m, int all_ok, int *out, sc_err *err)
{
    char name[SC_NAME_LEN], w[256];
    int rc = sc_cfg_string(e, key, NULL, name, sizeof name, err);
    if (rc) return rc;
    if (all_ok && !strcmp(name, "all")) {
        *out = -1;
        return SC_OK;
    }
    if ((*out = sc_model_bone_index(m, name)) < 0)
        return sc_fail(err, SC_EINPUT, "%s: '%s' is not a bone of the character", sc_cfg_where(sc_cfg_get(e, key), w, sizeof w), name);
    return SC_OK;
}

/* a node by name at key `key` (absent and optional: -1) */
static int read_node(sc_cfg_node *e, const char *key, const sc_network *n, int required, int *out, sc_err *err)
{
    char name[SC_NAME_LEN], w[256];
    *out = -1;
    if (!required && !sc_cfg_get(e, key)) return SC_OK;
    int rc = sc_cfg_string(e, key, NULL, name, sizeof name, err);
    if (rc) return rc;
    if ((*out = sc_network_find(n, name)) < 0)
        return sc_fail(err, SC_EINPUT, "%s: '%s' is not a node of the network", sc_cfg_where(sc_cfg_get(e, key), w, sizeof w), name);
    return SC_OK;
}

/* a list of maps under key; *count items */
static int read_list(sc_cfg_node *net, const char *key, sc_cfg_node **list, int *count, sc_err *err)
{
    char w[256];
    int rc = sc_cfg_list(net, key, 0, list, err);
    *count = *list ? sc_cfg_len(*list) : 0;
    if (!rc && *count > SC_NET_MAX_OUTPUTS)
        return sc_fail(err, SC_EINPUT, "%s: network.%s has %d entries, more than %d", sc_cfg_where(*list, w, sizeof w), key, *count,
                       SC_NET_MAX_OUTPUTS);
    return rc;
}

#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)

int sc_net_params_read(sc_cfg_node *controller, const sc_model *m, sc_net_params *p, sc_err *err)
{
    static const char *const sides[] = {"left", "right"}, *const frames[] = {"parent", "heading"};
    static const char *const axes[3] = {"flex", "abduct", "twist"};
    sc_cfg_node *net, *list, *feet, *sec;
    char w[256];
    int rc, count;
    memset(p, 0, sizeof *p);
    TRY(sc_cfg_section(controller, "network", &net, err));
    TRY(sc_cfg_require(net, "nodes", &list, err));
    TRY(sc_network_read(list, sc_net_feedback_names, SC_FB_COUNT, &p->net, err));
    TRY(sc_cfg_list(net, "feet", 1, &feet, err));
    if (sc_cfg_len(feet) != 2) return sc_fail(err, SC_EINPUT, "%s: network.feet is [left foot, right foot]", sc_cfg_where(feet, w, sizeof w));
    for (int k = 0; k < 2; k++) {
        const char *name = sc_cfg_scalar(sc_cfg_at(feet, k));
        if (!name || (p->foot[k] = sc_model_bone_index(m, name)) <= 0)
            return sc_fail(err, SC_EINPUT, "%s: '%s' is not a bone below the root", sc_cfg_where(sc_cfg_at(feet, k), w, sizeof w), name ? name : "?");
    }
    sc_cfg_node *arms;
    TRY(sc_cfg_list(net, "arms", 0, &arms, err));
    p->arm[0] = p->arm[1] = -1;
    if (arms && sc_cfg_len(arms) != 2)
        return sc_fail(err, SC_EINPUT, "%s: network.arms is [left upper arm, right upper arm]", sc_cfg_where(arms, w, sizeof w));
    for (int k = 0; arms && k < 2; k++) {
        const char *name = sc_cfg_scalar(sc_cfg_at(arms, k));
        if (!name || (p->arm[k] = sc_model_bone_index(m, name)) <= 0)
            return sc_fail(err, SC_EINPUT, "%s: '%s' is not a bone below the root", sc_cfg_where(sc_cfg_at(arms, k), w, sizeof w), name ? name : "?");
    }
    TRY(sc_cfg_double_range(net, "arm_down", 0.15, 0, 1.6, &p->arm_down, err));
    const double fwd[3] = {0, 0, 1};
    TRY(sc_cfg_vec_range(net, "forward", 3, fwd, -1, 1, p->forward, err));
    TRY(sc_cfg_double_range(net, "min_step", 0.1, 0, 10, &p->min_step, err));
    TRY(sc_cfg_enum(net, "first_stance", sides, 2, 1, &p->first_stance, err));
    TRY(sc_cfg_double_range(net, "torque_scale", 1, 0, 10, &p->torque_scale, err));

    TRY(read_list(net, "targets", &list, &count, err));
    for (int i = 0; i < count; i++) {
        sc_cfg_node *e = sc_cfg_at(list, i);
        sc_net_target *t = &p->target[i];
        TRY(read_bone(e, "bone", m, 0, &t->bone, err));
        if (t->bone == 0) return sc_fail(err, SC_EINPUT, "%s: the root has no joint to target: use torso", sc_cfg_where(e, w, sizeof w));
        int any = 0;
        for (int a = 0; a < 3; a++) {
            TRY(read_node(e, axes[a], &p->net, 0, &t->node[a], err));
            any |= t->node[a] >= 0;
        }
        if (!any) return sc_fail(err, SC_EINPUT, "%s: a target names a node for flex, abduct or twist", sc_cfg_where(e, w, sizeof w));
        TRY(sc_cfg_enum(e, "frame", frames, 2, 0, &t->heading, err));
        p->ntargets = i + 1;
    }
    TRY(read_list(net, "gains", &list, &count, err));
    for (int i = 0; i < count; i++) {
        sc_cfg_node *e = sc_cfg_at(list, i);
        TRY(read_bone(e, "bone", m, 1, &p->gain[i].bone, err));
        TRY(read_node(e, "node", &p->net, 1, &p->gain[i].node, err));
        p->ngains = i + 1;
    }
    TRY(read_list(net, "effectors", &list, &count, err));
    for (int i = 0; i < count; i++) {
        sc_cfg_node *e = sc_cfg_at(list, i);
        sc_net_effector *f = &p->effector[i];
        TRY(read_bone(e, "bone", m, 0, &f->bone, err));
        TRY(read_bone(e, "base", m, 0, &f->base, err));
        if (f->bone == f->base || !sc_bone_is_below(m, f->bone, f->base))
            return sc_fail(err, SC_EINPUT, "%s: the effector '%s' must hang below its base '%s'", sc_cfg_where(e, w, sizeof w), m->bone_name[f->bone],
                           m->bone_name[f->base]);
        TRY(read_node(e, "height", &p->net, 1, &f->node, err));
        TRY(sc_cfg_double_range(e, "kp", 500, 0, 1e6, &f->kp, err));
        TRY(sc_cfg_double_range(e, "kd", 50, 0, 1e5, &f->kd, err));
        p->neffectors = i + 1;
    }
    static const char *const torso_keys[4] = {"pitch", "roll", "heading", "gain"},
                             *const com_keys[5] = {"forward", "left", "speed", "side_speed", "gain"};
    for (int k = 0; k < 4; k++) p->torso_node[k] = -1;
    for (int k = 0; k < 5; k++) p->com_node[k] = -1;
    if (sc_cfg_get(net, "torso")) {
        TRY(sc_cfg_section(net, "torso", &sec, err));
        TRY(sc_cfg_double_range(sec, "kp", 0, 0, 1e6, &p->torso_kp, err));
        TRY(sc_cfg_double_range(sec, "kd", 0.1 * p->torso_kp, 0, 1e5, &p->torso_kd, err));
        for (int k = 0; k < 4; k++) TRY(read_node(sec, torso_keys[k], &p->net, 0, &p->torso_node[k], err));
    }
    if (sc_cfg_get(net, "com")) {
        TRY(sc_cfg_section(net, "com", &sec, err));
        TRY(sc_cfg_double_range(sec, "kp", 0, 0, 1e6, &p->com_kp, err));
        TRY(sc_cfg_double_range(sec, "kd", 0, 0, 1e5, &p->com_kd, err));
        for (int k = 0; k < 5; k++) TRY(read_node(sec, com_keys[k], &p->net, 0, &p->com_node[k], err));
    }
    static const char *const legs_keys[4] = {"drop", "forward", "pitch", "toe"};
    for (int k = 0; k < 4; k++) p->legs_node[k] = -1;
    if ((p->legs = sc_cfg_get(net, "legs") != NULL)) {
        TRY(sc_cfg_section(net, "legs", &sec, err));
        for (int k = 0; k < 4; k++) TRY(read_node(sec, legs_keys[k], &p->net, 0, &p->legs_node[k], err));
    }
    TRY(sc_cfg_list(net, "gravity", 0, &list, err));
    for (int i = 0; list && i < sc_cfg_len(list); i++) {
        const char *name = sc_cfg_scalar(sc_cfg_at(list, i));
        const int b = name ? sc_model_bone_index(m, name) : -1;
        if (b <= 0)
            return sc_fail(err, SC_EINPUT, "%s: '%s' is not a bone with a joint", sc_cfg_where(sc_cfg_at(list, i), w, sizeof w), name ? name : "?");
        p->gravity[b] = 1;
    }
    return SC_OK;
}

int sc_explore_read(sc_cfg_node *sec, const sc_network *net, sc_explore_config *cfg, sc_err *err)
{
    sc_cfg_node *list, *sub;
    char w[256];
    int rc;
    long v;
    memset(cfg, 0, sizeof *cfg);
    TRY(sc_cfg_double_range(sec, "duration", 10, 0.01, 1e4, &cfg->duration, err));
    TRY(sc_cfg_double_range(sec, "measure_from", 0, 0, cfg->duration * (1 - 1e-9), &cfg->measure_from, err));
    TRY(sc_cfg_list(sec, "knobs", 1, &list, err));
    if (sc_cfg_len(list) < 1 || sc_cfg_len(list) > SC_EXPLORE_MAX_KNOBS)
        return sc_fail(err, SC_EINPUT, "%s: parameterize.knobs lists 1 to %d knobs, not %d", sc_cfg_where(list, w, sizeof w), SC_EXPLORE_MAX_KNOBS,
                       sc_cfg_len(list));
    for (int i = 0; i < sc_cfg_len(list); i++) {
        sc_cfg_node *e = sc_cfg_at(list, i);
        sc_knob *k = &cfg->knob[i];
        double b[2];
        TRY(read_node(e, "node", net, 1, &k->node, err));
        const sc_net_node *d = &net->node[k->node];
        TRY(sc_cfg_int(e, "point", -1, -1, 1000, &v, err));
        k->point = (int)v;
        if (k->point < 0 && d->kind != SC_NODE_CONST)
            return sc_fail(err, SC_EINPUT, "%s: knob '%s' is not a constant: name one of its points with `point`", sc_cfg_where(e, w, sizeof w),
                           d->name);
        if (k->point >= 0 && (d->kind != SC_NODE_SPLINE || k->point >= d->npoints))
            return sc_fail(err, SC_EINPUT, "%s: knob '%s' has no point %d (a knob is a constant or a spline's point)", sc_cfg_where(e, w, sizeof w),
                           d->name, k->point);
        TRY(sc_cfg_vec_range(e, "bounds", 2, NULL, -1e3, 1e3, b, err));
        if (!(b[0] < b[1]))
            return sc_fail(err, SC_EINPUT, "%s: knob '%s': bounds [%g, %g] must increase", sc_cfg_where(e, w, sizeof w), d->name, b[0], b[1]);
        k->lo = b[0];
        k->hi = b[1];
        cfg->nknobs = i + 1;
    }
    TRY(sc_cfg_list(sec, "objectives", 1, &list, err));
    if (sc_cfg_len(list) < 1 || sc_cfg_len(list) > SC_EXPLORE_MAX_OBJ)
        return sc_fail(err, SC_EINPUT, "%s: parameterize.objectives lists 1 to %d objectives", sc_cfg_where(list, w, sizeof w), SC_EXPLORE_MAX_OBJ);
    for (int i = 0; i < sc_cfg_len(list); i++) {
        sc_cfg_node *e = sc_cfg_at(list, i);
        sc_objective_spec *o = &cfg->obj[i];
        double r[2];
        TRY(sc_cfg_enum(e, "measure", sc_measure_names, SC_MEASURES, 0, &o->measure, err));
        TRY(sc_cfg_vec_range(e, "range", 2, NULL, -1e4, 1e4, r, err));
        if (!(r[0] < r[1])) return sc_fail(err, SC_EINPUT, "%s: objective range [%g, %g] must increase", sc_cfg_where(e, w, sizeof w), r[0], r[1]);
        o->lo = r[0];
        o->hi = r[1];
        TRY(sc_cfg_double_range(e, "tolerance", 0.05 * (r[1] - r[0]), 1e-9, 1e4, &o->tolerance, err));
        cfg->nobj = i + 1;
    }
    TRY(sc_cfg_section(sec, "success", &sub, err));
    TRY(sc_cfg_double_range(sub, "max_tilt", 1.0, 0.01, 3.2, &cfg->max_tilt, err));
    TRY(sc_cfg_bool(sub, "bad_contacts", 1, &cfg->bad_contacts, err));
    TRY(sc_cfg_double_range(sub, "settle_speed", 0, 0, 100, &cfg->settle_speed, err));
    TRY(sc_cfg_section(sec, "initial", &sub, err));
    TRY(sc_cfg_int(sub, "batch", 16, 1, 100000, &v, err));
    cfg->batch = (int)v;
    TRY(sc_cfg_int(sub, "max_batches", 8, 1, 10000, &v, err));
    cfg->max_batches = (int)v;
    TRY(sc_cfg_int(sub, "min_success", 8, 1, 100000, &v, err));
    cfg->min_success = (int)v;
    TRY(sc_cfg_double_range(sub, "grow", 1.5, 1, 100, &cfg->grow, err));
    TRY(sc_cfg_int(sec, "rounds", 4, 0, 63, &v, err));
    cfg->rounds = (int)v;
    TRY(sc_cfg_section(sec, "round", &sub, err));
    TRY(sc_cfg_int(sub, "targets", 8, 1, 100000, &v, err));
    cfg->targets = (int)v;
    TRY(sc_cfg_int(sub, "k", 4, 1, SC_RBF_MAX, &v, err));
    cfg->k = (int)v;
    TRY(sc_cfg_int(sub, "local", 4, 0, 10000, &v, err));
    cfg->local = (int)v;
    TRY(sc_cfg_double_range(sub, "sigma", 0.1, 0, 10, &cfg->sigma, err));
    return SC_OK;
}

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

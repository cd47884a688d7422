#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "network/tdag.h"

static const char *const kind_name[] = {"constant", "spline", "step", "feedback", "add", "multiply", "modulate", "switch"};

void sc_network_init(sc_network *n, int nfeedback)
{
    memset(n, 0, sizeof *n);
    n->nfeedback = nfeedback;
}

void sc_network_free(sc_network *n)
{
    free(n->node);
    free(n->order);
    free(n->pt_t);
    free(n->pt_v);
    free(n->pt_m);
    free(n->pt_m_given);
    memset(n, 0, sizeof *n);
}

int sc_network_find(const sc_network *n, const char *name)
{
    for (int i = 0; i < n->nnodes; i++)
        if (!strcmp(n->node[i].name, name)) return i;
    return -1;
}

static int grow(void **p, int *cap, int need, size_t size)
{
    if (need <= *cap) return 0;
    int c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* the control-point arrays share one capacity */
static int grow_points(sc_network *n, int need)
{
    if (need <= n->cap_points) return 0;
    int cap = n->cap_points ? n->cap_points : 16;
    while (cap < need) cap *= 2;
    double **arrays[4] = {&n->pt_t, &n->pt_v, &n->pt_m, &n->pt_m_given};
    for (int k = 0; k < 4; k++) {
        double *q = realloc(*arrays[k], (size_t)cap * sizeof *q);
        if (!q) return -1;
        *arrays[k] = q;
    }
    n->cap_points = cap;
    return 0;
}

/* Catmull-Rom tangents where none was given; a loop wraps around its period */
static void fill_tangents(sc_network *n, const sc_net_node *d)
{
    const double *t = n->pt_t + d->first, *v = n->pt_v + d->first;
    double *m = n->pt_m + d->first;
    const double *given = n->pt_m_given + d->first;
    const int k = d->npoints;
    for (int i = 0; i < k; i++) {
        if (!isnan(m[i] = given[i])) continue;
        if (i > 0 && i < k - 1) m[i] = (v[i + 1] - v[i - 1]) / (t[i + 1] - t[i - 1]);
        else if (d->loop && k > 2) m[i] = (v[1] - v[k - 2]) / (t[1] - t[0] + t[k - 1] - t[k - 2]);
        else m[i] = i == 0 ? (v[1] - v[0]) / (t[1] - t[0]) : (v[k - 1] - v[k - 2]) / (t[k - 1] - t[k - 2]);
    }
}

int sc_network_add(sc_network *n, const sc_net_node *node, const double *t, const double *v, const double *m, int *index, sc_err *err)
{
    const sc_net_node *d = node;
    const char *w = d->where;
    if (n->finished) return sc_fail(err, SC_EINPUT, "%s: the network is already finished", w);
    if (!d->name[0]) return sc_fail(err, SC_EINPUT, "%s: a node needs a name", w);
    const int other = sc_network_find(n, d->name);
    if (other >= 0) return sc_fail(err, SC_EINPUT, "%s: a second node called '%s' (the first at %s)", w, d->name, n->node[other].where);
    if ((unsigned)d->kind > SC_NODE_SWITCH) return sc_fail(err, SC_EINPUT, "%s: node '%s' has no known kind", w, d->name);
    const char *kind = kind_name[d->kind];
    switch (d->kind) {
        case SC_NODE_CONST:
            if (!isfinite(d->value)) return sc_fail(err, SC_EINPUT, "%s: constant '%s' is not finite", w, d->name);
            /* fall through */
        case SC_NODE_SPLINE:
        case SC_NODE_STEP:
        case SC_NODE_FEEDBACK:
            if (d->ninputs) return sc_fail(err, SC_EINPUT, "%s: %s '%s' takes no inputs", w, kind, d->name);
            break;
        case SC_NODE_ADD:
            if (d->ninputs < 1 || d->ninputs > SC_NODE_MAX_INPUTS)
                return sc_fail(err, SC_EINPUT, "%s: add '%s' takes 1 to %d inputs, not %d", w, d->name, SC_NODE_MAX_INPUTS, d->ninputs);
            break;
        case SC_NODE_MULTIPLY:
            if (d->ninputs != 2) return sc_fail(err, SC_EINPUT, "%s: multiply '%s' takes 2 inputs, not %d", w, d->name, d->ninputs);
            break;
        case SC_NODE_MODULATE:
        case SC_NODE_SWITCH:
            if (d->ninputs < 2 || d->ninputs > 3)
                return sc_fail(err, SC_EINPUT, "%s: %s '%s' takes a step input and 1 or 2 more, not %d inputs", w, kind, d->name, d->ninputs);
            if (d->kind == SC_NODE_MODULATE && !(d->value > 0 && isfinite(d->value)))
                return sc_fail(err, SC_EINPUT, "%s: modulate '%s': the expected step length must be > 0 s, not %g", w, d->name, d->value);
            break;
    }
    if (d->kind == SC_NODE_FEEDBACK && (d->feedback < 0 || d->feedback >= n->nfeedback))
        return sc_fail(err, SC_EINPUT, "%s: feedback '%s' has index %d, outside [0, %d)", w, d->name, d->feedback, n->nfeedback);
    const int pts = d->kind == SC_NODE_SPLINE || d->kind == SC_NODE_STEP ? d->npoints : 0;
    if (d->kind == SC_NODE_SPLINE && pts < 2) return sc_fail(err, SC_EINPUT, "%s: spline '%s' needs at least 2 points, not %d", w, d->name, pts);
    if (d->kind == SC_NODE_STEP && pts < 1) return sc_fail(err, SC_EINPUT, "%s: step '%s' needs at least 1 point", w, d->name);
    if (d->loop && pts < 2) return sc_fail(err, SC_EINPUT, "%s: '%s' loops, so it needs at least 2 points (the last ends the period)", w, d->name);
    for (int i = 0; i < pts; i++) {
        if (!isfinite(t[i]) || !isfinite(v[i]) || (m && isinf(m[i])))
            return sc_fail(err, SC_EINPUT, "%s: %s '%s': point %d is not finite", w, kind, d->name, i);
        if (i > 0 && !(t[i] > t[i - 1]))
            return sc_fail(err, SC_EINPUT, "%s: %s '%s': point %d's time %g does not follow %g (times must increase)", w, kind, d->name, i, t[i],
                           t[i - 1]);
        if (d->kind == SC_NODE_STEP && v[i] != 0 && v[i] != 1)
            return sc_fail(err, SC_EINPUT, "%s: step '%s': point %d's value %g is neither 0 nor 1", w, d->name, i, v[i]);
    }
    if (grow((void **)&n->node, &n->cap_nodes, n->nnodes + 1, sizeof *n->node) || grow_points(n, n->npoints + pts))
        return sc_fail(err, SC_EIO, "out of memory");
    sc_net_node *e = &n->node[n->nnodes];
    *e = *d;
    e->first = n->npoints;
    e->npoints = pts;
    for (int i = 0; i < pts; i++) {
        n->pt_t[e->first + i] = t[i];
        n->pt_v[e->first + i] = v[i];
        n->pt_m_given[e->first + i] = m ? m[i] : NAN;
    }
    n->npoints += pts;
    if (d->kind == SC_NODE_SPLINE) fill_tangents(n, e);
    *index = n->nnodes++;
    return SC_OK;
}

/* Kahn's order; what is left afterwards lies on or behind a cycle, which is then walked and
   named */
int sc_network_finish(sc_network *n, sc_err *err)
{
    const int nn = n->nnodes;
    for (int i = 0; i < nn; i++) {
        const sc_net_node *d = &n->node[i];
        for (int k = 0; k < d->ninputs; k++) {
            const int j = d->input[k];
            if (j < 0 || j >= nn) return sc_fail(err, SC_EINPUT, "%s: node '%s': input %d is not a node", d->where, d->name, k);
            if (d->kind == SC_NODE_MODULATE && k > 0 && n->node[j].kind != SC_NODE_SPLINE && n->node[j].kind != SC_NODE_STEP)
                return sc_fail(err, SC_EINPUT, "%s: modulate '%s' scales trajectories in time: '%s' is a %s, not a spline or step function", d->where,
                               d->name, n->node[j].name, kind_name[n->node[j].kind]);
        }
    }
    free(n->order);
    int *indeg = calloc((size_t)nn + 1, sizeof *indeg), *queue = malloc(((size_t)nn + 1) * sizeof *queue);
    n->order = malloc(((size_t)nn + 1) * sizeof *n->order);
    if (!indeg || !queue || !n->order) {
        free(indeg);
        free(queue);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (int i = 0; i < nn; i++) indeg[i] = n->node[i].ninputs;
    int head = 0, tail = 0;
    for (int i = 0; i < nn; i++)
        if (!indeg[i]) queue[tail++] = i;
    while (head < tail) {
        const int j = queue[head++];
        n->order[head - 1] = j;
        for (int i = 0; i < nn; i++) /* networks are small: a scan beats an adjacency list */
            for (int k = 0; k < n->node[i].ninputs; k++)
                if (n->node[i].input[k] == j && !--indeg[i]) queue[tail++] = i;
    }
    int rc = SC_OK;
    if (tail < nn) {
        int at = 0;
        while (!indeg[at]) at++;
        /* step back along unfinished inputs until a node repeats: that node is on a cycle */
        int *seen = queue; /* reused as a visit mark */
        for (int i = 0; i < nn; i++) seen[i] = 0;
        while (!seen[at]) {
            seen[at] = 1;
            const sc_net_node *d = &n->node[at];
            for (int k = 0; k < d->ninputs; k++)
                if (indeg[d->input[k]]) {
                    at = d->input[k];
                    break;
                }
        }
        char path[1024];
        int len = snprintf(path, sizeof path, "%s", n->node[at].name);
        int cur = at;
        do {
            const sc_net_node *d = &n->node[cur];
            for (int k = 0; k < d->ninputs; k++)
                if (indeg[d->input[k]]) {
                    cur = d->input[k];
                    break;
                }
            if (len < (int)sizeof path) len += snprintf(path + len, sizeof path - (size_t)len, " <- %s", n->node[cur].name);
        } while (cur != at);
        rc = sc_fail(err, SC_EINPUT, "%s: node '%s' is on a cycle (%s): a motion network must be acyclic", n->node[at].where, n->node[at].name, path);
    }
    free(indeg);
    free(queue);
    n->finished = rc == SC_OK;
    return rc;
}

int sc_network_clone(const sc_network *src, sc_network *dst, sc_err *err)
{
    sc_network_init(dst, src->nfeedback);
    const size_t nn = (size_t)src->nnodes + 1, np = (size_t)src->npoints + 1;
    dst->node = malloc(nn * sizeof *dst->node);
    dst->order = malloc(nn * sizeof *dst->order);
    dst->pt_t = malloc(np * sizeof *dst->pt_t);
    dst->pt_v = malloc(np * sizeof *dst->pt_v);
    dst->pt_m = malloc(np * sizeof *dst->pt_m);
    dst->pt_m_given = malloc(np * sizeof *dst->pt_m_given);
    if (!dst->node || !dst->order || !dst->pt_t || !dst->pt_v || !dst->pt_m || !dst->pt_m_given) {
        sc_network_free(dst);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    memcpy(dst->node, src->node, (size_t)src->nnodes * sizeof *dst->node);
    if (src->order) memcpy(dst->order, src->order, (size_t)src->nnodes * sizeof *dst->order);
    memcpy(dst->pt_t, src->pt_t, (size_t)src->npoints * sizeof *dst->pt_t);
    memcpy(dst->pt_v, src->pt_v, (size_t)src->npoints * sizeof *dst->pt_v);
    memcpy(dst->pt_m, src->pt_m, (size_t)src->npoints * sizeof *dst->pt_m);
    memcpy(dst->pt_m_given, src->pt_m_given, (size_t)src->npoints * sizeof *dst->pt_m_given);
    dst->nnodes = dst->cap_nodes = src->nnodes;
    dst->npoints = dst->cap_points = src->npoints;
    dst->finished = src->finished;
    return SC_OK;
}

int sc_network_set_value(sc_network *n, int node, int point, double value, sc_err *err)
{
    if (node < 0 || node >= n->nnodes) return sc_fail(err, SC_EINPUT, "network: no node %d", node);
    sc_net_node *d = &n->node[node];
    if (!isfinite(value)) return sc_fail(err, SC_EINPUT, "%s: '%s': a value must be finite", d->where, d->name);
    if (point < 0) {
        if (d->kind != SC_NODE_CONST)
            return sc_fail(err, SC_EINPUT, "%s: '%s' is a %s, not a constant: name a point of it", d->where, d->name, kind_name[d->kind]);
        d->value = value;
        return SC_OK;
    }
    if (d->kind != SC_NODE_SPLINE)
        return sc_fail(err, SC_EINPUT, "%s: '%s' is a %s: only a spline's points can be set", d->where, d->name, kind_name[d->kind]);
    if (point >= d->npoints) return sc_fail(err, SC_EINPUT, "%s: spline '%s' has %d points, no point %d", d->where, d->name, d->npoints, point);
    n->pt_v[d->first + point] = value;
    fill_tangents(n, d);
    return SC_OK;
}

double sc_network_get_value(const sc_network *n, int node, int point)
{
    const sc_net_node *d = &n->node[node];
    return point < 0 ? d->value : n->pt_v[d->first + point];
}

int sc_network_state_init(const sc_network *n, sc_network_state *s, sc_err *err)
{
    const size_t k = (size_t)n->nnodes + 1;
    memset(s, 0, sizeof *s);
    s->value = calloc(k, sizeof *s->value);
    s->step_start = calloc(k, sizeof *s->step_start);
    s->last_len = calloc(2 * k, sizeof *s->last_len);
    s->level = calloc(k, sizeof *s->level);
    if (!s->value || !s->step_start || !s->last_len || !s->level) {
        sc_network_state_free(s);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    sc_network_state_reset(n, s);
    return SC_OK;
}

void sc_network_state_free(sc_network_state *s)
{
    free(s->value);
    free(s->step_start);
    free(s->last_len);
    free(s->level);
    memset(s, 0, sizeof *s);
}

void sc_network_state_reset(const sc_network *n, sc_network_state *s)
{
    s->t = NAN;
    for (int i = 0; i < n->nnodes; i++) {
        s->value[i] = 0;
        s->step_start[i] = NAN;
        s->level[i] = -1;
        s->last_len[2 * i] = s->last_len[2 * i + 1] = n->node[i].value; /* the expected length */
    }
}

/* t wrapped into a looping channel's period */
static double channel_time(const sc_network *n, const sc_net_node *d, double t)
{
    const double t0 = n->pt_t[d->first], t1 = n->pt_t[d->first + d->npoints - 1];
    if (!d->loop) return t;
    const double p = t1 - t0, u = fmod(t - t0, p);
    return t0 + (u < 0 ? u + p : u);
}

/* the last control point at or before t (0 before the first) */
static int segment(const double *t, int k, double x)
{
    int lo = 0, hi = k - 1;
    if (x < t[0]) return 0;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (t[mid] <= x) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

double sc_network_channel_at(const sc_network *n, int node, double t)
{
    const sc_net_node *d = &n->node[node];
    const double *pt = n->pt_t + d->first, *v = n->pt_v + d->first, *m = n->pt_m + d->first;
    const int k = d->npoints;
    t = channel_time(n, d, t);
    if (d->kind == SC_NODE_STEP) return v[segment(pt, k, t)];
    if (t <= pt[0]) return v[0];
    if (t >= pt[k - 1]) return v[k - 1];
    const int i = segment(pt, k, t);
    const double h = pt[i + 1] - pt[i], s = (t - pt[i]) / h, s2 = s * s, s3 = s2 * s;
    /* cubic Hermite basis */
    return (2 * s3 - 3 * s2 + 1) * v[i] + (s3 - 2 * s2 + s) * h * m[i] + (-2 * s3 + 3 * s2) * v[i + 1] + (s3 - s2) * h * m[i + 1];
}

/* The step of a step-function channel containing t: [*a, *b), an end unknown (before the first
   point, after the last of a channel that does not loop, or a step running on across a loop's
   period) is infinite. A looping channel's last point only ends the period. */
static void step_bounds(const sc_network *n, const sc_net_node *d, double t, double *a, double *b)
{
    const double *pt = n->pt_t + d->first, *v = n->pt_v + d->first;
    const int k = d->npoints, kk = d->loop ? k - 1 : k;
    const double u = channel_time(n, d, t), shift = t - u;
    const int i = segment(pt, k, u);
    int lo = i, hi = i + 1;
    while (lo > 0 && v[lo - 1] == v[i]) lo--;
    while (hi < kk && v[hi] == v[i]) hi++;
    const int wraps = d->loop && v[kk - 1] == v[0] && v[i] == v[0];
    *a = u < pt[0] || (lo == 0 && wraps) ? -INFINITY : pt[lo] + shift;
    *b = hi < kk ? pt[hi] + shift : d->loop && !wraps ? pt[k - 1] + shift : INFINITY;
}

static double modulate(const sc_network *n, sc_network_state *s, int i, double t)
{
    const sc_net_node *d = &n->node[i];
    const int level = s->value[d->input[0]] >= 0.5;
    if (s->level[i] != level) {
        if (s->level[i] >= 0) s->last_len[2 * i + s->level[i]] = t - s->step_start[i];
        s->level[i] = level;
        s->step_start[i] = t;
    }
    const int traj = level ? d->input[1] : d->ninputs == 3 ? d->input[2] : -1;
    if (traj < 0) return 0;
    double a = s->step_start[i], len = s->last_len[2 * i + level];
    const sc_net_node *step = &n->node[d->input[0]];
    if (step->kind == SC_NODE_STEP) { /* a step function's steps are known in advance */
        double lo, hi;
        step_bounds(n, step, t, &lo, &hi);
        if (isfinite(lo) && isfinite(hi)) {
            a = lo;
            len = hi - lo;
        }
    }
    const sc_net_node *tr = &n->node[traj];
    const double t0 = n->pt_t[tr->first], t1 = n->pt_t[tr->first + tr->npoints - 1];
    const double phase = fmin(1, fmax(0, (t - a) / len));
    return sc_network_channel_at(n, traj, t0 + phase * (t1 - t0));
}

void sc_network_eval(const sc_network *n, sc_network_state *s, double t, const double *feedback)
{
    for (int o = 0; o < n->nnodes; o++) {
        const int i = n->order[o];
        const sc_net_node *d = &n->node[i];
        const double *x = s->value;
        double y = 0;
        switch (d->kind) {
            case SC_NODE_CONST: y = d->value; break;
            case SC_NODE_SPLINE:
            case SC_NODE_STEP: y = sc_network_channel_at(n, i, t); break;
            case SC_NODE_FEEDBACK: y = feedback[d->feedback]; break;
            case SC_NODE_ADD:
                for (int k = 0; k < d->ninputs; k++) y += x[d->input[k]];
                break;
            case SC_NODE_MULTIPLY: y = x[d->input[0]] * x[d->input[1]]; break;
            case SC_NODE_MODULATE: y = modulate(n, s, i, t); break;
            case SC_NODE_SWITCH: y = x[d->input[0]] >= 0.5 ? x[d->input[1]] : d->ninputs == 3 ? x[d->input[2]] : 0; break;
        }
        s->value[i] = y;
    }
    s->t = t;
}

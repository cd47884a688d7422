/* Envelope Cholesky (skyline.h). */
#include "optim/skyline.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void sc_skyline_free(sc_skyline *s)
{
    if (!s) return;
    free(s->perm);
    free(s->iperm);
    free(s->first);
    free(s->start);
    free(s->val);
    memset(s, 0, sizeof *s);
}

typedef struct adjacency {
    int *first, *nb; /* CSR of node neighbours */
} adjacency;

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

static int build_adjacency(int nnodes, int nelem, int per, const int *elem, adjacency *g)
{
    int *deg = calloc((size_t)nnodes + 1, sizeof(int));
    if (!deg) return 0;
    for (int e = 0; e < nelem; e++)
        for (int a = 0; a < per; a++) deg[elem[per * e + a]] += per - 1;
    g->first = malloc(((size_t)nnodes + 1) * sizeof(int));
    int total = 0;
    for (int i = 0; i < nnodes; i++) total += deg[i];
    g->nb = malloc((size_t)(total ? total : 1) * sizeof(int));
    if (!g->first || !g->nb) {
        free(deg);
        return 0;
    }
    g->first[0] = 0;
    for (int i = 0; i < nnodes; i++) g->first[i + 1] = g->first[i] + deg[i];
    memset(deg, 0, (size_t)nnodes * sizeof(int));
    for (int e = 0; e < nelem; e++)
        for (int a = 0; a < per; a++)
            for (int b = 0; b < per; b++)
                if (a != b) {
                    int i = elem[per * e + a];
                    g->nb[g->first[i] + deg[i]++] = elem[per * e + b];
                }
    /* sort and drop repeats */
    int w = 0;
    for (int i = 0; i < nnodes; i++) {
        int lo = g->first[i], hi = g->first[i + 1];
        qsort(g->nb + lo, (size_t)(hi - lo), sizeof(int), cmp_int);
        g->first[i] = w;
        for (int k = lo; k < hi; k++)
            if (k == lo || g->nb[k] != g->nb[k - 1]) g->nb[w++] = g->nb[k];
    }
    g->first[nnodes] = w;
    free(deg);
    return 1;
}

/* Reverse Cuthill-McKee over every connected component, each started at a node of least
 * degree; neighbours by increasing degree (ties by index): deterministic. */
static void rcm(int nnodes, const adjacency *g, int *order)
{
    char *seen = calloc((size_t)nnodes, 1);
    int *nbuf = malloc((size_t)nnodes * sizeof(int));
    int head = 0, tail = 0;
    while (tail < nnodes) {
        int start = -1;
        for (int i = 0; i < nnodes; i++)
            if (!seen[i] && (start < 0 || g->first[i + 1] - g->first[i] < g->first[start + 1] - g->first[start])) start = i;
        seen[start] = 1;
        order[tail++] = start;
        while (head < tail) {
            int v = order[head++], k = 0;
            for (int e = g->first[v]; e < g->first[v + 1]; e++)
                if (!seen[g->nb[e]]) {
                    seen[g->nb[e]] = 1;
                    nbuf[k++] = g->nb[e];
                }
            for (int a = 1; a < k; a++) /* insertion sort by degree */
                for (int b = a; b > 0; b--) {
                    int x = nbuf[b], y = nbuf[b - 1];
                    int dx = g->first[x + 1] - g->first[x], dy = g->first[y + 1] - g->first[y];
                    if (dx < dy || (dx == dy && x < y)) {
                        nbuf[b] = y;
                        nbuf[b - 1] = x;
                    } else break;
                }
            memcpy(order + tail, nbuf, (size_t)k * sizeof(int));
            tail += k;
        }
    }
    for (int i = 0; i < nnodes / 2; i++) {
        int t = order[i];
        order[i] = order[nnodes - 1 - i];
        order[nnodes - 1 - i] = t;
    }
    free(seen);
    free(nbuf);
}

int sc_skyline_create(int nnodes, int nelem, int per, const int *elem, sc_skyline *s, sc_err *err)
{
    memset(s, 0, sizeof *s);
    adjacency g = {0};
    int *order = malloc((size_t)(nnodes > 0 ? nnodes : 1) * sizeof(int)), *node_new = malloc((size_t)(nnodes > 0 ? nnodes : 1) * sizeof(int));
    if (nnodes < 1 || !order || !node_new || !build_adjacency(nnodes, nelem, per, elem, &g)) {
        free(order);
        free(node_new);
        free(g.first);
        free(g.nb);
        return sc_fail(err, nnodes < 1 ? SC_EINPUT : SC_EIO, "skyline: %d nodes (or out of memory)", nnodes);
    }
    rcm(nnodes, &g, order);
    for (int i = 0; i < nnodes; i++) node_new[order[i]] = i;
    const int n = 3 * nnodes;
    s->n = n;
    s->perm = malloc((size_t)n * sizeof(int));
    s->iperm = malloc((size_t)n * sizeof(int));
    s->first = malloc((size_t)n * sizeof(int));
    s->start = malloc(((size_t)n + 1) * sizeof(size_t));
    if (!s->perm || !s->iperm || !s->first || !s->start) goto oom;
    for (int i = 0; i < nnodes; i++)
        for (int k = 0; k < 3; k++) {
            s->perm[3 * i + k] = 3 * order[i] + k;
            s->iperm[3 * order[i] + k] = 3 * i + k;
        }
    /* row 3i+k's envelope starts at the first unknown of its lowest-numbered neighbour (or itself) */
    for (int i = 0; i < nnodes; i++) {
        int lo = i;
        const int old = order[i];
        for (int e = g.first[old]; e < g.first[old + 1]; e++) lo = node_new[g.nb[e]] < lo ? node_new[g.nb[e]] : lo;
        for (int k = 0; k < 3; k++) s->first[3 * i + k] = 3 * lo;
    }
    s->start[0] = 0;
    for (int r = 0; r < n; r++) s->start[r + 1] = s->start[r] + (size_t)(r - s->first[r] + 1);
    s->val = calloc(s->start[n], sizeof(double));
    if (!s->val) goto oom;
    free(order);
    free(node_new);
    free(g.first);
    free(g.nb);
    return SC_OK;
oom:
    free(order);
    free(node_new);
    free(g.first);
    free(g.nb);
    sc_skyline_free(s);
    return sc_fail(err, SC_EIO, "skyline: out of memory");
}

void sc_skyline_zero(sc_skyline *s) { memset(s->val, 0, s->start[s->n] * sizeof(double)); }

size_t sc_skyline_size(const sc_skyline *s) { return s->start[s->n]; }

void sc_skyline_add(sc_skyline *s, int i, int j, double v)
{
    int r = s->iperm[i], c = s->iperm[j];
    if (c > r) {
        int t = r;
        r = c;
        c = t;
    }
    if (c < s->first[r]) return;
    s->val[s->start[r] + (size_t)(c - s->first[r])] += v;
}

int sc_skyline_factor(sc_skyline *s, sc_err *err)
{
    for (int i = 0; i < s->n; i++) {
        double *ri = s->val + s->start[i];
        const int fi = s->first[i];
        for (int j = fi; j < i; j++) {
            const double *rj = s->val + s->start[j];
            const int fj = s->first[j], k0 = fi > fj ? fi : fj;
            double sum = ri[j - fi];
            for (int k = k0; k < j; k++) sum -= ri[k - fi] * rj[k - fj];
            ri[j - fi] = sum / rj[j - fj];
        }
        double d = ri[i - fi];
        for (int k = fi; k < i; k++) d -= ri[k - fi] * ri[k - fi];
        if (!(d > 0)) return sc_fail(err, SC_ENUMERIC, "skyline: not positive definite at unknown %d (pivot %g)", s->perm[i], d);
        ri[i - fi] = sqrt(d);
    }
    return SC_OK;
}

void sc_skyline_solve(const sc_skyline *s, double *b, double *y)
{
    const int n = s->n;
    for (int i = 0; i < n; i++) y[i] = b[s->perm[i]];
    for (int i = 0; i < n; i++) { /* L y = b */
        const double *ri = s->val + s->start[i];
        const int fi = s->first[i];
        double sum = y[i];
        for (int k = fi; k < i; k++) sum -= ri[k - fi] * y[k];
        y[i] = sum / ri[i - fi];
    }
    for (int i = n - 1; i >= 0; i--) { /* L' x = y, column-oriented */
        const double *ri = s->val + s->start[i];
        const int fi = s->first[i];
        y[i] /= ri[i - fi];
        for (int k = fi; k < i; k++) y[k] -= ri[k - fi] * y[i];
    }
    for (int i = 0; i < n; i++) b[s->perm[i]] = y[i];
}

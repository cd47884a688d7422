/* Landmarks of a body from its surface: plane sections, horizontal slices, crotch, armpits,
 * neck (landmarks.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/status.h"
#include "mesh/landmarks.h"

/* ---- plane sections --------------------------------------------------------------------- */

typedef struct section_edge { /* a triangle edge the plane crosses, and the segment crossing it */
    long long key;
    int seg;
} section_edge;

static int cmp_edge(const void *a, const void *b)
{
    long long x = ((const section_edge *)a)->key, y = ((const section_edge *)b)->key;
    return (x > y) - (x < y);
}

static int uf_find(int *up, int i)
{
    while (up[i] != i) i = up[i] = up[up[i]];
    return i;
}

/* One closed curve of a plane section, in world coordinates. */
typedef struct curve {
    sc_vec3 centre, lowest;
    double len, x0, x1; /* perimeter, extent along x */
    int encloses;       /* p (the plane's point) lies inside it */
} curve;

/* The closed curves of the body's section by the plane through p with normal n (the first cap
   of them, in a fixed order). Returns the count, -1 out of memory. */
static int plane_curves(const sc_trimesh *m, sc_vec3 p, sc_vec3 n, curve *out, int cap)
{
    sc_vec3 u = sc_v3_normalize(sc_v3_cross(n, fabs(n.y) < 0.9 ? sc_v3(0, 1, 0) : sc_v3(1, 0, 0))), w = sc_v3_cross(n, u);
    int crossed = 0;
    for (int t = 0; t < m->ntris; t++) {
        const int *v = m->tris + 3 * t;
        double d0 = sc_v3_dot(sc_v3_sub(sc_v3_load(m->verts + 3 * v[0]), p), n), d1 = sc_v3_dot(sc_v3_sub(sc_v3_load(m->verts + 3 * v[1]), p), n),
               d2 = sc_v3_dot(sc_v3_sub(sc_v3_load(m->verts + 3 * v[2]), p), n);
        crossed += (d0 > 0) != (d1 > 0) || (d1 > 0) != (d2 > 0);
    }
    if (crossed == 0) return 0;
    double *seg = malloc((size_t)crossed * 4 * sizeof *seg); /* in-plane endpoints (u, w) */
    section_edge *ed = malloc((size_t)crossed * 2 * sizeof *ed);
    int *up = malloc((size_t)crossed * sizeof *up), ns = 0, nc = 0;
    if (!seg || !ed || !up) {
        nc = -1;
        goto done;
    }
    for (int t = 0; t < m->ntris; t++) {
        const int *v = m->tris + 3 * t;
        double d[3];
        sc_vec3 x[3];
        for (int k = 0; k < 3; k++) {
            x[k] = sc_v3_load(m->verts + 3 * v[k]);
            d[k] = sc_v3_dot(sc_v3_sub(x[k], p), n);
        }
        int got = 0;
        for (int e = 0; e < 3 && got < 2; e++) {
            int a = e, b = (e + 1) % 3;
            if ((d[a] > 0) == (d[b] > 0)) continue;
            sc_vec3 q = sc_v3_sub(sc_v3_add(x[a], sc_v3_scale(sc_v3_sub(x[b], x[a]), d[a] / (d[a] - d[b]))), p);
            seg[4 * ns + 2 * got] = sc_v3_dot(q, u);
            seg[4 * ns + 2 * got + 1] = sc_v3_dot(q, w);
            int lo = v[a] < v[b] ? v[a] : v[b], hi = v[a] < v[b] ? v[b] : v[a];
            ed[2 * ns + got] = (section_edge){(long long)lo * m->nverts + hi, ns};
            got++;
        }
        if (got == 2) up[ns] = ns, ns++;
    }
    qsort(ed, (size_t)ns * 2, sizeof *ed, cmp_edge);
    for (int i = 1; i < 2 * ns; i++)
        if (ed[i].key == ed[i - 1].key) up[uf_find(up, ed[i].seg)] = uf_find(up, ed[i - 1].seg);
    /* per curve: length, centroid, extent, lowest point, crossings of the ray from p along +u */
    for (int root = 0; root < ns && nc < cap; root++) {
        if (uf_find(up, root) != root) continue;
        double len = 0, cu = 0, cw = 0, low = INFINITY, x0 = INFINITY, x1 = -INFINITY;
        sc_vec3 lowest = p;
        int cross = 0;
        for (int i = 0; i < ns; i++) {
            if (uf_find(up, i) != root) continue;
            const double *a = seg + 4 * i, *b = a + 2, l = hypot(b[0] - a[0], b[1] - a[1]);
            len += l;
            cu += l * 0.5 * (a[0] + b[0]);
            cw += l * 0.5 * (a[1] + b[1]);
            if ((a[1] > 0) != (b[1] > 0) && a[0] + (b[0] - a[0]) * (0 - a[1]) / (b[1] - a[1]) > 0) cross++;
            sc_vec3 q = sc_v3_add(p, sc_v3_add(sc_v3_scale(u, a[0]), sc_v3_scale(w, a[1])));
            if (q.y < low) low = q.y, lowest = q;
            x0 = fmin(x0, q.x);
            x1 = fmax(x1, q.x);
        }
        if (!(len > 0)) continue;
        out[nc++] = (curve){sc_v3_add(p, sc_v3_add(sc_v3_scale(u, cu / len), sc_v3_scale(w, cw / len))), lowest, len, x0, x1, cross % 2 == 1};
    }
done:
    free(seg);
    free(ed);
    free(up);
    return nc;
}

#define MAX_CURVES 256

int sc_body_section(const sc_trimesh *m, sc_vec3 p, sc_vec3 n, double reach, sc_section *s)
{
    curve *c = malloc(MAX_CURVES * sizeof *c);
    if (!c) return -1;
    const int nc = plane_curves(m, p, n, c, MAX_CURVES);
    int best = -1;
    for (int i = 0; i < nc; i++) { /* the smallest curve around p, else the nearest within reach */
        const double dist = sc_v3_dist(c[i].centre, p);
        if (c[i].encloses ? best < 0 || !c[best].encloses || c[i].len < c[best].len
                          : (best < 0 || !c[best].encloses) && dist < reach && (best < 0 || dist < sc_v3_dist(c[best].centre, p)))
            best = i;
    }
    if (best >= 0) *s = (sc_section){c[best].centre, c[best].len / (2 * SC_PI), c[best].lowest};
    free(c);
    return nc < 0 ? -1 : best >= 0;
}

/* ---- horizontal slices ------------------------------------------------------------------ */

static int cmp_pt(const void *a, const void *b)
{
    double x = ((const double *)a)[0], y = ((const double *)b)[0];
    return (x > y) - (x < y);
}

int sc_body_slice(const sc_trimesh *m, double y, double gap, double *pts, sc_slice_cluster *cl, int cap)
{
    int np = 0;
    for (int t = 0; t < m->ntris; t++) {
        const int *v = m->tris + 3 * t;
        for (int e = 0; e < 3; e++) {
            const double *a = m->verts + 3 * v[e], *b = m->verts + 3 * v[(e + 1) % 3];
            if ((a[1] - y) * (b[1] - y) >= 0 || a[1] == b[1]) continue;
            double s = (y - a[1]) / (b[1] - a[1]);
            pts[2 * np] = a[0] + s * (b[0] - a[0]);
            pts[2 * np + 1] = a[2] + s * (b[2] - a[2]);
            np++;
        }
    }
    qsort(pts, (size_t)np, 2 * sizeof(double), cmp_pt);
    int n = 0;
    for (int i = 0; i < np; i++) {
        if (i == 0 || pts[2 * i] - pts[2 * (i - 1)] > gap) {
            if (n == cap) break;
            cl[n++] = (sc_slice_cluster){pts[2 * i], pts[2 * i], pts[2 * i + 1], pts[2 * i + 1], 0, 0, 0};
        }
        sc_slice_cluster *c = &cl[n - 1];
        c->x1 = pts[2 * i];
        c->z1 = pts[2 * i + 1];
        c->cx += pts[2 * i];
        c->cz += pts[2 * i + 1];
        c->n++;
    }
    for (int i = 0; i < n; i++) {
        cl[i].cx /= cl[i].n;
        cl[i].cz /= cl[i].n;
    }
    return n;
}

/* ---- landmarks -------------------------------------------------------------------------- */

/* The trunk's curve of the horizontal section at y: of the curves spanning cx the longest (-1:
   none). */
static int trunk_curve(const curve *c, int nc, double cx)
{
    int t = -1;
    for (int i = 0; i < nc; i++)
        if (c[i].x0 <= cx && c[i].x1 >= cx && (t < 0 || c[i].len > c[t].len)) t = i;
    return t;
}

/* The armpits: horizontal sections from 85 % of the height (above the armpits, below the ears)
   down to the crotch; on each side, the first height where a closed curve of its own lies beside
   the trunk's (its centroid beyond the trunk's extent, within 15 % of the height of it) is the
   top of the gap between arm and trunk, to within the step (0.2 % of the height). */
static int find_armpits(const sc_trimesh *m, sc_body_landmarks *lm, curve *c)
{
    const double H = lm->height, step = 0.002 * H;
    const double bottom = lm->have_crotch ? lm->crotch.y : lm->ground + 0.5 * H;
    for (double y = lm->ground + 0.85 * H; y > bottom && !(lm->have_armpit[0] && lm->have_armpit[1]); y -= step) {
        const int nc = plane_curves(m, sc_v3(lm->cx, y, 0), sc_v3(0, 1, 0), c, MAX_CURVES), t = nc < 0 ? -1 : trunk_curve(c, nc, lm->cx);
        if (nc < 0) return -1;
        if (t < 0) break;
        for (int side = 0; side < 2; side++) {
            if (lm->have_armpit[side]) continue;
            int arm = -1;
            for (int i = 0; i < nc; i++) {
                const double gap = side == 0 ? c[i].x0 - c[t].x1 : c[t].x0 - c[i].x1;
                const int beside = side == 0 ? c[i].centre.x > c[t].x1 : c[i].centre.x < c[t].x0;
                if (i != t && beside && gap < 0.15 * H && (arm < 0 || fabs(c[i].centre.x - lm->cx) < fabs(c[arm].centre.x - lm->cx))) arm = i;
            }
            if (arm < 0) continue;
            const double edge = side == 0 ? 0.5 * (c[t].x1 + c[arm].x0) : 0.5 * (c[t].x0 + c[arm].x1);
            lm->armpit[side] = sc_v3(edge, y, c[arm].centre.z);
            lm->have_armpit[side] = 1;
        }
    }
    return 0;
}

/* The neck: the trunk's shortest curve between 6 % of the height above the armpits and 11 % below
   the crown (by perimeter: at the jaw the curve takes in the face), its centroid; its base:
   below it, the first height where the trunk's curve is 1.5 times as wide along x. */
static int find_neck(const sc_trimesh *m, sc_body_landmarks *lm, curve *c)
{
    const double H = lm->height, step = 0.002 * H;
    double pit = lm->ground + 0.75 * H;
    if (lm->have_armpit[0] && lm->have_armpit[1]) pit = fmax(lm->armpit[0].y, lm->armpit[1].y);
    double best_len = INFINITY, best_w = INFINITY, best_y = 0;
    sc_vec3 centre = sc_v3(0, 0, 0);
    for (double y = pit + 0.06 * H; y < lm->crown - 0.11 * H; y += step) {
        const int nc = plane_curves(m, sc_v3(lm->cx, y, 0), sc_v3(0, 1, 0), c, MAX_CURVES), t = nc < 0 ? -1 : trunk_curve(c, nc, lm->cx);
        if (nc < 0) return -1;
        if (t >= 0 && c[t].len < best_len) best_len = c[t].len, best_w = c[t].x1 - c[t].x0, best_y = y, centre = c[t].centre;
    }
    if (best_len == INFINITY) return 0;
    lm->neck_narrowest = centre;
    for (double y = best_y - step; y > pit; y -= step) {
        const int nc = plane_curves(m, sc_v3(lm->cx, y, 0), sc_v3(0, 1, 0), c, MAX_CURVES), t = nc < 0 ? -1 : trunk_curve(c, nc, lm->cx);
        if (nc < 0) return -1;
        if (t >= 0 && c[t].x1 - c[t].x0 < 1.5 * best_w) continue;
        lm->neck_base = sc_v3(centre.x, y, centre.z);
        lm->have_neck = 1;
        break;
    }
    return 0;
}

/* The crotch: the lowest point of the trunk's outline in the sagittal plane (x = cx), the curve
   around the trunk's centre at 60 % of the height; legs that touch at x = cx carry the outline
   down them, and a lowest point below 30 % of the height is no crotch. */
static int find_crotch(const sc_trimesh *m, sc_body_landmarks *lm, curve *c)
{
    const double H = lm->height, y = lm->ground + 0.6 * H;
    const int nc = plane_curves(m, sc_v3(lm->cx, y, 0), sc_v3(0, 1, 0), c, MAX_CURVES), t = nc < 0 ? -1 : trunk_curve(c, nc, lm->cx);
    if (nc < 0) return -1;
    if (t < 0) return 0;
    sc_section s;
    const int got = sc_body_section(m, sc_v3(lm->cx, y, c[t].centre.z), sc_v3(1, 0, 0), 0, &s);
    if (got < 0) return -1;
    if (got == 0 || s.lowest.y < lm->ground + 0.3 * H || s.lowest.y > y) return 0;
    lm->crotch = s.lowest;
    lm->have_crotch = 1;
    return 0;
}

int sc_body_landmarks_find(const sc_trimesh *m, sc_body_landmarks *lm, sc_err *err)
{
    memset(lm, 0, sizeof *lm);
    if (m->nverts < 4) return SC_OK;
    double lo = INFINITY, hi = -INFINITY, xlo = INFINITY, xhi = -INFINITY;
    for (int i = 0; i < m->nverts; i++) {
        lo = fmin(lo, m->verts[3 * i + 1]);
        hi = fmax(hi, m->verts[3 * i + 1]);
        xlo = fmin(xlo, m->verts[3 * i]);
        xhi = fmax(xhi, m->verts[3 * i]);
    }
    lm->ground = lo;
    lm->crown = hi;
    lm->height = hi - lo;
    lm->cx = 0.5 * (xlo + xhi);
    curve *c = malloc(MAX_CURVES * sizeof *c);
    int rc = SC_OK;
    if (!c || find_crotch(m, lm, c) < 0 || find_armpits(m, lm, c) < 0 || find_neck(m, lm, c) < 0)
        rc = sc_fail(err, SC_EIO, "landmarks: out of memory");
    free(c);
    return rc;
}

#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "core/mathx.h"
#include "mesh/envelope.h"
#include "mesh/isosurface.h"

typedef sc_sdf dist_grid;

static size_t at(const dist_grid *g, int i, int j, int k) { return ((size_t)k * g->ny + j) * g->nx + i; }

double sc_sdf_eval(const sc_sdf *g, sc_vec3 p)
{
    double fx = (p.x - g->origin.x) / g->h, fy = (p.y - g->origin.y) / g->h, fz = (p.z - g->origin.z) / g->h;
    int i = (int)floor(fx), j = (int)floor(fy), k = (int)floor(fz);
    if (i < 0 || j < 0 || k < 0 || i + 1 >= g->nx || j + 1 >= g->ny || k + 1 >= g->nz) return 1.0; /* far outside */
    double tx = fx - i, ty = fy - j, tz = fz - k, v = 0;
    for (int c = 0; c < 8; c++) {
        int di = c & 1, dj = (c >> 1) & 1, dk = (c >> 2) & 1;
        double w = (di ? tx : 1 - tx) * (dj ? ty : 1 - ty) * (dk ? tz : 1 - tz);
        v += w * g->val[at(g, i + di, j + dj, k + dk)];
    }
    return v;
}

static double grid_eval(const void *ctx, sc_vec3 p) { return sc_sdf_eval(ctx, p); }

void sc_sdf_free(sc_sdf *g)
{
    free(g->val);
    memset(g, 0, sizeof *g);
}

/* Unsigned distance near the surface (within `reach`), sign from a flood fill of the outside
 * through samples farther than h from the surface: a crossing between two neighbouring
 * samples is within h/2 of one of them, so the fill cannot leak inside. */
int sc_sdf_build(const sc_trimesh *m, double h, double reach, sc_sdf *g, sc_err *err)
{
    sc_vec3 lo = sc_v3(1e30, 1e30, 1e30), hi = sc_v3(-1e30, -1e30, -1e30);
    for (int i = 0; i < m->nverts; i++) {
        lo = sc_v3_min(lo, sc_v3_load(m->verts + 3 * i));
        hi = sc_v3_max(hi, sc_v3_load(m->verts + 3 * i));
    }
    double pad = reach + 2 * h;
    g->h = h;
    g->origin = sc_v3_sub(lo, sc_v3(pad, pad, pad));
    g->nx = (int)ceil((hi.x - lo.x + 2 * pad) / h) + 1;
    g->ny = (int)ceil((hi.y - lo.y + 2 * pad) / h) + 1;
    g->nz = (int)ceil((hi.z - lo.z + 2 * pad) / h) + 1;
    size_t n = (size_t)g->nx * g->ny * g->nz;
    if (n > (size_t)100 * 1000 * 1000) return sc_fail(err, SC_EINPUT, "envelope: grid spacing %.3g m is too fine for this body", h);
    g->val = malloc(n * sizeof *g->val);
    unsigned char *outside = calloc(n, 1);
    int *queue = malloc(n * sizeof *queue);
    if (!g->val || !outside || !queue) {
        free(g->val);
        free(outside);
        free(queue);
        return sc_fail(err, SC_EIO, "envelope: out of memory");
    }
    for (size_t i = 0; i < n; i++) g->val[i] = (float)reach;
    for (int t = 0; t < m->ntris; t++) {
        sc_vec3 a = sc_v3_load(m->verts + 3 * m->tris[3 * t]), b = sc_v3_load(m->verts + 3 * m->tris[3 * t + 1]),
                c = sc_v3_load(m->verts + 3 * m->tris[3 * t + 2]);
        sc_vec3 tlo = sc_v3_sub(sc_v3_min(a, sc_v3_min(b, c)), sc_v3(reach, reach, reach));
        sc_vec3 thi = sc_v3_add(sc_v3_max(a, sc_v3_max(b, c)), sc_v3(reach, reach, reach));
        int i0 = (int)fmax(0, floor((tlo.x - g->origin.x) / h)), i1 = (int)fmin(g->nx - 1, ceil((thi.x - g->origin.x) / h));
        int j0 = (int)fmax(0, floor((tlo.y - g->origin.y) / h)), j1 = (int)fmin(g->ny - 1, ceil((thi.y - g->origin.y) / h));
        int k0 = (int)fmax(0, floor((tlo.z - g->origin.z) / h)), k1 = (int)fmin(g->nz - 1, ceil((thi.z - g->origin.z) / h));
        for (int k = k0; k <= k1; k++)
            for (int j = j0; j <= j1; j++)
                for (int i = i0; i <= i1; i++) {
                    sc_vec3 p = sc_v3(g->origin.x + i * h, g->origin.y + j * h, g->origin.z + k * h);
                    double d = sc_v3_dist(p, sc_closest_on_triangle(p, a, b, c));
                    float *v = &g->val[at(g, i, j, k)];
                    if (d < *v) *v = (float)d;
                }
    }
    /* flood fill from the grid corner (always outside) through samples with d > h */
    size_t head = 0, tail = 0;
    outside[0] = 1;
    queue[tail++] = 0;
    while (head < tail) {
        int id = queue[head++];
        int i = id % g->nx, j = (id / g->nx) % g->ny, k = id / (g->nx * g->ny);
        static const int nb[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
        for (int q = 0; q < 6; q++) {
            int a = i + nb[q][0], b = j + nb[q][1], c = k + nb[q][2];
            if (a < 0 || b < 0 || c < 0 || a >= g->nx || b >= g->ny || c >= g->nz) continue;
            size_t s = at(g, a, b, c);
            if (outside[s] || g->val[s] <= h) continue;
            outside[s] = 1;
            queue[tail++] = (int)s;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (!outside[i]) {
            /* inside, or near the surface on either side: either way within the offset */
            g->val[i] = -g->val[i];
        }
    free(outside);
    free(queue);
    return SC_OK;
}

double sc_trimesh_area(const sc_trimesh *m)
{
    double a = 0;
    for (int t = 0; t < m->ntris; t++) {
        sc_vec3 p = sc_v3_load(m->verts + 3 * m->tris[3 * t]), q = sc_v3_load(m->verts + 3 * m->tris[3 * t + 1]),
                r = sc_v3_load(m->verts + 3 * m->tris[3 * t + 2]);
        a += 0.5 * sc_v3_norm(sc_v3_cross(sc_v3_sub(q, p), sc_v3_sub(r, p)));
    }
    return a;
}

double sc_trimesh_volume(const sc_trimesh *m)
{
    double v = 0;
    for (int t = 0; t < m->ntris; t++) {
        sc_vec3 p = sc_v3_load(m->verts + 3 * m->tris[3 * t]), q = sc_v3_load(m->verts + 3 * m->tris[3 * t + 1]),
                r = sc_v3_load(m->verts + 3 * m->tris[3 * t + 2]);
        v += sc_v3_dot(p, sc_v3_cross(q, r)) / 6.0;
    }
    return v;
}

double sc_winding_number(const sc_trimesh *m, const double *pp)
{
    /* sum of signed solid angles (Van Oosterom and Strackee) / 4 pi */
    sc_vec3 p = sc_v3_load(pp);
    double w = 0;
    for (int t = 0; t < m->ntris; t++) {
        sc_vec3 a = sc_v3_sub(sc_v3_load(m->verts + 3 * m->tris[3 * t]), p);
        sc_vec3 b = sc_v3_sub(sc_v3_load(m->verts + 3 * m->tris[3 * t + 1]), p);
        sc_vec3 c = sc_v3_sub(sc_v3_load(m->verts + 3 * m->tris[3 * t + 2]), p);
        double la = sc_v3_norm(a), lb = sc_v3_norm(b), lc = sc_v3_norm(c);
        double num = sc_v3_dot(a, sc_v3_cross(b, c));
        double den = la * lb * lc + sc_v3_dot(a, b) * lc + sc_v3_dot(b, c) * la + sc_v3_dot(c, a) * lb;
        w += 2 * atan2(num, den);
    }
    return w / (4 * SC_PI);
}

/* segment pq against triangle abc, proper crossings only */
static int segment_crosses(sc_vec3 p, sc_vec3 q, sc_vec3 a, sc_vec3 b, sc_vec3 c)
{
    double vp = sc_v3_dot(sc_v3_sub(p, a), sc_v3_cross(sc_v3_sub(b, a), sc_v3_sub(c, a)));
    double vq = sc_v3_dot(sc_v3_sub(q, a), sc_v3_cross(sc_v3_sub(b, a), sc_v3_sub(c, a)));
    if ((vp > 0) == (vq > 0) || vp == 0 || vq == 0) return 0;
    sc_vec3 d = sc_v3_sub(q, p);
    double s1 = sc_v3_dot(d, sc_v3_cross(sc_v3_sub(a, p), sc_v3_sub(b, p)));
    double s2 = sc_v3_dot(d, sc_v3_cross(sc_v3_sub(b, p), sc_v3_sub(c, p)));
    double s3 = sc_v3_dot(d, sc_v3_cross(sc_v3_sub(c, p), sc_v3_sub(a, p)));
    return (s1 > 0 && s2 > 0 && s3 > 0) || (s1 < 0 && s2 < 0 && s3 < 0);
}

int sc_surface_validate_closed(const sc_trimesh *m, const char *name, sc_err *err)
{
    int first = -1;
    int open = sc_trimesh_unmatched_edges(m, &first);
    if (open < 0) return sc_fail(err, SC_EIO, "out of memory");
    if (open)
        return sc_fail(err, SC_EINPUT,
                       "%s: surface is not closed: %d edges are not matched by an opposite edge (an open "
                       "boundary, a repeated or flipped face; first at triangle %d)",
                       name, open, first);
    if (sc_trimesh_volume(m) <= 0)
        return sc_fail(err, SC_EINPUT, "%s: surface is oriented inwards (negative enclosed volume %.4g m^3)", name, sc_trimesh_volume(m));
    return SC_OK;
}

int sc_surface_validate(const sc_trimesh *m, const char *name, sc_err *err)
{
    int first = -1;
    int open = sc_trimesh_open_edges(m, &first);
    if (open)
        return sc_fail(err, SC_EINPUT,
                       "%s: surface is not closed: %d edges are not shared by exactly two consistently "
                       "oriented triangles (first at triangle %d)",
                       name, open, first);
    if (sc_trimesh_volume(m) <= 0)
        return sc_fail(err, SC_EINPUT, "%s: surface is oriented inwards (negative enclosed volume %.4g m^3)", name, sc_trimesh_volume(m));
    /* self-intersections: an edge of one triangle crossing another triangle that shares no vertex */
    int nt = m->ntris;
    double *box = malloc((size_t)nt * 6 * sizeof *box);
    if (!box) return sc_fail(err, SC_EIO, "out of memory");
    for (int t = 0; t < nt; t++) {
        sc_vec3 lo = sc_v3(1e30, 1e30, 1e30), hi = sc_v3(-1e30, -1e30, -1e30);
        for (int i = 0; i < 3; i++) {
            lo = sc_v3_min(lo, sc_v3_load(m->verts + 3 * m->tris[3 * t + i]));
            hi = sc_v3_max(hi, sc_v3_load(m->verts + 3 * m->tris[3 * t + i]));
        }
        sc_v3_store(box + 6 * t, lo);
        sc_v3_store(box + 6 * t + 3, hi);
    }
    int bad_a = -1, bad_b = -1;
    for (int a = 0; a < nt && bad_a < 0; a++)
        for (int b = a + 1; b < nt; b++) {
            const double *ba = box + 6 * a, *bb = box + 6 * b;
            if (ba[0] > bb[3] || bb[0] > ba[3] || ba[1] > bb[4] || bb[1] > ba[4] || ba[2] > bb[5] || bb[2] > ba[5]) continue;
            const int *ta = m->tris + 3 * a, *tb = m->tris + 3 * b;
            int share = 0;
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) share |= ta[i] == tb[j];
            if (share) continue;
            sc_vec3 A[3], B[3];
            for (int i = 0; i < 3; i++) {
                A[i] = sc_v3_load(m->verts + 3 * ta[i]);
                B[i] = sc_v3_load(m->verts + 3 * tb[i]);
            }
            int hit = 0;
            for (int e = 0; e < 3 && !hit; e++) {
                hit |= segment_crosses(A[e], A[(e + 1) % 3], B[0], B[1], B[2]);
                hit |= segment_crosses(B[e], B[(e + 1) % 3], A[0], A[1], A[2]);
            }
            if (hit) {
                bad_a = a;
                bad_b = b;
                break;
            }
        }
    free(box);
    if (bad_a >= 0) return sc_fail(err, SC_EINPUT, "%s: surface intersects itself (triangles %d and %d cross)", name, bad_a, bad_b);
    return SC_OK;
}

/* Pushes envelope vertices outwards where fine vertices poke through: the nearest envelope
 * vertex moves along its normal past the offending point. Returns the fine vertices still
 * outside afterwards. Much tighter than raising the level of the whole surface. */
static int inflate_locally(const sc_trimesh *fine, sc_trimesh *env, double margin)
{
    int nv = env->nverts, outside = 0;
    double *nrm = calloc((size_t)nv * 3, sizeof *nrm);
    if (!nrm) return fine->nverts;
    for (int round = 0; round < 6; round++) {
        memset(nrm, 0, (size_t)nv * 3 * sizeof *nrm);
        for (int t = 0; t < env->ntris; t++) {
            const int *tv = env->tris + 3 * t;
            sc_vec3 a = sc_v3_load(env->verts + 3 * tv[0]), b = sc_v3_load(env->verts + 3 * tv[1]), c = sc_v3_load(env->verts + 3 * tv[2]);
            sc_vec3 n = sc_v3_cross(sc_v3_sub(b, a), sc_v3_sub(c, a));
            for (int k = 0; k < 3; k++) sc_v3_store(nrm + 3 * tv[k], sc_v3_add(sc_v3_load(nrm + 3 * tv[k]), n));
        }
        for (int v = 0; v < nv; v++) sc_v3_store(nrm + 3 * v, sc_v3_normalize(sc_v3_load(nrm + 3 * v)));
        outside = 0;
        for (int f = 0; f < fine->nverts; f++) {
            if (sc_winding_number(env, fine->verts + 3 * f) >= 0.5) continue;
            outside++;
            sc_vec3 p = sc_v3_load(fine->verts + 3 * f);
            int best = 0;
            double bd = 1e300;
            for (int v = 0; v < nv; v++) {
                double d = sc_v3_dist(p, sc_v3_load(env->verts + 3 * v));
                if (d < bd) {
                    bd = d;
                    best = v;
                }
            }
            sc_vec3 n = sc_v3_load(nrm + 3 * best), x = sc_v3_load(env->verts + 3 * best);
            double beyond = sc_v3_dot(n, sc_v3_sub(p, x));
            sc_v3_store(env->verts + 3 * best, sc_v3_axpy(fmax(beyond, 0) + margin, n, x));
        }
        if (!outside) break;
    }
    free(nrm);
    return outside;
}

int sc_envelope_build(const sc_trimesh *fine, const sc_envelope_opts *o, sc_trimesh *out, double *spacing_used, sc_err *err)
{
    double h = o->spacing;
    int auto_h = h <= 0;
    if (auto_h) h = sqrt(sc_trimesh_area(fine) / fmax(50, o->target_vertices));
    if (!(o->offset > 0)) return sc_fail(err, SC_EINPUT, "envelope: offset must be positive (got %g m)", o->offset);
    double level = o->offset;
    int resized = 0, project = 2, open_fails = 0;
    for (int attempt = 0; attempt < 12; attempt++) {
        /* The distance grid is finer than the extraction grid when the offset is small: the
           flood fill that signs it needs its spacing below the offset (see build_grid). */
        dist_grid g;
        double hg = fmin(h, 0.8 * o->offset);
        int rc = sc_sdf_build(fine, hg, level + 2 * hg, &g, err);
        if (rc) return rc;
        sc_vec3 lo = g.origin, hi = sc_v3_add(g.origin, sc_v3_scale(sc_v3(g.nx - 1, g.ny - 1, g.nz - 1), hg));
        sc_field f = {grid_eval, &g, sc_v3_add(lo, sc_v3(2 * h, 2 * h, 2 * h)), sc_v3_sub(hi, sc_v3(2 * h, 2 * h, 2 * h))};
        sc_iso_opts io = {h, level, 0.37 * (attempt / 2), project, 4, 1};
        rc = sc_isosurface(&f, &io, out, err);
        free(g.val);
        if (rc) return rc;
        if (auto_h && !resized && abs(out->nverts - o->target_vertices) > o->target_vertices / 5) {
            h *= sqrt((double)out->nverts / o->target_vertices); /* hit the requested size */
            resized = 1;
            sc_trimesh_free(out);
            continue;
        }
        sc_err why = {0};
        const int open = sc_trimesh_open_edges(out, NULL);
        if (open == 0 && sc_surface_validate(out, "envelope", &why) == SC_OK) {
            /* every fine vertex must be enclosed; flat facets cut convex corners, so grow the
               level until none is left outside */
            int outside = inflate_locally(fine, out, 0.3 * o->offset);
            if (!outside && sc_surface_validate(out, "envelope", &why) == SC_OK) {
                if (level > 1.5 * o->offset)
                    sc_log_warn("envelope: closed at %.3f m from the body instead of envelope.offset %.3f m (two parts of the body are about "
                                "twice the offset apart: armpits, crotch)",
                                level, o->offset);
                if (spacing_used) *spacing_used = h;
                return SC_OK;
            }
            level += 0.15 * h;
        } else {
            project = 0; /* projection can fold the surface in tight concave spots */
            /* where two offset sheets meet inside one cell (armpits, crotch) surface nets leave
               non-manifold edges whatever the grid shift: every second retry refines the grid */
            if (++open_fails % 2 == 0) h *= 0.94;
            /* and from the fourth on, the level grows: where the gap between two parts is about
               twice the offset the sheets touch; a slightly larger one merges them */
            if (open_fails >= 4) level += 0.1 * h;
        }
        sc_log_debug("envelope attempt %d (spacing %.4f m, level %.4f m) not closed or not enclosing (%d open edges; %s); retrying", attempt, h,
                     level, open, why.msg[0] ? why.msg : "valid");
        sc_trimesh_free(out);
    }
    return sc_fail(err, SC_EINPUT,
                   "envelope: could not extract a closed enclosing surface (offset %.3g m); "
                   "try a larger envelope.offset or a smaller envelope.spacing",
                   o->offset);
}

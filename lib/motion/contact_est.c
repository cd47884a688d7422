/* Ground contact estimation (eq. 25-31), the capture's contacts and the floor (see contact_est.h). */
#include <math.h>
#include "core/log.h"
#include <stdlib.h>
#include <string.h>
#include "model/world.h"
#include "motion/contact_est.h"

#define NDIRS 256

void sc_gc_default_opts(sc_gc_opts *o)
{
    memset(o, 0, sizeof *o);
    o->mu = SC_DEFAULT_FRICTION;
    o->height_tol = 0.03;
    o->speed_tol = 0.6;
    o->min_dist = 0.01;
    o->torque_split = SC_SPLIT_RESIDUAL;
    o->support = 0.1;
    o->rescue_band = 0.1;
}

void sc_gc_geom_free(sc_gc_geom *g)
{
    if (!g) return;
    free(g->start);
    free(g->pts);
    memset(g, 0, sizeof *g);
}

int sc_gc_geom_build(const sc_model *m, sc_gc_geom *g, sc_err *err)
{
    memset(g, 0, sizeof *g);
    int nb = m->nbones;
    if (nb < 1 || nb > SC_BODY_MAX_BONES) return sc_fail(err, SC_EINPUT, "contact geometry: %d bones", nb);
    int use_surf = m->nsurf_verts > 0 && m->surf_rest && m->surf_tet && m->surf_bary && m->tets;
    int ns = use_surf ? m->nsurf_verts : m->nnodes;
    if (ns < 1) return sc_fail(err, SC_EINPUT, "contact geometry: the character has neither surface vertices nor tet nodes");
    const double *src = use_surf ? m->surf_rest : m->rest_pos;
    int k = 0, *wb = NULL, source = 0;
    double *ww = NULL;
    int rc = SC_OK;
    if (m->skin_k > 0 && (rc = sc_node_weights(m, &k, &wb, &ww, &source, err))) return rc;
    int *owner = malloc((size_t)ns * sizeof(int));
    unsigned char *keep = calloc((size_t)ns, 1);
    g->start = calloc((size_t)nb + 1, sizeof(int));
    if (!owner || !keep || !g->start) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    /* owner bone of every vertex: dominant interpolated skin weight, else nearest bone */
    for (int v = 0; v < ns; v++) {
        if (!wb) {
            owner[v] = sc_nearest_bone(m, sc_v3_load(src + 3 * v));
            continue;
        }
        double acc[SC_BODY_MAX_BONES] = {0};
        if (use_surf) {
            const int *t = m->tets + 4 * m->surf_tet[v];
            for (int c = 0; c < 4; c++)
                for (int s = 0; s < k; s++) {
                    int j = wb[t[c] * k + s];
                    if (j >= 0 && j < nb) acc[j] += m->surf_bary[4 * v + c] * ww[t[c] * k + s];
                }
        } else {
            for (int s = 0; s < k; s++) {
                int j = wb[v * k + s];
                if (j >= 0 && j < nb) acc[j] += ww[v * k + s];
            }
        }
        int best = 0;
        for (int j = 1; j < nb; j++)
            if (acc[j] > acc[best]) best = j;
        owner[v] = best;
    }
    /* support points of a Fibonacci sphere of directions, per bone */
    for (int j = 0; j < nb; j++) {
        for (int d = 0; d < NDIRS; d++) {
            double z = 1 - (2.0 * d + 1) / NDIRS, r = sqrt(fmax(0, 1 - z * z)), ph = d * SC_PI * (3 - sqrt(5.0));
            sc_vec3 dir = sc_v3(r * cos(ph), z, r * sin(ph));
            int best = -1;
            double bd = -INFINITY;
            for (int v = 0; v < ns; v++) {
                if (owner[v] != j) continue;
                double s = sc_v3_dot(dir, sc_v3_load(src + 3 * v));
                if (s > bd) {
                    bd = s;
                    best = v;
                }
            }
            if (best >= 0) keep[best] = 1;
        }
    }
    int npts = 0;
    for (int v = 0; v < ns; v++) npts += keep[v];
    g->pts = malloc((size_t)(npts > 0 ? npts : 1) * 3 * sizeof(double));
    if (!g->pts) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    int c = 0;
    for (int j = 0; j < nb; j++) {
        g->start[j] = c;
        sc_vec3 jp = sc_v3_load(m->joint_pos + 3 * j);
        for (int v = 0; v < ns; v++)
            if (keep[v] && owner[v] == j) sc_v3_store(g->pts + 3 * c++, sc_v3_sub(sc_v3_load(src + 3 * v), jp));
    }
    g->start[nb] = c;
    g->nb = nb;
    g->npts = c;
    g->nsource = ns;
done:
    free(owner);
    free(keep);
    free(wb);
    free(ww);
    if (rc) sc_gc_geom_free(g);
    return rc;
}

int sc_gc_lowest(const sc_gc_geom *g, int j, const sc_bone_kin *k, sc_vec3 com, double patch_tol, sc_gc_probe *out)
{
    memset(out, 0, sizeof *out);
    out->height = INFINITY;
    int a = g->start[j], e = g->start[j + 1];
    if (a >= e) return 0;
    const sc_bone_kin *bk = &k[j];
    sc_mat3 R = sc_q_to_m3(bk->q);
    const double *ry = R.m[1]; /* heights need only the rotation's second row */
    int lo = a;
    for (int i = a; i < e; i++) {
        const double *x = g->pts + 3 * i;
        double y = ry[0] * x[0] + ry[1] * x[1] + ry[2] * x[2];
        if (y < out->height) {
            out->height = y;
            lo = i;
        }
    }
    double floor_y = out->height; /* relative to the origin */
    out->height += bk->p.y;
    sc_vec3 r = sc_m3_mulv(R, sc_v3_load(g->pts + 3 * lo));
    out->point = sc_v3_add(bk->p, r);
    out->vel = sc_v3_add(bk->v, sc_v3_cross(bk->w, r));
    out->speed = sc_v3_norm(out->vel);
    for (int i = a; i < e; i++) {
        const double *x = g->pts + 3 * i;
        if (ry[0] * x[0] + ry[1] * x[1] + ry[2] * x[2] > floor_y + patch_tol) continue;
        sc_vec3 w = sc_v3_add(bk->p, sc_m3_mulv(R, sc_v3_load(x)));
        out->r_max = fmax(out->r_max, sc_v3_dist(w, com));
    }
    return 1;
}

int sc_gc_estimate(const sc_body *b, const sc_gc_geom *g, const sc_bone_kin *k, sc_vec3 com, sc_vec3 fc, sc_vec3 tc, const sc_gc_opts *o,
                   const unsigned char *given, double *f, double *tau, int *flag, sc_gc_probe *probe, sc_gc_stats *st)
{
    int nb = b->nb, nc = 0;
    sc_gc_probe pr[SC_BODY_MAX_BONES];
    double inv[SC_BODY_MAX_BONES], sum = 0;
    sc_vec3 d[SC_BODY_MAX_BONES];
    memset(f, 0, 3 * (size_t)nb * sizeof(double));
    memset(tau, 0, 3 * (size_t)nb * sizeof(double));
    for (int j = 0; j < nb; j++) {
        flag[j] = 0;
        sc_vec3 cj = sc_kin_com(b, k, j);
        int has = g && sc_gc_lowest(g, j, k, cj, o->height_tol, &pr[j]);
        if (!has) {
            memset(&pr[j], 0, sizeof pr[j]);
            pr[j].height = INFINITY;
        }
        if (probe) probe[j] = pr[j];
        if (!has || (o->allowed && !o->allowed[j])) continue;
        /* below the floor is contact at any speed (a sliding or pivoting foot) */
        if (given ? given[j] : pr[j].height <= 0 || (pr[j].height <= o->height_tol && pr[j].speed <= o->speed_tol)) {
            flag[j] = 1;
            nc++;
            d[j] = sc_v3_sub(cj, com);
            inv[j] = 1.0 / fmax(hypot(d[j].x, d[j].z), o->min_dist); /* eq. 27: horizontal distance */
            sum += inv[j];
        }
    }
    if (nc == 0 && o->support > 0 && o->weight > 0 && fc.y > o->support * o->weight) {
        int lo = -1;
        for (int j = 0; j < nb; j++)
            if ((!o->allowed || o->allowed[j]) && isfinite(pr[j].height) && (lo < 0 || pr[j].height < pr[lo].height)) lo = j;
        if (lo >= 0 && pr[lo].height <= o->rescue_band) {
            for (int j = 0; j < nb; j++) {
                if ((o->allowed && !o->allowed[j]) || !(pr[j].height <= pr[lo].height + o->height_tol)) continue;
                sc_vec3 cj = sc_kin_com(b, k, j);
                flag[j] = 1;
                nc++;
                d[j] = sc_v3_sub(cj, com);
                inv[j] = 1.0 / fmax(hypot(d[j].x, d[j].z), o->min_dist);
                sum += inv[j];
            }
            if (st) st->rescued_steps++;
        }
    }
    if (st) st->contact_steps += nc;
    if (nc == 0) {
        if (st && sc_v3_norm(fc) > 0) st->lost_steps++;
        return 0;
    }
    sc_vec3 moment = {0, 0, 0};
    for (int j = 0; j < nb; j++) {
        if (!flag[j]) continue;
        sc_vec3 fj = sc_v3_scale(fc, inv[j] / sum); /* eq. 27 */
        sc_v3_store(f + 3 * j, fj);
        moment = sc_v3_add(moment, sc_v3_cross(d[j], fj));
    }
    sc_vec3 resid = sc_v3_sub(tc, moment);
    for (int j = 0; j < nb; j++) {
        if (!flag[j]) continue;
        double s = inv[j] / sum;
        sc_vec3 fj = sc_v3_load(f + 3 * j);
        sc_vec3 tj = o->torque_split == SC_SPLIT_PAPER ? sc_v3_sub(sc_v3_scale(tc, s), sc_v3_cross(d[j], fj)) /* eq. 28 */
                                                       : sc_v3_scale(resid, s);
        /* eq. 29-31 */
        if (fj.y < 0) {
            fj = sc_v3(0, 0, 0);
            tj = fj;
            if (st) st->push_only++;
        }
        double fxz = hypot(fj.x, fj.z), lim = o->mu * fj.y;
        if (fxz > lim * (1 + 1e-12) && fxz > 0) {
            fj.x *= lim / fxz;
            fj.z *= lim / fxz;
            if (st) st->friction++;
        }
        double tn = sc_v3_norm(tj), tl = pr[j].r_max * sqrt(1 + o->mu * o->mu) * fj.y;
        if (tn > tl * (1 + 1e-12) && tn > 0) {
            tj = sc_v3_scale(tj, tl / tn);
            if (st) st->torque++;
        }
        sc_v3_store(f + 3 * j, fj);
        sc_v3_store(tau + 3 * j, tj);
    }
    return nc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile_of(double *v, int n, double pct)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    double pos = pct / 100.0 * (n - 1);
    int i = (int)floor(pos);
    if (i >= n - 1) return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

/* Lowest point of every frame over the allowed bones whose lowest point moves slower than
 * speed_tol (a material point, finite differences between keyframes): pts[3f..] (x, y, z);
 * returns the count. */
static int lowest_points(const sc_body *b, const sc_gc_geom *g, const sc_motion *m, const unsigned char *allowed, double speed_tol, double *pts)
{
    int nb = b->nb, c = 0, n = m->nframes;
    sc_bone_kin kin[SC_BODY_MAX_BONES], nxt[SC_BODY_MAX_BONES];
    sc_vec3 zero = {0, 0, 0};
    for (int fr = 0; fr < n; fr++) {
        int f2 = fr < n - 1 ? fr + 1 : fr - 1;
        sc_kin_forward_raw(b, sc_v3_load(m->root_pos + 3 * fr), zero, zero, m->local + (size_t)fr * nb, NULL, NULL, kin);
        sc_kin_forward_raw(b, sc_v3_load(m->root_pos + 3 * f2), zero, zero, m->local + (size_t)f2 * nb, NULL, NULL, nxt);
        sc_gc_probe best = {.height = INFINITY};
        for (int j = 0; j < nb; j++) {
            if (allowed && !allowed[j]) continue;
            sc_gc_probe p;
            if (!sc_gc_lowest(g, j, kin, zero, 0, &p) || !(p.height < best.height)) continue;
            sc_vec3 loc = sc_q_rotate(sc_q_conj(kin[j].q), sc_v3_sub(p.point, kin[j].p));
            sc_vec3 moved = sc_v3_add(nxt[j].p, sc_q_rotate(nxt[j].q, loc));
            if (n > 1 && sc_v3_dist(moved, p.point) / m->frame_time > speed_tol) continue;
            best = p;
        }
        if (isfinite(best.height)) sc_v3_store(pts + 3 * c++, best.point);
    }
    return c;
}

static double plane_y(const double coef[3], double e[2][2], double x, double z)
{
    return coef[0] + coef[1] * (e[0][0] * x + e[0][1] * z) + coef[2] * (e[1][0] * x + e[1][1] * z);
}

int sc_gc_floor(const sc_body *b, const sc_gc_geom *g, sc_motion *m, const unsigned char *allowed, double speed_tol, int level, double percentile,
                double height_offset, sc_gc_floor_info *info, sc_err *err)
{
    int n = m->nframes;
    sc_gc_floor_info inf = {0};
    double *pts = malloc((size_t)n * 3 * sizeof(double)), *h = malloc((size_t)n * sizeof(double));
    unsigned char *use = malloc((size_t)n);
    if (!pts || !h || !use) {
        free(pts);
        free(h);
        free(use);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    int np = lowest_points(b, g, m, allowed, speed_tol, pts);
    if (np == 0) {
        free(pts);
        free(h);
        free(use);
        return sc_fail(err, SC_EINPUT,
                       "floor: in no frame does a bone that may touch the ground have a lowest point slower "
                       "than %g m/s (contact_estimation.speed_tol)",
                       speed_tol);
    }
    /* principal horizontal directions of the supporting points; a slope is fitted only along
       a direction they span by at least 1 m (a run in place says nothing about the floor) */
    double mx = 0, mz = 0, cxx = 0, cxz = 0, czz = 0;
    for (int i = 0; i < np; i++) {
        mx += pts[3 * i] / np;
        mz += pts[3 * i + 2] / np;
    }
    for (int i = 0; i < np; i++) {
        double dx = pts[3 * i] - mx, dz = pts[3 * i + 2] - mz;
        cxx += dx * dx;
        cxz += dx * dz;
        czz += dz * dz;
    }
    double ang = 0.5 * atan2(2 * cxz, cxx - czz);
    double e[2][2] = {{cos(ang), sin(ang)}, {-sin(ang), cos(ang)}}, span[2] = {0, 0};
    for (int d = 0; d < 2; d++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < np; i++) {
            double u = e[d][0] * pts[3 * i] + e[d][1] * pts[3 * i + 2];
            lo = fmin(lo, u);
            hi = fmax(hi, u);
        }
        span[d] = hi - lo;
    }
    /* ... and that the body travels along (the lowest points of a body lying on the floor span its
       length: their heights differ by its shape, not by a slope) */
    double travel[2] = {0, 0};
    for (int d = 0; d < 2; d++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int f = 0; f < n; f++) {
            double u = e[d][0] * m->root_pos[3 * f] + e[d][1] * m->root_pos[3 * f + 2];
            lo = fmin(lo, u);
            hi = fmax(hi, u);
        }
        travel[d] = hi - lo;
    }
    int fit[2] = {span[0] >= 1.0 && travel[0] >= 0.5, span[1] >= 1.0 && travel[1] >= 0.5};
    if (level && (fit[0] || fit[1]) && np >= 8) {
        double coef[3] = {0, 0, 0}; /* y = c0 + c1 u1 + c2 u2, u_d the coordinate along e[d] */
        for (int i = 0; i < np; i++) use[i] = 1;
        for (int it = 0; it < 5; it++) {
            sc_mat3 N = sc_m3_zero(), Ni;
            sc_vec3 r = {0, 0, 0};
            for (int i = 0; i < np; i++) {
                if (!use[i]) continue;
                double row[3] = {1, 0, 0}, y = pts[3 * i + 1];
                for (int d = 0; d < 2; d++) row[1 + d] = fit[d] ? e[d][0] * pts[3 * i] + e[d][1] * pts[3 * i + 2] : 0;
                for (int p = 0; p < 3; p++)
                    for (int q = 0; q < 3; q++) N.m[p][q] += row[p] * row[q];
                r = sc_v3_add(r, sc_v3(row[0] * y, row[1] * y, row[2] * y));
            }
            for (int d = 0; d < 2; d++)
                if (!fit[d]) N.m[1 + d][1 + d] = 1; /* that slope stays 0 */
            if (!sc_m3_inverse(N, &Ni)) break;
            sc_vec3 x = sc_m3_mulv(Ni, r);
            coef[0] = x.x;
            coef[1] = fit[0] ? x.y : 0;
            coef[2] = fit[1] ? x.z : 0;
            /* refit to the points on or below the median residual: the lower envelope */
            for (int i = 0; i < np; i++) h[i] = pts[3 * i + 1] - plane_y(coef, e, pts[3 * i], pts[3 * i + 2]);
            double med = percentile_of(h, np, 50);
            for (int i = 0; i < np; i++) use[i] = pts[3 * i + 1] - plane_y(coef, e, pts[3 * i], pts[3 * i + 2]) <= med;
        }
        inf.slope[0] = coef[1] * e[0][0] + coef[2] * e[1][0]; /* dy/dx */
        inf.slope[1] = coef[1] * e[0][1] + coef[2] * e[1][1]; /* dy/dz */
        sc_quat lev = sc_q_identity();
        sc_vec3 nrm = sc_v3_normalize(sc_v3(-inf.slope[0], 1, -inf.slope[1])), up = sc_v3(0, 1, 0);
        sc_vec3 ax = sc_v3_cross(nrm, up);
        double s = sc_v3_norm(ax);
        if (s > 1e-12) lev = sc_q_axis_angle(ax, atan2(s, sc_v3_dot(nrm, up)));
        inf.tilt_deg = sc_v3_norm(sc_q_log(lev)) * 180 / SC_PI;
        for (int f = 0; f < n; f++) {
            sc_v3_store(m->root_pos + 3 * f, sc_q_rotate(lev, sc_v3_load(m->root_pos + 3 * f)));
            m->local[(size_t)f * m->nbones] = sc_q_normalize(sc_q_mul(lev, m->local[(size_t)f * m->nbones]));
        }
        np = lowest_points(b, g, m, allowed, speed_tol, pts);
    }
    for (int i = 0; i < np; i++) h[i] = pts[3 * i + 1];
    inf.shift = height_offset - percentile_of(h, np, percentile);
    for (int f = 0; f < n; f++) m->root_pos[3 * f + 1] += inf.shift;
    free(pts);
    free(h);
    free(use);
    if (info) *info = inf;
    return SC_OK;
}

/* ---- whole-clip contact detection ------------------------------------------------------- */

void sc_gc_detect_default_opts(sc_gc_detect_opts *o)
{
    memset(o, 0, sizeof *o);
    o->support = 0.1;
    o->min_time = 0.03;
    o->gravity = SC_STANDARD_GRAVITY;
}

void sc_gc_auto_tolerances(const sc_model *m, double gravity, double *height_tol, double *speed_tol)
{
    /* the leg: hip to ankle along the chain above the lowest rest joint (as retargeting
       measures it); a 0.84 m leg gives 3.4 cm and 0.81 m/s */
    int low = -1;
    double leg = 0;
    for (int j = 1; j < m->nbones; j++)
        if (low < 0 || m->joint_pos[3 * j + 1] < m->joint_pos[3 * low + 1]) low = j;
    for (int c = low; c > 0 && m->parent[c] > 0; c = m->parent[c])
        leg += sc_v3_dist(sc_v3_load(m->joint_pos + 3 * c), sc_v3_load(m->joint_pos + 3 * m->parent[c]));
    if (!(leg > 0)) leg = 0.84;
    *height_tol = 0.04 * leg;
    *speed_tol = sqrt(2 * gravity * *height_tol);
}

/* Half the height of the centre of mass over the lowest point in the rest pose (the character
 * standing): a centre of mass below it is a body down on the floor (lying, sitting). */
static double rest_com_height(const sc_body *b, const sc_gc_geom *g)
{
    sc_quat rest[SC_BODY_MAX_BONES];
    sc_bone_kin kin[SC_BODY_MAX_BONES];
    sc_vec3 zero = {0, 0, 0}, c = zero;
    for (int j = 0; j < b->nb; j++) rest[j] = sc_q_identity();
    sc_kin_forward_raw(b, sc_v3_load(b->offset), zero, zero, rest, NULL, NULL, kin);
    double lowest = INFINITY;
    for (int j = 0; j < b->nb; j++) {
        c = sc_v3_axpy(b->mass[j] / b->total_mass, sc_kin_com(b, kin, j), c);
        sc_gc_probe p;
        if (sc_gc_lowest(g, j, kin, zero, 0, &p)) lowest = fmin(lowest, p.height);
    }
    return isfinite(lowest) ? 0.5 * (c.y - lowest) : 0;
}

/* Per frame of a keyframe motion: every bone's lowest point (height, horizontal position xz,
 * material-point speed by central differences), the vertical support the whole body needs, as a
 * fraction of its weight: (a_com,y + g) / g, and where on the floor it must act when the body
 * is down on the floor and nearly still (centre of mass below rest_com_height, |v_com| <=
 * still_speed, |a_com| <= 0.2 g; else NAN): the centre of pressure of the resultant,
 * c_xz - c_y a_xz / (a_y + g) (the body's angular momentum rate neglected). a_com by second
 * differences over a ~25 ms stencil (capture noise of a millimetre would otherwise dominate).
 * h, s: [n*nb]; xz: [n*nb*2]; need: [n]; cop: [n*2]. */
static int frame_probes(const sc_body *b, const sc_gc_geom *g, const sc_motion *m, double gravity, double still_speed, double *h, double *s,
                        double *xz, double *need, double *cop, sc_err *err)
{
    double low = rest_com_height(b, g);
    int n = m->nframes, nb = b->nb;
    sc_vec3 zero = {0, 0, 0}, *com = malloc((size_t)n * sizeof *com);
    sc_bone_kin *kin = malloc((size_t)3 * nb * sizeof *kin);
    if (!com || !kin) {
        free(com);
        free(kin);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    sc_bone_kin *prev = kin + nb, *next = kin + 2 * nb;
    for (int f = 0; f < n; f++) {
        int fp = f > 0 ? f - 1 : f, fn = f < n - 1 ? f + 1 : f;
        sc_kin_forward_raw(b, sc_v3_load(m->root_pos + 3 * f), zero, zero, m->local + (size_t)f * nb, NULL, NULL, kin);
        sc_kin_forward_raw(b, sc_v3_load(m->root_pos + 3 * fp), zero, zero, m->local + (size_t)fp * nb, NULL, NULL, prev);
        sc_kin_forward_raw(b, sc_v3_load(m->root_pos + 3 * fn), zero, zero, m->local + (size_t)fn * nb, NULL, NULL, next);
        sc_vec3 c = zero;
        double M = 0;
        for (int j = 0; j < nb; j++) {
            c = sc_v3_axpy(b->mass[j], sc_kin_com(b, kin, j), c);
            M += b->mass[j];
            sc_gc_probe p;
            size_t i = (size_t)f * nb + j;
            if (!sc_gc_lowest(g, j, kin, zero, 0, &p)) {
                h[i] = INFINITY;
                s[i] = INFINITY;
                continue;
            }
            h[i] = p.height;
            xz[2 * i] = p.point.x;
            xz[2 * i + 1] = p.point.z;
            /* the lowest material point one frame before and after */
            sc_vec3 loc = sc_q_rotate(sc_q_conj(kin[j].q), sc_v3_sub(p.point, kin[j].p));
            sc_vec3 a = sc_v3_add(prev[j].p, sc_q_rotate(prev[j].q, loc)), z = sc_v3_add(next[j].p, sc_q_rotate(next[j].q, loc));
            s[i] = fn > fp ? sc_v3_dist(z, a) / ((fn - fp) * m->frame_time) : 0;
        }
        com[f] = M > 0 ? sc_v3_scale(c, 1 / M) : c;
    }
    int k = (int)fmax(1, round(0.025 / m->frame_time));
    for (int f = 0; f < n; f++) {
        int c = f < k ? k : f > n - 1 - k ? n - 1 - k : f;
        if (n < 2 * k + 1) {
            need[f] = 1; /* too short to tell: assume standing */
            continue;
        }
        sc_vec3 a =
            sc_v3_scale(sc_v3_add(sc_v3_sub(com[c + k], sc_v3_scale(com[c], 2)), com[c - k]), 1 / ((k * m->frame_time) * (k * m->frame_time)));
        need[f] = (a.y + gravity) / gravity;
        cop[2 * f] = cop[2 * f + 1] = NAN;
        sc_vec3 v = sc_v3_scale(sc_v3_sub(com[c + k], com[c - k]), 0.5 / (k * m->frame_time));
        if (sc_v3_norm(a) <= 0.2 * gravity && sc_v3_norm(v) <= still_speed && com[f].y <= low) {
            cop[2 * f] = com[f].x - com[f].y * a.x / (a.y + gravity);
            cop[2 * f + 1] = com[f].z - com[f].y * a.z / (a.y + gravity);
        }
    }
    free(com);
    free(kin);
    return SC_OK;
}

/* Distance from q to the convex hull of the k points p[2k] in the plane (0 inside). */
static double hull_distance(const double *q, const double *p, int k)
{
    if (k <= 0) return INFINITY;
    double best = INFINITY, area = 0;
    for (int l = 2; l < k; l++) area = fmax(area, fabs((p[2] - p[0]) * (p[2 * l + 1] - p[1]) - (p[3] - p[1]) * (p[2 * l] - p[0])));
    int inside = area > 1e-8; /* a hull with an inside */
    for (int i = 0; i < k; i++) {
        best = fmin(best, hypot(q[0] - p[2 * i], q[1] - p[2 * i + 1]));
        for (int j = i + 1; j < k; j++) { /* every pair: the hull's edges are among them */
            double ex = p[2 * j] - p[2 * i], ez = p[2 * j + 1] - p[2 * i + 1], l2 = ex * ex + ez * ez;
            if (!(l2 > 0)) continue;
            double t = ((q[0] - p[2 * i]) * ex + (q[1] - p[2 * i + 1]) * ez) / l2;
            if (t > 0 && t < 1) best = fmin(best, fabs((q[0] - p[2 * i]) * ez - (q[1] - p[2 * i + 1]) * ex) / sqrt(l2));
        }
    }
    /* inside: q lies left of every hull edge, a pair (i, j) with all points on its left (k <= 16) */
    for (int i = 0; i < k && inside; i++)
        for (int j = 0; j < k && inside; j++) {
            if (i == j) continue;
            double ex = p[2 * j] - p[2 * i], ez = p[2 * j + 1] - p[2 * i + 1];
            int all = 1;
            for (int l = 0; l < k && all; l++) all = ex * (p[2 * l + 1] - p[2 * i + 1]) - ez * (p[2 * l] - p[2 * i]) >= -1e-12;
            if (all && ex * (q[1] - p[2 * i + 1]) - ez * (q[0] - p[2 * i]) < 0) inside = 0; /* a hull edge with q outside */
        }
    return inside ? 0 : best;
}

/* Runs of 1s in x[0..n) (stride) shorter than `len` become 0 (drop) or, for runs of 0s between
 * two runs of 1s, 1 (fill). */
static void close_gaps(unsigned char *x, int n, size_t stride, int len, int value)
{
    int f = 0;
    while (f < n) {
        if (x[(size_t)f * stride] != value) {
            f++;
            continue;
        }
        int e = f;
        while (e < n && x[(size_t)e * stride] == value) e++;
        int inner = value == 0 ? f > 0 && e < n : 1; /* a gap only between two contacts */
        if (inner && e - f < len)
            for (int i = f; i < e; i++) x[(size_t)i * stride] = (unsigned char)!value;
        f = e;
    }
}

int sc_gc_detect(const sc_body *b, const sc_gc_geom *g, const sc_motion *m, const sc_gc_detect_opts *o, unsigned char *flags, sc_gc_detect_info *info,
                 sc_err *err)
{
    int n = m->nframes, nb = b->nb;
    sc_gc_detect_info inf;
    memset(&inf, 0, sizeof inf);
    if (nb != m->nbones || nb > SC_BODY_MAX_BONES) return sc_fail(err, SC_EINPUT, "contact detection: %d bones, motion has %d", nb, m->nbones);
    if (!(o->height_tol > 0) || !(o->speed_tol > 0)) return sc_fail(err, SC_EINPUT, "contact detection: height and speed tolerances must be > 0");
    double *h = malloc((size_t)n * nb * sizeof *h), *s = malloc((size_t)n * nb * sizeof *s), *need = malloc((size_t)n * sizeof *need);
    double *xz = malloc((size_t)n * nb * 2 * sizeof *xz), *cop = malloc((size_t)n * 2 * sizeof *cop);
    int rc = SC_OK;
    if (!h || !s || !need || !xz || !cop) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    rc = frame_probes(b, g, m, o->gravity, 0.25 * o->speed_tol, h, s, xz, need, cop, err);
    if (rc) goto done;
    double H = o->height_tol, S = o->speed_tol;
    int minlen = (int)fmax(1, round(o->min_time / m->frame_time));
    /* 1. near the floor and slow, or below it */
    for (int f = 0; f < n; f++)
        for (int j = 0; j < nb; j++) {
            size_t i = (size_t)f * nb + j;
            flags[i] = (!o->allowed || o->allowed[j]) && isfinite(h[i]) && (h[i] <= 0 || (h[i] <= H && s[i] <= S));
        }
    /* 2. the resultant as a consistency check: where the body needs support and nothing touches,
       the lowest slow bones do (a hand on the floor of a capture whose hands sit high) */
    for (int f = 0; f < n; f++) {
        size_t r = (size_t)f * nb;
        int any = 0, lo = -1;
        for (int j = 0; j < nb; j++) {
            any |= flags[r + j];
            if ((!o->allowed || o->allowed[j]) && isfinite(h[r + j]) && (lo < 0 || h[r + j] < h[r + lo])) lo = j;
        }
        if (any || need[f] <= o->support || lo < 0) continue;
        int got = 0;
        for (int j = 0; j < nb; j++) {
            size_t i = r + j;
            if ((o->allowed && !o->allowed[j]) || !(h[i] <= h[r + lo] + H)) continue;
            if (s[i] <= S || h[i] <= 2 * H) {
                flags[i] = 1;
                got = 1;
            }
        }
        inf.frames_rescued += got;
    }
    /* 2b. ... and as a check of where the support acts: a body down and at rest (cop is set:
       lying on its back with its heels lowest) whose centre of pressure lies
       far (6 height_tol: 20 cm) outside what touches rests on its slow bones within 2 height_tol
       of the floor too */
    for (int f = 0; f < n; f++) {
        size_t r = (size_t)f * nb;
        if (isnan(cop[2 * f]) || need[f] <= o->support) continue;
        double pts[2 * SC_BODY_MAX_BONES];
        int k = 0;
        for (int j = 0; j < nb; j++)
            if (flags[r + j]) {
                pts[2 * k] = xz[2 * (r + j)];
                pts[2 * k + 1] = xz[2 * (r + j) + 1];
                k++;
            }
        if (k == 0 || hull_distance(cop + 2 * f, pts, k) <= 6 * H) continue;
        int got = 0;
        for (int j = 0; j < nb; j++) {
            size_t i = r + j;
            if ((o->allowed && !o->allowed[j]) || flags[i] || !(h[i] <= 2 * H) || s[i] > S) continue;
            flags[i] = 1;
            got = 1;
        }
        inf.frames_rescued += got;
    }
    /* 3. no flicker: fill short gaps, then drop short contacts */
    for (int j = 0; j < nb; j++) {
        close_gaps(flags + j, n, (size_t)nb, minlen, 0);
        close_gaps(flags + j, n, (size_t)nb, minlen, 1);
    }
    for (int f = 0; f < n; f++) {
        int any = 0;
        for (int j = 0; j < nb; j++) {
            any |= flags[(size_t)f * nb + j];
            if (flags[(size_t)f * nb + j] && (f == 0 || !flags[(size_t)(f - 1) * nb + j])) {
                inf.intervals++;
                inf.bone_intervals[j]++;
            }
        }
        inf.frames_unsupported += !any && need[f] > o->support;
    }
done:
    free(h);
    free(s);
    free(need);
    free(xz);
    free(cop);
    if (info) *info = inf;
    return rc;
}

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "render/font.h"
#include "render/scene.h"

/* inline min/max (libm's fmin/fmax are calls with NaN rules not needed here) */
static inline double maxd_(double a, double b) { return a > b ? a : b; }
static inline double mind_(double a, double b) { return a < b ? a : b; }
static inline float maxf_(float a, float b) { return a > b ? a : b; }
static inline float minf_(float a, float b) { return a < b ? a : b; }

#define TEX_N 256 /* shadow texture texels per side */

struct sc_renderer {
    sc_render_opts o;
    sc_raster r;
    int nsv, nsf;
    float *vn;                                 /* [nsv*3] vertex normals */
    float *vs;                                 /* [nsv*6] projected vertices: x, y, 1/depth, r, g, b */
    uint8_t *vok;                              /* [nsv] projected in front of the camera and finite */
    float *vh;                                 /* [nsv] height above the ground */
    float *vp;                                 /* [nsv*4] texel coordinates: along the light, straight down */
    float *bg;                                 /* [width*3] ground and sky of one pixel row */
    double *row_uv[2];                         /* [width*3] ground coordinates u, v and hit flag of two pixel rows */
    float *tex_shadow, *tex_contact, *tex_tmp; /* TEX_N x TEX_N */
    double tex_u0, tex_v0, tex_res;
    sc_vec3 gn, gu, gv; /* ground normal and in-plane axes */
    sc_ground relief;   /* its bumps and tiles (shading only) */
    int has_relief;
    sc_ground boxes; /* its obstacles (drawn as solids) */
    double goff;
    sc_vec3 light;
    float albedo[3]; /* linear */
};

void sc_renderer_free(sc_renderer *r)
{
    if (!r) return;
    sc_raster_free(&r->r);
    free(r->vn);
    free(r->vs);
    free(r->vok);
    free(r->vh);
    free(r->vp);
    free(r->bg);
    free(r->row_uv[0]);
    free(r->row_uv[1]);
    free(r->tex_shadow);
    free(r->tex_contact);
    free(r->tex_tmp);
    free(r);
}

static float srgb_to_linear(double c) { return (float)pow(c < 0 ? 0 : c > 1 ? 1 : c, 2.2); }
/* c^(1/2.2) through a table (linear interpolation; coarse only below c = 0.001) */
static float linear_to_srgb(float c)
{
    enum { N = 1024 };
    static float lut[N + 1];
    static int ready;
    if (!ready) {
        for (int i = 0; i <= N; i++) lut[i] = powf((float)i / N, 1.0f / 2.2f);
        ready = 1;
    }
    if (!(c > 0)) return 0.0f;
    if (c >= 1) return 1.0f;
    float x = c * N;
    int i = (int)x;
    return lut[i] + (x - i) * (lut[i + 1] - lut[i]);
}

int sc_renderer_create(const sc_render_opts *o, const sc_anim *a, sc_renderer **out, sc_err *err)
{
    *out = NULL;
    if (o->width < 16 || o->height < 16 || o->width > 8192 || o->height > 8192)
        return sc_fail(err, SC_EINPUT, "render: image size %d x %d is not in 16..8192", o->width, o->height);
    sc_renderer *r = calloc(1, sizeof *r);
    if (!r) return sc_fail(err, SC_EIO, "out of memory");
    r->o = *o;
    int rc = sc_raster_init(&r->r, o->width, o->height, o->antialias ? 2 : 1, err);
    if (rc) {
        free(r);
        return rc;
    }
    r->nsv = a->nsv;
    r->nsf = a->nsf;
    size_t nv = (size_t)a->nsv + 1, w = (size_t)o->width;
    r->vn = malloc(nv * 3 * sizeof(float));
    r->vs = malloc(nv * 6 * sizeof(float));
    r->vok = malloc(nv);
    r->vh = malloc(nv * sizeof(float));
    r->vp = malloc(nv * 4 * sizeof(float));
    r->bg = malloc(w * 3 * sizeof(float));
    r->row_uv[0] = malloc((w + 1) * 3 * sizeof(double));
    r->row_uv[1] = malloc((w + 1) * 3 * sizeof(double));
    r->tex_shadow = malloc(TEX_N * TEX_N * sizeof(float));
    r->tex_contact = malloc(TEX_N * TEX_N * sizeof(float));
    r->tex_tmp = malloc(TEX_N * TEX_N * sizeof(float));
    if (!r->vn || !r->vs || !r->vok || !r->vh || !r->vp || !r->bg || !r->row_uv[0] || !r->row_uv[1] || !r->tex_shadow || !r->tex_contact ||
        !r->tex_tmp) {
        sc_renderer_free(r);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    r->gn = sc_v3_normalize(sc_v3_load(a->ground_n));
    r->goff = a->ground_off;
    r->relief = r->boxes = a->relief;
    r->relief.nboxes = 0;
    r->has_relief = !sc_ground_is_flat(&r->relief);
    sc_vec3 x = sc_v3(1, 0, 0);
    r->gu = sc_v3_normalize(sc_v3_sub(x, sc_v3_scale(r->gn, sc_v3_dot(x, r->gn))));
    r->gv = sc_v3_cross(r->gu, r->gn);
    r->light = sc_v3_normalize(sc_v3_load(o->light));
    if (!(sc_v3_norm(r->light) > 0.5)) r->light = sc_v3_normalize(sc_v3(-0.45, 1, 0.55));
    for (int k = 0; k < 3; k++) r->albedo[k] = srgb_to_linear(o->body_color[k]);
    *out = r;
    return SC_OK;
}

/* ---- camera ---- */

void sc_render_camera(const sc_renderer *r, const sc_anim *a, double t, double azimuth_offset, sc_camera *cam)
{
    const sc_render_opts *o = &r->o;
    sc_vec3 c = o->follow ? sc_anim_follow(a, t, 0.5) : sc_anim_follow(a, a->time[0], 0.5);
    /* aim at the centre of mass, but no lower than a quarter of the character's height above
       the ground (a character lying down stays in the middle of the frame) */
    double hc = sc_v3_dot(r->gn, c) - r->goff;
    sc_vec3 target = sc_v3_add(sc_v3_sub(c, sc_v3_scale(r->gn, hc)), sc_v3(0, maxd_(hc, 0.25 * a->height), 0));
    double az = isfinite(o->azimuth) ? o->azimuth : o->camera == SC_CAM_FRONT ? 0 : o->camera == SC_CAM_SIDE ? -90 : -40;
    if (o->camera == SC_CAM_ORBIT && o->orbit_period > 0) az += 360 * (t - a->time[0]) / o->orbit_period;
    az = (az + azimuth_offset) * SC_PI / 180;
    double el = o->elevation * SC_PI / 180;
    double dist = o->distance;
    if (!(dist > 0)) {
        /* the character's height fills about 70% of the image height; a character wider than
           tall (a letter X lying flat, [T12]) its horizontal extent as much of the width */
        double half = fmax(0.5 * a->height / 0.70, 0.5 * a->span * o->height / (0.70 * o->width));
        dist = half / tan(0.5 * o->fov * SC_PI / 180) + 0.3;
    }
    sc_vec3 dir = sc_v3(cos(el) * sin(az), sin(el), cos(el) * cos(az));
    sc_camera_look_at(cam, sc_v3_axpy(dist, dir, target), target, o->fov, o->width, o->height);
}

/* ---- shading ---- */

static void vertex_normals(sc_renderer *r, const sc_anim *a, const double *x)
{
    memset(r->vn, 0, (size_t)a->nsv * 3 * sizeof(float));
    for (int f = 0; f < a->nsf; f++) {
        const int *t = a->faces + 3 * f;
        sc_vec3 p0 = sc_v3_load(x + 3 * t[0]);
        sc_vec3 n = sc_v3_cross(sc_v3_sub(sc_v3_load(x + 3 * t[1]), p0), sc_v3_sub(sc_v3_load(x + 3 * t[2]), p0));
        if (!isfinite(n.x + n.y + n.z)) continue;
        for (int k = 0; k < 3; k++) { /* area-weighted */
            float *vn = r->vn + 3 * t[k];
            vn[0] += (float)n.x;
            vn[1] += (float)n.y;
            vn[2] += (float)n.z;
        }
    }
}

/* Linear-light shading of a surface point, returned as sRGB. */
static void shade(const sc_renderer *r, const sc_camera *cam, sc_vec3 p, sc_vec3 n, const float albedo[3], float out[3])
{
    n = sc_v3_normalize(n);
    sc_vec3 v = sc_v3_normalize(sc_v3_sub(cam->eye, p));
    double up = 0.5 + 0.5 * n.y;
    double key = maxd_(0, sc_v3_dot(n, r->light));
    sc_vec3 fl = sc_v3_normalize(sc_v3_add(sc_v3_scale(cam->fwd, -1), sc_v3(0, 0.4, 0)));
    double fill = maxd_(0, sc_v3_dot(n, fl));
    sc_vec3 hv = sc_v3_normalize(sc_v3_add(r->light, v));
    double nh = maxd_(0, sc_v3_dot(n, hv)), nh4 = nh * nh * nh * nh, nh8 = nh4 * nh4;
    double spec = 0.14 * nh8 * nh8 * nh8 * nh4; /* (n.h)^28 */
    double nv = 1 - maxd_(0, sc_v3_dot(n, v));
    double rim = 0.10 * nv * nv * nv;
    static const float sky[3] = {0.42f, 0.46f, 0.55f}, bounce[3] = {0.20f, 0.19f, 0.17f}, keyc[3] = {1.0f, 0.96f, 0.90f};
    for (int k = 0; k < 3; k++) {
        double amb = bounce[k] + up * (sky[k] - bounce[k]);
        double lin = albedo[k] * (amb + 0.80 * keyc[k] * key + 0.22 * fill) + spec + rim * sky[k];
        out[k] = linear_to_srgb((float)(lin / (1 + 0.12 * lin)));
    }
}

/* ---- ground and shadows ---- */

static void tex_triangle(float *tex, const float *p0, const float *p1, const float *p2, float val)
{
    float area = (p1[0] - p0[0]) * (p2[1] - p0[1]) - (p2[0] - p0[0]) * (p1[1] - p0[1]);
    if (!(fabsf(area) > 1e-12f)) return;
    if (area < 0) {
        const float *t = p1;
        p1 = p2;
        p2 = t;
    }
    int x0 = (int)floorf(minf_(p0[0], minf_(p1[0], p2[0]))), x1 = (int)ceilf(maxf_(p0[0], maxf_(p1[0], p2[0])));
    int y0 = (int)floorf(minf_(p0[1], minf_(p1[1], p2[1]))), y1 = (int)ceilf(maxf_(p0[1], maxf_(p1[1], p2[1])));
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > TEX_N - 1) x1 = TEX_N - 1;
    if (y1 > TEX_N - 1) y1 = TEX_N - 1;
    for (int j = y0; j <= y1; j++)
        for (int i = x0; i <= x1; i++) {
            float px = i + 0.5f, py = j + 0.5f;
            if ((p1[0] - p0[0]) * (py - p0[1]) - (p1[1] - p0[1]) * (px - p0[0]) < 0) continue;
            if ((p2[0] - p1[0]) * (py - p1[1]) - (p2[1] - p1[1]) * (px - p1[0]) < 0) continue;
            if ((p0[0] - p2[0]) * (py - p2[1]) - (p0[1] - p2[1]) * (px - p2[0]) < 0) continue;
            float *t = tex + j * TEX_N + i;
            if (val > *t) *t = val;
        }
}

/* Separable box blur (passes of it approach a Gaussian); outside the texture is 0. */
static void blur(float *t, float *tmp, int rad, int passes)
{
    if (rad < 1) return;
    float inv = 1.0f / (2 * rad + 1);
    for (int p = 0; p < passes; p++) {
        for (int j = 0; j < TEX_N; j++) {
            const float *row = t + j * TEX_N;
            float s = 0;
            for (int i = 0; i < rad && i < TEX_N; i++) s += row[i];
            for (int i = 0; i < TEX_N; i++) {
                if (i + rad < TEX_N) s += row[i + rad];
                tmp[j * TEX_N + i] = s * inv;
                if (i - rad >= 0) s -= row[i - rad];
            }
        }
        for (int i = 0; i < TEX_N; i++) {
            float s = 0;
            for (int j = 0; j < rad && j < TEX_N; j++) s += tmp[j * TEX_N + i];
            for (int j = 0; j < TEX_N; j++) {
                if (j + rad < TEX_N) s += tmp[(j + rad) * TEX_N + i];
                t[j * TEX_N + i] = s * inv;
                if (j - rad >= 0) s -= tmp[(j - rad) * TEX_N + i];
            }
        }
    }
}

static void build_shadows(sc_renderer *r, const sc_anim *a, const double *x)
{
    int nsv = a->nsv;
    double nl = maxd_(0.15, sc_v3_dot(r->gn, r->light));
    double umin = INFINITY, umax = -INFINITY, vmin = INFINITY, vmax = -INFINITY;
    for (int v = 0; v < nsv; v++) {
        sc_vec3 p = sc_v3_load(x + 3 * v);
        double h = sc_v3_dot(r->gn, p) - r->goff;
        r->vh[v] = (float)h;
        sc_vec3 ps = sc_v3_axpy(-h / nl, r->light, p), pd = sc_v3_axpy(-h, r->gn, p);
        double su = sc_v3_dot(ps, r->gu), sv = sc_v3_dot(ps, r->gv), du = sc_v3_dot(pd, r->gu), dv = sc_v3_dot(pd, r->gv);
        float *q = r->vp + 4 * v;
        q[0] = (float)su;
        q[1] = (float)sv;
        q[2] = (float)du;
        q[3] = (float)dv;
        if (!isfinite(su + sv + du + dv)) {
            r->vh[v] = NAN;
            continue;
        }
        umin = mind_(umin, mind_(su, du));
        umax = maxd_(umax, maxd_(su, du));
        vmin = mind_(vmin, mind_(sv, dv));
        vmax = maxd_(vmax, maxd_(sv, dv));
    }
    memset(r->tex_shadow, 0, TEX_N * TEX_N * sizeof(float));
    memset(r->tex_contact, 0, TEX_N * TEX_N * sizeof(float));
    if (!(umax >= umin) || !(vmax >= vmin)) {
        r->tex_res = 0;
        return;
    }
    double margin = 0.25, ext = maxd_(umax - umin, vmax - vmin) + 2 * margin;
    r->tex_res = maxd_(ext / TEX_N, 0.004);
    r->tex_u0 = 0.5 * (umin + umax) - 0.5 * TEX_N * r->tex_res;
    r->tex_v0 = 0.5 * (vmin + vmax) - 0.5 * TEX_N * r->tex_res;
    float inv = (float)(1.0 / r->tex_res), u0 = (float)r->tex_u0, v0 = (float)r->tex_v0;
    for (int v = 0; v < nsv; v++) {
        float *q = r->vp + 4 * v;
        q[0] = (q[0] - u0) * inv;
        q[1] = (q[1] - v0) * inv;
        q[2] = (q[2] - u0) * inv;
        q[3] = (q[3] - v0) * inv;
    }
    const double contact_h = 0.07; /* m: the contact darkening fades over this height */
    for (int f = 0; f < a->nsf; f++) {
        const int *t = a->faces + 3 * f;
        float h0 = r->vh[t[0]], h1 = r->vh[t[1]], h2 = r->vh[t[2]];
        if (!isfinite(h0 + h1 + h2) || maxf_(h0, maxf_(h1, h2)) < 0) continue;
        const float *q0 = r->vp + 4 * t[0], *q1 = r->vp + 4 * t[1], *q2 = r->vp + 4 * t[2];
        tex_triangle(r->tex_shadow, q0, q1, q2, 1.0f);
        float hmin = maxf_(0, minf_(h0, minf_(h1, h2)));
        if (hmin < 5 * contact_h) tex_triangle(r->tex_contact, q0 + 2, q1 + 2, q2 + 2, (float)exp(-hmin / contact_h));
    }
    blur(r->tex_shadow, r->tex_tmp, (int)lround(0.025 / r->tex_res), 3);
    blur(r->tex_contact, r->tex_tmp, (int)lround(0.045 / r->tex_res), 3);
}

static float tex_lookup(const float *t, double x, double y)
{
    x -= 0.5;
    y -= 0.5;
    if (!(x > -1 && y > -1 && x < TEX_N && y < TEX_N)) return 0;
    int i = (int)floor(x), j = (int)floor(y);
    float fx = (float)(x - i), fy = (float)(y - j);
    float v00 = (i >= 0 && j >= 0) ? t[j * TEX_N + i] : 0, v10 = (i + 1 < TEX_N && j >= 0) ? t[j * TEX_N + i + 1] : 0;
    float v01 = (i >= 0 && j + 1 < TEX_N) ? t[(j + 1) * TEX_N + i] : 0;
    float v11 = (i + 1 < TEX_N && j + 1 < TEX_N) ? t[(j + 1) * TEX_N + i + 1] : 0;
    return (v00 * (1 - fx) + v10 * fx) * (1 - fy) + (v01 * (1 - fx) + v11 * fx) * fy;
}

/* Ground coordinates (u, v, hit) of pixel row y at pixel centres, plus one extra column. */
static void ground_uv_row(const sc_renderer *r, const sc_camera *c, int y, double *uv)
{
    double h = r->goff - sc_v3_dot(r->gn, c->eye);
    for (int x = 0; x <= r->o.width; x++) {
        sc_vec3 d = sc_camera_ray(c, x + 0.5, y + 0.5);
        double den = sc_v3_dot(r->gn, d), s = den != 0 ? h / den : -1;
        if (h < 0 && den < 0 && s > 0 && s < 1e5) {
            sc_vec3 p = sc_v3_axpy(s, d, c->eye);
            uv[3 * x] = sc_v3_dot(p, r->gu);
            uv[3 * x + 1] = sc_v3_dot(p, r->gv);
            uv[3 * x + 2] = s * sc_v3_norm(d);
        } else {
            uv[3 * x + 2] = -1;
        }
    }
}

/* Integral of the unit square wave (+1 on [0,1), -1 on [1,2), period 2). */
static double sq_integral(double x)
{
    double m = x - 2 * floor(0.5 * x);
    return m < 1 ? m : 2 - m;
}

/* The square wave box-filtered over a footprint w (in periods of 2): anti-aliased checker. */
static double sq_filtered(double x, double w)
{
    if (w < 1e-6) return x - 2 * floor(0.5 * x) < 1 ? 1 : -1;
    if (w > 2) return 0;
    return (sq_integral(x + 0.5 * w) - sq_integral(x - 0.5 * w)) / w;
}

/* Fraction of a footprint w centred at distance d from a line of half-width hw. */
static double line_cover(double d, double hw, double w)
{
    double lo = maxd_(d - 0.5 * w, -hw), hi = mind_(d + 0.5 * w, hw);
    return hi > lo ? (hi - lo) / w : 0;
}

/* Ground and sky behind pixel row y; row_uv[0] holds row y's ground coordinates, row_uv[1]
   receives row y + 1's (the caller swaps them). */
static void ground_row(sc_renderer *r, const sc_camera *c, int y)
{
    const sc_render_opts *o = &r->o;
    double *uv = r->row_uv[0], *uv1 = r->row_uv[1];
    ground_uv_row(r, c, y + 1, uv1);
    static const float horizon[3] = {0.80f, 0.84f, 0.89f}, zenith[3] = {0.46f, 0.60f, 0.79f};
    static const float light_tile[3] = {0.82f, 0.82f, 0.80f}, dark_tile[3] = {0.66f, 0.69f, 0.73f}, line[3] = {0.46f, 0.49f, 0.54f};
    double tile = o->tile > 0 ? o->tile : 0.5, hw = 0.004 + 0.004 * tile;
    for (int x = 0; x < o->width; x++) {
        float *bg = r->bg + 3 * x;
        const double *q = uv + 3 * x;
        if (q[2] < 0) {
            sc_vec3 d = sc_v3_normalize(sc_camera_ray(c, x + 0.5, y + 0.5));
            double e = d.y > 0 ? sqrt(d.y) : 0;
            for (int k = 0; k < 3; k++) bg[k] = (float)(horizon[k] + e * (zenith[k] - horizon[k]));
            continue;
        }
        /* pixel footprint in ground coordinates from the neighbouring pixels */
        const double *qx = uv + 3 * (x + 1), *qy = uv1 + 3 * x;
        double wu = 0, wv = 0;
        if (qx[2] >= 0) {
            wu += fabs(qx[0] - q[0]);
            wv += fabs(qx[1] - q[1]);
        }
        if (qy[2] >= 0) {
            wu += fabs(qy[0] - q[0]);
            wv += fabs(qy[1] - q[1]);
        }
        if (qx[2] < 0 || qy[2] < 0) wu = wv = 2 * tile; /* at the horizon */
        double chk = sq_filtered(q[0] / tile, wu / tile) * sq_filtered(q[1] / tile, wv / tile);
        double du = fabs(q[0] - tile * floor(q[0] / tile + 0.5)), dv = fabs(q[1] - tile * floor(q[1] / tile + 0.5));
        double lu = line_cover(du, hw, maxd_(wu, 1e-6)), lv = line_cover(dv, hw, maxd_(wv, 1e-6));
        double ln = 1 - (1 - lu) * (1 - lv);
        double shadow = 1;
        if (o->shadow && r->tex_res > 0) {
            double tx = (q[0] - r->tex_u0) / r->tex_res, ty = (q[1] - r->tex_v0) / r->tex_res;
            float s = tex_lookup(r->tex_shadow, tx, ty), k = tex_lookup(r->tex_contact, tx, ty);
            shadow = (1 - 0.42 * (s > 1 ? 1 : s)) * (1 - 0.55 * (k > 1 ? 1 : k));
        }
        double dist = q[2], fog = dist * dist / (dist * dist + 28.0 * 28.0), relief = 1;
        if (r->has_relief) { /* the bumps and tiles lit by their own normals on the base plane */
            sc_vec3 n, p = sc_v3_add(sc_v3_scale(r->gn, r->goff), sc_v3_add(sc_v3_scale(r->gu, q[0]), sc_v3_scale(r->gv, q[1])));
            sc_ground_height(&r->relief, p, &n);
            const double flat = maxd_(sc_v3_dot(r->gn, r->light), 0.1), lit = maxd_(sc_v3_dot(n, r->light), 0.05) / flat;
            /* faded out where a pixel covers a tile or a quarter of a bump (it would alias) */
            const double scale = r->relief.tile_size > 0 ? r->relief.tile_size : 0.25 * r->relief.bump_length;
            const double fade = maxd_(0, 1 - maxd_(wu, wv) / scale);
            relief = 1 + fade * (mind_(maxd_(lit, 0.6), 1.4) - 1);
        }
        for (int k = 0; k < 3; k++) {
            double base = dark_tile[k] + (0.5 + 0.5 * chk) * (light_tile[k] - dark_tile[k]);
            base += ln * (line[k] - base);
            base *= shadow * relief;
            bg[k] = (float)(base + fog * (horizon[k] - base));
        }
    }
}

/* ---- overlays ---- */

static int project(const sc_camera *c, sc_vec3 p, double *x, double *y)
{
    double d;
    return isfinite(p.x + p.y + p.z) && sc_camera_project(c, p, x, y, &d);
}

static void arrow(uint8_t *rgb, int w, int h, const sc_camera *c, sc_vec3 from, sc_vec3 to, double width, const float col[3], const char *label,
                  int scale)
{
    double x0, y0, x1, y1;
    if (!project(c, from, &x0, &y0) || !project(c, to, &x1, &y1)) return;
    double dx = x1 - x0, dy = y1 - y0, len = sqrt(dx * dx + dy * dy);
    if (len < 2) return;
    double ux = dx / len, uy = dy / len, head = mind_(0.4 * len, 4.5 * width), hwid = 0.45 * head + 0.5 * width;
    double bx = x1 - ux * head, by = y1 - uy * head;
    double tri[6] = {x1, y1, bx - uy * hwid, by + ux * hwid, bx + uy * hwid, by - ux * hwid};
    static const float dark[3] = {0.1f, 0.1f, 0.1f};
    sc_draw_line(rgb, w, h, x0, y0, bx, by, width + 2, dark, 0.45);
    sc_draw_line(rgb, w, h, x0, y0, bx + ux, by + uy, width, col, 1.0);
    sc_draw_triangle(rgb, w, h, tri, col, 1.0);
    if (label) {
        static const uint8_t white[3] = {255, 255, 255}, black[3] = {20, 20, 20};
        int tw = sc_font_width(label, scale);
        int lx = (int)(x0 - ux * 6 * scale) - (ux > 0 ? tw : 0), ly = (int)(y0 - uy * 6 * scale) - 4 * scale;
        sc_font_draw(rgb, w, h, lx, ly, label, scale, white, black);
    }
}

static void draw_label(uint8_t *rgb, int w, int h, const char *label, int scale)
{
    static const uint8_t white[3] = {255, 255, 255}, black[3] = {0, 0, 0};
    static const float back[3] = {0.05f, 0.06f, 0.08f};
    int pad = 3 * scale, tw = sc_font_width(label, scale), th = 7 * scale;
    sc_draw_rect(rgb, w, h, 4 * scale, 4 * scale, 4 * scale + tw + 2 * pad, 4 * scale + th + 2 * pad, back, 0.45);
    sc_font_draw(rgb, w, h, 4 * scale + pad, 4 * scale + pad, label, scale, white, black);
}

static sc_vec3 bone_point(const sc_anim *a, const sc_anim_pose *p, int b, const double *rest)
{
    sc_vec3 l = sc_v3_sub(sc_v3_load(rest), sc_v3_load(a->joint_rest + 3 * b));
    return sc_v3_add(sc_q_rotate(p->bone[b].q, l), p->bone[b].p);
}

static sc_vec3 muscle_point(const sc_anim *a, const sc_anim_pose *p, int i)
{
    const int *t4 = a->tets + 4 * a->muscle_point_tet[i];
    const double *w = a->muscle_point_bary + 4 * i;
    sc_vec3 x = sc_v3(0, 0, 0);
    for (int k = 0; k < 4; k++) x = sc_v3_axpy(w[k], sc_v3_load(p->nodes + 3 * t4[k]), x);
    return x;
}

/* A boneless body's muscle segments over everything: pale at rest length, deep red at the
   strongest contraction l_d = 0.5 l0 ([T12] 5.1), as the frame's plan asked. */
static void draw_muscles(const sc_anim *a, const sc_anim_pose *p, const sc_camera *c, uint8_t *rgb, int w, int h, double px)
{
    static const float dark[3] = {0.08f, 0.05f, 0.05f};
    const double *ld = a->muscle_ld + (size_t)p->frame * a->muscle_nsegs;
    for (int j = 0; j < a->muscle_nsegs; j++) {
        double x0, y0, x1, y1;
        if (!project(c, muscle_point(a, p, a->muscle_seg[2 * j]), &x0, &y0) || !project(c, muscle_point(a, p, a->muscle_seg[2 * j + 1]), &x1, &y1))
            continue;
        const double u = fmin(1, fmax(0, 2 * (1 - ld[j] / a->muscle_rest_len[j]))); /* 0 at rest, 1 at 0.5 l0 */
        const float col[3] = {(float)(1.0 - 0.25 * u), (float)(0.85 - 0.75 * u), (float)(0.55 - 0.5 * u)};
        sc_draw_line(rgb, w, h, x0, y0, x1, y1, 4.5 * px, dark, 0.5);
        sc_draw_line(rgb, w, h, x0, y0, x1, y1, 2.5 * px, col, 1.0);
    }
}

static void overlays(sc_renderer *r, const sc_anim *a, const sc_anim_pose *p, const sc_camera *c, uint8_t *rgb)
{
    const sc_render_opts *o = &r->o;
    int w = o->width, h = o->height, scale = w >= 480 ? 2 : 1;
    double px = o->height / 480.0; /* line widths scale with the image */
    if (p->has_ghost) {            /* the reference's skeleton, over everything, in translucent blue */
        static const float ghost[3] = {0.15f, 0.45f, 1.0f};
        for (int b = 0; b < a->nbones; b++) {
            sc_vec3 l = sc_v3_sub(sc_v3_load(a->tip_rest + 3 * b), sc_v3_load(a->joint_rest + 3 * b));
            sc_vec3 tip = sc_v3_add(sc_q_rotate(p->ghost[b].q, l), p->ghost[b].p);
            double x0, y0, x1, y1;
            if (!project(c, p->ghost[b].p, &x0, &y0) || !project(c, tip, &x1, &y1)) continue;
            sc_draw_line(rgb, w, h, x0, y0, x1, y1, 3.5 * px, ghost, 0.7);
            sc_draw_disc(rgb, w, h, x0, y0, 3.0 * px, ghost, 0.8);
        }
    }
    if (o->skeleton) {
        static const float dark[3] = {0.08f, 0.08f, 0.1f}, bone[3] = {0.95f, 0.55f, 0.10f}, joint[3] = {0.20f, 0.45f, 0.95f};
        for (int b = 0; b < a->nbones; b++) {
            double x0, y0, x1, y1;
            if (!project(c, p->bone[b].p, &x0, &y0) || !project(c, bone_point(a, p, b, a->tip_rest + 3 * b), &x1, &y1)) continue;
            sc_draw_line(rgb, w, h, x0, y0, x1, y1, 5.5 * px, dark, 0.55);
            sc_draw_line(rgb, w, h, x0, y0, x1, y1, 3.0 * px, bone, 1.0);
        }
        for (int b = 0; b < a->nbones; b++) {
            double x0, y0;
            if (!project(c, p->bone[b].p, &x0, &y0)) continue;
            sc_draw_disc(rgb, w, h, x0, y0, 4.2 * px, dark, 0.6);
            sc_draw_disc(rgb, w, h, x0, y0, 3.0 * px, joint, 1.0);
        }
    }
    if (o->muscles && a->muscle_nsegs) draw_muscles(a, p, c, rgb, w, h, px);
    if (o->contacts) {
        static const float red[3] = {0.90f, 0.12f, 0.08f}, green[3] = {0.10f, 0.70f, 0.25f};
        sc_vec3 cen = sc_v3(0, 0, 0);
        int n = 0;
        for (int v = 0; v < a->nsv; v++) {
            const double *x = p->surf + 3 * v;
            double hgt = sc_anim_height_above_ground(a, x), sx, sy;
            if (!(hgt < o->contact_threshold)) continue;
            cen = sc_v3_add(cen, sc_v3_load(x));
            n++;
            if (project(c, sc_v3_load(x), &sx, &sy)) sc_draw_disc(rgb, w, h, sx, sy, 1.2 * px, red, 0.7);
        }
        sc_vec3 f = sc_v3_load(p->contact_force);
        if (n && sc_v3_norm(f) > 1e-6 && o->force_scale > 0) {
            cen = sc_v3_scale(cen, 1.0 / n);
            arrow(rgb, w, h, c, cen, sc_v3_axpy(o->force_scale, f, cen), 3.0 * px, green, NULL, scale);
        }
    }
    if (o->pushes) {
        static const float col[3] = {0.92f, 0.15f, 0.45f};
        int drawn = 0;
        for (int i = 0; i < a->npush; i++) {
            const sc_anim_push *q = &a->push[i];
            if (!(p->t >= q->time && p->t < q->time + q->duration)) continue;
            sc_vec3 f = sc_v3_load(q->force);
            double fn = sc_v3_norm(f);
            if (fn <= 0 || o->push_scale <= 0) continue;
            /* the arrow ends on the bone's middle, pointing along the force */
            sc_vec3 mid = sc_v3_scale(sc_v3_add(p->bone[q->bone].p, bone_point(a, p, q->bone, a->tip_rest + 3 * q->bone)), 0.5);
            sc_vec3 dir = sc_v3_scale(f, 1 / fn), tip = sc_v3_axpy(-0.12, dir, mid);
            char lab[64];
            snprintf(lab, sizeof lab, "%.0f N", fn);
            arrow(rgb, w, h, c, sc_v3_axpy(-o->push_scale * fn, dir, tip), tip, 4.0 * px, col, lab, scale);
            drawn++;
        }
        sc_vec3 f = sc_v3_load(p->push_force);
        double fn = sc_v3_norm(f);
        if (!drawn && a->npush == 0 && fn > 1e-9 && o->push_scale > 0) { /* no bones known: at the centre of mass */
            sc_vec3 dir = sc_v3_scale(f, 1 / fn), tip = sc_v3_axpy(-0.15, dir, sc_v3_load(p->com));
            char lab[64];
            snprintf(lab, sizeof lab, "%.0f N", fn);
            arrow(rgb, w, h, c, sc_v3_axpy(-o->push_scale * fn, dir, tip), tip, 4.0 * px, col, lab, scale);
        }
    }
}

/* ---- a frame ---- */

/* The ground's obstacles as flat-shaded grey solids: each box face that faces the camera, two
   triangles. */
static void draw_boxes(sc_renderer *r, const sc_camera *cam)
{
    static const float grey[3] = {0.30f, 0.30f, 0.32f}; /* linear albedo */
    static const int face[6][4] = {{0, 2, 6, 4}, {1, 5, 7, 3}, {0, 4, 5, 1}, {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 6, 7, 5}};
    const sc_ground *g = &r->boxes;
    for (int b = 0; b < g->nboxes; b++) {
        sc_vec3 c[8];
        for (int k = 0; k < 8; k++) c[k] = sc_ground_box_corner(g, b, k);
        for (int f = 0; f < 6; f++) {
            const sc_vec3 *q[4] = {&c[face[f][0]], &c[face[f][1]], &c[face[f][2]], &c[face[f][3]]};
            sc_vec3 n = sc_v3_cross(sc_v3_sub(*q[1], *q[0]), sc_v3_sub(*q[3], *q[0])),
                    mid = sc_v3_scale(sc_v3_add(sc_v3_add(*q[0], *q[1]), sc_v3_add(*q[2], *q[3])), 0.25);
            if (sc_v3_dot(n, sc_v3_sub(mid, sc_v3_scale(sc_v3_add(c[0], c[7]), 0.5))) < 0) n = sc_v3_scale(n, -1); /* outward */
            if (sc_v3_dot(n, sc_v3_sub(cam->eye, mid)) <= 0) continue;
            float v[4][6], col[3];
            int ok = 1;
            shade(r, cam, mid, n, grey, col);
            for (int k = 0; k < 4 && ok; k++) {
                double sx, sy, d;
                ok = sc_camera_project(cam, *q[k], &sx, &sy, &d) && fabs(sx) < 1e6 && fabs(sy) < 1e6;
                v[k][0] = (float)sx, v[k][1] = (float)sy, v[k][2] = (float)(1.0 / d);
                memcpy(v[k] + 3, col, sizeof col);
            }
            if (!ok) continue;
            sc_raster_triangle(&r->r, v[0], v[1], v[2]);
            sc_raster_triangle(&r->r, v[0], v[2], v[3]);
        }
    }
}

void sc_render_draw(sc_renderer *r, const sc_anim *a, const sc_anim_pose *p, const sc_camera *cam, const char *label, uint8_t *rgb, uint8_t *mask)
{
    const sc_render_opts *o = &r->o;
    const double *x = p->surf;
    double gn[3] = {r->gn.x, r->gn.y, r->gn.z};
    sc_raster_clear(&r->r, cam, gn, r->goff);
    vertex_normals(r, a, x);
    for (int v = 0; v < a->nsv; v++) {
        sc_vec3 pv = sc_v3_load(x + 3 * v);
        double sx, sy, d;
        float *s = r->vs + 6 * v;
        r->vok[v] = isfinite(pv.x + pv.y + pv.z) && sc_camera_project(cam, pv, &sx, &sy, &d) && fabs(sx) < 1e6 && fabs(sy) < 1e6;
        if (!r->vok[v]) continue;
        s[0] = (float)sx;
        s[1] = (float)sy;
        s[2] = (float)(1.0 / d);
        if (!o->flat) {
            const float *n = r->vn + 3 * v;
            shade(r, cam, pv, sc_v3(n[0], n[1], n[2]), r->albedo, s + 3);
        }
    }
    for (int f = 0; f < a->nsf; f++) {
        const int *t = a->faces + 3 * f;
        if (!r->vok[t[0]] || !r->vok[t[1]] || !r->vok[t[2]]) continue;
        sc_vec3 p0 = sc_v3_load(x + 3 * t[0]), p1 = sc_v3_load(x + 3 * t[1]), p2 = sc_v3_load(x + 3 * t[2]);
        sc_vec3 n = sc_v3_cross(sc_v3_sub(p1, p0), sc_v3_sub(p2, p0));
        if (sc_v3_dot(n, sc_v3_sub(cam->eye, p0)) <= 0) continue; /* back face of a closed surface */
        if (o->flat) {
            float v3[3][6], col[3];
            shade(r, cam, sc_v3_scale(sc_v3_add(p0, sc_v3_add(p1, p2)), 1.0 / 3), n, r->albedo, col);
            for (int k = 0; k < 3; k++) {
                memcpy(v3[k], r->vs + 6 * t[k], 3 * sizeof(float));
                memcpy(v3[k] + 3, col, 3 * sizeof(float));
            }
            sc_raster_triangle(&r->r, v3[0], v3[1], v3[2]);
        } else {
            sc_raster_triangle(&r->r, r->vs + 6 * t[0], r->vs + 6 * t[1], r->vs + 6 * t[2]);
        }
    }
    draw_boxes(r, cam);
    if (o->shadow) build_shadows(r, a, x);
    else r->tex_res = 0;
    ground_uv_row(r, cam, 0, r->row_uv[0]);
    for (int y = 0; y < o->height; y++) {
        ground_row(r, cam, y);
        double *t = r->row_uv[0];
        r->row_uv[0] = r->row_uv[1];
        r->row_uv[1] = t;
        sc_raster_resolve_row(&r->r, y, r->bg, rgb + (size_t)y * o->width * 3, mask ? mask + (size_t)y * o->width : NULL);
    }
    overlays(r, a, p, cam, rgb);
    if (label && o->labels) draw_label(rgb, o->width, o->height, label, o->width >= 280 ? 2 : 1);
}

void sc_render_frame(sc_renderer *r, const sc_anim *a, const sc_anim_pose *p, uint8_t *rgb)
{
    sc_camera cam;
    sc_render_camera(r, a, p->t, 0, &cam);
    char label[64];
    snprintf(label, sizeof label, "t = %.2f s", p->t);
    sc_render_draw(r, a, p, &cam, label, rgb, NULL);
}

/* ---- contact sheet ---- */

int sc_render_contact_sheet(const sc_render_opts *o, sc_anim *a, double t0, double t1, int cols, int rows, int tile_w, int tile_h, uint8_t **rgb,
                            int *w, int *h, sc_err *err)
{
    *rgb = NULL;
    if (cols < 1 || rows < 1 || cols * rows > 400) return sc_fail(err, SC_EINPUT, "contact sheet: %d x %d tiles is not in 1..400", cols, rows);
    sc_render_opts to = *o;
    to.width = tile_w;
    to.height = tile_h;
    sc_renderer *r;
    int rc = sc_renderer_create(&to, a, &r, err);
    if (rc) return rc;
    sc_anim_pose pose;
    if ((rc = sc_anim_pose_alloc(a, &pose, err))) {
        sc_renderer_free(r);
        return rc;
    }
    int gap = 4, W = cols * tile_w + (cols + 1) * gap, H = rows * tile_h + (rows + 1) * gap, n = cols * rows;
    uint8_t *sheet = malloc((size_t)W * H * 3), *tile = malloc((size_t)tile_w * tile_h * 3);
    if (!sheet || !tile) {
        free(sheet);
        free(tile);
        sc_anim_pose_free(&pose);
        sc_renderer_free(r);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    memset(sheet, 38, (size_t)W * H * 3);
    int turntable = a->nframes == 1 || !(t1 > t0);
    for (int i = 0; i < n && !rc; i++) {
        double t = turntable ? t0 : t0 + (t1 - t0) * i / (n > 1 ? n - 1 : 1);
        double az = turntable ? 360.0 * i / n : 0;
        rc = sc_anim_sample(a, t, &pose, err);
        if (rc) break;
        sc_camera cam;
        sc_render_camera(r, a, t, az, &cam);
        char label[64];
        if (turntable) snprintf(label, sizeof label, "%.0f deg", az);
        else snprintf(label, sizeof label, "t = %.2f s", t);
        sc_render_draw(r, a, &pose, &cam, label, tile, NULL);
        int cx = gap + (i % cols) * (tile_w + gap), cy = gap + (i / cols) * (tile_h + gap);
        for (int y = 0; y < tile_h; y++) memcpy(sheet + ((size_t)(cy + y) * W + cx) * 3, tile + (size_t)y * tile_w * 3, (size_t)tile_w * 3);
    }
    free(tile);
    sc_anim_pose_free(&pose);
    sc_renderer_free(r);
    if (rc) {
        free(sheet);
        return rc;
    }
    *rgb = sheet;
    *w = W;
    *h = H;
    return SC_OK;
}

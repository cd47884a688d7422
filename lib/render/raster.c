#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "render/raster.h"

/* inline min/max (libm's fmin/fmax are calls with NaN rules not needed here) */
static inline double maxd_(double a, double b) { return a > b ? a : b; }
static inline double mind_(double a, double b) { return a < b ? a : b; }
static inline float maxf_(float a, float b) { return a > b ? a : b; }
static inline float minf_(float a, float b) { return a < b ? a : b; }

/* ---- camera ---- */

void sc_camera_look_at(sc_camera *c, sc_vec3 eye, sc_vec3 target, double fov_deg, int width, int height)
{
    c->eye = eye;
    c->fwd = sc_v3_normalize(sc_v3_sub(target, eye));
    sc_vec3 up = sc_v3(0, 1, 0);
    if (fabs(sc_v3_dot(c->fwd, up)) > 0.999) up = sc_v3(0, 0, -1); /* looking straight down */
    c->right = sc_v3_normalize(sc_v3_cross(c->fwd, up));
    c->up = sc_v3_cross(c->right, c->fwd);
    c->width = width;
    c->height = height;
    c->focal = 0.5 * height / tan(0.5 * fov_deg * SC_PI / 180);
    c->cx = 0.5 * width;
    c->cy = 0.5 * height;
    c->near = 0.05;
}

int sc_camera_project(const sc_camera *c, sc_vec3 p, double *x, double *y, double *depth)
{
    sc_vec3 d = sc_v3_sub(p, c->eye);
    double z = sc_v3_dot(d, c->fwd);
    *depth = z;
    if (!(z > c->near)) return 0;
    *x = c->cx + c->focal * sc_v3_dot(d, c->right) / z;
    *y = c->cy - c->focal * sc_v3_dot(d, c->up) / z;
    return 1;
}

sc_vec3 sc_camera_ray(const sc_camera *c, double x, double y)
{
    return sc_v3_add(c->fwd, sc_v3_add(sc_v3_scale(c->right, (x - c->cx) / c->focal), sc_v3_scale(c->up, (c->cy - y) / c->focal)));
}

/* ---- sample buffers ---- */

int sc_raster_init(sc_raster *r, int w, int h, int ss, sc_err *err)
{
    memset(r, 0, sizeof *r);
    if (w < 1 || h < 1 || ss < 1 || ss > 4 || (long)w * h * ss * ss > 200000000L)
        return sc_fail(err, SC_EINPUT, "image %d x %d with %d x %d samples per pixel is out of range", w, h, ss, ss);
    r->w = w;
    r->h = h;
    r->ss = ss;
    r->sw = w * ss;
    r->sh = h * ss;
    size_t n = (size_t)r->sw * r->sh;
    r->depth = malloc(n * sizeof *r->depth);
    r->color = malloc(n * sizeof *r->color);
    if (!r->depth || !r->color) {
        sc_raster_free(r);
        return sc_fail(err, SC_EIO, "out of memory (%d x %d image)", w, h);
    }
    return SC_OK;
}

void sc_raster_free(sc_raster *r)
{
    free(r->depth);
    free(r->color);
    memset(r, 0, sizeof *r);
}

void sc_raster_clear(sc_raster *r, const sc_camera *c, const double n[3], double off)
{
    /* along the ray e + s ray(x, y) the view depth is s, and the plane is hit at
       s = (off - n.e) / (n.ray): 1/s is affine in (x, y) */
    sc_vec3 nv = sc_v3_load(n);
    double h = off - sc_v3_dot(nv, c->eye); /* negative when the eye is above the plane */
    double inv_ss = 1.0 / r->ss;
    memset(r->color, 0, (size_t)r->sw * r->sh * sizeof *r->color);
    if (h >= 0) { /* the eye is not above the plane: it hides nothing */
        for (size_t i = 0; i < (size_t)r->sw * r->sh; i++) r->depth[i] = 0;
        return;
    }
    sc_vec3 r00 = sc_camera_ray(c, 0.5 * inv_ss, 0.5 * inv_ss);
    double a0 = sc_v3_dot(nv, r00) / h;
    double ax = sc_v3_dot(nv, c->right) / (c->focal * h) * inv_ss, ay = -sc_v3_dot(nv, c->up) / (c->focal * h) * inv_ss;
    for (int j = 0; j < r->sh; j++) {
        float *d = r->depth + (size_t)j * r->sw;
        double v = a0 + ay * j;
        for (int i = 0; i < r->sw; i++) {
            double iz = v + ax * i;
            d[i] = iz > 0 ? (float)iz : 0.0f;
        }
    }
}

static inline uint32_t pack(float cr, float cg, float cb)
{
    int r = (int)(cr * 255.0f + 0.5f), g = (int)(cg * 255.0f + 0.5f), b = (int)(cb * 255.0f + 0.5f);
    r = r < 0 ? 0 : r > 255 ? 255 : r;
    g = g < 0 ? 0 : g > 255 ? 255 : g;
    b = b < 0 ? 0 : b > 255 ? 255 : b;
    return 0xff000000u | (uint32_t)r << 16 | (uint32_t)g << 8 | (uint32_t)b;
}

void sc_raster_triangle(sc_raster *r, const float v0[6], const float v1[6], const float v2[6])
{
    float s = (float)r->ss;
    float x0 = v0[0] * s, y0 = v0[1] * s, x1 = v1[0] * s, y1 = v1[1] * s, x2 = v2[0] * s, y2 = v2[1] * s;
    float area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
    if (!(fabsf(area) > 1e-12f)) return; /* degenerate or NaN */
    if (area < 0) {                      /* make it positive: swap v1 and v2 */
        const float *t = v1;
        v1 = v2;
        v2 = t;
        float tx = x1, ty = y1;
        x1 = x2;
        y1 = y2;
        x2 = tx;
        y2 = ty;
        area = -area;
    }
    float fminx = minf_(x0, minf_(x1, x2)), fmaxx = maxf_(x0, maxf_(x1, x2));
    float fminy = minf_(y0, minf_(y1, y2)), fmaxy = maxf_(y0, maxf_(y1, y2));
    if (fmaxx < 0 || fmaxy < 0 || fminx > r->sw || fminy > r->sh) return;
    int minx = (int)floorf(fminx), maxx = (int)ceilf(fmaxx), miny = (int)floorf(fminy), maxy = (int)ceilf(fmaxy);
    if (minx < 0) minx = 0;
    if (miny < 0) miny = 0;
    if (maxx > r->sw - 1) maxx = r->sw - 1;
    if (maxy > r->sh - 1) maxy = r->sh - 1;
    /* attribute planes a(x, y) = a0 + ax (x - x0) + ay (y - y0) */
    float inv = 1.0f / area;
    float grad[4][3];
    for (int k = 0; k < 4; k++) {
        float a0 = v0[2 + k], d1 = v1[2 + k] - a0, d2 = v2[2 + k] - a0;
        grad[k][0] = a0;
        grad[k][1] = (d1 * (y2 - y0) - d2 * (y1 - y0)) * inv;
        grad[k][2] = (d2 * (x1 - x0) - d1 * (x2 - x0)) * inv;
    }
    /* edge functions at the first sample centre, stepped incrementally */
    float px = minx + 0.5f, py = miny + 0.5f;
    float e0 = (x2 - x1) * (py - y1) - (y2 - y1) * (px - x1);
    float e1 = (x0 - x2) * (py - y2) - (y0 - y2) * (px - x2);
    float e2 = (x1 - x0) * (py - y0) - (y1 - y0) * (px - x0);
    float e0x = -(y2 - y1), e1x = -(y0 - y2), e2x = -(y1 - y0);
    float e0y = x2 - x1, e1y = x0 - x2, e2y = x1 - x0;
    for (int j = miny; j <= maxy; j++) {
        float w0 = e0, w1 = e1, w2 = e2;
        float dy = j + 0.5f - y0;
        for (int i = minx; i <= maxx; i++) {
            if (w0 >= 0 && w1 >= 0 && w2 >= 0) {
                float dx = i + 0.5f - x0;
                float iz = grad[0][0] + grad[0][1] * dx + grad[0][2] * dy;
                size_t idx = (size_t)j * r->sw + i;
                if (iz > r->depth[idx]) {
                    r->depth[idx] = iz;
                    r->color[idx] = pack(grad[1][0] + grad[1][1] * dx + grad[1][2] * dy, grad[2][0] + grad[2][1] * dx + grad[2][2] * dy,
                                         grad[3][0] + grad[3][1] * dx + grad[3][2] * dy);
                }
            }
            w0 += e0x;
            w1 += e1x;
            w2 += e2x;
        }
        e0 += e0y;
        e1 += e1y;
        e2 += e2y;
    }
}

void sc_raster_resolve_row(const sc_raster *r, int y, const float *background, uint8_t *out, uint8_t *mask)
{
    int ss = r->ss, n = ss * ss;
    for (int x = 0; x < r->w; x++) {
        unsigned sr = 0, sg = 0, sb = 0, c = 0;
        for (int j = 0; j < ss; j++) {
            const uint32_t *row = r->color + (size_t)(y * ss + j) * r->sw + (size_t)x * ss;
            for (int i = 0; i < ss; i++) {
                uint32_t v = row[i];
                if (!v) continue;
                sr += (v >> 16) & 0xff;
                sg += (v >> 8) & 0xff;
                sb += v & 0xff;
                c++;
            }
        }
        const float *bg = background + 3 * x;
        float rest = (float)(n - (int)c) * 255.0f;
        float fr = (sr + rest * bg[0]) / n, fg = (sg + rest * bg[1]) / n, fb = (sb + rest * bg[2]) / n;
        out[3 * x] = (uint8_t)(fr < 0 ? 0 : fr > 255 ? 255 : fr + 0.5f);
        out[3 * x + 1] = (uint8_t)(fg < 0 ? 0 : fg > 255 ? 255 : fg + 0.5f);
        out[3 * x + 2] = (uint8_t)(fb < 0 ? 0 : fb > 255 ? 255 : fb + 0.5f);
        if (mask) mask[x] = (uint8_t)((c * 255 + n / 2) / n);
    }
}

/* ---- overlays ---- */

static inline void blend(uint8_t *p, const float c[3], double a)
{
    if (a <= 0) return;
    if (a > 1) a = 1;
    for (int k = 0; k < 3; k++) {
        double v = p[k] + a * (c[k] * 255.0 - p[k]);
        p[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5);
    }
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

void sc_draw_line(uint8_t *rgb, int w, int h, double x0, double y0, double x1, double y1, double width, const float color[3], double alpha)
{
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1)) return;
    double r = 0.5 * width, dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
    if (maxd_(fabs(x0), fabs(x1)) > 1e6 || maxd_(fabs(y0), fabs(y1)) > 1e6) return;
    int ix0 = clampi((int)floor(mind_(x0, x1) - r - 1), 0, w - 1), ix1 = clampi((int)ceil(maxd_(x0, x1) + r + 1), 0, w - 1);
    int iy0 = clampi((int)floor(mind_(y0, y1) - r - 1), 0, h - 1), iy1 = clampi((int)ceil(maxd_(y0, y1) + r + 1), 0, h - 1);
    for (int j = iy0; j <= iy1; j++)
        for (int i = ix0; i <= ix1; i++) {
            double px = i + 0.5 - x0, py = j + 0.5 - y0;
            double t = len2 > 0 ? (px * dx + py * dy) / len2 : 0;
            t = t < 0 ? 0 : t > 1 ? 1 : t;
            double ex = px - t * dx, ey = py - t * dy, d = sqrt(ex * ex + ey * ey);
            double cov = r + 0.5 - d;
            if (cov > 0) blend(rgb + 3 * ((size_t)j * w + i), color, alpha * (cov > 1 ? 1 : cov));
        }
}

void sc_draw_disc(uint8_t *rgb, int w, int h, double cx, double cy, double radius, const float color[3], double alpha)
{
    sc_draw_line(rgb, w, h, cx, cy, cx, cy, 2 * radius, color, alpha);
}

void sc_draw_triangle(uint8_t *rgb, int w, int h, const double xy[6], const float color[3], double alpha)
{
    for (int k = 0; k < 6; k++)
        if (!isfinite(xy[k]) || fabs(xy[k]) > 1e6) return;
    double area = (xy[2] - xy[0]) * (xy[5] - xy[1]) - (xy[4] - xy[0]) * (xy[3] - xy[1]);
    if (fabs(area) < 1e-9) return;
    double sgn = area > 0 ? 1 : -1;
    int ix0 = clampi((int)floor(mind_(xy[0], mind_(xy[2], xy[4]))) - 1, 0, w - 1);
    int ix1 = clampi((int)ceil(maxd_(xy[0], maxd_(xy[2], xy[4]))) + 1, 0, w - 1);
    int iy0 = clampi((int)floor(mind_(xy[1], mind_(xy[3], xy[5]))) - 1, 0, h - 1);
    int iy1 = clampi((int)ceil(maxd_(xy[1], maxd_(xy[3], xy[5]))) + 1, 0, h - 1);
    for (int j = iy0; j <= iy1; j++)
        for (int i = ix0; i <= ix1; i++) {
            double px = i + 0.5, py = j + 0.5, dmin = 1e30;
            for (int e = 0; e < 3; e++) {
                double ax = xy[2 * e], ay = xy[2 * e + 1], bx = xy[(2 * e + 2) % 6], by = xy[(2 * e + 3) % 6];
                double ex = bx - ax, ey = by - ay, len = sqrt(ex * ex + ey * ey);
                double d = sgn * (ex * (py - ay) - ey * (px - ax)) / len; /* > 0 inside */
                dmin = mind_(dmin, d);
            }
            double cov = dmin + 0.5;
            if (cov > 0) blend(rgb + 3 * ((size_t)j * w + i), color, alpha * (cov > 1 ? 1 : cov));
        }
}

void sc_draw_rect(uint8_t *rgb, int w, int h, int x0, int y0, int x1, int y1, const float color[3], double alpha)
{
    x0 = clampi(x0, 0, w);
    x1 = clampi(x1, 0, w);
    y0 = clampi(y0, 0, h);
    y1 = clampi(y1, 0, h);
    for (int j = y0; j < y1; j++)
        for (int i = x0; i < x1; i++) blend(rgb + 3 * ((size_t)j * w + i), color, alpha);
}

/* Software rasterization: a pinhole camera, a z-buffered triangle rasterizer on an optionally
 * supersampled grid (ss x ss samples per pixel: anti-aliased edges), and anti-aliased 2-D
 * overlay primitives (lines, discs, triangles) drawn on the final RGB image.
 *
 * Depth is stored as inverse view depth 1/d, which is affine in screen space for planar
 * primitives, so a plane (the ground) can clear the buffer analytically and triangles
 * interpolate it exactly. Everything is deterministic: the same input gives the same pixels. */
#ifndef SC_RENDER_RASTER_H
#define SC_RENDER_RASTER_H
#include <stdint.h>
#include "core/mathx.h"
#include "core/status.h"

typedef struct sc_camera {
    sc_vec3 eye, fwd, right, up; /* orthonormal; image x runs along right, image y down (-up) */
    double focal;                /* pixels per unit tangent */
    double cx, cy;               /* principal point in pixels */
    int width, height;
    double near; /* m */
} sc_camera;

/* A camera at eye looking at target with vertical field of view fov_deg, world up +y. */
void sc_camera_look_at(sc_camera *c, sc_vec3 eye, sc_vec3 target, double fov_deg, int width, int height);
/* Continuous pixel coordinates (pixel (i, j) covers [i, i+1) x [j, j+1)) and view depth (m);
   returns 0 when p is not in front of the near plane. */
int sc_camera_project(const sc_camera *c, sc_vec3 p, double *x, double *y, double *depth);
/* Ray direction through pixel coordinates (x, y), scaled so its component along fwd is 1. */
sc_vec3 sc_camera_ray(const sc_camera *c, double x, double y);

typedef struct sc_raster {
    int w, h, ss;    /* image size, samples per pixel along each axis */
    int sw, sh;      /* sample grid: w*ss x h*ss */
    float *depth;    /* inverse view depth per sample; larger is nearer, 0 = infinitely far */
    uint32_t *color; /* 0xff000000 | RGB where a triangle covers the sample, else 0 */
} sc_raster;

int sc_raster_init(sc_raster *r, int w, int h, int ss, sc_err *err);
void sc_raster_free(sc_raster *r);
/* Nothing drawn; every sample's depth is that of the plane n . x = off where the plane is
   visible from the camera (so the ground hides what is below it), else 0. */
void sc_raster_clear(sc_raster *r, const sc_camera *c, const double n[3], double off);
/* One triangle, either orientation; each vertex is {x, y (pixels), 1/depth, r, g, b (0..1)}.
   Depth-tested and written; colours are interpolated (Gouraud; equal colours: flat). */
void sc_raster_triangle(sc_raster *r, const float v0[6], const float v1[6], const float v2[6]);
/* Pixel row y: the mean of its samples, uncovered samples taking `background` (w x RGB floats
   in 0..1). out: w x RGB8. mask (may be NULL): covered fraction of each pixel, 0..255. */
void sc_raster_resolve_row(const sc_raster *r, int y, const float *background, uint8_t *out, uint8_t *mask);

/* ---- 2-D overlays on an RGB8 image (alpha-blended, anti-aliased by pixel coverage) ---- */
void sc_draw_line(uint8_t *rgb, int w, int h, double x0, double y0, double x1, double y1, double width, const float color[3], double alpha);
void sc_draw_disc(uint8_t *rgb, int w, int h, double cx, double cy, double radius, const float color[3], double alpha);
void sc_draw_triangle(uint8_t *rgb, int w, int h, const double xy[6], const float color[3], double alpha);
/* Darkens (alpha < 0 is not allowed) a rectangle towards color: a backdrop for labels. */
void sc_draw_rect(uint8_t *rgb, int w, int h, int x0, int y0, int x1, int y1, const float color[3], double alpha);

#endif

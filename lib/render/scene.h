/* Drawing a character pose: the deformed fine surface (Gouraud or flat shading, a key light,
 * a fill light from the camera and a sky/ground ambient), a checkered ground with grid lines
 * and a soft shadow (the key light's shadow plus a contact darkening under what touches the
 * ground), optionally the skeleton as sticks, contact points with the total contact force, and
 * push arrows; a camera that follows the character from the side, the front, or orbiting. */
#ifndef SC_RENDER_SCENE_H
#define SC_RENDER_SCENE_H
#include <stdint.h>
#include "render/anim.h"
#include "render/raster.h"
#include "settings/render.h"

/* sc_render_opts, SC_CAM_* and their defaults: settings/render.h */

typedef struct sc_renderer sc_renderer;

/* Scratch buffers for drawing poses of `a` at o->width x o->height (allocated once here, never
   while drawing). */
int sc_renderer_create(const sc_render_opts *o, const sc_anim *a, sc_renderer **out, sc_err *err);
void sc_renderer_free(sc_renderer *r);
/* The camera for time t; azimuth_offset (degrees) turns it further about the target. */
void sc_render_camera(const sc_renderer *r, const sc_anim *a, double t, double azimuth_offset, sc_camera *cam);
/* Draws pose p seen by cam into rgb (width x height x 3, rows top down). label (may be NULL)
   goes in the top-left corner. mask (may be NULL) receives the fraction of each pixel covered by
   the character's surface, 0..255. */
void sc_render_draw(sc_renderer *r, const sc_anim *a, const sc_anim_pose *p, const sc_camera *cam, const char *label, uint8_t *rgb, uint8_t *mask);
/* A frame at the pose's time with the default camera and a "t = 1.23 s" label. */
void sc_render_frame(sc_renderer *r, const sc_anim *a, const sc_anim_pose *p, uint8_t *rgb);

/* A cols x rows contact sheet of tiles tile_w x tile_h (options o, size overridden) at times
   spread evenly over [t0, t1], each labelled with its time; a one-frame animation (a character
   at rest) becomes a turntable labelled with the azimuth. *rgb is malloc'd. */
int sc_render_contact_sheet(const sc_render_opts *o, sc_anim *a, double t0, double t1, int cols, int rows, int tile_w, int tile_h, uint8_t **rgb,
                            int *w, int *h, sc_err *err);

#endif

/* render's settings: the config's `render:` section (all optional), the drawing options with
 * their defaults, and the scene a simulation's own config describes (its ground and pushes,
 * drawn by render). */
#ifndef SC_SETTINGS_RENDER_H
#define SC_SETTINGS_RENDER_H
#include "core/status.h"
#include "io/config.h"
#include "model/model.h"
#include "sim/contact.h"

enum { SC_CAM_SIDE = 0, SC_CAM_FRONT = 1, SC_CAM_ORBIT = 2 };

typedef struct sc_render_opts {
    int width, height;   /* pixels */
    int camera;          /* SC_CAM_* */
    double azimuth;      /* degrees about +y, 0 = camera on +z (the character's front); NAN: the preset's */
    double elevation;    /* degrees above the horizon */
    double distance;     /* m from the target; <= 0: fit the character's height */
    double fov;          /* vertical field of view, degrees */
    double orbit_period; /* s per turn for SC_CAM_ORBIT */
    int follow;          /* the target follows the centre of mass (averaged over +-0.5 s) */
    int antialias;       /* 2 x 2 samples per pixel */
    int flat;            /* flat shading instead of Gouraud */
    int skeleton, muscles, contacts, pushes, shadow, labels;
    double tile;              /* ground checker size (m) */
    double contact_threshold; /* surface vertices this close to the ground are contact points (m) */
    double push_scale;        /* push arrow length per newton (m/N) */
    double force_scale;       /* contact force arrow length per newton (m/N) */
    double body_color[3];     /* sRGB in 0..1 */
    double light[3];          /* direction towards the key light, world frame */
} sc_render_opts;

void sc_render_default_opts(sc_render_opts *o);
/* SC_CAM_* of "side", "front" or "orbit"; -1 for anything else. */
int sc_render_camera_by_name(const char *name);

/* The `render:` section: drawing options, which times to draw, and what to write. */
typedef struct sc_render_settings {
    sc_render_opts ro;
    double fps, start, end;
    int every, images, movie, sheet, sheet_cols, sheet_rows, sheet_tile_w, ground_from_sim;
    int xdmf, pc2, bvh, export_every;
    double export_fps;
} sc_render_settings;

/* cfg may be NULL (every default). */
int sc_render_settings_read(sc_cfg *cfg, sc_render_settings *c, sc_err *err);

/* The scene of a simulation's resolved config (sim.h5's root `config`): the ground plane
   n . x = off (flat y = 0 by default) and the pushes on named bones. */
#define SC_SCENE_MAX_PUSH 64
typedef struct sc_scene_push {
    int bone;
    double time, duration, force[3]; /* s, s, N (world frame) */
} sc_scene_push;

typedef struct sc_render_scene {
    sc_ground ground; /* the simulation's: plane, bumps and tiles */
    int npush;
    sc_scene_push push[SC_SCENE_MAX_PUSH];
} sc_render_scene;

/* Best effort: a config that does not parse (or whose ground does not) leaves a flat ground and no pushes (with a warning
   naming `file`); pushes on bones not in bone_name are left out. */
void sc_render_scene_read(const char *config_text, const char *file, const char (*bone_name)[SC_NAME_LEN], int nbones, sc_render_scene *s);

#endif

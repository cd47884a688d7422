/* render's settings: the `render:` section and the scene of a simulation's config. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/log.h"
#include "core/mathx.h"
#include "settings/render.h"
#include "settings/scenario.h"

static const char *const camera_names[] = {"side", "front", "orbit"};

void sc_render_default_opts(sc_render_opts *o)
{
    memset(o, 0, sizeof *o);
    o->width = 640;
    o->height = 480;
    o->camera = SC_CAM_SIDE;
    o->azimuth = NAN;
    o->elevation = 12;
    o->distance = 0;
    o->fov = 35;
    o->orbit_period = 8;
    o->follow = 1;
    o->antialias = 1;
    o->flat = 0;
    o->skeleton = 0;
    o->muscles = 1;
    o->contacts = 1;
    o->pushes = 1;
    o->shadow = 1;
    o->labels = 1;
    o->tile = 0.5;
    o->contact_threshold = 0.004;
    o->push_scale = 0.004;
    o->force_scale = 0.0005;
    o->body_color[0] = 0.93;
    o->body_color[1] = 0.91;
    o->body_color[2] = 0.86;
    o->light[0] = -0.45;
    o->light[1] = 1.0;
    o->light[2] = 0.55;
}

int sc_render_camera_by_name(const char *name)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, camera_names[i])) return i;
    return -1;
}

int sc_render_settings_read(sc_cfg *cfg, sc_render_settings *c, sc_err *err)
{
    sc_render_opts *o = &c->ro;
    sc_render_default_opts(o);
    sc_cfg_node *root = cfg ? sc_cfg_root(cfg) : NULL, *r = NULL, *sh = NULL, *ex = NULL;
    static const char *const shading[] = {"smooth", "flat"};
    long w, h, every, cols, rows, tw, eevery;
    int flat, rc;
    double def_color[3], def_light[3];
    memcpy(def_color, o->body_color, sizeof def_color);
    memcpy(def_light, o->light, sizeof def_light);
#define TRY(x) \
    if ((rc = (x))) return rc
    if (root) TRY(sc_cfg_section(root, "render", &r, err));
    TRY(sc_cfg_int(r, "width", 640, 16, 8192, &w, err));
    TRY(sc_cfg_int(r, "height", 480, 16, 8192, &h, err));
    TRY(sc_cfg_enum(r, "camera", camera_names, 3, SC_CAM_SIDE, &o->camera, err));
    if (r && sc_cfg_get(r, "azimuth")) TRY(sc_cfg_double_range(r, "azimuth", 0, -3600, 3600, &o->azimuth, err));
    TRY(sc_cfg_double_range(r, "elevation", o->elevation, -89, 89, &o->elevation, err));
    TRY(sc_cfg_double_range(r, "distance", 0, 0, 1e4, &o->distance, err));
    TRY(sc_cfg_double_range(r, "fov", o->fov, 5, 150, &o->fov, err));
    TRY(sc_cfg_double_range(r, "orbit_period", o->orbit_period, 0.01, 1e6, &o->orbit_period, err));
    TRY(sc_cfg_bool(r, "follow", 1, &o->follow, err));
    TRY(sc_cfg_bool(r, "antialias", 1, &o->antialias, err));
    TRY(sc_cfg_enum(r, "shading", shading, 2, 0, &flat, err));
    o->flat = flat;
    TRY(sc_cfg_bool(r, "skeleton", 0, &o->skeleton, err));
    TRY(sc_cfg_bool(r, "muscles", 1, &o->muscles, err));
    TRY(sc_cfg_bool(r, "contacts", 1, &o->contacts, err));
    TRY(sc_cfg_bool(r, "pushes", 1, &o->pushes, err));
    TRY(sc_cfg_bool(r, "shadow", 1, &o->shadow, err));
    TRY(sc_cfg_bool(r, "labels", 1, &o->labels, err));
    TRY(sc_cfg_double_range(r, "grid", o->tile, 0.01, 100, &o->tile, err));
    TRY(sc_cfg_double_range(r, "contact_threshold", o->contact_threshold, 0, 1, &o->contact_threshold, err));
    TRY(sc_cfg_double_range(r, "push_scale", o->push_scale, 0, 10, &o->push_scale, err));
    TRY(sc_cfg_double_range(r, "force_scale", o->force_scale, 0, 10, &o->force_scale, err));
    TRY(sc_cfg_vec_range(r, "body_color", 3, def_color, 0, 1, o->body_color, err));
    TRY(sc_cfg_vec_range(r, "light", 3, def_light, -1e3, 1e3, o->light, err));
    TRY(sc_cfg_bool(r, "ground_from_sim", 1, &c->ground_from_sim, err));
    TRY(sc_cfg_double_range(r, "fps", 30, 0, 1000, &c->fps, err));
    TRY(sc_cfg_int(r, "every", 0, 0, 1000000, &every, err));
    TRY(sc_cfg_double_range(r, "start", 0, 0, 1e6, &c->start, err));
    TRY(sc_cfg_double_range(r, "end", 0, 0, 1e6, &c->end, err));
    TRY(sc_cfg_bool(r, "images", 1, &c->images, err));
    TRY(sc_cfg_bool(r, "movie", 1, &c->movie, err));
    if (r) TRY(sc_cfg_section(r, "contact_sheet", &sh, err));
    TRY(sc_cfg_bool(sh, "enabled", 1, &c->sheet, err));
    TRY(sc_cfg_int(sh, "cols", 4, 1, 20, &cols, err));
    TRY(sc_cfg_int(sh, "rows", 3, 1, 20, &rows, err));
    TRY(sc_cfg_int(sh, "tile_width", 320, 32, 4096, &tw, err));
    if (r) TRY(sc_cfg_section(r, "export", &ex, err));
    TRY(sc_cfg_bool(ex, "xdmf", 1, &c->xdmf, err));
    TRY(sc_cfg_bool(ex, "pc2", 1, &c->pc2, err));
    TRY(sc_cfg_bool(ex, "bvh", 1, &c->bvh, err));
    TRY(sc_cfg_double_range(ex, "fps", 30, 0, 1000, &c->export_fps, err));
    TRY(sc_cfg_int(ex, "every", 0, 0, 1000000, &eevery, err));
#undef TRY
    o->width = (int)w;
    o->height = (int)h;
    c->every = (int)every;
    c->sheet_cols = (int)cols;
    c->sheet_rows = (int)rows;
    c->sheet_tile_w = (int)tw;
    c->export_every = (int)eevery;
    return SC_OK;
}

void sc_render_scene_read(const char *config_text, const char *file, const char (*bone_name)[SC_NAME_LEN], int nbones, sc_render_scene *s)
{
    memset(s, 0, sizeof *s);
    s->ground.normal = sc_v3(0, 1, 0);
    sc_cfg *cfg = NULL;
    sc_err e;
    char name[1200];
    snprintf(name, sizeof name, "%s:/ attribute 'config'", file);
    if (sc_cfg_load_string(config_text, name, &cfg, &e)) {
        sc_log_warn("%s: flat ground at y = 0 and no push arrows by bone (%s)", file, e.msg);
        return;
    }
    sc_cfg_node *root = sc_cfg_root(cfg);
    if (sc_ground_read(root, &s->ground, &e)) {
        sc_log_warn("%s: flat ground at y = 0 (%s)", file, e.msg);
        memset(&s->ground, 0, sizeof s->ground);
        s->ground.normal = sc_v3(0, 1, 0);
    }
    sc_cfg_node *list = sc_cfg_get(root, "perturbations");
    for (int i = 0; list && sc_cfg_is_seq(list) && i < sc_cfg_len(list) && s->npush < SC_SCENE_MAX_PUSH; i++) {
        sc_cfg_node *it = sc_cfg_at(list, i);
        char type[32], bone[SC_NAME_LEN];
        sc_scene_push p;
        if (!sc_cfg_is_map(it) || sc_cfg_string(it, "type", "push", type, sizeof type, &e) || strcmp(type, "push") ||
            sc_cfg_string(it, "bone", "", bone, sizeof bone, &e) || sc_cfg_double(it, "time", 0, &p.time, &e) ||
            sc_cfg_double(it, "duration", 0.1, &p.duration, &e) || sc_cfg_vec_range(it, "force", 3, NULL, -1e6, 1e6, p.force, &e))
            continue;
        char frame[32];
        /* a heading or phase push's world force and time are known only to the run: its recorded
           /control/push_force is drawn instead (at the centre of mass, when no other push is) */
        if (sc_cfg_get(it, "phase") || sc_cfg_string(it, "frame", "world", frame, sizeof frame, &e) || strcmp(frame, "world")) continue;
        p.bone = -1;
        for (int b = 0; b < nbones; b++)
            if (!strcmp(bone_name[b], bone)) p.bone = b;
        if (p.bone >= 0) s->push[s->npush++] = p;
    }
    sc_cfg_free(cfg);
}

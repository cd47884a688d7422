/* render's output stages: frames, contact sheet, exports. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "core/log.h"
#include "render/export.h"
#include "render/output.h"
#include "render/png.h"
#include "render/scene.h"

int sc_render_write_frames(const sc_render_settings *c, sc_anim *a, const double *times, int n, const char *dir, const sc_render_sink *sink,
                           sc_err *err)
{
    const sc_render_opts *o = &c->ro;
    sc_renderer *r = NULL;
    sc_anim_pose pose = {0};
    uint8_t *rgb = NULL;
    char path[4200];
    double render_s = 0, png_s = 0;
    int rc = sc_renderer_create(o, a, &r, err);
    if (!rc) rc = sc_anim_pose_alloc(a, &pose, err);
    if (!rc && !(rgb = malloc((size_t)o->width * o->height * 3))) rc = sc_fail(err, SC_EIO, "out of memory");
    if (rc) goto done;
    sc_progress prog;
    sc_progress_begin(&prog, "render", n);
    for (int i = 0; i < n; i++) {
        double t0 = sc_wall_time();
        if ((rc = sc_anim_sample(a, times[i], &pose, err))) goto done;
        sc_render_frame(r, a, &pose, rgb);
        double t1 = sc_wall_time();
        snprintf(path, sizeof path, "%s/frame_%05d.png", dir, i);
        if ((rc = sc_png_write(path, rgb, o->width, o->height, err))) goto done;
        sink->wrote(sink->ctx, path);
        sink->checkpoint(sink->ctx);
        render_s += t1 - t0;
        png_s += sc_wall_time() - t1;
        sc_progress_update(&prog, i + 1);
    }
    sc_progress_end(&prog);
    sc_log_info("render: %d frames %d x %d in %s/frame_%05d.png .. frame_%05d.png: %.1f ms per frame drawing, %.1f ms writing PNG", n, o->width,
                o->height, dir, 0, n - 1, 1e3 * render_s / n, 1e3 * png_s / n);
done:
    free(rgb);
    sc_anim_pose_free(&pose);
    sc_renderer_free(r);
    return rc;
}

int sc_render_write_sheet(const sc_render_settings *c, sc_anim *a, const double *times, int n, const char *dir, const sc_render_sink *sink,
                          sc_err *err)
{
    uint8_t *sheet;
    char path[4200];
    int sw, sh, th = (int)lround((double)c->sheet_tile_w * c->ro.height / c->ro.width);
    double t0 = n ? times[0] : 0, t1 = n ? times[n - 1] : 0;
    int rc = sc_render_contact_sheet(&c->ro, a, t0, t1, c->sheet_cols, c->sheet_rows, c->sheet_tile_w, th, &sheet, &sw, &sh, err);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/contact_sheet.png", dir);
    rc = sc_png_write(path, sheet, sw, sh, err);
    if (!rc) {
        sink->wrote(sink->ctx, path);
        sink->checkpoint(sink->ctx);
        sc_log_info("render: %s (%d x %d tiles over t = %.2f .. %.2f s)", path, c->sheet_cols, c->sheet_rows, t0, t1);
    }
    free(sheet);
    return rc;
}

int sc_render_write_exports(const sc_render_settings *c, sc_anim *a, const char *dir, const char *stem, int argc, char **argv,
                            const sc_render_sink *sink, sc_err *err)
{
    double *et = NULL;
    int en = sc_anim_times(a, c->export_fps, c->export_every, c->start, c->end, &et);
    if (en < 0) return sc_fail(err, SC_EIO, "out of memory");
    double efps = en > 1 && et[en - 1] > et[0] ? (en - 1) / (et[en - 1] - et[0]) : 30;
    char h5p[4200], xp[4200];
    int rc = SC_OK;
    if (c->xdmf) {
        snprintf(h5p, sizeof h5p, "%s/%s_frames.h5", dir, stem);
        snprintf(xp, sizeof xp, "%s/%s_frames.xdmf", dir, stem);
        if ((rc = sc_export_xdmf(a, et, en, h5p, xp, argc, argv, err))) goto done;
        sink->wrote(sink->ctx, h5p);
        sink->wrote(sink->ctx, xp);
        sink->checkpoint(sink->ctx);
        sc_log_info("render: %s + %s: %d frames (ParaView: open the .xdmf, Xdmf3 reader)", xp, h5p, en);
    }
    if (c->pc2) {
        snprintf(xp, sizeof xp, "%s/%s_surface.obj", dir, stem);
        snprintf(h5p, sizeof h5p, "%s/%s_surface.pc2", dir, stem);
        if ((rc = sc_export_obj(a, et[0], xp, err))) goto done;
        sink->wrote(sink->ctx, xp);
        if ((rc = sc_export_pc2(a, et, en, h5p, err))) goto done;
        sink->wrote(sink->ctx, h5p);
        sink->checkpoint(sink->ctx);
        sc_log_info("render: %s + %s: %d vertices, %d samples at %.4g fps (Blender: Mesh Cache modifier)", xp, h5p, a->nsv, en, efps);
    }
    if (c->bvh && a->nbones == 0) sc_log_info("render: no %s_skeleton.bvh: a boneless character has no skeleton", stem);
    if (c->bvh && a->nbones > 0) {
        snprintf(xp, sizeof xp, "%s/%s_skeleton.bvh", dir, stem);
        if ((rc = sc_export_bvh(a, et, en, xp, err))) goto done;
        sink->wrote(sink->ctx, xp);
        sink->checkpoint(sink->ctx);
        sc_log_info("render: %s: %d bones, %d frames at %.4g fps (metres, ZYX Euler)", xp, a->nbones, en, efps);
    }
done:
    free(et);
    return rc;
}

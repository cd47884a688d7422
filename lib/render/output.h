/* What render writes into its output folder, stage by stage: the PNG frames, the contact sheet
 * and the exports (XDMF + HDF5 frames, OBJ + PC2, BVH), as the `render:` settings ask. Each
 * file written is reported to the sink (so a caller can remove them again), and the sink's
 * checkpoint is called between frames and stages (where a caller may stop). */
#ifndef SC_RENDER_OUTPUT_H
#define SC_RENDER_OUTPUT_H
#include "core/status.h"
#include "render/anim.h"
#include "settings/render.h"

typedef struct sc_render_sink {
    void (*wrote)(void *ctx, const char *path);
    void (*checkpoint)(void *ctx);
    void *ctx;
} sc_render_sink;

/* dir/frame_00000.png ... at times[0..n-1]. */
int sc_render_write_frames(const sc_render_settings *c, sc_anim *a, const double *times, int n, const char *dir, const sc_render_sink *sink,
                           sc_err *err);
/* dir/contact_sheet.png over [times[0], times[n-1]]. */
int sc_render_write_sheet(const sc_render_settings *c, sc_anim *a, const double *times, int n, const char *dir, const sc_render_sink *sink,
                          sc_err *err);
/* dir/STEM_frames.xdmf + .h5, STEM_surface.obj + .pc2, STEM_skeleton.bvh (those enabled), at the
   export times of c; argc/argv go into the HDF5 provenance. */
int sc_render_write_exports(const sc_render_settings *c, sc_anim *a, const char *dir, const char *stem, int argc, char **argv,
                            const sc_render_sink *sink, sc_err *err);

#endif

/* A self-contained interactive viewer of an animation: one HTML file that opens from disk in a
 * browser (no server, no network) with three.js (Debian's libjs-three, embedded at build time:
 * render/viewer_assets.h), the viewer's own page (lib/render/viewer.html) and the motion: the
 * fine surface, the skeleton (joint and tip of each bone), the reference ghost, the contact
 * force and the run's key figures. Positions are quantized to 16 bits per axis against the
 * motion's bounding box, delta-coded frame to frame and zlib-compressed (softcon's own deflate;
 * the page inflates them with the browser's DecompressionStream), base64 in the page. */
#ifndef SC_RENDER_HTML_H
#define SC_RENDER_HTML_H
#include "core/status.h"
#include "render/anim.h"
#include "settings/render.h"

/* The run's key figures shown beside the motion. */
typedef struct sc_html_figures {
    int judged;          /* 0: no fall judgement (no skeleton, or a character at rest) */
    int fell;            /* 1: a fall at fall_time */
    double fall_time;    /* s since the start; the duration when it never fell */
    char fall_rule[160]; /* what the fall was judged against */
    char reason[128];    /* why it is a fall */
    double ref_tracking; /* rad, RMS joint angle error against the reference until the fall (ref_judged) */
    int ref_judged;      /* the fall was judged against a reference.h5 */
} sc_html_figures;

/* Key figures of the animation: with ref_path (a reference.h5) the fall and tracking are
   judged against it (learn/evaluate.h's fall test), otherwise against the simulation's own first
   frame (the pelvis below half its starting height, or the torso tilted over 60 deg). A ref_path
   that is not a reference.h5 (an openloop.h5) falls back to the first frame. */
void sc_html_judge(const sc_anim *a, const char *ref_path, sc_html_figures *fig);

/* Writes path (a temporary renamed when complete): the animation at times[0..n-1], drawn with
   the options of c (body colour, contact threshold, force scale). title names the run. */
int sc_export_html(sc_anim *a, const double *times, int n, const sc_render_opts *o, const sc_html_figures *fig, const char *title, const char *path,
                   size_t *bytes, sc_err *err);

#endif

/* Files embedded into the library at build time (the Makefile generates their definitions, so
 * render stays one binary that needs nothing at run time): the viewer page lib/render/viewer.html
 * and, from Debian's libjs-three (r111), three.min.js and the non-module OrbitControls.js. */
#ifndef SC_RENDER_VIEWER_ASSETS_H
#define SC_RENDER_VIEWER_ASSETS_H
#include <stddef.h>

extern const unsigned char sc_asset_viewer_html[], sc_asset_three_js[], sc_asset_orbit_js[];
extern const size_t sc_asset_viewer_html_len, sc_asset_three_js_len, sc_asset_orbit_js_len;

#endif

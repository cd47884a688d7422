/* Binary glTF 2.0 (.glb) of an animation: the fine surface as one mesh whose morph target k is
 * export frame k (a weights animation keys target k to 1 at times[k], linear in between), and the
 * skeleton as a node hierarchy (one node per bone at its joint, a leaf's tip as a child node)
 * with translation and rotation animated per frame. Y up, metres, seconds: what Blender 3.4's
 * importer and three.js's GLTFLoader both read. */
#ifndef SC_RENDER_GLTF_H
#define SC_RENDER_GLTF_H
#include "core/status.h"
#include "render/anim.h"

/* Writes path (a temporary renamed when complete) from the animation at times[0..n-1]. */
int sc_export_gltf(sc_anim *a, const double *times, int n, const char *path, sc_err *err);

#endif

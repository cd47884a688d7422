/* Exports of an animation (sim.h5 or a character at rest) for the viewers people already have:
 *  - XDMF + a side HDF5 file with one dataset per frame (ParaView opens the .xdmf as a time
 *    series: the fine surface, the tet mesh and the skeleton as three temporal collections);
 *  - OBJ + PC2 point cache of the fine surface (Blender: import the OBJ keeping the vertex
 *    order, add a Mesh Cache modifier on the .pc2);
 *  - BVH of the skeleton (ZYX Euler channels in degrees, lengths in metres), which
 *    sc_bvh_load reads back. */
#ifndef SC_RENDER_EXPORT_H
#define SC_RENDER_EXPORT_H
#include "core/mathx.h"
#include "core/status.h"
#include "render/anim.h"

/* h5_path (store/frames.h's NAME_frames.h5) gets the animation sampled at times[0..n-1], and
   xdmf_path its description for ParaView (sc_frames_save). argc/argv go into the provenance
   attributes (may be 0/NULL). */
int sc_export_xdmf(sc_anim *a, const double *times, int n, const char *h5_path, const char *xdmf_path, int argc, char *const *argv, sc_err *err);
/* The fine surface at time t as OBJ. */
int sc_export_obj(sc_anim *a, double t, const char *obj_path, sc_err *err);
/* PC2: "POINTCACHE2\0", int32 version 1, int32 points, float32 start frame (0), float32 sample
   rate (1 frame), int32 samples, then float32 x, y, z per point per sample (little-endian). */
int sc_export_pc2(sc_anim *a, const double *times, int n, const char *pc2_path, sc_err *err);
/* BVH: the bones in depth-first order (root with OFFSET 0 and absolute position channels, the
   one reading every importer agrees on), an End Site at each leaf's tip; frame time =
   times[1] - times[0] (1/30 s for one frame). */
int sc_export_bvh(sc_anim *a, const double *times, int n, const char *bvh_path, sc_err *err);

/* Euler angles (degrees) with q = Rz(e[0]) Ry(e[1]) Rx(e[2]), e[1] in [-90, 90]. */
void sc_quat_to_euler_zyx_deg(sc_quat q, double e[3]);

#endif

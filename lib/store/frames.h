/* NAME_frames.h5 (schema softcon.frames/1) and the NAME_frames.xdmf describing it: render's
 * export of an animation for ParaView, written only here (render samples the frames). ParaView
 * reads only whole datasets (store/xdmf.h), so every frame has its own.
 *
 *   /mesh/surface_faces [nsf,3] int    fine surface triangles
 *   /mesh/tets [ntets,4] int           tet node indices
 *   /mesh/node_bone [nnodes] int       bone a node is fixed to, -1 free
 *   /mesh/bone_segments [nb-1,2] int   parent joint, child joint (absent with one bone)
 *   /mesh/bone_names [nb]              bone names, in the order of each frame's joints
 *   /frames/NNNNNN (attribute time s)  frame NNNNNN: surface [nsv,3] m (fine surface vertices),
 *                                      surface_height [nsv] m (above the ground), nodes
 *                                      [nnodes,3] m (tet nodes), joints [nb,3] m (bone origins)
 *   / attributes                       provenance (sc_h5_provenance), source (the sim.h5 or
 *                                      character.h5 drawn), frames
 * The .xdmf shows three temporal collections: surface (with `height`), tetmesh (with
 * `fixed_bone`) and skeleton (with more than one bone). */
#ifndef SC_STORE_FRAMES_H
#define SC_STORE_FRAMES_H
#include "core/status.h"

#define SC_FRAMES_SCHEMA "softcon.frames/1"

/* What every frame shares. */
typedef struct sc_frames_mesh {
    const char *source; /* root attribute `source` */
    int nsf, nsv, ntets, nnodes, nbones;
    const int *faces, *tets;       /* [nsf*3], [ntets*4] */
    const int *node_bone, *parent; /* [nnodes], [nbones] (-1 for the root, parent[b] < b) */
    const char *const *bone_names; /* [nbones] */
} sc_frames_mesh;

/* One frame, as the caller's sampler gives it (valid until the next call). */
typedef struct sc_frames_pose {
    const double *surface, *surface_height, *nodes, *joints; /* [nsv*3], [nsv], [nnodes*3], [nbones*3] */
} sc_frames_pose;
typedef int (*sc_frames_sampler)(void *ctx, double t, sc_frames_pose *pose, sc_err *err);

/* h5_path gets the datasets above, frame i sampled at times[i] (n >= 1); xdmf_path refers to the
   HDF5 file by its name relative to the XDMF's folder. Both written to temporaries and renamed (the h5
   removed again when the xdmf fails). argc/argv go into the provenance (may be 0/NULL). */
int sc_frames_save(const char *h5_path, const char *xdmf_path, const sc_frames_mesh *mesh, const double *times, int n, sc_frames_sampler sample,
                   void *ctx, int argc, char *const *argv, sc_err *err);

#endif

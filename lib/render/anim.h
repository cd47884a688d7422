/* A simulation (sim.h5, softcon.sim/1) or a character at rest (character.h5) as an animation
 * that can be sampled at any time: tet nodes, the embedded fine surface ([L13] 4.2: a surface
 * vertex is a barycentric combination of its tet's nodes), bone poses, and the per-frame
 * diagnostics the renderer draws. Node frames are read from the file on demand (two cached),
 * so memory does not grow with the clip length; sc_anim_open reads every frame once to check
 * it, so a damaged file fails before anything is written. */
#ifndef SC_RENDER_ANIM_H
#define SC_RENDER_ANIM_H
#include "core/mathx.h"
#include "core/status.h"
#include "model/model.h"
#include "settings/render.h"
#include "store/sim.h"

#define SC_ANIM_MAX_PUSH SC_SCENE_MAX_PUSH
typedef sc_scene_push sc_anim_push; /* a push of the simulation's config (settings/render.h) */

typedef struct sc_anim {
    char path[1024];
    int is_sim;    /* 0: a character.h5 rest pose (one frame at t = 0) */
    int has_nodes; /* sim.h5 has /nodes/position; otherwise nodes follow their bones rigidly */
    int nframes;
    double *time; /* [nframes] s, non-decreasing */
    /* skeleton; bone frames are world-aligned at rest with their origin at the joint */
    int nbones;
    char (*bone_name)[SC_NAME_LEN];
    int *parent;        /* [nbones], -1 for the root, parent[b] < b */
    double *joint_rest; /* [nbones*3] rest joint (bone origin) */
    double *tip_rest;   /* [nbones*3] rest tip: the child joint, or for a leaf its far end */
    double *bone_pos;   /* [nframes*nbones*3] bone origin */
    double *bone_quat;  /* [nframes*nbones*4] (w, x, y, z) rotation from the rest pose */
    /* meshes */
    int nnodes, ntets, nsv, nsf;
    int *tets;         /* [ntets*4] */
    double *rest_pos;  /* [nnodes*3] */
    int *node_bone;    /* [nnodes] fixed bone or -1 */
    int *faces;        /* [nsf*3] fine surface triangles (counter-clockwise from outside) */
    int *surf_tet;     /* [nsv] */
    double *surf_bary; /* [nsv*4] */
    double *surf_rest; /* [nsv*3] */
    /* diagnostics per frame (zeros when absent) */
    double *com, *contact_force, *push_force; /* [nframes*3] m, N, N */
    /* scene from the simulation's config (root attribute `config`), when readable */
    double ground_n[3], ground_off; /* ground: n . x = off (flat y = 0 by default) */
    sc_ground relief;               /* and its bumps and tiles, drawn as shading of that plane */
    int npush;
    sc_anim_push push[SC_ANIM_MAX_PUSH];
    double height;                       /* rest surface height (m) */
    double span;                         /* rest surface's horizontal extent: the diagonal of its x-z box (m) */
    char status[256];                    /* the sim's root `status` attribute ("" if none) */
    double *ref_time;                    /* [nframes] reference time the controller played (/control/reference_time), or NULL */
    double *tracking_error;              /* [nframes] rad (/control/tracking_error), or NULL */
    int muscle_npoints, muscle_nsegs;    /* a boneless body's muscles ([T12]; 0 when none) */
    int *muscle_point_tet, *muscle_seg;  /* [npoints], [2 nsegs] */
    double *muscle_point_bary;           /* [4 npoints] */
    double *muscle_rest_len, *muscle_ld; /* [nsegs] l0, [nframes * nsegs] l_d (m) */
    /* the reference's skeleton, drawn as a ghost (sc_anim_attach_reference) */
    int ghost_n;                                 /* reference samples; 0: no ghost */
    int ghost_sim_time;                          /* 1: ghost_time is the simulation's time (an openloop.h5's achieved frames) */
    double *ghost_time, *ghost_pos, *ghost_quat; /* [ghost_n], [ghost_n*nbones*3], [ghost_n*nbones*4] */
    /* private */
    sc_sim_file *file; /* sim.h5, for node frames on demand */
    int *rigid_bone;   /* [nnodes] bone each node follows when there are no node frames */
    double *cache[2];
    int cache_k[2];
} sc_anim;

/* A sampled pose; arrays are sized by sc_anim_pose_alloc. */
typedef struct sc_anim_pose {
    double t;
    int frame;      /* the stored frame at or before t */
    double *nodes;  /* [nnodes*3] */
    double *surf;   /* [nsv*3] */
    sc_xform *bone; /* [nbones] world pose: x = q (X - joint_rest) + p */
    double com[3], contact_force[3], push_force[3];
    int has_ghost;
    sc_xform *ghost; /* [nbones] the reference's bone poses at the reference time played at t */
} sc_anim_pose;

/* Opens sim.h5 or character.h5 (told apart by the root `schema` attribute, or by content).
   Errors name the file and the HDF5 path: SC_EINPUT for missing/mis-shaped/out-of-range data,
   SC_EIO for unreadable files or data. */
int sc_anim_open(const char *path, sc_anim *a, sc_err *err);
void sc_anim_close(sc_anim *a);
/* Adds the skeleton of a reference.h5 (softcon.reference/1, made for the same character) as a
   ghost: each pose gets the reference's bone poses at the reference time the simulation played
   (its /control/reference_time; else the reference's start plus the simulation's time). An
   openloop.h5 works too: its /achieved/reference_bone_* give the tracked reference (a repeated
   gait cycle included) at the simulation's times. */
int sc_anim_attach_reference(sc_anim *a, const char *ref_path, sc_err *err);

int sc_anim_pose_alloc(const sc_anim *a, sc_anim_pose *p, sc_err *err);
void sc_anim_pose_free(sc_anim_pose *p);
/* Stored frame k exactly. */
int sc_anim_frame(sc_anim *a, int k, sc_anim_pose *p, sc_err *err);
/* Time t (clamped to the clip): positions interpolated linearly between the two stored frames
   around t, rotations by slerp; t equal to a stored time gives that frame exactly. */
int sc_anim_sample(sc_anim *a, double t, sc_anim_pose *p, sc_err *err);

/* Times to draw or export: every `every`-th stored frame when every > 0, else a uniform
   `fps` grid over [start, end] (end <= start: to the end of the clip); fps <= 0 with every <= 0
   means every stored frame. *times is malloc'd; returns the count (>= 1), or -1 out of memory. */
int sc_anim_times(const sc_anim *a, double fps, int every, double start, double end, double **times);
/* Centre of mass averaged over [t - window, t + window] (a steady follow-camera target). */
sc_vec3 sc_anim_follow(const sc_anim *a, double t, double window);
/* Local rotation of bone b relative to its parent (for the root: its world rotation). */
sc_quat sc_anim_local_rotation(const sc_anim_pose *p, const sc_anim *a, int b);
/* Signed height of a point above the ground plane. */
double sc_anim_height_above_ground(const sc_anim *a, const double *x);

#endif

/* mesh-prep as a library call: skeleton + body -> simulation-ready sc_model ([L13] 3, 4.2,
 * 4.3, 6): fine surface, coarse envelope, fixed nodes on the bones, TetGen mesh, embedding,
 * lumped masses, bone masses and inertias from their fixed nodes. With no bones (rig.nbones 0)
 * the character is boneless ([T12]): a built-in letter or a closed OBJ, no fixed nodes; with
 * envelope.offset 0 (a letter's default) the envelope is the body's own surface decimated
 * (mesh/decimate.h) to about the vertices that give tetgen.target_tets tets, so the tet mesh is
 * the body itself and stands on y = 0. */
#ifndef SC_PREP_H
#define SC_PREP_H
#include "io/obj.h"
#include "mesh/body.h"
#include "mesh/embed.h"
#include "mesh/envelope.h"
#include "mesh/fit.h"
#include "mesh/letters.h"
#include "mesh/rig.h"
#include "mesh/tetgen.h"

struct sc_cfg;

/* sc_prep_opts.body_kind besides the built-in sc_body_kind values */
#define SC_PREP_BODY_OBJ    (-1) /* a user's OBJ (body.obj) */
#define SC_PREP_BODY_LETTER (-2) /* a built-in letter (body.letter, [T12]): boneless */

typedef struct sc_prep_opts {
    sc_rig rig;       /* nbones 0: a boneless character (no fixed nodes, no skin) */
    int body_kind;    /* sc_body_kind, SC_PREP_BODY_OBJ or SC_PREP_BODY_LETTER */
    sc_letter letter; /* SC_PREP_BODY_LETTER */
    char body_obj[1024];
    double body_scale; /* OBJ units to metres */
    double girth;
    int surface_target;                        /* fine-surface vertices (built-in bodies) */
    char envelope_obj[1024];                   /* given envelope, "" = generate */
    sc_envelope_opts envelope;                 /* boneless and offset 0: the body itself, decimated to
                                  target_vertices (0: as many as make target_tets tets) */
    double fixed_radius;                       /* fraction of bone length when a bone sets none */
    double fixed_radius_min, fixed_radius_max; /* m */
    int fixed_shape;
    sc_tetgen_opts tetgen;
    int target_tets;     /* sets the TetGen volume bound when max_volume is 0 */
    double min_dihedral; /* slivers below this are peeled or smoothed (degrees) */
    double density, youngs, poisson;
    double mass_floor;               /* node masses below this fraction of the median are raised */
    double stable_youngs, stable_dt; /* free node masses are raised so that the explicit step
                                    stable_dt is stable up to max(youngs, stable_youngs) (Pa); 0: off */
    int ground;                      /* shift so the lowest surface point is at y = 0 */
    int apose;                       /* built-in body: arms turned down by arm_angle (A-pose) */
    double arm_angle;                /* rad */
    int facing;                      /* OBJ body: 0 +z, 1 -z, 2 +x, 3 -x (turned to face +z) */
    int fit_skeleton;                /* fit the skeleton into an OBJ body (default: when it is a BVH's) */
    int fit_joints_kept;             /* body.fit_joints: skeleton: the fit keeps the skeleton's proportions along the limbs
                                        (a body made around this skeleton); 0: joints at the body's landmarks */
    int fixed_fit;                   /* size the fixed-node boxes the config leaves alone to the body */
    char body_where[160];            /* config location of body.obj, for messages */
    char skeleton_bvh[1024];         /* the skeleton's BVH as found ("" for inline bones): an input */
} sc_prep_opts;

typedef struct sc_prep_report {
    int nnodes, ntets, nsurf_verts, nsurf_tris, nbones, njoints, nfixed;
    int env_verts, env_tris;
    double env_spacing, surface_spacing; /* env_spacing: the grid's, or a conforming envelope's mean edge */
    int env_conforming;                  /* the envelope is the (boneless) body itself, decimated */
    sc_tet_quality quality;
    sc_embed_stats embed;
    double total_mass, bone_mass_total, volume; /* volume: enclosed by the envelope */
    double body_volume, tet_volume;             /* enclosed by the fine surface; of the tets */
    double seconds, seconds_tetgen;
    double shift_y;
    int flipped_tets;
    int mass_floored; /* nodes whose mass was raised (mass_floor or stable_youngs) */
    sc_improve_stats improve;
    char tetgen_command[256];
    int fitted; /* the skeleton was fitted into the body */
    sc_fit_info fit;
    int fixed_fitted; /* fixed-node boxes sized to the body */
} sc_prep_report;

int sc_prep_run(const sc_prep_opts *o, sc_model *out, sc_trimesh *envelope, sc_prep_report *rep, sc_err *err);

#endif

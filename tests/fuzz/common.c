#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../cmd/common/environment.h"
#include "common.h"
#include "core/log.h"
#include "core/mathx.h"
#include "io/h5.h"

void sc_fuzz_init(void)
{
    static int done;
    if (done) return;
    done = 1;
    sc_log_set_level(SC_LOG_QUIET);
    sc_environment_apply(); /* as the tools; the guard is set below */
    /* The HDF5 guard (a fork per read, ~250 ms in a sanitized process) is off while fuzzing, so
       that libhdf5's own crashes surface as findings at full speed; SOFTCON_FUZZ_GUARD=1
       replays inputs the way the tools read them (the triage of scripts/fuzz.sh), with a time limit of
       SOFTCON_FUZZ_GUARD_SECONDS (default 5). */
    const char *g = getenv("SOFTCON_FUZZ_GUARD"), *limit = getenv("SOFTCON_FUZZ_GUARD_SECONDS");
    double seconds = limit ? atof(limit) : 0;
    sc_h5_guard_config(g && !strcmp(g, "1"), seconds > 0 ? seconds : 5);
}

void sc_fuzz_violation(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: reader contract violated: %s\n", file, line, what);
    abort();
}

const sc_model *sc_fuzz_model(void)
{
    static sc_model m;
    static char names[16][SC_NAME_LEN] = {"pelvis", "spine", "neck", "head", "l_upperarm", "l_forearm", "l_hand", "r_upperarm",
                                          "r_forearm", "r_hand", "l_thigh", "l_shin", "l_foot", "r_thigh", "r_shin", "r_foot"};
    static int parent[16] = {-1, 0, 1, 2, 1, 4, 5, 1, 7, 8, 0, 10, 11, 0, 13, 14};
    static int type[16] = {0, 1, 1, 1, 1, 2, 1, 1, 2, 1, 1, 2, 1, 1, 2, 1};
    static double axis[48];
    if (!m.nbones) {
        for (int b = 0; b < 16; b++) axis[3 * b] = 1;
        m.nbones = 16;
        m.bone_name = names;
        m.parent = parent;
        m.joint_type = type;
        m.hinge_axis = axis;
    }
    return &m;
}

static void tet_geometry(const double *x, const int *t, double *vol, double *bm_inv)
{
    sc_vec3 a = sc_v3_load(x + 3 * t[0]);
    sc_mat3 dm = sc_m3_from_cols(sc_v3_sub(sc_v3_load(x + 3 * t[1]), a), sc_v3_sub(sc_v3_load(x + 3 * t[2]), a),
                                 sc_v3_sub(sc_v3_load(x + 3 * t[3]), a));
    *vol = sc_m3_det(dm) / 6;
    sc_mat3 inv;
    sc_m3_inverse(dm, &inv);
    memcpy(bm_inv, &inv, sizeof inv);
}

void sc_fuzz_tiny_character(sc_model *out, int skinned)
{
    static char names[2][SC_NAME_LEN] = {"pelvis", "spine"};
    static int parent[2] = {-1, 0}, type[2] = {0, 1};
    static double joint_pos[6] = {0, 0.9, 0, 0, 1.1, 0}, bone_end[6] = {0, 1.1, 0, 0, 1.4, 0}, axis[6] = {1, 0, 0, 1, 0, 0};
    static double lo[6] = {1, 1, 1, 1, 1, 1}, hi[6] = {-1, -1, -1, -1, -1, -1}, kp[2] = {0, 300}, kd[2] = {0, 30}, lim[2] = {0, 200};
    static double mass[2] = {1.5, 1.0}, com[6] = {0, 1.0, 0, 0, 1.25, 0}, inertia[18] = {0};
    for (int b = 0; b < 2; b++) inertia[9 * b] = inertia[9 * b + 4] = inertia[9 * b + 8] = 0.02;
    static double x[15] = {0, 0.9, 0, 0.2, 0.9, 0, 0, 0.9, 0.2, 0, 1.3, 0, 0.05, 0.5, 0.05};
    static int tets[8] = {0, 2, 1, 3, 0, 1, 2, 4};
    static double vol[2], bm[18], node_mass[5] = {0.5, 0.4, 0.4, 0.3, 0.3};
    tet_geometry(x, tets, &vol[0], bm);
    tet_geometry(x, tets + 4, &vol[1], bm + 9);
    static int node_bone[5] = {0, -1, -1, 1, -1}, fixed_node[2] = {0, 3}, fixed_bone[2] = {0, 1};
    static double fixed_local[6] = {0, 0, 0, 0, 0.2, 0};
    static int faces[12] = {0, 2, 1, 0, 1, 3, 1, 2, 3, 2, 0, 3}, surf_tet[4] = {0, 0, 0, 0};
    static double bary[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    static int skin_bone[10] = {0, -1, 0, 1, 0, 1, 1, -1, 0, -1};
    static double skin_w[10] = {1, 0, 0.7, 0.3, 0.6, 0.4, 1, 0, 1, 0};
    sc_model m = {0};
    m.nbones = 2;
    m.bone_name = names;
    m.parent = parent;
    m.joint_type = type;
    m.joint_pos = joint_pos;
    m.bone_end = bone_end;
    m.hinge_axis = axis;
    m.joint_lo = lo;
    m.joint_hi = hi;
    m.kp = kp;
    m.kd = kd;
    m.torque_limit = lim;
    m.bone_mass = mass;
    m.bone_com = com;
    m.bone_inertia = inertia;
    m.nnodes = 5;
    m.ntets = 2;
    m.rest_pos = x;
    m.node_mass = node_mass;
    m.tets = tets;
    m.tet_volume = vol;
    m.bm_inv = bm;
    m.nfixed = 2;
    m.fixed_node = fixed_node;
    m.fixed_bone = fixed_bone;
    m.fixed_local = fixed_local;
    m.node_bone = node_bone;
    m.nsurf_verts = 4;
    m.nsurf_tris = 4;
    m.surf_rest = x;
    m.surf_tris = faces;
    m.surf_tet = surf_tet;
    m.surf_bary = bary;
    m.skin_k = skinned ? 2 : 0;
    m.skin_bone = skin_bone;
    m.skin_w = skin_w;
    m.density = 1000;
    m.youngs = 5e4;
    m.poisson = 0.4;
    *out = m;
}

/* Writes the HDF5 seed corpora of the fuzz harnesses (tests/fuzz/corpus/): a tiny character
 * (2 bones, 5 nodes, 2 tets, skinned), a 4-sample reference and a bare trajectory file, all
 * through softcon's own writers so that they are exactly what the tools write, only small
 * (small inputs fuzz faster). Run by `make fuzz-seeds`; the outputs are committed.
 * Usage: fuzz_seeds CORPUS_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "control/reference.h"
#include "core/mathx.h"
#include "io/character.h"
#include "io/h5.h"

static int die(const sc_err *e)
{
    fprintf(stderr, "fuzz_seeds: %s\n", e->msg);
    return 1;
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

static int write_character(const char *path, int skinned, sc_err *err)
{
    static char names[2][SC_NAME_LEN] = {"pelvis", "spine"};
    int parent[2] = {-1, 0}, type[2] = {0, 1};
    double joint_pos[6] = {0, 0.9, 0, 0, 1.1, 0}, bone_end[6] = {0, 1.1, 0, 0, 1.4, 0}, axis[6] = {1, 0, 0, 1, 0, 0};
    double lo[6] = {1, 1, 1, 1, 1, 1}, hi[6] = {-1, -1, -1, -1, -1, -1}, kp[2] = {0, 300}, kd[2] = {0, 30}, lim[2] = {0, 200};
    double mass[2] = {1.5, 1.0}, com[6] = {0, 1.0, 0, 0, 1.25, 0}, inertia[18] = {0};
    for (int b = 0; b < 2; b++) inertia[9 * b] = inertia[9 * b + 4] = inertia[9 * b + 8] = 0.02;
    double x[15] = {0, 0.9, 0, 0.2, 0.9, 0, 0, 0.9, 0.2, 0, 1.3, 0, 0.05, 0.5, 0.05};
    int tets[8] = {0, 2, 1, 3, 0, 1, 2, 4};
    double vol[2], bm[18], node_mass[5] = {0.5, 0.4, 0.4, 0.3, 0.3};
    tet_geometry(x, tets, &vol[0], bm);
    tet_geometry(x, tets + 4, &vol[1], bm + 9);
    int node_bone[5] = {0, -1, -1, 1, -1}, fixed_node[2] = {0, 3}, fixed_bone[2] = {0, 1};
    double fixed_local[6] = {0, 0, 0, 0, 0.2, 0};
    int faces[12] = {0, 2, 1, 0, 1, 3, 1, 2, 3, 2, 0, 3}, surf_tet[4] = {0, 0, 0, 0};
    double bary[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    int skin_bone[10] = {0, -1, 0, 1, 0, 1, 1, -1, 0, -1};
    double skin_w[10] = {1, 0, 0.7, 0.3, 0.6, 0.4, 1, 0, 1, 0};
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
    sc_h5 *f;
    char *argv[] = {"fuzz_seeds"};
    int rc = sc_h5_create(path, &f, err);
    if (rc) return rc;
    if ((rc = sc_h5_provenance(f, SC_CHARACTER_SCHEMA, 1, argv, "seed: tiny\n", err)) || (rc = sc_character_write(f, &m, err))) {
        sc_h5_abort(f);
        return rc;
    }
    return sc_h5_commit(f, err);
}

/* bare 0: everything sc_reference_write writes; 1: a trajectory (time, names, targets); 2: a
   reference with only the datasets its reader requires */
static int write_reference(const char *path, int bare, sc_err *err)
{
    sc_reference r;
    int rc = sc_reference_alloc(&r, 4, 2, err);
    if (rc) return rc;
    snprintf(r.names[0], SC_NAME_LEN, "pelvis");
    snprintf(r.names[1], SC_NAME_LEN, "spine");
    r.dt = 0.0005;
    for (int k = 0; k < 4; k++) {
        r.time[k] = k * r.dt;
        r.root_pos[3 * k + 1] = 0.9;
        r.com[3 * k + 1] = 1.0;
        for (int j = 0; j < 2; j++) {
            double a = 0.01 * k * (j + 1);
            double q[4] = {cos(a / 2), sin(a / 2), 0, 0};
            memcpy(r.local_quat + 4 * (2 * k + j), q, sizeof q);
            memcpy(r.target_quat + 4 * (2 * k + j), q, sizeof q);
            memcpy(r.bone_quat + 4 * (2 * k + j), q, sizeof q);
            r.contact_flag[2 * k + j] = j == 0;
            r.contact_height[2 * k + j] = 0.1 * j;
        }
    }
    sc_h5 *f;
    char *argv[] = {"fuzz_seeds"};
    if ((rc = sc_h5_create(path, &f, err))) goto done;
    if ((rc = sc_h5_provenance(f, SC_REFERENCE_SCHEMA, 1, argv, NULL, err))) goto fail;
    if (bare) {
        /* what the trajectory reader needs and nothing else */
        const char *names[2] = {"pelvis", "spine"};
        size_t d1[1] = {4}, d3[3] = {4, 2, 4}, d2[2] = {4, 3};
        if ((rc = sc_h5_write_f64(f, "/time", 1, d1, r.time, "s", "sample times", err)) ||
            (rc = sc_h5_write_strings(f, "/bones/names", 2, names, "bone names", err)) ||
            (rc = sc_h5_write_f64(f, "/targets/local_quat", 3, d3, r.target_quat, "1", "PD targets", err)) ||
            (bare == 2 && (rc = sc_h5_write_f64(f, "/reference/root_pos", 2, d2, r.root_pos, "m", "root", err))) ||
            (bare == 2 && (rc = sc_h5_write_f64(f, "/reference/local_quat", 3, d3, r.local_quat, "1", "poses", err))))
            goto fail;
    } else if ((rc = sc_reference_write(f, &r, err))) {
        goto fail;
    }
    rc = sc_h5_commit(f, err);
    goto done;
fail:
    sc_h5_abort(f);
done:
    sc_reference_free(&r);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_seeds CORPUS_DIR\n");
        return 1;
    }
    char p[4096];
    sc_err err;
    snprintf(p, sizeof p, "%s/fuzz_character/tiny_skinned.h5", argv[1]);
    if (write_character(p, 1, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_character/tiny_unskinned.h5", argv[1]);
    if (write_character(p, 0, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_reference/tiny_reference.h5", argv[1]);
    if (write_reference(p, 0, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_reference/minimal_reference.h5", argv[1]);
    if (write_reference(p, 2, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_trajectory/tiny_reference.h5", argv[1]);
    if (write_reference(p, 0, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_trajectory/bare_trajectory.h5", argv[1]);
    if (write_reference(p, 1, &err)) return die(&err);
    /* the readers accept what they wrote */
    sc_model m;
    sc_reference r;
    snprintf(p, sizeof p, "%s/fuzz_character/tiny_skinned.h5", argv[1]);
    if (sc_character_read(p, &m, 1, &err)) return die(&err);
    sc_model_free(&m);
    snprintf(p, sizeof p, "%s/fuzz_reference/tiny_reference.h5", argv[1]);
    if (sc_reference_read(p, &r, &err)) return die(&err);
    sc_reference_free(&r);
    return 0;
}

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/hash.h"
#include "core/mathx.h"
#include "model/model.h"

/* Every array of the model with its element size and count: one table serves free, clone and
 * hash, so a new field is added in one place. */
typedef struct {
    void **ptr;
    size_t elem, count;
} model_array;

static int model_arrays(const sc_model *cm, model_array *a)
{
    sc_model *m = (sc_model *)cm;
    size_t nb = (size_t)(m->nbones > 0 ? m->nbones : 0), nn = (size_t)(m->nnodes > 0 ? m->nnodes : 0);
    size_t nt = (size_t)(m->ntets > 0 ? m->ntets : 0), nf = (size_t)(m->nfixed > 0 ? m->nfixed : 0);
    size_t nv = (size_t)(m->nsurf_verts > 0 ? m->nsurf_verts : 0), ntri = (size_t)(m->nsurf_tris > 0 ? m->nsurf_tris : 0);
    size_t nk = nn * (size_t)(m->skin_k > 0 ? m->skin_k : 0);
    int n = 0;
#define A(field, type, cnt) a[n++] = (model_array){(void **)&m->field, sizeof(type), (cnt)}
    A(bone_name, char[SC_NAME_LEN], nb);
    A(parent, int, nb);
    A(joint_type, int, nb);
    A(joint_pos, double, 3 * nb);
    A(bone_end, double, 3 * nb);
    A(hinge_axis, double, 3 * nb);
    A(joint_lo, double, 3 * nb);
    A(joint_hi, double, 3 * nb);
    A(kp, double, nb);
    A(kd, double, nb);
    A(torque_limit, double, nb);
    A(bone_mass, double, nb);
    A(bone_com, double, 3 * nb);
    A(bone_inertia, double, 9 * nb);
    A(rest_pos, double, 3 * nn);
    A(node_mass, double, nn);
    A(tets, int, 4 * nt);
    A(tet_volume, double, nt);
    A(bm_inv, double, 9 * nt);
    A(fixed_node, int, nf);
    A(fixed_bone, int, nf);
    A(fixed_local, double, 3 * nf);
    A(node_bone, int, nn);
    A(surf_rest, double, 3 * nv);
    A(surf_tris, int, 3 * ntri);
    A(surf_tet, int, nv);
    A(surf_bary, double, 4 * nv);
    A(skin_bone, int, nk);
    A(skin_w, double, nk);
#undef A
    return n;
}
#define SC_MODEL_MAX_ARRAYS 32

void sc_model_free(sc_model *m)
{
    model_array a[SC_MODEL_MAX_ARRAYS];
    int n = model_arrays(m, a);
    for (int i = 0; i < n; i++) free(*a[i].ptr);
    memset(m, 0, sizeof *m);
}

int sc_model_clone(const sc_model *src, sc_model *dst, sc_err *err)
{
    *dst = *src;
    model_array a[SC_MODEL_MAX_ARRAYS];
    int n = model_arrays(dst, a), failed = 0;
    for (int i = 0; i < n; i++) {
        const void *from = *a[i].ptr;
        *a[i].ptr = NULL;
        if (!from) continue;
        size_t bytes = a[i].elem * (a[i].count ? a[i].count : 1);
        void *to = malloc(bytes);
        if (!to) {
            failed = 1;
            continue;
        }
        if (a[i].count) memcpy(to, from, bytes);
        *a[i].ptr = to;
    }
    if (failed) {
        sc_model_free(dst);
        return sc_fail(err, SC_EIO, "out of memory copying the character model");
    }
    return SC_OK;
}

uint64_t sc_model_hash(const sc_model *m)
{
    uint64_t h = SC_HASH_INIT;
    int dims[] = {m->nbones, m->nnodes, m->ntets, m->nfixed, m->nsurf_verts, m->nsurf_tris, m->skin_k};
    h = sc_hash_bytes(h, dims, sizeof dims);
    h = sc_hash_f64(sc_hash_f64(sc_hash_f64(h, m->density), m->youngs), m->poisson);
    model_array a[SC_MODEL_MAX_ARRAYS];
    int n = model_arrays(m, a);
    for (int i = 0; i < n; i++) {
        h = sc_hash_i64(h, *a[i].ptr != NULL);
        if (!*a[i].ptr) continue;
        if (a[i].ptr == (void **)&m->bone_name) { /* the bytes after a name's end are not part of it */
            for (int b = 0; b < m->nbones; b++) h = sc_hash_bytes(h, m->bone_name[b], strnlen(m->bone_name[b], SC_NAME_LEN) + 1);
        } else {
            h = sc_hash_bytes(h, *a[i].ptr, a[i].elem * a[i].count);
        }
    }
    return h;
}

int sc_model_bone_index(const sc_model *m, const char *name)
{
    for (int b = 0; b < m->nbones; b++)
        if (!strcmp(m->bone_name[b], name)) return b;
    return -1;
}

int sc_model_leaf_bones(const sc_model *m, int *leaves)
{
    int n = 0;
    for (int b = 0; b < m->nbones; b++) {
        int has_child = 0;
        for (int c = b + 1; c < m->nbones && !has_child; c++) has_child = m->parent[c] == b;
        if (!has_child) leaves[n++] = b;
    }
    return n;
}

int sc_model_nearest_bone(const sc_model *m, const double p[3])
{
    int best = 0;
    double near = INFINITY;
    for (int b = 0; b < m->nbones; b++) {
        const double d = sc_point_segment_dist2(sc_v3_load(p), sc_v3_load(m->joint_pos + 3 * b), sc_v3_load(m->bone_end + 3 * b));
        if (d < near) {
            near = d;
            best = b;
        }
    }
    return best;
}

void sc_model_surface_bones(const sc_model *m, int *out)
{
    double *w = calloc((size_t)(m->nbones > 0 ? m->nbones : 1), sizeof(double));
    for (int i = 0; i < m->nsurf_verts; i++) {
        int best = 0;
        if (m->skin_k > 0 && w) {
            memset(w, 0, sizeof(double) * (size_t)m->nbones);
            const int *tet = m->tets + 4 * m->surf_tet[i];
            for (int c = 0; c < 4; c++)
                for (int s = 0; s < m->skin_k; s++) {
                    int b = m->skin_bone[(size_t)tet[c] * m->skin_k + s];
                    if (b >= 0) w[b] += m->surf_bary[4 * i + c] * m->skin_w[(size_t)tet[c] * m->skin_k + s];
                }
            for (int b = 1; b < m->nbones; b++)
                if (w[b] > w[best]) best = b;
        } else {
            best = sc_model_nearest_bone(m, m->surf_rest + 3 * i);
        }
        out[i] = best;
    }
    free(w);
}

int sc_model_node_carrier(const sc_model *m, int i)
{
    if (m->node_bone[i] >= 0) return m->node_bone[i];
    int best = -1;
    double most = 0;
    for (int k = 0; k < m->skin_k; k++) {
        const int b = m->skin_bone[(size_t)i * m->skin_k + k];
        const double w = m->skin_w[(size_t)i * m->skin_k + k];
        if (b >= 0 && w > most) {
            most = w;
            best = b;
        }
    }
    return best >= 0 ? best : sc_model_nearest_bone(m, m->rest_pos + 3 * i);
}

/* the shortest rotation taking unit a to unit b (antiparallel never occurs for a limb) */
static sc_quat rotation_between(sc_vec3 a, sc_vec3 b)
{
    const sc_vec3 axis = sc_v3_cross(a, b);
    const double s = sc_v3_norm(axis), c = sc_v3_dot(a, b);
    if (s < 1e-12) return sc_q_identity();
    return sc_q_axis_angle(sc_v3_scale(axis, 1 / s), atan2(s, c));
}

void sc_model_stand_pose(const sc_model *m, const int thigh[2], const int foot[2], const int arm[2], const double left[3], double arm_down,
                         sc_quat *out)
{
    const sc_vec3 up = sc_v3(0, 1, 0), l = sc_v3_load(left);
    for (int b = 0; b < m->nbones; b++) out[b] = sc_q_identity();
    for (int k = 0; k < 2; k++) {
        const int t = thigh[k], f = foot[k];
        const sc_vec3 leg = sc_v3_normalize(sc_v3_sub(sc_v3_load(m->bone_end + 3 * m->parent[f]), sc_v3_load(m->joint_pos + 3 * t))); /* the ankle */
        out[t] = rotation_between(leg, sc_v3_scale(up, -1));
        out[f] = sc_q_conj(out[t]); /* level again, the knee straight */
        const int a = arm[k];
        if (a < 0) continue;
        const sc_vec3 dir = sc_v3_normalize(sc_v3_sub(sc_v3_load(m->bone_end + 3 * a), sc_v3_load(m->joint_pos + 3 * a)));
        const double out_sign = sc_v3_dot(dir, l) >= 0 ? 1 : -1;
        const sc_vec3 hang = sc_v3_add(sc_v3_scale(up, -cos(arm_down)), sc_v3_scale(l, out_sign * sin(arm_down)));
        out[a] = rotation_between(dir, hang);
    }
}

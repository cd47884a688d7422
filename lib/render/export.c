#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include "core/cleanup.h"
#include "io/paths.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io/bvh.h"
#include "io/h5.h"
#include "io/obj.h"
#include "store/xdmf.h"
#include "render/export.h"

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* ---- XDMF ---- */

static int write_frames_h5(sc_anim *a, const double *times, int n, const char *h5_path, int argc, char *const *argv,
                           sc_err *err)
{
    sc_h5 *f;
    int rc = sc_h5_create(h5_path, &f, err);
    if (rc) return rc;
    sc_anim_pose p;
    if ((rc = sc_anim_pose_alloc(a, &p, err))) { sc_h5_abort(f); return rc; }
    int nb = a->nbones, nseg = 0;
    int *seg = malloc((size_t)(nb > 1 ? nb - 1 : 1) * 2 * sizeof(int));
    double *height = malloc((size_t)a->nsv * sizeof(double) + 1), *joints = malloc((size_t)nb * 3 * sizeof(double));
    if (!seg || !height || !joints) rc = sc_fail(err, SC_EIO, "out of memory");
    for (int b = 1; b < nb && !rc; b++) { seg[2 * nseg] = a->parent[b]; seg[2 * nseg + 1] = b; nseg++; }
#define TRY(x) do { if (!rc) rc = (x); } while (0)
    TRY(sc_h5_provenance(f, SC_FRAMES_SCHEMA, argc, argv, NULL, err));
    TRY(sc_h5_attr_str(f, "/", "source", a->path, err));
    TRY(sc_h5_attr_i64(f, "/", "frames", n, err));
    TRY(sc_h5_group(f, "/mesh", "topology shared by every frame", err));
    TRY(sc_h5_write_i32(f, "/mesh/surface_faces", 2, (size_t[]){(size_t)a->nsf, 3}, a->faces, "fine surface triangles", err));
    TRY(sc_h5_write_i32(f, "/mesh/tets", 2, (size_t[]){(size_t)a->ntets, 4}, a->tets, "tet node indices", err));
    TRY(sc_h5_write_i32(f, "/mesh/node_bone", 1, (size_t[]){(size_t)a->nnodes}, a->node_bone, "bone a node is fixed to, -1 free", err));
    if (nseg) TRY(sc_h5_write_i32(f, "/mesh/bone_segments", 2, (size_t[]){(size_t)nseg, 2}, seg, "parent joint, child joint", err));
    const char **names = malloc((size_t)nb * sizeof *names);
    if (!names) rc = sc_fail(err, SC_EIO, "out of memory");
    for (int b = 0; b < nb && !rc; b++) names[b] = a->bone_name[b];
    TRY(sc_h5_write_strings(f, "/mesh/bone_names", (size_t)nb, names, "bone names, in the order of each frame's joints", err));
    free(names);
    TRY(sc_h5_group(f, "/frames", "one group per exported frame (ParaView reads per-frame datasets)", err));
    for (int i = 0; i < n && !rc; i++) {
        char g[64], path[96];
        rc = sc_anim_sample(a, times[i], &p, err);
        sc_xdmf_frame_path(g, sizeof g, i, NULL);
        TRY(sc_h5_group(f, g, NULL, err));
        TRY(sc_h5_attr_f64(f, g, "time", times[i], err));
        for (int v = 0; v < a->nsv && !rc; v++) height[v] = sc_anim_height_above_ground(a, p.surf + 3 * v);
        for (int b = 0; b < nb; b++) sc_v3_store(joints + 3 * b, p.bone[b].p);
        sc_xdmf_frame_path(path, sizeof path, i, "surface");
        TRY(sc_h5_write_f64(f, path, 2, (size_t[]){(size_t)a->nsv, 3}, p.surf, "m", "fine surface vertices", err));
        sc_xdmf_frame_path(path, sizeof path, i, "surface_height");
        TRY(sc_h5_write_f64(f, path, 1, (size_t[]){(size_t)a->nsv}, height, "m", "height of each surface vertex above the ground", err));
        sc_xdmf_frame_path(path, sizeof path, i, "nodes");
        TRY(sc_h5_write_f64(f, path, 2, (size_t[]){(size_t)a->nnodes, 3}, p.nodes, "m", "tet node positions", err));
        sc_xdmf_frame_path(path, sizeof path, i, "joints");
        TRY(sc_h5_write_f64(f, path, 2, (size_t[]){(size_t)nb, 3}, joints, "m", "bone origins (joints)", err));
    }
#undef TRY
    free(seg); free(height); free(joints);
    sc_anim_pose_free(&p);
    if (rc) { sc_h5_abort(f); return rc; }
    return sc_h5_commit(f, err);
}

int sc_export_xdmf(sc_anim *a, const double *times, int n, const char *h5_path, const char *xdmf_path, int argc,
                   char *const *argv, sc_err *err)
{
    if (n < 1) return sc_fail(err, SC_EINPUT, "export: no frames");
    int rc = write_frames_h5(a, times, n, h5_path, argc, argv, err);
    if (rc) return rc;
    const sc_xdmf_field height = {"height", SC_XDMF_NODE, 0, 1, {"surface_height", 1}};
    const sc_xdmf_field fixed_bone = {"fixed_bone", SC_XDMF_NODE, 1, 1, {"/mesh/node_bone", 0}};
    const sc_xdmf_grid grids[3] = {
        {"surface", SC_XDMF_TRIANGLE, a->nsf, a->nsv, {"/mesh/surface_faces", 0}, {"surface", 1}, &height, 1},
        {"tetmesh", SC_XDMF_TETRAHEDRON, a->ntets, a->nnodes, {"/mesh/tets", 0}, {"nodes", 1}, &fixed_bone, 1},
        {"skeleton", SC_XDMF_SEGMENT, a->nbones - 1, a->nbones, {"/mesh/bone_segments", 0}, {"joints", 1}, NULL, 0},
    };
    rc = sc_xdmf_write(xdmf_path, base_name(h5_path), "frames", grids, a->nbones > 1 ? 3 : 2, times, n, err);
    if (rc) unlink(h5_path);
    return rc;
}

/* ---- OBJ + PC2 ---- */

int sc_export_obj(sc_anim *a, double t, const char *obj_path, sc_err *err)
{
    sc_anim_pose p;
    int rc = sc_anim_pose_alloc(a, &p, err);
    if (rc) return rc;
    rc = sc_anim_sample(a, t, &p, err);
    if (!rc) {
        sc_trimesh m = {a->nsv, a->nsf, p.surf, a->faces};
        rc = sc_obj_write(obj_path, &m, err);
    }
    sc_anim_pose_free(&p);
    return rc;
}

static void put_le32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)v; b[1] = (unsigned char)(v >> 8); b[2] = (unsigned char)(v >> 16); b[3] = (unsigned char)(v >> 24);
}

static void put_f32(unsigned char *b, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put_le32(b, u);
}

int sc_export_pc2(sc_anim *a, const double *times, int n, const char *pc2_path, sc_err *err)
{
    if (n < 1) return sc_fail(err, SC_EINPUT, "export: no frames");
    char tmp[4200];
    sc_anim_pose p;
    int rc = sc_anim_pose_alloc(a, &p, err);
    if (rc) return rc;
    unsigned char *buf = malloc((size_t)a->nsv * 12 + 32);
    FILE *f = buf ? sc_file_open_tmp(pc2_path, "wb", tmp, sizeof tmp, err) : NULL;
    if (!f) {
        rc = buf ? err->code : sc_fail(err, SC_EIO, "out of memory");
        free(buf);
        sc_anim_pose_free(&p);
        return rc;
    }
    unsigned char head[32];
    memcpy(head, "POINTCACHE2", 12); /* with its terminating NUL */
    put_le32(head + 12, 1);
    put_le32(head + 16, (uint32_t)a->nsv);
    put_f32(head + 20, 0.0f);
    put_f32(head + 24, 1.0f);
    put_le32(head + 28, (uint32_t)n);
    int bad = fwrite(head, 1, 32, f) != 32;
    for (int i = 0; i < n && !rc && !bad; i++) {
        rc = sc_anim_sample(a, times[i], &p, err);
        for (int k = 0; !rc && k < 3 * a->nsv; k++) put_f32(buf + 4 * k, (float)p.surf[k]);
        if (!rc) bad = fwrite(buf, 12, (size_t)a->nsv, f) != (size_t)a->nsv;
    }
    free(buf);
    sc_anim_pose_free(&p);
    if (rc) {
        fclose(f);
        unlink(tmp);
        sc_cleanup_forget(tmp);
        return rc;
    }
    return sc_file_commit(f, tmp, pc2_path, err); /* a failed fwrite left its error on the stream */
}

/* ---- BVH ---- */

void sc_quat_to_euler_zyx_deg(sc_quat q, double e[3])
{
    /* R = Rz(a) Ry(b) Rx(c): R[2][0] = -sin b, R[1][0] / R[0][0] = tan a, R[2][1] / R[2][2] = tan c */
    sc_mat3 r = sc_q_to_m3(sc_q_normalize(q));
    double cb = hypot(r.m[0][0], r.m[1][0]);
    double a, b = atan2(-r.m[2][0], cb), c;
    if (cb > 1e-12) {
        a = atan2(r.m[1][0], r.m[0][0]);
        c = atan2(r.m[2][1], r.m[2][2]);
    } else { /* gimbal lock: only a - c (or a + c) is defined; put it all in c */
        a = 0;
        c = atan2(-r.m[1][2], r.m[1][1]);
    }
    e[0] = a * 180 / SC_PI;
    e[1] = b * 180 / SC_PI;
    e[2] = c * 180 / SC_PI;
}

int sc_export_bvh(sc_anim *a, const double *times, int n, const char *bvh_path, sc_err *err)
{
    if (n < 1) return sc_fail(err, SC_EINPUT, "export: no frames");
    int nb = a->nbones;
    sc_bvh bvh = {0};
    int *order = malloc((size_t)nb * sizeof(int)), *stack = malloc((size_t)nb * sizeof(int)), *bvh_of = malloc((size_t)nb * sizeof(int));
    bvh.joints = calloc((size_t)(2 * nb), sizeof *bvh.joints);
    int rc = SC_OK;
    if (!order || !stack || !bvh_of || !bvh.joints) rc = sc_fail(err, SC_EIO, "out of memory");
    /* depth-first pre-order from the root; children in index order */
    int norder = 0, sp = 0;
    if (!rc) stack[sp++] = 0;
    while (sp > 0) {
        int b = stack[--sp];
        order[norder++] = b;
        for (int c = nb - 1; c > b; c--)
            if (a->parent[c] == b) stack[sp++] = c;
    }
    if (!rc && norder != nb) rc = sc_fail(err, SC_EINPUT, "%s: the skeleton is not one tree rooted at bone 0", a->path);
    int nch = 0;
    for (int i = 0; i < norder && !rc; i++) {
        int b = order[i], has_child = 0;
        for (int c = b + 1; c < nb; c++) has_child |= a->parent[c] == b;
        sc_bvh_joint *j = &bvh.joints[bvh.njoints];
        bvh_of[b] = bvh.njoints++;
        snprintf(j->name, sizeof j->name, "%s", a->bone_name[b]);
        j->parent = a->parent[b] < 0 ? -1 : bvh_of[a->parent[b]];
        sc_vec3 jb = sc_v3_load(a->joint_rest + 3 * b);
        /* the root's OFFSET is 0 and its position channels are absolute: readers that add the
           offset (softcon's) and readers that ignore it (Blender's importer) then agree */
        j->offset = a->parent[b] < 0 ? sc_v3(0, 0, 0) : sc_v3_sub(jb, sc_v3_load(a->joint_rest + 3 * a->parent[b]));
        j->channel_offset = nch;
        static const int root_ch[6] = {SC_BVH_XPOS, SC_BVH_YPOS, SC_BVH_ZPOS, SC_BVH_ZROT, SC_BVH_YROT, SC_BVH_XROT};
        int root = a->parent[b] < 0;
        j->nchannels = root ? 6 : 3;
        memcpy(j->channel, root ? root_ch : root_ch + 3, (size_t)j->nchannels * sizeof(int));
        nch += j->nchannels;
        if (!has_child) {
            sc_bvh_joint *e = &bvh.joints[bvh.njoints++];
            snprintf(e->name, sizeof e->name, "%.58s_End", a->bone_name[b]);
            e->end_site = 1;
            e->parent = bvh_of[b];
            e->offset = sc_v3_sub(sc_v3_load(a->tip_rest + 3 * b), jb);
            e->channel_offset = nch;
        }
    }
    bvh.nchannels = nch;
    bvh.nframes = n;
    bvh.frame_time = n > 1 && times[1] > times[0] ? times[1] - times[0] : 1.0 / 30;
    if (!rc && !(bvh.frames = malloc((size_t)n * nch * sizeof(double)))) rc = sc_fail(err, SC_EIO, "out of memory");
    sc_anim_pose p = {0};
    if (!rc) rc = sc_anim_pose_alloc(a, &p, err);
    for (int f = 0; f < n && !rc; f++) {
        rc = sc_anim_sample(a, times[f], &p, err);
        double *row = bvh.frames + (size_t)f * nch, *prev = f ? row - nch : NULL;
        for (int b = 0; b < nb && !rc; b++) {
            const sc_bvh_joint *j = &bvh.joints[bvh_of[b]];
            double *v = row + j->channel_offset, e[3];
            if (j->nchannels == 6) { /* the root's position (its offset is 0) */
                v[0] = p.bone[b].p.x; v[1] = p.bone[b].p.y; v[2] = p.bone[b].p.z;
                v += 3;
            }
            sc_quat q = sc_anim_local_rotation(&p, a, b);
            sc_quat_to_euler_zyx_deg(q, e);
            for (int k = 0; k < 3; k++) {
                double *pv = prev ? prev + (v - row) + k : NULL;
                if (!isfinite(e[k])) e[k] = pv ? *pv : 0; /* a failed simulation's last frames */
                if (pv) e[k] += 360 * round((*pv - e[k]) / 360); /* continuous curves for animation tools */
                v[k] = e[k];
            }
            if (j->nchannels == 6)
                for (int k = -3; k < 0; k++)
                    if (!isfinite(v[k])) v[k] = prev ? prev[(v - row) + k] : 0;
        }
    }
    sc_anim_pose_free(&p);
    if (!rc) rc = sc_bvh_write(bvh_path, &bvh, err);
    free(order); free(stack); free(bvh_of);
    sc_bvh_free(&bvh);
    return rc;
}

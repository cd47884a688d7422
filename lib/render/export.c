/* Exports of an animation for other viewers: ParaView (store/frames), OBJ + PC2 (Blender), BVH. */
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
#include "io/obj.h"
#include "store/frames.h"
#include "render/export.h"

/* ---- XDMF ---- */

/* The frames store/frames writes, sampled from the animation. */
typedef struct frame_sampler {
    sc_anim *a;
    sc_anim_pose p;
    double *height, *joints; /* [nsv], [nbones*3] */
} frame_sampler;

static int sample_frame(void *ctx, double t, sc_frames_pose *out, sc_err *err)
{
    frame_sampler *s = ctx;
    sc_anim *a = s->a;
    int rc = sc_anim_sample(a, t, &s->p, err);
    if (rc) return rc;
    for (int v = 0; v < a->nsv; v++) s->height[v] = sc_anim_height_above_ground(a, s->p.surf + 3 * v);
    for (int b = 0; b < a->nbones; b++) sc_v3_store(s->joints + 3 * b, s->p.bone[b].p);
    *out = (sc_frames_pose){s->p.surf, s->height, s->p.nodes, s->joints};
    return SC_OK;
}

int sc_export_xdmf(sc_anim *a, const double *times, int n, const char *h5_path, const char *xdmf_path, int argc, char *const *argv, sc_err *err)
{
    if (n < 1) return sc_fail(err, SC_EINPUT, "export: no frames");
    frame_sampler s = {.a = a};
    int rc = sc_anim_pose_alloc(a, &s.p, err);
    if (rc) return rc;
    int nb = a->nbones;
    const char **names = malloc((size_t)nb * sizeof *names);
    s.height = malloc((size_t)a->nsv * sizeof(double) + 1);
    s.joints = malloc((size_t)nb * 3 * sizeof(double));
    if (!names || !s.height || !s.joints) rc = sc_fail(err, SC_EIO, "out of memory");
    for (int b = 0; b < nb && !rc; b++) names[b] = a->bone_name[b];
    const sc_frames_mesh mesh = {a->path, a->nsf, a->nsv, a->ntets, a->nnodes, nb, a->faces, a->tets, a->node_bone, a->parent, names};
    if (!rc) rc = sc_frames_save(h5_path, xdmf_path, &mesh, times, n, sample_frame, &s, argc, argv, err);
    free(names);
    free(s.height);
    free(s.joints);
    sc_anim_pose_free(&s.p);
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
    b[0] = (unsigned char)v;
    b[1] = (unsigned char)(v >> 8);
    b[2] = (unsigned char)(v >> 16);
    b[3] = (unsigned char)(v >> 24);
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
                v[0] = p.bone[b].p.x;
                v[1] = p.bone[b].p.y;
                v[2] = p.bone[b].p.z;
                v += 3;
            }
            sc_quat q = sc_anim_local_rotation(&p, a, b);
            sc_quat_to_euler_zyx_deg(q, e);
            for (int k = 0; k < 3; k++) {
                double *pv = prev ? prev + (v - row) + k : NULL;
                if (!isfinite(e[k])) e[k] = pv ? *pv : 0;        /* a failed simulation's last frames */
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
    free(order);
    free(stack);
    free(bvh_of);
    sc_bvh_free(&bvh);
    return rc;
}

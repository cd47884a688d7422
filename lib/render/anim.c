/* Reading sim.h5 / character.h5 for drawing and exporting. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "store/character.h"
#include "store/openloop.h"
#include "store/reference.h"
#include "render/anim.h"
#include "settings/render.h"

static sc_quat quat_at(const sc_anim *a, int k, int b)
{
    const double *q = a->bone_quat + 4 * ((size_t)k * a->nbones + b);
    sc_quat r = {q[0], q[1], q[2], q[3]};
    return r;
}

static sc_vec3 pos_at(const sc_anim *a, int k, int b) { return sc_v3_load(a->bone_pos + 3 * ((size_t)k * a->nbones + b)); }

void sc_anim_close(sc_anim *a)
{
    if (!a) return;
    sc_sim_close(a->file);
    void *arrays[] = {a->time,
                      a->bone_name,
                      a->parent,
                      a->joint_rest,
                      a->tip_rest,
                      a->bone_pos,
                      a->bone_quat,
                      a->tets,
                      a->rest_pos,
                      a->node_bone,
                      a->faces,
                      a->surf_tet,
                      a->surf_bary,
                      a->surf_rest,
                      a->com,
                      a->contact_force,
                      a->push_force,
                      a->rigid_bone,
                      a->cache[0],
                      a->cache[1],
                      a->ref_time,
                      a->ghost_time,
                      a->ghost_pos,
                      a->ghost_quat,
                      a->tracking_error,
                      a->muscle_point_tet,
                      a->muscle_seg,
                      a->muscle_point_bary,
                      a->muscle_rest_len,
                      a->muscle_ld};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) free(arrays[i]);
    memset(a, 0, sizeof *a);
}

/* ---- shared derived data ---- */

static int finish(sc_anim *a, sc_err *err)
{
    int nb = a->nbones;
    /* leaf tips for bones without children come from their fixed nodes: the far end of the
       nodes along the joint -> node-centroid direction */
    int *nchild = calloc((size_t)nb, sizeof *nchild);
    if (!nchild) return sc_fail(err, SC_EIO, "out of memory");
    for (int b = 1; b < nb; b++) nchild[a->parent[b]]++;
    for (int b = 0; b < nb; b++) {
        if (nchild[b] || !a->is_sim) continue;
        sc_vec3 j = sc_v3_load(a->joint_rest + 3 * b), c = sc_v3(0, 0, 0);
        int n = 0;
        for (int i = 0; i < a->nnodes; i++)
            if (a->node_bone[i] == b) {
                c = sc_v3_add(c, sc_v3_load(a->rest_pos + 3 * i));
                n++;
            }
        sc_vec3 dir = n ? sc_v3_sub(sc_v3_scale(c, 1.0 / n), j) : sc_v3(0, 0, 0);
        if (sc_v3_norm(dir) < 1e-9 && a->parent[b] >= 0) dir = sc_v3_sub(j, sc_v3_load(a->joint_rest + 3 * a->parent[b]));
        dir = sc_v3_normalize(dir);
        double reach = 0;
        for (int i = 0; i < a->nnodes; i++)
            if (a->node_bone[i] == b) reach = fmax(reach, sc_v3_dot(sc_v3_sub(sc_v3_load(a->rest_pos + 3 * i), j), dir));
        if (reach <= 0) reach = 0.1;
        sc_v3_store(a->tip_rest + 3 * b, sc_v3_axpy(reach, dir, j));
    }
    for (int b = nb - 1; b >= 1 && a->is_sim; b--) /* an inner bone's tip: its first child's joint */
        memcpy(a->tip_rest + 3 * a->parent[b], a->joint_rest + 3 * b, 3 * sizeof(double));
    free(nchild);
    double lo = INFINITY, hi = -INFINITY, xlo = INFINITY, xhi = -INFINITY, zlo = INFINITY, zhi = -INFINITY;
    for (int v = 0; v < a->nsv; v++) {
        lo = fmin(lo, a->surf_rest[3 * v + 1]);
        hi = fmax(hi, a->surf_rest[3 * v + 1]);
        xlo = fmin(xlo, a->surf_rest[3 * v]);
        xhi = fmax(xhi, a->surf_rest[3 * v]);
        zlo = fmin(zlo, a->surf_rest[3 * v + 2]);
        zhi = fmax(zhi, a->surf_rest[3 * v + 2]);
    }
    a->height = hi > lo ? hi - lo : 1.0;
    a->span = xhi > xlo ? hypot(xhi - xlo, zhi - zlo) : 0;
    a->cache_k[0] = a->cache_k[1] = -1;
    for (int s = 0; s < 2; s++)
        if (!(a->cache[s] = malloc((size_t)a->nnodes * 3 * sizeof(double) + 1))) return sc_fail(err, SC_EIO, "out of memory");
    return SC_OK;
}

/* ---- character.h5: one frame, the rest pose ---- */

static int open_character(const char *path, sc_anim *a, sc_err *err)
{
    sc_model m;
    int rc = sc_character_read(path, &m, 0, err);
    if (rc) return rc;
    a->is_sim = 0;
    a->has_nodes = 1;
    a->nframes = 1;
    a->nbones = m.nbones;
    a->bone_name = m.bone_name;
    m.bone_name = NULL;
    a->parent = m.parent;
    m.parent = NULL;
    a->joint_rest = m.joint_pos;
    m.joint_pos = NULL;
    a->tip_rest = m.bone_end;
    m.bone_end = NULL;
    a->nnodes = m.nnodes;
    a->ntets = m.ntets;
    a->nsv = m.nsurf_verts;
    a->nsf = m.nsurf_tris;
    a->tets = m.tets;
    m.tets = NULL;
    a->rest_pos = m.rest_pos;
    m.rest_pos = NULL;
    a->node_bone = m.node_bone;
    m.node_bone = NULL;
    a->faces = m.surf_tris;
    m.surf_tris = NULL;
    a->surf_tet = m.surf_tet;
    m.surf_tet = NULL;
    a->surf_bary = m.surf_bary;
    m.surf_bary = NULL;
    a->surf_rest = m.surf_rest;
    m.surf_rest = NULL;
    int nb = a->nbones;
    a->time = calloc(1, sizeof(double));
    a->bone_pos = malloc((size_t)nb * 3 * sizeof(double));
    a->bone_quat = malloc((size_t)nb * 4 * sizeof(double));
    a->com = calloc(3, sizeof(double));
    a->contact_force = calloc(3, sizeof(double));
    a->push_force = calloc(3, sizeof(double));
    if (!a->time || !a->bone_pos || !a->bone_quat || !a->com || !a->contact_force || !a->push_force) {
        sc_model_free(&m);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    memcpy(a->bone_pos, a->joint_rest, (size_t)nb * 3 * sizeof(double));
    for (int b = 0; b < nb; b++) {
        double *q = a->bone_quat + 4 * b;
        q[0] = 1;
        q[1] = q[2] = q[3] = 0;
    }
    double mass = 0;
    for (int i = 0; i < a->nnodes; i++) {
        for (int d = 0; d < 3; d++) a->com[d] += m.node_mass[i] * a->rest_pos[3 * i + d];
        mass += m.node_mass[i];
    }
    for (int d = 0; d < 3; d++) a->com[d] = mass > 0 ? a->com[d] / mass : 0;
    sc_model_free(&m);
    return finish(a, err);
}

/* ---- sim.h5 ---- */

/* Rest joints from the fixed nodes of frame 0: x = R_b (X - J_b) + p_b for a node on bone b. */
static int rest_joints(sc_anim *a, sc_err *err)
{
    int nb = a->nbones;
    double *rows = NULL;
    if (a->has_nodes) {
        rows = malloc((size_t)a->nnodes * 3 * sizeof(double));
        if (!rows) return sc_fail(err, SC_EIO, "out of memory");
        int rc = sc_sim_read_node_rows(a->file, a->nnodes, 0, 1, rows, err);
        if (rc) {
            free(rows);
            return rc;
        }
    }
    int *cnt = calloc((size_t)nb, sizeof *cnt);
    if (!cnt) {
        free(rows);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (int i = 0; rows && i < a->nnodes; i++) {
        int b = a->node_bone[i];
        if (b < 0) continue;
        sc_vec3 local = sc_q_rotate(sc_q_conj(quat_at(a, 0, b)), sc_v3_sub(sc_v3_load(rows + 3 * i), pos_at(a, 0, b)));
        sc_vec3 j = sc_v3_sub(sc_v3_load(a->rest_pos + 3 * i), local);
        for (int d = 0; d < 3; d++) a->joint_rest[3 * b + d] += sc_v3_get(j, d);
        cnt[b]++;
    }
    for (int b = 0; b < a->nbones; b++) {
        if (cnt[b]) {
            for (int d = 0; d < 3; d++) a->joint_rest[3 * b + d] /= cnt[b];
        } else if (b == 0) { /* no nodes: the root where frame 0 has it */
            sc_v3_store(a->joint_rest, pos_at(a, 0, 0));
        } else { /* the bone offsets are rigid: J_b - J_p = R_p^T (p_b - p_p) in any frame */
            int par = a->parent[b];
            sc_vec3 off = sc_q_rotate(sc_q_conj(quat_at(a, 0, par)), sc_v3_sub(pos_at(a, 0, b), pos_at(a, 0, par)));
            sc_v3_store(a->joint_rest + 3 * b, sc_v3_add(sc_v3_load(a->joint_rest + 3 * par), off));
        }
    }
    free(cnt);
    free(rows);
    return SC_OK;
}

/* Without node frames each node follows its own bone, a free node the bone of the nearest
   fixed node. */
static int rigid_bones(sc_anim *a, sc_err *err)
{
    sc_log_warn("%s: no /nodes/position (simulate with output.nodes: true): the surface follows the bones rigidly", a->path);
    a->rigid_bone = malloc((size_t)a->nnodes * sizeof(int));
    if (!a->rigid_bone) return sc_fail(err, SC_EIO, "out of memory");
    for (int i = 0; i < a->nnodes; i++) {
        a->rigid_bone[i] = a->node_bone[i] >= 0 ? a->node_bone[i] : 0;
        double bd = INFINITY;
        for (int j = 0; a->node_bone[i] < 0 && j < a->nnodes; j++) {
            if (a->node_bone[j] < 0) continue;
            double d = sc_v3_dist(sc_v3_load(a->rest_pos + 3 * i), sc_v3_load(a->rest_pos + 3 * j));
            if (d < bd) {
                bd = d;
                a->rigid_bone[i] = a->node_bone[j];
            }
        }
    }
    return SC_OK;
}

/* Takes over the arrays store/sim read, then derives what drawing needs. */
static int open_sim(sc_sim_data *d, sc_anim *a, sc_err *err)
{
    a->is_sim = 1;
    a->has_nodes = d->has_nodes;
    a->nframes = d->nframes;
    a->time = d->time;
    d->time = NULL;
    a->nbones = d->nbones;
    a->bone_name = d->bone_name;
    d->bone_name = NULL;
    a->parent = d->parent;
    d->parent = NULL;
    a->bone_pos = d->bone_pos;
    d->bone_pos = NULL;
    a->bone_quat = d->bone_quat;
    d->bone_quat = NULL;
    a->nnodes = d->nnodes;
    a->ntets = d->ntets;
    a->nsv = d->nsv;
    a->nsf = d->nsf;
    a->tets = d->tets;
    d->tets = NULL;
    a->rest_pos = d->rest_pos;
    d->rest_pos = NULL;
    a->node_bone = d->node_bone;
    d->node_bone = NULL;
    a->faces = d->faces;
    d->faces = NULL;
    a->surf_tet = d->surf_tet;
    d->surf_tet = NULL;
    a->surf_bary = d->surf_bary;
    d->surf_bary = NULL;
    a->com = d->com;
    d->com = NULL;
    a->contact_force = d->contact_force;
    d->contact_force = NULL;
    a->push_force = d->push_force;
    d->push_force = NULL;
    a->ref_time = d->ref_time;
    d->ref_time = NULL;
    a->tracking_error = d->tracking_error;
    d->tracking_error = NULL;
    a->muscle_npoints = d->muscle_npoints;
    a->muscle_nsegs = d->muscle_nsegs;
    a->muscle_point_tet = d->muscle_point_tet;
    d->muscle_point_tet = NULL;
    a->muscle_point_bary = d->muscle_point_bary;
    d->muscle_point_bary = NULL;
    a->muscle_seg = d->muscle_seg;
    d->muscle_seg = NULL;
    a->muscle_rest_len = d->muscle_rest_len;
    d->muscle_rest_len = NULL;
    a->muscle_ld = d->muscle_ld;
    d->muscle_ld = NULL;
    snprintf(a->status, sizeof a->status, "%s", d->status);
    size_t nb = (size_t)a->nbones;
    a->joint_rest = calloc(nb * 3, sizeof(double));
    a->tip_rest = calloc(nb * 3, sizeof(double));
    a->surf_rest = malloc((size_t)a->nsv * 3 * sizeof(double));
    if (!a->joint_rest || !a->tip_rest || !a->surf_rest) return sc_fail(err, SC_EIO, "out of memory");
    for (int v = 0; v < a->nsv; v++)
        for (int k3 = 0; k3 < 3; k3++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += a->surf_bary[4 * v + k] * a->rest_pos[3 * a->tets[4 * a->surf_tet[v] + k] + k3];
            a->surf_rest[3 * v + k3] = s;
        }
    int rc = rest_joints(a, err);
    if (!rc && !a->has_nodes) rc = rigid_bones(a, err);
    if (rc) return rc;
    a->ground_n[1] = 1;
    if (d->config) {
        sc_render_scene scene;
        sc_render_scene_read(d->config, a->path, (const char(*)[SC_NAME_LEN])a->bone_name, a->nbones, &scene);
        sc_v3_store(a->ground_n, scene.ground.normal);
        a->ground_off = scene.ground.offset;
        a->relief = scene.ground;
        a->npush = scene.npush;
        memcpy(a->push, scene.push, sizeof a->push);
    }
    return finish(a, err);
}

int sc_anim_open(const char *path, sc_anim *a, sc_err *err)
{
    memset(a, 0, sizeof *a);
    snprintf(a->path, sizeof a->path, "%s", path);
    a->ground_n[1] = 1;
    sc_sim_data d;
    int is_sim, rc = sc_sim_open(path, &is_sim, &a->file, &d, err);
    if (rc) return rc;
    rc = is_sim ? open_sim(&d, a, err) : open_character(path, a, err);
    sc_sim_data_free(&d);
    if (rc) sc_anim_close(a);
    return rc;
}

/* ---- sampling ---- */

int sc_anim_attach_reference(sc_anim *a, const char *ref_path, sc_err *err)
{
    sc_h5_poses g;
    int from_openloop = 0;
    int rc = sc_openloop_read_reference_poses(ref_path, &g, &from_openloop, err);
    if (!rc && !from_openloop) rc = sc_reference_read_poses(ref_path, &g, err);
    if (rc) return rc;
    a->ghost_sim_time = from_openloop;
    if (g.nbones != (size_t)a->nbones) {
        rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: %zu bones, the simulation has %d: a reference of another character", ref_path, g.nbones,
                     a->nbones);
        goto done;
    }
    for (size_t b = 0; b < g.nbones; b++)
        if (strcmp(g.names[b], a->bone_name[b])) {
            rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: bone %zu is '%s', the simulation's is '%s'", ref_path, b, g.names[b], a->bone_name[b]);
            goto done;
        }
    for (size_t k = 0; k < g.n && !rc; k++)
        if (!isfinite(g.time[k]) || (k && !(g.time[k] > g.time[k - 1])))
            rc = sc_fail(err, SC_EINPUT, "%s:/time: element %zu = %g is not finite and increasing", ref_path, k, g.time[k]);
    if (rc) goto done;
    a->ghost_n = (int)g.n;
    a->ghost_time = g.time;
    a->ghost_pos = g.pos;
    a->ghost_quat = g.quat;
    g.time = g.pos = g.quat = NULL;
done:
    sc_h5_poses_free(&g);
    return rc;
}

/* The reference's bone poses at reference time tr (clamped), linear and slerp between samples. */
static void ghost_at(const sc_anim *a, double tr, sc_xform *out)
{
    const double *t = a->ghost_time;
    int n = a->ghost_n, k = 0;
    double u = 0;
    if (tr >= t[n - 1]) k = n - 1;
    else if (tr > t[0]) {
        int hi = n - 1;
        while (hi - k > 1) {
            int mid = (k + hi) / 2;
            if (t[mid] <= tr) k = mid;
            else hi = mid;
        }
        u = (tr - t[k]) / (t[hi] - t[k]);
    }
    int k1 = k + 1 < n ? k + 1 : k;
    for (int b = 0; b < a->nbones; b++) {
        const double *p0 = a->ghost_pos + 3 * ((size_t)k * a->nbones + b), *p1 = a->ghost_pos + 3 * ((size_t)k1 * a->nbones + b);
        const double *q0 = a->ghost_quat + 4 * ((size_t)k * a->nbones + b), *q1 = a->ghost_quat + 4 * ((size_t)k1 * a->nbones + b);
        double pb[3];
        for (int d = 0; d < 3; d++) pb[d] = p0[d] + u * (p1[d] - p0[d]);
        out[b].p = sc_v3_load(pb);
        out[b].q = sc_q_slerp((sc_quat){q0[0], q0[1], q0[2], q0[3]}, (sc_quat){q1[0], q1[1], q1[2], q1[3]}, u);
    }
}

int sc_anim_pose_alloc(const sc_anim *a, sc_anim_pose *p, sc_err *err)
{
    memset(p, 0, sizeof *p);
    p->nodes = malloc((size_t)a->nnodes * 3 * sizeof(double) + 1);
    p->surf = malloc((size_t)a->nsv * 3 * sizeof(double) + 1);
    p->bone = malloc((size_t)a->nbones * sizeof(sc_xform) + 1);
    p->ghost = malloc((size_t)a->nbones * sizeof(sc_xform) + 1);
    if (!p->nodes || !p->surf || !p->bone || !p->ghost) {
        sc_anim_pose_free(p);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    return SC_OK;
}

void sc_anim_pose_free(sc_anim_pose *p)
{
    if (!p) return;
    free(p->nodes);
    free(p->surf);
    free(p->bone);
    free(p->ghost);
    memset(p, 0, sizeof *p);
}

/* Node positions of stored frame k, through a two-slot cache; the slot holding `keep` stays. */
static int frame_nodes(sc_anim *a, int k, int keep, const double **out, sc_err *err)
{
    for (int s = 0; s < 2; s++)
        if (a->cache_k[s] == k) {
            *out = a->cache[s];
            return SC_OK;
        }
    int s = a->cache_k[0] == keep ? 1 : 0;
    double *x = a->cache[s];
    a->cache_k[s] = -1;
    if (!a->is_sim) {
        memcpy(x, a->rest_pos, (size_t)a->nnodes * 3 * sizeof(double));
    } else if (a->has_nodes) {
        int rc = sc_sim_read_node_frame(a->file, a->nnodes, k, x, err);
        if (rc) return rc;
    } else {
        for (int i = 0; i < a->nnodes; i++) {
            int b = a->rigid_bone[i];
            sc_vec3 l = sc_v3_sub(sc_v3_load(a->rest_pos + 3 * i), sc_v3_load(a->joint_rest + 3 * b));
            sc_v3_store(x + 3 * i, sc_v3_add(sc_q_rotate(quat_at(a, k, b), l), pos_at(a, k, b)));
        }
    }
    a->cache_k[s] = k;
    *out = x;
    return SC_OK;
}

static void lerp3(double *out, const double *x0, const double *x1, double u)
{
    for (int d = 0; d < 3; d++) out[d] = u == 0 ? x0[d] : x0[d] + u * (x1[d] - x0[d]);
}

static int sample_between(sc_anim *a, int k, double u, double t, sc_anim_pose *p, sc_err *err)
{
    int k1 = u > 0 && k + 1 < a->nframes ? k + 1 : k;
    if (k1 == k) u = 0;
    const double *x0, *x1;
    int rc = frame_nodes(a, k, -1, &x0, err);
    if (!rc) rc = frame_nodes(a, k1, k, &x1, err); /* keeps frame k's slot */
    if (rc) return rc;
    for (int i = 0; i < a->nnodes; i++) lerp3(p->nodes + 3 * i, x0 + 3 * i, x1 + 3 * i, u);
    if (!a->is_sim) {
        memcpy(p->surf, a->surf_rest, (size_t)a->nsv * 3 * sizeof(double));
    } else {
        for (int v = 0; v < a->nsv; v++) {
            const int *t4 = a->tets + 4 * a->surf_tet[v];
            const double *w = a->surf_bary + 4 * v;
            for (int d = 0; d < 3; d++)
                p->surf[3 * v + d] =
                    w[0] * p->nodes[3 * t4[0] + d] + w[1] * p->nodes[3 * t4[1] + d] + w[2] * p->nodes[3 * t4[2] + d] + w[3] * p->nodes[3 * t4[3] + d];
        }
    }
    for (int b = 0; b < a->nbones; b++) {
        double p0[3], p1[3], pb[3];
        sc_v3_store(p0, pos_at(a, k, b));
        sc_v3_store(p1, pos_at(a, k1, b));
        lerp3(pb, p0, p1, u);
        p->bone[b].p = sc_v3_load(pb);
        p->bone[b].q = u == 0 ? quat_at(a, k, b) : sc_q_slerp(quat_at(a, k, b), quat_at(a, k1, b), u);
    }
    lerp3(p->com, a->com + 3 * k, a->com + 3 * k1, u);
    lerp3(p->contact_force, a->contact_force + 3 * k, a->contact_force + 3 * k1, u);
    lerp3(p->push_force, a->push_force + 3 * k, a->push_force + 3 * k1, u);
    p->has_ghost = a->ghost_n > 0;
    if (p->has_ghost) {
        double tr = a->ghost_sim_time ? t
            : a->ref_time             ? a->ref_time[k] + u * (a->ref_time[k1] - a->ref_time[k])
                                      : a->ghost_time[0] + (t - a->time[0]);
        ghost_at(a, tr, p->ghost);
    }
    p->t = t;
    p->frame = k;
    return SC_OK;
}

int sc_anim_frame(sc_anim *a, int k, sc_anim_pose *p, sc_err *err)
{
    if (k < 0 || k >= a->nframes) return sc_fail(err, SC_EINPUT, "%s: frame %d of %d", a->path, k, a->nframes);
    return sample_between(a, k, 0, a->time[k], p, err);
}

int sc_anim_sample(sc_anim *a, double t, sc_anim_pose *p, sc_err *err)
{
    int n = a->nframes;
    if (!(t > a->time[0])) return sample_between(a, 0, 0, a->time[0], p, err);
    if (t >= a->time[n - 1]) return sample_between(a, n - 1, 0, a->time[n - 1], p, err);
    int lo = 0, hi = n - 1; /* time[lo] <= t < time[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (a->time[mid] <= t) lo = mid;
        else hi = mid;
    }
    double span = a->time[lo + 1] - a->time[lo];
    double u = span > 0 ? (t - a->time[lo]) / span : 0;
    return sample_between(a, lo, u, t, p, err);
}

int sc_anim_times(const sc_anim *a, double fps, int every, double start, double end, double **times)
{
    double t0 = a->time[0], t1 = a->time[a->nframes - 1];
    double s = start > t0 ? start : t0, e = end > s ? fmin(end, t1) : t1;
    if (s > t1) s = t1;
    if (e < s) e = s;
    int n = 0;
    double *out = NULL;
    if (every > 0 || fps <= 0) {
        if (every < 1) every = 1;
        out = malloc((size_t)a->nframes * sizeof *out);
        if (!out) return -1;
        int seen = 0;
        for (int k = 0; k < a->nframes; k++) {
            if (a->time[k] < s - 1e-12 || a->time[k] > e + 1e-12) continue;
            if (seen++ % every == 0) out[n++] = a->time[k];
        }
        if (!n) out[n++] = s;
    } else {
        double len = (e - s) * fps;
        if (len > 1e8) len = 1e8;
        int cnt = (int)floor(len + 1e-9) + 1;
        out = malloc((size_t)cnt * sizeof *out);
        if (!out) return -1;
        for (int i = 0; i < cnt; i++) out[n++] = s + i / fps;
    }
    *times = out;
    return n;
}

sc_vec3 sc_anim_follow(const sc_anim *a, double t, double window)
{
    sc_vec3 sum = sc_v3(0, 0, 0);
    int n = 0, nearest = 0;
    for (int k = 0; k < a->nframes; k++) {
        if (fabs(a->time[k] - t) < fabs(a->time[nearest] - t)) nearest = k;
        if (fabs(a->time[k] - t) > window) continue;
        sc_vec3 c = sc_v3_load(a->com + 3 * k);
        if (!isfinite(c.x) || !isfinite(c.y) || !isfinite(c.z)) continue;
        sum = sc_v3_add(sum, c);
        n++;
    }
    if (n) return sc_v3_scale(sum, 1.0 / n);
    sc_vec3 c = sc_v3_load(a->com + 3 * nearest);
    return isfinite(c.x) && isfinite(c.y) && isfinite(c.z) ? c : sc_v3(0, 0, 0);
}

sc_quat sc_anim_local_rotation(const sc_anim_pose *p, const sc_anim *a, int b)
{
    int par = a->parent[b];
    return par < 0 ? p->bone[b].q : sc_q_normalize(sc_q_mul(sc_q_conj(p->bone[par].q), p->bone[b].q));
}

double sc_anim_height_above_ground(const sc_anim *a, const double *x)
{
    return a->ground_n[0] * x[0] + a->ground_n[1] * x[1] + a->ground_n[2] * x[2] - a->ground_off;
}

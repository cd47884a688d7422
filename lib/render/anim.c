/* Reading sim.h5 / character.h5 for drawing and exporting. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "io/character.h"
#include "io/config.h"
#include "render/anim.h"

#define D1(n) (size_t[]){(size_t)(n)}
#define D2(n, k) (size_t[]){(size_t)(n), (size_t)(k)}
#define D3(n, k, l) (size_t[]){(size_t)(n), (size_t)(k), (size_t)(l)}

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
    sc_h5_close(a->file);
    void *arrays[] = {a->time, a->bone_name, a->parent, a->joint_rest, a->tip_rest, a->bone_pos, a->bone_quat, a->tets,
                      a->rest_pos, a->node_bone, a->faces, a->surf_tet, a->surf_bary, a->surf_rest, a->com,
                      a->contact_force, a->push_force, a->rigid_bone, a->cache[0], a->cache[1], a->ref_time, a->ghost_time,
                      a->ghost_pos, a->ghost_quat};
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
            if (a->node_bone[i] == b) { c = sc_v3_add(c, sc_v3_load(a->rest_pos + 3 * i)); n++; }
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
    double lo = INFINITY, hi = -INFINITY;
    for (int v = 0; v < a->nsv; v++) {
        lo = fmin(lo, a->surf_rest[3 * v + 1]);
        hi = fmax(hi, a->surf_rest[3 * v + 1]);
    }
    a->height = hi > lo ? hi - lo : 1.0;
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
    a->bone_name = m.bone_name; m.bone_name = NULL;
    a->parent = m.parent; m.parent = NULL;
    a->joint_rest = m.joint_pos; m.joint_pos = NULL;
    a->tip_rest = m.bone_end; m.bone_end = NULL;
    a->nnodes = m.nnodes; a->ntets = m.ntets; a->nsv = m.nsurf_verts; a->nsf = m.nsurf_tris;
    a->tets = m.tets; m.tets = NULL;
    a->rest_pos = m.rest_pos; m.rest_pos = NULL;
    a->node_bone = m.node_bone; m.node_bone = NULL;
    a->faces = m.surf_tris; m.surf_tris = NULL;
    a->surf_tet = m.surf_tet; m.surf_tet = NULL;
    a->surf_bary = m.surf_bary; m.surf_bary = NULL;
    a->surf_rest = m.surf_rest; m.surf_rest = NULL;
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
        q[0] = 1; q[1] = q[2] = q[3] = 0;
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

/* Ground plane and pushes from the simulation's resolved config; best effort. */
static void read_scene_config(sc_h5 *f, sc_anim *a)
{
    char *text = NULL;
    if (sc_h5_read_attr_str(f, "/", "config", &text, NULL)) return;
    sc_cfg *cfg = NULL;
    sc_err e;
    char name[1200];
    snprintf(name, sizeof name, "%s:/ attribute 'config'", a->path);
    if (sc_cfg_load_string(text, name, &cfg, &e)) {
        sc_log_warn("%s: flat ground at y = 0 and no push arrows by bone (%s)", a->path, e.msg);
        free(text);
        return;
    }
    free(text);
    sc_cfg_node *root = sc_cfg_root(cfg), *g = sc_cfg_get(root, "ground");
    double slope = 0, height = 0;
    if (g && sc_cfg_is_map(g)) {
        if (sc_cfg_double(g, "slope", 0, &slope, &e) || sc_cfg_double(g, "height", 0, &height, &e)) slope = height = 0;
    }
    double ang = slope * SC_PI / 180; /* as simulate: a slope tilts the ground about z */
    a->ground_n[0] = -sin(ang);
    a->ground_n[1] = cos(ang);
    a->ground_n[2] = 0;
    a->ground_off = height * cos(ang);
    sc_cfg_node *list = sc_cfg_get(root, "perturbations");
    for (int i = 0; list && sc_cfg_is_seq(list) && i < sc_cfg_len(list) && a->npush < SC_ANIM_MAX_PUSH; i++) {
        sc_cfg_node *it = sc_cfg_at(list, i);
        char type[32], bone[SC_NAME_LEN];
        sc_anim_push p;
        if (!sc_cfg_is_map(it) || sc_cfg_string(it, "type", "push", type, sizeof type, &e) || strcmp(type, "push") ||
            sc_cfg_string(it, "bone", "", bone, sizeof bone, &e) || sc_cfg_double(it, "time", 0, &p.time, &e) ||
            sc_cfg_double(it, "duration", 0.1, &p.duration, &e) || sc_cfg_vec_range(it, "force", 3, NULL, -1e6, 1e6, p.force, &e))
            continue;
        p.bone = -1;
        for (int b = 0; b < a->nbones; b++)
            if (!strcmp(a->bone_name[b], bone)) p.bone = b;
        if (p.bone >= 0) a->push[a->npush++] = p;
    }
    sc_cfg_free(cfg);
}

static int read_optional3(sc_h5 *f, const char *path, sc_anim *a, double **out, sc_err *err)
{
    if (!sc_h5_exists(f, path)) {
        *out = calloc((size_t)a->nframes * 3 + 1, sizeof(double));
        return *out ? SC_OK : sc_fail(err, SC_EIO, "out of memory");
    }
    return sc_h5_read_f64(f, path, 2, D2(a->nframes, 3), out, err);
}

static int open_sim(sc_h5 *f, sc_anim *a, sc_err *err)
{
    const char *fn = a->path;
    size_t dims[3] = {0, 0, 0}, nb = 0;
    char **names = NULL;
    int rc;
#define TRY(x) do { if ((rc = (x))) goto done; } while (0)
    a->is_sim = 1;
    TRY(sc_h5_read_f64(f, "/time", 1, dims, &a->time, err));
    a->nframes = (int)dims[0];
    if (dims[0] < 1 || dims[0] > 100000000) { rc = sc_fail(err, SC_EINPUT, "%s:/time: no frames (the simulation wrote nothing)", fn); goto done; }
    for (int k = 0; k < a->nframes; k++)
        if (!isfinite(a->time[k]) || (k && a->time[k] < a->time[k - 1])) {
            rc = sc_fail(err, SC_EINPUT, "%s:/time: element %d = %g is not finite and non-decreasing", fn, k, a->time[k]);
            goto done;
        }
    TRY(sc_h5_read_strings(f, "/bones/names", &nb, &names, err));
    if (nb < 1 || nb > 256) { rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: expected 1..256 bones, found %zu", fn, nb); goto done; }
    a->nbones = (int)nb;
    a->bone_name = calloc(nb, sizeof *a->bone_name);
    a->joint_rest = calloc(nb * 3, sizeof(double));
    a->tip_rest = calloc(nb * 3, sizeof(double));
    if (!a->bone_name || !a->joint_rest || !a->tip_rest) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
    for (size_t b = 0; b < nb; b++) snprintf(a->bone_name[b], SC_NAME_LEN, "%s", names[b]);
    TRY(sc_h5_read_i32(f, "/bones/parents", 1, D1(nb), &a->parent, err));
    for (int b = 0; b < a->nbones; b++)
        if ((b == 0) != (a->parent[b] < 0) || a->parent[b] >= b) {
            rc = sc_fail(err, SC_EINPUT, "%s:/bones/parents: bone %d has parent %d (the root is bone 0, parents precede children)", fn, b, a->parent[b]);
            goto done;
        }
    TRY(sc_h5_read_f64(f, "/bones/position", 3, D3(a->nframes, nb, 3), &a->bone_pos, err));
    TRY(sc_h5_read_f64(f, "/bones/orientation", 3, D3(a->nframes, nb, 4), &a->bone_quat, err));
    TRY(sc_h5_check_range_nd(f, "/bones/position", a->bone_pos, 3, D3(a->nframes, nb, 3), -1e6, 1e6, 0, err));
    TRY(sc_h5_check_range_nd(f, "/bones/orientation", a->bone_quat, 3, D3(a->nframes, nb, 4), -1e6, 1e6, 0, err));
    for (size_t i = 0; i < (size_t)a->nframes * nb; i++) { /* a zero quaternion would divide by zero */
        double *q = a->bone_quat + 4 * i, n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (!(n > 1e-6)) { rc = sc_fail(err, SC_EINPUT, "%s:/bones/orientation: frame %zu bone %zu is not a rotation", fn, i / nb, i % nb); goto done; }
        for (int d = 0; d < 4; d++) q[d] /= n;
    }
    dims[0] = 0; dims[1] = 4;
    TRY(sc_h5_read_i32(f, "/mesh/tets", 2, dims, &a->tets, err));
    a->ntets = (int)dims[0];
    dims[0] = 0; dims[1] = 3;
    TRY(sc_h5_read_f64(f, "/mesh/rest_pos", 2, dims, &a->rest_pos, err));
    a->nnodes = (int)dims[0];
    TRY(sc_h5_read_i32(f, "/mesh/node_bone", 1, D1(a->nnodes), &a->node_bone, err));
    dims[0] = 0; dims[1] = 3;
    TRY(sc_h5_read_i32(f, "/mesh/surface_faces", 2, dims, &a->faces, err));
    a->nsf = (int)dims[0];
    dims[0] = 0;
    TRY(sc_h5_read_i32(f, "/mesh/surface_tet", 1, dims, &a->surf_tet, err));
    a->nsv = (int)dims[0];
    TRY(sc_h5_read_f64(f, "/mesh/surface_bary", 2, D2(a->nsv, 4), &a->surf_bary, err));
    TRY(sc_h5_check_range(f, "/mesh/rest_pos", a->rest_pos, 3 * (size_t)a->nnodes, 3, -1e6, 1e6, 0, err));
    TRY(sc_h5_check_range(f, "/mesh/surface_bary", a->surf_bary, 4 * (size_t)a->nsv, 4, -1e3, 1e3, 0, err));
    if (a->nnodes < 4 || a->ntets < 1 || a->nsv < 3 || a->nsf < 1) {
        rc = sc_fail(err, SC_EINPUT, "%s:/mesh: empty mesh (%d nodes, %d tets, %d surface vertices, %d faces)", fn, a->nnodes, a->ntets, a->nsv, a->nsf);
        goto done;
    }
    for (size_t i = 0; i < 4 * (size_t)a->ntets; i++)
        if (a->tets[i] < 0 || a->tets[i] >= a->nnodes) { rc = sc_fail(err, SC_EINPUT, "%s:/mesh/tets: tet %zu references node %d of %d", fn, i / 4, a->tets[i], a->nnodes); goto done; }
    for (int i = 0; i < a->nnodes; i++)
        if (a->node_bone[i] < -1 || a->node_bone[i] >= a->nbones) { rc = sc_fail(err, SC_EINPUT, "%s:/mesh/node_bone: node %d has bone %d of %d", fn, i, a->node_bone[i], a->nbones); goto done; }
    for (int i = 0; i < 3 * a->nsf; i++)
        if (a->faces[i] < 0 || a->faces[i] >= a->nsv) { rc = sc_fail(err, SC_EINPUT, "%s:/mesh/surface_faces: face %d references vertex %d of %d", fn, i / 3, a->faces[i], a->nsv); goto done; }
    for (int i = 0; i < a->nsv; i++)
        if (a->surf_tet[i] < 0 || a->surf_tet[i] >= a->ntets) { rc = sc_fail(err, SC_EINPUT, "%s:/mesh/surface_tet: vertex %d references tet %d of %d", fn, i, a->surf_tet[i], a->ntets); goto done; }
    TRY(read_optional3(f, "/momentum/com", a, &a->com, err));
    TRY(read_optional3(f, "/contact/force", a, &a->contact_force, err));
    TRY(read_optional3(f, "/control/push_force", a, &a->push_force, err));
    if (sc_h5_exists(f, "/control/reference_time")) {
        size_t nt = (size_t)a->nframes;
        TRY(sc_h5_read_f64(f, "/control/reference_time", 1, &nt, &a->ref_time, err));
    }

    a->surf_rest = malloc((size_t)a->nsv * 3 * sizeof(double));
    if (!a->surf_rest) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
    for (int v = 0; v < a->nsv; v++)
        for (int d = 0; d < 3; d++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += a->surf_bary[4 * v + k] * a->rest_pos[3 * a->tets[4 * a->surf_tet[v] + k] + d];
            a->surf_rest[3 * v + d] = s;
        }

    a->has_nodes = sc_h5_exists(f, "/nodes/position");
    double *rows = NULL;
    if (a->has_nodes) {
        /* read every frame once: a damaged chunk fails here, before anything is drawn */
        size_t block = 64, nd[3] = {0, (size_t)a->nnodes, 3};
        rows = malloc(block * (size_t)a->nnodes * 3 * sizeof(double));
        if (!rows) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
        int rank;
        size_t sh[3];
        TRY(sc_h5_shape(f, "/nodes/position", &rank, sh, err));
        if (rank != 3 || sh[0] != (size_t)a->nframes || sh[1] != (size_t)a->nnodes || sh[2] != 3) {
            rc = sc_fail(err, SC_EINPUT, "%s:/nodes/position: expected shape %d x %d x 3 (frames x nodes x 3), found rank %d %zu x %zu x %zu", fn,
                         a->nframes, a->nnodes, rank, sh[0], sh[1], sh[2]);
            free(rows);
            goto done;
        }
        for (size_t k = 0; k < (size_t)a->nframes && !rc; k += block) {
            size_t n = (size_t)a->nframes - k < block ? (size_t)a->nframes - k : block;
            rc = sc_h5_read_f64_rows(f, "/nodes/position", 3, nd, k, n, rows, err);
        }
        if (rc) { free(rows); goto done; }
        /* rest joints from the fixed nodes of frame 0: x = R_b (X - J_b) + p_b for a node on bone b */
        rc = sc_h5_read_f64_rows(f, "/nodes/position", 3, nd, 0, 1, rows, err);
        if (rc) { free(rows); goto done; }
    }
    int *cnt = calloc(nb, sizeof *cnt);
    if (!cnt) { free(rows); rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
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
    if (!a->has_nodes) {
        /* each node follows its own bone, a free node the bone of the nearest fixed node */
        sc_log_warn("%s: no /nodes/position (simulate with output.nodes: true): the surface follows the bones rigidly", fn);
        a->rigid_bone = malloc((size_t)a->nnodes * sizeof(int));
        if (!a->rigid_bone) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
        for (int i = 0; i < a->nnodes; i++) {
            a->rigid_bone[i] = a->node_bone[i] >= 0 ? a->node_bone[i] : 0;
            double bd = INFINITY;
            for (int j = 0; a->node_bone[i] < 0 && j < a->nnodes; j++) {
                if (a->node_bone[j] < 0) continue;
                double d = sc_v3_dist(sc_v3_load(a->rest_pos + 3 * i), sc_v3_load(a->rest_pos + 3 * j));
                if (d < bd) { bd = d; a->rigid_bone[i] = a->node_bone[j]; }
            }
        }
    }
    a->ground_n[1] = 1;
    read_scene_config(f, a);
    char *status = NULL;
    if (!sc_h5_read_attr_str(f, "/", "status", &status, NULL)) {
        snprintf(a->status, sizeof a->status, "%s", status);
        free(status);
    }
    rc = finish(a, err);
#undef TRY
done:
    if (names) sc_h5_free_strings(names, nb);
    return rc;
}

int sc_anim_open(const char *path, sc_anim *a, sc_err *err)
{
    memset(a, 0, sizeof *a);
    snprintf(a->path, sizeof a->path, "%s", path);
    a->ground_n[1] = 1;
    sc_h5 *f;
    int rc = sc_h5_open(path, &f, err);
    if (rc) return rc;
    char *schema = NULL;
    int is_sim = -1;
    if (sc_h5_read_attr_str(f, "/", "schema", &schema, NULL) == SC_OK) {
        if (!strncmp(schema, "softcon.sim/", 12)) is_sim = 1;
        else if (!strncmp(schema, "softcon.character/", 18)) is_sim = 0;
        else rc = sc_fail(err, SC_EINPUT, "%s: schema is '%s': expected a sim.h5 (softcon.sim/1) or a character.h5 (softcon.character/1)", path, schema);
        free(schema);
    } else if (sc_h5_exists(f, "/time") || sc_h5_exists(f, "/mesh")) {
        is_sim = 1;
    } else if (sc_h5_exists(f, "/surface")) {
        is_sim = 0;
    } else {
        rc = sc_fail(err, SC_EINPUT, "%s:/time: missing; the file is neither a sim.h5 nor a character.h5 (no root 'schema' attribute)", path);
    }
    if (rc) {
        sc_h5_close(f);
        return rc;
    }
    if (is_sim) {
        a->file = f;
        rc = open_sim(f, a, err);
    } else {
        sc_h5_close(f);
        rc = open_character(path, a, err);
    }
    if (rc) sc_anim_close(a);
    return rc;
}

/* ---- sampling ---- */

int sc_anim_attach_reference(sc_anim *a, const char *ref_path, sc_err *err)
{
    sc_h5 *f;
    int rc = sc_h5_open(ref_path, &f, err);
    if (rc) return rc;
    size_t nn = 0, nt = 0;
    char **names = NULL;
    a->ghost_sim_time = sc_h5_exists(f, "/achieved/reference_bone_position");
    const char *tpath = a->ghost_sim_time ? "/achieved/time" : "/time", *ppath = a->ghost_sim_time ? "/achieved/reference_bone_position" : "/reference/bone_pos",
               *qpath = a->ghost_sim_time ? "/achieved/reference_bone_orientation" : "/reference/bone_quat";
    if ((rc = sc_h5_read_strings(f, "/bones/names", &nn, &names, err)) || (rc = sc_h5_read_f64(f, tpath, 1, &nt, &a->ghost_time, err)))
        goto done;
    if (nn != (size_t)a->nbones) {
        rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: %zu bones, the simulation has %d: a reference of another character", ref_path, nn, a->nbones);
        goto done;
    }
    for (size_t b = 0; b < nn; b++)
        if (strcmp(names[b], a->bone_name[b])) {
            rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: bone %zu is '%s', the simulation's is '%s'", ref_path, b, names[b], a->bone_name[b]);
            goto done;
        }
    size_t d3[3] = {nt, nn, 3}, d4[3] = {nt, nn, 4};
    if ((rc = sc_h5_read_f64(f, ppath, 3, d3, &a->ghost_pos, err)) || (rc = sc_h5_read_f64(f, qpath, 3, d4, &a->ghost_quat, err)))
        goto done;
    for (size_t k = 0; k < nt && !rc; k++)
        if (!isfinite(a->ghost_time[k]) || (k && !(a->ghost_time[k] > a->ghost_time[k - 1])))
            rc = sc_fail(err, SC_EINPUT, "%s:/time: element %zu = %g is not finite and increasing", ref_path, k, a->ghost_time[k]);
    if (!rc) a->ghost_n = (int)nt;
done:
    if (names) sc_h5_free_strings(names, nn);
    sc_h5_close(f);
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
            if (t[mid] <= tr) k = mid; else hi = mid;
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
        if (a->cache_k[s] == k) { *out = a->cache[s]; return SC_OK; }
    int s = a->cache_k[0] == keep ? 1 : 0;
    double *x = a->cache[s];
    a->cache_k[s] = -1;
    if (!a->is_sim) {
        memcpy(x, a->rest_pos, (size_t)a->nnodes * 3 * sizeof(double));
    } else if (a->has_nodes) {
        size_t nd[3] = {0, (size_t)a->nnodes, 3};
        int rc = sc_h5_read_f64_rows(a->file, "/nodes/position", 3, nd, (size_t)k, 1, x, err);
        if (!rc) rc = sc_h5_check_range(a->file, "/nodes/position (frame)", x, 3 * (size_t)a->nnodes, 3, -1e6, 1e6, 0, err);
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
                p->surf[3 * v + d] = w[0] * p->nodes[3 * t4[0] + d] + w[1] * p->nodes[3 * t4[1] + d] +
                                     w[2] * p->nodes[3 * t4[2] + d] + w[3] * p->nodes[3 * t4[3] + d];
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
                    : a->ref_time   ? a->ref_time[k] + u * (a->ref_time[k1] - a->ref_time[k])
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

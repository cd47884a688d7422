#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/world.h"
#include "core/blob.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/rng.h"
#include "sim/sim.h"
#include "skin/lbs.h"

static uint64_t options_hash(const sc_sim_opts *o);

void sc_sim_default_opts(sc_sim_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dt = 0.5e-3;
    o->gravity[1] = -SC_STANDARD_GRAVITY;
    o->plasticity = 1;
    o->damping = SC_DAMP_POSE;
    o->pose_damping = 20;
    o->rayleigh_alpha = 0.5;
    o->rayleigh_beta = 1e-4; /* explicit: beta omega_max^2 dt must stay below 2 */
    sc_contact_default_opts(&o->contact);
    o->rigid.erp = 0.2; /* ODE's own default; hard contact (cfm 0) */
    sc_skeleton_default_opts(&o->skeleton);
    memcpy(o->skeleton.gravity, o->gravity, sizeof o->gravity);
    o->max_speed = 50;
    o->max_inverted = 0.05;
}

int sc_sim_fem_kernel(const sc_sim_opts *o) { return o->fem_single ? sc_fem_kernel_id_single() : sc_fem_kernel_id(); }

void sc_sim_free(sc_sim *s)
{
    if (!s) return;
    sc_fem_free(&s->fem);
    sc_skeleton_free(s->skel);
    sc_contact_cull_free(&s->cull);
    sc_lbs_plan_free(&s->lbs);
    if (s->lumped) sc_model_free(s->lumped);
    free(s->lumped);
    free(s->node_owner);
    free(s->node_local);
    free(s->vert_bone);
    void *a[] = {s->x,          s->v,      s->warm,     s->anchor,   s->in_contact, s->targets, s->push, s->joint_torque,
                 s->gain_scale, s->f,      s->xbar,     s->xbar_dot, s->reaction,   s->sp,      s->pose, s->lin_vel,
                 s->ang_vel,    s->bone_f, s->bone_tau, s->dt_mass,  s->surf_v,     s->surf_f};
    for (size_t i = 0; i < sizeof a / sizeof *a; i++) free(a[i]);
    free(s);
}

static int is_rigid(const sc_sim *s) { return s->o.contact_model == SC_CONTACT_RIGID; }

/* fixed nodes follow their bones ([L13] 4.3); with rigid contact every node does */
static void sync_fixed(sc_sim *s)
{
    const sc_model *m = s->m;
    sc_skeleton_get_state(s->skel, s->pose, s->lin_vel, s->ang_vel);
    sc_mat3 rot[SC_SIM_MAX_BONES];
    for (int b = 0; b < s->nb; b++) rot[b] = sc_q_to_m3(s->pose[b].q);
    const int rigid = is_rigid(s), count = rigid ? s->nn : m->nfixed;
    for (int i = 0; i < count; i++) {
        const int n = rigid ? i : m->fixed_node[i], b = rigid ? s->node_owner[i] : m->fixed_bone[i];
        const double *l = rigid ? s->node_local + 3 * i : m->fixed_local + 3 * i, *w = s->ang_vel + 3 * b, *v = s->lin_vel + 3 * b;
        const sc_mat3 *r = &rot[b];
        const double r0 = r->m[0][0] * l[0] + r->m[0][1] * l[1] + r->m[0][2] * l[2];
        const double r1 = r->m[1][0] * l[0] + r->m[1][1] * l[1] + r->m[1][2] * l[2];
        const double r2 = r->m[2][0] * l[0] + r->m[2][1] * l[1] + r->m[2][2] * l[2];
        double *x = s->x + 3 * n, *xv = s->v + 3 * n;
        x[0] = s->pose[b].p.x + r0;
        x[1] = s->pose[b].p.y + r1;
        x[2] = s->pose[b].p.z + r2;
        xv[0] = v[0] + (w[1] * r2 - w[2] * r1);
        xv[1] = v[1] + (w[2] * r0 - w[0] * r2);
        xv[2] = v[2] + (w[0] * r1 - w[1] * r0);
    }
}

/* LAYER: 1 for the nodes that stay soft: the free flesh within the layer's thickness of the skin
   the layer bones move (their fine-surface vertices), whichever bone the node itself follows
   most (a heel's flesh may follow the shin), and the free nodes that such skin is embedded in, so
   that all of it rests on soft flesh however coarse the tets. */
static void layer_nodes(const sc_sim *s, unsigned char *soft)
{
    const sc_model *m = s->m;
    const sc_layer_opts *l = &s->o.layer;
    const double r2 = l->thickness * l->thickness;
    double lo[SC_SIM_MAX_BONES][3], hi[SC_SIM_MAX_BONES][3]; /* each layer bone's skin, grown by the thickness */
    for (int b = 0; b < s->nb; b++)
        for (int k = 0; k < 3; k++) lo[b][k] = INFINITY, hi[b][k] = -INFINITY;
    for (int v = 0; v < m->nsurf_verts; v++)
        for (int k = 0, b = s->vert_bone[v]; k < 3; k++) {
            lo[b][k] = fmin(lo[b][k], m->surf_rest[3 * v + k] - l->thickness);
            hi[b][k] = fmax(hi[b][k], m->surf_rest[3 * v + k] + l->thickness);
        }
    for (int i = 0; i < m->nnodes; i++) {
        const double *x = m->rest_pos + 3 * i;
        int near = 0;
        for (int b = 0; b < s->nb && !near; b++)
            near = (l->bones >> b & 1) && x[0] >= lo[b][0] && x[0] <= hi[b][0] && x[1] >= lo[b][1] && x[1] <= hi[b][1] && x[2] >= lo[b][2] &&
                x[2] <= hi[b][2];
        soft[i] = 0;
        if (m->node_bone[i] >= 0 || !near) continue;
        for (int v = 0; v < m->nsurf_verts && !soft[i]; v++) {
            const double *p = m->surf_rest + 3 * v;
            const double d0 = p[0] - x[0], d1 = p[1] - x[1], d2 = p[2] - x[2];
            soft[i] = (l->bones >> s->vert_bone[v] & 1) && d0 * d0 + d1 * d1 + d2 * d2 <= r2;
        }
    }
    for (int v = 0; v < m->nsurf_verts; v++)
        if (l->bones >> s->vert_bone[v] & 1)
            for (int k = 0; k < 4; k++) {
                const int n = m->tets[4 * m->surf_tet[v] + k];
                soft[n] |= m->node_bone[n] < 0 && m->surf_bary[4 * v + k] != 0;
            }
}

/* LAYER: the carried nodes become fixed nodes of their bones in the lumped copy, skinned to that
   bone alone: their pose-based rest shape is where they are carried, so the layer's tets that
   reach them see no strain and no damping from a bone they do not follow. */
static int fix_carried(sc_model *l, const sc_sim *s, const unsigned char *soft, sc_err *err)
{
    int n = 0;
    for (int i = 0; i < l->nnodes; i++) n += !soft[i];
    int *node = malloc(((size_t)n + 1) * sizeof(int)), *bone = malloc(((size_t)n + 1) * sizeof(int));
    double *local = malloc((3 * (size_t)n + 1) * sizeof(double));
    if (!node || !bone || !local) {
        free(node);
        free(bone);
        free(local);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    n = 0;
    for (int i = 0; i < l->nnodes; i++) {
        l->node_bone[i] = soft[i] ? -1 : s->node_owner[i];
        if (soft[i]) continue;
        for (int k = 0; k < l->skin_k; k++) {
            l->skin_bone[(size_t)i * l->skin_k + k] = k ? -1 : s->node_owner[i];
            l->skin_w[(size_t)i * l->skin_k + k] = !k;
        }
        node[n] = i;
        bone[n] = s->node_owner[i];
        memcpy(local + 3 * n, s->node_local + 3 * i, 3 * sizeof(double));
        n++;
    }
    free(l->fixed_node);
    free(l->fixed_bone);
    free(l->fixed_local);
    l->fixed_node = node;
    l->fixed_bone = bone;
    l->fixed_local = local;
    l->nfixed = n;
    return SC_OK;
}

/* RIGID and LAYER: the carried flesh's mass lumped into the bone that carries it (mass, centre
   of mass and inertia of its nodes as point masses), in a copy of the model the skeleton is built
   from. RIGID carries every node; LAYER all but the layer's (layer_nodes). */
static int lump_flesh(sc_sim *s, sc_err *err)
{
    const sc_model *m = s->m;
    int rc;
    unsigned char *soft = calloc((size_t)m->nnodes + 1, 1);
    s->lumped = calloc(1, sizeof *s->lumped);
    s->node_owner = malloc(((size_t)m->nnodes + 1) * sizeof(int));
    s->node_local = malloc((3 * (size_t)m->nnodes + 1) * sizeof(double));
    if (!soft || !s->lumped || !s->node_owner || !s->node_local) {
        free(soft);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    if ((rc = sc_model_clone(m, s->lumped, err))) {
        free(soft);
        return rc;
    }
    sc_model *l = s->lumped;
    for (int i = 0; i < m->nnodes; i++) {
        const int b = s->node_owner[i] = sc_model_node_carrier(m, i);
        for (int k = 0; k < 3; k++) s->node_local[3 * i + k] = m->rest_pos[3 * i + k] - m->joint_pos[3 * b + k];
    }
    if (s->o.contact_model == SC_CONTACT_LAYER) layer_nodes(s, soft);
    double mass[SC_SIM_MAX_BONES] = {0}, first[SC_SIM_MAX_BONES][3] = {{0}}, second[SC_SIM_MAX_BONES][9] = {{0}};
    for (int i = 0; i < m->nnodes; i++) {
        if (soft[i]) continue;
        const int b = s->node_owner[i];
        const double *x = m->rest_pos + 3 * i, mi = m->node_mass[i];
        mass[b] += mi;
        for (int k = 0; k < 3; k++) {
            first[b][k] += mi * x[k];
            for (int j = 0; j < 3; j++) second[b][3 * k + j] += mi * x[k] * x[j];
        }
    }
    for (int b = 0; b < m->nbones; b++) {
        if (!(mass[b] > 0)) continue; /* no flesh of its own: the bone keeps its mass */
        double c[3], r2 = 0;
        for (int k = 0; k < 3; k++) c[k] = first[b][k] / mass[b];
        double cov[9];
        for (int k = 0; k < 9; k++) cov[k] = second[b][k] - mass[b] * c[k / 3] * c[k % 3];
        for (int k = 0; k < 3; k++) r2 += cov[4 * k];
        for (int k = 0; k < 9; k++) /* I = sum m (|r|^2 1 - r r^T), with a 1 cm radius of gyration at least */
            l->bone_inertia[9 * b + k] = (k % 4 == 0 ? r2 + mass[b] * 1e-4 : 0) - cov[k];
        l->bone_mass[b] = mass[b];
        memcpy(l->bone_com + 3 * b, c, sizeof c);
    }
    rc = s->o.contact_model == SC_CONTACT_LAYER ? fix_carried(l, s, soft, err) : SC_OK;
    free(soft);
    return rc;
}

/* RIGID, shape skin: each bone's own skin vertices (those it carries), thinned to one per
   `spacing` cube (default 1 cm; the first in the surface's order), meet the ground: the same
   shape as the soft models' skin, rounded heel and toe included. */
static int rigid_skin_colliders(sc_sim *s, const sc_rigid_contact_opts *o, sc_err *err)
{
    const sc_model *m = s->m;
    const double cell = o->spacing > 0 ? o->spacing : 0.01;
    int *bone = sc_alloc(err, (size_t)s->nb + 1, sizeof(int)), *first = sc_alloc(err, (size_t)s->nb + 1, sizeof(int));
    double *pts = sc_alloc(err, 3 * (size_t)m->nsurf_verts + 1, sizeof(double));
    int64_t *keys = sc_alloc(err, (size_t)m->nsurf_verts + 1, sizeof(int64_t));
    int rc = bone && first && pts && keys ? SC_OK : SC_EIO, n = 0, at = 0;
    for (int b = 0; b < s->nb && !rc; b++) {
        const int start = at;
        for (int i = 0; i < m->nsurf_verts; i++) {
            if (s->vert_bone[i] != b) continue;
            int64_t key = 0;
            for (int k = 0; k < 3; k++) key = key * 2097152 + ((int64_t)floor((m->surf_rest[3 * i + k] - m->joint_pos[3 * b + k]) / cell) & 2097151);
            int seen = 0;
            for (int j = start; j < at && !seen; j++) seen = keys[j] == key;
            if (seen) continue;
            keys[at] = key;
            for (int k = 0; k < 3; k++) pts[3 * at + k] = m->surf_rest[3 * i + k] - m->joint_pos[3 * b + k];
            at++;
        }
        if (at > start) bone[n] = b, first[n++] = start;
    }
    first[n] = at;
    if (!rc) rc = sc_skeleton_set_point_colliders(s->skel, n, bone, first, pts, &s->o.contact.ground, o, err);
    free(bone), free(first), free(pts), free(keys);
    return rc;
}

/* RIGID: each bone's box bounds the fine surface it carries (in the rest frame, which is the
   bone's); tested at points spaced to resolve the ground's bumps or tiles. */
static int rigid_colliders(sc_sim *s, sc_err *err)
{
    const sc_model *m = s->m;
    const int *owner = s->vert_bone;
    sc_rigid_contact_opts o = s->o.rigid;
    const sc_ground *g = &s->o.contact.ground;
    o.mu = s->o.contact.mu;
    if (s->o.rigid_shape == SC_RIGID_SKIN) return rigid_skin_colliders(s, &o, err);
    double lo[SC_SIM_MAX_BONES][3], hi[SC_SIM_MAX_BONES][3];
    for (int b = 0; b < s->nb; b++)
        for (int k = 0; k < 3; k++) lo[b][k] = INFINITY, hi[b][k] = -INFINITY;
    for (int i = 0; i < m->nsurf_verts; i++)
        for (int k = 0; k < 3; k++) {
            const double x = m->surf_rest[3 * i + k] - m->joint_pos[3 * owner[i] + k];
            lo[owner[i]][k] = fmin(lo[owner[i]][k], x);
            hi[owner[i]][k] = fmax(hi[owner[i]][k], x);
        }
    sc_box_collider box[SC_SIM_MAX_BONES];
    int n = 0;
    for (int b = 0; b < s->nb; b++) {
        if (!(hi[b][0] > lo[b][0] && hi[b][1] > lo[b][1] && hi[b][2] > lo[b][2])) continue;
        box[n].bone = b;
        for (int k = 0; k < 3; k++) {
            box[n].center[k] = 0.5 * (lo[b][k] + hi[b][k]);
            box[n].half[k] = 0.5 * (hi[b][k] - lo[b][k]);
        }
        n++;
    }
    if (!(o.spacing > 0)) { /* auto: fine enough for the bumps and tiles, corners on a plane */
        double auto_spacing = INFINITY;
        if (g->bump_length > 0 && g->bump_height != 0) auto_spacing = g->bump_length / 8;
        if (g->tile_size > 0 && g->tile_height > 0) auto_spacing = fmin(auto_spacing, g->tile_size / 2);
        o.spacing = isfinite(auto_spacing) ? auto_spacing : 0;
    }
    return sc_skeleton_set_colliders(s->skel, n, box, g, &o, err);
}

int sc_sim_create(const sc_model *m, const sc_sim_opts *o, sc_sim **out, sc_err *err)
{
    *out = NULL;
    if (!(o->dt > 0 && o->dt < 0.1)) return sc_fail(err, SC_EINPUT, "simulation: dt = %g s is outside (0, 0.1)", o->dt);
    int needs_skin = o->contact_model != SC_CONTACT_RIGID && (o->plasticity || o->damping == SC_DAMP_POSE);
    if (needs_skin && m->skin_k == 0)
        return sc_fail(err, SC_EINPUT,
                       "the character has no /skin weights, which pose-based plasticity and damping need: run skin-weights first "
                       "(or set simulation.plasticity: false and simulation.damping: rayleigh|none)");
    if (m->nbones > SC_SIM_MAX_BONES) return sc_fail(err, SC_EINPUT, "simulation: %d bones (at most %d)", m->nbones, SC_SIM_MAX_BONES);
    if (o->contact_model == SC_CONTACT_LAYER && !(o->layer.thickness > 0 && o->layer.bones))
        return sc_fail(err, SC_EINPUT, "simulation: the soft contact layer needs a thickness > 0 (got %g m) and at least one bone",
                       o->layer.thickness);
    const sc_fluid_opts *fl = &o->fluid;
    int frc = sc_fluid_check(fl, err);
    if (frc) return frc;
    if (sc_fluid_enabled(fl) && o->contact_model == SC_CONTACT_RIGID)
        return sc_fail(err, SC_EINPUT, "fluid: the drag acts on the simulated flesh, and contact.model: rigid simulates none (use soft or layer)");
    sc_sim *s = calloc(1, sizeof *s);
    if (!s) return sc_fail(err, SC_EIO, "out of memory");
    s->m = m;
    s->o = *o;
    memcpy(s->o.skeleton.gravity, o->gravity, sizeof o->gravity);
    s->model_hash = sc_model_hash(m);
    s->options_hash = options_hash(o);
    s->nn = m->nnodes;
    s->nb = m->nbones;
    s->nv = m->nsurf_verts;
    s->start_sink = NAN;
    int rc;
    if (!(s->vert_bone = malloc(((size_t)s->nv + 1) * sizeof(int)))) {
        sc_sim_free(s);
        return sc_fail(err, SC_EIO, "out of memory creating the simulation");
    }
    sc_model_surface_bones(m, s->vert_bone);
    if (o->contact_model != SC_CONTACT_SOFT && (rc = lump_flesh(s, err))) {
        sc_sim_free(s);
        return rc;
    }
    if (o->contact_model == SC_CONTACT_LAYER) s->m = m = s->lumped; /* the layer is the model's only free flesh */
    rc = o->contact_model == SC_CONTACT_LAYER ? sc_fem_init_free_tets(&s->fem, m, err) : sc_fem_init(&s->fem, m, err);
    if (!rc && o->fem_single && (rc = sc_fem_set_kernel(&s->fem, sc_sim_fem_kernel(o), err))) sc_fem_free(&s->fem);
    if (rc) {
        sc_sim_free(s);
        return rc;
    }
    if ((rc = sc_skeleton_create(s->lumped ? s->lumped : m, &s->o.skeleton, &s->skel, err)) ||
        (is_rigid(s) && o->contact.enabled && (rc = rigid_colliders(s, err)))) { /* contact.enabled: false: no ground, as for soft */
        sc_sim_free(s);
        return rc;
    }
    size_t n3 = (size_t)s->nn * 3, v3 = (size_t)s->nv * 3, b3 = (size_t)s->nb * 3;
    s->x = malloc(n3 * sizeof(double));
    s->v = calloc(n3, sizeof(double));
    s->warm = malloc(sc_fem_warm_size(&s->fem) * sizeof(double));
    s->anchor = calloc(v3 + 1, sizeof(double));
    s->in_contact = calloc((size_t)s->nv + 1, 1);
    s->targets = malloc((size_t)s->nb * sizeof *s->targets);
    s->push = calloc(b3, sizeof(double));
    s->joint_torque = calloc(b3, sizeof(double));
    s->gain_scale = malloc((size_t)s->nb * sizeof(double));
    s->f = malloc(n3 * sizeof(double));
    s->xbar = calloc(n3, sizeof(double));
    s->xbar_dot = calloc(n3, sizeof(double));
    s->reaction = calloc(n3, sizeof(double));
    s->dt_mass = calloc((size_t)s->nn, sizeof(double));
    s->sp = malloc((v3 + 1) * sizeof(double));
    s->pose = malloc((size_t)s->nb * sizeof *s->pose);
    s->lin_vel = malloc(b3 * sizeof(double));
    s->ang_vel = malloc(b3 * sizeof(double));
    s->bone_f = malloc(b3 * sizeof(double));
    s->bone_tau = malloc(b3 * sizeof(double));
    if (sc_fluid_enabled(fl)) {
        s->surf_v = malloc((v3 + 1) * sizeof(double));
        s->surf_f = malloc((v3 + 1) * sizeof(double));
    }
    if (!s->x || !s->v || !s->warm || !s->anchor || !s->in_contact || !s->targets || !s->push || !s->joint_torque || !s->gain_scale || !s->f ||
        !s->xbar || !s->xbar_dot || !s->reaction || !s->dt_mass || !s->sp || !s->pose || !s->lin_vel || !s->ang_vel || !s->bone_f || !s->bone_tau ||
        (sc_fluid_enabled(fl) && (!s->surf_v || !s->surf_f))) {
        sc_sim_free(s);
        return sc_fail(err, SC_EIO, "out of memory creating the simulation");
    }
    sc_embedding e = {m->nsurf_verts, m->tets, m->surf_tet, m->surf_bary};
    if ((rc = sc_contact_cull_init(&s->cull, &e, m->ntets, m->nnodes, err))) {
        sc_sim_free(s);
        return rc;
    }
    if (m->skin_k && (rc = sc_lbs_plan_init(&s->lbs, m->nnodes, m->rest_pos, m->skin_k, m->skin_bone, m->skin_w, m->joint_pos, m->nbones, err))) {
        sc_sim_free(s);
        return rc;
    }
    for (int i = 0; i < s->nn; i++) s->dt_mass[i] = m->node_bone[i] >= 0 ? 0 : s->o.dt / m->node_mass[i];
    memcpy(s->x, m->rest_pos, n3 * sizeof(double));
    sc_fem_warm_reset(&s->fem, s->warm);
    for (int b = 0; b < s->nb; b++) {
        s->targets[b] = sc_q_identity();
        s->gain_scale[b] = 1;
    }
    sc_skeleton_set_targets(s->skel, s->targets);
    sync_fixed(s);
    *out = s;
    return SC_OK;
}

void sc_sim_translate(sc_sim *s, const double off[3], const double vel[3])
{
    for (int i = 0; i < s->nn; i++)
        for (int k = 0; k < 3; k++) {
            s->x[3 * i + k] += off[k];
            s->v[3 * i + k] = vel[k];
        }
    sc_skeleton_get_state(s->skel, s->pose, s->lin_vel, s->ang_vel);
    for (int b = 0; b < s->nb; b++) {
        s->pose[b].p = sc_v3_add(s->pose[b].p, sc_v3_load(off));
        sc_v3_store(s->lin_vel + 3 * b, sc_v3_load(vel));
        sc_v3_store(s->ang_vel + 3 * b, sc_v3(0, 0, 0));
    }
    sc_skeleton_set_state(s->skel, s->pose, s->lin_vel, s->ang_vel);
    for (int i = 0; i < s->nv; i++) s->in_contact[i] = 0;
    sync_fixed(s);
}

void sc_sim_add_velocity(sc_sim *s, const double dv[3], const double dw[3])
{
    static const double zero[3] = {0, 0, 0};
    if (!dw) dw = zero;
    sc_sim_diag d;
    sc_sim_diagnostics(s, &d);
    sc_vec3 v = sc_v3_load(dv), w = sc_v3_load(dw), c = sc_v3_load(d.com);
    for (int i = 0; i < s->nn; i++) {
        sc_vec3 add = sc_v3_add(v, sc_v3_cross(w, sc_v3_sub(sc_v3_load(s->x + 3 * i), c)));
        sc_v3_store(s->v + 3 * i, sc_v3_add(sc_v3_load(s->v + 3 * i), add));
    }
    sc_skeleton_get_state(s->skel, s->pose, s->lin_vel, s->ang_vel);
    for (int b = 0; b < s->nb; b++) {
        sc_vec3 add = sc_v3_add(v, sc_v3_cross(w, sc_v3_sub(s->pose[b].p, c)));
        sc_v3_store(s->lin_vel + 3 * b, sc_v3_add(sc_v3_load(s->lin_vel + 3 * b), add));
        sc_v3_store(s->ang_vel + 3 * b, sc_v3_add(sc_v3_load(s->ang_vel + 3 * b), w));
    }
    sc_skeleton_set_state(s->skel, s->pose, s->lin_vel, s->ang_vel);
    sync_fixed(s);
}

void sc_sim_set_pose(sc_sim *s, const double root_pos[3], const sc_quat *local, const double root_vel[3], const double *local_ang_vel)
{
    const sc_model *m = s->m;
    for (int b = 0; b < s->nb; b++) {
        int p = m->parent[b];
        sc_vec3 wl = local_ang_vel ? sc_v3_load(local_ang_vel + 3 * b) : sc_v3(0, 0, 0);
        if (p < 0) {
            s->pose[b].q = sc_q_normalize(local[b]);
            s->pose[b].p = sc_v3_load(root_pos);
            sc_v3_store(s->lin_vel + 3 * b, root_vel ? sc_v3_load(root_vel) : sc_v3(0, 0, 0));
            sc_v3_store(s->ang_vel + 3 * b, wl);
            continue;
        }
        /* rest frames are world-aligned: the joint sits at the rest offset in the parent's frame */
        sc_vec3 off = sc_q_rotate(s->pose[p].q, sc_v3_sub(sc_v3_load(m->joint_pos + 3 * b), sc_v3_load(m->joint_pos + 3 * p)));
        sc_vec3 wp = sc_v3_load(s->ang_vel + 3 * p);
        s->pose[b].q = sc_q_normalize(sc_q_mul(s->pose[p].q, local[b]));
        s->pose[b].p = sc_v3_add(s->pose[p].p, off);
        sc_v3_store(s->lin_vel + 3 * b, sc_v3_add(sc_v3_load(s->lin_vel + 3 * p), sc_v3_cross(wp, off)));
        sc_v3_store(s->ang_vel + 3 * b, sc_v3_add(wp, sc_q_rotate(s->pose[p].q, wl)));
    }
    sc_skeleton_set_state(s->skel, s->pose, s->lin_vel, s->ang_vel);
    /* the flesh takes the skinned shape and velocity, stress-free under pose-based plasticity */
    if (m->skin_k) {
        sc_lbs_eval(s->nn, m->rest_pos, m->skin_k, m->skin_bone, m->skin_w, m->joint_pos, s->nb, s->pose, s->lin_vel, s->ang_vel, s->x, s->v, NULL);
    } else { /* without weights: rigidly with the root */
        for (int i = 0; i < s->nn; i++) {
            sc_vec3 r = sc_q_rotate(s->pose[0].q, sc_v3_sub(sc_v3_load(m->rest_pos + 3 * i), sc_v3_load(m->joint_pos)));
            sc_v3_store(s->x + 3 * i, sc_v3_add(s->pose[0].p, r));
            sc_v3_store(s->v + 3 * i, sc_v3_add(sc_v3_load(s->lin_vel), sc_v3_cross(sc_v3_load(s->ang_vel), r)));
        }
    }
    sc_fem_warm_reset(&s->fem, s->warm);
    for (int i = 0; i < s->nv; i++) s->in_contact[i] = 0;
    sync_fixed(s);
}

/* the skeleton at pose0 moved down by `sink`, every bone with velocity (0, vy, 0) or lin0/ang0 */
static void put_skeleton(sc_sim *s, const sc_xform *pose0, double sink, double vy, const double *lin0, const double *ang0)
{
    for (int b = 0; b < s->nb; b++) {
        s->pose[b] = pose0[b];
        s->pose[b].p.y -= sink;
        for (int k = 0; k < 3; k++) {
            s->lin_vel[3 * b + k] = lin0 ? lin0[3 * b + k] : k == 1 ? vy : 0;
            s->ang_vel[3 * b + k] = ang0 ? ang0[3 * b + k] : 0;
        }
    }
    sc_skeleton_set_state(s->skel, s->pose, s->lin_vel, s->ang_vel);
    sync_fixed(s);
}

int sc_sim_settle(sc_sim *s, sc_err *err)
{
    s->start_sink = NAN;
    if (!(s->o.settle > 0)) return SC_OK;
    const size_t n3 = (size_t)s->nn * 3, b3 = (size_t)s->nb * 3;
    sc_xform *pose0 = malloc((size_t)s->nb * sizeof *pose0);
    const size_t ns = sc_skeleton_state_size(s->skel);
    double *vel0 = malloc((2 * b3 + 2 * n3 + ns) * sizeof(double));
    unsigned char *contact0 = malloc((size_t)s->nv + 1);
    if (!pose0 || !vel0 || !contact0) {
        free(pose0);
        free(vel0);
        free(contact0);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    double *lin0 = vel0, *ang0 = lin0 + b3, *x0 = ang0 + b3, *v0 = x0 + n3, *skel0 = v0 + n3;
    sc_skeleton_get_state(s->skel, pose0, lin0, ang0);
    sc_skeleton_save(s->skel, skel0); /* also the servos' last torques, so that a start in flight is restored exactly */
    memcpy(x0, s->x, n3 * sizeof(double));
    memcpy(v0, s->v, n3 * sizeof(double));
    memcpy(contact0, s->in_contact, (size_t)s->nv);
    const double t0 = s->t, mass_damping = 1 - 100 * s->o.dt; /* both motions damped at 100/s */
    const long step0 = s->step, steps = lround(s->o.settle / s->o.dt);
    double mass = 0, y = 0, vy = 0;
    const sc_model *bones = s->lumped ? s->lumped : s->m;
    for (int b = 0; b < s->nb; b++) mass += bones->bone_mass[b];
    for (size_t i = 0; i < n3; i++) s->v[i] = 0;
    put_skeleton(s, pose0, 0, 0, NULL, NULL);
    int rc = SC_OK;
    for (long k = 0; k < steps && !rc; k++) {
        if ((rc = sc_sim_step(s, err))) break;
        /* the skeleton as one body: the mass-weighted vertical velocity of its bones */
        double p = 0;
        for (int b = 0; b < s->nb; b++) {
            double com[3], vc[3];
            sc_skeleton_bone_com(s->skel, b, com, vc);
            p += bones->bone_mass[b] * vc[1];
        }
        vy = p / mass * mass_damping;
        y -= vy * s->o.dt;
        if (y > SC_SETTLE_MAX_SINK) break;
        for (size_t i = 0; i < n3; i++) s->v[i] *= mass_damping;
        put_skeleton(s, pose0, y, vy, NULL, NULL);
    }
    /* carried: the ground holds at least half the weight at the end (damped, a fall is slow) */
    sc_sim_diag d;
    sc_sim_diagnostics(s, &d);
    const double weight = d.mass * sc_v3_norm(sc_v3_load(s->o.gravity));
    const int carried = !rc && y <= SC_SETTLE_MAX_SINK && d.contact_force[1] >= 0.5 * weight;
    sc_skeleton_restore(s->skel, skel0);
    if (carried) {
        put_skeleton(s, pose0, y, 0, lin0, ang0);
        /* the free flesh keeps its settled shape and takes the start's velocities */
        for (int i = 0; i < s->nn; i++)
            if (s->m->node_bone[i] < 0) memcpy(s->v + 3 * i, v0 + 3 * i, 3 * sizeof(double));
        s->start_sink = y;
    } else {
        sync_fixed(s);
        memcpy(s->x, x0, n3 * sizeof(double));
        memcpy(s->v, v0, n3 * sizeof(double));
        memcpy(s->in_contact, contact0, (size_t)s->nv);
        sc_fem_warm_reset(&s->fem, s->warm);
    }
    s->t = t0;
    s->step = step0;
    memset(&s->timing, 0, sizeof s->timing);
    free(pose0);
    free(vel0);
    free(contact0);
    return rc;
}

int sc_sim_set_pose_above_ground(sc_sim *s, const sc_quat *local, double height, const double vel[3], sc_err *err)
{
    const sc_model *m = s->m;
    double root[3] = {m->joint_pos[0], m->joint_pos[1], m->joint_pos[2]}, low = INFINITY;
    double *surf = malloc(((size_t)m->nsurf_verts * 3 + 1) * sizeof *surf);
    if (!surf) return sc_fail(err, SC_EIO, "out of memory");
    sc_sim_set_pose(s, root, local, vel, NULL);
    sc_sim_surface(s, surf);
    for (int i = 0; i < m->nsurf_verts; i++) low = fmin(low, sc_ground_height(&s->o.contact.ground, sc_v3_load(surf + 3 * i), NULL));
    free(surf);
    root[1] += height - low;
    sc_sim_set_pose(s, root, local, vel, NULL);
    return SC_OK;
}

void sc_sim_set_gravity(sc_sim *s, const double g[3])
{
    memcpy(s->o.gravity, g, 3 * sizeof(double));
    sc_skeleton_set_gravity(s->skel, g);
}

void sc_sim_set_targets(sc_sim *s, const sc_quat *local)
{
    memcpy(s->targets, local, (size_t)s->nb * sizeof *local);
    sc_skeleton_set_targets(s->skel, local);
}

void sc_sim_set_joint_torques(sc_sim *s, const double *tau) { memcpy(s->joint_torque, tau, 3 * (size_t)s->nb * sizeof *tau); }

void sc_sim_set_gain_scale(sc_sim *s, const double *scale)
{
    memcpy(s->gain_scale, scale, (size_t)s->nb * sizeof *scale);
    sc_skeleton_set_gain_scale(s->skel, scale);
}

static void embed(const sc_model *m, const double *nodes, double *out)
{
    for (int i = 0; i < m->nsurf_verts; i++) {
        const int *t = m->tets + 4 * m->surf_tet[i];
        const double *w = m->surf_bary + 4 * i;
        for (int k = 0; k < 3; k++)
            out[3 * i + k] = w[0] * nodes[3 * t[0] + k] + w[1] * nodes[3 * t[1] + k] + w[2] * nodes[3 * t[2] + k] + w[3] * nodes[3 * t[3] + k];
    }
}

void sc_sim_surface(const sc_sim *s, double *out) { embed(s->m, s->x, out); }

/* 1. kinematics: fixed nodes, x~ and its velocity ([L13] eq. 12-13); pose-based damping
 * (eq. 17) node by node as x~ is formed, its reaction on x~ weighted per skinning pair for
 * eq. 18 (in place of the pair's spent terms). The fixed nodes and s->pose already follow the
 * skeleton: the last step and every function that moves the skeleton end with sync_fixed. */
static void step_kinematics(sc_sim *s)
{
    const sc_model *m = s->m;
    const sc_sim_opts *o = &s->o;
    int nn = s->nn;
    memset(s->f, 0, (size_t)nn * 3 * sizeof(double));
    const int pose_shape = o->plasticity || o->damping == SC_DAMP_POSE, pose_damp = o->damping == SC_DAMP_POSE;
    if (pose_shape) {
        sc_lbs_plan *p = &s->lbs;
        const size_t np = (size_t)p->npairs;
        double *wfx = p->buf, *wfy = wfx + np, *wfz = wfy + np;
        sc_lbs_plan_terms(p, s->pose, s->lin_vel, s->ang_vel);
        for (int i = 0; i < nn; i++) {
            double *xb = s->xbar + 3 * i, xbd[3], f[3];
            sc_lbs_plan_node(p, i, xb, xbd);
            if (!pose_damp) continue;
            sc_fem_pose_damping_node(m->node_mass[i], s->x + 3 * i, s->v + 3 * i, xb, xbd, o->pose_damping, f);
            s->f[3 * i] = f[0];
            s->f[3 * i + 1] = f[1];
            s->f[3 * i + 2] = f[2];
            const int *pq = p->pair_of + (size_t)i * p->k;
            for (int k = 0; k < p->k; k++) {
                const int q = pq[k];
                if (q < 0) continue;
                wfx[q] = -(p->w[q] * f[0]);
                wfy[q] = -(p->w[q] * f[1]);
                wfz[q] = -(p->w[q] * f[2]);
            }
        }
    }
}

/* 2. damping forces: pose-based reactions to the bones (eq. 18), or Rayleigh on the nodes */
static void step_damping(sc_sim *s)
{
    const sc_model *m = s->m;
    const sc_sim_opts *o = &s->o;
    int nb = s->nb;
    const int pose_damp = o->damping == SC_DAMP_POSE;
    memset(s->bone_f, 0, (size_t)nb * 3 * sizeof(double));
    memset(s->bone_tau, 0, (size_t)nb * 3 * sizeof(double));
    if (pose_damp) { /* the reactions act on the virtual nodes x~: to the bones by eq. 18 */
        sc_lbs_plan_jacobian_transpose_weighted(&s->lbs, s->lbs.buf, s->bone_f, s->bone_tau);
    } else if (o->damping == SC_DAMP_RAYLEIGH) {
        sc_fem_rayleigh_damping(&s->fem, m->node_mass, s->v, s->warm, o->rayleigh_alpha, o->rayleigh_beta, s->f);
    }
}

/* 2. contact forces on the surface */
static void step_contact(sc_sim *s)
{
    const sc_model *m = s->m;
    const sc_sim_opts *o = &s->o;
    if (o->contact.enabled) {
        sc_embedding e = {m->nsurf_verts, m->tets, m->surf_tet, m->surf_bary};
        sc_contact_forces_culled(&o->contact, &e, &s->cull, s->x, s->v, s->anchor, s->in_contact, s->f, &s->contact);
    } else {
        memset(&s->contact, 0, sizeof s->contact);
    }
}

/* 2. fluid drag ([P17] 4.2.2, sim/fluid.h) on the fine surface's triangles, from the vertices'
 * embedded motion, and back to the tet nodes by J_phi^T as the contact forces are */
static void step_fluid(sc_sim *s)
{
    const sc_model *m = s->m;
    if (!s->surf_f) return;
    const size_t v3 = 3 * (size_t)s->nv;
    embed(m, s->x, s->sp);
    embed(m, s->v, s->surf_v);
    memset(s->surf_f, 0, v3 * sizeof(double));
    sc_fluid_forces(&s->o.fluid, m->nsurf_tris, m->surf_tris, s->sp, s->surf_v, s->surf_f, NULL);
    const sc_embedding e = {m->nsurf_verts, m->tets, m->surf_tet, m->surf_bary};
    for (int i = 0; i < s->nv; i++) {
        const sc_vec3 fv = sc_v3_load(s->surf_f + 3 * i);
        if (fv.x != 0 || fv.y != 0 || fv.z != 0) sc_embedding_to_nodes(&e, i, fv, s->f);
    }
}

/* 3. coupling: forces on fixed nodes to their bones (gravity of fixed nodes is the bones' own),
 * summed per bone into a force at its centre of mass and a torque about it */
static void step_coupling(sc_sim *s)
{
    const sc_model *m = s->m;
    const sc_sim_opts *o = &s->o;
    int nb = s->nb;
    double com[SC_SIM_MAX_BONES][3], bf[SC_SIM_MAX_BONES][3], bt[SC_SIM_MAX_BONES][3];
    for (int b = 0; b < nb; b++) {
        sc_skeleton_bone_com(s->skel, b, com[b], NULL);
        for (int k = 0; k < 3; k++) bf[b][k] = bt[b][k] = 0;
    }
    for (int i = 0; i < m->nfixed; i++) {
        const int n = m->fixed_node[i], b = m->fixed_bone[i];
        const double *f = s->f + 3 * n, *x = s->x + 3 * n;
        const double r0 = x[0] - com[b][0], r1 = x[1] - com[b][1], r2 = x[2] - com[b][2];
        bf[b][0] += f[0];
        bf[b][1] += f[1];
        bf[b][2] += f[2];
        bt[b][0] += r1 * f[2] - r2 * f[1];
        bt[b][1] += r2 * f[0] - r0 * f[2];
        bt[b][2] += r0 * f[1] - r1 * f[0];
    }
    for (int b = 0; b < nb; b++) {
        if (o->damping == SC_DAMP_POSE) { /* eq. 18 gave force and torque about the bone's origin */
            const double *f = s->bone_f + 3 * b, *t = s->bone_tau + 3 * b;
            const double r0 = s->pose[b].p.x - com[b][0], r1 = s->pose[b].p.y - com[b][1], r2 = s->pose[b].p.z - com[b][2];
            bf[b][0] += f[0];
            bf[b][1] += f[1];
            bf[b][2] += f[2];
            bt[b][0] += t[0] + (r1 * f[2] - r2 * f[1]);
            bt[b][1] += t[1] + (r2 * f[0] - r0 * f[2]);
            bt[b][2] += t[2] + (r0 * f[1] - r1 * f[0]);
        }
        const double *push = s->push + 3 * b; /* at the centre of mass */
        bf[b][0] += push[0];
        bf[b][1] += push[1];
        bf[b][2] += push[2];
        sc_skeleton_add_force_at(s->skel, b, bf[b], com[b]);
        sc_skeleton_add_torque(s->skel, b, bt[b]);
    }
}

/* 4. the free nodes' symplectic Euler step: every node in one branch-free pass (the fixed ones
 * are set from their bones after the skeleton's step, sync_fixed) */
static void step_nodes(sc_sim *s)
{
    const sc_sim_opts *o = &s->o;
    int nn = s->nn;
    const double dt = o->dt, g0 = dt * o->gravity[0], g1 = dt * o->gravity[1], g2 = dt * o->gravity[2];
    for (int i = 0; i < nn; i++) {
        const double im = s->dt_mass[i];
        double *v = s->v + 3 * i, *x = s->x + 3 * i;
        const double *f = s->f + 3 * i;
        v[0] += im * f[0] + g0;
        v[1] += im * f[1] + g1;
        v[2] += im * f[2] + g2;
        x[0] += dt * v[0];
        x[1] += dt * v[1];
        x[2] += dt * v[2];
    }
}

/* Blow-up detection: one branch-free pass; nonzero when a node is not finite or too fast. */
static int nodes_blown_up(const sc_sim *s)
{
    const sc_sim_opts *o = &s->o;
    int nn = s->nn;
    const double vmax2 = o->max_speed * o->max_speed;
    int bad = 0;
    for (int i = 0; i < 3 * nn; i += 3) {
        const double vx = s->v[i], vy = s->v[i + 1], vz = s->v[i + 2];
        bad |= !(vx * vx + vy * vy + vz * vz <= vmax2) | !(s->x[i] * 0 == 0) | !(s->x[i + 1] * 0 == 0) | !(s->x[i + 2] * 0 == 0);
    }
    return bad;
}

/* The slow pass after nodes_blown_up, naming the node; and too many inverted tets. */
static int check_blow_up(const sc_sim *s, int bad, sc_err *err)
{
    const sc_model *m = s->m;
    const sc_sim_opts *o = &s->o;
    int nn = s->nn;
    const double vmax2 = o->max_speed * o->max_speed;
    for (int i = 0; bad && i < nn; i++) {
        double vx = s->v[3 * i], vy = s->v[3 * i + 1], vz = s->v[3 * i + 2];
        double v2 = vx * vx + vy * vy + vz * vz;
        if (!isfinite(v2) || !isfinite(s->x[3 * i]) || !isfinite(s->x[3 * i + 1]) || !isfinite(s->x[3 * i + 2]))
            return sc_fail(err, SC_ENUMERIC, "step %ld, t = %.4f s: node %d has a non-finite position or velocity", s->step, s->t, i);
        if (v2 > vmax2)
            return sc_fail(err, SC_ENUMERIC, "step %ld, t = %.4f s: node %d moves at %.3g m/s, above simulation.max_speed = %g m/s", s->step, s->t, i,
                           sqrt(v2), o->max_speed);
    }
    if (s->fem_stats.inverted > o->max_inverted * m->ntets)
        return sc_fail(err, SC_ENUMERIC,
                       "step %ld, t = %.4f s: %d of %d tets are inverted (worst: tet %d, det F = %.3g), above simulation.max_inverted = %g", s->step,
                       s->t, s->fem_stats.inverted, m->ntets, s->fem_stats.worst_tet, s->fem_stats.worst_det, o->max_inverted);
    return SC_OK;
}

/* a torque pair at bone b's joint: +tau on the bone, -tau on its parent (no net force or torque) */
static void add_joint_torque(sc_sim *s, int b, const double tau[3])
{
    const double minus[3] = {-tau[0], -tau[1], -tau[2]};
    sc_skeleton_add_torque(s->skel, b, tau);
    sc_skeleton_add_torque(s->skel, s->m->parent[b], minus);
}

/* Motor noise (sc_motor_noise_opts): a torque pair on each servo's joint, drawn from a stream
 * keyed by the step, so a restored snapshot draws the same. */
static void step_motor_noise(sc_sim *s)
{
    const sc_motor_noise_opts *n = &s->o.motor_noise;
    if (!(n->b > 0)) return;
    double tau[3 * SC_SIM_MAX_BONES];
    sc_skeleton_motor_torques(s->skel, tau);
    sc_rng rng;
    sc_rng_init(&rng, n->seed, (uint32_t)s->step, (uint32_t)((uint64_t)s->step >> 32));
    for (int b = 1; b < s->nb; b++) {
        const double limit = s->m->torque_limit ? s->m->torque_limit[b] : 0, *t = tau + 3 * b;
        const double sigma = limit > 0 && isfinite(limit) ? n->b * sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]) / limit : 0;
        double e[3];
        for (int k = 0; k < 3; k++) e[k] = sigma * sc_rng_normal(&rng);
        add_joint_torque(s, b, e);
    }
}

/* The controller's joint torques beyond the servos (sc_sim_set_joint_torques). */
static void step_joint_torques(sc_sim *s)
{
    for (int b = 1; b < s->nb; b++) {
        const double *t = s->joint_torque + 3 * b;
        if (t[0] != 0 || t[1] != 0 || t[2] != 0) add_joint_torque(s, b, t);
    }
}

/* RIGID: the skeleton alone meets the ground; the flesh rides on it (no FEM step). */
static int step_rigid(sc_sim *s, sc_err *err)
{
    const double t0 = sc_wall_time();
    step_motor_noise(s);
    step_joint_torques(s);
    for (int b = 0; b < s->nb; b++) {
        double com[3];
        sc_skeleton_bone_com(s->skel, b, com, NULL);
        sc_skeleton_add_force_at(s->skel, b, s->push + 3 * b, com);
    }
    const int rc = sc_skeleton_step(s->skel, s->o.dt, err);
    const double t1 = sc_wall_time();
    s->t += s->o.dt;
    s->step++;
    if (rc) return sc_err_prefix(err, "step %ld, t = %.4f s: ", s->step, s->t);
    sc_skeleton_rigid_contact(s->skel, &s->contact);
    sync_fixed(s);
    const double t2 = sc_wall_time();
    s->timing.ode += t1 - t0;
    s->timing.integrate += t2 - t1;
    s->timing.total += t2 - t0;
    s->timing.steps++;
    return SC_OK;
}

int sc_sim_step(sc_sim *s, sc_err *err)
{
    if (is_rigid(s)) return step_rigid(s, err);
    const sc_sim_opts *o = &s->o;
    double t0 = sc_wall_time(), t1;
    step_kinematics(s);
    t1 = sc_wall_time();
    s->timing.skin += t1 - t0;

    /* 2. forces */
    sc_fem_elastic_forces(&s->fem, s->x, o->plasticity ? s->xbar : NULL, s->warm, s->f, &s->fem_stats);
    double t2 = sc_wall_time();
    s->timing.fem += t2 - t1;
    step_damping(s);
    double t3 = sc_wall_time();
    s->timing.damping += t3 - t2;
    step_contact(s);
    double t4 = sc_wall_time();
    s->timing.contact += t4 - t3;
    step_fluid(s);
    double t4f = sc_wall_time();
    s->timing.fluid += t4f - t4;
    step_coupling(s);
    double t5 = sc_wall_time();
    s->timing.coupling += t5 - t4f;

    /* 4. integrate: free nodes (symplectic Euler), then the skeleton */
    step_nodes(s);
    step_motor_noise(s);
    step_joint_torques(s);
    double t6 = sc_wall_time();
    int rc = sc_skeleton_step(s->skel, o->dt, err);
    double t7 = sc_wall_time();
    s->timing.ode += t7 - t6;
    s->t += o->dt;
    s->step++;
    if (rc) return sc_err_prefix(err, "step %ld, t = %.4f s: ", s->step, s->t);
    sync_fixed(s);
    int bad = nodes_blown_up(s);
    double t8 = sc_wall_time();
    s->timing.integrate += (t6 - t5) + (t8 - t7);
    s->timing.total += t8 - t0;
    s->timing.steps++;
    return check_blow_up(s, bad, err);
}

void sc_sim_diagnostics(const sc_sim *s, sc_sim_diag *d)
{
    const sc_model *m = s->lumped ? s->lumped : s->m; /* RIGID: every node is in a bone's mass */
    const int rigid = is_rigid(s);
    memset(d, 0, sizeof *d);
    sc_xform *pose = s->pose;
    double g[3] = {s->o.gravity[0], s->o.gravity[1], s->o.gravity[2]};
    /* free nodes + bones (fixed nodes are the bones' mass) */
    sc_vec3 P = sc_v3(0, 0, 0), C = sc_v3(0, 0, 0);
    double M = 0;
    for (int i = 0; i < s->nn; i++) {
        if (rigid || m->node_bone[i] >= 0) continue;
        double mi = m->node_mass[i];
        sc_vec3 x = sc_v3_load(s->x + 3 * i), v = sc_v3_load(s->v + 3 * i);
        M += mi;
        C = sc_v3_axpy(mi, x, C);
        P = sc_v3_axpy(mi, v, P);
        d->kinetic += 0.5 * mi * sc_v3_dot(v, v);
        d->potential -= mi * sc_v3_dot(sc_v3_load(g), x);
    }
    sc_vec3 bc[SC_SIM_MAX_BONES], bv[SC_SIM_MAX_BONES];
    for (int b = 0; b < s->nb; b++) {
        double com[3], cv[3];
        sc_skeleton_bone_com(s->skel, b, com, cv);
        bc[b] = sc_v3_load(com);
        bv[b] = sc_v3_load(cv);
        double mb = m->bone_mass[b];
        M += mb;
        C = sc_v3_axpy(mb, bc[b], C);
        P = sc_v3_axpy(mb, bv[b], P);
        sc_mat3 r = sc_q_to_m3(pose[b].q), ib;
        memcpy(ib.m, m->bone_inertia + 9 * b, sizeof ib.m);
        sc_vec3 w = sc_v3_load(s->ang_vel + 3 * b);
        sc_vec3 iw = sc_m3_mulv(sc_m3_mul(r, sc_m3_mul_nt(ib, r)), w);
        d->kinetic += 0.5 * mb * sc_v3_dot(bv[b], bv[b]) + 0.5 * sc_v3_dot(w, iw);
        d->potential -= mb * sc_v3_dot(sc_v3_load(g), bc[b]);
        sc_v3_store(d->angular, sc_v3_add(sc_v3_load(d->angular), iw)); /* spin part, summed below with the orbital part */
    }
    C = sc_v3_scale(C, 1 / M);
    sc_vec3 L = sc_v3_load(d->angular);
    for (int i = 0; i < s->nn; i++) {
        if (rigid || m->node_bone[i] >= 0) continue;
        sc_vec3 r = sc_v3_sub(sc_v3_load(s->x + 3 * i), C);
        L = sc_v3_add(L, sc_v3_scale(sc_v3_cross(r, sc_v3_load(s->v + 3 * i)), m->node_mass[i]));
    }
    for (int b = 0; b < s->nb; b++) L = sc_v3_add(L, sc_v3_scale(sc_v3_cross(sc_v3_sub(bc[b], C), bv[b]), m->bone_mass[b]));
    sc_v3_store(d->linear, P);
    sc_v3_store(d->angular, L);
    sc_v3_store(d->com, C);
    d->mass = M;
    d->elastic = s->fem_stats.elastic_energy;
    sc_v3_store(d->contact_force, s->contact.total_force);
    d->contacts = s->contact.count;
    d->inverted = s->fem_stats.inverted;
}

int sc_sim_bone_touches(const sc_sim *s, int bone)
{
    if (is_rigid(s)) return sc_skeleton_bone_contact_force(s->skel, bone) > 0;
    for (int i = 0; i < s->nv; i++)
        if (s->in_contact[i] && s->vert_bone[i] == bone) return 1;
    return 0;
}

double sc_sim_bone_load(const sc_sim *s, int bone)
{
    if (is_rigid(s)) return sc_skeleton_bone_contact_force(s->skel, bone);
    int mine = 0, all = 0;
    for (int i = 0; i < s->nv; i++)
        if (s->in_contact[i]) {
            all++;
            mine += s->vert_bone[i] == bone;
        }
    return all ? s->contact.normal_force * mine / all : 0;
}

void sc_sim_warnings_get(const sc_sim *s, sc_sim_warnings *w)
{
    w->fem_fallbacks = s->fem_fallbacks;
    w->ode_messages = sc_skeleton_ode_messages(s->skel, &w->last_ode_message);
}

/* ---- snapshots -------------------------------------------------------------------------- */

typedef struct snapshot_header {
    char magic[8];
    uint32_t layout, kernel;
    uint64_t model_hash, options_hash, build_hash;
    uint64_t payload_bytes, checksum;
} snapshot_header;
static const char snapshot_magic[8] = {'S', 'C', 'S', 'N', 'A', 'P', 0, 1};

uint64_t sc_sim_build_hash(void)
{
    uint64_t h = SC_HASH_INIT;
    const char *parts[] = {SC_VERSION, SC_GIT_REV, __VERSION__};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) h = sc_hash_bytes(h, parts[i], strlen(parts[i]) + 1);
    return sc_hash_i64(h, sc_fem_simd_width());
}

/* Everything in the options that changes a step, field by field (struct padding is not hashed).
 * Gravity is state (sc_sim_set_gravity), carried in the snapshot instead. */
static uint64_t options_hash(const sc_sim_opts *o)
{
    uint64_t h = SC_HASH_INIT;
    const sc_contact_opts *c = &o->contact;
    const sc_skeleton_opts *k = &o->skeleton;
    double d[] = {o->dt,
                  o->pose_damping,
                  o->rayleigh_alpha,
                  o->rayleigh_beta,
                  o->max_speed,
                  o->max_inverted,
                  c->stiffness,
                  c->damping,
                  c->mu,
                  c->tangent_stiffness,
                  c->tangent_damping,
                  c->ground.normal.x,
                  c->ground.normal.y,
                  c->ground.normal.z,
                  c->ground.offset,
                  c->ground.bump_height,
                  c->ground.bump_length,
                  k->erp,
                  k->cfm};
    int64_t i[] = {o->plasticity, o->fem_single, o->damping,         c->enabled,    k->exact_solver,
                   k->iterations, k->fix_root,   k->finite_rotation, k->speculative};
    for (size_t j = 0; j < sizeof d / sizeof *d; j++) h = sc_hash_f64(h, d[j]);
    for (size_t j = 0; j < sizeof i / sizeof *i; j++) h = sc_hash_i64(h, i[j]);
    if (o->settle > 0) h = sc_hash_f64(h, o->settle); /* hashes from before the option stay valid */
    if (o->contact_model != SC_CONTACT_SOFT) {
        h = sc_hash_i64(h, o->contact_model);
        h = sc_hash_f64(sc_hash_f64(sc_hash_f64(h, o->rigid.erp), o->rigid.cfm), o->rigid.spacing);
        if (o->rigid_shape != SC_RIGID_BOX) h = sc_hash_i64(h, o->rigid_shape); /* box keeps its hashes */
    }
    if (o->contact_model == SC_CONTACT_LAYER) h = sc_hash_i64(sc_hash_f64(h, o->layer.thickness), (int64_t)o->layer.bones);
    if (o->motor_noise.b > 0) h = sc_hash_i64(sc_hash_f64(h, o->motor_noise.b), (int64_t)o->motor_noise.seed);
    h = sc_fluid_hash(h, &o->fluid); /* likewise: a run out of the fluid keeps its hash */
    /* likewise: a floor without tiles keeps its hash */
    if (c->ground.tile_size > 0) {
        h = sc_hash_f64(h, c->ground.tile_size);
        h = sc_hash_f64(h, c->ground.tile_height);
        h = sc_hash_i64(h, (int64_t)c->ground.tile_seed);
    }
    for (int b = 0; b < c->ground.nboxes; b++)
        for (int a = 0; a < 3; a++) h = sc_hash_f64(sc_hash_f64(h, c->ground.box_lo[b][a]), c->ground.box_hi[b][a]);
    return h;
}

enum { DIAG_F64 = 6, DIAG_I64 = 7 };

static size_t fixed_payload_doubles(const sc_sim *s)
{
    return 2 + 3 + 6 * (size_t)s->nn + sc_fem_warm_size(&s->fem) + 11 * (size_t)s->nb + sc_skeleton_state_size(s->skel) + DIAG_F64 + DIAG_I64 + 1;
}

size_t sc_sim_snapshot_capacity(const sc_sim *s) { return sizeof(snapshot_header) + 8 * (fixed_payload_doubles(s) + 4 * (size_t)s->nv); }

size_t sc_sim_snapshot_save(const sc_sim *s, void *buf, size_t cap)
{
    int ncontact = 0;
    for (int i = 0; i < s->nv; i++) ncontact += s->in_contact[i] != 0;
    size_t payload = 8 * (fixed_payload_doubles(s) + 4 * (size_t)ncontact), total = sizeof(snapshot_header) + payload;
    if (cap < total) return 0;
    unsigned char *base = buf;
    sc_blob_writer w; /* the caller's buffer: no allocation */
    sc_blob_writer_fixed(&w, base + sizeof(snapshot_header), payload);
    size_t n3 = 3 * (size_t)s->nn;
    sc_blob_put(&w, &s->t, 8);
    sc_blob_put_i64(&w, s->step);
    sc_blob_put(&w, s->o.gravity, 24);
    sc_blob_put(&w, s->x, 8 * n3);
    sc_blob_put(&w, s->v, 8 * n3);
    sc_blob_put(&w, s->warm, 8 * sc_fem_warm_size(&s->fem));
    sc_blob_put(&w, s->targets, sizeof(sc_quat) * (size_t)s->nb);
    sc_blob_put(&w, s->push, 24 * (size_t)s->nb);
    sc_blob_put(&w, s->joint_torque, 24 * (size_t)s->nb);
    sc_blob_put(&w, s->gain_scale, 8 * (size_t)s->nb);
    /* the skeleton writes in place (alignment of the spot is irrelevant on x86-64) */
    sc_skeleton_save(s->skel, sc_blob_reserve(&w, 8 * sc_skeleton_state_size(s->skel)));
    const sc_fem_stats *fs = &s->fem_stats;
    const sc_contact_result *cr = &s->contact;
    double df[DIAG_F64] = {fs->elastic_energy, fs->worst_det, cr->total_force.x, cr->total_force.y, cr->total_force.z, cr->max_depth};
    sc_blob_put(&w, df, sizeof df);
    int64_t di[DIAG_I64] = {fs->inverted, fs->worst_tet, fs->fallbacks, fs->newton_steps, cr->count, cr->sliding, cr->obstacles};
    sc_blob_put(&w, di, sizeof di);
    sc_blob_put_i64(&w, ncontact);
    for (int i = 0; i < s->nv; i++) {
        if (!s->in_contact[i]) continue;
        sc_blob_put_i64(&w, i);
        sc_blob_put(&w, s->anchor + 3 * i, 24);
    }
    snapshot_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, snapshot_magic, sizeof h.magic);
    h.layout = SC_SNAPSHOT_LAYOUT;
    h.kernel = (uint32_t)s->fem.kernel; /* SIMD width and precision of the kernel in use */
    h.model_hash = s->model_hash;
    h.options_hash = s->options_hash;
    h.build_hash = sc_sim_build_hash();
    h.payload_bytes = payload;
    h.checksum = sc_hash_words(base + sizeof h, payload);
    memcpy(base, &h, sizeof h);
    return total;
}

int sc_sim_snapshot_restore(sc_sim *s, const void *buf, size_t size, sc_err *err)
{
    snapshot_header h;
    if (size < sizeof h) return sc_fail(err, SC_EINPUT, "snapshot: %zu bytes, shorter than its header", size);
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, snapshot_magic, sizeof h.magic)) return sc_fail(err, SC_EINPUT, "snapshot: not a softcon simulation snapshot");
    if (h.layout != SC_SNAPSHOT_LAYOUT)
        return sc_fail(err, SC_EINPUT, "snapshot: layout version %u, this build reads %d", h.layout, SC_SNAPSHOT_LAYOUT);
    if (h.kernel != (uint32_t)s->fem.kernel)
        return sc_fail(err, SC_EINPUT, "snapshot: made with the %s FEM kernel, this simulation runs %s", sc_fem_kernel_name((int)h.kernel),
                       sc_fem_kernel_name(s->fem.kernel));
    if (h.build_hash != sc_sim_build_hash()) return sc_fail(err, SC_EINPUT, "snapshot: made by another build of softcon");
    if (h.model_hash != s->model_hash) return sc_fail(err, SC_EINPUT, "snapshot: made for another character model");
    if (h.options_hash != s->options_hash) return sc_fail(err, SC_EINPUT, "snapshot: made with other simulation options");
    if (h.payload_bytes != size - sizeof h)
        return sc_fail(err, SC_EINPUT, "snapshot: %zu payload bytes, the header says %llu (truncated?)", size - sizeof h,
                       (unsigned long long)h.payload_bytes);
    const unsigned char *base = buf;
    if (sc_hash_words(base + sizeof h, size - sizeof h) != h.checksum) return sc_fail(err, SC_EINPUT, "snapshot: checksum mismatch (damaged)");
    size_t fixed = 8 * fixed_payload_doubles(s);
    if (size - sizeof h < fixed || (size - sizeof h - fixed) % 32)
        return sc_fail(err, SC_EINPUT, "snapshot: payload of %zu bytes does not fit this simulation", size - sizeof h);
    /* validate the contact list before touching s */
    sc_blob_reader r;
    sc_blob_reader_init(&r, base + sizeof h + fixed - 8, size - sizeof h - fixed + 8);
    int64_t ncontact = sc_blob_get_i64(&r);
    if (ncontact < 0 || ncontact > s->nv || (size_t)ncontact * 32 != r.left)
        return sc_fail(err, SC_EINPUT, "snapshot: %lld contact entries do not fit the payload", (long long)ncontact);
    for (int64_t c = 0; c < ncontact; c++) {
        int64_t i;
        memcpy(&i, r.p + 32 * c, 8);
        if (i < 0 || i >= s->nv) return sc_fail(err, SC_EINPUT, "snapshot: contact vertex %lld out of range", (long long)i);
    }

    sc_blob_reader_init(&r, base + sizeof h, size - sizeof h);
    size_t n3 = 3 * (size_t)s->nn;
    double g[3];
    sc_blob_get(&r, &s->t, 8);
    s->step = (long)sc_blob_get_i64(&r);
    sc_blob_get(&r, g, 24);
    sc_blob_get(&r, s->x, 8 * n3);
    sc_blob_get(&r, s->v, 8 * n3);
    sc_blob_get(&r, s->warm, 8 * sc_fem_warm_size(&s->fem));
    sc_blob_get(&r, s->targets, sizeof(sc_quat) * (size_t)s->nb);
    sc_blob_get(&r, s->push, 24 * (size_t)s->nb);
    sc_blob_get(&r, s->joint_torque, 24 * (size_t)s->nb);
    sc_blob_get(&r, s->gain_scale, 8 * (size_t)s->nb);
    sc_skeleton_set_gain_scale(s->skel, s->gain_scale);
    sc_skeleton_restore(s->skel, sc_blob_take(&r, 8 * sc_skeleton_state_size(s->skel)));
    sc_sim_set_gravity(s, g);
    double df[DIAG_F64];
    int64_t di[DIAG_I64];
    sc_blob_get(&r, df, sizeof df);
    sc_blob_get(&r, di, sizeof di);
    sc_fem_stats *fs = &s->fem_stats;
    sc_contact_result *cr = &s->contact;
    fs->elastic_energy = df[0];
    fs->worst_det = df[1];
    cr->total_force = sc_v3(df[2], df[3], df[4]);
    cr->max_depth = df[5];
    fs->inverted = (int)di[0];
    fs->worst_tet = (int)di[1];
    fs->fallbacks = (int)di[2];
    fs->newton_steps = di[3];
    cr->count = (int)di[4];
    cr->sliding = (int)di[5];
    cr->obstacles = (int)di[6]; /* a sampler's failure test reads it right after a restore */
    sc_blob_take(&r, 8);        /* the contact count, checked above */
    memset(s->in_contact, 0, (size_t)s->nv);
    for (int64_t c = 0; c < ncontact; c++) {
        int64_t i = sc_blob_get_i64(&r);
        sc_blob_get(&r, s->anchor + 3 * i, 24);
        s->in_contact[i] = 1;
    }
    sync_fixed(s); /* the step relies on it (the saved fixed nodes are these to the bit) */
    return SC_OK;
}

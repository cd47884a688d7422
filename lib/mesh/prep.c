#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "io/config.h"
#include "io/paths.h"
#include "mesh/decimate.h"
#include "mesh/fit.h"
#include "mesh/prep.h"

/* A conforming envelope (a boneless body's own surface, decimated): the smallest angle its new
   triangles may have (degrees), and the tets per envelope vertex of the first guess for
   tetgen.target_tets (measured on [T12]'s letters: 4 to 6). */
#define SC_CONFORMING_MIN_ANGLE     20
#define SC_TETS_PER_ENVELOPE_VERTEX 5.0
#define SC_CONFORMING_MAX_ERROR     0.003 /* m: see sc_decimate_opts */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void shift_y(sc_trimesh *m, double dy)
{
    for (int i = 0; i < m->nverts; i++) m->verts[3 * i + 1] += dy;
}

/* Turns a body facing +z (0), -z (1), +x (2) or -x (3) about y to face +z. */
static void turn_to_face_z(sc_trimesh *m, int facing)
{
    static const double ang[4] = {0, 180, -90, 90};
    if (!facing) return;
    sc_quat q = sc_q_axis_angle(sc_v3(0, 1, 0), ang[facing] * SC_PI / 180);
    for (int i = 0; i < m->nverts; i++) sc_v3_store(m->verts + 3 * i, sc_q_rotate(q, sc_v3_load(m->verts + 3 * i)));
}

/* The largest extent of a field's box: the probe spacing of a letter is a 40th of it. */
static double field_size(const sc_field *f)
{
    sc_vec3 d = sc_v3_sub(f->hi, f->lo);
    return fmax(d.x, fmax(d.y, d.z));
}

static int fine_surface(const sc_prep_opts *o, sc_trimesh *fine, double *spacing, sc_err *err)
{
    if (o->body_kind == SC_PREP_BODY_LETTER) { /* [T12]'s letters: the isosurface of the strokes' distance field */
        sc_field f = sc_letter_field(&o->letter);
        double h = sc_iso_spacing_for(&f, 0, o->surface_target, field_size(&f) / 40, err);
        if (h < 0) return err->code;
        sc_iso_opts io = {h, 0, 0, 3, 2, 0};
        *spacing = h;
        return sc_isosurface(&f, &io, fine, err);
    }
    if (o->body_kind == SC_PREP_BODY_OBJ) {
        sc_obj_info info;
        int rc = sc_obj_load_ex(o->body_obj, fine, &info, err);
        if (rc) return rc;
        for (int i = 0; i < 3 * fine->nverts; i++) fine->verts[i] *= o->body_scale;
        turn_to_face_z(fine, o->facing);
        *spacing = 0;
        /* before any work: the body must be closed, and of a person's size in metres (an OBJ in
           other units would otherwise run the whole build and fail far from the cause) */
        char where[sizeof o->body_obj + sizeof o->body_where + 8];
        snprintf(where, sizeof where, "%s (%s)", o->body_obj, o->body_where);
        rc = sc_surface_validate_closed(fine, o->body_obj, err);
        /* a person's height is checked where a skeleton goes into the body; a boneless body may be any size */
        if (!rc && o->rig.nbones > 0) rc = sc_body_size_check(fine, o->body_scale, where, err);
        if (rc) sc_trimesh_free(fine);
        return rc;
    }
    sc_body_params bp = {o->body_kind, o->girth};
    sc_implicit body;
    int rc = sc_body_build(&o->rig, &bp, &body, err);
    if (rc) return rc;
    sc_field f = sc_implicit_field(&body);
    double h = sc_iso_spacing_for(&f, 0, o->surface_target, sc_rig_height(&o->rig) / 40, err);
    if (h < 0) {
        sc_implicit_free(&body);
        return err->code;
    }
    sc_iso_opts io = {h, 0, 0, 3, 2, 0};
    rc = sc_isosurface(&f, &io, fine, err);
    sc_implicit_free(&body);
    *spacing = h;
    return rc;
}

/* Raises the free nodes to floors e*u[i] and rescales all free nodes by one factor s (found by
 * bisection) so that their total stays: m_i' = max(s m_i, e u_i). Writes out (may be NULL) and
 * returns the mass moved between nodes (half the summed |m_i' - m_i|), or a negative value if
 * the floors alone exceed the free mass. */
static double apply_floors(const sc_model *m, const double *mass, const double *u, double e, double *out, int *raised)
{
    double total = 0, floors = 0;
    for (int i = 0; i < m->nnodes; i++)
        if (m->node_bone[i] < 0) {
            total += mass[i];
            floors += e * u[i];
        }
    if (floors >= total) return -1;
    double lo = 0, hi = 1;
    for (int it = 0; it < 60; it++) {
        double s = 0.5 * (lo + hi), sum = 0;
        for (int i = 0; i < m->nnodes; i++)
            if (m->node_bone[i] < 0) sum += fmax(s * mass[i], e * u[i]);
        if (sum > total) hi = s;
        else lo = s;
    }
    double moved = 0;
    if (raised) *raised = 0;
    for (int i = 0; i < m->nnodes; i++) {
        if (m->node_bone[i] >= 0) continue;
        double mi = fmax(lo * mass[i], e * u[i]);
        if (raised && e * u[i] > lo * mass[i]) (*raised)++;
        moved += 0.5 * fabs(mi - mass[i]);
        if (out) out[i] = mi;
    }
    return moved;
}

/* Explicit-stability mass floor. Symplectic Euler is stable while dt w_max <= 2, and
 * w_max^2 <= max_i (sum_j |K_ij|) / m_i (Gershgorin on M^-1 K, K the linear elastic stiffness
 * at the rest shape; measured, the bound is about 2x conservative in E). Free nodes are raised
 * to m_i >= (dt/2)^2 sum_j |K_ij| at modulus *youngs, which is lowered (and returned through
 * it) when that would move more than max_moved of the free mass. Returns the raised nodes. */
static int stiffness_mass_floor(const sc_model *m, double *youngs, double poisson, double dt, double max_moved, double *node_mass, double *moved)
{
    int nn = m->nnodes, raised = 0;
    double *u = calloc((size_t)nn, sizeof *u);
    if (!u) return -1;
    /* floors per unit modulus: they scale with E */
    double mu = 1 / (2 * (1 + poisson)), lambda = poisson / ((1 + poisson) * (1 - 2 * poisson));
    for (int e = 0; e < m->ntets; e++) {
        const int *tn = m->tets + 4 * e;
        sc_vec3 x0 = sc_v3_load(m->rest_pos + 3 * tn[0]);
        sc_mat3 d = sc_m3_from_cols(sc_v3_sub(sc_v3_load(m->rest_pos + 3 * tn[1]), x0), sc_v3_sub(sc_v3_load(m->rest_pos + 3 * tn[2]), x0),
                                    sc_v3_sub(sc_v3_load(m->rest_pos + 3 * tn[3]), x0));
        double det = sc_m3_det(d);
        sc_mat3 di;
        if (!sc_m3_inverse(d, &di)) continue; /* degenerate: no stiffness */
        sc_vec3 g[4];                         /* shape-function gradients: rows of D^-1, node 0 minus their sum */
        for (int k = 0; k < 3; k++) g[k + 1] = sc_v3(di.m[k][0], di.m[k][1], di.m[k][2]);
        g[0] = sc_v3_scale(sc_v3_add(g[1], sc_v3_add(g[2], g[3])), -1);
        double vol = fabs(det) / 6;
        for (int a = 0; a < 4; a++) {
            double row = 0;
            for (int b = 0; b < 4; b++) { /* |K_ab|_inf, K_ab = V (mu (ga.gb) I + mu gb ga^T + lambda ga gb^T) */
                double gg = sc_v3_dot(g[a], g[b]), best = 0;
                for (int r = 0; r < 3; r++) {
                    double sum = 0;
                    for (int c = 0; c < 3; c++)
                        sum += fabs((r == c ? mu * gg : 0) + mu * sc_v3_get(g[b], r) * sc_v3_get(g[a], c) +
                                    lambda * sc_v3_get(g[a], r) * sc_v3_get(g[b], c));
                    best = fmax(best, sum);
                }
                row += vol * best;
            }
            u[tn[a]] += row * 0.25 * dt * dt;
        }
    }
    double free_mass = 0;
    for (int i = 0; i < nn; i++)
        if (m->node_bone[i] < 0) free_mass += node_mass[i];
    double e = *youngs, mv = apply_floors(m, node_mass, u, e, NULL, NULL);
    if (mv < 0 || mv > max_moved * free_mass) { /* the largest modulus within the budget */
        double lo = 0, hi = e;
        for (int it = 0; it < 50; it++) {
            double mid = 0.5 * (lo + hi), x = apply_floors(m, node_mass, u, mid, NULL, NULL);
            if (x >= 0 && x <= max_moved * free_mass) lo = mid;
            else hi = mid;
        }
        e = lo;
    }
    *moved = apply_floors(m, node_mass, u, e, node_mass, &raised);
    *youngs = e;
    free(u);
    return raised;
}

/* A letter without its rounded edges, stood where the fine surface was (dy): the surface a
   letter's conforming envelope is made on. */
typedef struct {
    sc_letter sharp;
    double dy;
} sharp_letter;

static double sharp_eval(const void *ctx, sc_vec3 p)
{
    const sharp_letter *s = ctx;
    return sc_letter_eval(&s->sharp, sc_v3(p.x, p.y - s->dy, p.z));
}

/* A boneless body's conforming envelope (envelope.offset 0): the body's own surface decimated
   to about nverts vertices (quadric error collapses keep its flat faces, edges and base), so the
   tet mesh is the body and stands where it stands. A letter's is its strokes *without* the
   rounded edges (extracted as the fine surface was, at spacing h), decimated on their planes:
   the envelope's edges are sharp and the rounded letter inside it, and where strokes meet (they
   touch, face to face) there is a plain concave edge, not the rounded strokes' narrow groove. The
   collapses are checked locally only: where the result intersects itself it is made again with
   15 % more vertices (and a letter's on a shifted grid), up to 3 times. */
static int conforming_envelope_once(const sc_prep_opts *o, const sc_trimesh *fine, double dy, double h, int attempt, int nverts, sc_trimesh *env,
                                    sc_err *err)
{
    sharp_letter sl = {o->letter, dy};
    sl.sharp.round = 0;
    sc_field sharp = {sharp_eval, &sl, sc_v3_add(o->letter.lo, sc_v3(0, dy, 0)), sc_v3_add(o->letter.hi, sc_v3(0, dy, 0))};
    sc_decimate_opts dopt = {nverts, SC_CONFORMING_MIN_ANGLE, SC_CONFORMING_MAX_ERROR, NULL, 0};
    int rc;
    if (o->body_kind == SC_PREP_BODY_LETTER) {
        sc_iso_opts io = {h, 0, 0.37 * attempt, 3, 2, 0};
        if ((rc = sc_isosurface(&sharp, &io, env, err))) return rc;
        dopt.surface = &sharp;
        /* its edges cut by the grid: the chords there reach inside by up to about h / 3 */
        dopt.max_inside = h / 3 + SC_CONFORMING_MAX_ERROR;
    } else {
        env->nverts = fine->nverts;
        env->ntris = fine->ntris;
        env->verts = malloc((size_t)fine->nverts * 3 * sizeof *env->verts);
        env->tris = malloc((size_t)fine->ntris * 3 * sizeof *env->tris);
        if (!env->verts || !env->tris) {
            sc_trimesh_free(env);
            return sc_fail(err, SC_EIO, "out of memory");
        }
        memcpy(env->verts, fine->verts, (size_t)fine->nverts * 3 * sizeof *env->verts);
        memcpy(env->tris, fine->tris, (size_t)fine->ntris * 3 * sizeof *env->tris);
    }
    rc = sc_trimesh_decimate(env, &dopt, NULL, err);
    if (!rc) rc = sc_surface_validate(env, "the envelope (the body decimated)", err);
    if (rc) sc_trimesh_free(env);
    return rc;
}

static int conforming_envelope(const sc_prep_opts *o, const sc_trimesh *fine, double dy, double h, int nverts, sc_trimesh *env, double *spacing,
                               sc_err *err)
{
    int rc = SC_OK;
    for (int attempt = 0; attempt < 4; attempt++, nverts = (int)lround(1.15 * nverts)) {
        if (!(rc = conforming_envelope_once(o, fine, dy, h, attempt, nverts, env, err))) break;
        if (rc != SC_EINPUT) return rc;
        sc_log_debug("mesh-prep: %s; decimating again to %d vertices", err->msg, (int)lround(1.15 * nverts));
    }
    if (rc) return sc_err_prefix(err, "envelope.offset 0 (the body itself): ");
    double len = 0; /* mean edge length */
    for (int t = 0; t < env->ntris; t++)
        for (int k = 0; k < 3; k++)
            len += sc_v3_dist(sc_v3_load(env->verts + 3 * env->tris[3 * t + k]), sc_v3_load(env->verts + 3 * env->tris[3 * t + (k + 1) % 3]));
    *spacing = len / (3.0 * env->ntris);
    return SC_OK;
}

/* Whether the envelope is the body itself (a boneless body with envelope.offset 0). */
static int conforming(const sc_prep_opts *o) { return o->rig.nbones == 0 && !o->envelope_obj[0] && o->envelope.offset == 0; }

/* The first guess of a conforming envelope's vertices for target_tets tets (TetGen keeps the
   boundary: the count follows its size). */
static int conforming_vertices(const sc_prep_opts *o)
{
    return o->envelope.target_vertices > 0 ? o->envelope.target_vertices : (int)fmax(50, o->target_tets / SC_TETS_PER_ENVELOPE_VERTEX);
}

/* Stage 1: the fine surface (the skeleton fitted into it when asked), stood on y = 0, and the
   coarse envelope around it. On failure nothing is left allocated. */
static int surfaces(const sc_prep_opts *o, sc_rig *rig, sc_trimesh *fine, sc_trimesh *env, sc_prep_report *rep, sc_err *err)
{
    int rc = fine_surface(o, fine, &rep->surface_spacing, err);
    if (rc) return sc_err_prefix(err, "body: ");
    if (o->fit_skeleton) {
        if ((rc = sc_rig_fit_body(rig, fine, !o->fit_joints_kept, &rep->fit, err))) goto fail;
        rep->fitted = 1;
    }
    /* stand the character on y = 0 */
    if (o->ground) {
        double lo = 1e30;
        for (int i = 0; i < fine->nverts; i++) lo = fmin(lo, fine->verts[3 * i + 1]);
        rep->shift_y = -lo;
        shift_y(fine, -lo);
        for (int b = 0; b < rig->nbones; b++) {
            rig->bone[b].head.y -= lo;
            rig->bone[b].tail.y -= lo;
        }
        sc_fit_info_shift_y(&rep->fit, -lo);
    }
    if (o->envelope_obj[0]) {
        if ((rc = sc_obj_load(o->envelope_obj, env, err))) goto fail;
        for (int i = 0; i < 3 * env->nverts; i++) env->verts[i] *= o->body_scale;
        turn_to_face_z(env, o->facing);
        if (o->ground) shift_y(env, rep->shift_y);
        if ((rc = sc_surface_validate(env, o->envelope_obj, err))) goto fail;
    } else if (conforming(o)) {
        rep->env_conforming = 1;
        if ((rc = conforming_envelope(o, fine, rep->shift_y, rep->surface_spacing, conforming_vertices(o), env, &rep->env_spacing, err))) goto fail;
    } else {
        if ((rc = sc_envelope_build(fine, &o->envelope, env, &rep->env_spacing, err))) goto fail;
        if ((rc = sc_surface_validate(env, "generated envelope", err))) goto fail;
    }
    rep->env_verts = env->nverts;
    rep->env_tris = env->ntris;
    return SC_OK;
fail:
    sc_trimesh_free(fine);
    sc_trimesh_free(env);
    return rc;
}

/* The nodes a TetGen run must keep, all inside the envelope: fixed nodes per bone. */
typedef struct {
    int n, cap;
    double *x; /* [cap*3] */
    int *bone; /* [cap] */
    int *node; /* [cap] their tet-mesh node, after TetGen */
} fixed_nodes;

static void fixed_nodes_free(fixed_nodes *f)
{
    free(f->x);
    free(f->bone);
    free(f->node);
    memset(f, 0, sizeof *f);
}

/* Stage 2: the fixed nodes of every bone, all inside the envelope. */
static int place_fixed_nodes(const sc_prep_opts *o, sc_rig *rig, const sc_trimesh *fine, const sc_trimesh *env, sc_prep_report *rep, fixed_nodes *f,
                             sc_err *err)
{
    if (o->fixed_fit) rep->fixed_fitted = sc_rig_fit_fixed(rig, fine, o->fixed_radius, o->fixed_radius_min, o->fixed_radius_max, o->fixed_shape);
    int cap = rig->nbones > 0 ? 64 * rig->nbones : 1; /* boneless: none */
    f->cap = cap;
    f->x = malloc((size_t)cap * 3 * sizeof *f->x);
    f->bone = malloc((size_t)cap * sizeof *f->bone);
    f->node = malloc((size_t)cap * sizeof *f->node);
    if (!f->x || !f->bone || !f->node) {
        fixed_nodes_free(f);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    double *fx = f->x;
    int nf = 0;
    double ground = 1e30; /* the lowest point of the body: y = 0 when it stands on the ground */
    for (int i = 0; i < fine->nverts; i++) ground = fmin(ground, fine->verts[3 * i + 1]);
    for (int b = 0; b < rig->nbones; b++) {
        int k = sc_rig_fixed_points(&rig->bone[b], o->fixed_radius, o->fixed_radius_min, o->fixed_radius_max, o->fixed_shape, ground, fx + 3 * nf,
                                    cap - nf);
        for (int i = 0; i < k; i++) {
            if (sc_winding_number(env, fx + 3 * (nf + i)) < 0.5) {
                int rc = sc_fail(err, SC_EINPUT,
                                 "bone '%s': its fixed node at (%.3f, %.3f, %.3f) m lies outside the body envelope; "
                                 "the skeleton does not fit inside the body (check skeleton scale and body)",
                                 rig->bone[b].name, fx[3 * (nf + i)], fx[3 * (nf + i) + 1], fx[3 * (nf + i) + 2]);
                fixed_nodes_free(f);
                return rc;
            }
            f->bone[nf + i] = b;
        }
        nf += k;
    }
    f->n = nf;
    return SC_OK;
}

/* A conforming envelope's edges and corners stay where they are: the envelope vertices where an
   incident face turns more than 20 degrees from the vertex normal are pinned against the sliver
   smoothing (which moves a boundary node in its tangent plane: off an edge, it would cut the
   edge; slivers on them may still be peeled). TetGen keeps the input vertices first, in order;
   one it moved is not pinned. */
static void pin_features(const sc_trimesh *env, const sc_tetmesh *tm, unsigned char *locked)
{
    int nv = env->nverts;
    double *nrm = calloc((size_t)nv * 3, sizeof *nrm);
    if (!nrm || nv > tm->nnodes) {
        free(nrm);
        return;
    }
    for (int t = 0; t < env->ntris; t++) { /* area-weighted vertex normals */
        const int *v = env->tris + 3 * t;
        sc_vec3 a = sc_v3_load(env->verts + 3 * v[0]),
                n = sc_v3_cross(sc_v3_sub(sc_v3_load(env->verts + 3 * v[1]), a), sc_v3_sub(sc_v3_load(env->verts + 3 * v[2]), a));
        for (int k = 0; k < 3; k++) sc_v3_store(nrm + 3 * v[k], sc_v3_add(sc_v3_load(nrm + 3 * v[k]), n));
    }
    const double cos_limit = cos(20 * SC_PI / 180);
    for (int t = 0; t < env->ntris; t++) {
        const int *v = env->tris + 3 * t;
        sc_vec3 a = sc_v3_load(env->verts + 3 * v[0]),
                n = sc_v3_normalize(sc_v3_cross(sc_v3_sub(sc_v3_load(env->verts + 3 * v[1]), a), sc_v3_sub(sc_v3_load(env->verts + 3 * v[2]), a)));
        for (int k = 0; k < 3; k++)
            if (sc_v3_dot(n, sc_v3_normalize(sc_v3_load(nrm + 3 * v[k]))) < cos_limit &&
                sc_v3_dist(sc_v3_load(env->verts + 3 * v[k]), sc_v3_load(tm->pos + 3 * v[k])) < 1e-9 && !locked[v[k]])
                locked[v[k]] = 2;
    }
    free(nrm);
}

/* Stage 3: TetGen, with a volume bound from the target element count, then slivers peeled and
   smoothed; f->node gets the fixed nodes' indices. On failure tm is not left allocated. */
static int tet_mesh(const sc_prep_opts *o, const sc_trimesh *env, fixed_nodes *f, sc_tetmesh *tm, sc_prep_report *rep, sc_err *err)
{
    sc_tetgen_opts tg = o->tetgen;
    int nf = f->n;
    rep->volume = sc_trimesh_volume(env);
    if (tg.max_volume <= 0) tg.max_volume = 1.6 * rep->volume / o->target_tets;
    double tt = sc_wall_time();
    int rc = sc_tetgen_run(env, nf, f->x, &tg, tm, f->node, rep->tetgen_command, sizeof rep->tetgen_command, err);
    rep->seconds_tetgen = sc_wall_time() - tt;
    free(f->x);
    f->x = NULL;
    if (rc) return rc;
    rep->flipped_tets = sc_tetmesh_orient(tm);
    /* TetGen's -q does not remove slivers next to the boundary: peel and smooth them */
    unsigned char *locked = calloc((size_t)tm->nnodes, 1);
    int *remap = malloc((size_t)tm->nnodes * sizeof *remap);
    if (!locked || !remap) {
        free(locked);
        free(remap);
        sc_tetmesh_free(tm);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (int i = 0; i < nf; i++) locked[f->node[i]] = 1;
    if (conforming(o)) pin_features(env, tm, locked);
    rc = sc_tetmesh_improve(tm, locked, o->min_dihedral, remap, &rep->improve, err);
    for (int i = 0; i < nf && !rc; i++) f->node[i] = remap[f->node[i]];
    free(locked);
    free(remap);
    if (rc) {
        sc_tetmesh_free(tm);
        return rc;
    }
    sc_tetmesh_quality(tm, &rep->quality);
    return SC_OK;
}

/* Stage 3 for a conforming envelope sized from tetgen.target_tets (no envelope.target_vertices):
   TetGen keeps the boundary, so the count follows the envelope's size, as a power of it (1 at
   first, then the one the last two runs measured); the envelope is made again until the count is
   within 10 % of the target (at most 6 runs, each a fraction of a second), and the nearest is
   kept. */
static int tet_mesh_to_target(const sc_prep_opts *o, const sc_trimesh *fine, sc_trimesh *env, fixed_nodes *f, sc_tetmesh *tm, sc_prep_report *rep,
                              sc_err *err)
{
    sc_trimesh best_env = {0};
    sc_tetmesh best_tm = {0};
    sc_prep_report best_rep = *rep;
    double best_dev = INFINITY;
    int nverts = env->nverts, rc = SC_OK, last_verts = 0, last_count = 0;
    for (int run = 0; run < 6; run++) {
        sc_prep_report r = *rep;
        if (run > 0 && (rc = conforming_envelope(o, fine, rep->shift_y, rep->surface_spacing, nverts, env, &r.env_spacing, err))) break;
        if ((rc = tet_mesh(o, env, f, tm, &r, err))) break;
        int count = tm->ntets, env_verts = env->nverts;
        double dev = fabs(log((double)count / o->target_tets));
        sc_log_debug("mesh-prep: envelope of %d vertices: %d tets (target %d)", env->nverts, count, o->target_tets);
        if (dev < best_dev) {
            sc_trimesh_free(&best_env);
            sc_tetmesh_free(&best_tm);
            best_env = *env;
            best_tm = *tm;
            best_rep = r;
            best_dev = dev;
        } else {
            sc_trimesh_free(env);
            sc_tetmesh_free(tm);
        }
        memset(env, 0, sizeof *env);
        memset(tm, 0, sizeof *tm);
        double power = 1;
        if (last_verts > 0 && last_verts != env_verts && last_count != count) {
            power = log((double)count / last_count) / log((double)env_verts / last_verts);
            if (!(power >= 0.5 && power <= 3)) power = 1;
        }
        int next = (int)lround(env_verts * pow((double)o->target_tets / count, 1 / power));
        last_verts = env_verts;
        last_count = count;
        if (dev < log(1.1) || next == nverts || next < 8) break;
        nverts = next;
    }
    if (best_dev == INFINITY) return rc; /* the first run failed: nothing to keep */
    sc_trimesh_free(env);
    *env = best_env;
    *tm = best_tm;
    *rep = best_rep;
    if (best_dev > log(1.25))
        sc_log_warn("mesh-prep: tetgen.target_tets %d not reached: the nearest mesh has %d tets (the body decimated to %d vertices); "
                    "envelope.target_vertices sets the envelope's size directly",
                    o->target_tets, tm->ntets, env->nverts);
    rep->env_verts = env->nverts;
    rep->env_tris = env->ntris;
    return SC_OK;
}

/* Stage 4: the model's arrays, the skeleton copied from the rig; takes over the tet mesh, the
   fixed nodes and the fine surface (also on failure: then they are freed). */
static int model_from_rig(const sc_prep_opts *o, const sc_rig *rig, sc_tetmesh *tm, fixed_nodes *f, sc_trimesh *fine, sc_model *m, sc_err *err)
{
    int nn = tm->nnodes, ne = tm->ntets, nb = rig->nbones, nf = f->n;
    m->nbones = nb;
    m->nnodes = nn;
    m->ntets = ne;
    m->nfixed = nf;
    m->nsurf_verts = fine->nverts;
    m->nsurf_tris = fine->ntris;
    m->density = o->density;
    m->youngs = o->youngs;
    m->poisson = o->poisson;
#define ALLOC(ptr, n) ((ptr) = calloc((size_t)(n) + 1, sizeof *(ptr)))
    if (!ALLOC(m->bone_name, nb) || !ALLOC(m->parent, nb) || !ALLOC(m->joint_type, nb) || !ALLOC(m->joint_pos, 3 * nb) ||
        !ALLOC(m->bone_end, 3 * nb) || !ALLOC(m->hinge_axis, 3 * nb) || !ALLOC(m->joint_lo, 3 * nb) || !ALLOC(m->joint_hi, 3 * nb) ||
        !ALLOC(m->kp, nb) || !ALLOC(m->kd, nb) || !ALLOC(m->torque_limit, nb) || !ALLOC(m->bone_mass, nb) || !ALLOC(m->bone_com, 3 * nb) ||
        !ALLOC(m->bone_inertia, 9 * nb) || !ALLOC(m->node_mass, nn) || !ALLOC(m->tet_volume, ne) || !ALLOC(m->bm_inv, 9 * ne) ||
        !ALLOC(m->fixed_local, 3 * nf) || !ALLOC(m->node_bone, nn) || !ALLOC(m->surf_tet, fine->nverts) || !ALLOC(m->surf_bary, 4 * fine->nverts)) {
        fixed_nodes_free(f);
        sc_tetmesh_free(tm);
        sc_trimesh_free(fine);
        sc_model_free(m);
        return sc_fail(err, SC_EIO, "out of memory");
    }
#undef ALLOC
    m->rest_pos = tm->pos;
    m->tets = tm->tets;
    m->fixed_node = f->node;
    m->fixed_bone = f->bone;
    m->surf_rest = fine->verts;
    m->surf_tris = fine->tris;
    memset(fine, 0, sizeof *fine);
    f->node = f->bone = NULL;
    for (int b = 0; b < nb; b++) {
        const sc_rig_bone *r = &rig->bone[b];
        memcpy(m->bone_name[b], r->name, SC_NAME_LEN);
        m->parent[b] = r->parent;
        m->joint_type[b] = r->joint_type;
        sc_v3_store(m->joint_pos + 3 * b, r->head);
        sc_v3_store(m->bone_end + 3 * b, r->tail);
        sc_v3_store(m->hinge_axis + 3 * b, r->hinge_axis);
        memcpy(m->joint_lo + 3 * b, r->lo, 3 * sizeof(double));
        memcpy(m->joint_hi + 3 * b, r->hi, 3 * sizeof(double));
        m->kp[b] = r->kp;
        m->kd[b] = r->kd;
        m->torque_limit[b] = r->torque_limit;
    }
    return SC_OK;
}

/* Stage 5: tet geometry and node masses: the body's mass (density x fine-surface volume; the
   envelope is a simulation proxy larger than the body) spread over the nodes like the lumped
   volumes, light nodes raised to the mass floor. */
static int node_masses(const sc_prep_opts *o, const sc_tetmesh *tm, sc_model *m, sc_prep_report *rep, sc_err *err)
{
    int nn = m->nnodes, ne = m->ntets, rc;
    if ((rc = sc_tetmesh_geometry(tm, o->density, m->tet_volume, m->bm_inv, m->node_mass, err))) return rc;
    rep->body_volume = sc_trimesh_volume(&(sc_trimesh){m->nsurf_verts, m->nsurf_tris, m->surf_rest, m->surf_tris});
    rep->tet_volume = 0;
    for (int t = 0; t < ne; t++) rep->tet_volume += m->tet_volume[t];
    if (!(rep->body_volume > 0))
        return sc_fail(err, SC_EINPUT, "body surface encloses no volume (%.3g m^3): is it closed and oriented outwards?", rep->body_volume);
    for (int i = 0; i < nn; i++) m->node_mass[i] *= rep->body_volume / rep->tet_volume;
    /* A few nodes among tiny tets get a tiny lumped mass, and their explicit stability limit
       drops far below dt = 0.5 ms. Mass scaling: raise them to a floor relative to the median
       node mass, then rescale so the total stays the body's. */
    if (o->mass_floor > 0) {
        double *sorted = malloc((size_t)nn * sizeof *sorted), total = 0, raised = 0;
        if (!sorted) return sc_fail(err, SC_EIO, "out of memory");
        memcpy(sorted, m->node_mass, (size_t)nn * sizeof *sorted);
        qsort(sorted, (size_t)nn, sizeof *sorted, cmp_double);
        double floor_mass = o->mass_floor * sorted[nn / 2];
        free(sorted);
        for (int i = 0; i < nn; i++) {
            total += m->node_mass[i];
            if (m->node_mass[i] < floor_mass) {
                raised += floor_mass - m->node_mass[i];
                m->node_mass[i] = floor_mass;
                rep->mass_floored++;
            }
        }
        for (int i = 0; i < nn; i++) m->node_mass[i] *= total / (total + raised);
    }
    return SC_OK;
}

/* Stage 6: each fixed node on its bone (in the bone's frame), then masses raised where a stable
   step needs them. */
static int fix_nodes_to_bones(const sc_prep_opts *o, sc_model *m, sc_prep_report *rep, sc_err *err)
{
    for (int i = 0; i < m->nnodes; i++) m->node_bone[i] = -1;
    for (int i = 0; i < m->nfixed; i++) {
        int n = m->fixed_node[i], b = m->fixed_bone[i];
        if (m->node_bone[n] >= 0 && m->node_bone[n] != b)
            return sc_fail(err, SC_EINPUT,
                           "bones '%s' and '%s' share fixed node %d: their fixed-node boxes overlap; "
                           "reduce fixed.radius or the bones' fixed_from / fixed_to",
                           m->bone_name[m->node_bone[n]], m->bone_name[b], n);
        m->node_bone[n] = b;
        sc_v3_store(m->fixed_local + 3 * i, sc_v3_sub(sc_v3_load(m->rest_pos + 3 * n), sc_v3_load(m->joint_pos + 3 * b)));
    }
    if (o->stable_youngs > 0 && o->stable_dt > 0) {
        /* at most 10% of the free mass moves; a finer mesh gets a lower guaranteed modulus */
        double moved = 0, want = fmax(o->youngs, o->stable_youngs), e = want;
        int raised = stiffness_mass_floor(m, &e, o->poisson, o->stable_dt, 0.1, m->node_mass, &moved);
        if (raised < 0) return sc_fail(err, SC_EIO, "out of memory");
        rep->mass_floored += raised;
        double pct = 100 * moved / (rep->body_volume * o->density);
        if (e < 0.999 * want)
            sc_log_warn("mesh-prep: node masses made a %g s step stable up to E = %.3g Pa only (asked %.3g Pa: it would move more than 10%% "
                        "of the mass); %.2f%% of the mass moved to %d nodes",
                        o->stable_dt, e, want, pct, raised);
        else if (raised > 0)
            sc_log_info("mesh-prep: %.2f%% of the mass moved to %d nodes for a stable %g s step at E = %.3g Pa", pct, raised, o->stable_dt, e);
    }
    return SC_OK;
}

/* Stage 7: bone mass and inertia from the fixed nodes ([L13] 4.3). */
static int bone_masses(sc_model *m, sc_prep_report *rep, sc_err *err)
{
    int nf = m->nfixed;
    const int *fbone = m->fixed_bone, *fnode = m->fixed_node;
    for (int b = 0; b < m->nbones; b++) {
        double mass = 0;
        sc_vec3 com = sc_v3(0, 0, 0);
        for (int i = 0; i < nf; i++)
            if (fbone[i] == b) {
                mass += m->node_mass[fnode[i]];
                com = sc_v3_axpy(m->node_mass[fnode[i]], sc_v3_load(m->rest_pos + 3 * fnode[i]), com);
            }
        if (!(mass > 0)) return sc_fail(err, SC_EINPUT, "bone '%s' has no fixed nodes with mass", m->bone_name[b]);
        com = sc_v3_scale(com, 1 / mass);
        sc_mat3 in = sc_m3_zero();
        for (int i = 0; i < nf; i++)
            if (fbone[i] == b) {
                sc_vec3 r = sc_v3_sub(sc_v3_load(m->rest_pos + 3 * fnode[i]), com);
                double mi = m->node_mass[fnode[i]];
                in = sc_m3_add(in,
                               sc_m3_scale(sc_m3_sub(sc_m3_scale(sc_m3_identity(), sc_v3_dot(r, r)),
                                                     sc_m3_from_cols(sc_v3_scale(r, r.x), sc_v3_scale(r, r.y), sc_v3_scale(r, r.z))),
                                           mi));
            }
        m->bone_mass[b] = mass;
        rep->bone_mass_total += mass;
        sc_v3_store(m->bone_com + 3 * b, com);
        memcpy(m->bone_inertia + 9 * b, in.m, 9 * sizeof(double));
    }
    for (int i = 0; i < m->nnodes; i++) rep->total_mass += m->node_mass[i];
    return SC_OK;
}

int sc_prep_run(const sc_prep_opts *o, sc_model *m, sc_trimesh *env, sc_prep_report *rep, sc_err *err)
{
    memset(m, 0, sizeof *m);
    memset(env, 0, sizeof *env);
    memset(rep, 0, sizeof *rep);
    double t0 = sc_wall_time();
    sc_rig rig = o->rig;
    sc_trimesh fine;
    fixed_nodes fixed = {0};
    sc_tetmesh tm;
    int rc = surfaces(o, &rig, &fine, env, rep, err);
    if (rc) return rc;
    if ((rc = place_fixed_nodes(o, &rig, &fine, env, rep, &fixed, err))) goto fail;
    if (conforming(o) && o->envelope.target_vertices <= 0 ? (rc = tet_mesh_to_target(o, &fine, env, &fixed, &tm, rep, err))
                                                          : (rc = tet_mesh(o, env, &fixed, &tm, rep, err))) {
        fixed_nodes_free(&fixed);
        goto fail;
    }
    if ((rc = model_from_rig(o, &rig, &tm, &fixed, &fine, m, err))) {
        sc_trimesh_free(env);
        return rc;
    }
    if ((rc = node_masses(o, &tm, m, rep, err)) || (rc = fix_nodes_to_bones(o, m, rep, err)) || (rc = bone_masses(m, rep, err))) goto fail_model;
    /* embed the fine surface */
    if ((rc = sc_embed_points(&tm, m->nsurf_verts, m->surf_rest, m->surf_tet, m->surf_bary, &rep->embed, err))) goto fail_model;
    rep->nnodes = m->nnodes;
    rep->ntets = m->ntets;
    rep->nsurf_verts = m->nsurf_verts;
    rep->nsurf_tris = m->nsurf_tris;
    rep->nbones = m->nbones;
    rep->njoints = m->nbones > 0 ? m->nbones - 1 : 0;
    rep->nfixed = m->nfixed;
    rep->seconds = sc_wall_time() - t0;
    return SC_OK;
fail_model:
    sc_model_free(m);
    sc_trimesh_free(env);
    return rc;
fail:
    sc_trimesh_free(&fine);
    sc_trimesh_free(env);
    return rc;
}

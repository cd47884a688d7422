/* sim.h5: the writer of simulate's record (series, mesh, closing attributes) and the readers of
 * render and of the fall judge. The format is described in store/sim.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "model/world.h"
#include "store/muscles.h"
#include "store/reference.h"
#include "store/sim.h"
#include "store/xdmf.h"

#define D1(n) \
    (size_t[]) { (size_t)(n) }
#define D2(n, k) \
    (size_t[]) { (size_t)(n), (size_t)(k) }
#define D3(n, k, l) \
    (size_t[]) { (size_t)(n), (size_t)(k), (size_t)(l) }

/* ---- writing ---- */

/* the time series of sim.h5 */
struct sc_sim_series {
    sc_h5_series *time, *bpos, *bquat, *blin, *bang, *nodes, *ke, *ee, *pe, *te, *lin, *ang, *com, *cf, *cop, *cn, *depth, *inv, *track, *push,
        *steptime, *reftime;
    /* a boneless body's (muscle-sim) */
    sc_h5_series *ld, *len, *vol, *dmin, *dmax, *obj, *qps, *sliding, *broken, *failed;
};

static int create_series(sc_h5 *f, const sc_model *m, int store_nodes, int follows_reference, sc_sim_series *s, sc_err *err)
{
    size_t nb = (size_t)m->nbones, nn = (size_t)m->nnodes;
    int rc;
#define S(ptr, path, rank, dims, units, desc) \
    if ((rc = sc_h5_series_create(f, path, s->time, rank, dims, units, desc, &s->ptr, err))) return rc
    if ((rc = sc_h5_timeline_create(f, "/time", &s->time, err))) return rc;
    if (nb) {
        if ((rc = sc_h5_group(f, "/bones", "rigid bones; position is the bone origin (its joint)", err))) return rc;
        S(bpos, "/bones/position", 2, ((size_t[]){nb, 3}), "m", "bone origin positions");
        S(bquat, "/bones/orientation", 2, ((size_t[]){nb, 4}), "1", "bone rotations (w, x, y, z) from the rest pose");
        S(blin, "/bones/linear_velocity", 2, ((size_t[]){nb, 3}), "m/s", "velocity of each bone origin");
        S(bang, "/bones/angular_velocity", 2, ((size_t[]){nb, 3}), "rad/s", "angular velocity, world frame");
    }
    if (store_nodes) {
        if ((rc = sc_h5_group(f, "/nodes", "tet node trajectories", err))) return rc;
        S(nodes, "/nodes/position", 2, ((size_t[]){nn, 3}), "m", "tet node positions");
    }
    if ((rc = sc_h5_group(f, "/energy", "energies; total = kinetic + elastic + gravitational potential", err))) return rc;
    S(ke, "/energy/kinetic", 0, NULL, "J", "kinetic energy of free nodes and bones");
    S(ee, "/energy/elastic", 0, NULL, "J", "corotated elastic energy (relative to the pose-based rest shape with plasticity)");
    S(pe, "/energy/potential", 0, NULL, "J", "gravitational potential energy");
    S(te, "/energy/total", 0, NULL, "J", "kinetic + elastic + potential");
    if ((rc = sc_h5_group(f, "/momentum", "whole-body momentum (free nodes + bones)", err))) return rc;
    S(lin, "/momentum/linear", 1, ((size_t[]){3}), "kg m/s", "total linear momentum");
    S(ang, "/momentum/angular", 1, ((size_t[]){3}), "kg m^2/s", "angular momentum about the centre of mass");
    S(com, "/momentum/com", 1, ((size_t[]){3}), "m", "centre of mass");
    if ((rc = sc_h5_group(f, "/contact", "ground contact on the fine surface", err))) return rc;
    S(cf, "/contact/force", 1, ((size_t[]){3}), "N", "total contact force on the body");
    S(cop, "/contact/cop", 1, ((size_t[]){3}), "m", "centre of pressure: the contacts' points weighted by their normal loads (NaN without load)");
    S(depth, "/contact/max_depth", 0, NULL, "m", "deepest ground penetration of a surface vertex");
    if ((rc = sc_h5_series_create_i32(f, "/contact/count", s->time, 0, NULL, "surface vertices in contact", &s->cn, err))) return rc;
    if ((rc = sc_h5_group(f, "/fem", "soft body", err))) return rc;
    if ((rc = sc_h5_series_create_i32(f, "/fem/inverted", s->time, 0, NULL, "inverted tets", &s->inv, err))) return rc;
    if ((rc = sc_h5_group(f, "/control", "controller", err))) return rc;
    if (nb) S(track, "/control/tracking_error", 0, NULL, "rad", "RMS over joints of the angle between local rotation and PD target");
    S(push, "/control/push_force", 1, ((size_t[]){3}), "N", "total external push force applied");
    if (follows_reference) S(reftime, "/control/reference_time", 0, NULL, "s", "reference time the controller plays (time scaling)");
    if ((rc = sc_h5_group(f, "/timing", "wall-clock cost", err))) return rc;
    S(steptime, "/timing/step", 0, NULL, "s", "mean wall time per step since the previous frame");
#undef S
    return SC_OK;
}

static int write_mesh(sc_h5 *f, const sc_model *m, sc_err *err)
{
    const char *names[SC_SIM_MAX_BONES];
    for (int b = 0; b < m->nbones; b++) names[b] = m->bone_name[b];
    int rc;
#define TRY(x) \
    if ((rc = (x))) return rc
    if (m->nbones) {
        TRY(sc_h5_write_strings(f, "/bones/names", (size_t)m->nbones, names, "bone names, in the order of every /bones dataset", err));
        TRY(sc_h5_write_i32(f, "/bones/parents", 1, (size_t[]){(size_t)m->nbones}, m->parent, "parent bone, -1 for the root", err));
    }
    TRY(sc_h5_group(f, "/mesh", "the character's topology, so this file stands alone (copied from character.h5)", err));
    TRY(sc_h5_write_i32(f, "/mesh/tets", 2, (size_t[]){(size_t)m->ntets, 4}, m->tets, "tets (node indices)", err));
    TRY(sc_h5_write_f64(f, "/mesh/rest_pos", 2, (size_t[]){(size_t)m->nnodes, 3}, m->rest_pos, "m", "rest node positions", err));
    TRY(sc_h5_write_i32(f, "/mesh/node_bone", 1, (size_t[]){(size_t)m->nnodes}, m->node_bone, "bone a node is fixed to, -1 free", err));
    TRY(sc_h5_write_i32(f, "/mesh/surface_faces", 2, (size_t[]){(size_t)m->nsurf_tris, 3}, m->surf_tris, "fine surface triangles", err));
    TRY(sc_h5_write_i32(f, "/mesh/surface_tet", 1, (size_t[]){(size_t)m->nsurf_verts}, m->surf_tet, "embedding tet of each surface vertex", err));
    TRY(sc_h5_write_f64(f, "/mesh/surface_bary", 2, (size_t[]){(size_t)m->nsurf_verts, 4}, m->surf_bary, "1", "barycentric weights", err));
#undef TRY
    return SC_OK;
}

/* What both writers begin with: the writer's arrays (scratch: nscratch doubles in w->bp), the
   file, its provenance and the root attributes of every sim.h5. */
static int writer_begin(const char *path, const sc_sim_file_info *info, const sc_model *m, int store_nodes, int fem_kernel, size_t nscratch,
                        sc_sim_writer *w, sc_err *err)
{
    memset(w, 0, sizeof *w);
    w->m = m;
    w->store_nodes = store_nodes;
    w->last_wall = w->first_wall = sc_wall_time();
    w->s = calloc(1, sizeof *w->s);
    w->frame_times = malloc((size_t)(info->max_frames > 0 ? info->max_frames : 1) * sizeof *w->frame_times);
    w->bp = malloc((nscratch ? nscratch : 1) * sizeof *w->bp);
    if (!w->s || !w->frame_times || !w->bp) {
        sc_sim_writer_free(w);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    int rc = sc_h5_create(path, &w->f, err);
    if (rc) return rc;
    if ((rc = sc_h5_provenance(w->f, SC_SIM_SCHEMA, info->argc, info->argv, info->config_text, err)) ||
        (rc = sc_h5_attr_str(w->f, "/", "character", info->character, err)) || (rc = sc_h5_attr_f64(w->f, "/", "dt", info->dt, err)) ||
        (rc = sc_h5_attr_str(w->f, "/", "fem_kernel", sc_fem_kernel_name(fem_kernel), err)))
        sc_sim_writer_abort(w);
    return rc;
}

int sc_sim_writer_create(const char *path, const sc_sim_file_info *info, const sc_model *m, const sc_sim *sim, sc_sim_writer *w, sc_err *err)
{
    int rc = writer_begin(path, info, m, info->store_nodes, sim->fem.kernel, (size_t)m->nbones * 7, w, err);
    if (rc) return rc;
    if (!(w->local = malloc((size_t)m->nbones * sizeof *w->local + 1))) {
        sc_sim_writer_abort(w);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    sc_h5 *f = w->f;
    if ((!isnan(sim->start_sink) && (rc = sc_h5_attr_f64(f, "/", "start_sink_m", sim->start_sink, err))) ||
        (rc = create_series(f, m, info->store_nodes, info->follows_reference, w->s, err)) || (rc = write_mesh(f, m, err))) {
        sc_sim_writer_abort(w);
        return rc;
    }
    return SC_OK;
}

/* The series every frame has: the body's state and diagnostics, its contact, the push and the
   wall time per step since the previous frame (k: the step since the recording began). */
typedef struct body_frame {
    double t;
    const double *x; /* node positions (written when the file stores them) */
    double kinetic, elastic, potential;
    const double *linear, *angular, *com, *contact_force, *push; /* [3] each */
    const sc_contact_result *contact;
    int contacts, inverted;
} body_frame;

static int append_body(sc_sim_writer *w, const body_frame *b, long k, sc_err *err)
{
    const double now = sc_wall_time(), per = k > w->last_step ? (now - w->last_wall) / (double)(k - w->last_step) : 0;
    w->last_wall = now;
    w->last_step = k;
    const double total = b->kinetic + b->elastic + b->potential, depth = b->contact->max_depth;
    double cop[3];
    sc_contact_cop(b->contact, cop);
    w->max_depth = fmax(w->max_depth, depth);
    sc_sim_series *s = w->s;
    return sc_h5_series_append(s->time, &b->t, err) || (s->nodes && sc_h5_series_append(s->nodes, b->x, err)) ||
        sc_h5_series_append(s->ke, &b->kinetic, err) || sc_h5_series_append(s->ee, &b->elastic, err) ||
        sc_h5_series_append(s->pe, &b->potential, err) || sc_h5_series_append(s->te, &total, err) || sc_h5_series_append(s->lin, b->linear, err) ||
        sc_h5_series_append(s->ang, b->angular, err) || sc_h5_series_append(s->com, b->com, err) ||
        sc_h5_series_append(s->cf, b->contact_force, err) || sc_h5_series_append(s->cop, cop, err) || sc_h5_series_append(s->depth, &depth, err) ||
        sc_h5_series_append_i32(s->cn, &b->contacts, err) || sc_h5_series_append_i32(s->inv, &b->inverted, err) ||
        sc_h5_series_append(s->push, b->push, err) || sc_h5_series_append(s->steptime, &per, err);
}

/* What both commits end with: the /frames views (with node frames), the commit, or the file
   dropped when rc (the closing attributes' result) failed. */
static int writer_finish(sc_sim_writer *w, int rc, sc_err *err)
{
    sc_h5 *f = w->f;
    if (!rc && w->store_nodes) rc = sc_xdmf_sim_views(f, w->nframes, err);
    if (rc) {
        sc_sim_writer_abort(w);
        return rc;
    }
    w->f = NULL;
    return sc_h5_commit(f, err);
}

int sc_sim_writer_frame(sc_sim_writer *w, const sc_sim *sim, const sc_quat *targets, const double push_total[3], long k, double reference_time,
                        sc_err *err)
{
    const sc_model *m = w->m;
    sc_sim_diag d;
    sc_sim_diagnostics(sim, &d);
    sc_skeleton_local_rotations(sim->skel, w->local);
    double se = 0;
    int nj = 0;
    for (int b = 1; b < m->nbones; b++, nj++) {
        double a = sc_q_angle_between(w->local[b], targets[b]);
        se += a * a;
    }
    double track = nj ? sqrt(se / nj) : 0;
    double *bp = w->bp;
    for (int b = 0; b < m->nbones; b++) {
        sc_v3_store(bp + 3 * b, sim->pose[b].p);
        double *q = bp + 3 * m->nbones + 4 * b;
        q[0] = sim->pose[b].q.w;
        q[1] = sim->pose[b].q.x;
        q[2] = sim->pose[b].q.y;
        q[3] = sim->pose[b].q.z;
    }
    const body_frame bf = {sim->t, sim->x,          d.kinetic,  d.elastic,     d.potential, d.linear,  d.angular,
                           d.com,  d.contact_force, push_total, &sim->contact, d.contacts,  d.inverted};
    sc_sim_series *s = w->s;
    int rc = append_body(w, &bf, k, err) || sc_h5_series_append(s->bpos, bp, err) || sc_h5_series_append(s->bquat, bp + 3 * m->nbones, err) ||
        sc_h5_series_append(s->blin, sim->lin_vel, err) || sc_h5_series_append(s->bang, sim->ang_vel, err) ||
        sc_h5_series_append(s->track, &track, err);
    if (!rc && s->reftime) rc = sc_h5_series_append(s->reftime, &reference_time, err);
    if (rc) return 1;
    w->frame_times[w->nframes++] = sim->t;
    return 0;
}

int sc_sim_writer_commit(sc_sim_writer *w, const sc_sim *sim, const char *status, sc_err *err)
{
    sc_h5 *f = w->f;
    const sc_sim_timing *tm = &sim->timing;
    double n = tm->steps ? (double)tm->steps : 1;
    sc_sim_warnings warn;
    sc_sim_warnings_get(sim, &warn);
    int rc = sc_h5_attr_str(f, "/", "status", status, err) || sc_h5_attr_i64(f, "/", "steps", tm->steps, err) ||
        sc_h5_attr_f64(f, "/timing", "mean_step_s", tm->total / n, err) || sc_h5_attr_f64(f, "/timing", "mean_fem_s", tm->fem / n, err) ||
        sc_h5_attr_f64(f, "/timing", "mean_skinning_s", tm->skin / n, err) || sc_h5_attr_f64(f, "/timing", "mean_damping_s", tm->damping / n, err) ||
        sc_h5_attr_f64(f, "/timing", "mean_contact_s", tm->contact / n, err) ||
        sc_h5_attr_f64(f, "/timing", "mean_coupling_s", tm->coupling / n, err) || sc_h5_attr_f64(f, "/timing", "mean_ode_s", tm->ode / n, err) ||
        sc_h5_attr_f64(f, "/contact", "max_depth_m", w->max_depth, err) || sc_h5_attr_i64(f, "/fem", "polar_fallbacks", warn.fem_fallbacks, err) ||
        sc_h5_attr_i64(f, "/", "ode_warnings", warn.ode_messages, err) ||
        (sc_fluid_enabled(&sim->o.fluid) && sc_h5_attr_f64(f, "/timing", "mean_fluid_s", tm->fluid / n, err));
    return writer_finish(w, rc, err);
}

void sc_sim_writer_abort(sc_sim_writer *w)
{
    if (w->f) sc_h5_abort(w->f);
    w->f = NULL;
}

int sc_sim_writer_xdmf(const sc_sim_writer *w, const char *xdmf_path, const char *h5_name, sc_err *err)
{
    return w->store_nodes ? sc_xdmf_write_sim(xdmf_path, h5_name, w->m, w->frame_times, w->nframes, err) : SC_OK;
}

void sc_sim_writer_free(sc_sim_writer *w)
{
    sc_sim_writer_abort(w);
    free(w->s);
    free(w->frame_times);
    free(w->local);
    free(w->bp);
    memset(w, 0, sizeof *w);
}

/* ---- the record of a boneless body (muscle-sim) ---- */

static int create_soft_series(sc_h5 *f, const sc_muscles *mu, sc_sim_series *s, sc_err *err)
{
    int rc;
#define S(ptr, path, rank, dims, units, desc) \
    if ((rc = sc_h5_series_create(f, path, s->time, rank, dims, units, desc, &s->ptr, err))) return rc
#define SI(ptr, path, desc) \
    if ((rc = sc_h5_series_create_i32(f, path, s->time, 0, NULL, desc, &s->ptr, err))) return rc
    S(vol, "/fem/volume_ratio", 0, NULL, "1", "the body's volume over its rest volume ([T12] 4.1 keeps |1 - ratio| under 0.15)");
    S(dmin, "/fem/min_det", 0, NULL, "1", "the smallest tet volume ratio det F");
    S(dmax, "/fem/max_det", 0, NULL, "1", "the largest tet volume ratio det F");
    S(obj, "/control/objective", 0, NULL, "1", "objective value of the last plan ([T12] 5.2), 0 without control");
    SI(qps, "/control/qps", "QPs the last plan solved ([T12] 6's pivoting search)");
    SI(sliding, "/control/sliding", "contact patches the last plan made slide");
    SI(broken, "/control/broken", "contact patches the last plan made break");
    SI(failed, "/control/failed", "1: the last plan found no feasible solution (l_d kept)");
    if (mu) {
        S(ld, "/muscles/desired_length", 1, D1(mu->nsegs), "m", "l_d of each segment: the controller's output ([T12] 5.1)");
        S(len, "/muscles/length", 1, D1(mu->nsegs), "m", "the current length of each segment");
    }
#undef S
#undef SI
    return SC_OK;
}

int sc_sim_writer_create_soft(const char *path, const sc_sim_file_info *info, const sc_muscle_run *r, const char *solver, sc_sim_writer *w,
                              sc_err *err)
{
    const sc_model *m = r->s->m;
    const sc_muscles *mu = r->s->mu;
    /* a boneless body is its nodes: they are always stored */
    int rc = writer_begin(path, info, m, 1, r->s->fem.kernel, mu ? (size_t)mu->nsegs : 0, w, err);
    if (rc) return rc;
    sc_h5 *f = w->f;
    if ((rc = sc_h5_attr_str(f, "/", "body", "boneless: a soft body moved by muscle fibres ([T12])", err)) ||
        (rc = create_series(f, m, 1, 0, w->s, err)) || (rc = write_mesh(f, m, err)) || (mu && (rc = sc_character_write_muscles(f, mu, m, err))) ||
        (rc = create_soft_series(f, mu, w->s, err)) || (rc = sc_h5_attr_str(f, "/control", "solver", solver, err)) ||
        (rc = sc_h5_attr_f64(f, "/control", "period_s", r->o->control.period, err))) {
        sc_sim_writer_abort(w);
        return rc;
    }
    return SC_OK;
}

int sc_sim_writer_soft_frame(sc_sim_writer *w, const sc_muscle_run *r, const sc_softbody_diag *d, long k, sc_err *err)
{
    const sc_softbody *b = r->s;
    const sc_control_report *rep = &r->report;
    const double force[3] = {b->contact.total_force.x, b->contact.total_force.y, b->contact.total_force.z}, obj = r->c ? rep->objective : 0;
    const int qps = r->c ? rep->nodes : 0, sl = r->c ? rep->sliding : 0, br = r->c ? rep->broken : 0, fl = r->c ? rep->failed : 0;
    const body_frame bf = {b->t,  b->x,    d->kinetic,  d->elastic,       d->potential,         d->linear, d->angular, d->com,
                           force, r->push, &b->contact, b->contact.count, b->fem_stats.inverted};
    sc_sim_series *s = w->s;
    int rc = append_body(w, &bf, k, err) || sc_h5_series_append(s->vol, &d->volume_ratio, err) || sc_h5_series_append(s->dmin, &d->min_det, err) ||
        sc_h5_series_append(s->dmax, &d->max_det, err) || sc_h5_series_append(s->obj, &obj, err) || sc_h5_series_append_i32(s->qps, &qps, err) ||
        sc_h5_series_append_i32(s->sliding, &sl, err) || sc_h5_series_append_i32(s->broken, &br, err) || sc_h5_series_append_i32(s->failed, &fl, err);
    if (!rc && s->ld) {
        sc_muscle_lengths(b->mu, b->m, b->x, w->bp);
        rc = sc_h5_series_append(s->ld, b->ld, err) || sc_h5_series_append(s->len, w->bp, err);
    }
    if (rc) return 1;
    w->frame_times[w->nframes++] = b->t;
    return 0;
}

int sc_sim_writer_soft_commit(sc_sim_writer *w, const sc_muscle_run *r, const char *status, sc_err *err)
{
    sc_h5 *f = w->f;
    const sc_muscle_run_stats *st = &r->stats;
    const long steps = r->s->step;
    const double n = steps ? (double)steps : 1, plans = st->plans ? (double)st->plans : 1;
    int rc = sc_h5_attr_str(f, "/", "status", status, err) || sc_h5_attr_i64(f, "/", "steps", steps, err) ||
        sc_h5_attr_f64(f, "/timing", "mean_step_s", (sc_wall_time() - w->first_wall) / n, err) ||
        sc_h5_attr_f64(f, "/timing", "mean_plan_s", st->plan_s / plans, err) || sc_h5_attr_i64(f, "/control", "plans", st->plans, err) ||
        sc_h5_attr_i64(f, "/control", "failed_plans", st->failed_plans, err) ||
        sc_h5_attr_f64(f, "/control", "mean_qps", (double)st->qps / plans, err) || sc_h5_attr_f64(f, "/contact", "max_depth_m", w->max_depth, err) ||
        sc_h5_attr_f64(f, "/fem", "max_volume_change", st->max_volume_change, err) || sc_h5_attr_f64(f, "/fem", "min_det", st->min_det, err) ||
        sc_h5_attr_f64(f, "/fem", "max_det", st->max_det, err);
    return writer_finish(w, rc, err);
}

int sc_sim_writer_soft_sampling(sc_sim_writer *w, const sc_msamcon_config *c, const sc_msamcon_result *res, sc_err *err)
{
    static const char *const types[] = {"turn", "com", "com_velocity"};
    sc_h5 *f = w->f;
    const int n = res->nseg, nc = c->ncontrols;
    double *times = malloc((2 * (size_t)n + 1) * sizeof(double)), *cost = malloc((2 * (size_t)n + 1) * sizeof(double)), hw[SC_MSAMCON_MAX_CONTROLS];
    int *failures = malloc(((size_t)n + 1) * sizeof(int)), obj[SC_MSAMCON_MAX_CONTROLS], axis[SC_MSAMCON_MAX_CONTROLS];
    char terms[SC_MSAMCON_MAX_TERMS][200];
    const char *tp[SC_MSAMCON_MAX_TERMS];
    if (!times || !cost || !failures) {
        free(times);
        free(cost);
        free(failures);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (int k = 0; k < n; k++) {
        times[2 * k] = res->seg[k].t0;
        times[2 * k + 1] = res->seg[k].t1;
        cost[k] = res->seg[k].cost;
        cost[n + k] = res->seg[k].path_cost;
        failures[k] = res->seg[k].failures;
    }
    for (int k = 0; k < nc; k++) {
        obj[k] = c->controls[k].objective;
        axis[k] = c->controls[k].axis;
        hw[k] = c->controls[k].half_width;
    }
    for (int j = 0; j < c->nterms; j++) {
        const sc_mcost_term *t = &c->terms[j];
        if (t->type == SC_MCOST_TURN)
            snprintf(terms[j], sizeof terms[j], "turn: weight %g, axis [%g, %g, %g], target %g deg, from %g s to %g s", t->weight, t->axis[0],
                     t->axis[1], t->axis[2], t->target[0], t->from, t->to);
        else
            snprintf(terms[j], sizeof terms[j], "%s: weight %g, axes [%g, %g, %g], target [%g, %g, %g], from %g s to %g s", types[t->type], t->weight,
                     t->axes[0], t->axes[1], t->axes[2], t->target[0], t->target[1], t->target[2], t->from, t->to);
        tp[j] = terms[j];
    }
    int rc = sc_h5_group(f, "/sampling", "muscle-sample's SAMCON search over the controller's targets (sampling/muscle_samcon.h)", err) ||
        sc_h5_write_f64(f, "/sampling/segment_time", 2, D2(n, 2), times, "s", "each segment's start and end", err) ||
        sc_h5_write_f64(f, "/sampling/offset", 2, D2(n, nc), res->offset, "the target's units",
                        "the chosen path's offset of each control per segment, added to the objective's target", err) ||
        sc_h5_write_f64(f, "/sampling/segment_cost", 1, D1(n), cost, "1", "the chosen path's cost of each segment", err) ||
        sc_h5_write_f64(f, "/sampling/path_cost", 1, D1(n), cost + n, "1", "the chosen path's cost up to each segment's end", err) ||
        sc_h5_write_i32(f, "/sampling/failures", 1, D1(n), failures, "samples of each segment that failed (blow-up, volume change)", err) ||
        sc_h5_write_i32(f, "/sampling/control_objective", 1, D1(nc), obj, "each control's objective (0-based in muscle_control.objectives)", err) ||
        sc_h5_write_i32(f, "/sampling/control_axis", 1, D1(nc), axis, "each control's target component (0 x, 1 y, 2 z)", err) ||
        sc_h5_write_f64(f, "/sampling/control_half_width", 1, D1(nc), hw, "the target's units", "each control's sampling half-width", err) ||
        sc_h5_write_strings(f, "/sampling/cost_terms", (size_t)c->nterms, tp, "the cost's terms", err) ||
        sc_h5_attr_i64(f, "/sampling", "samples", c->samples, err) || sc_h5_attr_i64(f, "/sampling", "elites", c->elites, err) ||
        sc_h5_attr_i64(f, "/sampling", "seed", (long long)c->seed, err) || sc_h5_attr_f64(f, "/sampling", "segment_s", c->segment, err) ||
        sc_h5_attr_f64(f, "/sampling", "max_volume_change", c->max_volume_change, err) ||
        sc_h5_attr_i64(f, "/sampling", "segments_total", res->nseg_total, err) || sc_h5_attr_i64(f, "/sampling", "completed", res->completed, err) ||
        sc_h5_attr_i64(f, "/sampling", "samples_simulated", res->samples, err) ||
        sc_h5_attr_i64(f, "/sampling", "samples_failed", res->failures, err) ||
        sc_h5_attr_f64(f, "/sampling", "greedy_path_cost", res->greedy_cost, err) ||
        sc_h5_attr_f64(f, "/timing", "sampling_wall_s", res->wall_seconds, err) || sc_h5_attr_i64(f, "/timing", "sampling_ranks", res->ranks, err) ||
        sc_h5_attr_i64(f, "/timing", "sampling_threads", res->threads, err);
    free(times);
    free(cost);
    free(failures);
    return rc ? (err->code ? err->code : SC_EIO) : SC_OK;
}

/* The rollout's hook: a frame every `every` steps, the progress line, the fall watched. */
typedef struct {
    sc_sim_writer *w;
    const sc_controller *ctrl;
    int every;
    long first_step;
    sc_progress *prog;
    sc_err *err;
    sc_sim_watch *watch;
    sc_target_source src;
    sc_perturbations *pert;
} recorder;

static void watch_state(sc_sim_watch *watch, const sc_sim *sim, int cause)
{
    if (!watch || watch->cause) return;
    if (!cause && watch->policy) cause = sc_policy_fallen(watch->policy, sim, watch->max_tilt);
    if (!cause) return;
    watch->cause = cause;
    watch->step = sim->step;
    watch->root_height = sim->pose[0].p.y;
    watch->tilt = acos(fmax(-1, fmin(1, sc_q_rotate(sim->pose[0].q, sc_v3(0, 1, 0)).y)));
}

/* the targets, then the pushes that start at this state: the rollout applies the pushes after
   the targets, so a push started here acts from this very step, as the evaluation's does */
static void record_targets(void *ctx, const sc_sim *sim, sc_quat *out)
{
    recorder *r = ctx;
    r->src.eval(r->src.ctx, sim, out);
    if (r->pert) sc_perturbations_start_due(r->pert, sim, r->watch ? r->watch->step0 : 0, r->watch ? r->watch->cycle_steps : 0);
}

static void record_actuate(void *ctx, sc_sim *sim)
{
    recorder *r = ctx;
    r->src.actuate(r->src.ctx, sim);
}

static int record_frame(void *ctx, const sc_sim *sim, const sc_quat *targets, const double push_total[3])
{
    recorder *r = ctx;
    watch_state(r->watch, sim, 0);
    long k = sim->step - r->first_step;
    sc_progress_update(r->prog, k);
    if (k % r->every) return 0;
    double tr = r->w->s->reftime ? sc_controller_reference_time(r->ctrl, sim->t) : 0;
    return sc_sim_writer_frame(r->w, sim, targets, push_total, k, tr, r->err);
}

int sc_sim_record(sc_sim *sim, sc_target_source src, sc_perturbations *pert, long nsteps, int every, const sc_controller *ctrl, sc_sim_watch *watch,
                  sc_sim_writer *w, sc_rollout_result *res, sc_err *step_err, sc_err *err)
{
    sc_quat *targets = malloc((size_t)w->m->nbones * sizeof *targets);
    if (!targets) {
        res->stopped = 1;
        return sc_fail(err, SC_EIO, "out of memory");
    }
    sc_progress prog;
    recorder r = {.w = w, .ctrl = ctrl, .every = every, .first_step = sim->step, .prog = &prog, .err = err, .watch = watch, .src = src, .pert = pert};
    w->last_step = 0;
    w->last_wall = sc_wall_time();
    sc_progress_begin(&prog, "simulate", nsteps);
    int rc = sc_rollout(sim, (sc_target_source){record_targets, &r, src.actuate ? record_actuate : NULL}, pert, sim->step + nsteps, record_frame, &r,
                        targets, res, step_err);
    if (rc) watch_state(watch, sim, SC_SIM_FALL_FAILED); /* a blow-up is a fall, as in the evaluation */
    sc_progress_end(&prog);
    free(targets);
    return rc ? SC_ENUMERIC : SC_OK;
}

static const char *const fall_cause[] = {"none", "root_height", "tilt", "numerical_failure"};

int sc_sim_writer_fall(sc_sim_writer *w, const sc_sim_watch *watch, const sc_sim *sim, sc_err *err)
{
    sc_h5 *f = w->f;
    long step = watch->cause ? watch->step : sim->step;
    double limit = watch->policy ? 0.5 * watch->policy->mean_root_height : 0;
    return sc_h5_group(f, "/fall",
                       "the first state where the policy's fall test held (learn-feedback's evaluation's): root below "
                       "fall_root_height_m or tilted past max_tilt_deg, or a numerical failure",
                       err) ||
        sc_h5_attr_i64(f, "/fall", "fell", watch->cause != 0, err) || sc_h5_attr_str(f, "/fall", "cause", fall_cause[watch->cause], err) ||
        sc_h5_attr_i64(f, "/fall", "step", step, err) || sc_h5_attr_f64(f, "/fall", "time_s", (double)step * sim->o.dt, err) ||
        sc_h5_attr_f64(f, "/fall", "root_height_m", watch->cause ? watch->root_height : sim->pose[0].p.y, err) ||
        sc_h5_attr_f64(f, "/fall", "fall_root_height_m", limit, err) ||
        sc_h5_attr_f64(f, "/fall", "tilt_deg", (watch->cause ? watch->tilt : 0) * 180 / SC_PI, err) ||
        sc_h5_attr_f64(f, "/fall", "max_tilt_deg", watch->max_tilt * 180 / SC_PI, err);
}

void sc_sim_fall_describe(const sc_sim_watch *watch, const sc_sim *sim, char *buf, size_t n)
{
    double t = (double)(watch->cause ? watch->step : sim->step) * sim->o.dt, limit = watch->policy ? 0.5 * watch->policy->mean_root_height : 0;
    if (watch->cause == SC_FALL_LOW)
        snprintf(buf, n, "fell at %.4f s (step %ld): the root at %.3f m, below %.3f m (half the cycle's mean root height)", t, watch->step,
                 watch->root_height, limit);
    else if (watch->cause == SC_FALL_TILT)
        snprintf(buf, n, "fell at %.4f s (step %ld): the root tilted %.1f deg from vertical, past %.1f deg", t, watch->step,
                 watch->tilt * 180 / SC_PI, watch->max_tilt * 180 / SC_PI);
    else if (watch->cause == SC_SIM_FALL_FAILED) snprintf(buf, n, "fell at %.4f s (step %ld): the simulation failed", t, watch->step);
    else snprintf(buf, n, "did not fall in %.4f s", t);
}

/* ---- reading ---- */

struct sc_sim_file {
    sc_h5 *f;
};

void sc_sim_data_free(sc_sim_data *d)
{
    void *arrays[] = {d->time,
                      d->bone_name,
                      d->parent,
                      d->bone_pos,
                      d->bone_quat,
                      d->tets,
                      d->node_bone,
                      d->faces,
                      d->surf_tet,
                      d->rest_pos,
                      d->surf_bary,
                      d->com,
                      d->contact_force,
                      d->push_force,
                      d->ref_time,
                      d->config,
                      d->tracking_error,
                      d->muscle_point_tet,
                      d->muscle_point_bary,
                      d->muscle_seg,
                      d->muscle_rest_len,
                      d->muscle_ld};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) free(arrays[i]);
    memset(d, 0, sizeof *d);
}

void sc_sim_close(sc_sim_file *file)
{
    if (!file) return;
    sc_h5_close(file->f);
    free(file);
}

static int read_optional3(sc_h5 *f, const char *path, int nframes, double **out, sc_err *err)
{
    if (!sc_h5_exists(f, path)) {
        *out = calloc((size_t)nframes * 3 + 1, sizeof(double));
        return *out ? SC_OK : sc_fail(err, SC_EIO, "out of memory");
    }
    return sc_h5_read_f64(f, path, 2, D2(nframes, 3), out, err);
}

/* /time and /bones: frames non-decreasing in time, parents before children, rotations
   normalized. */
static int read_time_and_bones(sc_h5 *f, const char *fn, sc_sim_data *a, sc_err *err)
{
    size_t dims[1] = {0}, nb = 0;
    char **names = NULL;
    int rc;
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) goto done; \
    } while (0)
    TRY(sc_h5_read_f64(f, "/time", 1, dims, &a->time, err));
    a->nframes = (int)dims[0];
    if (dims[0] < 1 || dims[0] > 100000000) {
        rc = sc_fail(err, SC_EINPUT, "%s:/time: no frames (the simulation wrote nothing)", fn);
        goto done;
    }
    for (int k = 0; k < a->nframes; k++)
        if (!isfinite(a->time[k]) || (k && a->time[k] < a->time[k - 1])) {
            rc = sc_fail(err, SC_EINPUT, "%s:/time: element %d = %g is not finite and non-decreasing", fn, k, a->time[k]);
            goto done;
        }
    if (!sc_h5_exists(f, "/bones")) { /* a boneless body's (its nodes are checked to be there) */
        a->bone_name = calloc(1, sizeof *a->bone_name);
        a->parent = calloc(1, sizeof *a->parent);
        a->bone_pos = calloc(1, sizeof *a->bone_pos);
        a->bone_quat = calloc(1, sizeof *a->bone_quat);
        rc = a->bone_name && a->parent && a->bone_pos && a->bone_quat ? SC_OK : sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    TRY(sc_h5_read_strings(f, "/bones/names", &nb, &names, err));
    if (nb < 1 || nb > 256) {
        rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: expected 1..256 bones, found %zu", fn, nb);
        goto done;
    }
    a->nbones = (int)nb;
    a->bone_name = calloc(nb, sizeof *a->bone_name);
    if (!a->bone_name) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    for (size_t b = 0; b < nb; b++) snprintf(a->bone_name[b], SC_NAME_LEN, "%s", names[b]);
    TRY(sc_h5_read_i32(f, "/bones/parents", 1, D1(nb), &a->parent, err));
    for (int b = 0; b < a->nbones; b++)
        if ((b == 0) != (a->parent[b] < 0) || a->parent[b] >= b) {
            rc = sc_fail(err, SC_EINPUT, "%s:/bones/parents: bone %d has parent %d (the root is bone 0, parents precede children)", fn, b,
                         a->parent[b]);
            goto done;
        }
    TRY(sc_h5_read_f64(f, "/bones/position", 3, D3(a->nframes, nb, 3), &a->bone_pos, err));
    TRY(sc_h5_read_f64(f, "/bones/orientation", 3, D3(a->nframes, nb, 4), &a->bone_quat, err));
    TRY(sc_h5_check_range_nd(f, "/bones/position", a->bone_pos, 3, D3(a->nframes, nb, 3), -1e6, 1e6, 0, err));
    TRY(sc_h5_check_range_nd(f, "/bones/orientation", a->bone_quat, 3, D3(a->nframes, nb, 4), -1e6, 1e6, 0, err));
    for (size_t i = 0; i < (size_t)a->nframes * nb; i++) { /* a zero quaternion would divide by zero */
        double *q = a->bone_quat + 4 * i, n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (!(n > 1e-6)) {
            rc = sc_fail(err, SC_EINPUT, "%s:/bones/orientation: frame %zu bone %zu is not a rotation", fn, i / nb, i % nb);
            goto done;
        }
        for (int d = 0; d < 4; d++) q[d] /= n;
    }
#undef TRY
done:
    if (names) sc_h5_free_strings(names, nb);
    return rc;
}

/* /mesh: counts and every index in range. */
static int read_mesh(sc_h5 *f, const char *fn, sc_sim_data *a, sc_err *err)
{
    size_t dims[2];
    int rc;
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)
    dims[0] = 0;
    dims[1] = 4;
    TRY(sc_h5_read_i32(f, "/mesh/tets", 2, dims, &a->tets, err));
    a->ntets = (int)dims[0];
    dims[0] = 0;
    dims[1] = 3;
    TRY(sc_h5_read_f64(f, "/mesh/rest_pos", 2, dims, &a->rest_pos, err));
    a->nnodes = (int)dims[0];
    TRY(sc_h5_read_i32(f, "/mesh/node_bone", 1, D1(a->nnodes), &a->node_bone, err));
    dims[0] = 0;
    dims[1] = 3;
    TRY(sc_h5_read_i32(f, "/mesh/surface_faces", 2, dims, &a->faces, err));
    a->nsf = (int)dims[0];
    dims[0] = 0;
    TRY(sc_h5_read_i32(f, "/mesh/surface_tet", 1, dims, &a->surf_tet, err));
    a->nsv = (int)dims[0];
    TRY(sc_h5_read_f64(f, "/mesh/surface_bary", 2, D2(a->nsv, 4), &a->surf_bary, err));
    TRY(sc_h5_check_range(f, "/mesh/rest_pos", a->rest_pos, 3 * (size_t)a->nnodes, 3, -1e6, 1e6, 0, err));
    TRY(sc_h5_check_range(f, "/mesh/surface_bary", a->surf_bary, 4 * (size_t)a->nsv, 4, -1e3, 1e3, 0, err));
#undef TRY
    if (a->nnodes < 4 || a->ntets < 1 || a->nsv < 3 || a->nsf < 1)
        return sc_fail(err, SC_EINPUT, "%s:/mesh: empty mesh (%d nodes, %d tets, %d surface vertices, %d faces)", fn, a->nnodes, a->ntets, a->nsv,
                       a->nsf);
    for (size_t i = 0; i < 4 * (size_t)a->ntets; i++)
        if (a->tets[i] < 0 || a->tets[i] >= a->nnodes)
            return sc_fail(err, SC_EINPUT, "%s:/mesh/tets: tet %zu references node %d of %d", fn, i / 4, a->tets[i], a->nnodes);
    for (int i = 0; i < a->nnodes; i++)
        if (a->node_bone[i] < -1 || a->node_bone[i] >= a->nbones)
            return sc_fail(err, SC_EINPUT, "%s:/mesh/node_bone: node %d has bone %d of %d", fn, i, a->node_bone[i], a->nbones);
    for (int i = 0; i < 3 * a->nsf; i++)
        if (a->faces[i] < 0 || a->faces[i] >= a->nsv)
            return sc_fail(err, SC_EINPUT, "%s:/mesh/surface_faces: face %d references vertex %d of %d", fn, i / 3, a->faces[i], a->nsv);
    for (int i = 0; i < a->nsv; i++)
        if (a->surf_tet[i] < 0 || a->surf_tet[i] >= a->ntets)
            return sc_fail(err, SC_EINPUT, "%s:/mesh/surface_tet: vertex %d references tet %d of %d", fn, i, a->surf_tet[i], a->ntets);
    return SC_OK;
}

/* /nodes/position, when present: its shape, and every frame read once (a damaged chunk fails
   here, before anything is drawn). */
static int check_node_frames(sc_h5 *f, const char *fn, sc_sim_data *a, sc_err *err)
{
    a->has_nodes = sc_h5_exists(f, "/nodes/position");
    if (!a->has_nodes) return SC_OK;
    size_t block = 64, nd[3] = {0, (size_t)a->nnodes, 3};
    double *rows = malloc(block * (size_t)a->nnodes * 3 * sizeof(double));
    if (!rows) return sc_fail(err, SC_EIO, "out of memory");
    int rank, rc;
    size_t sh[3];
    if ((rc = sc_h5_shape(f, "/nodes/position", &rank, sh, err))) {
        free(rows);
        return rc;
    }
    if (rank != 3 || sh[0] != (size_t)a->nframes || sh[1] != (size_t)a->nnodes || sh[2] != 3) {
        free(rows);
        return sc_fail(err, SC_EINPUT, "%s:/nodes/position: expected shape %d x %d x 3 (frames x nodes x 3), found rank %d %zu x %zu x %zu", fn,
                       a->nframes, a->nnodes, rank, sh[0], sh[1], sh[2]);
    }
    for (size_t k = 0; k < (size_t)a->nframes && !rc; k += block) {
        size_t n = (size_t)a->nframes - k < block ? (size_t)a->nframes - k : block;
        rc = sc_h5_read_f64_rows(f, "/nodes/position", 3, nd, k, n, rows, err);
    }
    free(rows);
    return rc;
}

/* /muscles' segments as embedded points and their desired lengths, checked. */
static int read_muscle_drawing(sc_h5 *f, const char *fn, sc_sim_data *a, sc_err *err)
{
    size_t np = 0, ns[2] = {0, 2};
    int rc;
    if ((rc = sc_h5_read_i32(f, "/muscles/point_tet", 1, &np, &a->muscle_point_tet, err)) ||
        (rc = sc_h5_read_f64(f, "/muscles/point_bary", 2, D2(np, 4), &a->muscle_point_bary, err)) ||
        (rc = sc_h5_read_i32(f, "/muscles/segments", 2, ns, &a->muscle_seg, err)) ||
        (rc = sc_h5_read_f64(f, "/muscles/rest_length", 1, D1(ns[0]), &a->muscle_rest_len, err)) ||
        (rc = sc_h5_read_f64(f, "/muscles/desired_length", 2, D2(a->nframes, ns[0]), &a->muscle_ld, err)) ||
        (rc = sc_h5_check_range(f, "/muscles/point_bary", a->muscle_point_bary, 4 * np, 4, -1e3, 1e3, 0, err)) ||
        (rc = sc_h5_check_range(f, "/muscles/rest_length", a->muscle_rest_len, ns[0], 1, 1e-9, 1e6, 0, err)) ||
        (rc = sc_h5_check_range(f, "/muscles/desired_length", a->muscle_ld, (size_t)a->nframes * ns[0], ns[0], 0, 1e6, 0, err)))
        return rc;
    a->muscle_npoints = (int)np;
    a->muscle_nsegs = (int)ns[0];
    for (size_t i = 0; i < np; i++)
        if (a->muscle_point_tet[i] < 0 || a->muscle_point_tet[i] >= a->ntets)
            return sc_fail(err, SC_EINPUT, "%s:/muscles/point_tet: point %zu references tet %d of %d", fn, i, a->muscle_point_tet[i], a->ntets);
    for (size_t i = 0; i < 2 * ns[0]; i++)
        if (a->muscle_seg[i] < 0 || a->muscle_seg[i] >= (int)np)
            return sc_fail(err, SC_EINPUT, "%s:/muscles/segments: segment %zu references point %d of %zu", fn, i / 2, a->muscle_seg[i], np);
    return SC_OK;
}

static int read_sim(sc_h5 *f, const char *fn, sc_sim_data *a, sc_err *err)
{
    int rc;
    if ((rc = read_time_and_bones(f, fn, a, err)) || (rc = read_mesh(f, fn, a, err))) return rc;
    if ((rc = read_optional3(f, "/momentum/com", a->nframes, &a->com, err)) ||
        (rc = read_optional3(f, "/contact/force", a->nframes, &a->contact_force, err)) ||
        (rc = read_optional3(f, "/control/push_force", a->nframes, &a->push_force, err)))
        return rc;
    if (sc_h5_exists(f, "/control/reference_time")) {
        size_t nt = (size_t)a->nframes;
        if ((rc = sc_h5_read_f64(f, "/control/reference_time", 1, &nt, &a->ref_time, err))) return rc;
    }
    if (sc_h5_exists(f, "/control/tracking_error")) {
        size_t nt = (size_t)a->nframes;
        if ((rc = sc_h5_read_f64(f, "/control/tracking_error", 1, &nt, &a->tracking_error, err))) return rc;
    }
    if ((rc = check_node_frames(f, fn, a, err))) return rc;
    if (!a->nbones && !a->has_nodes) return sc_fail(err, SC_EINPUT, "%s:/nodes/position: missing; a record without /bones needs its nodes", fn);
    if (sc_h5_exists(f, "/muscles/desired_length") && (rc = read_muscle_drawing(f, fn, a, err))) return rc;
    if (sc_h5_read_attr_str(f, "/", "config", &a->config, NULL)) a->config = NULL; /* best effort */
    char *status = NULL;
    if (!sc_h5_read_attr_str(f, "/", "status", &status, NULL)) {
        snprintf(a->status, sizeof a->status, "%s", status);
        free(status);
    }
    return SC_OK;
}

int sc_sim_open(const char *path, int *is_sim, sc_sim_file **file, sc_sim_data *d, sc_err *err)
{
    memset(d, 0, sizeof *d);
    *file = NULL;
    *is_sim = 0;
    sc_h5 *f;
    int rc = sc_h5_open(path, &f, err);
    if (rc) return rc;
    char *schema = NULL;
    int kind = -1;
    if (sc_h5_read_attr_str(f, "/", "schema", &schema, NULL) == SC_OK) {
        if (!strncmp(schema, "softcon.sim/", 12)) kind = 1;
        else if (!strncmp(schema, "softcon.character/", 18)) kind = 0;
        else
            rc = sc_fail(err, SC_EINPUT, "%s: schema is '%s': expected a sim.h5 (softcon.sim/1) or a character.h5 (softcon.character/1)", path,
                         schema);
        free(schema);
    } else if (sc_h5_exists(f, "/time") || sc_h5_exists(f, "/mesh")) {
        kind = 1;
    } else if (sc_h5_exists(f, "/surface")) {
        kind = 0;
    } else {
        rc = sc_fail(err, SC_EINPUT, "%s:/time: missing; the file is neither a sim.h5 nor a character.h5 (no root 'schema' attribute)", path);
    }
    if (rc || kind == 0) {
        sc_h5_close(f);
        return rc;
    }
    *is_sim = 1;
    if (!(*file = malloc(sizeof **file))) {
        sc_h5_close(f);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    (*file)->f = f;
    if ((rc = read_sim(f, path, d, err))) {
        sc_sim_data_free(d);
        sc_sim_close(*file);
        *file = NULL;
    }
    return rc;
}

int sc_sim_read_node_rows(sc_sim_file *file, int nnodes, int k, int n, double *rows, sc_err *err)
{
    size_t nd[3] = {0, (size_t)nnodes, 3};
    return sc_h5_read_f64_rows(file->f, "/nodes/position", 3, nd, (size_t)k, (size_t)n, rows, err);
}

int sc_sim_read_node_frame(sc_sim_file *file, int nnodes, int k, double *x, sc_err *err)
{
    int rc = sc_sim_read_node_rows(file, nnodes, k, 1, x, err);
    if (!rc) rc = sc_h5_check_range(file->f, "/nodes/position (frame)", x, 3 * (size_t)nnodes, 3, -1e6, 1e6, 0, err);
    return rc;
}

void sc_sim_bones_free(sc_sim_bones *b)
{
    free(b->time);
    free(b->pos);
    free(b->quat);
    free(b->parents);
    if (b->names) sc_h5_free_strings(b->names, b->nbones);
    memset(b, 0, sizeof *b);
}

int sc_sim_read_bones(const char *path, sc_sim_bones *b, sc_err *err)
{
    memset(b, 0, sizeof *b);
    sc_h5 *f;
    int rc = sc_h5_open(path, &f, err);
    if (rc) return rc;
    size_t d3[3] = {0, 0, 3}, d4[3] = {0, 0, 4};
    if (!(rc = sc_h5_read_f64(f, "/time", 1, &b->nframes, &b->time, err)) &&
        !(rc = sc_h5_read_strings(f, "/bones/names", &b->nbones, &b->names, err))) {
        d3[0] = d4[0] = b->nframes;
        d3[1] = d4[1] = b->nbones;
        if (!(rc = sc_h5_read_f64(f, "/bones/position", 3, d3, &b->pos, err)) &&
            !(rc = sc_h5_read_f64(f, "/bones/orientation", 3, d4, &b->quat, err)))
            rc = sc_h5_read_i32(f, "/bones/parents", 1, &b->nbones, &b->parents, err);
    }
    sc_h5_close(f);
    if (rc) sc_sim_bones_free(b);
    return rc;
}

/* The reference for judging sim (its bones, which ref must share; bone_quat only when relative). */
static int fall_reference(const sc_reference *ref, const char *ref_path, const char *sim_path, const sc_fall_motion *sim, int relative,
                          sc_fall_reference *out, sc_err *err)
{
    for (size_t b = 0; b < sim->nbones; b++)
        if ((size_t)ref->nb != sim->nbones || strcmp(sim->names[b], ref->names[b]))
            return sc_fail(err, SC_EINPUT, "%s:/bones/names: the bones differ from those of %s", ref_path, sim_path);
    size_t nq = (size_t)ref->n * (size_t)ref->nb * 4, present = 0;
    for (size_t i = 0; relative && i < nq && !present; i++) present = ref->bone_quat[i] != 0;
    if (relative && !present) return sc_fail(err, SC_EINPUT, "%s:/reference/bone_quat: missing", ref_path);
    *out = (sc_fall_reference){(size_t)ref->n, sim->nbones, ref->time, ref->root_pos, ref->local_quat, relative ? ref->bone_quat : NULL};
    return SC_OK;
}

int sc_sim_judge_fall(const char *sim_path, const char *ref_path, double max_tilt_deg, int relative, sc_fall_report *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    sc_sim_bones b;
    int rc = sc_sim_read_bones(sim_path, &b, err);
    if (rc) return rc;
    sc_fall_motion sim = {b.nframes, b.nbones, b.time, b.pos, b.quat, b.parents, b.names};
    sc_reference ref;
    if (!(rc = sc_reference_read(ref_path, &ref, err))) {
        sc_fall_reference fr;
        if (!(rc = fall_reference(&ref, ref_path, sim_path, &sim, relative, &fr, err))) sc_evaluate_fall_motion(&sim, &fr, max_tilt_deg, r);
        sc_reference_free(&ref);
    }
    sc_sim_bones_free(&b);
    return rc;
}

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sampling/controller.h"
#include "motion/cycle.h"
#include "sampling/openloop.h"

void sc_openloop_trace_free(sc_openloop_trace *t)
{
    void *a[] = {t->time, t->ref_time, t->targets, t->frame_time, t->frame_ref_time, t->bone_pos, t->bone_quat, t->com, t->joint_error,
                 t->ref_bone_pos, t->ref_bone_quat};
    for (size_t i = 0; i < sizeof a / sizeof *a; i++) free(a[i]);
    memset(t, 0, sizeof *t);
}

typedef struct recorder {
    sc_openloop_trace *t;
    const sc_segment_controller *c;
    const sc_tracker *tracker;
    const sc_reference *ref;
    int nb, every;
} recorder;

static int record_state(void *ctx, const sc_sim *s, const sc_quat *targets, const double push[3])
{
    (void)push;
    recorder *R = ctx;
    sc_openloop_trace *t = R->t;
    long k = s->step;
    double tr = sc_segment_ref_time(R->c, k, NULL);
    t->time[k] = s->t;
    t->ref_time[k] = tr;
    memcpy(t->targets + (size_t)k * R->nb * 4, targets, sizeof(sc_quat) * (size_t)R->nb);
    if (k % R->every == 0) {
        long f = t->nframes++;
        t->frame_time[f] = s->t;
        t->frame_ref_time[f] = tr;
        for (int b = 0; b < R->nb; b++) {
            sc_v3_store(t->bone_pos + 3 * ((size_t)f * R->nb + b), s->pose[b].p);
            double *q = t->bone_quat + 4 * ((size_t)f * R->nb + b);
            q[0] = s->pose[b].q.w; q[1] = s->pose[b].q.x; q[2] = s->pose[b].q.y; q[3] = s->pose[b].q.z;
        }
        sc_sim_diag d;
        sc_sim_diagnostics(s, &d);
        memcpy(t->com + 3 * f, d.com, sizeof d.com);
        t->joint_error[f] = sc_tracker_joint_rms(R->tracker, s, tr);
        sc_xform rb[SC_SIM_MAX_BONES];
        sc_tracker_reference_bones(R->tracker, tr, rb);
        for (int b = 0; b < R->nb; b++) {
            sc_v3_store(t->ref_bone_pos + 3 * ((size_t)f * R->nb + b), rb[b].p);
            double *q = t->ref_bone_quat + 4 * ((size_t)f * R->nb + b);
            q[0] = rb[b].q.w; q[1] = rb[b].q.x; q[2] = rb[b].q.y; q[3] = rb[b].q.z;
        }
    }
    sc_v3_store(t->final_root, s->pose[0].p);
    sc_ref_state rs;
    sc_tracker_reference(R->tracker, tr, &rs);
    sc_v3_store(t->final_ref_root, rs.root_pos);
    return 0;
}

int sc_openloop_record(const sc_samcon_run *run, const sc_samcon_result *r, sc_sim *s, int every, sc_openloop_trace *t, sc_err *err)
{
    memset(t, 0, sizeof *t);
    int nb = run->m->nbones;
    long end = r->nseg ? r->seg[r->nseg - 1].start_step + r->seg[r->nseg - 1].steps : 0;
    size_t n = (size_t)end + 1, nf = (size_t)(end / every) + 2;
    t->time = malloc(n * sizeof(double));
    t->ref_time = malloc(n * sizeof(double));
    t->targets = malloc(n * (size_t)nb * 4 * sizeof(double));
    t->frame_time = malloc(nf * sizeof(double));
    t->frame_ref_time = malloc(nf * sizeof(double));
    t->bone_pos = malloc(nf * (size_t)nb * 3 * sizeof(double));
    t->bone_quat = malloc(nf * (size_t)nb * 4 * sizeof(double));
    t->com = malloc(nf * 3 * sizeof(double));
    t->joint_error = malloc(nf * sizeof(double));
    t->ref_bone_pos = malloc(nf * (size_t)nb * 3 * sizeof(double));
    t->ref_bone_quat = malloc(nf * (size_t)nb * 4 * sizeof(double));
    sc_segment *seg = malloc(sizeof *seg * (size_t)(r->nseg ? r->nseg : 1));
    if (!t->time || !t->ref_time || !t->targets || !t->frame_time || !t->frame_ref_time || !t->bone_pos || !t->bone_quat || !t->com ||
        !t->joint_error || !t->ref_bone_pos || !t->ref_bone_quat || !seg) {
        free(seg);
        sc_openloop_trace_free(t);
        return sc_fail(err, SC_EIO, "out of memory recording the controller");
    }
    t->n = (long)n;
    sc_tracker tracker;
    int rc = sc_tracker_init(&tracker, run->m, run->ref, &run->cfg->tracker, err);
    if (rc) { free(seg); sc_openloop_trace_free(t); return rc; }
    sc_segment_controller c;
    sc_samcon_controller(run, r, seg, &c);
    recorder R = {t, &c, &tracker, run->ref, nb, every};
    if (r->nseg == 0) { /* nothing was found: the start state alone */
        rc = sc_samcon_start_state(run, s, err);
        if (!rc) {
            sc_quat q[SC_SIM_MAX_BONES];
            sc_skeleton_local_rotations(s->skel, q);
            static const sc_segment none = {0};
            sc_segment one = none;
            one.ref_t0 = one.ref_t1 = run->ref->time[0] + run->cfg->start;
            one.steps = 1;
            c.seg = &one;
            c.nseg = 1;
            one.offset = r->offset;
            record_state(&R, s, q, NULL);
        }
    } else {
        rc = sc_samcon_replay(run, r, s, record_state, &R, err);
    }
    sc_tracker_free(&tracker);
    free(seg);
    if (rc) sc_openloop_trace_free(t);
    return rc;
}

int sc_openloop_write_reference(sc_h5 *f, const char *path, const sc_reference *r, sc_err *err)
{
    char hex[24], abs[4096];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sc_reference_hash(r));
    if (!realpath(path, abs)) snprintf(abs, sizeof abs, "%s", path);
    int rc = sc_h5_attr_str(f, "/", "reference", path, err);
    if (!rc) rc = sc_h5_attr_str(f, "/", "reference_path", abs, err);
    if (!rc) rc = sc_h5_attr_str(f, "/", "reference_hash", hex, err);
    return rc;
}

static double rms(const double *v, long n)
{
    double s = 0;
    for (long i = 0; i < n; i++) s += v[i] * v[i];
    return n ? sqrt(s / n) : 0;
}

int sc_openloop_write(sc_h5 *f, const sc_samcon_run *run, const sc_samcon_result *r, const sc_openloop_trace *t, sc_err *err)
{
    const sc_model *m = run->m;
    const sc_control_dofs *d = run->dofs;
    const sc_samcon_config *c = run->cfg;
    size_t nb = (size_t)m->nbones, S = (size_t)r->nseg, D = (size_t)d->n, K = SC_FAIL_KINDS;
    int rc;
    const char *names[SC_SIM_MAX_BONES], *dofn[SC_MAX_DOFS], *kinds[SC_FAIL_KINDS], *terms[SC_COST_TERMS];
    for (size_t b = 0; b < nb; b++) names[b] = m->bone_name[b];
    for (size_t i = 0; i < D; i++) dofn[i] = d->name[i];
    for (size_t i = 0; i < K; i++) kinds[i] = sc_failure_names[i];
    for (size_t i = 0; i < SC_COST_TERMS; i++) terms[i] = sc_cost_term_names[i];
    size_t one = S ? S : 1;
    double *a = calloc(one * (K > SC_COST_TERMS ? K : SC_COST_TERMS) * 13, sizeof(double));
    int *ia = calloc(one * K * 4, sizeof(int));
    if (!a || !ia) { free(a); free(ia); return sc_fail(err, SC_EIO, "out of memory"); }
    double *ref_t0 = a, *ref_t1 = a + one, *scale = a + 2 * one, *cost = a + 3 * one, *path = a + 4 * one, *best = a + 5 * one,
           *median = a + 6 * one, *escale = a + 7 * one, *cterms = a + 8 * one;
    int *start_step = ia, *steps = ia + one, *samples = ia + 2 * one, *failures = ia + 3 * one, *attempts = ia + 4 * one, *fk = ia + 5 * one;
    for (size_t j = 0; j < S; j++) {
        const sc_samcon_segment *g = &r->seg[j];
        ref_t0[j] = g->ref_t0; ref_t1[j] = g->ref_t1; scale[j] = g->scale; cost[j] = g->cost; path[j] = g->path_cost;
        best[j] = g->best_elite; median[j] = g->median_elite; escale[j] = g->mean_scale_elites;
        memcpy(cterms + SC_COST_TERMS * j, g->terms, sizeof g->terms);
        start_step[j] = (int)g->start_step; steps[j] = (int)g->steps; samples[j] = g->samples; failures[j] = g->failures;
        attempts[j] = g->attempts;
        for (size_t q = 0; q < K; q++) fk[K * j + q] = (int)g->fail_kind[q];
    }
    double start_pos[3], start_vel[3], start_w[3 * SC_SIM_MAX_BONES];
    sc_quat start_q[SC_SIM_MAX_BONES];
    double reached = S ? r->seg[S - 1].ref_t1 - run->ref->time[0] : c->start;
    double drift = hypot(t->final_root[0] - t->final_ref_root[0], t->final_root[2] - t->final_ref_root[2]);
    char status[128];
    if (r->completed) snprintf(status, sizeof status, "completed");
    else snprintf(status, sizeof status, "partial: reached t = %.3f s of the reference (%zu of %d segments)", reached, S, r->nseg_total);
#define TRY(x) if ((rc = (x))) goto done
    TRY(sc_reference_state_at(run->ref, m, run->ref->time[0] + c->start, start_pos, start_q, start_vel, start_w, err));
    TRY(sc_h5_attr_str(f, "/", "status", status, err));
    TRY(sc_h5_attr_i64(f, "/", "seed", (long long)run->seed, err));
    TRY(sc_h5_attr_str(f, "/", "base_targets", c->base == SC_BASE_ID ? "inverse-dynamics targets (eq. 32)" : "raw reference poses", err));
    TRY(sc_h5_attr_i64(f, "/", "time_scaling", c->time_scaling, err));
    TRY(sc_h5_attr_f64(f, "/", "dt", run->sim_opts->dt, err));
    TRY(sc_h5_write_strings(f, "/bones/names", nb, names, "the character's bones, in the order of every per-bone dataset", err));
    /* the controller at the simulation rate */
    sc_h5_series *tl, *tq, *trt;
    TRY(sc_h5_timeline_create(f, "/time", &tl, err));
    TRY(sc_h5_group(f, "/targets", "PD targets applied at every step", err));
    TRY(sc_h5_series_create(f, "/targets/local_quat", tl, 2, (size_t[]){nb, 4}, "1", "PD target local rotations (w, x, y, z): base targets composed with the segment's offsets", &tq, err));
    TRY(sc_h5_series_create(f, "/targets/reference_time", tl, 0, NULL, "s", "reference time played at this step (time scaling)", &trt, err));
    for (long k = 0; k < t->n; k++) {
        TRY(sc_h5_series_append(tl, t->time + k, err));
        TRY(sc_h5_series_append(tq, t->targets + (size_t)k * nb * 4, err));
        TRY(sc_h5_series_append(trt, t->ref_time + k, err));
    }
    TRY(sc_h5_group(f, "/start", "the state the controller starts from (sc_sim_set_pose): the reference's at sampling.start", err));
    TRY(sc_h5_write_f64(f, "/start/root_pos", 1, (size_t[]){3}, start_pos, "m", "root bone origin", err));
    TRY(sc_h5_write_f64(f, "/start/root_vel", 1, (size_t[]){3}, start_vel, "m/s", "root origin velocity", err));
    TRY(sc_h5_write_f64(f, "/start/local_quat", 2, (size_t[]){nb, 4}, (const double *)start_q, "1", "local rotations (root: world)", err));
    TRY(sc_h5_write_f64(f, "/start/local_ang_vel", 2, (size_t[]){nb, 3}, start_w, "rad/s", "local angular velocities, parent frame", err));
    /* the segments */
    TRY(sc_h5_group(f, "/segments", "the controller's segments ([L13] 5.2) and the search statistics of each", err));
    TRY(sc_h5_write_f64(f, "/segments/ref_t0", 1, &one, ref_t0, "s", "start of the reference span (reference time)", err));
    TRY(sc_h5_write_f64(f, "/segments/ref_t1", 1, &one, ref_t1, "s", "end of the reference span", err));
    TRY(sc_h5_write_i32(f, "/segments/start_step", 1, &one, start_step, "simulation step at which the segment starts", err));
    TRY(sc_h5_write_i32(f, "/segments/steps", 1, &one, steps, "simulated length in steps of dt", err));
    TRY(sc_h5_write_f64(f, "/segments/time_scale", 1, &one, scale, "1", "simulated / reference duration", err));
    TRY(sc_h5_write_f64(f, "/segments/offsets", 2, (size_t[]){one, D}, r->offset, "rad", "PD target offsets per control DoF, held over the segment", err));
    TRY(sc_h5_write_strings(f, "/segments/dof_names", D, dofn, "control DoFs: bone.x|y|z of a ball joint's joint-frame rotation vector, or a hinge's angle", err));
    TRY(sc_h5_write_f64(f, "/segments/cost", 1, &one, cost, "1", "weighted cost at the segment's end", err));
    TRY(sc_h5_write_f64(f, "/segments/path_cost", 1, &one, path, "1", "cost summed along the path", err));
    TRY(sc_h5_write_f64(f, "/segments/cost_terms", 2, (size_t[]){one, SC_COST_TERMS}, cterms, "1", "unweighted cost terms (see cost_term_names)", err));
    TRY(sc_h5_write_strings(f, "/segments/cost_term_names", SC_COST_TERMS, terms, "pose (rad + 0.1 s rad/s), root (same), end_effector (m), balance (m + 0.1 s m/s), com (m), heading (rad)", err));
    TRY(sc_h5_attr_f64_array(f, "/segments/cost_terms", "weights", SC_COST_TERMS, c->tracker.weights, err));
    TRY(sc_h5_attr_str(f, "/segments/cost_terms", "frame", c->tracker.frame == SC_COST_FRAME_HEADING ? "heading" : "world", err));
    TRY(sc_h5_write_i32(f, "/segments/samples", 1, &one, samples, "samples simulated for this segment over all attempts", err));
    TRY(sc_h5_write_i32(f, "/segments/failures", 1, &one, failures, "of those, failed", err));
    TRY(sc_h5_write_i32(f, "/segments/attempts", 1, &one, attempts, "times the segment was sampled (backtracking repeats it)", err));
    TRY(sc_h5_write_i32(f, "/segments/failure_kinds", 2, (size_t[]){one, K}, fk, "samples per failure kind (see failure_kind_names; the first column: not failed)", err));
    TRY(sc_h5_write_strings(f, "/segments/failure_kind_names", K, kinds, "kinds of sample failure", err));
    TRY(sc_h5_write_f64(f, "/segments/elite_best", 1, &one, best, "1", "lowest path cost among the elites (last attempt)", err));
    TRY(sc_h5_write_f64(f, "/segments/elite_median", 1, &one, median, "1", "median path cost of the elites", err));
    TRY(sc_h5_write_f64(f, "/segments/elite_time_scale", 1, &one, escale, "1", "mean time scale of the elites", err));
    /* what the controller achieves */
    sc_h5_series *at, *ap, *aq, *ac, *ar, *ae, *gp, *gq;
    TRY(sc_h5_group(f, "/achieved", "the motion the controller achieves (a replay of the path), every output.every steps", err));
    TRY(sc_h5_timeline_create(f, "/achieved/time", &at, err));
    TRY(sc_h5_series_create(f, "/achieved/bone_position", at, 2, (size_t[]){nb, 3}, "m", "bone origin positions", &ap, err));
    TRY(sc_h5_series_create(f, "/achieved/bone_orientation", at, 2, (size_t[]){nb, 4}, "1", "bone rotations (w, x, y, z)", &aq, err));
    TRY(sc_h5_series_create(f, "/achieved/com", at, 1, (size_t[]){3}, "m", "centre of mass", &ac, err));
    TRY(sc_h5_series_create(f, "/achieved/reference_time", at, 0, NULL, "s", "reference time played", &ar, err));
    TRY(sc_h5_series_create(f, "/achieved/joint_error", at, 0, NULL, "rad", "RMS over joints of the angle to the reference's local rotation", &ae, err));
    TRY(sc_h5_series_create(f, "/achieved/reference_bone_position", at, 2, (size_t[]){nb, 3}, "m", "the tracked reference's bone origins at the played time", &gp, err));
    TRY(sc_h5_series_create(f, "/achieved/reference_bone_orientation", at, 2, (size_t[]){nb, 4}, "1", "the tracked reference's bone rotations", &gq, err));
    for (long q = 0; q < t->nframes; q++) {
        TRY(sc_h5_series_append(at, t->frame_time + q, err));
        TRY(sc_h5_series_append(ap, t->bone_pos + (size_t)q * nb * 3, err));
        TRY(sc_h5_series_append(aq, t->bone_quat + (size_t)q * nb * 4, err));
        TRY(sc_h5_series_append(ac, t->com + 3 * q, err));
        TRY(sc_h5_series_append(ar, t->frame_ref_time + q, err));
        TRY(sc_h5_series_append(ae, t->joint_error + q, err));
        TRY(sc_h5_series_append(gp, t->ref_bone_pos + (size_t)q * nb * 3, err));
        TRY(sc_h5_series_append(gq, t->ref_bone_quat + (size_t)q * nb * 4, err));
    }
    if (run->cycle) {
        const sc_cycle *cy = run->cycle;
        for (size_t j = 0; j < S; j++) steps[j] = (int)(j % (size_t)run->fragments); /* steps is written: reuse it */
        TRY(sc_h5_write_i32(f, "/segments/fragment", 1, &one, steps, "the fragment of the gait cycle each segment plays", err));
        TRY(sc_h5_group(f, "/cycle", "the gait cycle of the reference the controller tracks, repeated (sampling.cycle)", err));
        TRY(sc_h5_attr_f64(f, "/cycle", "t0", cy->t0, err));
        TRY(sc_h5_attr_f64(f, "/cycle", "t1", cy->t1, err));
        TRY(sc_h5_attr_f64(f, "/cycle", "period_s", cy->t1 - cy->t0, err));
        TRY(sc_h5_attr_i64(f, "/cycle", "cycles", c->cycles, err));
        TRY(sc_h5_attr_i64(f, "/cycle", "fragments", run->fragments, err));
        TRY(sc_h5_attr_f64(f, "/cycle", "pose_error_deg", cy->pose_error * 180 / SC_PI, err));
        TRY(sc_h5_attr_f64(f, "/cycle", "velocity_error_rad_per_s", cy->velocity_error, err));
        if (isfinite(cy->mean_error)) TRY(sc_h5_attr_f64(f, "/cycle", "mean_pose_error_deg", cy->mean_error * 180 / SC_PI, err));
    }
    TRY(sc_h5_group(f, "/report", "how well the controller tracks the reference", err));
    TRY(sc_h5_attr_i64(f, "/report", "completed", r->completed, err));
    TRY(sc_h5_attr_f64(f, "/report", "reached_reference_time_s", reached, err));
    TRY(sc_h5_attr_i64(f, "/report", "segments", (long long)S, err));
    TRY(sc_h5_attr_i64(f, "/report", "segments_of_clip", r->nseg_total, err));
    TRY(sc_h5_attr_f64(f, "/report", "rms_joint_error_rad", rms(t->joint_error, t->nframes), err));
    TRY(sc_h5_attr_f64(f, "/report", "root_drift_m", drift, err));
    TRY(sc_h5_attr_f64(f, "/report", "root_height_error_m", t->final_root[1] - t->final_ref_root[1], err));
    TRY(sc_h5_attr_f64(f, "/report", "final_cost", S ? r->seg[S - 1].path_cost : 0, err));
    TRY(sc_h5_attr_i64(f, "/report", "samples", r->samples, err));
    TRY(sc_h5_attr_i64(f, "/report", "backtracks", r->backtracks, err));
    TRY(sc_h5_attr_i64(f, "/report", "numeric_failures", r->numeric_failures, err));
    TRY(sc_h5_group(f, "/run", "how this run went (varies between runs of the same inputs)", err));
    TRY(sc_h5_attr_f64(f, "/run", "wall_seconds", r->wall_seconds, err));
    TRY(sc_h5_attr_f64(f, "/run", "samples_per_second", r->wall_seconds > 0 ? r->samples / r->wall_seconds : 0, err));
    TRY(sc_h5_attr_f64(f, "/run", "samples_per_second_per_rank", r->sample_seconds > 0 ? r->samples / r->sample_seconds : 0, err));
    TRY(sc_h5_attr_i64(f, "/run", "ranks", r->ranks, err));
#undef TRY
done:
    free(a);
    free(ia);
    return rc;
}

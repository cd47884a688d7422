/* openloop.h5 (softcon.openloop/1), the one reader and writer of sample-openloop's output: the
 * writer, the gait-cycle reader learn-feedback uses, and the target trajectory and start state
 * simulate replays (a trajectory may also be a reference.h5: see trajectory_reader). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/hash.h"
#include "io/h5.h"
#include "motion/reference.h"
#include "store/openloop.h"
#include "store/character.h"
#include "store/timeline.h"

/* ---- the writer ----------------------------------------------------------------------------- */

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

#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)

/* The root attributes of the search, /bones/names, and the controller at the simulation rate
   (/time, /targets). */
static int write_targets(sc_h5 *f, const sc_samcon_run *run, const sc_samcon_result *r, const sc_openloop_trace *t, sc_err *err)
{
    const sc_model *m = run->m;
    const sc_samcon_config *c = run->cfg;
    size_t nb = (size_t)m->nbones, nseg = (size_t)r->nseg;
    const char *names[SC_SIM_MAX_BONES];
    for (size_t b = 0; b < nb; b++) names[b] = m->bone_name[b];
    double reached = nseg ? r->seg[nseg - 1].ref_t1 - run->ref->time[0] : c->start;
    char status[128];
    if (r->completed) snprintf(status, sizeof status, "completed");
    else if (r->interrupted)
        snprintf(status, sizeof status, "interrupted: reached t = %.3f s of the reference (%zu of %d segments)", reached, nseg, r->nseg_total);
    else snprintf(status, sizeof status, "partial: reached t = %.3f s of the reference (%zu of %d segments)", reached, nseg, r->nseg_total);
    int rc;
    TRY(sc_h5_attr_str(f, "/", "status", status, err));
    TRY(sc_h5_attr_i64(f, "/", "seed", (long long)run->seed, err));
    TRY(sc_h5_attr_str(f, "/", "base_targets", c->base == SC_BASE_ID ? "inverse-dynamics targets (eq. 32)" : "raw reference poses", err));
    TRY(sc_h5_attr_i64(f, "/", "time_scaling", c->time_scaling, err));
    TRY(sc_h5_attr_f64(f, "/", "dt", run->sim_opts->dt, err));
    TRY(sc_h5_write_strings(f, "/bones/names", nb, names, "the character's bones, in the order of every per-bone dataset", err));
    sc_h5_series *timeline, *targets, *ref_time;
    TRY(sc_h5_timeline_create(f, "/time", &timeline, err));
    TRY(sc_h5_group(f, "/targets", "PD targets applied at every step", err));
    TRY(sc_h5_series_create(f, "/targets/local_quat", timeline, 2, (size_t[]){nb, 4}, "1",
                            "PD target local rotations (w, x, y, z): base targets composed with the segment's offsets", &targets, err));
    TRY(sc_h5_series_create(f, "/targets/reference_time", timeline, 0, NULL, "s", "reference time played at this step (time scaling)", &ref_time,
                            err));
    for (long k = 0; k < t->n; k++) {
        TRY(sc_h5_series_append(timeline, t->time + k, err));
        TRY(sc_h5_series_append(targets, t->targets + (size_t)k * nb * 4, err));
        TRY(sc_h5_series_append(ref_time, t->ref_time + k, err));
    }
    return SC_OK;
}

/* /start: the reference's state at sampling.start, which the controller starts from. */
static int write_start(sc_h5 *f, size_t nb, const double pos[3], const double vel[3], const sc_quat *q, const double *w, sc_err *err)
{
    int rc;
    TRY(sc_h5_group(f, "/start", "the state the controller starts from (sc_sim_set_pose): the reference's at sampling.start", err));
    TRY(sc_h5_write_f64(f, "/start/root_pos", 1, (size_t[]){3}, pos, "m", "root bone origin", err));
    TRY(sc_h5_write_f64(f, "/start/root_vel", 1, (size_t[]){3}, vel, "m/s", "root origin velocity", err));
    TRY(sc_h5_write_f64(f, "/start/local_quat", 2, (size_t[]){nb, 4}, (const double *)q, "1", "local rotations (root: world)", err));
    TRY(sc_h5_write_f64(f, "/start/local_ang_vel", 2, (size_t[]){nb, 3}, w, "rad/s", "local angular velocities, parent frame", err));
    return SC_OK;
}

/* The columns of /segments, one value per segment (at least one row, zeros when none was found). */
typedef struct segment_columns {
    double *ref_t0, *ref_t1, *scale, *cost, *path_cost, *best, *median, *elite_scale, *terms;
    int *start_step, *steps, *samples, *failures, *attempts, *fail_kinds;
} segment_columns;

static void fill_segment_columns(const sc_samcon_result *r, double *a, int *ia, size_t rows, segment_columns *col)
{
    size_t K = SC_FAIL_KINDS;
    *col = (segment_columns){a,  a + rows,  a + 2 * rows,  a + 3 * rows,  a + 4 * rows,  a + 5 * rows, a + 6 * rows, a + 7 * rows, a + 8 * rows,
                             ia, ia + rows, ia + 2 * rows, ia + 3 * rows, ia + 4 * rows, ia + 5 * rows};
    for (size_t j = 0; j < (size_t)r->nseg; j++) {
        const sc_samcon_segment *g = &r->seg[j];
        col->ref_t0[j] = g->ref_t0;
        col->ref_t1[j] = g->ref_t1;
        col->scale[j] = g->scale;
        col->cost[j] = g->cost;
        col->path_cost[j] = g->path_cost;
        col->best[j] = g->best_elite;
        col->median[j] = g->median_elite;
        col->elite_scale[j] = g->mean_scale_elites;
        memcpy(col->terms + SC_COST_TERMS * j, g->terms, sizeof g->terms);
        col->start_step[j] = (int)g->start_step;
        col->steps[j] = (int)g->steps;
        col->samples[j] = g->samples;
        col->failures[j] = g->failures;
        col->attempts[j] = g->attempts;
        for (size_t q = 0; q < K; q++) col->fail_kinds[K * j + q] = (int)g->fail_kind[q];
    }
}

/* /segments: the controller's segments and the search statistics of each. */
static int write_segments(sc_h5 *f, const sc_samcon_run *run, const sc_samcon_result *r, const segment_columns *col, size_t rows, sc_err *err)
{
    const sc_control_dofs *d = run->dofs;
    const sc_samcon_config *c = run->cfg;
    size_t D = (size_t)d->n, K = SC_FAIL_KINDS;
    const char *dofn[SC_MAX_DOFS], *kinds[SC_FAIL_KINDS], *terms[SC_COST_TERMS];
    for (size_t i = 0; i < D; i++) dofn[i] = d->name[i];
    for (size_t i = 0; i < K; i++) kinds[i] = sc_failure_names[i];
    for (size_t i = 0; i < SC_COST_TERMS; i++) terms[i] = sc_cost_term_names[i];
    const size_t *one = &rows;
    int rc;
    TRY(sc_h5_group(f, "/segments", "the controller's segments ([L13] 5.2) and the search statistics of each", err));
    TRY(sc_h5_write_f64(f, "/segments/ref_t0", 1, one, col->ref_t0, "s", "start of the reference span (reference time)", err));
    TRY(sc_h5_write_f64(f, "/segments/ref_t1", 1, one, col->ref_t1, "s", "end of the reference span", err));
    TRY(sc_h5_write_i32(f, "/segments/start_step", 1, one, col->start_step, "simulation step at which the segment starts", err));
    TRY(sc_h5_write_i32(f, "/segments/steps", 1, one, col->steps, "simulated length in steps of dt", err));
    TRY(sc_h5_write_f64(f, "/segments/time_scale", 1, one, col->scale, "1", "simulated / reference duration", err));
    TRY(sc_h5_write_f64(f, "/segments/offsets", 2, (size_t[]){rows, D}, r->offset, "rad", "PD target offsets per control DoF, held over the segment",
                        err));
    TRY(sc_h5_write_strings(f, "/segments/dof_names", D, dofn,
                            "control DoFs: bone.x|y|z of a ball joint's joint-frame rotation vector, or a hinge's angle", err));
    TRY(sc_h5_write_f64(f, "/segments/cost", 1, one, col->cost, "1", "weighted cost at the segment's end", err));
    TRY(sc_h5_write_f64(f, "/segments/path_cost", 1, one, col->path_cost, "1", "cost summed along the path", err));
    TRY(sc_h5_write_f64(f, "/segments/cost_terms", 2, (size_t[]){rows, SC_COST_TERMS}, col->terms, "1", "unweighted cost terms (see cost_term_names)",
                        err));
    TRY(sc_h5_write_strings(f, "/segments/cost_term_names", SC_COST_TERMS, terms,
                            "pose (rad + 0.1 s rad/s), root (same), end_effector (m), balance (m + 0.1 s m/s), com (m), heading (rad)", err));
    TRY(sc_h5_attr_f64_array(f, "/segments/cost_terms", "weights", SC_COST_TERMS, c->tracker.weights, err));
    TRY(sc_h5_attr_str(f, "/segments/cost_terms", "frame", c->tracker.frame == SC_COST_FRAME_HEADING ? "heading" : "world", err));
    TRY(sc_h5_write_i32(f, "/segments/samples", 1, one, col->samples, "samples simulated for this segment over all attempts", err));
    TRY(sc_h5_write_i32(f, "/segments/failures", 1, one, col->failures, "of those, failed", err));
    TRY(sc_h5_write_i32(f, "/segments/attempts", 1, one, col->attempts, "times the segment was sampled (backtracking repeats it)", err));
    TRY(sc_h5_write_i32(f, "/segments/failure_kinds", 2, (size_t[]){rows, K}, col->fail_kinds,
                        "samples per failure kind (see failure_kind_names; the first column: not failed)", err));
    TRY(sc_h5_write_strings(f, "/segments/failure_kind_names", K, kinds, "kinds of sample failure", err));
    TRY(sc_h5_write_f64(f, "/segments/elite_best", 1, one, col->best, "1", "lowest path cost among the elites (last attempt)", err));
    TRY(sc_h5_write_f64(f, "/segments/elite_median", 1, one, col->median, "1", "median path cost of the elites", err));
    TRY(sc_h5_write_f64(f, "/segments/elite_time_scale", 1, one, col->elite_scale, "1", "mean time scale of the elites", err));
    return SC_OK;
}

/* /achieved: the motion the controller achieves, every output.every steps. */
static int write_achieved(sc_h5 *f, size_t nb, const sc_openloop_trace *t, sc_err *err)
{
    sc_h5_series *time, *pos, *quat, *com, *ref_time, *joint_error, *ref_pos, *ref_quat;
    int rc;
    TRY(sc_h5_group(f, "/achieved", "the motion the controller achieves (a replay of the path), every output.every steps", err));
    TRY(sc_h5_timeline_create(f, "/achieved/time", &time, err));
    TRY(sc_h5_series_create(f, "/achieved/bone_position", time, 2, (size_t[]){nb, 3}, "m", "bone origin positions", &pos, err));
    TRY(sc_h5_series_create(f, "/achieved/bone_orientation", time, 2, (size_t[]){nb, 4}, "1", "bone rotations (w, x, y, z)", &quat, err));
    TRY(sc_h5_series_create(f, "/achieved/com", time, 1, (size_t[]){3}, "m", "centre of mass", &com, err));
    TRY(sc_h5_series_create(f, "/achieved/reference_time", time, 0, NULL, "s", "reference time played", &ref_time, err));
    TRY(sc_h5_series_create(f, "/achieved/joint_error", time, 0, NULL, "rad", "RMS over joints of the angle to the reference's local rotation",
                            &joint_error, err));
    TRY(sc_h5_series_create(f, "/achieved/reference_bone_position", time, 2, (size_t[]){nb, 3}, "m",
                            "the tracked reference's bone origins at the played time", &ref_pos, err));
    TRY(sc_h5_series_create(f, "/achieved/reference_bone_orientation", time, 2, (size_t[]){nb, 4}, "1", "the tracked reference's bone rotations",
                            &ref_quat, err));
    for (long q = 0; q < t->nframes; q++) {
        TRY(sc_h5_series_append(time, t->frame_time + q, err));
        TRY(sc_h5_series_append(pos, t->bone_pos + (size_t)q * nb * 3, err));
        TRY(sc_h5_series_append(quat, t->bone_quat + (size_t)q * nb * 4, err));
        TRY(sc_h5_series_append(com, t->com + 3 * q, err));
        TRY(sc_h5_series_append(ref_time, t->frame_ref_time + q, err));
        TRY(sc_h5_series_append(joint_error, t->joint_error + q, err));
        TRY(sc_h5_series_append(ref_pos, t->ref_bone_pos + (size_t)q * nb * 3, err));
        TRY(sc_h5_series_append(ref_quat, t->ref_bone_quat + (size_t)q * nb * 4, err));
    }
    return SC_OK;
}

/* /segments/fragment and /cycle, when a gait cycle was tracked; fragment is scratch of rows ints. */
static int write_cycle(sc_h5 *f, const sc_samcon_run *run, size_t nseg, int *fragment, size_t rows, sc_err *err)
{
    const sc_cycle *cy = run->cycle;
    int rc;
    for (size_t j = 0; j < nseg; j++) fragment[j] = (int)(j % (size_t)run->fragments);
    TRY(sc_h5_write_i32(f, "/segments/fragment", 1, &rows, fragment, "the fragment of the gait cycle each segment plays", err));
    TRY(sc_h5_group(f, "/cycle", "the gait cycle of the reference the controller tracks, repeated (sampling.cycle)", err));
    TRY(sc_h5_attr_f64(f, "/cycle", "t0", cy->t0, err));
    TRY(sc_h5_attr_f64(f, "/cycle", "t1", cy->t1, err));
    TRY(sc_h5_attr_f64(f, "/cycle", "period_s", cy->t1 - cy->t0, err));
    TRY(sc_h5_attr_i64(f, "/cycle", "cycles", run->cfg->cycles, err));
    TRY(sc_h5_attr_i64(f, "/cycle", "fragments", run->fragments, err));
    TRY(sc_h5_attr_f64(f, "/cycle", "pose_error_deg", cy->pose_error * 180 / SC_PI, err));
    TRY(sc_h5_attr_f64(f, "/cycle", "velocity_error_rad_per_s", cy->velocity_error, err));
    if (isfinite(cy->mean_error)) TRY(sc_h5_attr_f64(f, "/cycle", "mean_pose_error_deg", cy->mean_error * 180 / SC_PI, err));
    return SC_OK;
}

/* /report (how well the controller tracks) and /run (how this run went). */
static int write_report(sc_h5 *f, const sc_samcon_run *run, const sc_samcon_result *r, const sc_openloop_trace *t, sc_err *err)
{
    size_t nseg = (size_t)r->nseg;
    double reached = nseg ? r->seg[nseg - 1].ref_t1 - run->ref->time[0] : run->cfg->start;
    double drift = hypot(t->final_root[0] - t->final_ref_root[0], t->final_root[2] - t->final_ref_root[2]);
    int rc;
    TRY(sc_h5_group(f, "/report", "how well the controller tracks the reference", err));
    TRY(sc_h5_attr_i64(f, "/report", "completed", r->completed, err));
    TRY(sc_h5_attr_f64(f, "/report", "reached_reference_time_s", reached, err));
    TRY(sc_h5_attr_i64(f, "/report", "segments", (long long)nseg, err));
    TRY(sc_h5_attr_i64(f, "/report", "segments_of_clip", r->nseg_total, err));
    TRY(sc_h5_attr_f64(f, "/report", "rms_joint_error_rad", rms(t->joint_error, t->nframes), err));
    TRY(sc_h5_attr_f64(f, "/report", "root_drift_m", drift, err));
    TRY(sc_h5_attr_f64(f, "/report", "root_height_error_m", t->final_root[1] - t->final_ref_root[1], err));
    TRY(sc_h5_attr_f64(f, "/report", "final_cost", nseg ? r->seg[nseg - 1].path_cost : 0, err));
    TRY(sc_h5_attr_i64(f, "/report", "samples", r->samples, err));
    TRY(sc_h5_attr_i64(f, "/report", "backtracks", r->backtracks, err));
    TRY(sc_h5_attr_i64(f, "/report", "numeric_failures", r->numeric_failures, err));
    TRY(sc_h5_group(f, "/run", "how this run went (varies between runs of the same inputs)", err));
    TRY(sc_h5_attr_f64(f, "/run", "wall_seconds", r->wall_seconds, err));
    TRY(sc_h5_attr_f64(f, "/run", "samples_per_second", r->wall_seconds > 0 ? r->samples / r->wall_seconds : 0, err));
    TRY(sc_h5_attr_f64(f, "/run", "samples_per_second_per_rank", r->sample_seconds > 0 ? r->samples / r->sample_seconds : 0, err));
    TRY(sc_h5_attr_i64(f, "/run", "ranks", r->ranks, err));
    TRY(sc_h5_attr_i64(f, "/run", "threads", r->threads, err));
    TRY(sc_timeline_write(f, "/run", r->ntimeline, r->ranks, r->timeline, r->timeline_segment, err));
    if (r->peak_memory)
        TRY(sc_h5_write_f64(f, "/run/peak_memory", 1, (size_t[]){(size_t)r->ranks}, r->peak_memory, "B",
                            "each rank's peak resident memory (getrusage ru_maxrss)", err));
    return SC_OK;
}

#undef TRY

int sc_openloop_write(sc_h5 *f, const sc_samcon_run *run, const sc_samcon_result *r, const sc_openloop_trace *t, sc_err *err)
{
    const sc_model *m = run->m;
    size_t nb = (size_t)m->nbones, nseg = (size_t)r->nseg, K = SC_FAIL_KINDS;
    size_t rows = nseg ? nseg : 1;
    double *a = calloc(rows * (K > SC_COST_TERMS ? K : SC_COST_TERMS) * 13, sizeof(double));
    int *ia = calloc(rows * K * 4, sizeof(int));
    if (!a || !ia) {
        free(a);
        free(ia);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    segment_columns col;
    fill_segment_columns(r, a, ia, rows, &col);
    double start_pos[3], start_vel[3], start_w[3 * SC_SIM_MAX_BONES];
    sc_quat start_q[SC_SIM_MAX_BONES];
    int rc = sc_reference_state_at(run->ref, m, run->ref->time[0] + run->cfg->start, start_pos, start_q, start_vel, start_w, err);
    if (!rc) rc = write_targets(f, run, r, t, err);
    if (!rc) rc = write_start(f, nb, start_pos, start_vel, start_q, start_w, err);
    if (!rc) rc = write_segments(f, run, r, &col, rows, err);
    if (!rc) rc = write_achieved(f, nb, t, err);
    if (!rc && run->cycle) rc = write_cycle(f, run, nseg, col.steps, rows, err); /* steps is written: reuse it */
    if (!rc) rc = write_report(f, run, r, t, err);
    free(a);
    free(ia);
    return rc;
}

int sc_openloop_save(const char *path, const sc_openloop_provenance *p, const sc_samcon_run *run, const sc_samcon_result *r,
                     const sc_openloop_trace *t, sc_err *err)
{
    sc_h5 *f = NULL;
    int rc = sc_h5_create(path, &f, err);
    if (rc) return rc;
    if ((rc = sc_h5_provenance(f, SC_OPENLOOP_SCHEMA, p->argc, p->argv, p->config_text, err)) ||
        (rc = sc_h5_attr_str(f, "/", "character", p->character, err)) || (rc = sc_character_hash_write(f, p->character_hash, err)) ||
        (rc = sc_h5_attr_str(f, "/", "fem_kernel", p->fem_kernel, err)) || (rc = sc_openloop_write_reference(f, p->reference, p->ref, err)) ||
        (rc = sc_openloop_write(f, run, r, t, err)) || (rc = sc_h5_attr_str(f, "/run", "mpi_library", p->mpi_library, err))) {
        sc_h5_abort(f);
        return rc;
    }
    return sc_h5_commit(f, err);
}

/* ---- the gait cycle learn-feedback reads ------------------------------------------------------ */

typedef struct openloop_arg {
    const sc_model *m;
    const sc_control_dofs *dofs;
    sc_openloop_cycle *o;
} openloop_arg;

/* The file is an openloop.h5 of a gait cycle for this character's bones and control DoFs. */
static int check_cycle_file(sc_h5 *f, const sc_model *m, const sc_control_dofs *dofs, sc_err *err)
{
    const char *path = sc_h5_filename(f);
    char *schema = NULL, **names = NULL, **dnames = NULL;
    size_t nnames = 0, ndn = 0;
    int rc = sc_h5_read_attr_str(f, "/", "schema", &schema, err);
    if (rc) goto done;
    if (strcmp(schema, "softcon.openloop/1")) {
        rc = sc_fail(err, SC_EINPUT, "%s: schema '%s', expected an openloop.h5 (softcon.openloop/1)", path, schema);
        goto done;
    }
    if ((rc = sc_character_hash_verify(f, m, err))) goto done;
    if (!sc_h5_exists(f, "/cycle")) {
        rc = sc_fail(err, SC_EINPUT,
                     "%s:/cycle: missing: the controller was not made for a gait cycle (run sample-openloop with sampling.cycle: auto)", path);
        goto done;
    }
    if ((rc = sc_h5_read_strings(f, "/bones/names", &nnames, &names, err))) goto done;
    if (nnames != (size_t)m->nbones) {
        rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: %zu bones, the character has %d: a controller for another character", path, nnames, m->nbones);
        goto done;
    }
    for (size_t b = 0; b < nnames; b++)
        if (strcmp(names[b], m->bone_name[b])) {
            rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: bone %zu is '%s', the character's is '%s': a controller for another character", path, b,
                         names[b], m->bone_name[b]);
            goto done;
        }
    if ((rc = sc_h5_read_strings(f, "/segments/dof_names", &ndn, &dnames, err))) goto done;
    if (ndn != (size_t)dofs->n) {
        rc = sc_fail(err, SC_EINPUT, "%s:/segments/dof_names: %zu DoFs, the character has %d", path, ndn, dofs->n);
        goto done;
    }
    for (size_t d = 0; d < ndn; d++)
        if (strcmp(dnames[d], dofs->name[d])) {
            rc = sc_fail(err, SC_EINPUT, "%s:/segments/dof_names: DoF %zu is '%s', the character's is '%s'", path, d, dnames[d], dofs->name[d]);
            goto done;
        }
done:
    free(schema);
    if (names) sc_h5_free_strings(names, nnames);
    if (dnames) sc_h5_free_strings(dnames, ndn);
    return rc;
}

/* /cycle's attributes. */
static int read_cycle_span(sc_h5 *f, sc_openloop_cycle *o, sc_err *err)
{
    long long cyc = 0, frag = 0;
    int rc;
    if ((rc = sc_h5_read_attr_f64(f, "/cycle", "t0", &o->cycle.t0, err)) || (rc = sc_h5_read_attr_f64(f, "/cycle", "t1", &o->cycle.t1, err)) ||
        (rc = sc_h5_read_attr_i64(f, "/cycle", "cycles", &cyc, err)) || (rc = sc_h5_read_attr_i64(f, "/cycle", "fragments", &frag, err)))
        return rc;
    if (frag < 1 || frag > 100000 || cyc < 1 || !(o->cycle.t0 >= 0 && o->cycle.t1 > o->cycle.t0 && o->cycle.t1 < 1e6))
        return sc_fail(err, SC_EINPUT, "%s:/cycle: damaged (%lld fragments, %lld cycles, t0 %g s, t1 %g s)", sc_h5_filename(f), frag, cyc,
                       o->cycle.t0, o->cycle.t1);
    o->fragments = (int)frag;
    return SC_OK;
}

/* /segments: every count from /segments/steps, every other dataset exactly that long (a 0 in the
   reads' dims means "any": never pass a count that could be 0 without checking what came back). */
static int read_cycle_segments(sc_h5 *f, const sc_control_dofs *dofs, sc_openloop_cycle *o, sc_err *err)
{
    const char *path = sc_h5_filename(f);
    size_t ns = 0, od[2] = {0, 0};
    int *steps = NULL;
    int rc;
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) goto done; \
    } while (0)
    TRY(sc_h5_read_i32(f, "/segments/steps", 1, &ns, &steps, err));
    TRY(sc_h5_check_count(f, "/segments/steps", ns, 1, 1000000, err));
    od[0] = ns;
    od[1] = (size_t)dofs->n;
    TRY(sc_h5_read_f64(f, "/segments/offsets", 2, od, &o->offsets, err));
    if (od[0] != ns || od[1] != (size_t)dofs->n) {
        rc = sc_fail(err, SC_EINPUT, "%s:/segments/offsets: %zu x %zu, expected %zu x %d", path, od[0], od[1], ns, dofs->n);
        goto done;
    }
    o->nseg = (int)ns;
    size_t n0 = ns, n1 = ns;
    TRY(sc_h5_read_f64(f, "/segments/ref_t0", 1, &n0, &o->ref_t0, err));
    TRY(sc_h5_read_f64(f, "/segments/ref_t1", 1, &n1, &o->ref_t1, err));
    for (size_t k = 0; k < ns; k++)
        if (!(isfinite(o->ref_t0[k]) && o->ref_t1[k] > o->ref_t0[k] && o->ref_t0[k] >= 0 && o->ref_t1[k] < 1e6)) {
            rc = sc_fail(err, SC_EINPUT, "%s:/segments/ref_t0, ref_t1: element %zu = [%g, %g] is not a span of reference time", path, k, o->ref_t0[k],
                         o->ref_t1[k]);
            goto done;
        }
    if (o->nseg < o->fragments) {
        rc = sc_fail(err, SC_EINPUT, "%s:/segments: %d segments, less than one cycle of %d fragments (the search did not complete one cycle)", path,
                     o->nseg, o->fragments);
        goto done;
    }
    o->steps = malloc(ns * sizeof(long));
    if (!o->steps) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < ns; k++) {
        if (steps[k] < 1) {
            rc = sc_fail(err, SC_EINPUT, "%s:/segments/steps: element %zu = %d", path, k, steps[k]);
            goto done;
        }
        o->steps[k] = steps[k];
    }
    for (size_t k = 0; k < ns * (size_t)dofs->n; k++)
        if (!isfinite(o->offsets[k]) || fabs(o->offsets[k]) > 10) {
            rc = sc_fail(err, SC_EINPUT, "%s:/segments/offsets: element %zu = %g", path, k, o->offsets[k]);
            goto done;
        }
#undef TRY
done:
    free(steps);
    return rc;
}

/* /start: the state the cycle's controller starts from. */
static int read_cycle_start(sc_h5 *f, int nb, sc_openloop_cycle *o, sc_err *err)
{
    size_t d3 = 3, dq[2] = {(size_t)nb, 4}, dw[2] = {(size_t)nb, 3};
    double *rp = NULL, *rv = NULL;
    int rc;
    if ((rc = sc_h5_read_f64(f, "/start/root_pos", 1, &d3, &rp, err)) || (rc = sc_h5_read_f64(f, "/start/root_vel", 1, &d3, &rv, err)) ||
        (rc = sc_h5_read_f64(f, "/start/local_quat", 2, dq, &o->start_quat, err)) ||
        (rc = sc_h5_read_f64(f, "/start/local_ang_vel", 2, dw, &o->start_w, err)) ||
        (rc = sc_h5_check_range(f, "/start/root_pos", rp, 3, 1, -1e3, 1e3, 0, err)) ||
        (rc = sc_h5_check_range(f, "/start/root_vel", rv, 3, 1, -1e3, 1e3, 0, err)) ||
        (rc = sc_h5_check_unit_quats(f, "/start/local_quat", o->start_quat, 2, dq, err)) ||
        (rc = sc_h5_check_range(f, "/start/local_ang_vel", o->start_w, 3 * (size_t)nb, 3, -1e3, 1e3, 0, err)))
        goto done;
    memcpy(o->start_root, rp, sizeof o->start_root);
    memcpy(o->start_vel, rv, sizeof o->start_vel);
done:
    free(rp);
    free(rv);
    return rc;
}

/* The root attributes naming the targets' base and the reference it tracked: the reference is
   looked for next to the openloop.h5 as named, else where it was. */
static int read_cycle_reference(sc_h5 *f, sc_openloop_cycle *o, sc_err *err)
{
    const char *path = sc_h5_filename(f);
    char *ref = NULL, *refabs = NULL, *hash = NULL, *base = NULL;
    int rc = sc_h5_read_attr_str(f, "/", "base_targets", &base, err);
    if (rc) goto done;
    o->base = strstr(base, "raw") ? SC_BASE_REFERENCE : SC_BASE_ID;
    if ((rc = sc_h5_read_attr_str(f, "/", "reference", &ref, err)) || (rc = sc_h5_read_attr_str(f, "/", "reference_path", &refabs, err)) ||
        (rc = sc_h5_read_attr_str(f, "/", "reference_hash", &hash, err)))
        goto done;
    o->reference_hash = strtoull(hash, NULL, 16);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) slash[1] = 0;
    else dir[0] = 0;
    const char *leaf = strrchr(ref, '/');
    snprintf(o->reference, sizeof o->reference, "%s%s", dir, leaf ? leaf + 1 : ref);
    if (access(o->reference, R_OK)) snprintf(o->reference, sizeof o->reference, "%s", refabs);
done:
    free(ref);
    free(refabs);
    free(hash);
    free(base);
    return rc;
}

static int openloop_cycle_reader(sc_h5 *f, void *arg, sc_err *err)
{
    const openloop_arg *a = arg;
    sc_openloop_cycle *o = a->o;
    memset(o, 0, sizeof *o);
    int rc;
    if ((rc = check_cycle_file(f, a->m, a->dofs, err)) || (rc = read_cycle_span(f, o, err)) || (rc = read_cycle_segments(f, a->dofs, o, err)) ||
        (rc = read_cycle_start(f, a->m->nbones, o, err)) || (rc = read_cycle_reference(f, o, err))) {
        sc_openloop_cycle_free(o);
        return rc;
    }
    size_t ns = (size_t)o->nseg;
    o->hash = sc_hash_bytes(sc_hash_bytes(SC_HASH_INIT, o->offsets, sizeof(double) * ns * (size_t)a->dofs->n), o->steps, sizeof(long) * ns);
    return SC_OK;
}

int sc_openloop_cycle_read(const char *path, const sc_model *m, const sc_control_dofs *dofs, sc_openloop_cycle *o, sc_err *err)
{
    memset(o, 0, sizeof *o);
    openloop_arg a = {m, dofs, o};
    return sc_h5_read_file(path, openloop_cycle_reader, &a, err);
}

int sc_openloop_cycle_read_image(const void *data, size_t size, const char *name, const sc_model *m, const sc_control_dofs *dofs,
                                 sc_openloop_cycle *o, sc_err *err)
{
    memset(o, 0, sizeof *o);
    openloop_arg a = {m, dofs, o};
    return sc_h5_read_image(data, size, name, openloop_cycle_reader, &a, err);
}

int sc_openloop_read_reference_poses(const char *path, sc_h5_poses *p, int *found, sc_err *err)
{
    memset(p, 0, sizeof *p);
    *found = 0;
    sc_h5 *f;
    int rc = sc_h5_open(path, &f, err);
    if (rc) return rc;
    if (sc_h5_exists(f, "/achieved/reference_bone_position")) {
        *found = 1;
        rc = sc_h5_read_poses(f, "/achieved/time", "/achieved/reference_bone_position", "/achieved/reference_bone_orientation", p, err);
    }
    sc_h5_close(f);
    return rc;
}

/* ---- what simulate replays: the targets, the start ------------------------------------------ */

int sc_openloop_read_trajectory_h5(sc_h5 *f, const char *dataset, const sc_model *m, sc_controller *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    if (!dataset || !dataset[0]) dataset = "/targets/local_quat";
    sc_h5_rotations r;
    double *ref_time = NULL;
    int rc = sc_h5_read_rotations(f, dataset, SC_NAME_LEN, &r, err);
    if (rc) return rc;
    if (sc_h5_exists(f, "/targets/reference_time")) { /* the reference time each step plays (time scaling) */
        size_t nr = r.n;
        if ((rc = sc_h5_read_f64(f, "/targets/reference_time", 1, &nr, &ref_time, err)) ||
            (rc = sc_h5_check_finite(f, "/targets/reference_time", ref_time, nr, 1, err)))
            goto done;
    }
    rc = sc_controller_from_rotations(m, sc_h5_filename(f), dataset, (int)r.n, r.time, r.names, (int)r.nb, r.quat, ref_time, c, err);
done:
    free(ref_time);
    sc_h5_rotations_free(&r);
    return rc;
}

/* /start of an openloop.h5: root_pos [3], root_vel [3], local_quat [nb, 4], local_ang_vel [nb, 3]
 * with /bones/names giving the order. */
static int read_start_group(sc_h5 *f, const char *path, const sc_model *m, double root_pos[3], sc_quat *local, double root_vel[3],
                            double *local_ang_vel, sc_err *err)
{
    size_t nnames = 0, d3 = 3, dq[2] = {0, 4}, dw[2] = {0, 3};
    char **names = NULL;
    double *rp = NULL, *rv = NULL, *q = NULL, *w = NULL;
    int rc = sc_h5_read_strings(f, "/bones/names", &nnames, &names, err);
    if (rc) return rc;
    dq[0] = dw[0] = nnames;
    if ((rc = sc_h5_read_f64(f, "/start/root_pos", 1, &d3, &rp, err)) || (d3 = 3, rc = sc_h5_read_f64(f, "/start/root_vel", 1, &d3, &rv, err)) ||
        (rc = sc_h5_read_f64(f, "/start/local_quat", 2, dq, &q, err)) || (rc = sc_h5_read_f64(f, "/start/local_ang_vel", 2, dw, &w, err)) ||
        (rc = sc_h5_check_range(f, "/start/root_pos", rp, 3, 1, -1e4, 1e4, 0, err)) ||
        (rc = sc_h5_check_range(f, "/start/root_vel", rv, 3, 1, -1e3, 1e3, 0, err)) ||
        (rc = sc_h5_check_unit_quats(f, "/start/local_quat", q, 2, dq, err)) ||
        (rc = sc_h5_check_range(f, "/start/local_ang_vel", w, 3 * nnames, 3, -1e4, 1e4, 0, err)))
        goto done;
    for (int b = 0; b < m->nbones; b++) local[b] = sc_q_identity();
    if (local_ang_vel) memset(local_ang_vel, 0, 3 * sizeof(double) * (size_t)m->nbones);
    for (size_t j = 0; j < nnames; j++) {
        int b = sc_model_bone_index(m, names[j]);
        if (b < 0) {
            rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: bone '%s' is not in the character", path, names[j]);
            goto done;
        }
        local[b] = (sc_quat){q[4 * j], q[4 * j + 1], q[4 * j + 2], q[4 * j + 3]};
        if (local_ang_vel) memcpy(local_ang_vel + 3 * b, w + 3 * j, 3 * sizeof(double));
    }
    memcpy(root_pos, rp, 3 * sizeof(double));
    if (root_vel) memcpy(root_vel, rv, 3 * sizeof(double));
done:
    free(rp);
    free(rv);
    free(q);
    free(w);
    sc_h5_free_strings(names, nnames);
    return rc;
}

int sc_openloop_read_start_h5(sc_h5 *f, const sc_model *m, double root_pos[3], sc_quat *local, double root_vel[3], double *local_ang_vel, int *found,
                              sc_err *err)
{
    *found = sc_h5_exists(f, "/start");
    if (!*found) return SC_OK;
    return read_start_group(f, sc_h5_filename(f), m, root_pos, local, root_vel, local_ang_vel, err);
}

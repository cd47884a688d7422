/* The open-loop recording: a replay of the sampled path, step by step, into an sc_openloop_trace. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sampling/controller.h"
#include "motion/cycle.h"
#include "sampling/openloop.h"

void sc_openloop_trace_free(sc_openloop_trace *t)
{
    void *a[] = {t->time,      t->ref_time, t->targets,     t->frame_time,   t->frame_ref_time, t->bone_pos,
                 t->bone_quat, t->com,      t->joint_error, t->ref_bone_pos, t->ref_bone_quat};
    for (size_t i = 0; i < sizeof a / sizeof *a; i++) free(a[i]);
    memset(t, 0, sizeof *t);
}

void sc_openloop_cycle_free(sc_openloop_cycle *o)
{
    free(o->steps);
    free(o->ref_t0);
    free(o->ref_t1);
    free(o->offsets);
    free(o->start_quat);
    free(o->start_w);
    memset(o, 0, sizeof *o);
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
            q[0] = s->pose[b].q.w;
            q[1] = s->pose[b].q.x;
            q[2] = s->pose[b].q.y;
            q[3] = s->pose[b].q.z;
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
            q[0] = rb[b].q.w;
            q[1] = rb[b].q.x;
            q[2] = rb[b].q.y;
            q[3] = rb[b].q.z;
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
    if (rc) {
        free(seg);
        sc_openloop_trace_free(t);
        return rc;
    }
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

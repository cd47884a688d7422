/* The open-loop controller in memory: what a replay of a sampled path records
 * (sc_openloop_trace, which store/openloop.h writes into openloop.h5) and what learn-feedback
 * takes from an openloop.h5 of a gait cycle (sc_openloop_cycle, which store/openloop.h reads). */
#ifndef SC_OPENLOOP_H
#define SC_OPENLOOP_H
#include <stdint.h>
#include "motion/cycle.h"
#include "sampling/samcon.h"

/* What a replay of the path recorded. */
typedef struct sc_openloop_trace {
    long n;                            /* steps recorded + 1 (the final state) */
    double *time, *ref_time, *targets; /* [n], [n], [n*nb*4] */
    long nframes;
    double *frame_time, *frame_ref_time, *bone_pos, *bone_quat, *com, *joint_error; /* [F], [F], [F*nb*3], [F*nb*4], [F*3], [F] */
    double *ref_bone_pos, *ref_bone_quat;                                           /* [F*nb*3], [F*nb*4] the reference's pose at the played time */
    double final_root[3], final_ref_root[3];
} sc_openloop_trace;
void sc_openloop_trace_free(sc_openloop_trace *t);

/* Replays the result in s (fresh, same model and options) and records the trace, frames every
 * `every` steps; checks the replay against the sampling (sc_samcon_replay). */
int sc_openloop_record(const sc_samcon_run *run, const sc_samcon_result *r, sc_sim *s, int every, sc_openloop_trace *t, sc_err *err);

/* What learn-feedback reads from an openloop.h5 of a gait cycle (sc_openloop_cycle_read). */
typedef struct sc_openloop_cycle {
    sc_cycle cycle;
    int fragments, base; /* base: SC_BASE_ID or SC_BASE_REFERENCE */
    int nseg;
    long *steps;             /* [nseg] */
    double *ref_t0, *ref_t1; /* [nseg] spans of the cycle repeated (s from its start) */
    double *offsets;         /* [nseg * ndof] */
    double start_root[3], start_vel[3], *start_quat, *start_w;
    char reference[4096]; /* the reference.h5 it tracked (resolved), checked by hash */
    uint64_t reference_hash;
    uint64_t hash; /* of the controller (segments, offsets), for the policy file */
} sc_openloop_cycle;
void sc_openloop_cycle_free(sc_openloop_cycle *o);

#endif

/* The sampler run whose checkpoints fuzz_checkpoint decodes and fuzz_seeds writes: the tiny
 * character of the seeds tracking a 4-sample reference in 3 segments of one step, 4 samples and
 * 2 elites per segment. Included by tests/fuzz/fuzz_checkpoint.c and tests/fuzz/seeds.c. */
#ifndef SC_FUZZ_CHECKPOINT_RUN_H
#define SC_FUZZ_CHECKPOINT_RUN_H
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "common.h"
#include "motion/reference.h"
#include "network/explore.h"
#include "sampling/samcon.h"
#include "sim/sim.h"

#define SC_FUZZ_CKPT_HASH 0x5eed5eed5eed5eedull /* the run hash of the fuzzed checkpoints */
/* learn-feedback's shapes: a learner of 3 fragments, 5 DoFs, 2 actions, 4 iterations; a search
 * of 6 parameters, 8 candidates, step size 0.5 */
enum { SC_FUZZ_FRAG = 3, SC_FUZZ_DOFS = 5, SC_FUZZ_ACT = 2, SC_FUZZ_ITER = 4, SC_FUZZ_NP = 6, SC_FUZZ_LAMBDA = 8 };

/* network-sample's: 2 knobs, 1 objective, 4 rounds of 2 targets, 2 batches at most */
static inline void sc_fuzz_explore_config(sc_explore_config *c)
{
    memset(c, 0, sizeof *c);
    c->nknobs = 2;
    c->knob[0] = (sc_knob){0, -1, 0.1, 0.3};
    c->knob[1] = (sc_knob){1, 1, 0.4, 0.6};
    c->nobj = 1;
    c->obj[0] = (sc_objective_spec){SC_MEASURE_SPEED, 0.5, 1.5, 0.1};
    c->batch = 4;
    c->max_batches = 2;
    c->min_success = 2;
    c->grow = 1.5;
    c->rounds = 4;
    c->targets = 2;
    c->k = 3;
    c->local = 1;
}

typedef struct sc_fuzz_samcon {
    sc_model m;
    sc_reference r;
    sc_control_dofs d;
    sc_sim_opts so;
    sc_samcon_config c;
    sc_samcon_run run;
} sc_fuzz_samcon;

static inline int sc_fuzz_samcon_init(sc_fuzz_samcon *f, sc_err *err)
{
    memset(f, 0, sizeof *f);
    sc_fuzz_tiny_character(&f->m, 1);
    sc_control_dofs_init(&f->m, &f->d);
    int rc = sc_reference_alloc(&f->r, 4, 2, err);
    if (rc) return rc;
    snprintf(f->r.names[0], SC_NAME_LEN, "pelvis");
    snprintf(f->r.names[1], SC_NAME_LEN, "spine");
    f->r.dt = 0.0005;
    for (int k = 0; k < 4; k++) {
        f->r.time[k] = k * f->r.dt;
        f->r.root_pos[3 * k + 1] = 0.9;
        f->r.com[3 * k + 1] = 1.0;
        for (int j = 0; j < 2; j++) {
            double a = 0.01 * k * (j + 1), q[4] = {cos(a / 2), sin(a / 2), 0, 0};
            memcpy(f->r.local_quat + 4 * (2 * k + j), q, sizeof q);
            memcpy(f->r.target_quat + 4 * (2 * k + j), q, sizeof q);
            memcpy(f->r.bone_quat + 4 * (2 * k + j), q, sizeof q);
            f->r.contact_flag[2 * k + j] = j == 0;
        }
    }
    sc_sim_default_opts(&f->so);
    f->so.dt = 0.0005;
    sc_samcon_config *c = &f->c;
    c->segment = 0.0005;
    c->samples = 4;
    c->elites = 2;
    c->base = SC_BASE_ID;
    c->time_scaling = 1;
    c->scale_min = 0.9;
    c->scale_max = 1.1;
    c->backtrack = 1;
    c->max_retries = 2;
    c->growth = 2;
    for (int q = 0; q < f->d.n; q++) c->box[q] = 0.1;
    sc_tracker_default_opts(&c->tracker);
    f->run = (sc_samcon_run){.m = &f->m, .sim_opts = &f->so, .ref = &f->r, .dofs = &f->d, .cfg = &f->c, .seed = 7, .run_hash = SC_FUZZ_CKPT_HASH};
    return SC_OK;
}

#endif

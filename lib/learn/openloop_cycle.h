/* The open-loop cycle controller learn-feedback starts from: what it reads from an openloop.h5 of
 * a gait cycle (store/openloop.h reads it), and what policies are built on (learn/policy.h). */
#ifndef SC_OPENLOOP_CYCLE_H
#define SC_OPENLOOP_CYCLE_H
#include <stdint.h>
#include "motion/cycle.h"

typedef struct sc_openloop_cycle {
    sc_cycle cycle;
    int fragments, base;        /* base: SC_BASE_ID or SC_BASE_REFERENCE */
    int nseg;
    long *steps;                /* [nseg] */
    double *ref_t0, *ref_t1;    /* [nseg] spans of the cycle repeated (s from its start) */
    double *offsets;            /* [nseg * ndof] */
    double start_root[3], start_vel[3], *start_quat, *start_w;
    char reference[4096];       /* the reference.h5 it tracked (resolved), checked by hash */
    uint64_t reference_hash;
    uint64_t hash;              /* of the controller (segments, offsets), for the policy file */
} sc_openloop_cycle;

#endif

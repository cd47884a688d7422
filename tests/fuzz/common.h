/* Shared by the libFuzzer harnesses of tests/fuzz (README.md there): quiet logging, the
 * HDF5 guard's time limit, and a small character model for readers that need one. */
#ifndef SC_FUZZ_COMMON_H
#define SC_FUZZ_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include "io/h5.h"
#include "model/model.h"

/* Once per process: logging off (readers warn), guard limit for libhdf5 hangs. */
void sc_fuzz_init(void);
/* A 16-bone model with the built-in characters' bone names and joint types (what trajectory
 * files and keyframe configs are matched against). Static; do not free. */
const sc_model *sc_fuzz_model(void);
/* The 2-bone, 5-node, 2-tet character of the HDF5 seeds (tests/fuzz/seeds.c), skinned or not;
 * the openloop and policy harnesses match files against it. Static arrays; do not free. */
void sc_fuzz_tiny_character(sc_model *m, int skinned);
/* Stops the process with a report when a reader's output breaks its documented contract. */
#define SC_FUZZ_ASSERT(c)                                                                          \
    do {                                                                                           \
        if (!(c)) sc_fuzz_violation(__FILE__, __LINE__, #c);                                       \
    } while (0)
void sc_fuzz_violation(const char *file, int line, const char *what) __attribute__((noreturn));
/* After each input of an HDF5 harness: the reader left no HDF5 object open (an identifier left
 * open would carry one input's file into the next). */
#define SC_FUZZ_H5_CLOSED() SC_FUZZ_ASSERT(sc_h5_live_ids() == 0)


#endif

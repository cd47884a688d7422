/* openloop.h5 (softcon.openloop/1): the one reader and writer of sample-openloop's output. */
#ifndef SC_STORE_OPENLOOP_H
#define SC_STORE_OPENLOOP_H
#include <stdint.h>
#include "core/status.h"
#include "model/model.h"
#include "motion/cycle.h"
#include "sampling/samcon.h"
#include "learn/openloop_cycle.h"

/* What learn-feedback reads from an openloop.h5 of a gait cycle (learn/openloop_cycle.h).
 * SC_EINPUT (naming the HDF5 path) when the file is not an openloop.h5 of a cycle for this
 * character's control DoFs. */
int sc_openloop_cycle_read(const char *path, const sc_model *m, const sc_control_dofs *dofs, sc_openloop_cycle *o, sc_err *err);
/* The same on an in-memory image (`name` in messages): the fuzz harness's entry point. */
int sc_openloop_cycle_read_image(const void *data, size_t size, const char *name, const sc_model *m, const sc_control_dofs *dofs,
                                 sc_openloop_cycle *o, sc_err *err);
void sc_openloop_cycle_free(sc_openloop_cycle *o);

#endif

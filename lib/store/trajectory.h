/* Target-trajectory files as simulate replays them: an openloop.h5 or a reference.h5, each read by
 * its format's owner (store/trajectory.c dispatches on the schema). */
#ifndef SC_STORE_TRAJECTORY_H
#define SC_STORE_TRAJECTORY_H
#include "core/status.h"
#include "model/model.h"
#include "sampling/controller.h"

/* A target trajectory file as a controller: /time, /bones/names (matched to the character by
 * name) and `dataset` (NULL: /targets/local_quat, the PD targets; /reference/local_quat gives the
 * raw reference poses as targets) of an openloop.h5 or a reference.h5; SC_EINPUT when its
 * character_hash is another character's (sc_character_hash_verify). Every read goes through
 * sc_h5_read_file / the checks of io/h5.h: /time finite and increasing, unique bone names,
 * rotations of norm ~1. */
int sc_trajectory_read(const char *path, const char *dataset, const sc_model *m, sc_controller *c, sc_err *err);
/* The same from an in-memory image (the fuzz harness's entry point). */
int sc_trajectory_read_image(const void *data, size_t size, const char *name, const char *dataset, const sc_model *m, sc_controller *c, sc_err *err);
/* The state a target trajectory file starts from: its /start group when it has one (an
 * openloop.h5: the sampler's exact start), else the reference state at time t of a
 * reference.h5 (sc_reference_read). */
int sc_trajectory_start(const char *path, const sc_model *m, double t, double root_pos[3], sc_quat *local, double root_vel[3], double *local_ang_vel,
                        sc_err *err);

#endif

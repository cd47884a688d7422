/* The YAML sections of inverse dynamics, retargeting and contact estimation: motion, retarget,
 * kinematics, contact_estimation, dynamics (configs/walk.yaml documents every key), and the
 * world settings they share with the simulator (settings/world.h: simulation.gravity,
 * contact.friction). */
#ifndef SC_SETTINGS_MOTION_H
#define SC_SETTINGS_MOTION_H
#include "core/status.h"
#include "io/config.h"
#include "motion/inverse_dynamics.h"
#include "motion/retarget.h"
#include "store/reference.h"

/* unit 0.056444, frames [1, -1], no mirror, root_scale auto, recentre, the default CMU map of
 * mesh/rig.c (its bone names, BVH joints and tails). */
int sc_retarget_default_opts(sc_retarget_opts *o, sc_err *err);

/* Reads the sections motion, retarget, kinematics, contact_estimation, dynamics, gravity and
 * friction from simulation.gravity and contact.friction (the other keys of those two sections
 * are left to the simulator: marked known), and resolves motion.bvh next to the config, in
 * mocap/, then $SOFTCON_MOCAP_PATH. The old keys dynamics.gravity and contact_estimation.mu are
 * errors saying where the value lives now. Leaves other sections alone, so a later tool sharing
 * the config can read its own and then call sc_cfg_check_unknown. */
int sc_id_read_config(sc_cfg *cfg, sc_id_config *c, sc_err *err);

/* A tool that is given both a config and a reference.h5 (sample-openloop) samples what the
 * reference holds: when the config has a motion section and the reference records the config it
 * was made with (origin->config), the two motion sections must agree on the clip (bvh, by file
 * name), frames, unit, mirror, filter and edit, else SC_EINPUT naming the config line, the key and
 * both values. Reads a fresh copy of the config file: cfg's keys and defaults are untouched. */
int sc_motion_check_reference(const sc_cfg *cfg, const char *ref_path, const sc_reference_origin *origin, sc_err *err);

#endif

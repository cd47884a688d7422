/* The scenario's config sections (simulation, contact, ground, fluid, controller's gain scales,
 * perturbations, output; configs/stand.yaml documents every key) read into sc_scenario
 * (sampling/scenario.h). simulation.gravity and contact.friction are read by settings/world.h. */
#ifndef SC_SETTINGS_SCENARIO_H
#define SC_SETTINGS_SCENARIO_H
#include "core/status.h"
#include "io/config.h"
#include "model/model.h"
#include "sampling/scenario.h"

/* The `ground` section (slope, height, bumps, tiles, boxes) alone, into g; render reads it too. */
int sc_ground_read(sc_cfg_node *root, sc_ground *g, sc_err *err);
/* The `fluid` section ([P17] 4.2.2's drag, sim/fluid.h: density, drag, flow) alone, into f;
 * absent: no fluid. muscle-sim's and muscle-sample's reader read it too. */
int sc_fluid_read(sc_cfg_node *root, sc_fluid_opts *f, sc_err *err);
/* Reads the sections named above; values are range-checked, names resolved against m. */
int sc_scenario_read(sc_cfg *cfg, const sc_model *m, sc_scenario *sc, sc_err *err);
/* SC_EINPUT naming the line of the first push in the heading frame (unless heading_ok) or at a
 * phase (unless phase_ok) of sc's perturbations, read from cfg: what a run cannot start
 * (`why` ends the message). */
int sc_scenario_check_pushes(sc_cfg *cfg, const sc_scenario *sc, int heading_ok, int phase_ok, const char *why, sc_err *err);

#endif

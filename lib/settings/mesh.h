/* mesh-prep's settings: the `skeleton:`, `body:`, `envelope:`, `fixed:`, `tetgen:` and
 * `material:` sections as sc_prep_opts (mesh/prep.h), and the skeleton as an sc_rig. */
#ifndef SC_SETTINGS_MESH_H
#define SC_SETTINGS_MESH_H
#include "core/status.h"
#include "io/config.h"
#include "mesh/prep.h"
#include "mesh/rig.h"

int sc_prep_read_config(sc_cfg *cfg, sc_prep_opts *o, sc_err *err);
/* Reads the `skeleton:` section: either `bvh:` (+ `scale:`, `bone_map:`; the CMU map by
 * default) or an inline `bones:` list; then `gains:` defaults and per-joint overrides in
 * `joints:`. Paths are resolved next to config_path, then in the mocap folders. */
int sc_rig_from_config(sc_cfg_node *skeleton, const char *config_path, sc_rig *rig, sc_err *err);

#endif

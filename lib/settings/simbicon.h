/* The `controller.simbicon` section of a config with `controller.type: simbicon`
 * (configs/simbicon/walk_rigid.yaml documents every key): SIMBICON's states, balance gains and
 * the bones it drives. Angles in radians, anatomical (simbicon/simbicon.h). */
#ifndef SC_SETTINGS_SIMBICON_H
#define SC_SETTINGS_SIMBICON_H
#include "io/config.h"
#include "simbicon/simbicon.h"

int sc_simbicon_read(sc_cfg_node *controller, sc_simbicon_params *p, sc_err *err);

#endif

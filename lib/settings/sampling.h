/* The `sampling:` config section (configs/walk.yaml documents every key): the sampler's settings
 * (sc_samcon_config, sampling/samcon.h) for a character's control DoFs. */
#ifndef SC_SETTINGS_SAMPLING_H
#define SC_SETTINGS_SAMPLING_H
#include "core/status.h"
#include "io/config.h"
#include "model/model.h"
#include "sampling/samcon.h"

int sc_samcon_read_config(sc_cfg *cfg, const sc_model *m, const sc_control_dofs *dofs, sc_samcon_config *c, sc_err *err);

#endif

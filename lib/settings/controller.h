/* simulate's `controller:` section (configs/stand.yaml documents every key): the PD target
 * source. type: hold (a `pose` of bone: rotation, degrees), keyframes ({time, pose} in
 * increasing time), trajectory (`file` and `dataset` of a target trajectory, read by
 * store/openloop.h) or policy (only `file`, `cycles` and `feedback` are read here: the caller
 * loads the policy file); `loop` and `time_offset` apply to every type. */
#ifndef SC_SETTINGS_CONTROLLER_H
#define SC_SETTINGS_CONTROLLER_H
#include "core/status.h"
#include "io/config.h"
#include "model/model.h"
#include "sampling/controller.h"

int sc_controller_from_config(sc_cfg_node *ctrl, const sc_model *m, const char *config_path, sc_controller *c, sc_err *err);

#endif

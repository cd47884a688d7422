/* learn-feedback's settings: the `feedback:` section (configs/run.yaml documents it). */
#ifndef SC_SETTINGS_LEARN_H
#define SC_SETTINGS_LEARN_H
#include "io/config.h"
#include "learn/learning.h"

/* Reads `feedback:` for the model's control DoFs. */
int sc_feedback_read_config(sc_cfg *cfg, const sc_model *m, const sc_control_dofs *dofs, sc_feedback_config *c, sc_err *err);

#endif

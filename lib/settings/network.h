/* A motion network's `nodes:` list ([BK] 6; network/tdag.h): each item a map with a `name`
 * and exactly one kind key:
 *     {name: k, const: 0.5}
 *     {name: s, spline: [[t, v], [t, v, tangent], ...], loop: false}   t in s, tangent in v/s
 *     {name: st, step: [[t, 0 or 1], ...], loop: false}
 *     {name: f, feedback: com_forward}                                  one of the caller's names
 *     {name: a, add: [x, y, ...]}
 *     {name: p, multiply: [x, y]}
 *     {name: m, modulate: [step, high, low], expected: 0.3}              low optional; s
 *     {name: w, switch: [step, high, low]}                               low optional
 * Inputs name nodes declared anywhere in the list. Errors name the file, line and column: an
 * unknown node (listing the known ones), an unknown feedback variable (with a did-you-mean), a
 * node with no kind or two, a cycle. */
#ifndef SC_SETTINGS_NETWORK_H
#define SC_SETTINGS_NETWORK_H
#include "io/config.h"
#include "model/model.h"
#include "network/controller.h"
#include "network/explore.h"
#include "network/tdag.h"

/* Builds and finishes *n from the list (n is initialised here; free it with sc_network_free,
 * also after a failure). */
int sc_network_read(sc_cfg_node *nodes, const char *const *feedback, int nfeedback, sc_network *n, sc_err *err);

/* simulate's controller.network (type: network; configs/networks/walker_rigid.yaml documents
 * every key): feet, forward, min_step, first_stance, nodes (with sc_net_feedback_names), and
 * the outputs: targets, gains, torso, com, effectors, gravity, torque_scale. Bones and nodes
 * are resolved here, an unknown one named at its line. Free with sc_net_params_free, also
 * after a failure. */
int sc_net_params_read(sc_cfg_node *controller, const sc_model *m, sc_net_params *p, sc_err *err);

/* network-sample's `parameterize:` section (configs/networks/walk_speed.yaml documents every
 * key) against the network it varies: knobs name constants or spline points of it. The section's
 * `network` key (the config the trials run) is the tool's to read. */
int sc_explore_read(sc_cfg_node *section, const sc_network *net, sc_explore_config *cfg, sc_err *err);

#endif

/* simulate: the two-way coupled skeleton + soft body of [L13] section 4 with a controller
 * (hold, keyframes, or a PD target trajectory) and perturbations; writes sim.h5 + sim.xdmf. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/cli.h"
#include "common/output.h"
#include "settings/controller.h"
#include "settings/scenario.h"
#include "settings/network.h"
#include "settings/simbicon.h"
#include "store/openloop.h"
#include "store/policy.h"
#include "store/trajectory.h"
#include "sampling/rollout.h"
#include "core/cleanup.h"
#include "core/log.h"
#include "store/character.h"
#include "io/config.h"
#include "io/paths.h"
#include "sim/sim.h"
#include "store/sim.h"

static const char *usage =
    "-c CONFIG.yaml -o sim.h5 [--trajectory reference.h5 [--raw] | --policy policy.h5 [--cycles N] [--open-loop]] character.h5\n"
    "  --trajectory FILE  track the PD targets of FILE (inverse-dynamics / sample-openloop output)\n"
    "                     from the reference's initial pose (overrides the config's controller)\n"
    "  --raw              with --trajectory: use the raw reference poses as targets instead\n"
    "  --policy FILE      run a learn-feedback policy (closed loop) from its start state\n"
    "  --cycles N         with a policy: run N gait cycles (default: simulation.duration, else 20 s)\n"
    "  --open-loop        with a policy: its open loop alone (every feedback gain zero)\n"
    "Simulates the character (skin weights required for pose-based plasticity and damping)\n"
    "under the config's controller and perturbations; writes sim.h5 and sim.xdmf (ParaView).";

static const char *trajectory, *policy_file;
static int raw, open_loop;
static long cycles_opt;

static int extra_opt(const char *name, const char *value, int *used)
{
    *used = 2;
    if (!strcmp(name, "--trajectory")) {
        if (!value) return -1;
        trajectory = value;
        return 1;
    }
    if (!strcmp(name, "--policy")) {
        if (!value) return -1;
        policy_file = value;
        return 1;
    }
    if (!strcmp(name, "--cycles")) {
        if (!value) return -1;
        char *end;
        cycles_opt = strtol(value, &end, 10);
        if (*end || end == value || cycles_opt < 1 || cycles_opt > 1000000) {
            fprintf(stderr, "simulate: --cycles expects a positive number of gait cycles, got '%s'\n", value);
            exit(SC_EUSAGE);
        }
        return 1;
    }
    *used = 1;
    if (!strcmp(name, "--raw")) return raw = 1;
    if (!strcmp(name, "--open-loop")) return open_loop = 1;
    return 0;
}

/* The controller: the config's, or a trajectory or a policy named on the command line (a
   feedback policy is read now, against the loaded character: the copy with overrides is another
   model). */
typedef struct {
    sc_controller ctrl;
    sc_policy pol;
    sc_features feat;
    sc_control_dofs dofs;
    sc_policy_controller pctrl;
    sc_sim_watch watch; /* a policy's fall */
    sc_simbicon simbicon;
    sc_net_params net;
    sc_net_controller network;
} controller;

static int setup_controller(sc_cfg *cfg, const sc_model *loaded, sc_scenario *sc, controller *c, sc_err *err)
{
    sc_cfg_node *ctl;
    int rc;
    if ((rc = sc_cfg_section(sc_cfg_root(cfg), "controller", &ctl, err)) ||
        (rc = sc_controller_from_config(ctl, loaded, sc_cfg_path(cfg), &c->ctrl, err)))
        return rc;
    if (c->ctrl.kind == SC_CTRL_SIMBICON) {
        char w[256];
        if ((rc = sc_simbicon_read(ctl, &c->simbicon.p, err))) return rc;
        if ((rc = sc_simbicon_init(&c->simbicon, loaded, &c->simbicon.p, err)))
            return sc_err_prefix(err, "%s: ", sc_cfg_where(sc_cfg_get(ctl, "simbicon"), w, sizeof w));
    }
    if (c->ctrl.kind == SC_CTRL_NETWORK) {
        char w[256];
        if ((rc = sc_net_params_read(ctl, loaded, &c->net, err))) return rc;
        rc = sc_net_controller_init(&c->network, &c->net, loaded, err); /* checked now; bound to the simulation at the start */
        sc_net_controller_free(&c->network);
        if (rc) return sc_err_prefix(err, "%s: ", sc_cfg_where(sc_cfg_get(ctl, "network"), w, sizeof w));
    }
    sc_cli_ignore_other_sections(cfg);
    if ((rc = sc_cfg_check_unknown(cfg, err))) return rc;
    if (trajectory) {
        sc_controller_free(&c->ctrl);
        if ((rc = sc_trajectory_read(trajectory, raw ? "/reference/local_quat" : NULL, loaded, &c->ctrl, err))) return rc;
        sc->initial_pose = SC_START_REFERENCE;
    }
    if (policy_file) {
        sc_controller_free(&c->ctrl);
        c->ctrl.kind = SC_CTRL_POLICY;
        snprintf(c->ctrl.source, sizeof c->ctrl.source, "%s", policy_file);
        c->ctrl.cycles = cycles_opt;
        c->ctrl.feedback = !open_loop;
    }
    if (c->ctrl.kind == SC_CTRL_POLICY) {
        sc_control_dofs_init(loaded, &c->dofs);
        if ((rc = sc_policy_read(c->ctrl.source, loaded, &c->dofs, &c->pol, err)) ||
            (rc = sc_policy_read_max_tilt(c->ctrl.source, &c->watch.max_tilt, err)))
            return rc;
        sc->initial_pose = SC_START_REFERENCE;
        if (c->ctrl.cycles > 0) sc->duration = c->ctrl.cycles * c->pol.period;
        else if (sc->duration <= 0) sc->duration = 20;
    }
    return sc_scenario_check_pushes(cfg, sc, 1, c->ctrl.kind == SC_CTRL_POLICY, "needs a policy's cycle (--policy)", err);
}

/* The start state: the policy's, the trajectory's first state (a clip starts mid-motion), or
   the rest pose dropped; then settled (the policy's start settled already). */
static int start_state(sc_sim *sim, const sc_model *m, const sc_scenario *sc, controller *c, const char *config, sc_err *err)
{
    const sc_controller *ctrl = &c->ctrl;
    int rc;
    if (ctrl->kind == SC_CTRL_POLICY) {
        if ((rc = sc_features_init(&c->feat, m, &c->pol, err)) || (rc = sc_policy_start(&c->pol, sim, err))) return rc;
        sc_policy_controller_init(&c->pctrl, &c->pol, &c->feat, &c->dofs, sim->step, ctrl->feedback);
        c->watch.policy = &c->pol;
        c->watch.step0 = sim->step;
        c->watch.cycle_steps = sc_policy_cycle_steps(&c->pol);
        return SC_OK;
    }
    if (ctrl->kind == SC_CTRL_NETWORK && (rc = sc_net_controller_init(&c->network, &c->net, sim->m, err))) return rc;
    if (ctrl->kind == SC_CTRL_SIMBICON) {
        if ((rc = sc_simbicon_start(&c->simbicon, sim, sc->drop_height, sc->init_vel, err))) return rc;
    } else if (ctrl->kind == SC_CTRL_NETWORK) {
        if ((rc = sc_net_controller_start(&c->network, sim, sc->drop_height, sc->init_vel, err))) return rc;
    } else if (sc->initial_pose == SC_START_REFERENCE) {
        if (ctrl->kind != SC_CTRL_TRAJECTORY)
            return sc_fail(err, SC_EINPUT, "%s: simulation.initial_pose: reference needs controller.type: trajectory", config);
        double root[3], root_vel[3], *wl = malloc((size_t)m->nbones * 3 * sizeof *wl);
        sc_quat *lq = malloc((size_t)m->nbones * sizeof *lq);
        if (!wl || !lq) rc = sc_fail(err, SC_EIO, "out of memory");
        else rc = sc_trajectory_start(ctrl->source, m, ctrl->offset, root, lq, root_vel, wl, err);
        if (!rc) {
            root[1] += sc->drop_height;
            sc_sim_set_pose(sim, root, lq, root_vel, wl);
        }
        free(wl);
        free(lq);
        if (rc) return rc;
    } else {
        double off[3] = {0, sc->drop_height, 0};
        sc_sim_translate(sim, off, sc->init_vel);
    }
    return sc_sim_settle(sim, err);
}

static void log_result(const char *output, const sc_sim *sim, const sc_sim_writer *w, int failed, const sc_err *step_err)
{
    const sc_sim_timing *tm = &sim->timing;
    double n = tm->steps ? (double)tm->steps : 1;
    sc_sim_warnings warn;
    sc_sim_warnings_get(sim, &warn);
    if (warn.ode_messages) sc_log_warn("simulate: %ld ODE warnings (the last: %s)", warn.ode_messages, warn.last_ode_message);
    if (failed) {
        fprintf(stderr, "simulate: error: %s (the output written so far is in %s, marked failed)\n", step_err->msg, output);
    } else {
        sc_log_info("simulate: %s: %ld steps (%.3f s simulated) in %.2f s wall, %.1f us/step (fem %.1f, skinning %.1f, damping %.1f, contact %.1f, "
                    "coupling %.1f, ODE %.1f); max ground penetration %.4f m",
                    output, tm->steps, sim->t, tm->total, 1e6 * tm->total / n, 1e6 * tm->fem / n, 1e6 * tm->skin / n, 1e6 * tm->damping / n,
                    1e6 * tm->contact / n, 1e6 * tm->coupling / n, 1e6 * tm->ode / n, w->max_depth);
    }
}

/* when and how a policy's character fell, logged and in sim.h5's /fall */
static int report_fall(const sc_sim_watch *watch, const sc_sim *sim, sc_sim_writer *w, sc_err *err)
{
    char what[256];
    sc_sim_fall_describe(watch, sim, what, sizeof what);
    sc_log_info("simulate: %s", what);
    return sc_sim_writer_fall(w, watch, sim, err);
}

int main(int argc, char **argv)
{
    sc_cli cli;
    sc_cli_parse(&cli, argc, argv, "simulate", usage, 1, 1, 1, SC_CLI_OUTPUT, extra_opt);
    if (raw && !trajectory) {
        fprintf(stderr, "simulate: --raw only applies with --trajectory FILE (it selects the raw reference poses of FILE)\n");
        return SC_EUSAGE;
    }
    sc_cli_add_input_named(&cli, trajectory, "--trajectory");
    sc_cli_add_input_named(&cli, policy_file, "--policy");
    char xdmf[1024], h5rel[1024];
    sc_output_xdmf_paths(cli.output, xdmf, sizeof xdmf, h5rel, sizeof h5rel);
    sc_cli_add_output(&cli, xdmf);
    sc_err err = {0};
    sc_model loaded, m;
    sc_cfg *cfg = NULL;
    sc_scenario sc;
    controller c = {0};
    if (sc_character_read(cli.inputs[0], &loaded, 0, &err) || sc_character_require_bones(cli.inputs[0], &loaded, "simulate", &err))
        sc_cli_die(&cli, &err);
    if (sc_cfg_load_file(cli.config, &cfg, &err) || sc_scenario_read(cfg, &loaded, &sc, &err)) sc_cli_die(&cli, &err);
    if (setup_controller(cfg, &loaded, &sc, &c, &err) || sc_scenario_model(&loaded, &sc, &m, &err) ||
        (c.ctrl.kind == SC_CTRL_SIMBICON && sc_simbicon_set_gains(&c.simbicon.p, &m, &err)))
        sc_cli_die(&cli, &err);
    /* the controller's file (the config's controller.file, --trajectory or --policy) is read too */
    if (c.ctrl.kind == SC_CTRL_TRAJECTORY || c.ctrl.kind == SC_CTRL_POLICY) sc_cli_add_input_named(&cli, c.ctrl.source, "controller file");
    sc_model_free(&loaded);
    sc_sim *sim;
    if (sc_sim_create(&m, &sc.sim, &sim, &err)) {
        sc_err_prefix(&err, "%s: ", cli.inputs[0]);
        sc_cli_die(&cli, &err);
    }
    if (start_state(sim, &m, &sc, &c, cli.config, &err)) sc_cli_die(&cli, &err);

    char *resolved = sc_cfg_resolved_text(cfg);
    double duration = sc.duration;
    if (duration <= 0) duration = c.ctrl.kind == SC_CTRL_TRAJECTORY ? sc_controller_duration(&c.ctrl) - c.ctrl.offset : 5.0;
    long nsteps = (long)llround(duration / sc.sim.dt);
    sc_sim_file_info info = {argc, argv, resolved, cli.inputs[0], sc.sim.dt, sc.store_nodes, c.ctrl.ref_time != NULL, nsteps / sc.every + 2};
    sc_sim_writer w;
    if (sc_sim_writer_create(cli.output, &info, &m, sim, &w, &err)) sc_cli_die(&cli, &err);
    sc_err step_err = {0};
    sc_rollout_result res;
    sc_target_source src = c.ctrl.kind == SC_CTRL_POLICY ? sc_policy_source(&c.pctrl)
        : c.ctrl.kind == SC_CTRL_SIMBICON                ? sc_simbicon_source(&c.simbicon)
        : c.ctrl.kind == SC_CTRL_NETWORK                 ? sc_net_controller_source(&c.network)
                                                         : sc_controller_source(&c.ctrl);
    sc_sim_watch *watch = c.ctrl.kind == SC_CTRL_POLICY ? &c.watch : NULL;
    int failed = sc_sim_record(sim, src, &sc.pert, nsteps, sc.every, &c.ctrl, watch, &w, &res, &step_err, &err) ? 2 : 0;
    if (res.stopped || (watch && report_fall(watch, sim, &w, &err))) {
        sc_sim_writer_abort(&w);
        sc_cli_die(&cli, &err);
    }
    /* a numerical failure keeps what was written and says so */
    char status[SC_ERR_MSG + 16];
    snprintf(status, sizeof status, failed ? "failed: %s" : "completed", step_err.msg);
    if (sc_sim_writer_commit(&w, sim, status, &err)) sc_cli_die(&cli, &err);
    sc_cleanup_add(cli.output, SC_CLEANUP_OUTPUT); /* removed again if the .xdmf cannot be written */
    if (sc_sim_writer_xdmf(&w, xdmf, h5rel, &err)) sc_cli_die(&cli, &err);
    sc_cleanup_keep_outputs();
    log_result(cli.output, sim, &w, failed, &step_err);
    sc_sim_writer_free(&w);
    free(resolved);
    if (c.ctrl.kind == SC_CTRL_POLICY) {
        sc_policy_free(&c.pol);
        sc_features_free(&c.feat);
    }
    sc_simbicon_free(&c.simbicon);
    sc_net_controller_free(&c.network);
    sc_net_params_free(&c.net);
    sc_controller_free(&c.ctrl);
    sc_sim_free(sim);
    sc_model_free(&m);
    sc_cfg_free(cfg);
    return failed ? SC_ENUMERIC : 0;
}

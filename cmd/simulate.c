/* simulate: the two-way coupled skeleton + soft body of [L13] section 4 with a controller
 * (hold, keyframes, or a PD target trajectory) and perturbations; writes sim.h5 + sim.xdmf. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/cli.h"
#include "common/output.h"
#include "sampling/controller.h"
#include "store/policy.h"
#include "sampling/rollout.h"
#include "core/cleanup.h"
#include "core/log.h"
#include "io/character.h"
#include "io/config.h"
#include "io/paths.h"
#include "io/xdmf.h"
#include "sim/sim.h"

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

/* time series of sim.h5 */
typedef struct {
    sc_h5_series *time, *bpos, *bquat, *blin, *bang, *nodes, *ke, *ee, *pe, *te, *lin, *ang, *com, *cf, *cn, *depth, *inv,
        *track, *push, *steptime, *reftime;
} series;

static int create_series(sc_h5 *f, const sc_model *m, int store_nodes, int follows_reference, series *s, sc_err *err)
{
    size_t nb = (size_t)m->nbones, nn = (size_t)m->nnodes;
    int rc;
#define S(ptr, path, rank, dims, units, desc) if ((rc = sc_h5_series_create(f, path, s->time, rank, dims, units, desc, &s->ptr, err))) return rc
    if ((rc = sc_h5_timeline_create(f, "/time", &s->time, err))) return rc;
    if ((rc = sc_h5_group(f, "/bones", "rigid bones; position is the bone origin (its joint)", err))) return rc;
    S(bpos, "/bones/position", 2, ((size_t[]){nb, 3}), "m", "bone origin positions");
    S(bquat, "/bones/orientation", 2, ((size_t[]){nb, 4}), "1", "bone rotations (w, x, y, z) from the rest pose");
    S(blin, "/bones/linear_velocity", 2, ((size_t[]){nb, 3}), "m/s", "velocity of each bone origin");
    S(bang, "/bones/angular_velocity", 2, ((size_t[]){nb, 3}), "rad/s", "angular velocity, world frame");
    if (store_nodes) {
        if ((rc = sc_h5_group(f, "/nodes", "tet node trajectories", err))) return rc;
        S(nodes, "/nodes/position", 2, ((size_t[]){nn, 3}), "m", "tet node positions");
    }
    if ((rc = sc_h5_group(f, "/energy", "energies; total = kinetic + elastic + gravitational potential", err))) return rc;
    S(ke, "/energy/kinetic", 0, NULL, "J", "kinetic energy of free nodes and bones");
    S(ee, "/energy/elastic", 0, NULL, "J", "corotated elastic energy (relative to the pose-based rest shape with plasticity)");
    S(pe, "/energy/potential", 0, NULL, "J", "gravitational potential energy");
    S(te, "/energy/total", 0, NULL, "J", "kinetic + elastic + potential");
    if ((rc = sc_h5_group(f, "/momentum", "whole-body momentum (free nodes + bones)", err))) return rc;
    S(lin, "/momentum/linear", 1, ((size_t[]){3}), "kg m/s", "total linear momentum");
    S(ang, "/momentum/angular", 1, ((size_t[]){3}), "kg m^2/s", "angular momentum about the centre of mass");
    S(com, "/momentum/com", 1, ((size_t[]){3}), "m", "centre of mass");
    if ((rc = sc_h5_group(f, "/contact", "ground contact on the fine surface", err))) return rc;
    S(cf, "/contact/force", 1, ((size_t[]){3}), "N", "total contact force on the body");
    S(depth, "/contact/max_depth", 0, NULL, "m", "deepest ground penetration of a surface vertex");
    if ((rc = sc_h5_series_create_i32(f, "/contact/count", s->time, 0, NULL, "surface vertices in contact", &s->cn, err))) return rc;
    if ((rc = sc_h5_group(f, "/fem", "soft body", err))) return rc;
    if ((rc = sc_h5_series_create_i32(f, "/fem/inverted", s->time, 0, NULL, "inverted tets", &s->inv, err))) return rc;
    if ((rc = sc_h5_group(f, "/control", "controller", err))) return rc;
    S(track, "/control/tracking_error", 0, NULL, "rad", "RMS over joints of the angle between local rotation and PD target");
    S(push, "/control/push_force", 1, ((size_t[]){3}), "N", "total external push force applied");
    if (follows_reference) S(reftime, "/control/reference_time", 0, NULL, "s", "reference time the controller plays (time scaling)");
    if ((rc = sc_h5_group(f, "/timing", "wall-clock cost", err))) return rc;
    S(steptime, "/timing/step", 0, NULL, "s", "mean wall time per step since the previous frame");
#undef S
    return SC_OK;
}

static int write_mesh(sc_h5 *f, const sc_model *m, sc_err *err)
{
    const char *names[SC_SIM_MAX_BONES];
    for (int b = 0; b < m->nbones; b++) names[b] = m->bone_name[b];
    int rc;
#define TRY(x) if ((rc = (x))) return rc
    TRY(sc_h5_write_strings(f, "/bones/names", (size_t)m->nbones, names, "bone names, in the order of every /bones dataset", err));
    TRY(sc_h5_write_i32(f, "/bones/parents", 1, (size_t[]){(size_t)m->nbones}, m->parent, "parent bone, -1 for the root", err));
    TRY(sc_h5_group(f, "/mesh", "the character's topology, so this file stands alone (copied from character.h5)", err));
    TRY(sc_h5_write_i32(f, "/mesh/tets", 2, (size_t[]){(size_t)m->ntets, 4}, m->tets, "tets (node indices)", err));
    TRY(sc_h5_write_f64(f, "/mesh/rest_pos", 2, (size_t[]){(size_t)m->nnodes, 3}, m->rest_pos, "m", "rest node positions", err));
    TRY(sc_h5_write_i32(f, "/mesh/node_bone", 1, (size_t[]){(size_t)m->nnodes}, m->node_bone, "bone a node is fixed to, -1 free", err));
    TRY(sc_h5_write_i32(f, "/mesh/surface_faces", 2, (size_t[]){(size_t)m->nsurf_tris, 3}, m->surf_tris, "fine surface triangles", err));
    TRY(sc_h5_write_i32(f, "/mesh/surface_tet", 1, (size_t[]){(size_t)m->nsurf_verts}, m->surf_tet, "embedding tet of each surface vertex", err));
    TRY(sc_h5_write_f64(f, "/mesh/surface_bary", 2, (size_t[]){(size_t)m->nsurf_verts, 4}, m->surf_bary, "1", "barycentric weights", err));
#undef TRY
    return SC_OK;
}

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

/* The output hook: one frame of sim.h5 every `every` steps, progress, and the frame times for
 * the XDMF. */
typedef struct {
    const sc_model *m;
    const sc_controller *ctrl;
    series *s;
    int every;
    long nframes;
    double *frame_times, last_wall, max_depth;
    long last_step, first_step;
    sc_progress *prog;
    sc_quat *local;
    double *bp;
    sc_err err;
} frame_writer;

static int write_frame(void *ctx, const sc_sim *sim, const sc_quat *targets, const double push_total[3])
{
    frame_writer *fw = ctx;
    const sc_model *m = fw->m;
    long k = sim->step - fw->first_step;
    sc_progress_update(fw->prog, k);
    if (k % fw->every) return 0;
    sc_sim_diag d;
    sc_sim_diagnostics(sim, &d);
    sc_skeleton_local_rotations(sim->skel, fw->local);
    double se = 0;
    int nj = 0;
    for (int b = 1; b < m->nbones; b++, nj++) { double a = sc_q_angle_between(fw->local[b], targets[b]); se += a * a; }
    double track = nj ? sqrt(se / nj) : 0, total = d.kinetic + d.elastic + d.potential;
    double now = sc_wall_time(), per = k > fw->last_step ? (now - fw->last_wall) / (double)(k - fw->last_step) : 0;
    fw->last_wall = now;
    fw->last_step = k;
    double *bp = fw->bp;
    for (int b = 0; b < m->nbones; b++) {
        sc_v3_store(bp + 3 * b, sim->pose[b].p);
        double *q = bp + 3 * m->nbones + 4 * b;
        q[0] = sim->pose[b].q.w; q[1] = sim->pose[b].q.x; q[2] = sim->pose[b].q.y; q[3] = sim->pose[b].q.z;
    }
    int inv = d.inverted, cnt = d.contacts;
    double depth = sim->contact.max_depth, t = sim->t;
    fw->max_depth = fmax(fw->max_depth, depth);
    series *s = fw->s;
    sc_err *err = &fw->err;
    int rc = sc_h5_series_append(s->time, &t, err) || sc_h5_series_append(s->bpos, bp, err) ||
             sc_h5_series_append(s->bquat, bp + 3 * m->nbones, err) || sc_h5_series_append(s->blin, sim->lin_vel, err) ||
             sc_h5_series_append(s->bang, sim->ang_vel, err) || (s->nodes && sc_h5_series_append(s->nodes, sim->x, err)) ||
             sc_h5_series_append(s->ke, &d.kinetic, err) || sc_h5_series_append(s->ee, &d.elastic, err) ||
             sc_h5_series_append(s->pe, &d.potential, err) || sc_h5_series_append(s->te, &total, err) ||
             sc_h5_series_append(s->lin, d.linear, err) || sc_h5_series_append(s->ang, d.angular, err) ||
             sc_h5_series_append(s->com, d.com, err) || sc_h5_series_append(s->cf, d.contact_force, err) ||
             sc_h5_series_append(s->depth, &depth, err) || sc_h5_series_append_i32(s->cn, &cnt, err) ||
             sc_h5_series_append_i32(s->inv, &inv, err) || sc_h5_series_append(s->track, &track, err) ||
             sc_h5_series_append(s->push, push_total, err) || sc_h5_series_append(s->steptime, &per, err);
    if (!rc && s->reftime) {
        double tr = sc_controller_reference_time(fw->ctrl, t);
        rc = sc_h5_series_append(s->reftime, &tr, err);
    }
    if (rc) return 1;
    fw->frame_times[fw->nframes++] = t;
    return 0;
}

int main(int argc, char **argv)
{
    sc_cli cli;
    sc_cli_parse(&cli, argc, argv, "simulate", usage, 1, 1, 1, SC_CLI_OUTPUT, extra_opt);
    if (raw && !trajectory) {
        fprintf(stderr, "simulate: --raw only applies with --trajectory FILE (it selects the raw reference poses of FILE)\n");
        return SC_EUSAGE;
    }
    sc_cli_add_input(&cli, trajectory);
    char xdmf[1024], h5rel[1024];
    sc_output_xdmf_paths(cli.output, xdmf, sizeof xdmf, h5rel, sizeof h5rel);
    sc_cli_add_output(&cli, xdmf);
    sc_err err = {0};
    sc_model loaded, m;
    sc_cfg *cfg = NULL;
    sc_scenario sc;
    sc_controller ctrl;
    if (sc_character_read(cli.inputs[0], &loaded, 0, &err)) sc_cli_die(&cli, &err);
    if (sc_cfg_load_file(cli.config, &cfg, &err) || sc_scenario_read(cfg, &loaded, &sc, &err)) sc_cli_die(&cli, &err);
    sc_cfg_node *ctl;
    if (sc_cfg_section(sc_cfg_root(cfg), "controller", &ctl, &err) || sc_controller_from_config(ctl, &loaded, sc_cfg_path(cfg), &ctrl, &err))
        sc_cli_die(&cli, &err);
    sc_cli_ignore_other_sections(cfg);
    if (sc_cfg_check_unknown(cfg, &err)) sc_cli_die(&cli, &err);
    if (trajectory) {
        sc_controller_free(&ctrl);
        if (sc_controller_load_trajectory(trajectory, raw ? "/reference/local_quat" : NULL, &loaded, &ctrl, &err)) sc_cli_die(&cli, &err);
        sc.initial_pose = SC_START_REFERENCE;
    }
    if (policy_file) {
        sc_controller_free(&ctrl);
        ctrl.kind = SC_CTRL_POLICY;
        snprintf(ctrl.source, sizeof ctrl.source, "%s", policy_file);
        ctrl.cycles = cycles_opt;
        ctrl.feedback = !open_loop;
    }
    /* a feedback policy: read now, against the loaded character (the copy with overrides is
       another model) */
    sc_policy pol = {0};
    sc_features feat = {0};
    sc_control_dofs dofs;
    sc_policy_controller pctrl;
    if (ctrl.kind == SC_CTRL_POLICY) {
        sc_control_dofs_init(&loaded, &dofs);
        if (sc_policy_read(ctrl.source, &loaded, &dofs, &pol, &err)) sc_cli_die(&cli, &err);
        sc.initial_pose = SC_START_REFERENCE;
        if (ctrl.cycles > 0) sc.duration = ctrl.cycles * pol.period;
        else if (sc.duration <= 0) sc.duration = 20;
    }
    if (sc_scenario_model(&loaded, &sc, &m, &err)) sc_cli_die(&cli, &err);
    sc_model_free(&loaded);
    sc_sim *sim;
    if (sc_sim_create(&m, &sc.sim, &sim, &err)) { sc_err_prefix(&err, "%s: ", cli.inputs[0]); sc_cli_die(&cli, &err); }
    if (ctrl.kind == SC_CTRL_POLICY) {
        if (sc_features_init(&feat, &m, &err)) sc_cli_die(&cli, &err);
        if (sc_policy_start(&pol, sim, &err)) sc_cli_die(&cli, &err);
        sc_policy_controller_init(&pctrl, &pol, &feat, &dofs, sim->step, ctrl.feedback);
    } else if (sc.initial_pose == SC_START_REFERENCE) {
        /* start in the trajectory's first state (a clip starts mid-motion) */
        if (ctrl.kind != SC_CTRL_TRAJECTORY) {
            sc_fail(&err, SC_EINPUT, "%s: simulation.initial_pose: reference needs controller.type: trajectory", cli.config);
            sc_cli_die(&cli, &err);
        }
        double root[3], root_vel[3], *wl = malloc((size_t)m.nbones * 3 * sizeof *wl);
        sc_quat *lq = malloc((size_t)m.nbones * sizeof *lq);
        if (!wl || !lq || sc_trajectory_start(ctrl.source, &m, ctrl.offset, root, lq, root_vel, wl, &err)) sc_cli_die(&cli, &err);
        root[1] += sc.drop_height;
        sc_sim_set_pose(sim, root, lq, root_vel, wl);
        free(wl);
        free(lq);
    } else {
        double off[3] = {0, sc.drop_height, 0};
        sc_sim_translate(sim, off, sc.init_vel);
    }
    if (ctrl.kind != SC_CTRL_POLICY && sc_sim_settle(sim, &err)) sc_cli_die(&cli, &err); /* the policy's start settled already */

    char *resolved = sc_cfg_resolved_text(cfg);
    sc_h5 *f;
    series s;
    memset(&s, 0, sizeof s);
    if (sc_h5_create(cli.output, &f, &err)) sc_cli_die(&cli, &err);
    if (sc_h5_provenance(f, "softcon.sim/1", argc, argv, resolved, &err) || sc_h5_attr_str(f, "/", "character", cli.inputs[0], &err) ||
        sc_h5_attr_f64(f, "/", "dt", sc.sim.dt, &err) || sc_h5_attr_str(f, "/", "fem_kernel", sc_fem_kernel_name(sim->fem.kernel), &err) ||
        (!isnan(sim->start_sink) && sc_h5_attr_f64(f, "/", "start_sink_m", sim->start_sink, &err)) || create_series(f, &m, sc.store_nodes, ctrl.ref_time != NULL, &s, &err) || write_mesh(f, &m, &err)) {
        sc_h5_abort(f);
        sc_cli_die(&cli, &err);
    }
    double duration = sc.duration;
    if (duration <= 0) duration = ctrl.kind == SC_CTRL_TRAJECTORY ? sc_controller_duration(&ctrl) - ctrl.offset : 5.0;
    long nsteps = (long)llround(duration / sc.sim.dt);
    sc_progress prog;
    frame_writer fw = {.m = &m, .ctrl = &ctrl, .s = &s, .every = sc.every, .prog = &prog, .first_step = sim->step, .last_wall = sc_wall_time()};
    fw.frame_times = malloc((size_t)(nsteps / sc.every + 2) * sizeof *fw.frame_times);
    fw.local = malloc((size_t)m.nbones * sizeof *fw.local);
    fw.bp = malloc((size_t)m.nbones * 7 * sizeof *fw.bp);
    sc_quat *targets = malloc((size_t)m.nbones * sizeof *targets);
    if (!fw.frame_times || !fw.local || !fw.bp || !targets) { sc_fail(&err, SC_EIO, "out of memory"); sc_h5_abort(f); sc_cli_die(&cli, &err); }
    sc_progress_begin(&prog, "simulate", nsteps);
    sc_err step_err = {0};
    sc_rollout_result res;
    sc_target_source src = ctrl.kind == SC_CTRL_POLICY ? sc_policy_source(&pctrl) : sc_controller_source(&ctrl);
    int failed = sc_rollout(sim, src, &sc.pert, sim->step + nsteps, write_frame, &fw, targets, &res, &step_err) ? 2 : 0;
    sc_progress_end(&prog);
    if (res.stopped) { sc_h5_abort(f); sc_cli_die(&cli, &fw.err); }
    /* timing and status; a numerical failure keeps what was written and says so */
    const sc_sim_timing *tm = &sim->timing;
    double n = tm->steps ? (double)tm->steps : 1;
    sc_sim_warnings warn;
    sc_sim_warnings_get(sim, &warn);
    char status[SC_ERR_MSG + 16];
    snprintf(status, sizeof status, failed ? "failed: %s" : "completed", step_err.msg);
    int rc = sc_h5_attr_str(f, "/", "status", status, &err) || sc_h5_attr_i64(f, "/", "steps", tm->steps, &err) ||
             sc_h5_attr_f64(f, "/timing", "mean_step_s", tm->total / n, &err) || sc_h5_attr_f64(f, "/timing", "mean_fem_s", tm->fem / n, &err) ||
             sc_h5_attr_f64(f, "/timing", "mean_skinning_s", tm->skin / n, &err) ||
             sc_h5_attr_f64(f, "/timing", "mean_damping_s", tm->damping / n, &err) ||
             sc_h5_attr_f64(f, "/timing", "mean_contact_s", tm->contact / n, &err) ||
             sc_h5_attr_f64(f, "/timing", "mean_coupling_s", tm->coupling / n, &err) || sc_h5_attr_f64(f, "/timing", "mean_ode_s", tm->ode / n, &err) ||
             sc_h5_attr_f64(f, "/contact", "max_depth_m", fw.max_depth, &err) ||
             sc_h5_attr_i64(f, "/fem", "polar_fallbacks", warn.fem_fallbacks, &err) ||
             sc_h5_attr_i64(f, "/", "ode_warnings", warn.ode_messages, &err);
    if (!rc && sc.store_nodes) rc = sc_xdmf_sim_views(f, (int)fw.nframes, &err);
    if (rc) { sc_h5_abort(f); sc_cli_die(&cli, &err); }
    if (sc_h5_commit(f, &err)) sc_cli_die(&cli, &err);
    sc_cleanup_add(cli.output, SC_CLEANUP_OUTPUT); /* removed again if the .xdmf cannot be written */
    if (sc.store_nodes && sc_xdmf_write_sim(xdmf, h5rel, &m, fw.frame_times, (int)fw.nframes, &err)) sc_cli_die(&cli, &err);
    sc_cleanup_keep_outputs();
    if (warn.ode_messages) sc_log_warn("simulate: %ld ODE warnings (the last: %s)", warn.ode_messages, warn.last_ode_message);
    if (failed) {
        fprintf(stderr, "simulate: error: %s (the output written so far is in %s, marked failed)\n", step_err.msg, cli.output);
    } else {
        sc_log_info("simulate: %s: %ld steps (%.3f s simulated) in %.2f s wall, %.1f us/step (fem %.1f, skinning %.1f, damping %.1f, contact %.1f, "
                    "coupling %.1f, ODE %.1f); max ground penetration %.4f m",
                    cli.output, tm->steps, sim->t, tm->total, 1e6 * tm->total / n, 1e6 * tm->fem / n, 1e6 * tm->skin / n,
                    1e6 * tm->damping / n, 1e6 * tm->contact / n, 1e6 * tm->coupling / n, 1e6 * tm->ode / n, fw.max_depth);
    }
    free(fw.frame_times); free(fw.local); free(fw.bp); free(targets); free(resolved);
    if (ctrl.kind == SC_CTRL_POLICY) {
        sc_policy_free(&pol);
        sc_features_free(&feat);
    }
    sc_controller_free(&ctrl);
    sc_sim_free(sim);
    sc_model_free(&m);
    sc_cfg_free(cfg);
    return failed ? SC_ENUMERIC : 0;
}

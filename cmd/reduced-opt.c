/* reduced-opt: [P17]'s swimming controller for a reduced body ([P17] 5-6): a periodic DMP per mode
 * driving the modal control forces, its weights and period optimised by L-BFGS over forward
 * simulations in fluid (or a given controller replayed), run in the reduced body or the full
 * FEM; writes swim.h5. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "common/cli.h"
#include "core/log.h"
#include "io/config.h"
#include "settings/swim.h"
#include "store/character.h"
#include "store/reduced.h"
#include "store/swim.h"

static const char *usage = "-c CONFIG.yaml -o swim.h5 [--threads N] character.h5 [controller.h5]\n"
                           "Optimises a periodic DMP controller ([P17] eq. 7) of the character's reduced body (mesh-prep's `reduced:`)\n"
                           "to swim at swim.target_speed along swim.direction in the config's fluid, by L-BFGS over forward simulations\n"
                           "(--threads: the gradient's runs, same result); with controller.h5 (an earlier swim.h5) replays that one\n"
                           "instead. replay.model: the run recorded, in the reduced body or the full FEM. Exit 2: bad config or input;\n"
                           "4: the body blew up.";

static void die_at(const sc_cli *cli, sc_err *err, const char *where)
{
    if (where) sc_err_prefix(err, "%s: ", where);
    sc_cli_die(cli, err);
}

int main(int argc, char **argv)
{
    sc_cli cli;
    sc_cli_take_threads();
    sc_cli_parse(&cli, argc, argv, "reduced-opt", usage, 1, 2, 1, SC_CLI_OUTPUT, NULL);
    const int replaying = cli.ninputs == 2;
    sc_err err = {0};
    sc_model m;
    sc_reduced_basis b;
    int present;
    sc_cfg *cfg = NULL;
    sc_swim_config c;
    if (sc_character_read(cli.inputs[0], &m, 0, &err) || sc_character_read_reduced(cli.inputs[0], &m, &b, &present, &err)) die_at(&cli, &err, NULL);
    if (!present) {
        sc_fail(&err, SC_EINPUT, "%s:/reduced: missing; build the character with mesh-prep's `reduced: {modes: K}`", cli.inputs[0]);
        die_at(&cli, &err, NULL);
    }
    if (sc_cfg_load_file(cli.config, &cfg, &err) || sc_swim_config_read(cfg, replaying, &c, &err)) die_at(&cli, &err, NULL);
    sc_cli_ignore_other_sections(cfg);
    if (sc_cfg_check_unknown(cfg, &err)) die_at(&cli, &err, NULL);
    sc_reduced_model rm;
    sc_swim_problem p;
    sc_dmp d;
    if (replaying && sc_swim_read_controller(cli.inputs[1], b.nmodes, &d, &err)) die_at(&cli, &err, NULL);
    const double period0 = replaying ? d.period : c.period > 0 ? c.period : 1 / b.frequency[0];
    if (sc_reduced_model_create(&m, &b, &c.body, &rm, &err) ||
        sc_swim_problem_create(&rm, &c.objective, SC_DMP_PERIODIC, replaying ? d.nbasis : c.basis, period0, c.free_period, cli.threads, &p, &err))
        die_at(&cli, &err, cli.config);
    sc_swim_history h = {0};
    sc_lbfgs_result lr;
    if (!replaying) {
        double *x = sc_alloc(&err, p.nvars, sizeof(double));
        if (!x || sc_dmp_create(SC_DMP_PERIODIC, rm.nmodes, c.basis, period0, &d, &err)) die_at(&cli, &err, NULL);
        sc_swim_initial_guess(&p, cli.seed, c.initial_amplitude, x);
        sc_log_info("reduced-opt: %d modes x %d basis functions%s: %d variables, %ld steps of %.4g s per run, %d thread(s)", rm.nmodes, c.basis,
                    c.free_period ? " + the period" : "", p.nvars, p.nsteps, c.body.dt, cli.threads);
        if (sc_swim_optimise(&p, &c.lbfgs, x, &h, &lr, &err)) die_at(&cli, &err, "optimisation");
        sc_swim_to_dmp(&p, x, &d);
        free(x);
    }
    const int full = c.replay_model == SC_REPLAY_FULL;
    const double dt = full ? c.full_dt : c.body.dt;
    sc_swim_trace tr;
    sc_swim_terms t;
    sc_softbody_opts so;
    sc_softbody_default_opts(&so);
    so.dt = c.full_dt;
    so.contact.enabled = 0;
    for (int a = 0; a < 3; a++) so.gravity[a] = c.body.gravity[a];
    so.rayleigh_alpha = c.body.rayleigh_alpha, so.rayleigh_beta = c.body.rayleigh_beta, so.fluid = c.body.fluid;
    if (sc_swim_trace_create((int)(lround(c.objective.duration / dt) / c.every + 1), rm.nmodes, &tr, &err) ||
        (full ? sc_swim_replay_full(&p, &m, &so, &d, &t, &tr, c.every, &err) : sc_swim_simulate(&p, &p.states[0], &d, &t, &tr, c.every, &err)))
        die_at(&cli, &err, full ? "full FEM replay" : "replay");
    char *resolved = sc_cfg_resolved_text(cfg);
    const sc_swim_file_info info = {
        argc, argv, resolved, cli.inputs[0], replaying ? cli.inputs[1] : "optimised", cli.seed, full ? "full" : "reduced", dt, c.every, cli.threads};
    if (sc_swim_write(cli.output, &info, &p, &d, &t, &tr, replaying ? NULL : &h, replaying ? NULL : &lr, &err)) die_at(&cli, &err, NULL);
    sc_log_info("reduced-opt: %s: %s run: %.4f m/s along d (target %.4f), drift %.4f m/s, objective %.5g (speed %.5g, effort %.5g, balance "
                "%.5g), period %.4f s",
                cli.output, full ? "full FEM" : "reduced", t.achieved, c.objective.target_speed, t.drift, t.total, t.speed, t.effort, t.balance,
                d.period);
    if (!replaying)
        sc_log_info("reduced-opt: optimised in %.1f s: %d iterations (%s), %ld forward runs, objective %.5g -> %.5g", h.seconds[h.n - 1],
                    lr.iterations, sc_lbfgs_stop_name(lr.stop), p.evaluations, h.objective[0], lr.f);
    free(resolved);
    sc_swim_trace_free(&tr);
    sc_swim_history_free(&h);
    sc_dmp_free(&d);
    sc_swim_problem_free(&p);
    sc_reduced_model_free(&rm);
    sc_reduced_basis_free(&b);
    sc_model_free(&m);
    sc_cfg_free(cfg);
    return 0;
}

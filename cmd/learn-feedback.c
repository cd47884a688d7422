/* learn-feedback: linear feedback policies for a gait cycle's open-loop controller, by guided
 * learning ([L13] 5; Liu et al. 2016), with their evaluation against pushes and flesh stiffness;
 * alone or under mpiexec.mpich. Writes policy.h5. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/cli.h"
#include "common/longrun.h"
#include "store/reference.h"
#include "learn/guided.h"
#include "learn/learn.h"
#include "learn/trial.h"
#include "settings/learn.h"
#include "settings/sampling.h"
#include "settings/scenario.h"
#include "store/openloop.h"
#include "store/policy.h"
#include "core/hash.h"
#include "core/log.h"
#include "store/character.h"
#include "io/config.h"
#include "par/par.h"
#include "store/timeline.h"

static const char *usage = "-c CONFIG.yaml -o policy.h5 [--resume] [--checkpoint FILE] character.h5 openloop.h5\n"
                           "  --resume           continue from the checkpoint (when there is one; else start afresh)\n"
                           "  --checkpoint FILE  where the learning is saved after every iteration (default: OUTPUT.ckpt)\n"
                           "Learns a linear feedback policy per fragment of the gait cycle openloop.h5 plays (made by\n"
                           "sample-openloop with sampling.cycle), by guided learning (feedback.method: guided): sampling\n"
                           "centred on the policy's output, ridge regression of the good samples' (state, action) pairs,\n"
                           "iterated; or by search (method: search): gains shared by the stance and swing roles, optimized\n"
                           "by CMA-ES on closed-loop runs (config section `feedback:`). Then evaluates the policy against\n"
                           "pushes and flesh stiffness, open and closed loop.\n"
                           "The reference openloop.h5 tracked is read from where it names it (checked by its hash).\n"
                           "Run it under mpiexec.mpich -n N to spread the work; the result does not depend on N. SIGTERM,\n"
                           "SIGUSR1, SIGINT: the learning is saved and the tool exits with code 6 (resume with --resume).";

static void progress_line(void *ctx, const char *line)
{
    (void)ctx;
    sc_log_info("%s", line);
}

/* what learn-feedback reads: the character, the config's sections, the cycle controller and the
   reference it tracked (checked by its hash) */
typedef struct inputs {
    sc_model loaded, m; /* the character as loaded, and with the scenario's changes */
    sc_cfg *cfg;
    sc_scenario sc;
    sc_samcon_config sampling;
    sc_feedback_config fb;
    sc_control_dofs dofs;
    sc_openloop_cycle ol;
    sc_reference ref;
} inputs;

static void read_inputs(sc_cli *cli, inputs *in)
{
    sc_err err = {0};
    if (sc_character_read(cli->inputs[0], &in->loaded, 1, &err)) sc_longrun_die(&err);
    sc_control_dofs_init(&in->loaded, &in->dofs);
    if (sc_cfg_load_file(cli->config, &in->cfg, &err) || sc_scenario_read(in->cfg, &in->loaded, &in->sc, &err) ||
        sc_scenario_check_pushes(in->cfg, &in->sc, 0, 0, "is simulate's alone (feedback.evaluate pushes the policy)", &err) ||
        sc_samcon_read_config(in->cfg, &in->loaded, &in->dofs, &in->sampling, &err) ||
        sc_feedback_read_config(in->cfg, &in->loaded, &in->dofs, &in->fb, &err))
        sc_longrun_die(&err);
    sc_cli_ignore_other_sections(in->cfg);
    if (sc_cfg_check_unknown(in->cfg, &err)) sc_longrun_die(&err);
    if (sc_openloop_cycle_read(cli->inputs[1], &in->loaded, &in->dofs, &in->ol, &err)) sc_longrun_die(&err);
    sc_cli_add_input_named(cli, in->ol.reference, "reference named in the openloop.h5"); /* read too: never overwritten */
    if (sc_reference_read(in->ol.reference, &in->ref, &err) || sc_reference_check_character(&in->ref, in->ol.reference, &in->loaded, &err))
        sc_longrun_die(&err);
    if (sc_reference_hash(&in->ref) != in->ol.reference_hash) {
        sc_fail(&err, SC_EINPUT, "%s: the reference %s named has changed since the controller was made (its hash differs): run sample-openloop again",
                cli->inputs[1], in->ol.reference);
        sc_longrun_die(&err);
    }
    if (sc_scenario_model(&in->loaded, &in->sc, &in->m, &err)) sc_longrun_die(&err);
    if (sc_longrun_check_output(cli->output, &err)) sc_longrun_die(&err);
}

static void log_start(const sc_cli *cli, const inputs *in, sc_par *par, int resume)
{
    const sc_feedback_config *fb = &in->fb;
    if (fb->method == SC_LEARN_SEARCH)
        sc_log_info("learn-feedback: %s on %d rank%s x %d thread%s: search, %d generations, %d actions%s", cli->inputs[1], sc_par_size(par),
                    sc_par_size(par) > 1 ? "s" : "", sc_par_threads(par), sc_par_threads(par) > 1 ? "s" : "", fb->search.generations, fb->nact,
                    resume ? "; resuming from the checkpoint" : "");
    else
        sc_log_info("learn-feedback: %s on %d rank%s x %d thread%s: %d iterations of %d cycles x %d fragments, %d samples and %d elites per segment, "
                    "%d actions%s",
                    cli->inputs[1], sc_par_size(par), sc_par_size(par) > 1 ? "s" : "", sc_par_threads(par), sc_par_threads(par) > 1 ? "s" : "",
                    fb->iterations, fb->cycles, in->ol.fragments, fb->samples, fb->elites, fb->nact, resume ? "; resuming from the checkpoint" : "");
}

static void log_result(const sc_cli *cli, const sc_feedback_config *fb, const sc_feedback_result *res)
{
    const sc_evaluation *e = &res->eval;
    sc_log_info("learn-feedback: %s: closed loop went %.1f s of %.1f s (open loop %.1f s), joint error %.1f deg (open loop %.1f deg), "
                "turned %.1f deg (open loop %.1f deg); %ld %s in %.0f s",
                cli->output, e->closedloop_survived_s, fb->eval_seconds, e->openloop_survived_s, e->closedloop_joint_error * 180 / SC_PI,
                e->openloop_joint_error * 180 / SC_PI, e->closedloop_turned * 180 / SC_PI, e->openloop_turned * 180 / SC_PI, res->samples,
                fb->method == SC_LEARN_SEARCH ? "runs" : "samples", res->wall_seconds);
}

int main(int argc, char **argv)
{
    sc_err err = {0};
    sc_cli cli = {.tool = "learn-feedback"};
    sc_par *par;
    sc_longrun_opts opt;
    int rank = sc_longrun_start(&cli, &argc, &argv, usage, 2, 1, &opt, &par);
    char ckpt[4200];
    int have_ckpt;
    sc_longrun_checkpoint(&cli, opt.checkpoint, opt.resume, ckpt, sizeof ckpt, &have_ckpt);
    /* within the first iteration the only checkpoint is the sampler's, CKPT.samcon: it is the
       work of an earlier run too (refused without --resume, else resumed and said so) */
    char inner_name[4300], inner[4300];
    int have_inner;
    sc_feedback_sampler_checkpoint(ckpt, inner_name, sizeof inner_name);
    sc_longrun_checkpoint(&cli, inner_name, opt.resume, inner, sizeof inner, &have_inner);
    have_ckpt = have_ckpt || have_inner;

    inputs in;
    read_inputs(&cli, &in);
    char *resolved = sc_cfg_resolved_text(in.cfg);
    sc_feedback_run run = {.m = &in.m,
                           .sim_opts = &in.sc.sim,
                           .ref = &in.ref,
                           .ol = &in.ol,
                           .dofs = &in.dofs,
                           .sampling = &in.sampling,
                           .cfg = &in.fb,
                           .seed = cli.seed,
                           .run_hash = sc_feedback_run_hash(resolved, &in.loaded, &in.ol, cli.seed),
                           .checkpoint = ckpt,
                           .resume = opt.resume && have_ckpt,
                           .stop = sc_longrun_stop_requested,
                           .progress = progress_line,
                           .par = par};
    if (rank == 0) log_start(&cli, &in, par, run.resume);
    sc_feedback_result res;
    /* where the ranks' time went: learning (from the start), then the evaluation */
    sc_par_clock clock;
    sc_par_clock_read(par, 1, &clock);
    size_t row = (size_t)sc_par_size(par) * SC_PAR_PHASES;
    double *timeline = rank == 0 ? calloc(2 * row, sizeof(double)) : NULL;
    if (rank == 0 && !timeline) sc_par_abort(par, SC_EIO);
    if (sc_feedback_learn(&run, &res, &err) || sc_par_timeline_mark(par, &clock, timeline, &err)) sc_longrun_die(&err);
    if (rank == 0)
        sc_log_info("learn-feedback: evaluating the policy of %s %d (pushes, stiffness, open and closed loop)",
                    in.fb.method == SC_LEARN_SEARCH ? "generation" : "iteration", res.best_iteration + 1);
    if (sc_feedback_evaluate(&run, &res.policy, &res.eval, &err) || sc_par_timeline_mark(par, &clock, timeline ? timeline + row : NULL, &err))
        sc_longrun_die(&err);

    int code = 0;
    if (rank == 0) {
        sc_policy_file_info info = {argc, argv, resolved, cli.inputs[0], cli.inputs[1], sc_par_size(par), sc_par_threads(par), timeline};
        if ((code = sc_policy_file_write(cli.output, &info, &in.loaded, &run, &res, &err))) {
            fprintf(stderr, "%s: error: %s\n", cli.tool, err.msg);
        } else {
            unlink(ckpt);
            unlink(inner);
            log_result(&cli, &in.fb, &res);
            char shares[256];
            sc_timeline_shares(2, sc_par_size(par), timeline, 0, shares, sizeof shares);
            sc_log_info("learn-feedback: the ranks' time: %s", shares);
        }
        free(timeline);
    }
    sc_feedback_result_free(&res);
    sc_openloop_cycle_free(&in.ol);
    sc_reference_free(&in.ref);
    sc_model_free(&in.m);
    sc_model_free(&in.loaded);
    sc_cfg_free(in.cfg);
    free(resolved);
    sc_par_bcast(par, &code, sizeof code, 0, &err);
    sc_longrun_exit(code);
}

/* muscle-sim: a boneless character ([T12]) moved by its muscle fibres under the QPCC controller
 * of [T12] 5-6 (or the static-contact QP, or none), with the config's external forces; writes
 * sim.h5 + sim.xdmf, which render draws with the muscles. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/cli.h"
#include "common/output.h"
#include "core/cleanup.h"
#include "core/log.h"
#include "io/config.h"
#include "settings/muscle_run.h"
#include "store/character.h"
#include "store/muscles.h"
#include "store/sim.h"

static const char *usage = "-c CONFIG.yaml -o sim.h5 character.h5\n"
                           "Simulates a boneless character (mesh-prep from body.letter or body.obj without a skeleton, with\n"
                           "`muscles:`) under the config's muscle_control (QPCC, the static-contact QP, or none) and forces;\n"
                           "writes sim.h5 and sim.xdmf (ParaView). Exit 2: bad config or character; 4: the body blew up\n"
                           "(the frames so far are kept, marked failed).";

static const char *const solver_names[] = {"none", "qp", "qpcc"};

int main(int argc, char **argv)
{
    sc_cli cli;
    sc_cli_parse(&cli, argc, argv, "muscle-sim", usage, 1, 1, 1, SC_CLI_OUTPUT, NULL);
    char xdmf[1024], h5rel[1024];
    sc_output_xdmf_paths(cli.output, xdmf, sizeof xdmf, h5rel, sizeof h5rel);
    sc_cli_add_output(&cli, xdmf);
    sc_err err = {0};
    sc_model m;
    sc_muscles mu;
    int has_muscles;
    sc_cfg *cfg = NULL;
    sc_muscle_run_config rc;
    if (sc_character_read(cli.inputs[0], &m, 0, &err) || sc_character_read_muscles(cli.inputs[0], &m, &mu, &has_muscles, &err))
        sc_cli_die(&cli, &err);
    if (m.nbones > 0) {
        sc_fail(&err, SC_EINPUT, "%s: the character has %d bones: muscle-sim simulates a boneless one (simulate runs a skeleton)", cli.inputs[0],
                m.nbones);
        sc_cli_die(&cli, &err);
    }
    if (sc_cfg_load_file(cli.config, &cfg, &err) || sc_muscle_run_read(cfg, &m, has_muscles ? &mu : NULL, &rc, &err)) sc_cli_die(&cli, &err);
    sc_cli_ignore_other_sections(cfg);
    if (sc_cfg_check_unknown(cfg, &err)) sc_cli_die(&cli, &err);
    if (rc.run.solver != SC_RUN_PASSIVE && !has_muscles) {
        sc_fail(&err, SC_EINPUT, "%s:/muscles: missing; muscle_control.solver %s needs the character's muscles (mesh-prep's `muscles:`)",
                cli.inputs[0], solver_names[rc.run.solver]);
        sc_cli_die(&cli, &err);
    }
    sc_muscle_run run;
    if (sc_muscle_run_create(&m, has_muscles ? &mu : NULL, &rc.run, &run, &err)) {
        sc_err_prefix(&err, "%s: ", cli.config);
        sc_cli_die(&cli, &err);
    }
    char *resolved = sc_cfg_resolved_text(cfg);
    const long nsteps = lround(rc.duration / rc.run.body.dt);
    sc_sim_file_info info = {argc, argv, resolved, cli.inputs[0], rc.run.body.dt, 1, 0, nsteps / rc.every + 2};
    sc_sim_writer w;
    if (sc_sim_writer_create_soft(cli.output, &info, &run, solver_names[rc.run.solver], &w, &err)) sc_cli_die(&cli, &err);
    sc_progress prog;
    sc_progress_begin(&prog, "muscle-sim", nsteps);
    sc_err step_err = {0};
    int failed = 0;
    for (long k = 0; k <= nsteps; k++) {
        if (k % rc.every == 0) {
            sc_softbody_diag d;
            sc_muscle_run_sample(&run, &d);
            if (sc_sim_writer_soft_frame(&w, &run, &d, k, &err)) sc_cli_die(&cli, &err);
        }
        if (k == nsteps) break;
        if (sc_muscle_run_step(&run, &step_err)) {
            failed = 1;
            break;
        }
        sc_progress_update(&prog, k + 1);
    }
    sc_progress_end(&prog);
    char status[SC_ERR_MSG + 16];
    snprintf(status, sizeof status, failed ? "failed: %s" : "completed", step_err.msg);
    if (sc_sim_writer_soft_commit(&w, &run, status, &err)) sc_cli_die(&cli, &err);
    sc_cleanup_add(cli.output, SC_CLEANUP_OUTPUT); /* removed again if the .xdmf cannot be written */
    if (sc_sim_writer_xdmf(&w, xdmf, h5rel, &err)) sc_cli_die(&cli, &err);
    sc_cleanup_keep_outputs();
    const sc_muscle_run_stats *st = &run.stats;
    if (failed) fprintf(stderr, "muscle-sim: error: %s (the output written so far is in %s, marked failed)\n", step_err.msg, cli.output);
    else
        sc_log_info("muscle-sim: %s: %ld steps (%.3f s) with %s: %ld plans (%ld infeasible), %.1f QPs and %.1f ms per plan; largest volume change "
                    "%.2f %%, det F in [%.3f, %.3f]",
                    cli.output, run.s->step, run.s->t, solver_names[rc.run.solver], st->plans, st->failed_plans,
                    st->plans ? (double)st->qps / st->plans : 0, st->plans ? 1e3 * st->plan_s / st->plans : 0, 100 * st->max_volume_change,
                    st->min_det, st->max_det);
    sc_sim_writer_free(&w);
    sc_muscle_run_free(&run);
    sc_muscle_run_config_free(&rc);
    free(resolved);
    if (has_muscles) sc_muscles_free(&mu);
    sc_model_free(&m);
    sc_cfg_free(cfg);
    return failed ? SC_ENUMERIC : 0;
}

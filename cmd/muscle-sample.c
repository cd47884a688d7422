/* muscle-sample: long-horizon control of a boneless character (beyond [T12]): SAMCON over the
 * targets of muscle-sim's QPCC controller (sampling/muscle_samcon.h), alone or under
 * mpiexec.mpich; writes the chosen path's simulation as sim.h5 + sim.xdmf with its /sampling. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/cli.h"
#include "common/longrun.h"
#include "common/output.h"
#include "core/cleanup.h"
#include "core/log.h"
#include "io/config.h"
#include "par/par.h"
#include "settings/muscle_sampling.h"
#include "store/character.h"
#include "store/muscles.h"
#include "store/sim.h"

static const char *usage = "-c CONFIG.yaml -o sim.h5 character.h5\n"
                           "Searches the targets of muscle-sim's controller segment by segment (config section\n"
                           "`muscle_sampling:`, the rest as muscle-sim's) for the path of least cost, then simulates it once\n"
                           "more and writes sim.h5 (with /sampling) and sim.xdmf. Run it under mpiexec.mpich -n N to spread\n"
                           "the samples; the result does not depend on N or --threads. Exit 2: bad config or character;\n"
                           "4: following the path did not reproduce the search; 7: every sample of a segment failed (sim.h5\n"
                           "holds the path found so far).";

/* Rank 0: follows the path from the start (it must reproduce the search bit for bit) and writes
   sim.h5; returns the exit code. */
static int write_result(sc_cli *cli, int argc, char **argv, const char *resolved, const sc_model *m, const sc_muscles *mu,
                        const sc_muscle_run_config *rc, const sc_msamcon_config *sc, const sc_msamcon_result *res)
{
    sc_err err = {0};
    char xdmf[1024], h5rel[1024];
    sc_output_xdmf_paths(cli->output, xdmf, sizeof xdmf, h5rel, sizeof h5rel);
    sc_muscle_run_opts o = rc->run;
    const size_t nobj = (size_t)o.control.nobjectives;
    sc_objective *objs = malloc(nobj * sizeof *objs);
    if (!objs) return sc_fail(&err, SC_EIO, "out of memory"), fprintf(stderr, "%s: error: %s\n", cli->tool, err.msg), SC_EIO;
    memcpy(objs, o.control.objectives, nobj * sizeof *objs);
    o.control.objectives = objs;
    sc_muscle_run run;
    sc_sim_writer w;
    int code = sc_muscle_run_create(m, mu, &o, &run, &err);
    if (code) goto out;
    const long nsteps = lround(res->nseg * sc->segment / o.body.dt);
    sc_sim_file_info info = {argc, argv, resolved, cli->inputs[0], o.body.dt, 1, 0, nsteps / rc->every + 2};
    if ((code = sc_sim_writer_create_soft(cli->output, &info, &run, "qpcc+sampling", &w, &err))) goto out_run;
    sc_muscle_follow f;
    sc_muscle_follow_init(&f, sc, res, &rc->run, objs, &run);
    for (long k = 0; k <= nsteps; k++) {
        if (k % rc->every == 0) {
            sc_softbody_diag d;
            sc_muscle_run_sample(&run, &d);
            if ((code = sc_sim_writer_soft_frame(&w, &run, &d, k, &err))) goto out_writer;
        }
        int done;
        if (k == nsteps) break;
        if ((code = sc_muscle_follow_step(&f, &run, &done, &err))) goto out_writer;
    }
    if ((code = sc_sim_writer_soft_sampling(&w, sc, res, &err))) goto out_writer;
    if ((code = sc_sim_writer_soft_commit(&w, &run, res->completed ? "completed" : "partial: every sample of a segment failed", &err)))
        goto out_writer;
    sc_cleanup_add(cli->output, SC_CLEANUP_OUTPUT); /* removed again if the .xdmf cannot be written */
    if ((code = sc_sim_writer_xdmf(&w, xdmf, h5rel, &err))) goto out_writer;
    sc_cleanup_keep_outputs();
    sc_log_info("muscle-sample: %s: %d of %d segments, path cost %.4g (the greedy controller's %.4g), %ld samples (%ld failed) in %.1f s on "
                "%d rank%s x %d thread%s; largest volume change %.2f %%",
                cli->output, res->nseg, res->nseg_total, res->nseg ? res->seg[res->nseg - 1].path_cost : 0, res->greedy_cost, res->samples,
                res->failures, res->wall_seconds, res->ranks, res->ranks > 1 ? "s" : "", res->threads, res->threads > 1 ? "s" : "",
                100 * run.stats.max_volume_change);
out_writer:
    sc_sim_writer_free(&w);
out_run:
    sc_muscle_run_free(&run);
out:
    free(objs);
    if (code) {
        fprintf(stderr, "%s: error: %s\n", cli->tool, err.msg);
        return code;
    }
    if (res->completed) return 0;
    fprintf(stderr, "%s: every sample of segment %d failed: %s holds the path up to %.2f s\n", cli->tool, res->nseg + 1, cli->output,
            res->nseg * sc->segment);
    return SC_EPARTIAL;
}

int main(int argc, char **argv)
{
    sc_err err = {0};
    sc_cli cli = {.tool = "muscle-sample"};
    sc_par *par;
    sc_longrun_opts opt;
    int rank = sc_longrun_start(&cli, &argc, &argv, usage, 1, 0, &opt, &par);
    char xdmf[1024], h5rel[1024];
    sc_output_xdmf_paths(cli.output, xdmf, sizeof xdmf, h5rel, sizeof h5rel);
    sc_cli_add_output(&cli, xdmf);
    sc_model m;
    sc_muscles mu;
    int has_muscles;
    sc_cfg *cfg = NULL;
    sc_muscle_run_config rc;
    sc_msamcon_config sc;
    if (sc_character_read(cli.inputs[0], &m, 0, &err) || sc_character_read_muscles(cli.inputs[0], &m, &mu, &has_muscles, &err)) sc_longrun_die(&err);
    if (m.nbones > 0 || !has_muscles) {
        sc_fail(&err, SC_EINPUT, "%s: muscle-sample needs a boneless character with muscles (this one has %d bones%s)", cli.inputs[0], m.nbones,
                has_muscles ? "" : " and no /muscles");
        sc_longrun_die(&err);
    }
    if (sc_cfg_load_file(cli.config, &cfg, &err) || sc_muscle_run_read(cfg, &m, &mu, &rc, &err) || sc_msamcon_read(cfg, &rc, &sc, &err))
        sc_longrun_die(&err);
    sc.seed = cli.seed;
    sc_cli_ignore_other_sections(cfg);
    if (sc_cfg_check_unknown(cfg, &err)) sc_longrun_die(&err);
    if (sc_msamcon_check(&sc, &rc.run, &err)) {
        sc_err_prefix(&err, "%s: ", cli.config);
        sc_longrun_die(&err);
    }
    if (sc_longrun_check_output(cli.output, &err)) sc_longrun_die(&err);
    if (rank == 0)
        sc_log_info("muscle-sample: %s on %d rank%s x %d thread%s: %d samples and %d elites per %.3g s segment, %d controls, %.3g s", cli.inputs[0],
                    sc_par_size(par), sc_par_size(par) > 1 ? "s" : "", sc_par_threads(par), sc_par_threads(par) > 1 ? "s" : "", sc.samples, sc.elites,
                    sc.segment, sc.ncontrols, sc.duration);
    sc_msamcon_result res;
    if (sc_msamcon_search(par, &m, &mu, &rc.run, &sc, NULL, &res, &err)) sc_longrun_die(&err);
    char *resolved = sc_cfg_resolved_text(cfg);
    int code = rank == 0 ? write_result(&cli, argc, argv, resolved, &m, &mu, &rc, &sc, &res) : 0;
    free(resolved);
    sc_msamcon_result_free(&res);
    sc_muscle_run_config_free(&rc);
    sc_muscles_free(&mu);
    sc_model_free(&m);
    sc_cfg_free(cfg);
    sc_par_bcast(par, &code, sizeof code, 0, &err);
    sc_par_finalize(par);
    return code;
}

/* sample-openloop: open-loop controllers by sampling (SAMCON) from inverse-dynamics targets with
 * time scaling ([L13] 5, 5.1, 5.2), alone or under mpiexec.mpich; writes openloop.h5. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/cli.h"
#include "common/longrun.h"
#include "motion/cycle.h"
#include "sampling/openloop.h"
#include "sampling/samcon.h"
#include "sampling/scenario.h"
#include "core/hash.h"
#include "core/log.h"
#include "io/character.h"
#include "io/config.h"
#include "par/par.h"

static const char *usage =
    "-c CONFIG.yaml -o openloop.h5 [--resume] [--checkpoint FILE] character.h5 reference.h5\n"
    "  --resume           continue from the checkpoint (when there is one; else start afresh)\n"
    "  --checkpoint FILE  where the search is saved after every segment (default: OUTPUT.ckpt)\n"
    "Samples PD target offsets and segment durations around the reference's inverse-dynamics targets\n"
    "(config section `sampling:`, simulation sections as simulate's) and writes the cheapest\n"
    "open-loop controller that tracks the reference. Run it under mpiexec.mpich -n N to spread the\n"
    "samples; the result does not depend on N. SIGTERM, SIGUSR1 or SIGINT: the search is saved\n"
    "to the checkpoint and the tool exits with code 6 (run it again with --resume). A clip it cannot\n"
    "complete still gives an openloop.h5 with the longest path found, and exit code 7.";

/* A bar on a terminal (the segment lines with -v), a line per segment otherwise (Slurm logs). */
static void progress_line(void *ctx, int done, int nseg, const char *line)
{
    sc_progress *bar = ctx;
    if (bar->tty) {
        if (sc_log_level() >= SC_LOG_DEBUG) fprintf(stderr, "\r%s\n", line);
        bar->total = nseg;
        sc_progress_update(bar, done);
    } else {
        sc_log_info("%s", line);
    }
}

int main(int argc, char **argv)
{
    sc_err err = {0};
    sc_cli cli = {.tool = "sample-openloop"};
    sc_par *par;
    sc_longrun_opts opt;
    int rank = sc_longrun_start(&cli, &argc, &argv, usage, &opt, &par);
    char ckpt[4200];
    int have_ckpt;
    sc_longrun_checkpoint(opt.checkpoint, cli.output, opt.resume, ckpt, sizeof ckpt, &have_ckpt);

    sc_model loaded, m;
    sc_cfg *cfg = NULL;
    sc_scenario sc;
    sc_samcon_config sampling;
    sc_control_dofs dofs;
    sc_reference ref;
    if (sc_character_read(cli.inputs[0], &loaded, 1, &err)) sc_longrun_die(&err);
    if (sc_cfg_load_file(cli.config, &cfg, &err) || sc_scenario_read(cfg, &loaded, &sc, &err)) sc_longrun_die(&err);
    sc_control_dofs_init(&loaded, &dofs);
    if (sc_samcon_read_config(cfg, &loaded, &dofs, &sampling, &err)) sc_longrun_die(&err);
    sc_cli_ignore_other_sections(cfg);
    if (sc_cfg_check_unknown(cfg, &err)) sc_longrun_die(&err);
    if (sc_reference_read(cli.inputs[1], &ref, &err) || sc_reference_check_character(&ref, cli.inputs[1], &loaded, &err)) sc_longrun_die(&err);
    if (sc_scenario_model(&loaded, &sc, &m, &err)) sc_longrun_die(&err);
    sc_model_free(&loaded);
    {
        sc_tracker probe; /* a reference made for another character is an input error, found now */
        if (sc_tracker_init(&probe, &m, &ref, &sampling.tracker, &err)) { sc_err_prefix(&err, "%s: ", cli.inputs[1]); sc_longrun_die(&err); }
        sc_tracker_free(&probe);
    }
    if (!(fabs(ref.dt - sc.sim.dt) <= 1e-12))
        sc_log_warn("%s samples the reference every %g s and the simulation steps %g s: targets are interpolated", cli.inputs[1], ref.dt, sc.sim.dt);
    if (sc_longrun_check_output(cli.output, &err)) sc_longrun_die(&err); /* found before hours of sampling */

    /* a gait cycle: the controller tracks it repeated, in segments that are fragments of one cycle */
    sc_cycle cycle;
    sc_reference repeated;
    const sc_reference *track = &ref;
    int fragments = 0;
    if (sampling.cycle) {
        if ((sampling.cycle == SC_CYCLE_AUTO ? sc_cycle_find(&ref, sampling.cycle_period[0], sampling.cycle_period[1], &cycle, &err)
                                             : sc_cycle_from_times(&ref, sampling.cycle_span[0], sampling.cycle_span[1], &cycle, &err)) ||
            sc_cycle_repeat(&ref, &cycle, sampling.cycles, &repeated, &err)) {
            sc_err_prefix(&err, "%s: ", cli.inputs[1]);
            sc_longrun_die(&err);
        }
        track = &repeated;
        double period = cycle.t1 - cycle.t0;
        fragments = (int)lround(period / sampling.segment);
        if (fragments < 1) fragments = 1;
        sampling.segment = period / fragments;
        if (rank == 0)
            sc_log_info("sample-openloop: gait cycle %s [%.4f, %.4f] s (period %.4f s): pose mismatch %.2f deg at its ends (%.2f deg on average "
                        "over the clip at this period), angular velocities %.2f rad/s RMS; %d fragments of %.4f s, repeated %d times",
                        sampling.cycle == SC_CYCLE_AUTO ? "found" : "given", cycle.t0, cycle.t1, period, cycle.pose_error * 180 / SC_PI,
                        cycle.mean_error * 180 / SC_PI, cycle.velocity_error, fragments, sampling.segment, sampling.cycles);
    }

    char *resolved = sc_cfg_resolved_text(cfg);
    uint64_t run_hash = sc_hash_bytes(SC_HASH_INIT, resolved, strlen(resolved));
    run_hash = sc_hash_i64(sc_hash_i64(sc_hash_i64(run_hash, (int64_t)sc_model_hash(&m)), (int64_t)sc_reference_hash(&ref)), (int64_t)cli.seed);
    run_hash = sc_hash_i64(run_hash, (int64_t)sc_sim_build_hash());
    sc_samcon_run run = {.m = &m, .sim_opts = &sc.sim, .ref = track, .cycle = sampling.cycle ? &cycle : NULL, .fragments = fragments, .dofs = &dofs, .cfg = &sampling, .seed = cli.seed, .run_hash = run_hash,
                         .checkpoint = ckpt, .resume = opt.resume && have_ckpt, .monitor = {.stop = sc_longrun_stop_requested, .progress = progress_line}, .par = par};
    sc_progress bar;
    sc_progress_begin(&bar, "sample-openloop", 1);
    run.monitor.ctx = &bar;
    if (rank == 0)
        sc_log_info("sample-openloop: %s on %d rank%s: %d samples and %d elites per %.3g s segment, %s targets, time scale %s [%g, %g]%s",
                    cli.inputs[1], sc_par_size(par), sc_par_size(par) > 1 ? "s" : "", sampling.samples, sampling.elites, sampling.segment,
                    sampling.base == SC_BASE_ID ? "inverse-dynamics" : "raw reference", sampling.time_scaling ? "on" : "off", sampling.scale_min,
                    sampling.scale_max, run.resume ? "; resuming from the checkpoint" : "");
    sc_samcon_result res;
    int rc = sc_samcon(&run, &res, &err);
    if (bar.tty && rank == 0) sc_progress_end(&bar);
    if (rc) sc_longrun_die(&err);

    /* rank 0 replays the path (which must reproduce the sampling bit for bit) and writes the file */
    int code = 0;
    if (rank == 0) {
        sc_sim *sim = NULL;
        sc_openloop_trace trace;
        sc_h5 *f = NULL;
        rc = sc_sim_create(&m, &sc.sim, &sim, &err) || sc_openloop_record(&run, &res, sim, sc.every, &trace, &err);
        if (!rc) {
            rc = sc_h5_create(cli.output, &f, &err) || sc_h5_provenance(f, SC_OPENLOOP_SCHEMA, argc, argv, resolved, &err) ||
                 sc_h5_attr_str(f, "/", "character", cli.inputs[0], &err) ||
                 sc_h5_attr_str(f, "/", "fem_kernel", sc_fem_kernel_name(sim->fem.kernel), &err) || sc_openloop_write_reference(f, cli.inputs[1], &ref, &err) ||
                 sc_openloop_write(f, &run, &res, &trace, &err) || sc_h5_attr_str(f, "/run", "mpi_library", sc_par_library(), &err);
            if (rc) sc_h5_abort(f);
            else rc = sc_h5_commit(f, &err);
            sc_openloop_trace_free(&trace);
        }
        sc_sim_free(sim);
        if (rc) {
            fprintf(stderr, "%s: error: %s\n", cli.tool, err.msg);
            code = err.code ? err.code : SC_EIO;
        } else {
            unlink(ckpt); /* the search is complete: its checkpoint would only block the next run */
            double last = res.nseg ? res.seg[res.nseg - 1].ref_t1 - track->time[0] : sampling.start;
            sc_log_info("sample-openloop: %s: %s %d of %d segments (reference time %.3f s), final cost %.3f, %ld samples in %.1f s "
                        "(%.1f samples/s on %d rank%s, %.1f per rank), %d backtracks",
                        cli.output, res.completed ? "completed all" : "reached", res.nseg, res.nseg_total, last,
                        res.nseg ? res.seg[res.nseg - 1].path_cost : 0, res.samples, res.wall_seconds, res.wall_seconds > 0 ? res.samples / res.wall_seconds : 0,
                        res.ranks, res.ranks > 1 ? "s" : "", res.sample_seconds > 0 ? res.samples / res.sample_seconds : 0, res.backtracks);
            if (!res.completed) {
                fprintf(stderr, "%s: the clip could not be completed: %s holds the longest path found (reference time %.3f s of %.3f s)\n",
                        cli.tool, cli.output, last, track->time[track->n - 1] - track->time[0]); /* a cycle: its repetitions' span */
                code = SC_EPARTIAL;
            }
        }
    }
    sc_samcon_result_free(&res);
    sc_reference_free(&ref);
    if (track != &ref) sc_reference_free(&repeated);
    sc_model_free(&m);
    sc_cfg_free(cfg);
    free(resolved);
    sc_par_bcast(par, &code, sizeof code, 0, &err);
    sc_par_finalize(par);
    return code;
}

/* sample-openloop: open-loop controllers by sampling (SAMCON) from inverse-dynamics targets with
 * time scaling ([L13] 5, 5.1, 5.2), alone or under mpiexec.mpich; writes openloop.h5. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/cli.h"
#include "common/longrun.h"
#include "settings/motion.h"
#include "store/reference.h"
#include "motion/cycle.h"
#include "sampling/openloop.h"
#include "sampling/run_hash.h"
#include "sampling/samcon.h"
#include "settings/sampling.h"
#include "settings/scenario.h"
#include "store/openloop.h"
#include "store/timeline.h"
#include "core/log.h"
#include "store/character.h"
#include "io/config.h"
#include "par/par.h"

static const char *usage = "-c CONFIG.yaml -o openloop.h5 [--resume] [--checkpoint FILE] character.h5 reference.h5\n"
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

/* What the run reads: the character (with the scenario's overrides), the config and the reference. */
typedef struct inputs {
    sc_model m;
    sc_cfg *cfg;
    sc_scenario sc;
    sc_samcon_config sampling;
    sc_control_dofs dofs;
    sc_reference ref;
    char clip[600];          /* which frames of which clip the reference holds, for the log */
    uint64_t character_hash; /* the character as loaded, recorded in the output */
} inputs;

/* Reads and checks every input before hours of sampling; exits on an error. */
static void read_inputs(const sc_cli *cli, inputs *in)
{
    sc_err err = {0};
    sc_model loaded;
    if (sc_character_read(cli->inputs[0], &loaded, 1, &err)) sc_longrun_die(&err);
    if (sc_cfg_load_file(cli->config, &in->cfg, &err) || sc_scenario_read(in->cfg, &loaded, &in->sc, &err) ||
        sc_scenario_check_pushes(in->cfg, &in->sc, 0, 0, "is simulate's alone", &err))
        sc_longrun_die(&err);
    sc_control_dofs_init(&loaded, &in->dofs);
    if (sc_samcon_read_config(in->cfg, &loaded, &in->dofs, &in->sampling, &err)) sc_longrun_die(&err);
    sc_cli_ignore_other_sections(in->cfg);
    if (sc_cfg_check_unknown(in->cfg, &err)) sc_longrun_die(&err);
    if (sc_reference_read(cli->inputs[1], &in->ref, &err) || sc_reference_check_character(&in->ref, cli->inputs[1], &loaded, &err))
        sc_longrun_die(&err);
    sc_reference_origin origin; /* a config whose motion section is not the reference's is refused */
    if (sc_reference_read_origin(cli->inputs[1], &origin, &err) || sc_motion_check_reference(in->cfg, cli->inputs[1], &origin, &err)) {
        sc_reference_origin_free(&origin);
        sc_longrun_die(&err);
    }
    if (origin.motion[0]) snprintf(in->clip, sizeof in->clip, "frames %lld..%lld of %s", origin.first_frame, origin.last_frame, origin.motion);
    else snprintf(in->clip, sizeof in->clip, "a clip it does not name");
    sc_reference_origin_free(&origin);
    double t_first, t_last; /* start, end and segment fit the reference (a cycle sets its own span) */
    int nseg;
    if (!in->sampling.cycle && sc_samcon_span(&in->sampling, &in->ref, cli->inputs[1], &t_first, &t_last, &nseg, &err)) sc_longrun_die(&err);
    if (!in->sampling.cycle)
        sc_log_info("sample-openloop: %s holds %s; sampling its time [%.3f, %.3f] s in %d segment%s", cli->inputs[1], in->clip, t_first, t_last, nseg,
                    nseg > 1 ? "s" : "");
    else sc_log_info("sample-openloop: %s holds %s", cli->inputs[1], in->clip);
    if (sc_scenario_model(&loaded, &in->sc, &in->m, &err)) sc_longrun_die(&err);
    in->character_hash = sc_model_hash(&loaded);
    sc_model_free(&loaded);
    sc_tracker probe; /* a reference made for another character is an input error, found now */
    if (sc_tracker_init(&probe, &in->m, &in->ref, &in->sampling.tracker, &err)) {
        sc_err_prefix(&err, "%s: ", cli->inputs[1]);
        sc_longrun_die(&err);
    }
    sc_tracker_free(&probe);
    if (!(fabs(in->ref.dt - in->sc.sim.dt) <= 1e-12))
        sc_log_warn("%s samples the reference every %g s and the simulation steps %g s: targets are interpolated", cli->inputs[1], in->ref.dt,
                    in->sc.sim.dt);
    if (sc_longrun_check_output(cli->output, &err)) sc_longrun_die(&err); /* found before hours of sampling */
}

static void log_cycle(const sc_samcon_config *sampling, const sc_cycle *cycle, int fragments)
{
    double period = cycle->t1 - cycle->t0;
    sc_log_info("sample-openloop: gait cycle %s [%.4f, %.4f] s (period %.4f s): pose mismatch %.2f deg at its ends (%.2f deg on average "
                "over the clip at this period), angular velocities %.2f rad/s RMS; %d fragments of %.4f s, repeated %d times",
                sampling->cycle == SC_CYCLE_AUTO ? "found" : "given", cycle->t0, cycle->t1, period, cycle->pose_error * 180 / SC_PI,
                cycle->mean_error * 180 / SC_PI, cycle->velocity_error, fragments, sampling->segment, sampling->cycles);
}

static void log_start(const sc_cli *cli, const sc_samcon_run *run, sc_par *par)
{
    const sc_samcon_config *s = run->cfg;
    sc_log_info("sample-openloop: %s on %d rank%s x %d thread%s: %d samples and %d elites per %.3g s segment, %s targets, time scale %s [%g, %g]%s",
                cli->inputs[1], sc_par_size(par), sc_par_size(par) > 1 ? "s" : "", sc_par_threads(par), sc_par_threads(par) > 1 ? "s" : "",
                s->samples, s->elites, s->segment, s->base == SC_BASE_ID ? "inverse-dynamics" : "raw reference", s->time_scaling ? "on" : "off",
                s->scale_min, s->scale_max, run->resume ? "; resuming from the checkpoint" : "");
}

/* Where the ranks' time went: the whole run, and with -v every attempt at a segment. */
static void log_timeline(const sc_samcon_result *res)
{
    char line[512];
    for (int i = 0; i < res->ntimeline && sc_log_level() >= SC_LOG_DEBUG; i++) {
        sc_timeline_shares(i + 1, res->ranks, res->timeline, i, line, sizeof line);
        if (res->timeline_segment[i] < 0) sc_log_debug("timeline of the start-up: %s", line);
        else sc_log_debug("timeline of segment %d: %s", res->timeline_segment[i] + 1, line);
    }
    sc_timeline_shares(res->ntimeline, res->ranks, res->timeline, 0, line, sizeof line);
    sc_log_info("sample-openloop: the ranks' time: %s", line);
}

/* Rank 0: replays the path (which must reproduce the sampling bit for bit), writes openloop.h5
   and reports; returns the exit code. An interrupted search writes its path so far (exit 6). */
static int write_result(const sc_cli *cli, int argc, char **argv, const char *resolved, const inputs *in, const sc_samcon_run *run,
                        const sc_samcon_result *res, const char *ckpt, const char *stop_msg)
{
    sc_err err = {0};
    if (res->interrupted) fprintf(stderr, "%s: error: %s\n", cli->tool, stop_msg); /* before the path's replay */
    sc_sim *sim = NULL;
    sc_openloop_trace trace;
    int rc = sc_sim_create(&in->m, &in->sc.sim, &sim, &err) || sc_openloop_record(run, res, sim, in->sc.every, &trace, &err);
    if (!rc) {
        sc_openloop_provenance p = {argc,
                                    argv,
                                    resolved,
                                    cli->inputs[0],
                                    cli->inputs[1],
                                    &in->ref,
                                    sc_fem_kernel_name(sim->fem.kernel),
                                    sc_par_library(),
                                    in->character_hash};
        rc = sc_openloop_save(cli->output, &p, run, res, &trace, &err);
        sc_openloop_trace_free(&trace);
    }
    sc_sim_free(sim);
    const sc_reference *track = run->ref;
    double last = res->nseg ? res->seg[res->nseg - 1].ref_t1 - track->time[0] : run->cfg->start;
    if (res->interrupted) { /* the checkpoint is what matters: a partial output that failed is only a warning */
        if (rc) fprintf(stderr, "%s: warning: the path so far was not written: %s\n", cli->tool, err.msg);
        else
            fprintf(stderr, "%s: %s holds the path so far (reference time %.3f s, %d of %d segments): replay or render it; --resume continues\n",
                    cli->tool, cli->output, last, res->nseg, res->nseg_total);
        return SC_EINTERRUPTED;
    }
    if (rc) {
        fprintf(stderr, "%s: error: %s\n", cli->tool, err.msg);
        return err.code ? err.code : SC_EIO;
    }
    unlink(ckpt); /* the search is complete: its checkpoint would only block the next run */
    sc_log_info("sample-openloop: %s: %s %d of %d segments (reference time %.3f s), final cost %.3f, %ld samples in %.1f s "
                "(%.1f samples/s on %d rank%s x %d thread%s, %.1f per thread), %d backtracks",
                cli->output, res->completed ? "completed all" : "reached", res->nseg, res->nseg_total, last,
                res->nseg ? res->seg[res->nseg - 1].path_cost : 0, res->samples, res->wall_seconds,
                res->wall_seconds > 0 ? res->samples / res->wall_seconds : 0, res->ranks, res->ranks > 1 ? "s" : "", res->threads,
                res->threads > 1 ? "s" : "", res->sample_seconds > 0 ? res->samples / res->sample_seconds : 0, res->backtracks);
    log_timeline(res);
    if (res->completed) return 0;
    fprintf(stderr, "%s: the clip could not be completed: %s holds the longest path found (reference time %.3f s of %.3f s)\n", cli->tool,
            cli->output, last, track->time[track->n - 1] - track->time[0]); /* a cycle: its repetitions' span */
    return SC_EPARTIAL;
}

int main(int argc, char **argv)
{
    sc_err err = {0};
    sc_cli cli = {.tool = "sample-openloop"};
    sc_par *par;
    sc_longrun_opts opt;
    int rank = sc_longrun_start(&cli, &argc, &argv, usage, 2, 1, &opt, &par);
    char ckpt[4200];
    int have_ckpt;
    sc_longrun_checkpoint(&cli, opt.checkpoint, opt.resume, ckpt, sizeof ckpt, &have_ckpt);
    inputs in;
    read_inputs(&cli, &in);

    /* a gait cycle: the controller tracks it repeated, in segments that are fragments of one cycle */
    sc_cycle cycle;
    sc_reference repeated;
    int fragments;
    if (sc_samcon_cycle_setup(&in.ref, &in.sampling, &cycle, &repeated, &fragments, &err)) {
        sc_err_prefix(&err, "%s: ", cli.inputs[1]);
        sc_longrun_die(&err);
    }
    const sc_reference *track = in.sampling.cycle ? &repeated : &in.ref;
    if (in.sampling.cycle && rank == 0) log_cycle(&in.sampling, &cycle, fragments);

    char *resolved = sc_cfg_resolved_text(in.cfg);
    uint64_t inputs_hash[] = {sc_reference_hash(&in.ref)};
    uint64_t run_hash = sc_run_hash(resolved, sc_model_hash(&in.m), inputs_hash, 1, cli.seed);
    sc_samcon_run run = {.m = &in.m,
                         .sim_opts = &in.sc.sim,
                         .ref = track,
                         .cycle = in.sampling.cycle ? &cycle : NULL,
                         .fragments = fragments,
                         .dofs = &in.dofs,
                         .cfg = &in.sampling,
                         .seed = cli.seed,
                         .run_hash = run_hash,
                         .checkpoint = ckpt,
                         .resume = opt.resume && have_ckpt,
                         .monitor = {.stop = sc_longrun_stop_requested, .progress = progress_line},
                         .par = par};
    sc_progress bar;
    sc_progress_begin(&bar, "sample-openloop", 1);
    run.monitor.ctx = &bar;
    if (rank == 0) log_start(&cli, &run, par);
    sc_samcon_result res;
    int rc = sc_samcon(&run, &res, &err);
    if (bar.tty && rank == 0) sc_progress_end(&bar);
    if (rc && rc != SC_EINTERRUPTED) sc_longrun_die(&err);

    int code = rank == 0 ? write_result(&cli, argc, argv, resolved, &in, &run, &res, ckpt, err.msg) : 0;
    sc_samcon_result_free(&res);
    sc_reference_free(&in.ref);
    if (track != &in.ref) sc_reference_free(&repeated);
    sc_model_free(&in.m);
    sc_cfg_free(in.cfg);
    free(resolved);
    sc_par_bcast(par, &code, sizeof code, 0, &err);
    sc_longrun_exit(code);
}

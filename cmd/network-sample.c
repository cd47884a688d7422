/* network-sample: robust and parameterized controllers from a motion network by sampling
 * ([BK] 7; network/explore.h), alone or under mpiexec.mpich; writes explore.h5. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/cli.h"
#include "common/longrun.h"
#include "core/hash.h"
#include "core/log.h"
#include "io/config.h"
#include "io/paths.h"
#include "par/par.h"
#include "sampling/run_hash.h"
#include "settings/controller.h"
#include "settings/network.h"
#include "settings/scenario.h"
#include "store/character.h"
#include "store/explore.h"

static const char *usage = "-c CONFIG.yaml -o explore.h5 [--resume] [--checkpoint FILE] character.h5\n"
                           "  --resume           continue from the checkpoint (when there is one; else start afresh)\n"
                           "  --checkpoint FILE  where the search is saved after every round (default: OUTPUT.ckpt)\n"
                           "Samples the control points a motion network exposes (config section `parameterize:`; its\n"
                           "`network:` names the config the trials run: its simulation, contact and controller sections),\n"
                           "widening the bounds until trials succeed, then runs rounds that interpolate the successes\n"
                           "nearest to new objectives (radial basis functions) and sample about them ([BK] 7). Writes every\n"
                           "trial and the parameterization to explore.h5. Run it under mpiexec.mpich -n N to spread the\n"
                           "trials; the result does not depend on N or --threads. SIGTERM, SIGUSR1 or SIGINT stop it at the\n"
                           "checkpoint of the last completed round (exit 6; --resume continues to the same result). Exit 2: bad\n"
                           "config, character or checkpoint; 7: round 0 found no success (explore.h5 holds its trials).";

/* The network config the trials run: its scenario and network (a controller of type network). */
static int read_network(const char *main_config, sc_cfg_node *section, const sc_model *m, char *path, size_t n, sc_cfg **ncfg, sc_scenario *sc,
                        sc_net_params *p, sc_err *err)
{
    char name[1024], w[256];
    sc_cfg_node *ctl;
    sc_controller type;
    int rc;
    if ((rc = sc_cfg_string(section, "network", NULL, name, sizeof name, err)) ||
        (rc = sc_find_input(name, main_config, 0, sc_cfg_where(sc_cfg_get(section, "network"), w, sizeof w), path, n, err)) ||
        (rc = sc_cfg_load_file(path, ncfg, err)) || (rc = sc_scenario_read(*ncfg, m, sc, err)) ||
        (rc = sc_cfg_section(sc_cfg_root(*ncfg), "controller", &ctl, err)) || (rc = sc_controller_from_config(ctl, m, path, &type, err)))
        return rc;
    const int kind = type.kind;
    sc_controller_free(&type);
    if (kind != SC_CTRL_NETWORK)
        return sc_fail(err, SC_EINPUT, "%s: controller.type is not network: network-sample varies a motion network",
                       sc_cfg_where(sc_cfg_get(ctl, "type") ? sc_cfg_get(ctl, "type") : ctl, w, sizeof w));
    if ((rc = sc_net_params_read(ctl, m, p, err))) return rc;
    sc_cfg_ignore_rest(ctl);
    sc_cli_ignore_other_sections(*ncfg);
    return sc_cfg_check_unknown(*ncfg, err);
}

static void report(const sc_explore_config *cfg, const sc_explore_result *res)
{
    const sc_explore_round *r0 = &res->round[0];
    sc_log_info("network-sample: round 0: %d of %d trials succeeded (bounds widened %d times)", r0->successes, r0->trials, res->grows);
    for (int r = 1; r < res->nrounds; r++) {
        const sc_explore_round *q = &res->round[r];
        char errs[256];
        int len = 0;
        for (int o = 0; o < cfg->nobj && len < (int)sizeof errs; o++)
            len += snprintf(errs + len, sizeof errs - (size_t)len, "%s%s %.3g (best %.3g) %s", o ? ", " : "", sc_measure_names[cfg->obj[o].measure],
                            q->interp_error[o], q->best_error[o], sc_measure_units[cfg->obj[o].measure]);
        sc_log_info("network-sample: round %d: interpolated controllers hit %d of %d targets, %d with local samples; mean error %s", r,
                    q->interp_hits, cfg->targets, q->targets_hit, errs);
    }
}

int main(int argc, char **argv)
{
    sc_err err = {0};
    sc_cli cli = {.tool = "network-sample"};
    sc_par *par;
    sc_longrun_opts opt;
    const int rank = sc_longrun_start(&cli, &argc, &argv, usage, 1, 1, &opt, &par);
    char ckpt[4200];
    int have_ckpt;
    sc_longrun_checkpoint(&cli, opt.checkpoint, opt.resume, ckpt, sizeof ckpt, &have_ckpt);
    sc_model loaded, m;
    sc_cfg *cfg = NULL, *ncfg = NULL;
    sc_cfg_node *section;
    sc_scenario sc;
    sc_net_params p;
    sc_explore_config ec;
    char network[1024];
    memset(&p, 0, sizeof p);
    if (sc_character_read(cli.inputs[0], &loaded, 0, &err)) sc_longrun_die(&err);
    if (sc_cfg_load_file(cli.config, &cfg, &err) || sc_cfg_section(sc_cfg_root(cfg), "parameterize", &section, &err) ||
        read_network(cli.config, section, &loaded, network, sizeof network, &ncfg, &sc, &p, &err) || sc_explore_read(section, &p.net, &ec, &err))
        sc_longrun_die(&err);
    sc_cli_add_input_named(&cli, network, "parameterize.network");
    ec.seed = cli.seed;
    sc_cli_ignore_other_sections(cfg);
    if (sc_cfg_check_unknown(cfg, &err) || sc_scenario_model(&loaded, &sc, &m, &err) || sc_longrun_check_output(cli.output, &err))
        sc_longrun_die(&err);
    if (rank == 0)
        sc_log_info("network-sample: %s under %s on %d rank%s x %d thread%s: %d knobs, %d objective%s, %.3g s trials, %d rounds of %d targets",
                    cli.inputs[0], network, sc_par_size(par), sc_par_size(par) > 1 ? "s" : "", sc_par_threads(par),
                    sc_par_threads(par) > 1 ? "s" : "", ec.nknobs, ec.nobj, ec.nobj > 1 ? "s" : "", ec.duration, ec.rounds, ec.targets);
    char *resolved = sc_cfg_resolved_text(cfg);
    const char *ntext = sc_cfg_text(ncfg);
    const uint64_t network_hash = sc_hash_bytes(SC_HASH_INIT, ntext, strlen(ntext));
    const sc_explore_checkpoint ck = {ckpt, opt.resume && have_ckpt, sc_run_hash(resolved, sc_model_hash(&m), &network_hash, 1, cli.seed)};
    if (rank == 0 && ck.resume) sc_log_info("network-sample: resuming from %s", ckpt);
    sc_explore_result res;
    int code = sc_explore_run(par, &m, &sc, &p, &ec, &ck, sc_longrun_stop_requested, &res, &err);
    if (code == SC_EINTERRUPTED) {
        if (rank == 0 && res.nrounds)
            fprintf(stderr, "network-sample: stopped; %s holds %d completed round%s: --resume continues\n", ckpt, res.nrounds,
                    res.nrounds == 1 ? "" : "s");
        else if (rank == 0) fprintf(stderr, "network-sample: stopped before round 0 ended: no checkpoint, nothing to resume\n");
        free(resolved);
        sc_longrun_exit(SC_EINTERRUPTED);
    }
    if (code && code != SC_EPARTIAL) sc_longrun_die(&err);
    if (rank == 0) {
        report(&ec, &res);
        sc_explore_provenance prov = {argc, argv, resolved, cli.inputs[0], network, sc_model_hash(&loaded), &p.net};
        sc_err werr = {0};
        if (sc_explore_save(cli.output, &prov, &ec, &res, code ? "partial: round 0 found no success" : "completed", &werr)) {
            fprintf(stderr, "network-sample: error: %s\n", werr.msg);
            code = werr.code;
        } else {
            sc_log_info("network-sample: %s: %d trials in %.1f s", cli.output, res.ntrials, res.wall_seconds);
            if (code) fprintf(stderr, "network-sample: %s\n", err.msg);
            unlink(ckpt); /* the search is complete: its checkpoint would only block the next run */
        }
    }
    free(resolved);
    sc_explore_result_free(&res);
    sc_net_params_free(&p);
    sc_model_free(&m);
    sc_model_free(&loaded);
    sc_cfg_free(ncfg);
    sc_cfg_free(cfg);
    sc_par_bcast(par, &code, sizeof code, 0, &err);
    sc_par_finalize(par);
    return code;
}

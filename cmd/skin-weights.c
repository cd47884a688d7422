/* skin-weights: bounded biharmonic weights (Jacobson et al. 2011) of every tet node for every
 * bone, the fixed nodes as handles ([L13] 4.2.2). Adds /skin to a copy of the character. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/cli.h"
#include "common/output.h"
#include "core/cleanup.h"
#include "core/log.h"
#include "store/character.h"
#include "io/config.h"
#include "settings/skin.h"
#include "skin/weights.h"

static const char *usage = "-c CONFIG.yaml -o character.h5 character.h5\n"
                           "Solves bounded biharmonic skinning weights on the tet mesh (the `skin:` section of the\n"
                           "config: k, tol, max_iter) and writes the character with /skin added (replaced if present).\n"
                           "The output may be the input (-o character.h5 character.h5): the result is written to\n"
                           "a temporary beside character.h5 and renamed onto it only when complete, so the input is replaced\n"
                           "atomically or, on any failure or interruption, left as it was. The output may not be\n"
                           "the config.";

static void log_result(const char *output, const sc_model *m, const sc_skin_result *r)
{
    int nb = r->nbones, maxit = 0;
    const sc_bbw_stats *st = &r->st;
    for (int b = 0; b < nb; b++) maxit = r->bone[b].iterations > maxit ? r->bone[b].iterations : maxit;
    sc_log_info("skin-weights: %s", output);
    sc_log_info("  %d nodes, %d bones, %d handle nodes, %d free; Cholesky factor %ld nonzeros", r->nnodes, nb, m->nfixed, st->nfree, st->factor_nnz);
    sc_log_info("  solve %.3f s; iterations per bone up to %d; max relative KKT residual %.2e", st->seconds, maxit, st->max_kkt_residual);
    sc_log_info("  weights in [%.3g, %.3g]; rows sum to 1 within %.1e (before normalization %.3g, normalization changed weights by up to %.3g)",
                r->wmin, r->wmax, r->rowsum_dev, st->max_rowsum_dev_before_norm, st->max_change_by_norm);
    sc_log_info("  top-%ld form: rows sum to 1 within %.1e", (long)r->k, r->topk_dev);
    for (int b = 0; b < nb; b++)
        sc_log_debug("  bone %-12s handles %3d  iterations %3d  KKT %.2e  max free weight %.3f  influences %4.0f nodes", m->bone_name[b],
                     r->handles[b], r->bone[b].iterations, r->bone[b].kkt_residual, r->max_free_weight[b], r->influence[b]);
}

int main(int argc, char **argv)
{
    sc_cli cli;
    sc_cli_parse(&cli, argc, argv, "skin-weights", usage, 1, 1, 1, SC_CLI_OUTPUT_IN_PLACE, NULL);
    char xdmf[1024], h5rel[1024];
    sc_output_xdmf_paths(cli.output, xdmf, sizeof xdmf, h5rel, sizeof h5rel);
    sc_cli_add_output(&cli, xdmf);
    sc_err err = {0};
    sc_cfg *cfg = NULL;
    sc_skin_settings set;
    if (sc_cfg_load_file(cli.config, &cfg, &err) || sc_skin_settings_read(cfg, &set, &err)) sc_cli_die(&cli, &err);
    sc_cli_ignore_other_sections(cfg);
    if (sc_cfg_check_unknown(cfg, &err)) sc_cli_die(&cli, &err);

    const char *input = cli.inputs[0];
    sc_model m;
    if (sc_character_read(input, &m, 0, &err) || sc_character_require_bones(input, &m, "skin-weights (its handles are the bones' fixed nodes)", &err))
        sc_cli_die(&cli, &err);
    sc_bbw_opts opts = sc_bbw_default_opts();
    opts.tol = set.tol;
    opts.max_iter = (int)set.max_iter;
    sc_skin_result r;
    if (sc_skin_character(input, &m, (int)set.k, &opts, &r, &err)) {
        sc_model_free(&m); /* freed before exiting: LeakSanitizer would count them (make asan) */
        sc_cfg_free(cfg);
        sc_cli_die(&cli, &err);
    }
    char *resolved = sc_cfg_resolved_text(cfg);
    char cmdline[4096];
    size_t cl = 0;
    for (int i = 0; i < argc && cl < sizeof cmdline - 1; i++)
        cl += (size_t)snprintf(cmdline + cl, sizeof cmdline - cl, "%s%s", i ? " " : "", argv[i]);
    struct stat st_in, st_out;
    int in_place = stat(input, &st_in) == 0 && stat(cli.output, &st_out) == 0 && st_in.st_dev == st_out.st_dev && st_in.st_ino == st_out.st_ino;
    if (sc_character_write_skinned(input, cli.output, &m, &r, cmdline, resolved, &err)) sc_cli_die(&cli, &err);
    if (!in_place) sc_cleanup_add(cli.output, SC_CLEANUP_OUTPUT); /* never the replaced input */
    if (sc_character_write_xdmf(xdmf, h5rel, &m, 1, &err)) sc_cli_die(&cli, &err);
    sc_cleanup_keep_outputs();
    log_result(cli.output, &m, &r);
    free(resolved);
    sc_skin_result_free(&r);
    sc_model_free(&m);
    sc_cfg_free(cfg);
    return 0;
}

/* skin-weights: bounded biharmonic weights (Jacobson et al. 2011) of every tet node for every
 * bone, the fixed nodes as handles ([L13] 4.2.2). Adds /skin to a copy of the character. */
#include <math.h>
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
#include "skin/bbw.h"

static const char *usage =
    "-c CONFIG.yaml -o character.h5 character.h5\n"
    "Solves bounded biharmonic skinning weights on the tet mesh (the `skin:` section of the\n"
    "config: k, tol, max_iter) and writes the character with /skin added (replaced if present).\n"
    "The output may be the input (-o character.h5 character.h5): the result is written to\n"
    "character.h5.tmp and renamed onto it only when complete, so the input is replaced\n"
    "atomically or, on any failure or interruption, left as it was. The output may not be\n"
    "the config.";

#define D1(n) (size_t[]){(size_t)(n)}
#define D2(n, k) (size_t[]){(size_t)(n), (size_t)(k)}

int main(int argc, char **argv)
{
    sc_cli cli;
    sc_cli_parse(&cli, argc, argv, "skin-weights", usage, 1, 1, 1, SC_CLI_OUTPUT_IN_PLACE, NULL);
    char xdmf[1024], h5rel[1024];
    sc_output_xdmf_paths(cli.output, xdmf, sizeof xdmf, h5rel, sizeof h5rel);
    sc_cli_add_output(&cli, xdmf);
    sc_err err = {0};
    sc_cfg *cfg = NULL;
    sc_cfg_node *sec;
    long k = 4, max_iter = 100;
    double tol = 1e-8;
    if (sc_cfg_load_file(cli.config, &cfg, &err) || sc_cfg_section(sc_cfg_root(cfg), "skin", &sec, &err) ||
        sc_cfg_int(sec, "k", 4, 1, 64, &k, &err) || sc_cfg_double_range(sec, "tol", 1e-8, 1e-14, 1e-3, &tol, &err) ||
        sc_cfg_int(sec, "max_iter", 100, 1, 100000, &max_iter, &err))
        sc_cli_die(&cli, &err);
    sc_cli_ignore_other_sections(cfg);
    if (sc_cfg_check_unknown(cfg, &err)) sc_cli_die(&cli, &err);

    const char *input = cli.inputs[0];
    sc_model m;
    if (sc_character_read(input, &m, 0, &err)) sc_cli_die(&cli, &err);
    if (m.nfixed == 0) {
        sc_fail(&err, SC_EINPUT, "%s:/fixed/node: the character has no fixed nodes, so no bone has a handle", input);
        sc_cli_die(&cli, &err);
    }
    int nn = m.nnodes, nb = m.nbones;
    for (int b = 0; b < nb; b++) {
        int count = 0;
        for (int i = 0; i < m.nfixed; i++) count += m.fixed_bone[i] == b;
        if (!count) {
            sc_fail(&err, SC_EINPUT, "%s:/fixed/bone: bone '%s' (%d) has no fixed nodes, so its weight has no handle", input, m.bone_name[b], b);
            sc_cli_die(&cli, &err);
        }
    }
    int *handle = malloc((size_t)nn * sizeof *handle);
    double *w = malloc((size_t)nn * nb * sizeof *w);
    sc_bbw_bone_stats *bs = calloc((size_t)nb, sizeof *bs);
    if (!handle || !w || !bs) { sc_fail(&err, SC_EIO, "out of memory"); sc_cli_die(&cli, &err); }
    for (int i = 0; i < nn; i++) handle[i] = -1;
    for (int i = 0; i < m.nfixed; i++) handle[m.fixed_node[i]] = m.fixed_bone[i];
    sc_bbw_opts opts = sc_bbw_default_opts();
    opts.tol = tol;
    opts.max_iter = (int)max_iter;
    sc_bbw_stats st;
    if (sc_bbw_solve(nn, m.rest_pos, m.ntets, m.tets, nb, handle, &opts, w, bs, &st, &err)) {
        sc_err_prefix(&err, "%s: ", input);
        free(handle); /* freed before exiting: LeakSanitizer would count them (make asan) */
        free(w);
        free(bs);
        sc_model_free(&m);
        sc_cfg_free(cfg);
        sc_cli_die(&cli, &err);
    }
    /* an already skinned input brings its own top-k arrays: replaced, not leaked */
    free(m.skin_bone);
    free(m.skin_w);
    m.skin_k = (int)k;
    m.skin_bone = malloc((size_t)nn * k * sizeof *m.skin_bone);
    m.skin_w = malloc((size_t)nn * k * sizeof *m.skin_w);
    if (!m.skin_bone || !m.skin_w) { sc_fail(&err, SC_EIO, "out of memory"); sc_cli_die(&cli, &err); }
    sc_bbw_topk(nn, nb, w, (int)k, m.skin_bone, m.skin_w);

    /* per-bone statistics */
    double *iters = malloc((size_t)nb * sizeof *iters), *kkt = malloc((size_t)nb * sizeof *kkt),
           *wmax_free = malloc((size_t)nb * sizeof *wmax_free), *influence = malloc((size_t)nb * sizeof *influence);
    int *handles = calloc((size_t)nb, sizeof *handles);
    double wmin = 1e300, wmax = -1e300, rowdev = 0, topk_dev = 0;
    for (int b = 0; b < nb; b++) {
        iters[b] = bs[b].iterations;
        kkt[b] = bs[b].kkt_residual;
        wmax_free[b] = 0;
        influence[b] = 0;
    }
    for (int i = 0; i < nn; i++) {
        double s = 0;
        for (int b = 0; b < nb; b++) {
            double x = w[(size_t)i * nb + b];
            s += x;
            wmin = fmin(wmin, x);
            wmax = fmax(wmax, x);
            if (handle[i] < 0) wmax_free[b] = fmax(wmax_free[b], x);
            influence[b] += x > 1e-3;
        }
        rowdev = fmax(rowdev, fabs(s - 1));
        if (handle[i] >= 0) handles[handle[i]]++;
        double ks = 0;
        for (int j = 0; j < k; j++) ks += m.skin_w[(size_t)i * k + j];
        topk_dev = fmax(topk_dev, fabs(ks - 1));
    }

    char *resolved = sc_cfg_resolved_text(cfg);
    char cmdline[4096];
    size_t cl = 0;
    for (int i = 0; i < argc && cl < sizeof cmdline - 1; i++) cl += (size_t)snprintf(cmdline + cl, sizeof cmdline - cl, "%s%s", i ? " " : "", argv[i]);
    struct stat st_in, st_out;
    int in_place = stat(input, &st_in) == 0 && stat(cli.output, &st_out) == 0 && st_in.st_dev == st_out.st_dev &&
                   st_in.st_ino == st_out.st_ino;
    sc_h5 *f;
    if (sc_h5_create_from(input, cli.output, &f, &err)) sc_cli_die(&cli, &err);
    int rc = sc_h5_delete(f, "/skin", &err);
    m.skin_k = 0; /* /skin is written below, with its statistics */
#define TRY(x) if (!rc) rc = (x)
    TRY(sc_h5_group(f, "/skin", "bounded biharmonic skinning weights ([L13] eq. 13; Jacobson et al. 2011), fixed nodes as handles", &err));
    TRY(sc_h5_write_f64(f, "/skin/weights", 2, D2(nn, nb), w, "1", "dense weights w_ij, node i (row) x bone j; rows sum to 1", &err));
    TRY(sc_character_write_weight_views(f, &m, &err)); /* what character.xdmf shows */
    TRY(sc_h5_write_i32(f, "/skin/topk_bone", 2, D2(nn, k), m.skin_bone, "k most influential bones per node, -1 unused", &err));
    TRY(sc_h5_write_f64(f, "/skin/topk_weight", 2, D2(nn, k), m.skin_w, "1", "their weights, renormalized to sum 1 (what simulate uses)", &err));
    TRY(sc_h5_write_f64(f, "/skin/bone_iterations", 1, D1(nb), iters, "1", "active-set iterations per bone", &err));
    TRY(sc_h5_write_f64(f, "/skin/bone_kkt_residual", 1, D1(nb), kkt, "1", "relative KKT residual of each bone's QP (see lib/skin/bbw.h)", &err));
    TRY(sc_h5_write_f64(f, "/skin/bone_max_free_weight", 1, D1(nb), wmax_free, "1", "largest weight of each bone on a non-handle node", &err));
    TRY(sc_h5_write_f64(f, "/skin/bone_influence_nodes", 1, D1(nb), influence, "1", "nodes where the bone's weight exceeds 1e-3", &err));
    TRY(sc_h5_write_i32(f, "/skin/bone_handles", 1, D1(nb), handles, "handle (fixed) nodes per bone", &err));
    TRY(sc_h5_attr_str(f, "/skin", "partition_of_unity", "per-bone bound-constrained QPs, then each row normalized", &err));
    TRY(sc_h5_attr_f64(f, "/skin", "max_rowsum_deviation_before_normalization", st.max_rowsum_dev_before_norm, &err));
    TRY(sc_h5_attr_f64(f, "/skin", "max_change_by_normalization", st.max_change_by_norm, &err));
    TRY(sc_h5_attr_f64(f, "/skin", "max_kkt_residual", st.max_kkt_residual, &err));
    TRY(sc_h5_attr_f64(f, "/skin", "seconds", st.seconds, &err));
    TRY(sc_h5_attr_i64(f, "/skin", "k", k, &err));
    TRY(sc_h5_attr_i64(f, "/skin", "factor_nnz", st.factor_nnz, &err));
    TRY(sc_h5_attr_str(f, "/skin", "created_by", cmdline, &err));
    TRY(sc_h5_attr_str(f, "/skin", "config", resolved ? resolved : "", &err));
    TRY(sc_h5_attr_str(f, "/skin", "softcon_version", SC_VERSION " (" SC_GIT_REV ")", &err));
#undef TRY
    if (rc) { sc_h5_abort(f); sc_cli_die(&cli, &err); }
    if (sc_h5_commit(f, &err)) sc_cli_die(&cli, &err);
    if (!in_place) sc_cleanup_add(cli.output, SC_CLEANUP_OUTPUT); /* never the replaced input */
    if (sc_character_write_xdmf(xdmf, h5rel, &m, 1, &err)) sc_cli_die(&cli, &err);
    sc_cleanup_keep_outputs();

    int maxit = 0;
    for (int b = 0; b < nb; b++) maxit = bs[b].iterations > maxit ? bs[b].iterations : maxit;
    sc_log_info("skin-weights: %s", cli.output);
    sc_log_info("  %d nodes, %d bones, %d handle nodes, %d free; Cholesky factor %ld nonzeros", nn, nb, m.nfixed, st.nfree, st.factor_nnz);
    sc_log_info("  solve %.3f s; iterations per bone up to %d; max relative KKT residual %.2e", st.seconds, maxit, st.max_kkt_residual);
    sc_log_info("  weights in [%.3g, %.3g]; rows sum to 1 within %.1e (before normalization %.3g, normalization changed weights by up to %.3g)",
                wmin, wmax, rowdev, st.max_rowsum_dev_before_norm, st.max_change_by_norm);
    sc_log_info("  top-%ld form: rows sum to 1 within %.1e", k, topk_dev);
    for (int b = 0; b < nb; b++)
        sc_log_debug("  bone %-12s handles %3d  iterations %3d  KKT %.2e  max free weight %.3f  influences %4.0f nodes", m.bone_name[b],
                     handles[b], bs[b].iterations, bs[b].kkt_residual, wmax_free[b], influence[b]);
    free(iters); free(kkt); free(wmax_free); free(influence); free(handles);
    free(resolved); free(handle); free(w); free(bs);
    sc_model_free(&m);
    sc_cfg_free(cfg);
    return 0;
}

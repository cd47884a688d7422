/* skin-weights on the built-in character: exact BBW (bounds, partition of unity, handles,
 * KKT), the top-k form simulate uses, and bad characters rejected with the input untouched. */
#include <stdlib.h>
#include <string.h>
#include "store/character.h"
#include "io/h5.h"
#include "test.h"

static char out[8192];

static const char *make_character(const char *name)
{
    const char *h5 = sc_test_tmp(name);
    if (sc_test_file_exists(h5)) return h5;
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s", sc_test_tool("mesh-prep"), sc_test_repo("configs/michelin.yaml"), h5);
    return rc == 0 ? h5 : NULL;
}

TEST(skinweights_michelin_exact_bbw)
{
    const char *in = make_character("sw_character.h5");
    ENSURE_MSG(in, "mesh-prep failed: %s", out);
    const char *outp = sc_test_tmp("sw_skinned.h5");
    int rc = sc_test_sh(out, sizeof out, "md5sum < %s > %s.md5 && %s -c %s -o %s %s && md5sum < %s | cmp - %s.md5", in, in,
                        sc_test_tool("skin-weights"), sc_test_repo("configs/michelin.yaml"), outp, in, in, in);
    ENSURE_MSG(rc == 0, "skin-weights exit %d (or input changed): %s", rc, out);
    sc_h5 *f;
    sc_err err;
    ENSURE_OK(sc_h5_open(outp, &f, &err), &err);
    size_t dims[2] = {0, 0}, nb = 0, kd = 0;
    double *w = NULL, *kkt = NULL, secs = 0, change = 0;
    ENSURE_OK(sc_h5_read_f64(f, "/skin/weights", 2, dims, &w, &err), &err);
    ENSURE_OK(sc_h5_read_f64(f, "/skin/bone_kkt_residual", 1, &nb, &kkt, &err), &err);
    ENSURE_OK(sc_h5_read_attr_f64(f, "/skin", "seconds", &secs, &err), &err);
    ENSURE_OK(sc_h5_read_attr_f64(f, "/skin", "max_change_by_normalization", &change, &err), &err);
    ENSURE(sc_h5_exists(f, "/report") && sc_h5_exists(f, "/tetmesh/rest_pos")); /* the input's content is kept */
    sc_h5_close(f);
    (void)kd;
    sc_model m;
    ENSURE_OK(sc_character_read(outp, &m, 1, &err), &err);
    size_t nn = dims[0];
    ENSURE(nn == (size_t)m.nnodes && dims[1] == (size_t)m.nbones && nb == (size_t)m.nbones);
    double lo = 1e300, hi = -1e300, rowdev = 0, handle_err = 0, maxkkt = 0, topk_rec = 0;
    for (size_t i = 0; i < nn; i++) {
        double s = 0;
        for (size_t b = 0; b < nb; b++) {
            double x = w[i * nb + b];
            lo = fmin(lo, x);
            hi = fmax(hi, x);
            s += x;
            if (m.node_bone[i] >= 0) handle_err = fmax(handle_err, fabs(x - ((int)b == m.node_bone[i])));
        }
        rowdev = fmax(rowdev, fabs(s - 1));
        double ks = 0;
        for (int j = 0; j < m.skin_k; j++) ks += m.skin_w[i * (size_t)m.skin_k + j];
        topk_rec = fmax(topk_rec, fabs(ks - 1));
    }
    for (size_t b = 0; b < nb; b++) maxkkt = fmax(maxkkt, kkt[b]);
    sc_test_report("%zu nodes x %zu bones: weights in [%.3g, %.3g], row sums within %.2g, handles exact to %.2g, max KKT %.2e, "
                   "normalization changed weights by up to %.3f, solve %.3f s (timed by make bench, not asserted here)",
                   nn, nb, lo, hi, rowdev, handle_err, maxkkt, change, secs);
    ENSURE(lo >= -1e-9 && hi <= 1 + 1e-9);
    ENSURE(rowdev <= 1e-9);
    ENSURE(handle_err == 0);
    ENSURE(maxkkt < 1e-6);
    ENSURE(m.skin_k == 4 && topk_rec < 1e-12);
    free(w);
    free(kkt);
    sc_model_free(&m);
    /* the XDMF colours the mesh by each bone's weight */
    rc = sc_test_sh(out, sizeof out, "grep -c 'weight_' %s", sc_test_tmp("sw_skinned.xdmf"));
    ENSURE_MSG(rc == 0 && atoi(out) == (int)nb, "xdmf weight attributes: %s", out);
}

/* writes a modified copy of the character, runs skin-weights on it, expects exit 2 + message */
static void expect_rejected(const char *name, sc_model *m, const char *needle)
{
    char file[64], outname[64];
    snprintf(file, sizeof file, "%s.h5", name);
    snprintf(outname, sizeof outname, "%s_out.h5", name);
    const char *in = sc_test_tmp(file), *outp = sc_test_tmp(outname);
    sc_err err;
    sc_h5 *f;
    ENSURE_OK(sc_h5_create(in, &f, &err), &err);
    ENSURE_OK(sc_h5_provenance(f, SC_CHARACTER_SCHEMA, 0, NULL, NULL, &err), &err);
    ENSURE_OK(sc_character_write(f, m, &err), &err);
    ENSURE_OK(sc_h5_commit(f, &err), &err);
    int rc =
        sc_test_sh(out, sizeof out, "md5sum < %s > %s.md5 && %s -c %s -o %s %s; r=$?; md5sum < %s | cmp -s - %s.md5 || echo INPUT-CHANGED; exit $r",
                   in, in, sc_test_tool("skin-weights"), sc_test_repo("configs/michelin.yaml"), outp, in, in, in);
    sc_test_report("%s: exit %d: %s", name, rc, out);
    ENSURE_MSG(rc == 2 && strstr(out, needle) && !strstr(out, "INPUT-CHANGED"), "%s: exit %d: %s", name, rc, out);
    ENSURE(!sc_test_file_exists(outp) && !sc_test_temporary_left(outp));
}

TEST(skinweights_bad_characters)
{
    const char *in = make_character("sw_character.h5");
    ENSURE_MSG(in, "mesh-prep failed: %s", out);
    sc_err err;
    sc_model m;
    ENSURE_OK(sc_character_read(in, &m, 0, &err), &err);
    /* no fixed nodes at all */
    int nf = m.nfixed;
    m.nfixed = 0;
    for (int i = 0; i < m.nnodes; i++) m.node_bone[i] = -1;
    expect_rejected("sw_nofixed", &m, "no fixed nodes");
    m.nfixed = nf;
    /* one bone (l_forearm) loses its fixed nodes to its parent */
    int lost = 5, *saved = malloc((size_t)nf * sizeof *saved);
    memcpy(saved, m.fixed_bone, (size_t)nf * sizeof *saved);
    for (int i = 0; i < nf; i++)
        if (m.fixed_bone[i] == lost) m.fixed_bone[i] = m.parent[lost];
    expect_rejected("sw_bone_without_handles", &m, "bone 'l_forearm' (5) has no fixed nodes");
    memcpy(m.fixed_bone, saved, (size_t)nf * sizeof *saved);
    free(saved);
    /* a disconnected piece: one extra tet far away */
    int nn = m.nnodes, ne = m.ntets;
    m.rest_pos = realloc(m.rest_pos, (size_t)(nn + 4) * 3 * sizeof(double));
    m.node_mass = realloc(m.node_mass, (size_t)(nn + 4) * sizeof(double));
    m.node_bone = realloc(m.node_bone, (size_t)(nn + 4) * sizeof(int));
    m.tets = realloc(m.tets, (size_t)(ne + 1) * 4 * sizeof(int));
    m.tet_volume = realloc(m.tet_volume, (size_t)(ne + 1) * sizeof(double));
    m.bm_inv = realloc(m.bm_inv, (size_t)(ne + 1) * 9 * sizeof(double));
    double corner[4][3] = {{5, 0, 0}, {5.1, 0, 0}, {5, 0.1, 0}, {5, 0, 0.1}};
    for (int i = 0; i < 4; i++) {
        memcpy(m.rest_pos + 3 * (nn + i), corner[i], sizeof corner[i]);
        m.node_mass[nn + i] = 0.1;
        m.node_bone[nn + i] = -1;
        m.tets[4 * ne + i] = nn + i;
    }
    m.tet_volume[ne] = 0.1 * 0.1 * 0.1 / 6;
    double bm[9] = {10, 0, 0, 0, 10, 0, 0, 0, 10};
    memcpy(m.bm_inv + 9 * ne, bm, sizeof bm);
    m.nnodes += 4;
    m.ntets += 1;
    expect_rejected("sw_disconnected", &m, "disconnected");
    sc_model_free(&m);
}

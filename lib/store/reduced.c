/* character.h5's /reduced (reduced.h). */
#include "store/reduced.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define D1(n) \
    (size_t[]) { (size_t)(n) }
#define D2(n, k) \
    (size_t[]) { (size_t)(n), (size_t)(k) }

int sc_character_write_reduced(sc_h5 *f, const sc_reduced_basis *b, sc_err *err)
{
    const int K = b->nmodes;
    int rc;
    if ((rc = sc_h5_group(f, "/reduced",
                          "reduced deformable body ([P17] 3.3, eq. 2, Fig. 21): a rigid frame at the centre of mass plus the K lowest non-rigid "
                          "vibration modes of the tet mesh, x_i = c + R (X_i - rest_com + basis_i q)",
                          err)) ||
        (rc = sc_h5_attr_str(f, "/reduced", "schema", SC_REDUCED_SCHEMA, err)) || (rc = sc_h5_attr_i64(f, "/reduced", "modes", K, err)) ||
        (rc = sc_h5_attr_i64(f, "/reduced", "nodes", b->nnodes, err)) ||
        (rc = sc_h5_attr_str(f, "/reduced", "model",
                             "linear modes with a floating rigid frame (mean axes): K phi = lambda M phi, K the rest stiffness of the corotated "
                             "FEM, M the lumped node masses, phi^T M phi = I, the 6 rigid modes removed",
                             err)) ||
        (rc = sc_h5_attr_str(f, "/reduced", "eigensolver",
                             "shift-invert block Krylov (blocks of 6, full M-reorthogonalisation) on an envelope Cholesky factor of K + sigma M, "
                             "Rayleigh-Ritz with K",
                             err)) ||
        (rc = sc_h5_attr_f64(f, "/reduced", "residual_tolerance", SC_REDUCED_RESIDUAL_TOL, err)) ||
        (rc = sc_h5_attr_f64(f, "/reduced", "mass", b->mass, err)) || (rc = sc_h5_attr_str(f, "/reduced", "mass_units", "kg", err)) ||
        (rc = sc_h5_write_f64(f, "/reduced/eigenvalues", 1, D1(K), b->eigenvalue, "1/s^2", "lambda = omega^2 of each mode, ascending", err)) ||
        (rc = sc_h5_write_f64(f, "/reduced/frequencies", 1, D1(K), b->frequency, "Hz", "sqrt(lambda) / 2 pi", err)) ||
        (rc = sc_h5_write_f64(f, "/reduced/residuals", 1, D1(K), b->residual, "1", "|K phi - lambda M phi| / |K phi| of each mode", err)) ||
        (rc = sc_h5_write_f64(f, "/reduced/basis", 2, D2(3 * (size_t)b->nnodes, K), b->phi, "1/sqrt(kg)",
                              "mode shapes: row 3 i + c is node i's axis c, column k mode k; M-orthonormal", err)) ||
        (rc = sc_h5_write_f64(f, "/reduced/rest_com", 1, D1(3), b->com, "m", "rest centre of mass: the frame's origin", err)) ||
        (rc = sc_h5_write_f64(f, "/reduced/rest_inertia", 2, D2(3, 3), b->inertia, "kg m^2", "rest inertia about rest_com, world axes", err)))
        return rc;
    return SC_OK;
}

/* a 1-D or 2-D dataset of exactly the expected shape (the layer takes 0 as "any": checked here) */
static int read_exact(sc_h5 *f, const char *path, int rank, size_t d0, size_t d1, double **out, sc_err *err)
{
    size_t dims[2] = {d0, d1};
    int rc = sc_h5_read_f64(f, path, rank, dims, out, err);
    if (rc) return rc;
    if (dims[0] != d0 || (rank == 2 && dims[1] != d1))
        return sc_fail(err, SC_EINPUT, "%s:%s: shape [%zu%s%zu], expected [%zu%s%zu]", sc_h5_filename(f), path, dims[0], rank == 2 ? ", " : "",
                       rank == 2 ? dims[1] : 0, d0, rank == 2 ? ", " : "", rank == 2 ? d1 : 0);
    return SC_OK;
}

int sc_character_read_reduced_h5(sc_h5 *f, const sc_model *m, sc_reduced_basis *b, int *present, sc_err *err)
{
    memset(b, 0, sizeof *b);
    *present = sc_h5_exists(f, "/reduced");
    if (!*present) return SC_OK;
    const char *fn = sc_h5_filename(f);
    char *schema = NULL;
    long long K = 0, nodes = 0;
    double mass = 0, *ev = NULL, *fr = NULL, *res = NULL, *phi = NULL, *com = NULL, *J = NULL;
    int rc = sc_h5_read_attr_str(f, "/reduced", "schema", &schema, err);
    if (!rc && strcmp(schema, SC_REDUCED_SCHEMA))
        rc = sc_fail(err, SC_EINPUT, "%s:/reduced: schema '%.100s', this build reads %s", fn, schema, SC_REDUCED_SCHEMA);
    free(schema);
    if (rc || (rc = sc_h5_read_attr_i64(f, "/reduced", "modes", &K, err)) || (rc = sc_h5_read_attr_i64(f, "/reduced", "nodes", &nodes, err)) ||
        (rc = sc_h5_read_attr_f64(f, "/reduced", "mass", &mass, err)))
        return rc;
    if (nodes != m->nnodes) return sc_fail(err, SC_EINPUT, "%s:/reduced: made for %lld nodes, the tet mesh has %d", fn, nodes, m->nnodes);
    if (K < 1 || K > sc_reduced_max_modes(m))
        return sc_fail(err, SC_EINPUT, "%s:/reduced: %lld modes, must be 1..%d for this mesh", fn, K, sc_reduced_max_modes(m));
    const size_t n3 = 3 * (size_t)m->nnodes;
    if ((rc = read_exact(f, "/reduced/eigenvalues", 1, (size_t)K, 0, &ev, err)) ||
        (rc = sc_h5_check_range(f, "/reduced/eigenvalues", ev, (size_t)K, 1, 0, INFINITY, 1, err)) ||
        (rc = read_exact(f, "/reduced/frequencies", 1, (size_t)K, 0, &fr, err)) ||
        (rc = sc_h5_check_range(f, "/reduced/frequencies", fr, (size_t)K, 1, 0, INFINITY, 1, err)) ||
        (rc = read_exact(f, "/reduced/residuals", 1, (size_t)K, 0, &res, err)) ||
        (rc = sc_h5_check_range(f, "/reduced/residuals", res, (size_t)K, 1, 0, INFINITY, 0, err)) ||
        (rc = read_exact(f, "/reduced/basis", 2, n3, (size_t)K, &phi, err)) ||
        (rc = sc_h5_check_finite(f, "/reduced/basis", phi, n3, (size_t)K, err)) || (rc = read_exact(f, "/reduced/rest_com", 1, 3, 0, &com, err)) ||
        (rc = sc_h5_check_range(f, "/reduced/rest_com", com, 3, 1, -1e3, 1e3, 0, err)) ||
        (rc = read_exact(f, "/reduced/rest_inertia", 2, 3, 3, &J, err)) || (rc = sc_h5_check_finite(f, "/reduced/rest_inertia", J, 3, 3, err)))
        goto done;
    for (long long k = 0; k < K; k++) {
        if (k && ev[k] < ev[k - 1]) {
            rc = sc_fail(err, SC_EINPUT, "%s:/reduced/eigenvalues[%lld]: %g is below the one before (%g): must ascend", fn, k, ev[k], ev[k - 1]);
            goto done;
        }
        if (!(fabs(fr[k] - sqrt(ev[k]) / (2 * M_PI)) <= 1e-9 * fr[k])) {
            rc = sc_fail(err, SC_EINPUT, "%s:/reduced/frequencies[%lld]: %g Hz, the eigenvalue %g gives %g Hz", fn, k, fr[k], ev[k],
                         sqrt(ev[k]) / (2 * M_PI));
            goto done;
        }
    }
    double total = 0;
    for (int i = 0; i < m->nnodes; i++) total += m->node_mass[i];
    if (!(fabs(mass - total) <= 1e-9 * total)) {
        rc = sc_fail(err, SC_EINPUT, "%s:/reduced: mass %g kg, the tet mesh's nodes weigh %g kg", fn, mass, total);
        goto done;
    }
    b->nnodes = m->nnodes;
    b->nmodes = (int)K;
    b->eigenvalue = ev;
    b->frequency = fr;
    b->residual = res;
    b->phi = phi;
    b->mass = mass;
    memcpy(b->com, com, 3 * sizeof(double));
    memcpy(b->inertia, J, 9 * sizeof(double));
    ev = fr = res = phi = NULL;
done:
    free(ev);
    free(fr);
    free(res);
    free(phi);
    free(com);
    free(J);
    return rc;
}

typedef struct read_ctx {
    const sc_model *m;
    sc_reduced_basis *b;
    int *present;
} read_ctx;

static int read_h5(sc_h5 *f, void *arg, sc_err *err)
{
    read_ctx *c = arg;
    return sc_character_read_reduced_h5(f, c->m, c->b, c->present, err);
}

int sc_character_read_reduced(const char *path, const sc_model *m, sc_reduced_basis *b, int *present, sc_err *err)
{
    memset(b, 0, sizeof *b);
    read_ctx c = {m, b, present};
    return sc_h5_read_file(path, read_h5, &c, err);
}

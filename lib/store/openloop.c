#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/hash.h"
#include "io/h5.h"
#include "store/openloop.h"

void sc_openloop_cycle_free(sc_openloop_cycle *o)
{
    free(o->steps);
    free(o->ref_t0);
    free(o->ref_t1);
    free(o->offsets);
    free(o->start_quat);
    free(o->start_w);
    memset(o, 0, sizeof *o);
}

typedef struct openloop_arg {
    const sc_model *m;
    const sc_control_dofs *dofs;
    sc_openloop_cycle *o;
} openloop_arg;

static int openloop_cycle_reader(sc_h5 *f, void *arg, sc_err *err)
{
    const openloop_arg *a = arg;
    const sc_model *m = a->m;
    const sc_control_dofs *dofs = a->dofs;
    sc_openloop_cycle *o = a->o;
    const char *path = sc_h5_filename(f);
    memset(o, 0, sizeof *o);
    int rc = SC_OK;
    char *schema = NULL, *ref = NULL, *refabs = NULL, *hash = NULL, *base = NULL, **names = NULL, **dnames = NULL;
    size_t nnames = 0, ndn = 0, ns = 0, od[2] = {0, 0}, d3 = 3, dq[2] = {0, 4}, dw[2] = {0, 3};
    int *steps = NULL;
    double *rp = NULL, *rv = NULL;
    long long cyc = 0, frag = 0;
#define TRY(x) do { if ((rc = (x))) goto done; } while (0)
    TRY(sc_h5_read_attr_str(f, "/", "schema", &schema, err));
    if (strcmp(schema, "softcon.openloop/1")) { rc = sc_fail(err, SC_EINPUT, "%s: schema '%s', expected an openloop.h5 (softcon.openloop/1)", path, schema); goto done; }
    if (!sc_h5_exists(f, "/cycle")) {
        rc = sc_fail(err, SC_EINPUT, "%s:/cycle: missing: the controller was not made for a gait cycle (run sample-openloop with sampling.cycle: auto)", path);
        goto done;
    }
    TRY(sc_h5_read_strings(f, "/bones/names", &nnames, &names, err));
    if (nnames != (size_t)m->nbones) { rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: %zu bones, the character has %d: a controller for another character", path, nnames, m->nbones); goto done; }
    for (size_t b = 0; b < nnames; b++)
        if (strcmp(names[b], m->bone_name[b])) { rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: bone %zu is '%s', the character's is '%s': a controller for another character", path, b, names[b], m->bone_name[b]); goto done; }
    TRY(sc_h5_read_strings(f, "/segments/dof_names", &ndn, &dnames, err));
    if (ndn != (size_t)dofs->n) { rc = sc_fail(err, SC_EINPUT, "%s:/segments/dof_names: %zu DoFs, the character has %d", path, ndn, dofs->n); goto done; }
    for (size_t d = 0; d < ndn; d++)
        if (strcmp(dnames[d], dofs->name[d])) { rc = sc_fail(err, SC_EINPUT, "%s:/segments/dof_names: DoF %zu is '%s', the character's is '%s'", path, d, dnames[d], dofs->name[d]); goto done; }
    TRY(sc_h5_read_attr_f64(f, "/cycle", "t0", &o->cycle.t0, err));
    TRY(sc_h5_read_attr_f64(f, "/cycle", "t1", &o->cycle.t1, err));
    TRY(sc_h5_read_attr_i64(f, "/cycle", "cycles", &cyc, err));
    TRY(sc_h5_read_attr_i64(f, "/cycle", "fragments", &frag, err));
    if (frag < 1 || frag > 100000 || cyc < 1 || !(o->cycle.t0 >= 0 && o->cycle.t1 > o->cycle.t0 && o->cycle.t1 < 1e6)) {
        rc = sc_fail(err, SC_EINPUT, "%s:/cycle: damaged (%lld fragments, %lld cycles, t0 %g s, t1 %g s)", path, frag, cyc, o->cycle.t0, o->cycle.t1);
        goto done;
    }
    o->fragments = (int)frag;
    /* every count from /segments/steps, every other dataset exactly that long (a 0 in the reads'
       dims means "any": never pass a count that could be 0 without checking what came back) */
    TRY(sc_h5_read_i32(f, "/segments/steps", 1, &ns, &steps, err));
    TRY(sc_h5_check_count(f, "/segments/steps", ns, 1, 1000000, err));
    od[0] = ns;
    od[1] = (size_t)dofs->n;
    TRY(sc_h5_read_f64(f, "/segments/offsets", 2, od, &o->offsets, err));
    if (od[0] != ns || od[1] != (size_t)dofs->n) { rc = sc_fail(err, SC_EINPUT, "%s:/segments/offsets: %zu x %zu, expected %zu x %d", path, od[0], od[1], ns, dofs->n); goto done; }
    o->nseg = (int)ns;
    size_t n0 = ns, n1 = ns;
    TRY(sc_h5_read_f64(f, "/segments/ref_t0", 1, &n0, &o->ref_t0, err));
    TRY(sc_h5_read_f64(f, "/segments/ref_t1", 1, &n1, &o->ref_t1, err));
    for (size_t k = 0; k < ns; k++)
        if (!(isfinite(o->ref_t0[k]) && o->ref_t1[k] > o->ref_t0[k] && o->ref_t0[k] >= 0 && o->ref_t1[k] < 1e6)) {
            rc = sc_fail(err, SC_EINPUT, "%s:/segments/ref_t0, ref_t1: element %zu = [%g, %g] is not a span of reference time", path, k, o->ref_t0[k], o->ref_t1[k]);
            goto done;
        }
    if (o->nseg < o->fragments) { rc = sc_fail(err, SC_EINPUT, "%s:/segments: %d segments, less than one cycle of %d fragments (the search did not complete one cycle)", path, o->nseg, o->fragments); goto done; }
    o->steps = malloc(ns * sizeof(long));
    if (!o->steps) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
    for (size_t k = 0; k < ns; k++) {
        if (steps[k] < 1) { rc = sc_fail(err, SC_EINPUT, "%s:/segments/steps: element %zu = %d", path, k, steps[k]); goto done; }
        o->steps[k] = steps[k];
    }
    for (size_t k = 0; k < ns * (size_t)dofs->n; k++)
        if (!isfinite(o->offsets[k]) || fabs(o->offsets[k]) > 10) { rc = sc_fail(err, SC_EINPUT, "%s:/segments/offsets: element %zu = %g", path, k, o->offsets[k]); goto done; }
    dq[0] = dw[0] = nnames;
    TRY(sc_h5_read_f64(f, "/start/root_pos", 1, &d3, &rp, err));
    TRY(sc_h5_read_f64(f, "/start/root_vel", 1, &d3, &rv, err));
    TRY(sc_h5_read_f64(f, "/start/local_quat", 2, dq, &o->start_quat, err));
    TRY(sc_h5_read_f64(f, "/start/local_ang_vel", 2, dw, &o->start_w, err));
    TRY(sc_h5_check_range(f, "/start/root_pos", rp, 3, 1, -1e3, 1e3, 0, err));
    TRY(sc_h5_check_range(f, "/start/root_vel", rv, 3, 1, -1e3, 1e3, 0, err));
    TRY(sc_h5_check_unit_quats(f, "/start/local_quat", o->start_quat, 2, dq, err));
    TRY(sc_h5_check_range(f, "/start/local_ang_vel", o->start_w, 3 * nnames, 3, -1e3, 1e3, 0, err));
    memcpy(o->start_root, rp, sizeof o->start_root);
    memcpy(o->start_vel, rv, sizeof o->start_vel);
    TRY(sc_h5_read_attr_str(f, "/", "base_targets", &base, err));
    o->base = strstr(base, "raw") ? SC_BASE_REFERENCE : SC_BASE_ID;
    TRY(sc_h5_read_attr_str(f, "/", "reference", &ref, err));
    TRY(sc_h5_read_attr_str(f, "/", "reference_path", &refabs, err));
    TRY(sc_h5_read_attr_str(f, "/", "reference_hash", &hash, err));
    o->reference_hash = strtoull(hash, NULL, 16);
    /* the reference: next to the openloop.h5 as named, else where it was */
    {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash) slash[1] = 0; else dir[0] = 0;
        const char *leaf = strrchr(ref, '/');
        snprintf(o->reference, sizeof o->reference, "%s%s", dir, leaf ? leaf + 1 : ref);
        if (access(o->reference, R_OK)) snprintf(o->reference, sizeof o->reference, "%s", refabs);
    }
    o->hash = sc_hash_bytes(sc_hash_bytes(SC_HASH_INIT, o->offsets, sizeof(double) * ns * (size_t)dofs->n), o->steps, sizeof(long) * ns);
#undef TRY
done:
    free(schema); free(ref); free(refabs); free(hash); free(base); free(steps); free(rp); free(rv);
    if (names) sc_h5_free_strings(names, nnames);
    if (dnames) sc_h5_free_strings(dnames, ndn);
    if (rc) sc_openloop_cycle_free(o);
    return rc;
}

int sc_openloop_cycle_read(const char *path, const sc_model *m, const sc_control_dofs *dofs, sc_openloop_cycle *o, sc_err *err)
{
    memset(o, 0, sizeof *o);
    openloop_arg a = {m, dofs, o};
    return sc_h5_read_file(path, openloop_cycle_reader, &a, err);
}

int sc_openloop_cycle_read_image(const void *data, size_t size, const char *name, const sc_model *m, const sc_control_dofs *dofs,
                                 sc_openloop_cycle *o, sc_err *err)
{
    memset(o, 0, sizeof *o);
    openloop_arg a = {m, dofs, o};
    return sc_h5_read_image(data, size, name, openloop_cycle_reader, &a, err);
}


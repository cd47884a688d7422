/* HDF5 layer: the checks a reader applies to values read from a file (ranges, indices, counts,
 * rotations, names, times), each failing with a message that names the file, path and element. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "io/h5_internal.h"

/* "[i]", "[i][j]" or "[i][j][k]" of flat index e in a dataset of the given dims */
static void element_name(char *buf, size_t n, size_t e, int rank, const size_t *dims)
{
    size_t idx[3] = {e, 0, 0};
    if (rank == 2 && dims[1]) {
        idx[0] = e / dims[1];
        idx[1] = e % dims[1];
    } else if (rank == 3 && dims[1] && dims[2]) {
        idx[0] = e / (dims[1] * dims[2]);
        idx[1] = e / dims[2] % dims[1];
        idx[2] = e % dims[2];
    } else {
        rank = 1;
    }
    size_t k = 0;
    for (int r = 0; r < rank && k < n; r++) k += (size_t)snprintf(buf + k, n - k, "[%zu]", idx[r]);
}

int sc_h5_check_range_nd(const sc_h5 *f, const char *path, const double *v, int rank, const size_t *dims, double lo, double hi, int open_interval,
                         sc_err *err)
{
    size_t n = 1;
    for (int r = 0; r < rank; r++) n *= dims[r];
    for (size_t i = 0; i < n; i++) {
        double x = v[i];
        int ok = isfinite(x) && (open_interval ? x > lo && x < hi : x >= lo && x <= hi);
        if (ok) continue;
        char at[96], rule[96];
        element_name(at, sizeof at, i, rank, dims);
        if (!isfinite(x)) snprintf(rule, sizeof rule, "finite");
        else if (isinf(hi)) snprintf(rule, sizeof rule, "%s %g", open_interval ? ">" : ">=", lo);
        else if (isinf(lo)) snprintf(rule, sizeof rule, "%s %g", open_interval ? "<" : "<=", hi);
        else snprintf(rule, sizeof rule, "in %c%g, %g%c", open_interval ? '(' : '[', lo, hi, open_interval ? ')' : ']');
        return sc_fail(err, SC_EINPUT, "%s:%s%s%s: value %g, must be %s", sc_h5_filename(f), h5_lead(path), path, at, x, rule);
    }
    return SC_OK;
}

int sc_h5_check_range(const sc_h5 *f, const char *path, const double *v, size_t n, size_t cols, double lo, double hi, int open_interval, sc_err *err)
{
    size_t dims[2] = {cols > 1 ? n / cols : n, cols};
    return sc_h5_check_range_nd(f, path, v, cols > 1 ? 2 : 1, dims, lo, hi, open_interval, err);
}

int sc_h5_check_index(const sc_h5 *f, const char *path, const int *v, size_t n, size_t cols, long lo, long hi, sc_err *err)
{
    size_t dims[2] = {cols > 1 ? n / cols : n, cols};
    for (size_t i = 0; i < n; i++) {
        if (v[i] >= lo && v[i] <= hi) continue;
        char at[96];
        element_name(at, sizeof at, i, cols > 1 ? 2 : 1, dims);
        return sc_fail(err, SC_EINPUT, "%s:%s%s%s: value %d, must be in [%ld, %ld]", sc_h5_filename(f), h5_lead(path), path, at, v[i], lo, hi);
    }
    return SC_OK;
}

int sc_h5_check_count(const sc_h5 *f, const char *path, size_t n, int min_one, long max, sc_err *err)
{
    if ((min_one && n < 1) || n > (size_t)max)
        return sc_fail(err, SC_EINPUT, "%s:%s%s: %zu rows, must be %d..%ld", sc_h5_filename(f), h5_lead(path), path, n, min_one ? 1 : 0, max);
    return SC_OK;
}

int sc_h5_check_increasing(const sc_h5 *f, const char *path, const double *t, size_t n, sc_err *err)
{
    int rc = sc_h5_check_finite(f, path, t, n, 1, err);
    if (rc) return rc;
    for (size_t i = 1; i < n; i++)
        if (!(t[i] > t[i - 1]))
            return sc_fail(err, SC_EINPUT, "%s:%s%s[%zu]: value %g, must be greater than the one before (%g)", sc_h5_filename(f), h5_lead(path), path,
                           i, t[i], t[i - 1]);
    return SC_OK;
}

int sc_h5_check_unit_quats(const sc_h5 *f, const char *path, const double *q, int rank, const size_t *dims, sc_err *err)
{
    int rc = sc_h5_check_range_nd(f, path, q, rank, dims, -INFINITY, INFINITY, 0, err);
    if (rc) return rc;
    size_t n = 1;
    for (int r = 0; r < rank - 1; r++) n *= dims[r];
    for (size_t i = 0; i < n; i++) {
        const double *a = q + 4 * i;
        double norm = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3]);
        if (!(norm >= 0.5 && norm <= 2)) {
            char at[96];
            element_name(at, sizeof at, i, rank - 1, dims);
            return sc_fail(err, SC_EINPUT, "%s:%s%s%s: quaternion (%g, %g, %g, %g) has norm %g, must be a rotation (norm 1)", sc_h5_filename(f),
                           h5_lead(path), path, at, a[0], a[1], a[2], a[3], norm);
        }
    }
    return SC_OK;
}

int sc_h5_check_names(const sc_h5 *f, const char *path, char *const *names, size_t n, size_t maxlen, sc_err *err)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(names[i]);
        if (len == 0 || len >= maxlen)
            return sc_fail(err, SC_EINPUT, "%s:%s%s[%zu]: a name of %zu bytes, must be 1..%zu", sc_h5_filename(f), h5_lead(path), path, i, len,
                           maxlen - 1);
        for (size_t k = 0; k < len; k++)
            if ((unsigned char)names[i][k] < 32 || names[i][k] == 127)
                return sc_fail(err, SC_EINPUT, "%s:%s%s[%zu]: control character in a name", sc_h5_filename(f), h5_lead(path), path, i);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(names[i], names[j]))
                return sc_fail(err, SC_EINPUT, "%s:%s%s[%zu]: '%s' repeats entry %zu", sc_h5_filename(f), h5_lead(path), path, i, names[i], j);
    }
    return SC_OK;
}

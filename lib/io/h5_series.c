/* HDF5 layer: time series (extendible datasets appended one sample at a time through a
 * one-chunk buffer) and their timelines (dimension scales, the H5DS convention by hand). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/h5_internal.h"

#define SERIES_MAX_ROWS 256

/* One entry of the H5DS REFERENCE_LIST attribute. */
typedef struct {
    hobj_ref_t ref;
    int dim;
} reflist_entry;

/* Fixed-length ASCII string attribute: the form the H5DS convention uses for CLASS/NAME. */
static herr_t put_attr_fixed_str(hid_t obj, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR);
    herr_t r = -1;
    if (t >= 0 && s >= 0 && H5Tset_size(t, strlen(value) + 1) >= 0 && H5Tset_strpad(t, H5T_STR_NULLTERM) >= 0)
        r = h5_put_attr(obj, name, t, s, value);
    h5_close_id(t);
    h5_close_id(s);
    return r;
}

void h5_series_free_all(sc_h5 *f)
{
    sc_h5_series *s = f->series;
    while (s) {
        sc_h5_series *next = s->next;
        h5_close_id(s->dset);
        free(s->buf);
        free(s->path);
        free(s->attached);
        free(s);
        s = next;
    }
    f->series = NULL;
}

/* Rewrite the scale's REFERENCE_LIST from s->attached (H5DS keeps one entry per attachment). */
static herr_t write_reference_list(sc_h5_series *scale)
{
    reflist_entry *e = malloc(scale->nattached * sizeof *e);
    if (!e) return -1;
    for (size_t i = 0; i < scale->nattached; i++) {
        e[i].ref = scale->attached[i];
        e[i].dim = 0;
    }
    hsize_t n = scale->nattached;
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(reflist_entry));
    hid_t s = H5Screate_simple(1, &n, NULL);
    herr_t r = -1;
    if (t >= 0 && s >= 0 && H5Tinsert(t, "dataset", HOFFSET(reflist_entry, ref), H5T_STD_REF_OBJ) >= 0 &&
        H5Tinsert(t, "dimension", HOFFSET(reflist_entry, dim), H5T_NATIVE_INT) >= 0)
        r = h5_put_attr(scale->dset, "REFERENCE_LIST", t, s, e);
    h5_close_id(t);
    h5_close_id(s);
    free(e);
    return r;
}

/* Attach s's dim 0 to the timeline: DIMENSION_LIST on s, REFERENCE_LIST on the timeline. */
static int attach_scale(sc_h5 *f, sc_h5_series *s, sc_h5_series *scale, sc_err *err)
{
    hobj_ref_t scale_ref, ds_ref;
    if (H5Rcreate(&scale_ref, f->file, scale->path, H5R_OBJECT, -1) < 0 || H5Rcreate(&ds_ref, f->file, s->path, H5R_OBJECT, -1) < 0)
        return h5_fail(f, err, SC_EIO, s->path, "cannot reference the time scale");
    hvl_t list[MAX_SERIES_RANK];
    for (int i = 0; i < s->rank; i++) {
        list[i].len = 0;
        list[i].p = NULL;
    }
    list[0].len = 1;
    list[0].p = &scale_ref;
    hsize_t n = (hsize_t)s->rank;
    hid_t t = H5Tvlen_create(H5T_STD_REF_OBJ), sp = H5Screate_simple(1, &n, NULL);
    herr_t r = t >= 0 && sp >= 0 ? h5_put_attr(s->dset, "DIMENSION_LIST", t, sp, list) : -1;
    int rc = r < 0 ? h5_fail(f, err, SC_EIO, s->path, "cannot write DIMENSION_LIST") : SC_OK;
    h5_close_id(t);
    h5_close_id(sp);
    if (rc) return rc;
    hobj_ref_t *grown = realloc(scale->attached, (scale->nattached + 1) * sizeof *grown);
    if (!grown) return sc_fail(err, SC_EIO, "out of memory");
    scale->attached = grown;
    scale->attached[scale->nattached++] = ds_ref;
    if (write_reference_list(scale) < 0) return h5_fail(f, err, SC_EIO, scale->path, "cannot write REFERENCE_LIST");
    return SC_OK;
}

static int series_create(sc_h5 *f, const char *path, sc_h5_series *timeline, int sample_rank, const size_t *sample_dims, int is_int,
                         const char *units, const char *description, sc_h5_series **out, sc_err *err)
{
    h5_init();
    if (out) *out = NULL;
    int rc = h5_check_writable(f, path, err);
    if (rc) return rc;
    if (!out) return sc_fail(err, SC_EINPUT, "sc_h5_series_create: no output handle");
    if (sample_rank < 0 || sample_rank > MAX_SERIES_RANK - 1 || (sample_rank > 0 && !sample_dims))
        return sc_fail(err, SC_EINPUT, "%s:%s%s: sample rank %d not in 0..%d", f->path, h5_lead(path), path, sample_rank, MAX_SERIES_RANK - 1);
    if (timeline && (!timeline->is_scale || timeline->file != f))
        return sc_fail(err, SC_EINPUT, "%s:%s%s: the given timeline is not a time scale of this file", f->path, h5_lead(path), path);
    if ((rc = h5_check_new_path(f, path, err))) return rc;
    sc_h5_series *s = sc_alloc(err, 1, sizeof *s);
    if (!s) return SC_EIO;
    s->file = f;
    s->dset = -1;
    s->is_int = is_int;
    s->rank = 1 + sample_rank;
    size_t elsize = is_int ? sizeof(int) : sizeof(double);
    s->sample_bytes = elsize;
    for (int i = 0; i < sample_rank; i++) {
        if (sample_dims[i] == 0 || s->sample_bytes > SIZE_MAX / 2 / sample_dims[i]) {
            free(s);
            return sc_fail(err, SC_EINPUT, "%s:%s%s: bad sample dimension %zu", f->path, h5_lead(path), path, sample_dims[i]);
        }
        s->dims[1 + i] = sample_dims[i];
        s->sample_bytes *= sample_dims[i];
    }
    size_t rows = CHUNK_TARGET_BYTES / s->sample_bytes;
    s->rows = rows < 1 ? 1 : rows > SERIES_MAX_ROWS ? SERIES_MAX_ROWS : rows;
    size_t plen = strlen(path);
    s->path = malloc(plen + 2);
    s->buf = malloc(s->rows * s->sample_bytes);
    if (!s->path || !s->buf) {
        free(s->path);
        free(s->buf);
        free(s);
        return sc_fail(err, SC_EIO, "out of memory for series %s", path);
    }
    snprintf(s->path, plen + 2, "%s%s", h5_lead(path), path);

    hsize_t cur[MAX_SERIES_RANK], max[MAX_SERIES_RANK], chunk[MAX_SERIES_RANK];
    cur[0] = 0;
    max[0] = H5S_UNLIMITED;
    chunk[0] = s->rows;
    for (int i = 1; i < s->rank; i++) cur[i] = max[i] = chunk[i] = s->dims[i];
    hid_t space = H5Screate_simple(s->rank, cur, max);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), lcpl = h5_make_lcpl();
    if (space < 0 || dcpl < 0 || lcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0 || H5Pset_chunk(dcpl, s->rank, chunk) < 0 ||
        H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, 4) < 0) {
        rc = h5_fail(f, err, SC_EIO, path, "cannot set up series");
    } else {
        s->dset = H5Dcreate2(f->file, s->path, is_int ? H5T_STD_I32LE : H5T_IEEE_F64LE, space, lcpl, dcpl, H5P_DEFAULT);
        if (s->dset < 0) rc = h5_fail(f, err, SC_EIO, path, "cannot create series");
    }
    h5_close_id(space);
    h5_close_id(dcpl);
    h5_close_id(lcpl);
    if (rc == SC_OK && h5_put_units_desc(s->dset, units, description) < 0) rc = h5_fail(f, err, SC_EIO, path, "cannot write attributes");
    /* link in before attaching so that any failure below still frees s with the file */
    s->next = f->series;
    f->series = s;
    if (rc == SC_OK && timeline) rc = attach_scale(f, s, timeline, err);
    if (rc == SC_OK) *out = s;
    return rc;
}

int sc_h5_timeline_create(sc_h5 *f, const char *time_path, sc_h5_series **out, sc_err *err)
{
    sc_h5_series *s = NULL;
    int rc = series_create(f, time_path, NULL, 0, NULL, 0, "s", "sample time", &s, err);
    if (rc) return rc;
    const char *name = strrchr(s->path, '/');
    name = name ? name + 1 : s->path;
    if (put_attr_fixed_str(s->dset, "CLASS", "DIMENSION_SCALE") < 0 || put_attr_fixed_str(s->dset, "NAME", name) < 0)
        return h5_fail(f, err, SC_EIO, time_path, "cannot mark as dimension scale");
    s->is_scale = 1;
    *out = s;
    return SC_OK;
}

int sc_h5_series_create(sc_h5 *f, const char *path, sc_h5_series *timeline, int sample_rank, const size_t *sample_dims, const char *units,
                        const char *description, sc_h5_series **out, sc_err *err)
{
    return series_create(f, path, timeline, sample_rank, sample_dims, 0, units, description, out, err);
}

int sc_h5_series_create_i32(sc_h5 *f, const char *path, sc_h5_series *timeline, int sample_rank, const size_t *sample_dims, const char *description,
                            sc_h5_series **out, sc_err *err)
{
    return series_create(f, path, timeline, sample_rank, sample_dims, 1, NULL, description, out, err);
}

/* Write the buffered samples not yet in the file; when the buffer holds a whole chunk, start
 * the next one. Writing only unflushed rows keeps every chunk-aligned write a whole chunk in the
 * common (no mid-run flush) case. */
int h5_series_write(sc_h5_series *s, sc_err *err)
{
    if (s->nbuf == s->nflushed) return SC_OK;
    sc_h5 *f = s->file;
    int rc = SC_OK;
    hsize_t ext[MAX_SERIES_RANK], off[MAX_SERIES_RANK], cnt[MAX_SERIES_RANK];
    for (int i = 0; i < s->rank; i++) {
        ext[i] = cnt[i] = s->dims[i];
        off[i] = 0;
    }
    ext[0] = s->start + s->nbuf;
    off[0] = s->start + s->nflushed;
    cnt[0] = s->nbuf - s->nflushed;
    hid_t fs = -1, ms = -1;
    if (H5Dset_extent(s->dset, ext) < 0) {
        rc = h5_fail(f, err, SC_EIO, s->path, "cannot extend series");
        goto done;
    }
    fs = H5Dget_space(s->dset);
    ms = H5Screate_simple(s->rank, cnt, NULL);
    if (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL) < 0 ||
        H5Dwrite(s->dset, s->is_int ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, s->buf + s->nflushed * s->sample_bytes) < 0) {
        rc = h5_fail(f, err, SC_EIO, s->path, "cannot write series samples");
        goto done;
    }
    s->nflushed = s->nbuf;
    if (s->nbuf == s->rows) {
        s->start += s->rows;
        s->nbuf = s->nflushed = 0;
    }
done:
    h5_close_id(fs);
    h5_close_id(ms);
    return rc;
}

static int series_append(sc_h5_series *s, const void *sample, int is_int, sc_err *err)
{
    if (!s || !sample) return sc_fail(err, SC_EINPUT, "series append: no series or sample");
    if (s->is_int != is_int) return sc_fail(err, SC_EINPUT, "%s:%s: series holds %s values", s->file->path, s->path, s->is_int ? "integer" : "float");
    if (s->nbuf == s->rows) { /* a previous chunk write failed: retry before reusing the buffer */
        int rc = h5_series_write(s, err);
        if (rc) return rc;
    }
    memcpy(s->buf + s->nbuf * s->sample_bytes, sample, s->sample_bytes);
    s->nbuf++;
    return s->nbuf == s->rows ? h5_series_write(s, err) : SC_OK;
}

int sc_h5_series_append(sc_h5_series *s, const double *sample, sc_err *err) { return series_append(s, sample, 0, err); }

int sc_h5_series_append_i32(sc_h5_series *s, const int *sample, sc_err *err) { return series_append(s, sample, 1, err); }

size_t sc_h5_series_length(const sc_h5_series *s) { return s ? (size_t)s->start + s->nbuf : 0; }

int sc_h5_flush(sc_h5 *f, sc_err *err)
{
    int rc = h5_check_writable(f, "/", err);
    if (rc) return rc;
    for (sc_h5_series *s = f->series; s; s = s->next)
        if ((rc = h5_series_write(s, err))) return rc;
    if (H5Fflush(f->file, H5F_SCOPE_LOCAL) < 0) return h5_fail(f, err, SC_EIO, "/", "cannot flush");
    return SC_OK;
}

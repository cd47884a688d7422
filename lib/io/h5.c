/* HDF5 layer: files (create, commit, open, images), datasets (write, read, shape, views) and the
 * helpers the other h5_*.c files share (h5_internal.h). Serial HDF5 1.10, core library only: the
 * dimension-scale convention is written by hand because libhdf5_hl is not linked. Every hid_t is
 * closed on every path; HDF5's own error printing is off and failures become sc_err messages. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/cleanup.h"
#include "core/log.h"
#include "io/h5_internal.h"

#define SMALL_DATASET_BYTES (64u * 1024u) /* above this: chunked + compressed */

/* ------------------------------------------------------------------------------------------ */
/* errors */

/* Set when an H5Fclose failed (a full disk): HDF5 1.10 then keeps a half-freed file object
 * that its own exit handler would close again and crash on, so the library is not shut down
 * at exit (the process is ending anyway). */
static int g_poisoned;

static void h5_atexit(void)
{
    if (!g_poisoned) H5close();
}

void h5_init(void)
{
    static int done;
    if (!done) {
        H5dont_atexit(); /* our h5_atexit instead */
        H5open();
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        /* Keep up to 32 MiB of freed blocks on HDF5's free lists (default 64 KiB per list): every
           file open allocates a ~0.6 MiB metadata-cache struct, which is then reused instead of
           mapped and zeroed afresh (5x faster opens of small files under AddressSanitizer). */
        H5set_free_list_limits(32 << 20, 16 << 20, 32 << 20, 16 << 20, 32 << 20, 16 << 20);
        atexit(h5_atexit);
        done = 1;
    }
}

typedef struct {
    char *buf;
    size_t n;
} reason_ctx;

static herr_t reason_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    reason_ctx *c = data;
    if (n == 0 && e) {
        /* innermost entry: the one that says what actually went wrong */
        const char *sys = e->desc ? strstr(e->desc, "error message = '") : NULL;
        if (sys) {
            /* the file driver's report of a failed read/write: keep the system's reason */
            sys += strlen("error message = '");
            const char *end = strchr(sys, '\'');
            snprintf(c->buf, c->n, "%.*s", end ? (int)(end - sys) : (int)strlen(sys), sys);
        } else if (e->desc && e->desc[0]) {
            snprintf(c->buf, c->n, "%s", e->desc);
        } else {
            char minor[256] = "";
            H5Eget_msg(e->min_num, NULL, minor, sizeof minor);
            snprintf(c->buf, c->n, "%s", minor);
        }
    }
    return 0;
}

/* The reason of the HDF5 call that just failed (call before any other HDF5 call). */
static const char *h5_reason(char *buf, size_t n)
{
    reason_ctx c = {buf, n};
    buf[0] = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, reason_cb, &c);
    H5Eclear2(H5E_DEFAULT);
    if (!buf[0]) snprintf(buf, n, "HDF5 error");
    return buf;
}

const char *h5_lead(const char *path) { return path && path[0] == '/' ? "" : "/"; }

/* "file:/path: what: <HDF5 reason>" */
int h5_fail(const sc_h5 *f, sc_err *err, int code, const char *path, const char *what)
{
    char reason[512];
    h5_reason(reason, sizeof reason);
    return sc_fail(err, code, "%s:%s%s: %s: %s", f->path, h5_lead(path), path, what, reason);
}

int h5_check_writable(const sc_h5 *f, const char *path, sc_err *err)
{
    if (!f) return sc_fail(err, SC_EIO, "HDF5: no file");
    if (!path || !path[0]) return sc_fail(err, SC_EINPUT, "%s: empty HDF5 path", f->path);
    if (!f->writable) return sc_fail(err, SC_EIO, "%s:%s%s: file is open read-only", f->path, h5_lead(path), path);
    return SC_OK;
}
/* ------------------------------------------------------------------------------------------ */
/* small HDF5 helpers */

/* Close any kind of id. A pending error stack survives the close, so a failure's reason can
 * still be read after cleaning up. */
void h5_close_id(hid_t id)
{
    if (id < 0) return;
    hid_t pending = H5Eget_num(H5E_DEFAULT) > 0 ? H5Eget_current_stack() : -1;
    switch (H5Iget_type(id)) {
        case H5I_FILE: H5Fclose(id); break;
        case H5I_GROUP: H5Gclose(id); break;
        case H5I_DATATYPE: H5Tclose(id); break;
        case H5I_DATASPACE: H5Sclose(id); break;
        case H5I_DATASET: H5Dclose(id); break;
        case H5I_ATTR: H5Aclose(id); break;
        case H5I_GENPROP_LST: H5Pclose(id); break;
        default: break;
    }
    if (pending >= 0) H5Eset_current_stack(pending); /* also releases `pending` */
}

hid_t h5_vlen_str_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return t;
    if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* Link creation list that creates missing parent groups. */
hid_t h5_make_lcpl(void)
{
    hid_t p = H5Pcreate(H5P_LINK_CREATE);
    if (p < 0) return p;
    if (H5Pset_create_intermediate_group(p, 1) < 0 || H5Pset_char_encoding(p, H5T_CSET_UTF8) < 0) {
        H5Pclose(p);
        return -1;
    }
    return p;
}

/* Does every component of path exist? (H5Lexists fails on a missing parent.) */
int h5_path_exists(hid_t file, const char *path)
{
    if (!path || !path[0]) return 0;
    if (!strcmp(path, "/")) return 1;
    size_t len = strlen(path);
    char *p = malloc(len + 1);
    if (!p) return 0;
    memcpy(p, path, len + 1);
    int ok = 1;
    for (size_t i = 1; i <= len && ok; i++) {
        if (p[i] != '/' && p[i] != 0) continue;
        char c = p[i];
        p[i] = 0;
        if (p[0] && strcmp(p, "/") && H5Lexists(file, p, H5P_DEFAULT) <= 0) ok = 0;
        p[i] = c;
    }
    if (ok && H5Oexists_by_name(file, path, H5P_DEFAULT) <= 0) ok = 0; /* dangling soft link */
    free(p);
    H5Eclear2(H5E_DEFAULT);
    return ok;
}

/* Before creating an object at path: it must not exist and every existing parent must be a
 * group (HDF5's own message for a dataset parent is "message type not found"). */
int h5_check_new_path(const sc_h5 *f, const char *path, sc_err *err)
{
    size_t len = strlen(path);
    char *p = malloc(len + 1);
    if (!p) return sc_fail(err, SC_EIO, "out of memory");
    memcpy(p, path, len + 1);
    int rc = SC_OK;
    for (size_t i = 1; i < len && rc == SC_OK; i++) {
        if (p[i] != '/') continue;
        p[i] = 0;
        if (h5_path_exists(f->file, p)) {
            hid_t o = H5Oopen(f->file, p, H5P_DEFAULT);
            H5I_type_t t = o >= 0 ? H5Iget_type(o) : H5I_BADID;
            if (o >= 0) H5Oclose(o);
            if (t != H5I_GROUP)
                rc = sc_fail(err, SC_EINPUT, "%s:%s%s: cannot create: %s%s is not a group", f->path, h5_lead(path), path, h5_lead(p), p);
        }
        p[i] = '/';
    }
    free(p);
    H5Eclear2(H5E_DEFAULT);
    if (rc == SC_OK && h5_path_exists(f->file, path)) rc = sc_fail(err, SC_EINPUT, "%s:%s%s: already exists", f->path, h5_lead(path), path);
    return rc;
}

const char *h5_class_name(H5T_class_t c)
{
    switch (c) {
        case H5T_INTEGER: return "integer";
        case H5T_FLOAT: return "float";
        case H5T_STRING: return "string";
        case H5T_COMPOUND: return "compound";
        case H5T_ENUM: return "enum";
        case H5T_REFERENCE: return "reference";
        case H5T_ARRAY: return "array";
        case H5T_VLEN: return "variable-length";
        case H5T_OPAQUE: return "opaque";
        case H5T_BITFIELD: return "bitfield";
        default: return "unknown-type";
    }
}

/* "1-D float of shape 12" / "2-D integer of shape 100 x 3" / "scalar string" */
void h5_describe_found(char *buf, size_t n, H5T_class_t cls, int rank, const hsize_t *dims)
{
    if (rank == 0) {
        snprintf(buf, n, "scalar %s", h5_class_name(cls));
        return;
    }
    size_t k = (size_t)snprintf(buf, n, "%d-D %s of shape ", rank, h5_class_name(cls));
    for (int i = 0; i < rank && k < n; i++) k += (size_t)snprintf(buf + k, n - k, i ? " x %llu" : "%llu", (unsigned long long)dims[i]);
}

/* "a 2-D integer dataset with 4 columns" */
static void describe_expected(char *buf, size_t n, int rank, const size_t *dims, const char *kind)
{
    size_t k = (size_t)snprintf(buf, n, "a %d-D %s dataset", rank, kind);
    int any = 0;
    for (int i = 0; dims && i < rank; i++) any |= dims[i] != 0;
    if (!any || k >= n) return;
    if (rank == 1) {
        snprintf(buf + k, n - k, " with %zu elements", dims[0]);
    } else if (rank == 2 && dims[0] == 0) {
        snprintf(buf + k, n - k, " with %zu columns", dims[1]);
    } else if (rank == 2 && dims[1] == 0) {
        snprintf(buf + k, n - k, " with %zu rows", dims[0]);
    } else {
        k += (size_t)snprintf(buf + k, n - k, " of shape ");
        for (int i = 0; i < rank && k < n; i++) {
            const char *sep = i ? " x " : "";
            if (dims[i]) k += (size_t)snprintf(buf + k, n - k, "%s%zu", sep, dims[i]);
            else k += (size_t)snprintf(buf + k, n - k, "%sany", sep);
        }
    }
}
/* ------------------------------------------------------------------------------------------ */
/* files */

static sc_h5 *h5_new(const char *path, sc_err *err)
{
    sc_h5 *f = sc_alloc(err, 1, sizeof *f);
    if (!f) return NULL;
    f->file = -1;
    size_t len = strlen(path);
    f->path = malloc(len + 1);
    f->tmp = malloc(len + SC_TEMP_SUFFIX_MAX + 1);
    if (!f->path || !f->tmp) {
        free(f->path);
        free(f->tmp);
        free(f);
        sc_fail(err, SC_EIO, "out of memory");
        return NULL;
    }
    memcpy(f->path, path, len + 1);
    /* unique per run and call: two runs on one output never write the same temporary */
    if (sc_temp_name(path, f->tmp, len + SC_TEMP_SUFFIX_MAX + 1)) {
        free(f->path);
        free(f->tmp);
        free(f);
        sc_fail(err, SC_EIO, "%s: file name too long (its temporary name would exceed PATH_MAX or NAME_MAX)", path);
        return NULL;
    }
    return f;
}

static void h5_free(sc_h5 *f)
{
    free(f->path);
    free(f->tmp);
    free(f);
}

/* Strong close: H5Fclose really closes the file even if an object was left open. */
static hid_t make_fapl(void)
{
    hid_t p = H5Pcreate(H5P_FILE_ACCESS);
    if (p >= 0 && H5Pset_fclose_degree(p, H5F_CLOSE_STRONG) < 0) {
        H5Pclose(p);
        return -1;
    }
    return p;
}

int sc_h5_create(const char *path, sc_h5 **out, sc_err *err)
{
    h5_init();
    if (out) *out = NULL;
    if (!path || !path[0] || !out) return sc_fail(err, SC_EIO, "sc_h5_create: no path");
    sc_h5 *f = h5_new(path, err);
    if (!f) return SC_EIO;
    /* Probe with open(2) first: its errno makes a clearer message than HDF5's stack. */
    int fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0) {
        int e = errno;
        sc_fail(err, SC_EIO, "%s: cannot create %s: %s", path, f->tmp, strerror(e));
        h5_free(f);
        return SC_EIO;
    }
    close(fd);
    sc_cleanup_add(f->tmp, SC_CLEANUP_TEMP);
    hid_t fapl = make_fapl();
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    f->file = fapl >= 0 && fcpl >= 0 ? H5Fcreate(f->tmp, H5F_ACC_TRUNC, fcpl, fapl) : -1;
    if (f->file < 0) {
        char reason[512];
        h5_reason(reason, sizeof reason);
        sc_fail(err, SC_EIO, "%s: cannot create HDF5 file %s: %s", path, f->tmp, reason);
    }
    h5_close_id(fapl);
    h5_close_id(fcpl);
    if (f->file < 0) {
        unlink(f->tmp);
        sc_cleanup_forget(f->tmp);
        h5_free(f);
        return SC_EIO;
    }
    f->writable = 1;
    *out = f;
    return SC_OK;
}

/* Close the HDF5 file, warning about objects somebody left open (a leak in this layer). */
static int close_file(sc_h5 *f, sc_err *err)
{
    int rc = SC_OK;
    if (f->file < 0) return rc;
    ssize_t open_objs = H5Fget_obj_count(f->file, H5F_OBJ_ALL | H5F_OBJ_LOCAL);
    if (open_objs > 1) sc_log_warn("%s: %zd HDF5 objects left open at close", f->path, open_objs - 1);
    if (H5Fclose(f->file) < 0) {
        char reason[512];
        h5_reason(reason, sizeof reason);
        g_poisoned = 1;
        rc = sc_fail(err, SC_EIO, "%s: cannot %s %s: %s", f->path, f->writable ? "finish writing" : "close", f->writable ? f->tmp : f->path, reason);
    }
    f->file = -1;
    return rc;
}

int sc_h5_commit(sc_h5 *f, sc_err *err)
{
    if (!f) return sc_fail(err, SC_EIO, "sc_h5_commit: no file");
    if (!f->writable) {
        sc_h5_close(f);
        return sc_fail(err, SC_EIO, "sc_h5_commit: file was opened read-only");
    }
    int rc = SC_OK;
    for (sc_h5_series *s = f->series; s && rc == SC_OK; s = s->next) rc = h5_series_write(s, err);
    h5_series_free_all(f);
    int rc2 = close_file(f, rc == SC_OK ? err : NULL);
    if (rc == SC_OK) rc = rc2;
    if (rc == SC_OK) {
        /* fsync before rename so the rename never exposes a file whose data is still in flight */
        int fd = open(f->tmp, O_RDONLY);
        if (fd < 0 || fsync(fd) != 0) rc = sc_fail(err, SC_EIO, "%s: cannot sync %s: %s", f->path, f->tmp, strerror(errno));
        if (fd >= 0) close(fd);
    }
    if (rc == SC_OK && rename(f->tmp, f->path) != 0) rc = sc_fail(err, SC_EIO, "%s: cannot rename %s onto it: %s", f->path, f->tmp, strerror(errno));
    if (rc != SC_OK) unlink(f->tmp);
    sc_cleanup_forget(f->tmp);
    h5_free(f);
    return rc;
}

void sc_h5_abort(sc_h5 *f)
{
    if (!f) return;
    h5_series_free_all(f);
    close_file(f, NULL);
    if (f->writable) {
        unlink(f->tmp);
        sc_cleanup_forget(f->tmp);
    }
    h5_free(f);
}

int sc_h5_open(const char *path, sc_h5 **out, sc_err *err)
{
    h5_init();
    if (out) *out = NULL;
    if (!path || !path[0] || !out) return sc_fail(err, SC_EIO, "sc_h5_open: no path");
    struct stat st;
    if (stat(path, &st) != 0) return sc_fail(err, SC_EIO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) return sc_fail(err, SC_EIO, "%s: is a directory", path);
    if (access(path, R_OK) != 0) return sc_fail(err, SC_EIO, "%s: %s", path, strerror(errno));
    htri_t is = H5Fis_hdf5(path);
    if (is == 0) return sc_fail(err, SC_EINPUT, "%s: not an HDF5 file", path);
    if (is < 0) {
        char reason[512];
        h5_reason(reason, sizeof reason);
        return sc_fail(err, SC_EIO, "%s: cannot check HDF5 signature: %s", path, reason);
    }
    sc_h5 *f = h5_new(path, err);
    if (!f) return SC_EIO;
    hid_t fapl = make_fapl();
    f->file = fapl >= 0 ? H5Fopen(path, H5F_ACC_RDONLY, fapl) : -1;
    int rc = SC_OK;
    if (f->file < 0) { /* readable, with an HDF5 signature, yet unopenable: damaged */
        char reason[512];
        h5_reason(reason, sizeof reason);
        rc = sc_fail(err, SC_EINPUT, "%s: damaged HDF5 file: cannot open it: %s", path, reason);
    }
    h5_close_id(fapl);
    if (rc != SC_OK) {
        h5_free(f);
        return rc;
    }
    *out = f;
    return SC_OK;
}

void sc_h5_close(sc_h5 *f)
{
    if (!f) return;
    if (f->writable) {
        sc_log_warn("%s: closed without commit; output discarded", f->path);
        sc_h5_abort(f);
        return;
    }
    close_file(f, NULL);
    h5_free(f);
}

const char *sc_h5_filename(const sc_h5 *f) { return f ? f->path : ""; }
const char *sc_h5_temp_filename(const sc_h5 *f) { return f && f->writable ? f->tmp : ""; }

long sc_h5_live_ids(void)
{
    h5_init();
    ssize_t n = H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL);
    H5Eclear2(H5E_DEFAULT);
    return n < 0 ? -1 : (long)n;
}

/* ------------------------------------------------------------------------------------------ */
/* datasets */

/* Chunk shape for a static dataset: halve leading dims until a chunk is <= target. */
static void pick_chunk(int rank, const hsize_t *dims, size_t elsize, hsize_t *chunk)
{
    for (int i = 0; i < rank; i++) chunk[i] = dims[i] ? dims[i] : 1;
    for (;;) {
        size_t bytes = elsize;
        for (int i = 0; i < rank; i++) bytes *= (size_t)chunk[i];
        if (bytes <= CHUNK_TARGET_BYTES / 4) return;
        int i = 0;
        while (i < rank && chunk[i] == 1) i++;
        if (i == rank) return;
        chunk[i] = (chunk[i] + 1) / 2;
    }
}

int h5_write_dataset(sc_h5 *f, const char *path, int rank, const size_t *dims, hid_t file_type, hid_t mem_type, const void *data, const char *units,
                     const char *description, int compress, sc_err *err)
{
    int rc = h5_check_writable(f, path, err);
    if (rc) return rc;
    if (rank < 1 || rank > 3 || !dims) return sc_fail(err, SC_EINPUT, "%s:%s%s: dataset rank %d not in 1..3", f->path, h5_lead(path), path, rank);
    hsize_t hd[3], chunk[3];
    size_t total = 1, elsize = H5Tget_size(file_type);
    for (int i = 0; i < rank; i++) {
        hd[i] = dims[i];
        if (dims[i] && total > SIZE_MAX / dims[i]) return sc_fail(err, SC_EINPUT, "%s:%s%s: dataset too large", f->path, h5_lead(path), path);
        total *= dims[i];
    }
    if (total > 0 && !data) return sc_fail(err, SC_EINPUT, "%s:%s%s: no data", f->path, h5_lead(path), path);
    if ((rc = h5_check_new_path(f, path, err))) return rc;
    hid_t space = H5Screate_simple(rank, hd, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), lcpl = h5_make_lcpl(), d = -1;
    if (space < 0 || dcpl < 0 || lcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0) {
        rc = h5_fail(f, err, SC_EIO, path, "cannot set up dataset");
        goto done;
    }
    if (compress && total > 0 && total > SMALL_DATASET_BYTES / elsize) {
        pick_chunk(rank, hd, elsize, chunk);
        if (H5Pset_chunk(dcpl, rank, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, 4) < 0) {
            rc = h5_fail(f, err, SC_EIO, path, "cannot set up compression");
            goto done;
        }
    }
    d = H5Dcreate2(f->file, path, file_type, space, lcpl, dcpl, H5P_DEFAULT);
    if (d < 0) {
        rc = h5_fail(f, err, SC_EIO, path, "cannot create dataset");
        goto done;
    }
    if (total > 0 && H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
        rc = h5_fail(f, err, SC_EIO, path, "cannot write dataset");
        goto done;
    }
    if (h5_put_units_desc(d, units, description) < 0) rc = h5_fail(f, err, SC_EIO, path, "cannot write attributes");
done:
    h5_close_id(d);
    h5_close_id(space);
    h5_close_id(dcpl);
    h5_close_id(lcpl);
    return rc;
}

int sc_h5_write_f64(sc_h5 *f, const char *path, int rank, const size_t *dims, const double *data, const char *units, const char *description,
                    sc_err *err)
{
    h5_init();
    return h5_write_dataset(f, path, rank, dims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, data, units, description, 1, err);
}

int sc_h5_write_i32(sc_h5 *f, const char *path, int rank, const size_t *dims, const int *data, const char *description, sc_err *err)
{
    h5_init();
    return h5_write_dataset(f, path, rank, dims, H5T_STD_I32LE, H5T_NATIVE_INT, data, NULL, description, 1, err);
}

int sc_h5_write_bytes(sc_h5 *f, const char *path, size_t n, const void *data, const char *description, sc_err *err)
{
    h5_init();
    return h5_write_dataset(f, path, 1, &n, H5T_STD_U8LE, H5T_NATIVE_UCHAR, data, NULL, description, 0, err);
}

/* ------------------------------------------------------------------------------------------ */
/* reading */

int sc_h5_exists(sc_h5 *f, const char *path)
{
    if (!f || f->file < 0) return 0;
    return h5_path_exists(f->file, path);
}

void h5_dataset_close(h5_dataset *d)
{
    h5_close_id(d->type);
    h5_close_id(d->space);
    h5_close_id(d->dset);
    d->dset = d->type = d->space = -1;
}

/* Open a dataset and read its class and shape. On an object that is not a dataset, say so
 * against `expected`. */
int h5_dataset_open(sc_h5 *f, const char *path, const char *expected, h5_dataset *d, sc_err *err)
{
    d->dset = d->type = d->space = -1;
    if (!f || f->file < 0) return sc_fail(err, SC_EIO, "HDF5: no file");
    if (!path || !path[0]) return sc_fail(err, SC_EINPUT, "%s: empty HDF5 path", f->path);
    hid_t o = h5_open_obj(f, path, err);
    if (o < 0) return err ? err->code : SC_EINPUT;
    H5I_type_t it = H5Iget_type(o);
    if (it != H5I_DATASET) {
        H5Oclose(o);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: expected %s, found a %s", f->path, h5_lead(path), path, expected,
                       it == H5I_GROUP ? "group" : "named datatype");
    }
    d->dset = o;
    d->type = H5Dget_type(o);
    d->space = H5Dget_space(o);
    if (d->type < 0 || d->space < 0) {
        int rc = h5_fail(f, err, SC_EIO, path, "cannot inspect dataset");
        h5_dataset_close(d);
        return rc;
    }
    d->cls = H5Tget_class(d->type);
    d->rank = H5Sget_simple_extent_ndims(d->space);
    if (d->rank < 0) d->rank = 0;
    H5Sget_simple_extent_dims(d->space, d->dims, NULL);
    return SC_OK;
}

/* Number of elements of an open dataset, checked before anything is allocated: the product
 * of its dims must not overflow, fit in memory as elsize-byte values, and be backed by the
 * bytes the file stores for it (deflate cannot shrink data more than ~1032:1), so a damaged
 * header claiming 2^62 rows is an error naming the path, not a wrapped count or a huge
 * allocation. A dataset with elements but no storage (never written) is an error too. */
int h5_dataset_elements(const sc_h5 *f, const char *path, const h5_dataset *d, size_t elsize, size_t *total, sc_err *err)
{
    size_t n = 1;
    for (int i = 0; i < d->rank; i++) {
        if (d->dims[i] > SIZE_MAX || (d->dims[i] && n > SIZE_MAX / elsize / (size_t)d->dims[i]))
            return sc_fail(err, SC_EINPUT, "%s:%s%s: dataset too large (its dimensions overflow)", f->path, h5_lead(path), path);
        n *= (size_t)d->dims[i];
    }
    if (n > SC_H5_MAX_ELEMENTS)
        return sc_fail(err, SC_EINPUT, "%s:%s%s: %zu elements, more than softcon reads from one dataset (%llu)", f->path, h5_lead(path), path, n,
                       (unsigned long long)SC_H5_MAX_ELEMENTS);
    hid_t dcpl = H5Dget_create_plist(d->dset);
    int is_view = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL; /* a view stores nothing itself */
    h5_close_id(dcpl);
    if (n > 0 && !is_view) {
        hsize_t stored = H5Dget_storage_size(d->dset);
        H5Eclear2(H5E_DEFAULT);
        size_t mem = n * H5Tget_size(d->type);
        if (stored == 0 || (mem > 4096 && mem / 1100 > stored))
            return sc_fail(err, SC_EINPUT,
                           "%s:%s%s: damaged: its shape claims %zu elements (%zu bytes) but the file stores "
                           "%llu bytes for it",
                           f->path, h5_lead(path), path, n, mem, (unsigned long long)stored);
    }
    *total = n;
    return SC_OK;
}

/* Common part of read_f64/read_i32: open, check class/rank/dims, allocate. */
static int read_numeric_prepare(sc_h5 *f, const char *path, int rank, size_t *dims_inout, int want_int, h5_dataset *d, size_t *total, sc_err *err)
{
    char expected[256], found[256];
    if (rank < 1 || rank > 3 || !dims_inout)
        return sc_fail(err, SC_EINPUT, "%s:%s%s: read rank %d not in 1..3", f ? f->path : "?", h5_lead(path), path ? path : "", rank);
    describe_expected(expected, sizeof expected, rank, dims_inout, want_int ? "integer" : "numeric");
    int rc = h5_dataset_open(f, path, expected, d, err);
    if (rc) return rc;
    int ok = (d->cls == H5T_INTEGER || (!want_int && d->cls == H5T_FLOAT)) && d->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = !dims_inout[i] || dims_inout[i] == d->dims[i];
    if (!ok) {
        h5_describe_found(found, sizeof found, d->cls, d->rank, d->dims);
        h5_dataset_close(d);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: expected %s, found %s", f->path, h5_lead(path), path, expected, found);
    }
    rc = h5_dataset_elements(f, path, d, want_int ? sizeof(long long) : sizeof(double), total, err);
    if (rc) h5_dataset_close(d); /* was left open: one datatype identifier per damaged shape, for the process's life */
    return rc;
}

int sc_h5_read_f64(sc_h5 *f, const char *path, int rank, size_t *dims_inout, double **data, sc_err *err)
{
    h5_init();
    if (data) *data = NULL;
    if (!data) return sc_fail(err, SC_EINPUT, "sc_h5_read_f64: no output");
    h5_dataset d;
    size_t total;
    int rc = read_numeric_prepare(f, path, rank, dims_inout, 0, &d, &total, err);
    if (rc) return rc;
    double *buf = sc_alloc(err, total, sizeof *buf);
    if (!buf) rc = SC_EIO;
    else if (total && H5Dread(d.dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        rc = h5_fail(f, err, SC_EIO, path, "cannot read dataset");
    h5_dataset_close(&d);
    if (rc) {
        free(buf);
        return rc;
    }
    for (int i = 0; i < rank; i++) dims_inout[i] = (size_t)d.dims[i];
    *data = buf;
    return SC_OK;
}

int sc_h5_read_bytes(sc_h5 *f, const char *path, size_t *n, unsigned char **data, sc_err *err)
{
    h5_init();
    *data = NULL;
    h5_dataset d;
    size_t total, dims[1] = {0};
    int rc = read_numeric_prepare(f, path, 1, dims, 1, &d, &total, err);
    if (rc) return rc;
    if (H5Tget_size(d.type) != 1 || H5Tget_sign(d.type) != H5T_SGN_NONE) {
        h5_dataset_close(&d);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: expected unsigned bytes", f->path, h5_lead(path), path);
    }
    unsigned char *buf = sc_alloc(err, total ? total : 1, 1);
    if (!buf) rc = SC_EIO;
    else if (total && H5Dread(d.dset, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        rc = h5_fail(f, err, SC_EIO, path, "cannot read dataset");
    h5_dataset_close(&d);
    if (rc) {
        free(buf);
        return rc;
    }
    *n = total;
    *data = buf;
    return SC_OK;
}

int sc_h5_read_i32(sc_h5 *f, const char *path, int rank, size_t *dims_inout, int **data, sc_err *err)
{
    h5_init();
    if (data) *data = NULL;
    if (!data) return sc_fail(err, SC_EINPUT, "sc_h5_read_i32: no output");
    h5_dataset d;
    size_t total;
    int rc = read_numeric_prepare(f, path, rank, dims_inout, 1, &d, &total, err);
    if (rc) return rc;
    int *buf = sc_alloc(err, total, sizeof *buf);
    /* Wider integers go through long long so out-of-range values are an error, not clipped. */
    int wide = H5Tget_size(d.type) > 4 || (H5Tget_size(d.type) == 4 && H5Tget_sign(d.type) == H5T_SGN_NONE);
    long long *wbuf = wide ? sc_alloc(err, total, sizeof *wbuf) : NULL;
    if (!buf || (wide && !wbuf)) {
        rc = SC_EIO;
    } else if (total && !wide) {
        if (H5Dread(d.dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) rc = h5_fail(f, err, SC_EIO, path, "cannot read dataset");
    } else if (total) {
        if (H5Dread(d.dset, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, wbuf) < 0) {
            rc = h5_fail(f, err, SC_EIO, path, "cannot read dataset");
        } else {
            for (size_t i = 0; i < total && rc == SC_OK; i++) {
                if (wbuf[i] < INT_MIN || wbuf[i] > INT_MAX)
                    rc = sc_fail(err, SC_EINPUT, "%s:%s%s: element %zu = %lld does not fit a 32-bit integer", f->path, h5_lead(path), path, i,
                                 wbuf[i]);
                buf[i] = (int)wbuf[i];
            }
        }
    }
    free(wbuf);
    h5_dataset_close(&d);
    if (rc) {
        free(buf);
        return rc;
    }
    for (int i = 0; i < rank; i++) dims_inout[i] = (size_t)d.dims[i];
    *data = buf;
    return SC_OK;
}

int sc_h5_create_from(const char *src, const char *path, sc_h5 **out, sc_err *err)
{
    h5_init();
    *out = NULL;
    sc_h5 *probe;
    int rc = sc_h5_open(src, &probe, err); /* same checks and messages as reading */
    if (rc) return rc;
    sc_h5_close(probe);
    sc_h5 *f = h5_new(path, err);
    if (!f) return SC_EIO;
    int in = open(src, O_RDONLY), outfd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (outfd >= 0) sc_cleanup_add(f->tmp, SC_CLEANUP_TEMP);
    if (in < 0 || outfd < 0) {
        rc = sc_fail(err, SC_EIO, "%s: cannot copy %s: %s", path, src, strerror(errno));
    } else {
        char buf[1 << 16];
        ssize_t got;
        while ((got = read(in, buf, sizeof buf)) > 0) {
            ssize_t put = write(outfd, buf, (size_t)got);
            if (put != got) {
                if (put >= 0) errno = ENOSPC; /* a short write: the device is full */
                got = -1;
                break;
            }
        }
        if (got < 0) rc = sc_fail(err, SC_EIO, "%s: cannot copy %s: %s", path, src, strerror(errno));
    }
    if (in >= 0) close(in);
    if (outfd >= 0) close(outfd);
    if (!rc) {
        hid_t fapl = make_fapl();
        f->file = fapl >= 0 ? H5Fopen(f->tmp, H5F_ACC_RDWR, fapl) : -1;
        h5_close_id(fapl);
        if (f->file < 0) {
            char reason[512];
            h5_reason(reason, sizeof reason);
            rc = sc_fail(err, SC_EIO, "%s: cannot open %s for writing: %s", path, f->tmp, reason);
        }
    }
    if (rc) {
        unlink(f->tmp);
        sc_cleanup_forget(f->tmp);
        h5_free(f);
        return rc;
    }
    f->writable = 1;
    *out = f;
    return SC_OK;
}

int sc_h5_delete(sc_h5 *f, const char *path, sc_err *err)
{
    if (!f->writable) return sc_fail(err, SC_EIO, "%s: opened read-only", f->path);
    if (H5Lexists(f->file, path, H5P_DEFAULT) <= 0) return SC_OK;
    if (H5Ldelete(f->file, path, H5P_DEFAULT) < 0) {
        char reason[512];
        h5_reason(reason, sizeof reason);
        return sc_fail(err, SC_EIO, "%s:%s: cannot delete: %s", f->path, path, reason);
    }
    return SC_OK;
}

int sc_h5_shape(sc_h5 *f, const char *path, int *rank, size_t dims[3], sc_err *err)
{
    h5_init();
    h5_dataset d;
    int rc = h5_dataset_open(f, path, "a dataset", &d, err);
    if (rc) return rc;
    if (d.rank > 3) {
        char found[256];
        h5_describe_found(found, sizeof found, d.cls, d.rank, d.dims);
        h5_dataset_close(&d);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: expected at most 3 dimensions, found %s", f->path, h5_lead(path), path, found);
    }
    *rank = d.rank;
    for (int i = 0; i < 3; i++) dims[i] = i < d.rank ? (size_t)d.dims[i] : 0;
    h5_dataset_close(&d);
    return SC_OK;
}

int sc_h5_read_f64_rows(sc_h5 *f, const char *path, int rank, size_t *dims_inout, size_t row0, size_t nrows, double *out, sc_err *err)
{
    h5_init();
    if (!out || !dims_inout) return sc_fail(err, SC_EINPUT, "sc_h5_read_f64_rows: no output");
    size_t want[3] = {0, 0, 0};
    for (int i = 1; i < rank && i < 3; i++) want[i] = dims_inout[i];
    h5_dataset d;
    size_t total;
    int rc = read_numeric_prepare(f, path, rank, want, 0, &d, &total, err);
    if (rc) return rc;
    if (row0 + nrows > (size_t)d.dims[0] || row0 + nrows < row0) {
        h5_dataset_close(&d);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: rows %zu..%zu requested, the dataset has %llu", f->path, h5_lead(path), path, row0, row0 + nrows,
                       (unsigned long long)d.dims[0]);
    }
    if (nrows) {
        hsize_t start[3] = {row0, 0, 0}, count[3];
        for (int i = 0; i < rank; i++) count[i] = i ? d.dims[i] : nrows;
        hid_t mem = H5Screate_simple(rank, count, NULL);
        if (mem < 0 || H5Sselect_hyperslab(d.space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Dread(d.dset, H5T_NATIVE_DOUBLE, mem, d.space, H5P_DEFAULT, out) < 0)
            rc = h5_fail(f, err, SC_EIO, path, "cannot read dataset");
        h5_close_id(mem);
    }
    h5_dataset_close(&d);
    if (rc) return rc;
    for (int i = 0; i < rank; i++) dims_inout[i] = (size_t)d.dims[i];
    return SC_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* in-memory images */

static int has_signature(const unsigned char *d, size_t n)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    /* the superblock is at 0 or after a user block of 512, 1024, 2048, ... bytes */
    for (size_t off = 0; off + 8 <= n; off = off ? off * 2 : 512)
        if (!memcmp(d + off, sig, 8)) return 1;
    return 0;
}

int sc_h5_open_image(const void *data, size_t size, const char *name, sc_h5 **out, sc_err *err)
{
    h5_init();
    if (out) *out = NULL;
    if (!name) name = "<memory>";
    if (!out || (!data && size)) return sc_fail(err, SC_EIO, "sc_h5_open_image: no image");
    if (!has_signature(data, size)) return sc_fail(err, SC_EINPUT, "%s: not an HDF5 file", name);
    sc_h5 *f = h5_new(name, err);
    if (!f) return SC_EIO;
    hid_t fapl = make_fapl();
    if (fapl >= 0 && (H5Pset_fapl_core(fapl, 1 << 16, 0) < 0 || H5Pset_file_image(fapl, (void *)data, size) < 0)) {
        h5_close_id(fapl);
        fapl = -1;
    }
    /* libhdf5's core driver takes an open file of the same name for the same file (H5Fopen then
       shares it and ignores the image), so every image gets a name of its own: two images open
       at once, or whatever a damaged image left behind in libhdf5 (a file it failed to close),
       can never answer for a later image. Messages name the caller's `name`. */
    static unsigned long opened;
    char own[96];
    snprintf(own, sizeof own, "softcon-image-%ld-%lu.h5", (long)getpid(), ++opened);
    f->file = fapl >= 0 ? H5Fopen(own, H5F_ACC_RDONLY, fapl) : -1;
    int rc = SC_OK;
    if (f->file < 0) {
        char reason[512];
        h5_reason(reason, sizeof reason);
        rc = sc_fail(err, SC_EINPUT, "%s: damaged HDF5 file: cannot open it: %s", name, reason);
    }
    h5_close_id(fapl);
    if (rc) {
        h5_free(f);
        return rc;
    }
    f->image = data;
    f->image_size = size;
    *out = f;
    return SC_OK;
}
/* ------------------------------------------------------------------------------------------ */
/* views */

int sc_h5_write_view(sc_h5 *f, const char *path, const char *src_path, int axis, size_t index, const char *units, const char *description,
                     sc_err *err)
{
    h5_init();
    int rc = h5_check_writable(f, path, err);
    if (rc) return rc;
    if (!src_path || src_path[0] != '/')
        return sc_fail(err, SC_EINPUT, "%s:%s%s: view source '%s' is not an absolute HDF5 path", f->path, h5_lead(path), path,
                       src_path ? src_path : "");
    h5_dataset s;
    if ((rc = h5_dataset_open(f, src_path, "a dataset", &s, err))) return rc;
    if (s.rank < 2 || s.rank > 3 || axis < 0 || axis >= s.rank || index >= s.dims[axis]) {
        char found[256];
        h5_describe_found(found, sizeof found, s.cls, s.rank, s.dims);
        h5_dataset_close(&s);
        return sc_fail(err, SC_EINPUT, "%s:%s: no index %zu along dimension %d of a %s (views need rank 2 or 3)", f->path, src_path, index, axis,
                       found);
    }
    if ((rc = h5_check_new_path(f, path, err))) {
        h5_dataset_close(&s);
        return rc;
    }
    hsize_t vdims[2], start[3] = {0, 0, 0}, count[3];
    for (int i = 0, k = 0; i < s.rank; i++) {
        count[i] = i == axis ? 1 : s.dims[i];
        if (i == axis) start[i] = index;
        else vdims[k++] = s.dims[i];
    }
    hid_t vspace = H5Screate_simple(s.rank - 1, vdims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), lcpl = h5_make_lcpl(), d = -1;
    if (vspace < 0 || dcpl < 0 || lcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0 ||
        H5Sselect_hyperslab(s.space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 || H5Pset_virtual(dcpl, vspace, ".", src_path, s.space) < 0) {
        rc = h5_fail(f, err, SC_EIO, path, "cannot set up view");
        goto done;
    }
    d = H5Dcreate2(f->file, path, s.type, vspace, lcpl, dcpl, H5P_DEFAULT);
    if (d < 0) {
        rc = h5_fail(f, err, SC_EIO, path, "cannot create view");
        goto done;
    }
    if (h5_put_units_desc(d, units, description) < 0) rc = h5_fail(f, err, SC_EIO, path, "cannot write attributes");
done:
    h5_close_id(d);
    h5_close_id(vspace);
    h5_close_id(dcpl);
    h5_close_id(lcpl);
    h5_dataset_close(&s);
    return rc;
}

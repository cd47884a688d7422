/* HDF5 layer (serial HDF5 1.10, core library only: the dimension-scale convention is written
 * by hand because libhdf5_hl is not linked). Every hid_t is closed on every path; HDF5's own
 * error printing is off and failures become sc_err messages. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <hdf5.h>
#include "core/cleanup.h"
#include "core/log.h"
#include "io/h5.h"

#ifndef SC_VERSION
#define SC_VERSION "0.0.0"
#endif
#ifndef SC_GIT_REV
#define SC_GIT_REV "unknown"
#endif

#define SMALL_DATASET_BYTES (64u * 1024u)  /* above this: chunked + compressed */
#define CHUNK_TARGET_BYTES (1024u * 1024u) /* fits HDF5's default 1 MiB chunk cache */
#define SERIES_MAX_ROWS 256
#define MAX_SERIES_RANK 4

struct sc_h5_series {
    sc_h5_series *next;
    sc_h5 *file;
    hid_t dset;
    char *path;
    int is_int, is_scale;
    int rank;                       /* dataset rank = 1 + sample rank */
    hsize_t dims[MAX_SERIES_RANK];  /* dims[0] unused; the rest: sample dims */
    size_t sample_bytes;
    size_t rows;                    /* samples per chunk = buffer capacity */
    size_t nbuf;                    /* samples in the buffer */
    size_t nflushed;                /* of those, already written to the file */
    hsize_t start;                  /* time index of buffer row 0 (a chunk boundary) */
    unsigned char *buf;
    /* timelines only: datasets attached to this scale (REFERENCE_LIST) */
    hobj_ref_t *attached;
    size_t nattached;
};

struct sc_h5 {
    hid_t file;
    int writable;
    char *path, *tmp;
    sc_h5_series *series;
    const unsigned char *image; /* sc_h5_open_image: the caller's bytes (read directly by read_vlen_direct) */
    size_t image_size;
};

/* One entry of the H5DS REFERENCE_LIST attribute. */
typedef struct {
    hobj_ref_t ref;
    int dim;
} reflist_entry;

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

static void h5_init(void)
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

static const char *lead(const char *path) { return path && path[0] == '/' ? "" : "/"; }

/* "file:/path: what: <HDF5 reason>" */
static int fail_h5(const sc_h5 *f, sc_err *err, int code, const char *path, const char *what)
{
    char reason[512];
    h5_reason(reason, sizeof reason);
    return sc_fail(err, code, "%s:%s%s: %s: %s", f->path, lead(path), path, what, reason);
}

static int check_writable(const sc_h5 *f, const char *path, sc_err *err)
{
    if (!f) return sc_fail(err, SC_EIO, "HDF5: no file");
    if (!path || !path[0]) return sc_fail(err, SC_EINPUT, "%s: empty HDF5 path", f->path);
    if (!f->writable) return sc_fail(err, SC_EIO, "%s:%s%s: file is open read-only", f->path, lead(path), path);
    return SC_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* small HDF5 helpers */

/* Close any kind of id. A pending error stack survives the close, so a failure's reason can
 * still be read after cleaning up. */
static void close_id(hid_t id)
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

static hid_t vlen_str_type(void)
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
static hid_t make_lcpl(void)
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
static int path_exists(hid_t file, const char *path)
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
    if (ok && H5Oexists_by_name(file, path, H5P_DEFAULT) <= 0) ok = 0;  /* dangling soft link */
    free(p);
    H5Eclear2(H5E_DEFAULT);
    return ok;
}

/* Before creating an object at path: it must not exist and every existing parent must be a
 * group (HDF5's own message for a dataset parent is "message type not found"). */
static int check_new_path(const sc_h5 *f, const char *path, sc_err *err)
{
    size_t len = strlen(path);
    char *p = malloc(len + 1);
    if (!p) return sc_fail(err, SC_EIO, "out of memory");
    memcpy(p, path, len + 1);
    int rc = SC_OK;
    for (size_t i = 1; i < len && rc == SC_OK; i++) {
        if (p[i] != '/') continue;
        p[i] = 0;
        if (path_exists(f->file, p)) {
            hid_t o = H5Oopen(f->file, p, H5P_DEFAULT);
            H5I_type_t t = o >= 0 ? H5Iget_type(o) : H5I_BADID;
            if (o >= 0) H5Oclose(o);
            if (t != H5I_GROUP)
                rc = sc_fail(err, SC_EINPUT, "%s:%s%s: cannot create: %s%s is not a group", f->path, lead(path), path,
                             lead(p), p);
        }
        p[i] = '/';
    }
    free(p);
    H5Eclear2(H5E_DEFAULT);
    if (rc == SC_OK && path_exists(f->file, path))
        rc = sc_fail(err, SC_EINPUT, "%s:%s%s: already exists", f->path, lead(path), path);
    return rc;
}

/* Write a scalar (space) attribute, replacing an existing one of that name. */
static herr_t put_attr(hid_t obj, const char *name, hid_t type, hid_t space, const void *buf)
{
    if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0) return -1;
    hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0) return -1;
    herr_t r = H5Awrite(a, type, buf);
    close_id(a);
    return r;
}

static herr_t put_attr_str(hid_t obj, const char *name, const char *value)
{
    hid_t t = vlen_str_type(), s = H5Screate(H5S_SCALAR);
    herr_t r = -1;
    if (t >= 0 && s >= 0) r = put_attr(obj, name, t, s, &value);
    close_id(t);
    close_id(s);
    return r;
}

/* Fixed-length ASCII string attribute: the form the H5DS convention uses for CLASS/NAME. */
static herr_t put_attr_fixed_str(hid_t obj, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR);
    herr_t r = -1;
    if (t >= 0 && s >= 0 && H5Tset_size(t, strlen(value) + 1) >= 0 && H5Tset_strpad(t, H5T_STR_NULLTERM) >= 0)
        r = put_attr(obj, name, t, s, value);
    close_id(t);
    close_id(s);
    return r;
}

static herr_t put_units_desc(hid_t obj, const char *units, const char *description)
{
    if (units && put_attr_str(obj, "units", units) < 0) return -1;
    if (description && put_attr_str(obj, "description", description) < 0) return -1;
    return 0;
}

static const char *class_name(H5T_class_t c)
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
static void describe_found(char *buf, size_t n, H5T_class_t cls, int rank, const hsize_t *dims)
{
    if (rank == 0) {
        snprintf(buf, n, "scalar %s", class_name(cls));
        return;
    }
    size_t k = (size_t)snprintf(buf, n, "%d-D %s of shape ", rank, class_name(cls));
    for (int i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? " x %llu" : "%llu", (unsigned long long)dims[i]);
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
    f->tmp = malloc(len + 5);
    if (!f->path || !f->tmp) {
        free(f->path);
        free(f->tmp);
        free(f);
        sc_fail(err, SC_EIO, "out of memory");
        return NULL;
    }
    memcpy(f->path, path, len + 1);
    snprintf(f->tmp, len + 5, "%s.tmp", path);
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
    int fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
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
    close_id(fapl);
    close_id(fcpl);
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

static void series_free_all(sc_h5 *f)
{
    sc_h5_series *s = f->series;
    while (s) {
        sc_h5_series *next = s->next;
        close_id(s->dset);
        free(s->buf);
        free(s->path);
        free(s->attached);
        free(s);
        s = next;
    }
    f->series = NULL;
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
        rc = sc_fail(err, SC_EIO, "%s: cannot %s %s: %s", f->path, f->writable ? "finish writing" : "close",
                     f->writable ? f->tmp : f->path, reason);
    }
    f->file = -1;
    return rc;
}

static int series_write(sc_h5_series *s, sc_err *err);

int sc_h5_commit(sc_h5 *f, sc_err *err)
{
    if (!f) return sc_fail(err, SC_EIO, "sc_h5_commit: no file");
    if (!f->writable) {
        sc_h5_close(f);
        return sc_fail(err, SC_EIO, "sc_h5_commit: file was opened read-only");
    }
    int rc = SC_OK;
    for (sc_h5_series *s = f->series; s && rc == SC_OK; s = s->next) rc = series_write(s, err);
    series_free_all(f);
    int rc2 = close_file(f, rc == SC_OK ? err : NULL);
    if (rc == SC_OK) rc = rc2;
    if (rc == SC_OK) {
        /* fsync before rename so the rename never exposes a file whose data is still in flight */
        int fd = open(f->tmp, O_RDONLY);
        if (fd < 0 || fsync(fd) != 0)
            rc = sc_fail(err, SC_EIO, "%s: cannot sync %s: %s", f->path, f->tmp, strerror(errno));
        if (fd >= 0) close(fd);
    }
    if (rc == SC_OK && rename(f->tmp, f->path) != 0)
        rc = sc_fail(err, SC_EIO, "%s: cannot rename %s onto it: %s", f->path, f->tmp, strerror(errno));
    if (rc != SC_OK) unlink(f->tmp);
    sc_cleanup_forget(f->tmp);
    h5_free(f);
    return rc;
}

void sc_h5_abort(sc_h5 *f)
{
    if (!f) return;
    series_free_all(f);
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
    close_id(fapl);
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

long sc_h5_live_ids(void)
{
    h5_init();
    ssize_t n = H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL);
    H5Eclear2(H5E_DEFAULT);
    return n < 0 ? -1 : (long)n;
}

/* ------------------------------------------------------------------------------------------ */
/* groups, attributes, provenance */

/* Open the object at obj_path; on failure a "missing" message. */
static hid_t open_obj(sc_h5 *f, const char *obj_path, sc_err *err)
{
    if (!path_exists(f->file, obj_path)) {
        sc_fail(err, SC_EINPUT, "%s:%s%s: missing", f->path, lead(obj_path), obj_path);
        return -1;
    }
    hid_t o = H5Oopen(f->file, obj_path, H5P_DEFAULT);
    if (o < 0) fail_h5(f, err, SC_EINPUT, obj_path, "cannot open");
    return o;
}

int sc_h5_group(sc_h5 *f, const char *path, const char *description, sc_err *err)
{
    int rc = check_writable(f, path, err);
    if (rc) return rc;
    hid_t g = -1, lcpl = -1, gcpl = -1;
    if (path_exists(f->file, path)) {
        g = H5Oopen(f->file, path, H5P_DEFAULT);
        if (g < 0) return fail_h5(f, err, SC_EIO, path, "cannot open group");
        if (H5Iget_type(g) != H5I_GROUP) {
            H5Oclose(g);
            return sc_fail(err, SC_EINPUT, "%s:%s%s: exists and is not a group", f->path, lead(path), path);
        }
    } else {
        if ((rc = check_new_path(f, path, err))) return rc;
        lcpl = make_lcpl();
        gcpl = H5Pcreate(H5P_GROUP_CREATE);
        if (lcpl >= 0 && gcpl >= 0) H5Pset_obj_track_times(gcpl, 0);
        g = lcpl >= 0 && gcpl >= 0 ? H5Gcreate2(f->file, path, lcpl, gcpl, H5P_DEFAULT) : -1;
        if (g < 0) rc = fail_h5(f, err, SC_EIO, path, "cannot create group");
    }
    if (rc == SC_OK && put_units_desc(g, NULL, description) < 0)
        rc = fail_h5(f, err, SC_EIO, path, "cannot write description");
    close_id(g);
    close_id(lcpl);
    close_id(gcpl);
    return rc;
}

/* Write one attribute of (type, space) on obj_path. */
static int attr_write(sc_h5 *f, const char *obj_path, const char *name, hid_t type, hid_t space, const void *buf,
                      sc_err *err)
{
    int rc = check_writable(f, obj_path, err);
    if (rc) return rc;
    if (!name || !name[0]) return sc_fail(err, SC_EINPUT, "%s:%s%s: empty attribute name", f->path, lead(obj_path), obj_path);
    if (type < 0 || space < 0) return fail_h5(f, err, SC_EIO, obj_path, "cannot create attribute type");
    hid_t o = open_obj(f, obj_path, err);
    if (o < 0) return err ? err->code : SC_EINPUT;
    if (put_attr(o, name, type, space, buf) < 0) {
        char what[300];
        snprintf(what, sizeof what, "cannot write attribute '%s'", name);
        rc = fail_h5(f, err, SC_EIO, obj_path, what);
    }
    H5Oclose(o);
    return rc;
}

int sc_h5_attr_str(sc_h5 *f, const char *obj_path, const char *name, const char *value, sc_err *err)
{
    h5_init();
    const char *v = value ? value : "";
    hid_t t = vlen_str_type(), s = H5Screate(H5S_SCALAR);
    int rc = attr_write(f, obj_path, name, t, s, &v, err);
    close_id(t);
    close_id(s);
    return rc;
}

int sc_h5_attr_f64(sc_h5 *f, const char *obj_path, const char *name, double value, sc_err *err)
{
    h5_init();
    hid_t s = H5Screate(H5S_SCALAR);
    int rc = attr_write(f, obj_path, name, H5T_NATIVE_DOUBLE, s, &value, err);
    close_id(s);
    return rc;
}

int sc_h5_attr_i64(sc_h5 *f, const char *obj_path, const char *name, long long value, sc_err *err)
{
    h5_init();
    hid_t s = H5Screate(H5S_SCALAR);
    int rc = attr_write(f, obj_path, name, H5T_NATIVE_LLONG, s, &value, err);
    close_id(s);
    return rc;
}

int sc_h5_attr_f64_array(sc_h5 *f, const char *obj_path, const char *name, size_t n, const double *v, sc_err *err)
{
    h5_init();
    if (n > 0 && !v) return sc_fail(err, SC_EINPUT, "sc_h5_attr_f64_array: no values");
    hsize_t d = n;
    hid_t s = n ? H5Screate_simple(1, &d, NULL) : H5Screate(H5S_NULL);
    double none = 0; /* HDF5 wants a buffer even for an empty attribute */
    int rc = attr_write(f, obj_path, name, H5T_NATIVE_DOUBLE, s, n ? (const void *)v : &none, err);
    close_id(s);
    return rc;
}

/* Characters a POSIX shell passes through unquoted. */
static int shell_safe(const char *a)
{
    if (!a[0]) return 0;
    for (const char *p = a; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("_-+=:,./@%", c)))
            return 0;
    }
    return 1;
}

/* argv joined with spaces, single-quoting arguments that need it ('it'\''s'). */
static char *join_command_line(int argc, char *const *argv)
{
    size_t cap = 1;
    for (int i = 0; i < argc; i++) cap += 4 * strlen(argv[i] ? argv[i] : "") + 3;
    char *s = malloc(cap), *p = s;
    if (!s) return NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i] ? argv[i] : "";
        if (i) *p++ = ' ';
        if (shell_safe(a)) {
            size_t l = strlen(a);
            memcpy(p, a, l);
            p += l;
            continue;
        }
        *p++ = '\'';
        for (const char *q = a; *q; q++) {
            if (*q == '\'') {
                memcpy(p, "'\\''", 4);
                p += 4;
            } else {
                *p++ = *q;
            }
        }
        *p++ = '\'';
    }
    *p = 0;
    return s;
}

int sc_h5_provenance(sc_h5 *f, const char *schema, int argc, char *const *argv, const char *config_text,
                     sc_err *err)
{
    int rc = check_writable(f, "/", err);
    if (rc) return rc;
    char version[128], stamp[32], host[256];
    snprintf(version, sizeof version, "%s+%s", SC_VERSION, SC_GIT_REV);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = 0;
    char *cmd = join_command_line(argc > 0 && argv ? argc : 0, argv);
    if (!cmd) return sc_fail(err, SC_EIO, "out of memory");
    if ((rc = sc_h5_attr_str(f, "/", "softcon_version", version, err)) == SC_OK &&
        (rc = sc_h5_attr_str(f, "/", "schema", schema ? schema : "", err)) == SC_OK &&
        (rc = sc_h5_attr_str(f, "/", "created_by", cmd, err)) == SC_OK &&
        (rc = sc_h5_attr_str(f, "/", "created_at", stamp, err)) == SC_OK &&
        (rc = sc_h5_attr_str(f, "/", "host", host, err)) == SC_OK && config_text)
        rc = sc_h5_attr_str(f, "/", "config", config_text, err);
    free(cmd);
    return rc;
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

static int write_dataset(sc_h5 *f, const char *path, int rank, const size_t *dims, hid_t file_type, hid_t mem_type,
                         const void *data, const char *units, const char *description, int compress, sc_err *err)
{
    int rc = check_writable(f, path, err);
    if (rc) return rc;
    if (rank < 1 || rank > 3 || !dims)
        return sc_fail(err, SC_EINPUT, "%s:%s%s: dataset rank %d not in 1..3", f->path, lead(path), path, rank);
    hsize_t hd[3], chunk[3];
    size_t total = 1, elsize = H5Tget_size(file_type);
    for (int i = 0; i < rank; i++) {
        hd[i] = dims[i];
        if (dims[i] && total > SIZE_MAX / dims[i])
            return sc_fail(err, SC_EINPUT, "%s:%s%s: dataset too large", f->path, lead(path), path);
        total *= dims[i];
    }
    if (total > 0 && !data) return sc_fail(err, SC_EINPUT, "%s:%s%s: no data", f->path, lead(path), path);
    if ((rc = check_new_path(f, path, err))) return rc;
    hid_t space = H5Screate_simple(rank, hd, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), lcpl = make_lcpl(), d = -1;
    if (space < 0 || dcpl < 0 || lcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0) {
        rc = fail_h5(f, err, SC_EIO, path, "cannot set up dataset");
        goto done;
    }
    if (compress && total > 0 && total > SMALL_DATASET_BYTES / elsize) {
        pick_chunk(rank, hd, elsize, chunk);
        if (H5Pset_chunk(dcpl, rank, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, 4) < 0) {
            rc = fail_h5(f, err, SC_EIO, path, "cannot set up compression");
            goto done;
        }
    }
    d = H5Dcreate2(f->file, path, file_type, space, lcpl, dcpl, H5P_DEFAULT);
    if (d < 0) {
        rc = fail_h5(f, err, SC_EIO, path, "cannot create dataset");
        goto done;
    }
    if (total > 0 && H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
        rc = fail_h5(f, err, SC_EIO, path, "cannot write dataset");
        goto done;
    }
    if (put_units_desc(d, units, description) < 0) rc = fail_h5(f, err, SC_EIO, path, "cannot write attributes");
done:
    close_id(d);
    close_id(space);
    close_id(dcpl);
    close_id(lcpl);
    return rc;
}

int sc_h5_write_f64(sc_h5 *f, const char *path, int rank, const size_t *dims, const double *data, const char *units,
                    const char *description, sc_err *err)
{
    h5_init();
    return write_dataset(f, path, rank, dims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, data, units, description, 1, err);
}

int sc_h5_write_i32(sc_h5 *f, const char *path, int rank, const size_t *dims, const int *data,
                    const char *description, sc_err *err)
{
    h5_init();
    return write_dataset(f, path, rank, dims, H5T_STD_I32LE, H5T_NATIVE_INT, data, NULL, description, 1, err);
}

int sc_h5_write_bytes(sc_h5 *f, const char *path, size_t n, const void *data, const char *description, sc_err *err)
{
    h5_init();
    return write_dataset(f, path, 1, &n, H5T_STD_U8LE, H5T_NATIVE_UCHAR, data, NULL, description, 0, err);
}

int sc_h5_write_strings(sc_h5 *f, const char *path, size_t n, const char *const *strs, const char *description,
                        sc_err *err)
{
    h5_init();
    if (n > 0 && !strs) return sc_fail(err, SC_EINPUT, "sc_h5_write_strings: no strings");
    const char **tmp = sc_alloc(err, n, sizeof *tmp);
    if (!tmp) return SC_EIO;
    for (size_t i = 0; i < n; i++) tmp[i] = strs[i] ? strs[i] : "";
    hid_t t = vlen_str_type();
    size_t dims[1] = {n};
    int rc = t < 0 ? fail_h5(f, err, SC_EIO, path, "cannot create string type")
                   : write_dataset(f, path, 1, dims, t, t, tmp, NULL, description, 1, err);
    close_id(t);
    free(tmp);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* time series */

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
        r = put_attr(scale->dset, "REFERENCE_LIST", t, s, e);
    close_id(t);
    close_id(s);
    free(e);
    return r;
}

/* Attach s's dim 0 to the timeline: DIMENSION_LIST on s, REFERENCE_LIST on the timeline. */
static int attach_scale(sc_h5 *f, sc_h5_series *s, sc_h5_series *scale, sc_err *err)
{
    hobj_ref_t scale_ref, ds_ref;
    if (H5Rcreate(&scale_ref, f->file, scale->path, H5R_OBJECT, -1) < 0 ||
        H5Rcreate(&ds_ref, f->file, s->path, H5R_OBJECT, -1) < 0)
        return fail_h5(f, err, SC_EIO, s->path, "cannot reference the time scale");
    hvl_t list[MAX_SERIES_RANK];
    for (int i = 0; i < s->rank; i++) {
        list[i].len = 0;
        list[i].p = NULL;
    }
    list[0].len = 1;
    list[0].p = &scale_ref;
    hsize_t n = (hsize_t)s->rank;
    hid_t t = H5Tvlen_create(H5T_STD_REF_OBJ), sp = H5Screate_simple(1, &n, NULL);
    herr_t r = t >= 0 && sp >= 0 ? put_attr(s->dset, "DIMENSION_LIST", t, sp, list) : -1;
    int rc = r < 0 ? fail_h5(f, err, SC_EIO, s->path, "cannot write DIMENSION_LIST") : SC_OK;
    close_id(t);
    close_id(sp);
    if (rc) return rc;
    hobj_ref_t *grown = realloc(scale->attached, (scale->nattached + 1) * sizeof *grown);
    if (!grown) return sc_fail(err, SC_EIO, "out of memory");
    scale->attached = grown;
    scale->attached[scale->nattached++] = ds_ref;
    if (write_reference_list(scale) < 0) return fail_h5(f, err, SC_EIO, scale->path, "cannot write REFERENCE_LIST");
    return SC_OK;
}

static int series_create(sc_h5 *f, const char *path, sc_h5_series *timeline, int sample_rank,
                         const size_t *sample_dims, int is_int, const char *units, const char *description,
                         sc_h5_series **out, sc_err *err)
{
    h5_init();
    if (out) *out = NULL;
    int rc = check_writable(f, path, err);
    if (rc) return rc;
    if (!out) return sc_fail(err, SC_EINPUT, "sc_h5_series_create: no output handle");
    if (sample_rank < 0 || sample_rank > MAX_SERIES_RANK - 1 || (sample_rank > 0 && !sample_dims))
        return sc_fail(err, SC_EINPUT, "%s:%s%s: sample rank %d not in 0..%d", f->path, lead(path), path, sample_rank,
                       MAX_SERIES_RANK - 1);
    if (timeline && (!timeline->is_scale || timeline->file != f))
        return sc_fail(err, SC_EINPUT, "%s:%s%s: the given timeline is not a time scale of this file", f->path,
                       lead(path), path);
    if ((rc = check_new_path(f, path, err))) return rc;
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
            return sc_fail(err, SC_EINPUT, "%s:%s%s: bad sample dimension %zu", f->path, lead(path), path,
                           sample_dims[i]);
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
    snprintf(s->path, plen + 2, "%s%s", lead(path), path);

    hsize_t cur[MAX_SERIES_RANK], max[MAX_SERIES_RANK], chunk[MAX_SERIES_RANK];
    cur[0] = 0;
    max[0] = H5S_UNLIMITED;
    chunk[0] = s->rows;
    for (int i = 1; i < s->rank; i++) cur[i] = max[i] = chunk[i] = s->dims[i];
    hid_t space = H5Screate_simple(s->rank, cur, max);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), lcpl = make_lcpl();
    if (space < 0 || dcpl < 0 || lcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0 ||
        H5Pset_chunk(dcpl, s->rank, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, 4) < 0) {
        rc = fail_h5(f, err, SC_EIO, path, "cannot set up series");
    } else {
        s->dset = H5Dcreate2(f->file, s->path, is_int ? H5T_STD_I32LE : H5T_IEEE_F64LE, space, lcpl, dcpl,
                             H5P_DEFAULT);
        if (s->dset < 0) rc = fail_h5(f, err, SC_EIO, path, "cannot create series");
    }
    close_id(space);
    close_id(dcpl);
    close_id(lcpl);
    if (rc == SC_OK && put_units_desc(s->dset, units, description) < 0)
        rc = fail_h5(f, err, SC_EIO, path, "cannot write attributes");
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
        return fail_h5(f, err, SC_EIO, time_path, "cannot mark as dimension scale");
    s->is_scale = 1;
    *out = s;
    return SC_OK;
}

int sc_h5_series_create(sc_h5 *f, const char *path, sc_h5_series *timeline, int sample_rank,
                        const size_t *sample_dims, const char *units, const char *description,
                        sc_h5_series **out, sc_err *err)
{
    return series_create(f, path, timeline, sample_rank, sample_dims, 0, units, description, out, err);
}

int sc_h5_series_create_i32(sc_h5 *f, const char *path, sc_h5_series *timeline, int sample_rank,
                            const size_t *sample_dims, const char *description, sc_h5_series **out, sc_err *err)
{
    return series_create(f, path, timeline, sample_rank, sample_dims, 1, NULL, description, out, err);
}

/* Write the buffered samples not yet in the file; when the buffer holds a whole chunk, start
 * the next one. Writing only unflushed rows keeps every chunk-aligned write a whole chunk in the
 * common (no mid-run flush) case. */
static int series_write(sc_h5_series *s, sc_err *err)
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
        rc = fail_h5(f, err, SC_EIO, s->path, "cannot extend series");
        goto done;
    }
    fs = H5Dget_space(s->dset);
    ms = H5Screate_simple(s->rank, cnt, NULL);
    if (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL) < 0 ||
        H5Dwrite(s->dset, s->is_int ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT,
                 s->buf + s->nflushed * s->sample_bytes) < 0) {
        rc = fail_h5(f, err, SC_EIO, s->path, "cannot write series samples");
        goto done;
    }
    s->nflushed = s->nbuf;
    if (s->nbuf == s->rows) {
        s->start += s->rows;
        s->nbuf = s->nflushed = 0;
    }
done:
    close_id(fs);
    close_id(ms);
    return rc;
}

static int series_append(sc_h5_series *s, const void *sample, int is_int, sc_err *err)
{
    if (!s || !sample) return sc_fail(err, SC_EINPUT, "series append: no series or sample");
    if (s->is_int != is_int)
        return sc_fail(err, SC_EINPUT, "%s:%s: series holds %s values", s->file->path, s->path,
                       s->is_int ? "integer" : "float");
    if (s->nbuf == s->rows) {  /* a previous chunk write failed: retry before reusing the buffer */
        int rc = series_write(s, err);
        if (rc) return rc;
    }
    memcpy(s->buf + s->nbuf * s->sample_bytes, sample, s->sample_bytes);
    s->nbuf++;
    return s->nbuf == s->rows ? series_write(s, err) : SC_OK;
}

int sc_h5_series_append(sc_h5_series *s, const double *sample, sc_err *err)
{
    return series_append(s, sample, 0, err);
}

int sc_h5_series_append_i32(sc_h5_series *s, const int *sample, sc_err *err)
{
    return series_append(s, sample, 1, err);
}

size_t sc_h5_series_length(const sc_h5_series *s) { return s ? (size_t)s->start + s->nbuf : 0; }

int sc_h5_flush(sc_h5 *f, sc_err *err)
{
    int rc = check_writable(f, "/", err);
    if (rc) return rc;
    for (sc_h5_series *s = f->series; s; s = s->next)
        if ((rc = series_write(s, err))) return rc;
    if (H5Fflush(f->file, H5F_SCOPE_LOCAL) < 0) return fail_h5(f, err, SC_EIO, "/", "cannot flush");
    return SC_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* reading */

int sc_h5_exists(sc_h5 *f, const char *path)
{
    if (!f || f->file < 0) return 0;
    return path_exists(f->file, path);
}

typedef struct {
    hid_t dset, type, space;
    H5T_class_t cls;
    int rank;
    hsize_t dims[H5S_MAX_RANK];
} dset_info;

static void info_close(dset_info *d)
{
    close_id(d->type);
    close_id(d->space);
    close_id(d->dset);
    d->dset = d->type = d->space = -1;
}

/* Open a dataset and read its class and shape. On an object that is not a dataset, say so
 * against `expected`. */
static int open_dataset(sc_h5 *f, const char *path, const char *expected, dset_info *d, sc_err *err)
{
    d->dset = d->type = d->space = -1;
    if (!f || f->file < 0) return sc_fail(err, SC_EIO, "HDF5: no file");
    if (!path || !path[0]) return sc_fail(err, SC_EINPUT, "%s: empty HDF5 path", f->path);
    hid_t o = open_obj(f, path, err);
    if (o < 0) return err ? err->code : SC_EINPUT;
    H5I_type_t it = H5Iget_type(o);
    if (it != H5I_DATASET) {
        H5Oclose(o);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: expected %s, found a %s", f->path, lead(path), path, expected,
                       it == H5I_GROUP ? "group" : "named datatype");
    }
    d->dset = o;
    d->type = H5Dget_type(o);
    d->space = H5Dget_space(o);
    if (d->type < 0 || d->space < 0) {
        int rc = fail_h5(f, err, SC_EIO, path, "cannot inspect dataset");
        info_close(d);
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
static int dataset_elements(const sc_h5 *f, const char *path, const dset_info *d, size_t elsize, size_t *total,
                            sc_err *err)
{
    size_t n = 1;
    for (int i = 0; i < d->rank; i++) {
        if (d->dims[i] > SIZE_MAX || (d->dims[i] && n > SIZE_MAX / elsize / (size_t)d->dims[i]))
            return sc_fail(err, SC_EINPUT, "%s:%s%s: dataset too large (its dimensions overflow)", f->path, lead(path), path);
        n *= (size_t)d->dims[i];
    }
    if (n > SC_H5_MAX_ELEMENTS)
        return sc_fail(err, SC_EINPUT, "%s:%s%s: %zu elements, more than softcon reads from one dataset (%llu)", f->path,
                       lead(path), path, n, (unsigned long long)SC_H5_MAX_ELEMENTS);
    hid_t dcpl = H5Dget_create_plist(d->dset);
    int is_view = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL; /* a view stores nothing itself */
    close_id(dcpl);
    if (n > 0 && !is_view) {
        hsize_t stored = H5Dget_storage_size(d->dset);
        H5Eclear2(H5E_DEFAULT);
        size_t mem = n * H5Tget_size(d->type);
        if (stored == 0 || (mem > 4096 && mem / 1100 > stored))
            return sc_fail(err, SC_EINPUT, "%s:%s%s: damaged: its shape claims %zu elements (%zu bytes) but the file stores "
                           "%llu bytes for it", f->path, lead(path), path, n, mem, (unsigned long long)stored);
    }
    *total = n;
    return SC_OK;
}

/* Common part of read_f64/read_i32: open, check class/rank/dims, allocate. */
static int read_numeric_prepare(sc_h5 *f, const char *path, int rank, size_t *dims_inout, int want_int,
                                dset_info *d, size_t *total, sc_err *err)
{
    char expected[256], found[256];
    if (rank < 1 || rank > 3 || !dims_inout)
        return sc_fail(err, SC_EINPUT, "%s:%s%s: read rank %d not in 1..3", f ? f->path : "?", lead(path),
                       path ? path : "", rank);
    describe_expected(expected, sizeof expected, rank, dims_inout, want_int ? "integer" : "numeric");
    int rc = open_dataset(f, path, expected, d, err);
    if (rc) return rc;
    int ok = (d->cls == H5T_INTEGER || (!want_int && d->cls == H5T_FLOAT)) && d->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = !dims_inout[i] || dims_inout[i] == d->dims[i];
    if (!ok) {
        describe_found(found, sizeof found, d->cls, d->rank, d->dims);
        info_close(d);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: expected %s, found %s", f->path, lead(path), path, expected, found);
    }
    rc = dataset_elements(f, path, d, want_int ? sizeof(long long) : sizeof(double), total, err);
    if (rc) info_close(d); /* was left open: one datatype identifier per damaged shape, for the process's life */
    return rc;
}

int sc_h5_read_f64(sc_h5 *f, const char *path, int rank, size_t *dims_inout, double **data, sc_err *err)
{
    h5_init();
    if (data) *data = NULL;
    if (!data) return sc_fail(err, SC_EINPUT, "sc_h5_read_f64: no output");
    dset_info d;
    size_t total;
    int rc = read_numeric_prepare(f, path, rank, dims_inout, 0, &d, &total, err);
    if (rc) return rc;
    double *buf = sc_alloc(err, total, sizeof *buf);
    if (!buf) rc = SC_EIO;
    else if (total && H5Dread(d.dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        rc = fail_h5(f, err, SC_EIO, path, "cannot read dataset");
    info_close(&d);
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
    dset_info d;
    size_t total, dims[1] = {0};
    int rc = read_numeric_prepare(f, path, 1, dims, 1, &d, &total, err);
    if (rc) return rc;
    if (H5Tget_size(d.type) != 1 || H5Tget_sign(d.type) != H5T_SGN_NONE) {
        info_close(&d);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: expected unsigned bytes", f->path, lead(path), path);
    }
    unsigned char *buf = sc_alloc(err, total ? total : 1, 1);
    if (!buf) rc = SC_EIO;
    else if (total && H5Dread(d.dset, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        rc = fail_h5(f, err, SC_EIO, path, "cannot read dataset");
    info_close(&d);
    if (rc) { free(buf); return rc; }
    *n = total;
    *data = buf;
    return SC_OK;
}

int sc_h5_read_i32(sc_h5 *f, const char *path, int rank, size_t *dims_inout, int **data, sc_err *err)
{
    h5_init();
    if (data) *data = NULL;
    if (!data) return sc_fail(err, SC_EINPUT, "sc_h5_read_i32: no output");
    dset_info d;
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
        if (H5Dread(d.dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
            rc = fail_h5(f, err, SC_EIO, path, "cannot read dataset");
    } else if (total) {
        if (H5Dread(d.dset, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, wbuf) < 0) {
            rc = fail_h5(f, err, SC_EIO, path, "cannot read dataset");
        } else {
            for (size_t i = 0; i < total && rc == SC_OK; i++) {
                if (wbuf[i] < INT_MIN || wbuf[i] > INT_MAX)
                    rc = sc_fail(err, SC_EINPUT, "%s:%s%s: element %zu = %lld does not fit a 32-bit integer",
                                 f->path, lead(path), path, i, wbuf[i]);
                buf[i] = (int)wbuf[i];
            }
        }
    }
    free(wbuf);
    info_close(&d);
    if (rc) {
        free(buf);
        return rc;
    }
    for (int i = 0; i < rank; i++) dims_inout[i] = (size_t)d.dims[i];
    *data = buf;
    return SC_OK;
}

void sc_h5_free_strings(char **strs, size_t n)
{
    if (!strs) return;
    for (size_t i = 0; i < n; i++) free(strs[i]);
    free(strs);
}

static char *dup_str(const char *s, size_t maxlen)
{
    size_t l = s ? strnlen(s, maxlen) : 0;
    char *d = malloc(l + 1);
    if (!d) return NULL;
    if (l) memcpy(d, s, l);
    d[l] = 0;
    return d;
}

/* ---- variable-length strings of a dataset, read without libhdf5's global heap code ----
 * libhdf5 1.10.8's H5HG_read trusts the heap IDs and collection headers it finds in the file:
 * a damaged or hostile file makes it read out of bounds, memcpy overlapping buffers or crash.
 * For the common case (a contiguous dataset of a file with 8-byte addresses and lengths, which
 * is every string dataset softcon writes) the strings are therefore read here, from the file's
 * bytes, by the format specification (each element: 4-byte length, 8-byte collection address,
 * 4-byte object index; a collection: "GCOL", version 1, its size, then objects of index,
 * reference count, size and data padded to 8 bytes), with every offset and length checked
 * against the file. Anything else goes through HDF5 (guarded in the tools). */

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

typedef struct {
    int fd;
    uint64_t size; /* of the file */
    unsigned char *coll;
    uint64_t coll_addr, coll_size;
} raw_file;

/* n bytes at absolute offset addr; 0 ok, -1 outside the file or unreadable */
static int raw_read(const sc_h5 *f, raw_file *r, uint64_t addr, size_t n, void *out)
{
    if (addr > r->size || n > r->size - addr) return -1;
    if (f->image) {
        memcpy(out, f->image + addr, n);
        return 0;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(r->fd, (char *)out + got, n - got, (off_t)(addr + got));
        if (k <= 0) {
            if (k < 0 && errno == EINTR) continue;
            return -1;
        }
        got += (size_t)k;
    }
    return 0;
}

#define HEAP_MAX (64u << 20) /* a global heap collection softcon reads (its own are a few KiB) */

/* The object `index` of the collection at addr: its data and size (pointing into r->coll). */
static const char *heap_object(const sc_h5 *f, raw_file *r, uint64_t addr, uint64_t index, uint64_t *size,
                               const char **why)
{
    if (!r->coll || r->coll_addr != addr) {
        unsigned char head[16];
        free(r->coll);
        r->coll = NULL;
        if (raw_read(f, r, addr, 16, head)) return *why = "its global heap collection lies outside the file", NULL;
        if (memcmp(head, "GCOL", 4) || head[4] != 1) return *why = "its global heap collection has no GCOL signature", NULL;
        uint64_t cs = le(head + 8, 8);
        if (cs < 16 || cs > HEAP_MAX || addr + cs > r->size) return *why = "its global heap collection has an impossible size", NULL;
        r->coll = malloc(cs);
        if (!r->coll || raw_read(f, r, addr, cs, r->coll)) return *why = "cannot read its global heap collection", NULL;
        r->coll_addr = addr;
        r->coll_size = cs;
    }
    for (uint64_t off = 16; off + 16 <= r->coll_size;) {
        const unsigned char *o = r->coll + off;
        uint64_t idx = le(o, 2), osize = le(o + 8, 8);
        if (idx == 0) break; /* free space: the end of the objects */
        if (osize > r->coll_size - off - 16) return *why = "a global heap object overruns its collection", NULL;
        if (idx == index) {
            *size = osize;
            return (const char *)o + 16;
        }
        off += 16 + ((osize + 7) & ~(uint64_t)7);
    }
    return *why = "its global heap object is missing", NULL;
}

/* SC_OK, an error, or 1: not applicable here (the caller reads through HDF5). */
static int read_vlen_direct(sc_h5 *f, const char *path, hid_t dset, size_t n, char **out, sc_err *err)
{
    if (f->writable) return 1;
    hid_t dcpl = H5Dget_create_plist(dset), fcpl = H5Fget_create_plist(f->file);
    H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
    size_t sa = 0, ss = 0;
    hsize_t ub = 0;
    int ok = fcpl >= 0 && H5Pget_sizes(fcpl, &sa, &ss) >= 0 && H5Pget_userblock(fcpl, &ub) >= 0;
    close_id(dcpl);
    close_id(fcpl);
    H5Eclear2(H5E_DEFAULT);
    if (!ok || layout != H5D_CONTIGUOUS || sa != 8 || ss != 8) return 1;
    haddr_t at = H5Dget_offset(dset);
    hsize_t stored = H5Dget_storage_size(dset);
    H5Eclear2(H5E_DEFAULT);
    if (at == HADDR_UNDEF || stored != 16 * (hsize_t)n)
        return sc_fail(err, SC_EINPUT, "%s:%s%s: damaged: %zu strings but %llu bytes of heap references", f->path, lead(path),
                       path, n, (unsigned long long)stored);
    raw_file r = {-1, 0, NULL, 0, 0};
    if (f->image) {
        r.size = f->image_size;
    } else {
        struct stat st;
        r.fd = open(f->path, O_RDONLY);
        if (r.fd < 0 || fstat(r.fd, &st) != 0) {
            if (r.fd >= 0) close(r.fd);
            return 1;
        }
        r.size = (uint64_t)st.st_size;
    }
    unsigned char *ids = malloc(16 * n);
    int rc = SC_OK;
    if (!ids) rc = sc_fail(err, SC_EIO, "out of memory");
    else if (raw_read(f, &r, at, 16 * n, ids))
        rc = sc_fail(err, SC_EINPUT, "%s:%s%s: damaged: its data lies outside the file", f->path, lead(path), path);
    for (size_t i = 0; i < n && rc == SC_OK; i++) {
        const unsigned char *id = ids + 16 * i;
        uint64_t len = le(id, 4), addr = le(id + 4, 8), index = le(id + 12, 4), osize = 0;
        const char *why = NULL, *data = NULL;
        if (len > SC_H5_MAX_STRING) why = "a string longer than softcon reads";
        else if (len && (addr > UINT64_MAX - ub || !(data = heap_object(f, &r, addr + ub, index, &osize, &why)))) {
            if (!why) why = "an impossible heap address";
        } else if (len > osize) {
            why = "a string longer than its heap object";
        }
        if (why) {
            rc = sc_fail(err, SC_EINPUT, "%s:%s%s[%zu]: damaged file: %s", f->path, lead(path), path, i, why);
        } else if (!(out[i] = dup_str(len ? data : "", (size_t)len))) {
            rc = sc_fail(err, SC_EIO, "out of memory");
        }
    }
    free(ids);
    free(r.coll);
    if (r.fd >= 0) close(r.fd);
    if (rc)
        for (size_t i = 0; i < n; i++) {
            free(out[i]);
            out[i] = NULL;
        }
    return rc;
}

/* HDF5 allocates the variable-length strings of a read through these, so that softcon frees
 * them itself, also those converted before a read failed half-way. */
static void *vlen_alloc(size_t size, void *info)
{
    (void)info;
    return malloc(size ? size : 1);
}

static void vlen_free(void *p, void *info)
{
    (void)info;
    free(p);
}

/* Read n string elements of (obj, ftype) into malloc'd copies; reader is H5Dread or H5Aread.
 * On failure every string made so far is freed and out[] is left all NULL. */
static int read_string_elems(sc_h5 *f, const char *path, hid_t obj, int is_attr, hid_t ftype, size_t n, char **out,
                             sc_err *err)
{
    int rc = SC_OK;
    htri_t is_var = H5Tis_variable_str(ftype);
    hid_t mt = H5Tcopy(H5T_C_S1), dxpl = -1;
    size_t fsize = H5Tget_size(ftype);
    if (!is_var && (fsize == 0 || fsize > SC_H5_MAX_STRING)) {
        close_id(mt);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: fixed-length strings of %zu bytes", f->path, lead(path), path, fsize);
    }
    if (mt < 0 || is_var < 0 || H5Tset_cset(mt, H5Tget_cset(ftype)) < 0 ||
        H5Tset_size(mt, is_var ? H5T_VARIABLE : fsize + 1) < 0 ||
        (!is_var && H5Tset_strpad(mt, H5T_STR_NULLTERM) < 0)) {
        close_id(mt);
        return fail_h5(f, err, SC_EIO, path, "cannot set up string type");
    }
    if (is_var) {
        char **raw = sc_alloc(err, n, sizeof *raw); /* zeroed: unconverted entries stay NULL */
        if (!raw) {
            close_id(mt);
            return SC_EIO;
        }
        herr_t r = -1;
        if (is_attr) {
            r = H5Aread(obj, mt, raw); /* attributes take no transfer list: HDF5's allocator is malloc */
        } else {
            dxpl = H5Pcreate(H5P_DATASET_XFER);
            if (dxpl >= 0 && H5Pset_vlen_mem_manager(dxpl, vlen_alloc, NULL, vlen_free, NULL) >= 0)
                r = H5Dread(obj, mt, H5S_ALL, H5S_ALL, dxpl, raw);
        }
        if (r < 0) rc = fail_h5(f, err, SC_EINPUT, path, "cannot read strings (damaged file?)");
        for (size_t i = 0; i < n && rc == SC_OK; i++) {
            size_t len = raw[i] ? strnlen(raw[i], SC_H5_MAX_STRING + 1) : 0;
            if (len > SC_H5_MAX_STRING)
                rc = sc_fail(err, SC_EINPUT, "%s:%s%s: string %zu is longer than %d bytes", f->path, lead(path), path, i,
                             SC_H5_MAX_STRING);
            else if (!(out[i] = dup_str(raw[i], len)))
                rc = sc_fail(err, SC_EIO, "out of memory");
        }
        for (size_t i = 0; i < n; i++) free(raw[i]);
        free(raw);
    } else {
        char *raw = sc_alloc(err, n, fsize + 1);
        if (!raw) {
            close_id(mt);
            return SC_EIO;
        }
        herr_t r = is_attr ? H5Aread(obj, mt, raw) : H5Dread(obj, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw);
        if (r < 0) rc = fail_h5(f, err, SC_EINPUT, path, "cannot read strings (damaged file?)");
        for (size_t i = 0; i < n && rc == SC_OK; i++)
            if (!(out[i] = dup_str(raw + i * (fsize + 1), fsize))) rc = sc_fail(err, SC_EIO, "out of memory");
        free(raw);
    }
    if (rc)
        for (size_t i = 0; i < n; i++) {
            free(out[i]);
            out[i] = NULL;
        }
    close_id(dxpl);
    close_id(mt);
    return rc;
}

int sc_h5_read_strings(sc_h5 *f, const char *path, size_t *n, char ***strs, sc_err *err)
{
    h5_init();
    if (strs) *strs = NULL;
    if (n) *n = 0;
    if (!n || !strs) return sc_fail(err, SC_EINPUT, "sc_h5_read_strings: no output");
    dset_info d;
    int rc = open_dataset(f, path, "a 1-D string dataset", &d, err);
    if (rc) return rc;
    if (d.cls != H5T_STRING || d.rank > 1) {
        char found[256];
        describe_found(found, sizeof found, d.cls, d.rank, d.dims);
        info_close(&d);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: expected a 1-D string dataset, found %s", f->path, lead(path), path,
                       found);
    }
    size_t count = 0;
    if ((rc = dataset_elements(f, path, &d, sizeof(char *), &count, err))) {
        info_close(&d);
        return rc;
    }
    if (count > SC_H5_MAX_STRINGS) {
        info_close(&d);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: %zu strings, more than %d", f->path, lead(path), path, count,
                       SC_H5_MAX_STRINGS);
    }
    char **out = sc_alloc(err, count, sizeof *out);
    if (!out) rc = SC_EIO;
    else if (count && H5Tis_variable_str(d.type) > 0 && (rc = read_vlen_direct(f, path, d.dset, count, out, err)) != 1) {}
    else if (count) rc = read_string_elems(f, path, d.dset, 0, d.type, count, out, err);
    info_close(&d);
    if (rc) {
        sc_h5_free_strings(out, count);
        return rc;
    }
    *strs = out;
    *n = count;
    return SC_OK;
}

/* Open attribute `name` on obj_path and check it holds one element of an allowed class. */
static int open_attr(sc_h5 *f, const char *obj_path, const char *name, const char *expected, int allow_int,
                     int allow_float, int allow_str, hid_t *obj_out, hid_t *attr_out, hid_t *type_out, sc_err *err)
{
    *obj_out = *attr_out = *type_out = -1;
    if (!f || f->file < 0) return sc_fail(err, SC_EIO, "HDF5: no file");
    if (!obj_path || !name) return sc_fail(err, SC_EINPUT, "%s: no attribute name", f->path);
    hid_t o = open_obj(f, obj_path, err);
    if (o < 0) return err ? err->code : SC_EINPUT;
    if (H5Aexists(o, name) <= 0) {
        H5Oclose(o);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: attribute '%s' missing", f->path, lead(obj_path), obj_path, name);
    }
    hid_t a = H5Aopen(o, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : -1;
    hid_t s = a >= 0 ? H5Aget_space(a) : -1;
    if (a < 0 || t < 0 || s < 0) {
        int rc = fail_h5(f, err, SC_EIO, obj_path, "cannot open attribute");
        close_id(s);
        close_id(t);
        close_id(a);
        H5Oclose(o);
        return rc;
    }
    H5T_class_t cls = H5Tget_class(t);
    hssize_t npts = H5Sget_simple_extent_npoints(s);
    close_id(s);
    int ok = npts == 1 && ((allow_int && cls == H5T_INTEGER) || (allow_float && cls == H5T_FLOAT) ||
                           (allow_str && cls == H5T_STRING));
    if (!ok) {
        close_id(t);
        close_id(a);
        H5Oclose(o);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: attribute '%s': expected a scalar %s, found %s with %lld elements",
                       f->path, lead(obj_path), obj_path, name, expected, class_name(cls), (long long)npts);
    }
    *obj_out = o;
    *attr_out = a;
    *type_out = t;
    return SC_OK;
}

int sc_h5_read_attr_str(sc_h5 *f, const char *obj_path, const char *name, char **out, sc_err *err)
{
    h5_init();
    if (out) *out = NULL;
    if (!out) return sc_fail(err, SC_EINPUT, "sc_h5_read_attr_str: no output");
    hid_t o, a, t;
    int rc = open_attr(f, obj_path, name, "string", 0, 0, 1, &o, &a, &t, err);
    if (rc) return rc;
    rc = read_string_elems(f, obj_path, a, 1, t, 1, out, err);
    close_id(t);
    close_id(a);
    H5Oclose(o);
    return rc;
}

int sc_h5_read_attr_f64(sc_h5 *f, const char *obj_path, const char *name, double *out, sc_err *err)
{
    h5_init();
    if (!out) return sc_fail(err, SC_EINPUT, "sc_h5_read_attr_f64: no output");
    hid_t o, a, t;
    int rc = open_attr(f, obj_path, name, "number", 1, 1, 0, &o, &a, &t, err);
    if (rc) return rc;
    if (H5Aread(a, H5T_NATIVE_DOUBLE, out) < 0) rc = fail_h5(f, err, SC_EIO, obj_path, "cannot read attribute");
    close_id(t);
    close_id(a);
    H5Oclose(o);
    return rc;
}

int sc_h5_read_attr_i64(sc_h5 *f, const char *obj_path, const char *name, long long *out, sc_err *err)
{
    h5_init();
    if (!out) return sc_fail(err, SC_EINPUT, "sc_h5_read_attr_i64: no output");
    hid_t o, a, t;
    int rc = open_attr(f, obj_path, name, "integer", 1, 0, 0, &o, &a, &t, err);
    if (rc) return rc;
    if (H5Aread(a, H5T_NATIVE_LLONG, out) < 0) rc = fail_h5(f, err, SC_EIO, obj_path, "cannot read attribute");
    close_id(t);
    close_id(a);
    H5Oclose(o);
    return rc;
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
    int in = open(src, O_RDONLY), outfd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
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
        close_id(fapl);
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
    dset_info d;
    int rc = open_dataset(f, path, "a dataset", &d, err);
    if (rc) return rc;
    if (d.rank > 3) {
        char found[256];
        describe_found(found, sizeof found, d.cls, d.rank, d.dims);
        info_close(&d);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: expected at most 3 dimensions, found %s", f->path, lead(path), path, found);
    }
    *rank = d.rank;
    for (int i = 0; i < 3; i++) dims[i] = i < d.rank ? (size_t)d.dims[i] : 0;
    info_close(&d);
    return SC_OK;
}

int sc_h5_read_f64_rows(sc_h5 *f, const char *path, int rank, size_t *dims_inout, size_t row0, size_t nrows,
                        double *out, sc_err *err)
{
    h5_init();
    if (!out || !dims_inout) return sc_fail(err, SC_EINPUT, "sc_h5_read_f64_rows: no output");
    size_t want[3] = {0, 0, 0};
    for (int i = 1; i < rank && i < 3; i++) want[i] = dims_inout[i];
    dset_info d;
    size_t total;
    int rc = read_numeric_prepare(f, path, rank, want, 0, &d, &total, err);
    if (rc) return rc;
    if (row0 + nrows > (size_t)d.dims[0] || row0 + nrows < row0) {
        info_close(&d);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: rows %zu..%zu requested, the dataset has %llu", f->path, lead(path), path,
                       row0, row0 + nrows, (unsigned long long)d.dims[0]);
    }
    if (nrows) {
        hsize_t start[3] = {row0, 0, 0}, count[3];
        for (int i = 0; i < rank; i++) count[i] = i ? d.dims[i] : nrows;
        hid_t mem = H5Screate_simple(rank, count, NULL);
        if (mem < 0 || H5Sselect_hyperslab(d.space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Dread(d.dset, H5T_NATIVE_DOUBLE, mem, d.space, H5P_DEFAULT, out) < 0)
            rc = fail_h5(f, err, SC_EIO, path, "cannot read dataset");
        close_id(mem);
    }
    info_close(&d);
    if (rc) return rc;
    for (int i = 0; i < rank; i++) dims_inout[i] = (size_t)d.dims[i];
    return SC_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* in-memory images, guarded whole-file reads */

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
        close_id(fapl);
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
    close_id(fapl);
    if (rc) {
        h5_free(f);
        return rc;
    }
    f->image = data;
    f->image_size = size;
    *out = f;
    return SC_OK;
}

#if defined(__SANITIZE_ADDRESS__)
#define SC_H5_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SC_H5_ASAN 1
#endif
#endif

static int g_guard = -1;         /* -1: from the environment on first use */
static double g_guard_seconds;   /* 0: the default */

void sc_h5_guard_config(int enabled, double seconds)
{
    if (enabled >= 0) g_guard = enabled ? 1 : 0;
    if (seconds > 0) g_guard_seconds = seconds;
}

static int guard_enabled(void)
{
    if (g_guard < 0) {
        const char *e = getenv("SOFTCON_H5_GUARD");
        g_guard = !(e && !strcmp(e, "0"));
        const char *s = getenv("SOFTCON_H5_GUARD_SECONDS");
        if (s && atof(s) > 0 && g_guard_seconds <= 0) g_guard_seconds = atof(s);
    }
    return g_guard;
}

/* MiB a guarded read may grow the process by: SOFTCON_H5_GUARD_MEMORY_MB, else 1 GiB + 16 x the file */
static double guard_memory_mib(double bytes)
{
    const char *s = getenv("SOFTCON_H5_GUARD_MEMORY_MB");
    return s && atof(s) > 0 ? atof(s) : 1024 + 16 * bytes / (1 << 20);
}

static int open_any(const char *path, const void *data, size_t size, const char *name, sc_h5 **f, sc_err *err)
{
    return path ? sc_h5_open(path, f, err) : sc_h5_open_image(data, size, name, f, err);
}

/* Runs the reader in a child; SC_OK when the child finished normally (whatever the reader
 * said), SC_EINPUT when it crashed or ran out of time. */
static int guard_child(const char *path, const void *data, size_t size, const char *name, sc_h5_reader reader,
                       void *arg, sc_err *err)
{
    struct stat st;
    double bytes = path ? (stat(path, &st) == 0 ? (double)st.st_size : 0) : (double)size;
    double seconds = g_guard_seconds > 0 ? g_guard_seconds : 10 + bytes / (10 << 20);
    int fds[2];
    if (pipe(fds) != 0) return SC_OK; /* cannot guard: read unguarded */
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return SC_OK;
    }
    if (pid == 0) {
        /* the child: no clean-up handlers (the registry is the parent's), no output, limits */
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE, SIGALRM};
        for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], SIG_DFL);
        close(fds[0]);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
#ifndef SC_H5_ASAN
        rlim_t as = (rlim_t)(8.0 * (1 << 30) + 64 * bytes);
        struct rlimit lim = {as, as};
        setrlimit(RLIMIT_AS, &lim);
#endif
        alarm((unsigned)(seconds + 1));
        sc_err e;
        sc_err_clear(&e);
        struct rusage r0, r1;
        getrusage(RUSAGE_SELF, &r0); /* the peak so far: what the fork inherited */
        sc_h5 *f;
        int rc = open_any(path, data, size, name, &f, &e);
        if (!rc) {
            reader(f, arg, &e);
            sc_h5_close(f);
        }
        getrusage(RUSAGE_SELF, &r1);
        char msg[12] = "done";
        int64_t grew_kib = r1.ru_maxrss - r0.ru_maxrss;
        memcpy(msg + 4, &grew_kib, sizeof grew_kib);
        (void)!write(fds[1], msg, sizeof msg);
        _exit(0);
    }
    close(fds[1]);
    sc_cleanup_set_child(pid);
    char buf[16];
    size_t got = 0;
    /* the parent keeps the time limit too (the child's alarm could be blocked or handled) */
    double deadline = sc_wall_time() + seconds + 2;
    int killed = 0;
    for (;;) {
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int left = (int)((deadline - sc_wall_time()) * 1000);
        int pr = left > 0 ? poll(&pfd, 1, left) : 0;
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) {
            kill(pid, SIGKILL);
            killed = 1;
            break;
        }
        ssize_t k = read(fds[0], buf + got, sizeof buf - got);
        if (k > 0 && (got += (size_t)k) < sizeof buf) continue;
        if (k < 0 && errno == EINTR) continue;
        break;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    sc_cleanup_set_child(0);
    const char *who = path ? path : name;
    if (got == 12 && !memcmp(buf, "done", 4) && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        /* memory: damaged lengths make libhdf5 allocate and fill gigabytes for a small file, and the
           read in this process would do the same */
        int64_t grew_kib;
        memcpy(&grew_kib, buf + 4, sizeof grew_kib);
        const double grew = (double)grew_kib / 1024, limit = guard_memory_mib(bytes);
        if (grew > limit)
            return sc_fail(err, SC_EINPUT, "%s: damaged HDF5 file: the HDF5 library took %.0f MiB of memory reading it (a file "
                           "of %.0f KiB; at most %.0f MiB, SOFTCON_H5_GUARD_MEMORY_MB)", who, grew, bytes / 1024, limit);
        return SC_OK;
    }
    if (killed || (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM))
        return sc_fail(err, SC_EINPUT, "%s: damaged HDF5 file: the HDF5 library did not finish reading it in %.0f s "
                       "(damaged files can make it loop forever)", who, seconds);
    if (WIFSIGNALED(status))
        return sc_fail(err, SC_EINPUT, "%s: damaged HDF5 file: the HDF5 library crashed reading it (%s, in a guard "
                       "process; nothing was read)", who, strsignal(WTERMSIG(status)));
    return sc_fail(err, SC_EINPUT, "%s: damaged HDF5 file: reading it failed in a guard process (exit status %d%s)", who,
                   WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                   WIFEXITED(status) && WEXITSTATUS(status) ? "; out of memory or a sanitizer report" : "");
}

static int read_guarded(const char *path, const void *data, size_t size, const char *name, sc_h5_reader reader,
                        void *arg, sc_err *err)
{
    h5_init();
    if (guard_enabled()) {
        int rc = guard_child(path, data, size, name, reader, arg, err);
        if (rc) return rc;
    }
    sc_h5 *f;
    int rc = open_any(path, data, size, name, &f, err);
    if (rc) return rc;
    rc = reader(f, arg, err);
    sc_h5_close(f);
    return rc;
}

int sc_h5_read_file(const char *path, sc_h5_reader reader, void *arg, sc_err *err)
{
    if (!path || !path[0]) return sc_fail(err, SC_EIO, "sc_h5_read_file: no path");
    return read_guarded(path, NULL, 0, NULL, reader, arg, err);
}

int sc_h5_read_image(const void *data, size_t size, const char *name, sc_h5_reader reader, void *arg, sc_err *err)
{
    return read_guarded(NULL, data, size, name ? name : "<memory>", reader, arg, err);
}

/* ------------------------------------------------------------------------------------------ */
/* checks for readers */

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

int sc_h5_check_range_nd(const sc_h5 *f, const char *path, const double *v, int rank, const size_t *dims, double lo,
                         double hi, int open_interval, sc_err *err)
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
        return sc_fail(err, SC_EINPUT, "%s:%s%s%s: value %g, must be %s", sc_h5_filename(f), lead(path), path, at, x, rule);
    }
    return SC_OK;
}

int sc_h5_check_range(const sc_h5 *f, const char *path, const double *v, size_t n, size_t cols, double lo, double hi,
                      int open_interval, sc_err *err)
{
    size_t dims[2] = {cols > 1 ? n / cols : n, cols};
    return sc_h5_check_range_nd(f, path, v, cols > 1 ? 2 : 1, dims, lo, hi, open_interval, err);
}

int sc_h5_check_index(const sc_h5 *f, const char *path, const int *v, size_t n, size_t cols, long lo, long hi,
                      sc_err *err)
{
    size_t dims[2] = {cols > 1 ? n / cols : n, cols};
    for (size_t i = 0; i < n; i++) {
        if (v[i] >= lo && v[i] <= hi) continue;
        char at[96];
        element_name(at, sizeof at, i, cols > 1 ? 2 : 1, dims);
        return sc_fail(err, SC_EINPUT, "%s:%s%s%s: value %d, must be in [%ld, %ld]", sc_h5_filename(f), lead(path), path,
                       at, v[i], lo, hi);
    }
    return SC_OK;
}

int sc_h5_check_count(const sc_h5 *f, const char *path, size_t n, int min_one, long max, sc_err *err)
{
    if ((min_one && n < 1) || n > (size_t)max)
        return sc_fail(err, SC_EINPUT, "%s:%s%s: %zu rows, must be %d..%ld", sc_h5_filename(f), lead(path), path, n,
                       min_one ? 1 : 0, max);
    return SC_OK;
}

int sc_h5_check_increasing(const sc_h5 *f, const char *path, const double *t, size_t n, sc_err *err)
{
    int rc = sc_h5_check_finite(f, path, t, n, 1, err);
    if (rc) return rc;
    for (size_t i = 1; i < n; i++)
        if (!(t[i] > t[i - 1]))
            return sc_fail(err, SC_EINPUT, "%s:%s%s[%zu]: value %g, must be greater than the one before (%g)",
                           sc_h5_filename(f), lead(path), path, i, t[i], t[i - 1]);
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
            return sc_fail(err, SC_EINPUT, "%s:%s%s%s: quaternion (%g, %g, %g, %g) has norm %g, must be a rotation (norm 1)",
                           sc_h5_filename(f), lead(path), path, at, a[0], a[1], a[2], a[3], norm);
        }
    }
    return SC_OK;
}

int sc_h5_check_names(const sc_h5 *f, const char *path, char *const *names, size_t n, size_t maxlen, sc_err *err)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(names[i]);
        if (len == 0 || len >= maxlen)
            return sc_fail(err, SC_EINPUT, "%s:%s%s[%zu]: a name of %zu bytes, must be 1..%zu", sc_h5_filename(f), lead(path),
                           path, i, len, maxlen - 1);
        for (size_t k = 0; k < len; k++)
            if ((unsigned char)names[i][k] < 32 || names[i][k] == 127)
                return sc_fail(err, SC_EINPUT, "%s:%s%s[%zu]: control character in a name", sc_h5_filename(f), lead(path),
                               path, i);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(names[i], names[j]))
                return sc_fail(err, SC_EINPUT, "%s:%s%s[%zu]: '%s' repeats entry %zu", sc_h5_filename(f), lead(path), path,
                               i, names[i], j);
    }
    return SC_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* views */

int sc_h5_write_view(sc_h5 *f, const char *path, const char *src_path, int axis, size_t index, const char *units,
                     const char *description, sc_err *err)
{
    h5_init();
    int rc = check_writable(f, path, err);
    if (rc) return rc;
    if (!src_path || src_path[0] != '/')
        return sc_fail(err, SC_EINPUT, "%s:%s%s: view source '%s' is not an absolute HDF5 path", f->path, lead(path), path,
                       src_path ? src_path : "");
    dset_info s;
    if ((rc = open_dataset(f, src_path, "a dataset", &s, err))) return rc;
    if (s.rank < 2 || s.rank > 3 || axis < 0 || axis >= s.rank || index >= s.dims[axis]) {
        char found[256];
        describe_found(found, sizeof found, s.cls, s.rank, s.dims);
        info_close(&s);
        return sc_fail(err, SC_EINPUT, "%s:%s: no index %zu along dimension %d of a %s (views need rank 2 or 3)", f->path,
                       src_path, index, axis, found);
    }
    if ((rc = check_new_path(f, path, err))) { info_close(&s); return rc; }
    hsize_t vdims[2], start[3] = {0, 0, 0}, count[3];
    for (int i = 0, k = 0; i < s.rank; i++) {
        count[i] = i == axis ? 1 : s.dims[i];
        if (i == axis) start[i] = index;
        else vdims[k++] = s.dims[i];
    }
    hid_t vspace = H5Screate_simple(s.rank - 1, vdims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), lcpl = make_lcpl(), d = -1;
    if (vspace < 0 || dcpl < 0 || lcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0 ||
        H5Sselect_hyperslab(s.space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Pset_virtual(dcpl, vspace, ".", src_path, s.space) < 0) {
        rc = fail_h5(f, err, SC_EIO, path, "cannot set up view");
        goto done;
    }
    d = H5Dcreate2(f->file, path, s.type, vspace, lcpl, dcpl, H5P_DEFAULT);
    if (d < 0) {
        rc = fail_h5(f, err, SC_EIO, path, "cannot create view");
        goto done;
    }
    if (put_units_desc(d, units, description) < 0) rc = fail_h5(f, err, SC_EIO, path, "cannot write attributes");
done:
    close_id(d);
    close_id(vspace);
    close_id(dcpl);
    close_id(lcpl);
    info_close(&s);
    return rc;
}

/* HDF5 layer: groups, attributes (written and read) and the provenance of an output's root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "io/h5_internal.h"

#ifndef SC_VERSION
#define SC_VERSION "0.0.0"
#endif
#ifndef SC_GIT_REV
#define SC_GIT_REV "unknown"
#endif

/* Write a scalar (space) attribute, replacing an existing one of that name. */
herr_t h5_put_attr(hid_t obj, const char *name, hid_t type, hid_t space, const void *buf)
{
    if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0) return -1;
    hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0) return -1;
    herr_t r = H5Awrite(a, type, buf);
    h5_close_id(a);
    return r;
}

static herr_t put_attr_str(hid_t obj, const char *name, const char *value)
{
    hid_t t = h5_vlen_str_type(), s = H5Screate(H5S_SCALAR);
    herr_t r = -1;
    if (t >= 0 && s >= 0) r = h5_put_attr(obj, name, t, s, &value);
    h5_close_id(t);
    h5_close_id(s);
    return r;
}

herr_t h5_put_units_desc(hid_t obj, const char *units, const char *description)
{
    if (units && put_attr_str(obj, "units", units) < 0) return -1;
    if (description && put_attr_str(obj, "description", description) < 0) return -1;
    return 0;
}
/* Open the object at obj_path; on failure a "missing" message. */
hid_t h5_open_obj(sc_h5 *f, const char *obj_path, sc_err *err)
{
    if (!h5_path_exists(f->file, obj_path)) {
        sc_fail(err, SC_EINPUT, "%s:%s%s: missing", f->path, h5_lead(obj_path), obj_path);
        return -1;
    }
    hid_t o = H5Oopen(f->file, obj_path, H5P_DEFAULT);
    if (o < 0) h5_fail(f, err, SC_EINPUT, obj_path, "cannot open");
    return o;
}

int sc_h5_group(sc_h5 *f, const char *path, const char *description, sc_err *err)
{
    int rc = h5_check_writable(f, path, err);
    if (rc) return rc;
    hid_t g = -1, lcpl = -1, gcpl = -1;
    if (h5_path_exists(f->file, path)) {
        g = H5Oopen(f->file, path, H5P_DEFAULT);
        if (g < 0) return h5_fail(f, err, SC_EIO, path, "cannot open group");
        if (H5Iget_type(g) != H5I_GROUP) {
            H5Oclose(g);
            return sc_fail(err, SC_EINPUT, "%s:%s%s: exists and is not a group", f->path, h5_lead(path), path);
        }
    } else {
        if ((rc = h5_check_new_path(f, path, err))) return rc;
        lcpl = h5_make_lcpl();
        gcpl = H5Pcreate(H5P_GROUP_CREATE);
        if (lcpl >= 0 && gcpl >= 0) H5Pset_obj_track_times(gcpl, 0);
        g = lcpl >= 0 && gcpl >= 0 ? H5Gcreate2(f->file, path, lcpl, gcpl, H5P_DEFAULT) : -1;
        if (g < 0) rc = h5_fail(f, err, SC_EIO, path, "cannot create group");
    }
    if (rc == SC_OK && h5_put_units_desc(g, NULL, description) < 0) rc = h5_fail(f, err, SC_EIO, path, "cannot write description");
    h5_close_id(g);
    h5_close_id(lcpl);
    h5_close_id(gcpl);
    return rc;
}

/* Write one attribute of (type, space) on obj_path. */
static int attr_write(sc_h5 *f, const char *obj_path, const char *name, hid_t type, hid_t space, const void *buf, sc_err *err)
{
    int rc = h5_check_writable(f, obj_path, err);
    if (rc) return rc;
    if (!name || !name[0]) return sc_fail(err, SC_EINPUT, "%s:%s%s: empty attribute name", f->path, h5_lead(obj_path), obj_path);
    if (type < 0 || space < 0) return h5_fail(f, err, SC_EIO, obj_path, "cannot create attribute type");
    hid_t o = h5_open_obj(f, obj_path, err);
    if (o < 0) return err ? err->code : SC_EINPUT;
    if (h5_put_attr(o, name, type, space, buf) < 0) {
        char what[300];
        snprintf(what, sizeof what, "cannot write attribute '%s'", name);
        rc = h5_fail(f, err, SC_EIO, obj_path, what);
    }
    H5Oclose(o);
    return rc;
}

int sc_h5_attr_str(sc_h5 *f, const char *obj_path, const char *name, const char *value, sc_err *err)
{
    h5_init();
    const char *v = value ? value : "";
    hid_t t = h5_vlen_str_type(), s = H5Screate(H5S_SCALAR);
    int rc = attr_write(f, obj_path, name, t, s, &v, err);
    h5_close_id(t);
    h5_close_id(s);
    return rc;
}

int sc_h5_attr_f64(sc_h5 *f, const char *obj_path, const char *name, double value, sc_err *err)
{
    h5_init();
    hid_t s = H5Screate(H5S_SCALAR);
    int rc = attr_write(f, obj_path, name, H5T_NATIVE_DOUBLE, s, &value, err);
    h5_close_id(s);
    return rc;
}

int sc_h5_attr_i64(sc_h5 *f, const char *obj_path, const char *name, long long value, sc_err *err)
{
    h5_init();
    hid_t s = H5Screate(H5S_SCALAR);
    int rc = attr_write(f, obj_path, name, H5T_NATIVE_LLONG, s, &value, err);
    h5_close_id(s);
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
    h5_close_id(s);
    return rc;
}

/* Characters a POSIX shell passes through unquoted. */
static int shell_safe(const char *a)
{
    if (!a[0]) return 0;
    for (const char *p = a; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("_-+=:,./@%", c))) return 0;
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

int sc_h5_provenance(sc_h5 *f, const char *schema, int argc, char *const *argv, const char *config_text, sc_err *err)
{
    int rc = h5_check_writable(f, "/", err);
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
        (rc = sc_h5_attr_str(f, "/", "created_by", cmd, err)) == SC_OK && (rc = sc_h5_attr_str(f, "/", "created_at", stamp, err)) == SC_OK &&
        (rc = sc_h5_attr_str(f, "/", "host", host, err)) == SC_OK && config_text)
        rc = sc_h5_attr_str(f, "/", "config", config_text, err);
    free(cmd);
    return rc;
}

int sc_h5_attr_exists(sc_h5 *f, const char *obj_path, const char *name)
{
    if (!f || f->file < 0 || !sc_h5_exists(f, obj_path)) return 0;
    hid_t o = h5_open_obj(f, obj_path, NULL);
    if (o < 0) return 0;
    const int yes = H5Aexists(o, name) > 0;
    H5Oclose(o);
    return yes;
}

/* Open attribute `name` on obj_path and check it holds one element of an allowed class. */
static int open_attr(sc_h5 *f, const char *obj_path, const char *name, const char *expected, int allow_int, int allow_float, int allow_str,
                     hid_t *obj_out, hid_t *attr_out, hid_t *type_out, sc_err *err)
{
    *obj_out = *attr_out = *type_out = -1;
    if (!f || f->file < 0) return sc_fail(err, SC_EIO, "HDF5: no file");
    if (!obj_path || !name) return sc_fail(err, SC_EINPUT, "%s: no attribute name", f->path);
    hid_t o = h5_open_obj(f, obj_path, err);
    if (o < 0) return err ? err->code : SC_EINPUT;
    if (H5Aexists(o, name) <= 0) {
        H5Oclose(o);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: attribute '%s' missing", f->path, h5_lead(obj_path), obj_path, name);
    }
    hid_t a = H5Aopen(o, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : -1;
    hid_t s = a >= 0 ? H5Aget_space(a) : -1;
    if (a < 0 || t < 0 || s < 0) {
        int rc = h5_fail(f, err, SC_EIO, obj_path, "cannot open attribute");
        h5_close_id(s);
        h5_close_id(t);
        h5_close_id(a);
        H5Oclose(o);
        return rc;
    }
    H5T_class_t cls = H5Tget_class(t);
    hssize_t npts = H5Sget_simple_extent_npoints(s);
    h5_close_id(s);
    int ok = npts == 1 && ((allow_int && cls == H5T_INTEGER) || (allow_float && cls == H5T_FLOAT) || (allow_str && cls == H5T_STRING));
    if (!ok) {
        h5_close_id(t);
        h5_close_id(a);
        H5Oclose(o);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: attribute '%s': expected a scalar %s, found %s with %lld elements", f->path, h5_lead(obj_path),
                       obj_path, name, expected, h5_class_name(cls), (long long)npts);
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
    rc = h5_read_string_elems(f, obj_path, a, 1, t, 1, out, err);
    h5_close_id(t);
    h5_close_id(a);
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
    if (H5Aread(a, H5T_NATIVE_DOUBLE, out) < 0) rc = h5_fail(f, err, SC_EIO, obj_path, "cannot read attribute");
    h5_close_id(t);
    h5_close_id(a);
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
    if (H5Aread(a, H5T_NATIVE_LLONG, out) < 0) rc = h5_fail(f, err, SC_EIO, obj_path, "cannot read attribute");
    h5_close_id(t);
    h5_close_id(a);
    H5Oclose(o);
    return rc;
}

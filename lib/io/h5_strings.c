/* HDF5 layer: string datasets, written and read; variable-length strings of a file are read by
 * a parser of the format's global heap here (not by libhdf5's, which trusts damaged files). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "io/h5_internal.h"

int sc_h5_write_strings(sc_h5 *f, const char *path, size_t n, const char *const *strs, const char *description, sc_err *err)
{
    h5_init();
    if (n > 0 && !strs) return sc_fail(err, SC_EINPUT, "sc_h5_write_strings: no strings");
    const char **tmp = sc_alloc(err, n, sizeof *tmp);
    if (!tmp) return SC_EIO;
    for (size_t i = 0; i < n; i++) tmp[i] = strs[i] ? strs[i] : "";
    hid_t t = h5_vlen_str_type();
    size_t dims[1] = {n};
    int rc =
        t < 0 ? h5_fail(f, err, SC_EIO, path, "cannot create string type") : h5_write_dataset(f, path, 1, dims, t, t, tmp, NULL, description, 1, err);
    h5_close_id(t);
    free(tmp);
    return rc;
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
static const char *heap_object(const sc_h5 *f, raw_file *r, uint64_t addr, uint64_t index, uint64_t *size, const char **why)
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
    h5_close_id(dcpl);
    h5_close_id(fcpl);
    H5Eclear2(H5E_DEFAULT);
    if (!ok || layout != H5D_CONTIGUOUS || sa != 8 || ss != 8) return 1;
    haddr_t at = H5Dget_offset(dset);
    hsize_t stored = H5Dget_storage_size(dset);
    H5Eclear2(H5E_DEFAULT);
    if (at == HADDR_UNDEF || stored != 16 * (hsize_t)n)
        return sc_fail(err, SC_EINPUT, "%s:%s%s: damaged: %zu strings but %llu bytes of heap references", f->path, h5_lead(path), path, n,
                       (unsigned long long)stored);
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
        rc = sc_fail(err, SC_EINPUT, "%s:%s%s: damaged: its data lies outside the file", f->path, h5_lead(path), path);
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
            rc = sc_fail(err, SC_EINPUT, "%s:%s%s[%zu]: damaged file: %s", f->path, h5_lead(path), path, i, why);
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
int h5_read_string_elems(sc_h5 *f, const char *path, hid_t obj, int is_attr, hid_t ftype, size_t n, char **out, sc_err *err)
{
    int rc = SC_OK;
    htri_t is_var = H5Tis_variable_str(ftype);
    hid_t mt = H5Tcopy(H5T_C_S1), dxpl = -1;
    size_t fsize = H5Tget_size(ftype);
    if (!is_var && (fsize == 0 || fsize > SC_H5_MAX_STRING)) {
        h5_close_id(mt);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: fixed-length strings of %zu bytes", f->path, h5_lead(path), path, fsize);
    }
    if (mt < 0 || is_var < 0 || H5Tset_cset(mt, H5Tget_cset(ftype)) < 0 || H5Tset_size(mt, is_var ? H5T_VARIABLE : fsize + 1) < 0 ||
        (!is_var && H5Tset_strpad(mt, H5T_STR_NULLTERM) < 0)) {
        h5_close_id(mt);
        return h5_fail(f, err, SC_EIO, path, "cannot set up string type");
    }
    if (is_var) {
        char **raw = sc_alloc(err, n, sizeof *raw); /* zeroed: unconverted entries stay NULL */
        if (!raw) {
            h5_close_id(mt);
            return SC_EIO;
        }
        herr_t r = -1;
        if (is_attr) {
            r = H5Aread(obj, mt, raw); /* attributes take no transfer list: HDF5's allocator is malloc */
        } else {
            dxpl = H5Pcreate(H5P_DATASET_XFER);
            if (dxpl >= 0 && H5Pset_vlen_mem_manager(dxpl, vlen_alloc, NULL, vlen_free, NULL) >= 0) r = H5Dread(obj, mt, H5S_ALL, H5S_ALL, dxpl, raw);
        }
        if (r < 0) rc = h5_fail(f, err, SC_EINPUT, path, "cannot read strings (damaged file?)");
        for (size_t i = 0; i < n && rc == SC_OK; i++) {
            size_t len = raw[i] ? strnlen(raw[i], SC_H5_MAX_STRING + 1) : 0;
            if (len > SC_H5_MAX_STRING)
                rc = sc_fail(err, SC_EINPUT, "%s:%s%s: string %zu is longer than %d bytes", f->path, h5_lead(path), path, i, SC_H5_MAX_STRING);
            else if (!(out[i] = dup_str(raw[i], len))) rc = sc_fail(err, SC_EIO, "out of memory");
        }
        for (size_t i = 0; i < n; i++) free(raw[i]);
        free(raw);
    } else {
        char *raw = sc_alloc(err, n, fsize + 1);
        if (!raw) {
            h5_close_id(mt);
            return SC_EIO;
        }
        herr_t r = is_attr ? H5Aread(obj, mt, raw) : H5Dread(obj, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw);
        if (r < 0) rc = h5_fail(f, err, SC_EINPUT, path, "cannot read strings (damaged file?)");
        for (size_t i = 0; i < n && rc == SC_OK; i++)
            if (!(out[i] = dup_str(raw + i * (fsize + 1), fsize))) rc = sc_fail(err, SC_EIO, "out of memory");
        free(raw);
    }
    if (rc)
        for (size_t i = 0; i < n; i++) {
            free(out[i]);
            out[i] = NULL;
        }
    h5_close_id(dxpl);
    h5_close_id(mt);
    return rc;
}

int sc_h5_read_strings(sc_h5 *f, const char *path, size_t *n, char ***strs, sc_err *err)
{
    h5_init();
    if (strs) *strs = NULL;
    if (n) *n = 0;
    if (!n || !strs) return sc_fail(err, SC_EINPUT, "sc_h5_read_strings: no output");
    h5_dataset d;
    int rc = h5_dataset_open(f, path, "a 1-D string dataset", &d, err);
    if (rc) return rc;
    if (d.cls != H5T_STRING || d.rank > 1) {
        char found[256];
        h5_describe_found(found, sizeof found, d.cls, d.rank, d.dims);
        h5_dataset_close(&d);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: expected a 1-D string dataset, found %s", f->path, h5_lead(path), path, found);
    }
    size_t count = 0;
    if ((rc = h5_dataset_elements(f, path, &d, sizeof(char *), &count, err))) {
        h5_dataset_close(&d);
        return rc;
    }
    if (count > SC_H5_MAX_STRINGS) {
        h5_dataset_close(&d);
        return sc_fail(err, SC_EINPUT, "%s:%s%s: %zu strings, more than %d", f->path, h5_lead(path), path, count, SC_H5_MAX_STRINGS);
    }
    char **out = sc_alloc(err, count, sizeof *out);
    if (!out) rc = SC_EIO;
    else if (count && H5Tis_variable_str(d.type) > 0 && (rc = read_vlen_direct(f, path, d.dset, count, out, err)) != 1) {
    } else if (count) rc = h5_read_string_elems(f, path, d.dset, 0, d.type, count, out, err);
    h5_dataset_close(&d);
    if (rc) {
        sc_h5_free_strings(out, count);
        return rc;
    }
    *strs = out;
    *n = count;
    return SC_OK;
}

/* Private to the HDF5 layer (lib/io/h5*.c, the only files that include hdf5.h): the file and
 * series handles and the helpers its files share. h5.c holds the files, datasets and these
 * helpers; h5_attr.c groups, attributes and provenance; h5_series.c time series; h5_strings.c
 * string datasets; h5_guard.c the guarded whole-file reads; h5_check.c the checks for readers. */
#ifndef SC_H5_INTERNAL_H
#define SC_H5_INTERNAL_H
#include <hdf5.h>
#include "io/h5.h"

#define CHUNK_TARGET_BYTES (1024u * 1024u) /* fits HDF5's default 1 MiB chunk cache */
#define MAX_SERIES_RANK    4

struct sc_h5_series {
    sc_h5_series *next;
    sc_h5 *file;
    hid_t dset;
    char *path;
    int is_int, is_scale;
    int rank;                      /* dataset rank = 1 + sample rank */
    hsize_t dims[MAX_SERIES_RANK]; /* dims[0] unused; the rest: sample dims */
    size_t sample_bytes;
    size_t rows;     /* samples per chunk = buffer capacity */
    size_t nbuf;     /* samples in the buffer */
    size_t nflushed; /* of those, already written to the file */
    hsize_t start;   /* time index of buffer row 0 (a chunk boundary) */
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
    const unsigned char *image; /* sc_h5_open_image: the caller's bytes (read directly by h5_strings.c) */
    size_t image_size;
};

/* An open dataset with its type, space, class and shape. */
typedef struct {
    hid_t dset, type, space;
    H5T_class_t cls;
    int rank;
    hsize_t dims[H5S_MAX_RANK];
} h5_dataset;

/* ---- h5.c ---- */
/* Opens the library once (error printing off, softcon's exit handler). */
void h5_init(void);
/* "" when path starts with '/', else "/": messages name "file:/path" either way. */
const char *h5_lead(const char *path);
/* "file:/path: what: <HDF5 reason>" */
int h5_fail(const sc_h5 *f, sc_err *err, int code, const char *path, const char *what);
int h5_check_writable(const sc_h5 *f, const char *path, sc_err *err);
/* Close any kind of id, keeping a pending error stack (its reason is read after clean-up). */
void h5_close_id(hid_t id);
/* Variable-length UTF-8 string type. */
hid_t h5_vlen_str_type(void);
/* Link creation list that creates missing parent groups. */
hid_t h5_make_lcpl(void);
/* Does every component of path exist? */
int h5_path_exists(hid_t file, const char *path);
/* Before creating an object at path: it must not exist and every existing parent must be a group. */
int h5_check_new_path(const sc_h5 *f, const char *path, sc_err *err);
const char *h5_class_name(H5T_class_t c);
/* "1-D float of shape 12" / "2-D integer of shape 100 x 3" / "scalar string" */
void h5_describe_found(char *buf, size_t n, H5T_class_t cls, int rank, const hsize_t *dims);
/* A new dataset of rank 1..3 written at once (compress: chunked + deflate above 64 KiB). */
int h5_write_dataset(sc_h5 *f, const char *path, int rank, const size_t *dims, hid_t file_type, hid_t mem_type, const void *data, const char *units,
                     const char *description, int compress, sc_err *err);
/* Open a dataset and read its class and shape; an object that is not one is an error naming `expected`. */
int h5_dataset_open(sc_h5 *f, const char *path, const char *expected, h5_dataset *d, sc_err *err);
void h5_dataset_close(h5_dataset *d);
/* Its element count, checked against overflow, softcon's bounds and the bytes the file stores. */
int h5_dataset_elements(const sc_h5 *f, const char *path, const h5_dataset *d, size_t elsize, size_t *total, sc_err *err);

/* ---- h5_attr.c ---- */
/* Write a scalar (space) attribute, replacing an existing one of that name. */
herr_t h5_put_attr(hid_t obj, const char *name, hid_t type, hid_t space, const void *buf);
/* The units and description attributes (each skipped when NULL). */
herr_t h5_put_units_desc(hid_t obj, const char *units, const char *description);
/* Open the object at obj_path; on failure a "missing" message. */
hid_t h5_open_obj(sc_h5 *f, const char *obj_path, sc_err *err);

/* ---- h5_series.c ---- */
/* Write a series' buffered samples not yet in the file. */
int h5_series_write(sc_h5_series *s, sc_err *err);
/* Free every series handle of f (closing their datasets). */
void h5_series_free_all(sc_h5 *f);

/* ---- h5_strings.c ---- */
/* n string elements of a dataset or attribute (is_attr) of file type ftype into malloc'd copies. */
int h5_read_string_elems(sc_h5 *f, const char *path, hid_t obj, int is_attr, hid_t ftype, size_t n, char **out, sc_err *err);

#endif

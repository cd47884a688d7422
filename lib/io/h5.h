/* The HDF5 layer: every softcon file is written and read through here, and its files
 * (lib/io/h5*.c, private header h5_internal.h) are the only ones that include hdf5.h. Outputs
 * are self-describing (units/description attributes, root provenance, time as a dimension
 * scale) and written atomically: all writes go to a temporary "<path>.tmp.<pid>.<random>" unique to the run (core/cleanup.h,
 * sc_temp_name), which sc_h5_commit renames onto
 * <path> and sc_h5_abort deletes.
 *
 * Paths are HDF5 paths from the file root ("/skin/weights"; the leading '/' may be omitted).
 * Read errors are SC_EINPUT and name "file:/path" and what was expected; I/O failures are
 * SC_EIO. Not thread-safe (the serial HDF5 library is not). */
#ifndef SC_H5_H
#define SC_H5_H
#include <stddef.h>
#include <math.h>
#include "core/status.h"

typedef struct sc_h5 sc_h5;
typedef struct sc_h5_series sc_h5_series;

/* Bounds on what one read may take from a file (a damaged header must not make softcon
 * allocate or loop without limit): elements of one dataset, strings of one string dataset,
 * bytes of one string. */
#define SC_H5_MAX_ELEMENTS (1ULL << 32)
#define SC_H5_MAX_STRINGS  (1 << 20)
#define SC_H5_MAX_STRING   (16 << 20)

/* ---- files ---- */
/* Create the temporary file of path (a new, unique name: sc_temp_name) for writing; SC_EIO when
 * that name would be too long. */
int sc_h5_create(const char *path, sc_h5 **out, sc_err *err);
/* Flush buffered series, close, fsync and rename the tmp file onto path. Always consumes f:
 * on failure the tmp file is removed and nothing at path is touched. */
int sc_h5_commit(sc_h5 *f, sc_err *err);
/* Close and unlink the tmp file; path is left as it was. NULL is a no-op. */
void sc_h5_abort(sc_h5 *f);
/* Open read-only. Missing/unreadable -> SC_EIO; not HDF5 -> SC_EINPUT "x.h5: not an HDF5 file";
 * an HDF5 signature but unopenable -> SC_EINPUT "x.h5: damaged HDF5 file: ...". */
int sc_h5_open(const char *path, sc_h5 **out, sc_err *err);
/* Open an in-memory file image read-only (HDF5's core driver; the bytes are copied). name
 * stands for the file in messages. Not HDF5 -> SC_EINPUT. */
int sc_h5_open_image(const void *data, size_t size, const char *name, sc_h5 **out, sc_err *err);
/* Close a handle from sc_h5_open. On a handle from sc_h5_create this is sc_h5_abort. */
void sc_h5_close(sc_h5 *f);
/* The final path (not the tmp path) as given to create/open. */
const char *sc_h5_filename(const sc_h5 *f);
/* The temporary file a writable handle writes (renamed onto sc_h5_filename by commit). */
const char *sc_h5_temp_filename(const sc_h5 *f);

/* ---- writing ---- */
/* Root attributes softcon_version, schema, created_by (argv joined, shell-quoted where needed),
 * created_at (UTC ISO 8601), host and, when config_text != NULL, config. */
int sc_h5_provenance(sc_h5 *f, const char *schema, int argc, char *const *argv, const char *config_text, sc_err *err);
/* Create a group and any missing parents (an existing group is fine); description may be NULL. */
int sc_h5_group(sc_h5 *f, const char *path, const char *description, sc_err *err);
/* Datasets of rank 1..3 with row-major dims; parents are created. `units` ("1" for
 * dimensionless) and `description` attributes are written when non-NULL. Datasets over 64 KiB
 * are chunked with shuffle + deflate(4), smaller ones contiguous. */
int sc_h5_write_f64(sc_h5 *f, const char *path, int rank, const size_t *dims, const double *data, const char *units, const char *description,
                    sc_err *err);
int sc_h5_write_i32(sc_h5 *f, const char *path, int rank, const size_t *dims, const int *data, const char *description, sc_err *err);
/* 1-D dataset of n unsigned bytes, contiguous and uncompressed (opaque blobs such as checked
 * simulation snapshots in checkpoints, where deflate would cost seconds and gain little). */
int sc_h5_write_bytes(sc_h5 *f, const char *path, size_t n, const void *data, const char *description, sc_err *err);
/* 1-D dataset of n variable-length UTF-8 strings (a NULL entry is stored as ""). */
int sc_h5_write_strings(sc_h5 *f, const char *path, size_t n, const char *const *strs, const char *description, sc_err *err);
/* Scalar attributes on the object at obj_path ("/" = root); an existing one is replaced. */
int sc_h5_attr_str(sc_h5 *f, const char *obj_path, const char *name, const char *value, sc_err *err);
int sc_h5_attr_f64(sc_h5 *f, const char *obj_path, const char *name, double value, sc_err *err);
int sc_h5_attr_i64(sc_h5 *f, const char *obj_path, const char *name, long long value, sc_err *err);
int sc_h5_attr_f64_array(sc_h5 *f, const char *obj_path, const char *name, size_t n, const double *v, sc_err *err);

/* ---- time series ----
 * A timeline is a 1-D extendible f64 dataset (units "s") marked as an HDF5 dimension scale
 * (the H5DS convention: CLASS/NAME/REFERENCE_LIST attributes). A series is an extendible
 * dataset of shape (time, sample_dims...) chunked along time (64..256 samples per chunk,
 * fewer only for samples over 16 KiB), shuffle + deflate(4), whose dim 0 is attached to the
 * timeline (DIMENSION_LIST). Appends go to a one-chunk buffer written when full, on
 * sc_h5_flush and on commit. Series handles belong to the file and die with it; appending to
 * the timeline itself is the caller's job (one time value per sample). */
int sc_h5_timeline_create(sc_h5 *f, const char *time_path, sc_h5_series **out, sc_err *err);
/* sample_rank 0..3 (0 = one scalar per time); timeline may be NULL (no scale attached). */
int sc_h5_series_create(sc_h5 *f, const char *path, sc_h5_series *timeline, int sample_rank, const size_t *sample_dims, const char *units,
                        const char *description, sc_h5_series **out, sc_err *err);
int sc_h5_series_create_i32(sc_h5 *f, const char *path, sc_h5_series *timeline, int sample_rank, const size_t *sample_dims, const char *description,
                            sc_h5_series **out, sc_err *err);
int sc_h5_series_append(sc_h5_series *s, const double *sample, sc_err *err);
int sc_h5_series_append_i32(sc_h5_series *s, const int *sample, sc_err *err);
/* Samples appended so far (buffered ones included). */
size_t sc_h5_series_length(const sc_h5_series *s);
/* Write all buffered samples and flush HDF5 to disk, so the tmp file is a valid file holding
 * everything appended so far (a failed run can then still commit what it has). */
int sc_h5_flush(sc_h5 *f, sc_err *err);

/* ---- reading ----
 * read_f64 accepts any integer or float dataset (converted); read_i32 any integer dataset whose
 * values fit an int. dims_inout[rank]: on input the expected extent per dimension (0 = any),
 * on output the actual dims. *data is malloc'd (free()); a dataset with no elements gives a
 * valid 1-element allocation. */
int sc_h5_exists(sc_h5 *f, const char *path); /* 1 if an object exists at path, else 0 */
/* 1 if obj_path exists and has attribute name, else 0. */
int sc_h5_attr_exists(sc_h5 *f, const char *obj_path, const char *name);
int sc_h5_read_f64(sc_h5 *f, const char *path, int rank, size_t *dims_inout, double **data, sc_err *err);
int sc_h5_read_i32(sc_h5 *f, const char *path, int rank, size_t *dims_inout, int **data, sc_err *err);
/* A 1-D dataset of unsigned bytes (sc_h5_write_bytes); *data malloc'd. */
int sc_h5_read_bytes(sc_h5 *f, const char *path, size_t *n, unsigned char **data, sc_err *err);
/* 1-D (or scalar) string dataset, variable- or fixed-length. */
int sc_h5_read_strings(sc_h5 *f, const char *path, size_t *n, char ***strs, sc_err *err);
void sc_h5_free_strings(char **strs, size_t n);
/* Scalar (or one-element) attributes; *out of read_attr_str is malloc'd. */
int sc_h5_read_attr_str(sc_h5 *f, const char *obj_path, const char *name, char **out, sc_err *err);
int sc_h5_read_attr_f64(sc_h5 *f, const char *obj_path, const char *name, double *out, sc_err *err);
int sc_h5_read_attr_i64(sc_h5 *f, const char *obj_path, const char *name, long long *out, sc_err *err);

/* Number of open HDF5 file objects in the process (files, groups, datasets, attributes,
 * committed types): a before/after difference in tests exposes an unclosed handle. (HDF5 has
 * no public count of transient dataspaces/types/property lists.) */
long sc_h5_live_ids(void);

/* ---- reading a whole file, guarded ----
 * libhdf5 1.10 can itself crash (segmentation faults, heap over-reads in H5HG_read) or loop
 * forever (H5C_protect) on a damaged or hostile file, before softcon's checks see a byte. So a
 * reader (a function that reads what it needs from an open file into arg) runs first in a
 * child process (fork) with its output thrown away, a CPU-time limit (so a busy machine does
 * not fail honest reads) and, outside sanitizer
 * builds, an address-space limit; only when that child finishes normally does the reader run
 * again in this process (the same calls on the same bytes give the same result, error or
 * not). A child that dies or times out becomes SC_EINPUT "file: damaged HDF5 file: ...".
 * The child only calls HDF5, malloc and write(2): safe after fork with glibc, also with idle
 * worker threads (OpenBLAS) and after MPI_Init as long as the reader itself uses no MPI. The
 * guard costs one extra read of the file; sc_h5_guard_config turns it off or sets the CPU-time
 * limit (default 10 s + 1 s per 10 MiB). A child whose peak memory grew by more than
 * sc_h5_guard_memory_limit (default 1 GiB + 16 x the file's size) is refused too (damaged vlen
 * lengths make libhdf5 allocate gigabytes for a small file). The tools set these from
 * SOFTCON_H5_GUARD=0, SOFTCON_H5_GUARD_SECONDS and SOFTCON_H5_GUARD_MEMORY_MB
 * (cmd/common/environment.h). Every reader of a softcon file (character, reference,
 * trajectory, sim.h5, and the openloop / policy readers to come) should go through
 * sc_h5_read_file. */
typedef int (*sc_h5_reader)(sc_h5 *f, void *arg, sc_err *err);
int sc_h5_read_file(const char *path, sc_h5_reader reader, void *arg, sc_err *err);
/* The same on an in-memory image (the fuzz harnesses' entry point). */
int sc_h5_read_image(const void *data, size_t size, const char *name, sc_h5_reader reader, void *arg, sc_err *err);
/* enabled < 0 / seconds <= 0 keep the current value (initially on, with the default limit). */
void sc_h5_guard_config(int enabled, double seconds);
/* The memory limit in MiB; <= 0 keeps the current value (initially the default). */
void sc_h5_guard_memory_limit(double mib);

/* ---- checks for readers: what a value read from a file must satisfy ----
 * Each returns SC_OK, or SC_EINPUT "file:/path[i]: <what> is <value>, must be <rule>" naming
 * the first offending element (row and column for cols > 1). */
/* every value finite and within [lo, hi] (lo/hi may be -INFINITY/INFINITY; open: exclusive) */
int sc_h5_check_range(const sc_h5 *f, const char *path, const double *v, size_t n, size_t cols, double lo, double hi, int open_interval, sc_err *err);
/* the same for a dataset of any rank (1..3), naming elements [i][j][k] by its dims */
int sc_h5_check_range_nd(const sc_h5 *f, const char *path, const double *v, int rank, const size_t *dims, double lo, double hi, int open_interval,
                         sc_err *err);
#define sc_h5_check_finite(f, path, v, n, cols, err) sc_h5_check_range(f, path, v, n, cols, -INFINITY, INFINITY, 0, err)
/* integers in [lo, hi] (indices: lo 0 or -1, hi count - 1) */
int sc_h5_check_index(const sc_h5 *f, const char *path, const int *v, size_t n, size_t cols, long lo, long hi, sc_err *err);
/* a count read from a dataset's shape that softcon stores in an int: 1 <= n <= max (min_one)
 * or 0 <= n <= max */
int sc_h5_check_count(const sc_h5 *f, const char *path, size_t n, int min_one, long max, sc_err *err);
/* quaternions (w, x, y, z): a dataset of rank 1..3 whose last dim is 4, with finite
 * components and every norm in [0.5, 2] (written normalized; the tolerance only lets rounding
 * through) */
int sc_h5_check_unit_quats(const sc_h5 *f, const char *path, const double *q, int rank, const size_t *dims, sc_err *err);
/* names: each 1..maxlen-1 bytes, printable, all different */
int sc_h5_check_names(const sc_h5 *f, const char *path, char *const *names, size_t n, size_t maxlen, sc_err *err);
/* times strictly increasing and finite */
int sc_h5_check_increasing(const sc_h5 *f, const char *path, const double *t, size_t n, sc_err *err);

/* Starts a new output as a copy of src (written to its temporary name, renamed on commit), so a tool
   can add to a file without ever modifying its input. */
int sc_h5_create_from(const char *src, const char *path, sc_h5 **out, sc_err *err);
/* Removes a group or dataset (and what is below it) from a writable file; absent is fine. */
int sc_h5_delete(sc_h5 *f, const char *path, sc_err *err);

/* Shape of the dataset at path: *rank (0 for a scalar) and dims[0..rank-1]; dims has room for
   3 entries (a dataset of higher rank is SC_EINPUT). Also reports a non-numeric dataset's shape. */
int sc_h5_shape(sc_h5 *f, const char *path, int *rank, size_t dims[3], sc_err *err);
/* Rows [row0, row0 + nrows) along dim 0 of a numeric dataset (a frame range of a time series),
   converted to double, into the caller's out (nrows x the product of dims[1..]). dims_inout as in
   sc_h5_read_f64 (dim 0 is not checked on input; on output all dims are the dataset's).
   Rows past the end are SC_EINPUT naming the path. */
int sc_h5_read_f64_rows(sc_h5 *f, const char *path, int rank, size_t *dims_inout, size_t row0, size_t nrows, double *out, sc_err *err);

/* A virtual dataset at path showing src_path (an absolute path in the same file, rank 2 or 3)
   with dimension `axis` fixed at `index`: one frame of a time series, one column of a matrix.
   Nothing is copied; readers see an ordinary dataset of rank one less (HDF5 >= 1.10). For
   XDMF readers that do not read hyperslabs (ParaView's Xdmf3 reader). A series' rows must be
   in the file first (sc_h5_flush). units and description as in sc_h5_write_f64. */
int sc_h5_write_view(sc_h5 *f, const char *path, const char *src_path, int axis, size_t index, const char *units, const char *description,
                     sc_err *err);

/* ---- layouts every softcon file shares (io/h5_layout.c); each format's owner reads its own paths */
/* Bone rotations over time: /time [n] (1 or more, increasing), /bones/names [nb] (1 to 256,
 * unique, shorter than max_name) and `dataset` [n, nb, 4], rotations of norm ~1. */
typedef struct sc_h5_rotations {
    size_t n, nb;
    double *time; /* [n] s */
    char **names; /* [nb] */
    double *quat; /* [n * nb * 4] w, x, y, z */
} sc_h5_rotations;
int sc_h5_read_rotations(sc_h5 *f, const char *dataset, size_t max_name, sc_h5_rotations *r, sc_err *err);
void sc_h5_rotations_free(sc_h5_rotations *r);
/* Bones' world poses over time: /bones/names, time_path [n], pos_path [n, nb, 3] and quat_path
 * [n, nb, 4], shapes checked (the values are the caller's to judge). */
typedef struct sc_h5_poses {
    size_t n, nbones;
    char **names;       /* [nbones] */
    double *time;       /* [n] s */
    double *pos, *quat; /* [n*nbones*3] m, [n*nbones*4] w, x, y, z */
} sc_h5_poses;
int sc_h5_read_poses(sc_h5 *f, const char *time_path, const char *pos_path, const char *quat_path, sc_h5_poses *p, sc_err *err);
void sc_h5_poses_free(sc_h5_poses *p);

#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "core/log.h"
#include "core/status.h"
#include "io/h5.h"
#include "test.h"

/* ---------------------------------------------------------------------------------------- */

/* A python3 that has h5py: PATH's python3 may be a pyenv one without the Debian package. */
static const char *h5py_python(void)
{
    static const char *const cand[] = {"python3", "/usr/bin/python3"};
    for (int i = 0; i < 2; i++)
        if (sc_test_sh(NULL, 0, "%s -c 'import h5py, numpy'", cand[i]) == 0) return cand[i];
    return NULL;
}

/* No HDF5 object left open: none now (live ids back to the start) and none force-closed at file
 * close (sc_h5 warns when H5Fclose finds objects still open). */
#define ENSURE_NO_LEAKS(ids0, warn0)                                                                     \
    do {                                                                                                 \
        ENSURE_MSG(sc_h5_live_ids() == (ids0), "%ld HDF5 objects left open", sc_h5_live_ids() - (ids0)); \
        ENSURE_MSG(sc_log_warning_count() == (warn0), "warnings: HDF5 objects were left open at close"); \
    } while (0)

static int bits_equal(const double *a, const double *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }

/* Values that a lossy path would not survive: signed zero, subnormals, extremes, NaN payloads. */
static void tricky_doubles(double *v, size_t n)
{
    const double special[] = {
        0.0, -0.0, 4.9406564584124654e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -1.0 / 3.0, 3.141592653589793, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < n; i++) v[i] = i < 10 ? special[i] : sin(0.37 * (double)i) * 1e3 + 1e-9 * (double)i;
}

TEST(h5_roundtrip_datasets_attrs_strings)
{
    long ids0 = sc_h5_live_ids();
    int warn0 = sc_log_warning_count();
    sc_err err = {0};
    const char *path = sc_test_tmp("roundtrip.h5");
    sc_h5 *f;
    ENSURE_OK(sc_h5_create(path, &f, &err), &err);
    char rt_tmp[1200]; /* the temporary's name is unique to the run (core/cleanup.h) */
    snprintf(rt_tmp, sizeof rt_tmp, "%s", sc_h5_temp_filename(f));
    ENSURE(!strncmp(rt_tmp, path, strlen(path)) && strstr(rt_tmp, ".tmp."));
    ENSURE(sc_test_file_exists(rt_tmp));
    ENSURE(!sc_test_file_exists(path));

    char *argv[] = {"mesh-prep", "-c", "my config.yaml", "--name=it's", "-o", "out/x.h5", ""};
    ENSURE_OK(sc_h5_provenance(f, "softcon.character/1", 7, argv, "seed: 7\nbody:\n  kind: capsule\n", &err), &err);
    ENSURE_OK(sc_h5_group(f, "/tetmesh", "tetrahedral mesh", &err), &err);
    ENSURE_OK(sc_h5_group(f, "/tetmesh", "tetrahedral mesh (again)", &err), &err); /* existing is fine */

    double pos[5 * 3];
    tricky_doubles(pos, 15);
    size_t d2[2] = {5, 3};
    ENSURE_OK(sc_h5_write_f64(f, "/tetmesh/rest_positions", 2, d2, pos, "m", "rest node positions", &err), &err);
    int tets[2 * 2 * 4];
    for (int i = 0; i < 16; i++) tets[i] = i * 1000003 - 7000000;
    tets[3] = INT32_MIN;
    tets[4] = INT32_MAX;
    size_t d3[3] = {2, 2, 4};
    ENSURE_OK(sc_h5_write_i32(f, "/tetmesh/tets", 3, d3, tets, "node indices", &err), &err);
    /* nested path whose parents do not exist yet; large enough to be chunked + deflated */
    enum { BIG = 120 * 100 };
    double *big = malloc(BIG * sizeof *big);
    ENSURE(big);
    tricky_doubles(big, BIG);
    size_t dbig[2] = {120, 100};
    ENSURE_OK(sc_h5_write_f64(f, "/deep/er/big", 2, dbig, big, "1", NULL, &err), &err);
    const char *names[] = {"root", "Hüfte", "", NULL, "left_forearm_with_a_long_name_0123456789"};
    ENSURE_OK(sc_h5_write_strings(f, "/skeleton/names", 5, names, "bone names", &err), &err);
    ENSURE_OK(sc_h5_attr_str(f, "/", "note", "ünïcode ✓", &err), &err);
    ENSURE_OK(sc_h5_attr_f64(f, "/tetmesh", "young_modulus", 3.0e5, &err), &err);
    ENSURE_OK(sc_h5_attr_f64(f, "/tetmesh", "young_modulus", 2.5e5, &err), &err); /* replaced */
    ENSURE_OK(sc_h5_attr_i64(f, "/tetmesh/tets", "count", 9007199254740993LL, &err), &err);
    double gains[3] = {300, -0.0, 1e-300};
    ENSURE_OK(sc_h5_attr_f64_array(f, "/", "gains", 3, gains, &err), &err);
    ENSURE_OK(sc_h5_attr_f64_array(f, "/tetmesh", "none", 0, NULL, &err), &err);
    ENSURE_OK(sc_h5_commit(f, &err), &err);
    ENSURE(sc_test_file_exists(path));
    ENSURE(!sc_test_file_exists(rt_tmp));

    ENSURE_OK(sc_h5_open(path, &f, &err), &err);
    ENSURE(!strcmp(sc_h5_filename(f), path));
    ENSURE(sc_h5_exists(f, "/tetmesh/tets") && sc_h5_exists(f, "deep/er") && sc_h5_exists(f, "/"));
    ENSURE(!sc_h5_exists(f, "/tetmesh/nope") && !sc_h5_exists(f, "/no/such/thing"));
    size_t r2[2] = {0, 3};
    double *rp = NULL;
    ENSURE_OK(sc_h5_read_f64(f, "/tetmesh/rest_positions", 2, r2, &rp, &err), &err);
    ENSURE(r2[0] == 5 && r2[1] == 3);
    ENSURE(bits_equal(rp, pos, 15));
    free(rp);
    size_t r3[3] = {0, 0, 0};
    int *rt = NULL;
    ENSURE_OK(sc_h5_read_i32(f, "/tetmesh/tets", 3, r3, &rt, &err), &err);
    ENSURE(r3[0] == 2 && r3[1] == 2 && r3[2] == 4 && !memcmp(rt, tets, sizeof tets));
    free(rt);
    /* integers read as doubles convert exactly */
    ENSURE_OK(sc_h5_read_f64(f, "/tetmesh/tets", 3, r3, &rp, &err), &err);
    for (int i = 0; i < 16; i++) ENSURE(rp[i] == (double)tets[i]);
    free(rp);
    size_t rb[2] = {120, 100};
    ENSURE_OK(sc_h5_read_f64(f, "/deep/er/big", 2, rb, &rp, &err), &err);
    ENSURE(bits_equal(rp, big, BIG));
    free(rp);
    free(big);
    char **s = NULL;
    size_t ns = 0;
    ENSURE_OK(sc_h5_read_strings(f, "/skeleton/names", &ns, &s, &err), &err);
    ENSURE(ns == 5);
    ENSURE(!strcmp(s[0], "root") && !strcmp(s[1], "Hüfte") && !strcmp(s[2], "") && !strcmp(s[3], "") && !strcmp(s[4], names[4]));
    sc_h5_free_strings(s, ns);

    /* attributes: units, descriptions, provenance */
    char *a = NULL;
    ENSURE_OK(sc_h5_read_attr_str(f, "/tetmesh/rest_positions", "units", &a, &err), &err);
    ENSURE(!strcmp(a, "m"));
    free(a);
    ENSURE_OK(sc_h5_read_attr_str(f, "/deep/er/big", "units", &a, &err), &err);
    ENSURE(!strcmp(a, "1"));
    free(a);
    ENSURE_OK(sc_h5_read_attr_str(f, "/tetmesh", "description", &a, &err), &err);
    ENSURE(!strcmp(a, "tetrahedral mesh (again)"));
    free(a);
    ENSURE(sc_h5_read_attr_str(f, "/tetmesh/tets", "units", &a, &err) == SC_EINPUT); /* integers: no units */
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "schema", &a, &err), &err);
    ENSURE(!strcmp(a, "softcon.character/1"));
    free(a);
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "created_by", &a, &err), &err);
    ENSURE_MSG(!strcmp(a, "mesh-prep -c 'my config.yaml' '--name=it'\\''s' -o out/x.h5 ''"), "created_by = %s", a);
    free(a);
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "softcon_version", &a, &err), &err);
    ENSURE(!strncmp(a, SC_VERSION "+", strlen(SC_VERSION) + 1));
    free(a);
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "created_at", &a, &err), &err);
    int Y, M, D, h, m, sec;
    char z = 0;
    ENSURE_MSG(strlen(a) == 20 && sscanf(a, "%4d-%2d-%2dT%2d:%2d:%2d%c", &Y, &M, &D, &h, &m, &sec, &z) == 7 && z == 'Z' && Y >= 2024 && M >= 1 &&
                   M <= 12 && D >= 1 && D <= 31,
               "created_at = %s", a);
    free(a);
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "host", &a, &err), &err);
    ENSURE(strlen(a) > 0);
    free(a);
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "config", &a, &err), &err);
    ENSURE(!strcmp(a, "seed: 7\nbody:\n  kind: capsule\n"));
    free(a);
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "note", &a, &err), &err);
    ENSURE(!strcmp(a, "ünïcode ✓"));
    free(a);
    double e = 0;
    ENSURE_OK(sc_h5_read_attr_f64(f, "/tetmesh", "young_modulus", &e, &err), &err);
    ENSURE(e == 2.5e5);
    long long c = 0;
    ENSURE_OK(sc_h5_read_attr_i64(f, "/tetmesh/tets", "count", &c, &err), &err);
    ENSURE(c == 9007199254740993LL); /* 2^53 + 1: would not survive a trip through double */
    sc_h5_close(f);

    /* the big dataset is chunked + deflated, the small one contiguous */
    char out[8192];
    ENSURE(sc_test_sh(out, sizeof out, "h5dump -p -H -d /deep/er/big '%s'", path) == 0);
    ENSURE_MSG(strstr(out, "CHUNKED") && strstr(out, "DEFLATE { LEVEL 4 }") && strstr(out, "SHUFFLE"), "%s", out);
    ENSURE(sc_test_sh(out, sizeof out, "h5dump -p -H -d /tetmesh/rest_positions '%s'", path) == 0);
    ENSURE_MSG(strstr(out, "CONTIGUOUS") && !strstr(out, "DEFLATE"), "%s", out);
    ENSURE_NO_LEAKS(ids0, warn0);
}

TEST(h5_abort_leaves_nothing)
{
    long ids0 = sc_h5_live_ids();
    int warn0 = sc_log_warning_count();
    sc_err err = {0};
    const char *path = sc_test_tmp("aborted.h5");
    sc_h5 *f;
    ENSURE_OK(sc_h5_create(path, &f, &err), &err);
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s", sc_h5_temp_filename(f));
    double x[4] = {1, 2, 3, 4};
    size_t d[1] = {4};
    ENSURE_OK(sc_h5_write_f64(f, "/x", 1, d, x, "m", NULL, &err), &err);
    sc_h5_series *t, *s;
    ENSURE_OK(sc_h5_timeline_create(f, "/time", &t, &err), &err);
    ENSURE_OK(sc_h5_series_create(f, "/q", t, 1, d, "rad", NULL, &s, &err), &err);
    for (int i = 0; i < 10; i++) ENSURE_OK(sc_h5_series_append(s, x, &err), &err);
    ENSURE(sc_test_file_exists(tmp));
    sc_h5_abort(f);
    ENSURE(!sc_test_file_exists(path) && !sc_test_file_exists(tmp));
    sc_h5_abort(NULL);

    /* an existing output survives an aborted rewrite untouched */
    ENSURE_OK(sc_h5_create(path, &f, &err), &err);
    ENSURE_OK(sc_h5_write_f64(f, "/x", 1, d, x, "m", NULL, &err), &err);
    ENSURE_OK(sc_h5_commit(f, &err), &err);
    ENSURE_OK(sc_h5_create(path, &f, &err), &err);
    sc_h5_abort(f);
    ENSURE(sc_test_file_exists(path) && !sc_test_file_exists(tmp));
    ENSURE_OK(sc_h5_open(path, &f, &err), &err);
    ENSURE(sc_h5_exists(f, "/x"));
    sc_h5_close(f);

    /* a commit that cannot rename (a directory sits at path) fails with SC_EIO, removes the tmp */
    const char *dir = sc_test_tmp("is_a_dir.h5");
    ENSURE(mkdir(dir, 0755) == 0);
    ENSURE_OK(sc_h5_create(dir, &f, &err), &err);
    ENSURE_OK(sc_h5_write_f64(f, "/x", 1, d, x, "m", NULL, &err), &err);
    ENSURE(sc_h5_commit(f, &err) == SC_EIO);
    ENSURE_MSG(strstr(err.msg, "is_a_dir.h5: cannot rename"), "%s", err.msg);
    ENSURE(!sc_test_temporary_left(sc_test_tmp("is_a_dir.h5")));
    ENSURE(sc_h5_open(dir, &f, &err) == SC_EIO && f == NULL);

    /* a directory that does not exist: SC_EIO naming the path and the reason, no leftovers */
    const char *bad = sc_test_tmp("no_such_dir/out.h5");
    ENSURE(sc_h5_create(bad, &f, &err) == SC_EIO && f == NULL);
    ENSURE_MSG(strstr(err.msg, bad) && strstr(err.msg, "No such file or directory"), "%s", err.msg);
    ENSURE_NO_LEAKS(ids0, warn0);
}

TEST(h5_commit_replaces_atomically)
{
    long ids0 = sc_h5_live_ids();
    int warn0 = sc_log_warning_count();
    sc_err err = {0};
    const char *path = sc_test_tmp("replace.h5");
    size_t d[1] = {3};
    double v1[3] = {1, 1, 1}, v2[3] = {2, 2, 2};
    sc_h5 *f, *old, *mid, *now;
    ENSURE_OK(sc_h5_create(path, &f, &err), &err);
    ENSURE_OK(sc_h5_write_f64(f, "/v", 1, d, v1, "1", NULL, &err), &err);
    ENSURE_OK(sc_h5_commit(f, &err), &err);
    struct stat st1, st2;
    ENSURE(stat(path, &st1) == 0);

    ENSURE_OK(sc_h5_open(path, &old, &err), &err); /* a reader holding the old version */
    ENSURE_OK(sc_h5_create(path, &f, &err), &err);
    ENSURE_OK(sc_h5_write_f64(f, "/v", 1, d, v2, "1", NULL, &err), &err);
    ENSURE_OK(sc_h5_write_f64(f, "/w", 1, d, v2, "1", NULL, &err), &err);
    /* before commit, path still is the complete old file */
    ENSURE_OK(sc_h5_open(path, &mid, &err), &err);
    double *r = NULL;
    size_t rd[1] = {3};
    ENSURE_OK(sc_h5_read_f64(mid, "/v", 1, rd, &r, &err), &err);
    ENSURE(r[0] == 1 && !sc_h5_exists(mid, "/w"));
    free(r);
    sc_h5_close(mid);
    ENSURE_OK(sc_h5_commit(f, &err), &err);
    ENSURE(stat(path, &st2) == 0);
    ENSURE(st1.st_ino != st2.st_ino); /* replaced by rename, not rewritten in place */
    ENSURE(!sc_test_temporary_left(sc_test_tmp("replace.h5")));

    ENSURE_OK(sc_h5_read_f64(old, "/v", 1, rd, &r, &err), &err);
    ENSURE(r[0] == 1 && r[2] == 1);
    free(r);
    sc_h5_close(old);
    ENSURE_OK(sc_h5_open(path, &now, &err), &err);
    ENSURE_OK(sc_h5_read_f64(now, "/v", 1, rd, &r, &err), &err);
    ENSURE(r[0] == 2 && r[2] == 2 && sc_h5_exists(now, "/w"));
    free(r);
    sc_h5_close(now);
    ENSURE_NO_LEAKS(ids0, warn0);
}

TEST(h5_read_errors_name_path_and_expectation)
{
    long ids0 = sc_h5_live_ids();
    int warn0 = sc_log_warning_count();
    sc_err err = {0};
    const char *path = sc_test_tmp("character.h5");
    sc_h5 *f;
    ENSURE_OK(sc_h5_create(path, &f, &err), &err);
    double x[12] = {0};
    size_t d1[1] = {12}, d2[2] = {4, 3};
    ENSURE_OK(sc_h5_write_f64(f, "/tetmesh/tets", 1, d1, x, "1", NULL, &err), &err);
    ENSURE_OK(sc_h5_write_f64(f, "/tetmesh/rest", 2, d2, x, "m", NULL, &err), &err);
    const char *nm[1] = {"a"};
    ENSURE_OK(sc_h5_write_strings(f, "/skeleton/names", 1, nm, NULL, &err), &err);
    ENSURE_OK(sc_h5_attr_str(f, "/", "schema", "softcon.character/1", &err), &err);
    ENSURE_OK(sc_h5_commit(f, &err), &err);
    ENSURE_OK(sc_h5_open(path, &f, &err), &err);
    /* creating under a dataset or over an existing object is refused with a clear message */
    {
        sc_h5 *w;
        ENSURE_OK(sc_h5_create(sc_test_tmp("clash.h5"), &w, &err), &err);
        ENSURE_OK(sc_h5_write_f64(w, "/a", 1, d1, x, "1", NULL, &err), &err);
        ENSURE(sc_h5_write_f64(w, "/a", 1, d1, x, "1", NULL, &err) == SC_EINPUT);
        ENSURE_MSG(strstr(err.msg, "clash.h5:/a: already exists"), "%s", err.msg);
        ENSURE(sc_h5_write_f64(w, "/a/b/c", 1, d1, x, "1", NULL, &err) == SC_EINPUT);
        ENSURE_MSG(strstr(err.msg, "clash.h5:/a/b/c: cannot create: /a is not a group"), "%s", err.msg);
        ENSURE(sc_h5_group(w, "/a", NULL, &err) == SC_EINPUT);
        ENSURE_MSG(strstr(err.msg, "clash.h5:/a: exists and is not a group"), "%s", err.msg);
        ENSURE(sc_h5_attr_str(w, "/b", "units", "m", &err) == SC_EINPUT);
        ENSURE_MSG(strstr(err.msg, "clash.h5:/b: missing"), "%s", err.msg);
        sc_h5_abort(w);
    }
    /* writing to a read-only handle is refused */
    ENSURE(sc_h5_write_f64(f, "/y", 1, d1, x, "1", NULL, &err) == SC_EIO);

    char want[4096];
    int *ti = NULL;
    double *td = NULL;
    size_t e2[2] = {0, 4};
    ENSURE(sc_h5_read_i32(f, "/tetmesh/tets", 2, e2, &ti, &err) == SC_EINPUT && ti == NULL);
    snprintf(want, sizeof want, "%s:/tetmesh/tets: expected a 2-D integer dataset with 4 columns, found 1-D float of shape 12", path);
    ENSURE_MSG(!strcmp(err.msg, want), "got: %s", err.msg);

    ENSURE(sc_h5_read_f64(f, "/skin/weights", 2, e2, &td, &err) == SC_EINPUT && td == NULL);
    snprintf(want, sizeof want, "%s:/skin/weights: missing", path);
    ENSURE_MSG(!strcmp(err.msg, want), "got: %s", err.msg);

    /* right rank, wrong column count */
    ENSURE(sc_h5_read_f64(f, "tetmesh/rest", 2, e2, &td, &err) == SC_EINPUT);
    snprintf(want, sizeof want, "%s:/tetmesh/rest: expected a 2-D numeric dataset with 4 columns, found 2-D float of shape 4 x 3", path);
    ENSURE_MSG(!strcmp(err.msg, want), "got: %s", err.msg);
    size_t e3[3] = {4, 0, 3};
    ENSURE(sc_h5_read_f64(f, "/tetmesh/rest", 3, e3, &td, &err) == SC_EINPUT);
    ENSURE_MSG(strstr(err.msg, "expected a 3-D numeric dataset of shape 4 x any x 3, found 2-D float"), "%s", err.msg);
    /* right shape is accepted, dims come back */
    size_t ok2[2] = {0, 3};
    ENSURE_OK(sc_h5_read_f64(f, "/tetmesh/rest", 2, ok2, &td, &err), &err);
    ENSURE(ok2[0] == 4 && ok2[1] == 3);
    free(td);

    /* a group where a dataset was expected; strings where numbers were expected */
    size_t e1[1] = {0};
    ENSURE(sc_h5_read_f64(f, "/tetmesh", 1, e1, &td, &err) == SC_EINPUT);
    ENSURE_MSG(strstr(err.msg, ":/tetmesh: expected a 1-D numeric dataset, found a group"), "%s", err.msg);
    ENSURE(sc_h5_read_f64(f, "/skeleton/names", 1, e1, &td, &err) == SC_EINPUT);
    ENSURE_MSG(strstr(err.msg, ":/skeleton/names: expected a 1-D numeric dataset, found 1-D string of shape 1"), "%s", err.msg);
    char **s = NULL;
    size_t ns = 0;
    ENSURE(sc_h5_read_strings(f, "/tetmesh/rest", &ns, &s, &err) == SC_EINPUT && s == NULL);
    ENSURE_MSG(strstr(err.msg, ":/tetmesh/rest: expected a 1-D string dataset, found 2-D float"), "%s", err.msg);

    /* attributes */
    char *a = NULL;
    ENSURE(sc_h5_read_attr_str(f, "/tetmesh/rest", "description", &a, &err) == SC_EINPUT && a == NULL);
    ENSURE_MSG(strstr(err.msg, ":/tetmesh/rest: attribute 'description' missing"), "%s", err.msg);
    double v;
    ENSURE(sc_h5_read_attr_f64(f, "/", "schema", &v, &err) == SC_EINPUT);
    ENSURE_MSG(strstr(err.msg, ":/: attribute 'schema': expected a scalar number, found string"), "%s", err.msg);
    ENSURE(sc_h5_read_attr_i64(f, "/nowhere", "x", &(long long){0}, &err) == SC_EINPUT);
    ENSURE_MSG(strstr(err.msg, ":/nowhere: missing"), "%s", err.msg);
    sc_h5_close(f);

    /* files: missing -> SC_EIO, not HDF5 -> SC_EINPUT naming the file */
    const char *missing = sc_test_tmp("absent.h5");
    ENSURE(sc_h5_open(missing, &f, &err) == SC_EIO && f == NULL);
    ENSURE_MSG(strstr(err.msg, missing) && strstr(err.msg, "No such file"), "%s", err.msg);
    const char *text = sc_test_write("x.h5", "this is not an HDF5 file\njust text\n");
    ENSURE(sc_h5_open(text, &f, &err) == SC_EINPUT && f == NULL);
    snprintf(want, sizeof want, "%s: not an HDF5 file", text);
    ENSURE_MSG(!strcmp(err.msg, want), "got: %s", err.msg);
    const char *empty = sc_test_write("empty.h5", "");
    ENSURE(sc_h5_open(empty, &f, &err) == SC_EINPUT);
    ENSURE_NO_LEAKS(ids0, warn0);
}

/* Write the time series used by the two tests below; returns 0 on success. */
enum { NT = 1000, NC = 300 };
static double series_value(int t, int c) { return 0.25 * (double)(t % 97) + (double)c; }

TEST(h5_series_chunked_deflated_dimension_scale)
{
    long ids0 = sc_h5_live_ids();
    int warn0 = sc_log_warning_count();
    sc_err err = {0};
    const char *path = sc_test_tmp("series.h5");
    sc_h5 *f;
    sc_h5_series *time, *q, *contacts, *nodes;
    ENSURE_OK(sc_h5_create(path, &f, &err), &err);
    char *argv[] = {"simulate", "-c", "sim.yaml"};
    ENSURE_OK(sc_h5_provenance(f, "softcon.sim/1", 3, argv, NULL, &err), &err);
    ENSURE_OK(sc_h5_timeline_create(f, "/time", &time, &err), &err);
    size_t sd[1] = {NC}, nd[2] = {4, 3};
    ENSURE_OK(sc_h5_series_create(f, "/state/q", time, 1, sd, "rad", "joint angles", &q, &err), &err);
    ENSURE_OK(sc_h5_series_create_i32(f, "/state/contacts", time, 0, NULL, "active contacts", &contacts, &err), &err);
    ENSURE_OK(sc_h5_series_create(f, "/state/nodes", time, 2, nd, "m", "node positions", &nodes, &err), &err);
    /* wrong element type is refused */
    ENSURE(sc_h5_series_append_i32(q, (int[]){1}, &err) == SC_EINPUT);
    ENSURE(sc_h5_series_append(contacts, (double[]){1}, &err) == SC_EINPUT);
    double sample[NC], ns[12];
    for (int t = 0; t < NT; t++) {
        double tt = 0.001 * t;
        for (int c = 0; c < NC; c++) sample[c] = series_value(t, c);
        for (int k = 0; k < 12; k++) ns[k] = tt * k;
        int nc = t % 7;
        ENSURE_OK(sc_h5_series_append(time, &tt, &err), &err);
        ENSURE_OK(sc_h5_series_append(q, sample, &err), &err);
        ENSURE_OK(sc_h5_series_append_i32(contacts, &nc, &err), &err);
        ENSURE_OK(sc_h5_series_append(nodes, ns, &err), &err);
    }
    ENSURE(sc_h5_series_length(q) == NT && sc_h5_series_length(time) == NT);
    ENSURE_OK(sc_h5_commit(f, &err), &err);

    ENSURE_OK(sc_h5_open(path, &f, &err), &err);
    size_t d2[2] = {NT, NC}, d1[1] = {NT}, d3[3] = {NT, 4, 3};
    double *rq = NULL, *rt = NULL, *rn = NULL;
    int *rc = NULL;
    ENSURE_OK(sc_h5_read_f64(f, "/state/q", 2, d2, &rq, &err), &err);
    ENSURE_OK(sc_h5_read_f64(f, "/time", 1, d1, &rt, &err), &err);
    ENSURE_OK(sc_h5_read_f64(f, "/state/nodes", 3, d3, &rn, &err), &err);
    ENSURE_OK(sc_h5_read_i32(f, "/state/contacts", 1, d1, &rc, &err), &err);
    int exact = 1;
    for (int t = 0; t < NT; t++) {
        exact &= rt[t] == 0.001 * t && rc[t] == t % 7 && rn[t * 12 + 11] == 0.001 * t * 11;
        for (int c = 0; c < NC; c++) exact &= rq[(size_t)t * NC + c] == series_value(t, c);
    }
    free(rq);
    free(rt);
    free(rn);
    free(rc);
    ENSURE(exact);
    char *u = NULL;
    ENSURE_OK(sc_h5_read_attr_str(f, "/time", "units", &u, &err), &err);
    ENSURE(!strcmp(u, "s"));
    free(u);
    ENSURE_OK(sc_h5_read_attr_str(f, "/state/q", "units", &u, &err), &err);
    ENSURE(!strcmp(u, "rad"));
    free(u);
    sc_h5_close(f);

    /* storage layout as h5dump reports it */
    char out[16384];
    ENSURE(sc_test_sh(out, sizeof out, "h5dump -p -H -d /state/q '%s'", path) == 0);
    ENSURE_MSG(strstr(out, "CHUNKED ( 256, 300 )"), "%s", out);
    ENSURE_MSG(strstr(out, "SHUFFLE") && strstr(out, "DEFLATE { LEVEL 4 }"), "%s", out);
    ENSURE_MSG(strstr(out, "( 1000, 300 ) / ( H5S_UNLIMITED, 300 )"), "%s", out);
    const char *sz = strstr(out, "SIZE ");
    unsigned long long stored = 0;
    double ratio = 0;
    ENSURE(sz && sscanf(sz, "SIZE %llu (%lf:1 COMPRESSION)", &stored, &ratio) == 2);
    sc_test_report("/state/q 1000 x 300 f64: %llu bytes stored, compression %.2f:1", stored, ratio);
    ENSURE(ratio > 2.0 && stored < (unsigned long long)NT * NC * 8 / 2);

    /* H5DS convention: /time carries CLASS=DIMENSION_SCALE and a REFERENCE_LIST naming the
     * three series; each series carries DIMENSION_LIST. */
    ENSURE(sc_test_sh(out, sizeof out, "h5dump -A -a /time/CLASS -a /state/q/DIMENSION_LIST '%s'", path) == 0);
    ENSURE_MSG(strstr(out, "\"DIMENSION_SCALE\"") && strstr(out, "DATASET") && strstr(out, "/time"), "%s", out);
    ENSURE(sc_test_sh(out, sizeof out, "h5dump -A -a /time/REFERENCE_LIST '%s'", path) == 0);
    ENSURE_MSG(strstr(out, "/state/q") && strstr(out, "/state/contacts") && strstr(out, "/state/nodes"), "%s", out);

    ENSURE_NO_LEAKS(ids0, warn0);
    const char *python = h5py_python();
    if (!python) {
        sc_test_report("python3-h5py missing: skipped the h5py dimension-scale check");
        return;
    }
    const char *py = sc_test_write("check_ds.py",
                                   "import sys, h5py\n"
                                   "f = h5py.File(sys.argv[1], 'r')\n"
                                   "t = f['time']\n"
                                   "assert h5py.h5ds.is_scale(t.id)\n"
                                   "for name in ('state/q', 'state/contacts', 'state/nodes'):\n"
                                   "    d = f[name]\n"
                                   "    assert h5py.h5ds.is_attached(d.id, t.id, 0), name\n"
                                   "    assert len(d.dims[0]) == 1 and d.dims[0][0].name == '/time', name\n"
                                   "    assert d.id.get_create_plist().get_nfilters() == 2\n"
                                   "assert len(f['state/nodes'].dims[1]) == 0\n"
                                   "assert f['state/q'].chunks == (256, 300) and f['state/q'].compression == 'gzip'\n"
                                   "assert f['state/q'].attrs['units'] == 'rad'\n"
                                   "assert abs(f['time'][999] - 0.999) < 1e-15\n"
                                   "print('ok')\n");
    int st = sc_test_sh(out, sizeof out, "%s '%s' '%s'", python, py, path);
    ENSURE_MSG(st == 0 && strstr(out, "ok"), "h5py: %s", out);
    ENSURE_NO_LEAKS(ids0, warn0);
}

TEST(h5_h5py_sees_units_provenance_and_writes_readable_files)
{
    long ids0 = sc_h5_live_ids();
    int warn0 = sc_log_warning_count();
    const char *python = h5py_python();
    if (!python) {
        sc_test_report("python3-h5py missing: skipped");
        return;
    }
    sc_err err = {0};
    const char *path = sc_test_tmp("py.h5");
    sc_h5 *f;
    ENSURE_OK(sc_h5_create(path, &f, &err), &err);
    char *argv[] = {"skin-weights", "-c", "a b.yaml"};
    ENSURE_OK(sc_h5_provenance(f, "softcon.character/1", 3, argv, "k: 1\n", &err), &err);
    double m[6] = {1, 2, 3, 4, 5, 6.5};
    size_t d[2] = {2, 3};
    ENSURE_OK(sc_h5_write_f64(f, "/skin/weights", 2, d, m, "1", "bone weights per vertex", &err), &err);
    ENSURE_OK(sc_h5_write_f64(f, "/tetmesh/masses", 1, d, m, "kg", NULL, &err), &err);
    const char *nm[2] = {"root", "Hüfte"};
    ENSURE_OK(sc_h5_write_strings(f, "/skeleton/names", 2, nm, NULL, &err), &err);
    ENSURE_OK(sc_h5_commit(f, &err), &err);

    const char *py = sc_test_write("check_py.py",
                                   "import sys, h5py, numpy as np\n"
                                   "f = h5py.File(sys.argv[1], 'r')\n"
                                   "a = f.attrs\n"
                                   "assert a['schema'] == 'softcon.character/1', a['schema']\n"
                                   "assert a['created_by'] == \"skin-weights -c 'a b.yaml'\", a['created_by']\n"
                                   "assert a['config'] == 'k: 1\\n'\n"
                                   "for k in ('softcon_version', 'created_at', 'host'): assert len(a[k]) > 0, k\n"
                                   "w = f['skin/weights']\n"
                                   "assert w.attrs['units'] == '1' and w.attrs['description'] == 'bone weights per vertex'\n"
                                   "assert f['tetmesh/masses'].attrs['units'] == 'kg'\n"
                                   "assert w.dtype == np.float64 and w.shape == (2, 3) and w[1, 2] == 6.5\n"
                                   "names = [s.decode('utf-8') if isinstance(s, bytes) else s for s in f['skeleton/names'][()]]\n"
                                   "assert names == ['root', 'H\\u00fcfte'], names\n"
                                   "g = h5py.File(sys.argv[2], 'w')\n"
                                   "g['f32'] = np.array([[0.5, -1.25], [3.0, 1e-3]], dtype=np.float32)\n"
                                   "g['i64'] = np.array([1, -2, 3], dtype=np.int64)\n"
                                   "g['u8'] = np.array([0, 200, 255], dtype=np.uint8)\n"
                                   "g['big'] = np.array([1, 2**40], dtype=np.int64)\n"
                                   "g['fixed'] = np.array([b'abc', b'hip', b''], dtype='S5')\n"
                                   "g.attrs['fixed_attr'] = np.string_('left knee')\n"
                                   "g.attrs['f32_attr'] = np.float32(0.1)\n"
                                   "g.attrs['i16_attr'] = np.int16(-7)\n"
                                   "g.close()\n"
                                   "print('ok')\n");
    const char *other = sc_test_tmp("from_py.h5");
    char out[8192];
    int st = sc_test_sh(out, sizeof out, "%s '%s' '%s' '%s'", python, py, path, other);
    ENSURE_MSG(st == 0 && strstr(out, "ok"), "h5py: %s", out);

    /* files written by others: float32 / int64 / uint8 convert, fixed-length strings read */
    ENSURE_OK(sc_h5_open(other, &f, &err), &err);
    size_t d2[2] = {0, 0}, d1[1] = {0};
    double *x = NULL;
    ENSURE_OK(sc_h5_read_f64(f, "/f32", 2, d2, &x, &err), &err);
    ENSURE(d2[0] == 2 && d2[1] == 2 && x[0] == 0.5 && x[1] == -1.25 && x[2] == 3.0 && x[3] == (double)1e-3f);
    free(x);
    int *iv = NULL;
    ENSURE_OK(sc_h5_read_i32(f, "/i64", 1, d1, &iv, &err), &err);
    ENSURE(d1[0] == 3 && iv[0] == 1 && iv[1] == -2 && iv[2] == 3);
    free(iv);
    d1[0] = 0;
    ENSURE_OK(sc_h5_read_i32(f, "/u8", 1, d1, &iv, &err), &err);
    ENSURE(iv[1] == 200 && iv[2] == 255);
    free(iv);
    d1[0] = 0;
    ENSURE(sc_h5_read_i32(f, "/big", 1, d1, &iv, &err) == SC_EINPUT && iv == NULL);
    ENSURE_MSG(strstr(err.msg, ":/big: element 1 = 1099511627776 does not fit a 32-bit integer"), "%s", err.msg);
    ENSURE(sc_h5_read_i32(f, "/f32", 2, d2, &iv, &err) == SC_EINPUT); /* no silent float -> int */
    char **s = NULL;
    size_t n = 0;
    ENSURE_OK(sc_h5_read_strings(f, "/fixed", &n, &s, &err), &err);
    ENSURE(n == 3 && !strcmp(s[0], "abc") && !strcmp(s[1], "hip") && !strcmp(s[2], ""));
    sc_h5_free_strings(s, n);
    char *a = NULL;
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "fixed_attr", &a, &err), &err);
    ENSURE(!strcmp(a, "left knee"));
    free(a);
    double v = 0;
    ENSURE_OK(sc_h5_read_attr_f64(f, "/", "f32_attr", &v, &err), &err);
    ENSURE(v == (double)0.1f);
    long long k = 0;
    ENSURE_OK(sc_h5_read_attr_i64(f, "/", "i16_attr", &k, &err), &err);
    ENSURE(k == -7);
    sc_h5_close(f);
    ENSURE_NO_LEAKS(ids0, warn0);
}

TEST(h5_flush_then_abandon_leaves_readable_file)
{
    long ids0 = sc_h5_live_ids();
    int warn0 = sc_log_warning_count();
    sc_err err = {0};
    const char *path = sc_test_tmp("crash.h5");
    const char *copy = sc_test_tmp("crash_copy.h5");
    sc_h5 *f;
    sc_h5_series *time, *q;
    ENSURE_OK(sc_h5_create(path, &f, &err), &err);
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s", sc_h5_temp_filename(f));
    ENSURE_OK(sc_h5_provenance(f, "softcon.sim/1", 0, NULL, NULL, &err), &err);
    ENSURE_OK(sc_h5_timeline_create(f, "/time", &time, &err), &err);
    size_t sd[1] = {NC};
    ENSURE_OK(sc_h5_series_create(f, "/q", time, 1, sd, "rad", NULL, &q, &err), &err);
    double sample[NC];
    /* 300 samples: one whole chunk of 256 written, 44 buffered until the flush */
    for (int t = 0; t < 300; t++) {
        double tt = 0.01 * t;
        for (int c = 0; c < NC; c++) sample[c] = series_value(t, c);
        ENSURE_OK(sc_h5_series_append(time, &tt, &err), &err);
        ENSURE_OK(sc_h5_series_append(q, sample, &err), &err);
    }
    ENSURE_OK(sc_h5_flush(f, &err), &err);
    /* appended after the flush: buffered, must not be visible and must not corrupt the file */
    for (int t = 300; t < 310; t++) {
        double tt = 0.01 * t;
        ENSURE_OK(sc_h5_series_append(time, &tt, &err), &err);
        ENSURE_OK(sc_h5_series_append(q, sample, &err), &err);
    }
    ENSURE(sc_test_sh(NULL, 0, "cp '%s' '%s'", tmp, copy) == 0);

    sc_h5 *r;
    ENSURE_OK(sc_h5_open(copy, &r, &err), &err);
    size_t d2[2] = {0, NC}, d1[1] = {0};
    double *rq = NULL, *rt = NULL;
    ENSURE_OK(sc_h5_read_f64(r, "/q", 2, d2, &rq, &err), &err);
    ENSURE_OK(sc_h5_read_f64(r, "/time", 1, d1, &rt, &err), &err);
    sc_test_report("abandoned copy holds %zu of 310 appended samples (300 flushed)", d2[0]);
    ENSURE(d2[0] == 300 && d1[0] == 300);
    int exact = 1;
    for (int t = 0; t < 300; t++) {
        exact &= rt[t] == 0.01 * t;
        for (int c = 0; c < NC; c++) exact &= rq[(size_t)t * NC + c] == series_value(t, c);
    }
    free(rq);
    free(rt);
    ENSURE(exact);
    char *schema = NULL;
    ENSURE_OK(sc_h5_read_attr_str(r, "/", "schema", &schema, &err), &err);
    ENSURE(!strcmp(schema, "softcon.sim/1"));
    free(schema);
    sc_h5_close(r);

    /* the run goes on past the partially written chunk, flushes again, then commits */
    for (int t = 310; t < 600; t++) {
        double tt = 0.01 * t;
        for (int c = 0; c < NC; c++) sample[c] = series_value(t, c);
        ENSURE_OK(sc_h5_series_append(time, &tt, &err), &err);
        ENSURE_OK(sc_h5_series_append(q, sample, &err), &err);
        if (t == 400) ENSURE_OK(sc_h5_flush(f, &err), &err);
    }
    ENSURE_OK(sc_h5_commit(f, &err), &err);
    ENSURE_OK(sc_h5_open(path, &r, &err), &err);
    d2[0] = 600;
    d1[0] = 600;
    ENSURE_OK(sc_h5_read_f64(r, "/q", 2, d2, &rq, &err), &err);
    ENSURE_OK(sc_h5_read_f64(r, "/time", 1, d1, &rt, &err), &err);
    for (int t = 0; t < 600; t++) {
        /* samples 300..309 were appended with sample of t = 299 */
        int src = t >= 300 && t < 310 ? 299 : t;
        exact &= rt[t] == 0.01 * t;
        for (int c = 0; c < NC; c++) exact &= rq[(size_t)t * NC + c] == series_value(src, c);
    }
    free(rq);
    free(rt);
    sc_h5_close(r);
    ENSURE(exact);
    ENSURE_NO_LEAKS(ids0, warn0);
}

/* Two in-memory images opened under one name are two files: libhdf5's core driver matches an
 * open file by name, so the second image used to be answered from the first (whatever was left
 * open of an earlier read, a damaged file's half-closed state included, then served the next
 * image of that name: the state one fuzz input carried into the next). */
TEST(h5_images_with_one_name_stay_apart)
{
    sc_err err;
    unsigned char *img[2] = {NULL, NULL};
    size_t size[2] = {0, 0};
    const char *path[2] = {sc_test_tmp("img_a.h5"), sc_test_tmp("img_b.h5")};
    for (int k = 0; k < 2; k++) {
        sc_h5 *f;
        double v[3] = {k + 1.0, k + 2.0, k + 3.0};
        ENSURE(sc_h5_create(path[k], &f, &err) == SC_OK);
        ENSURE(sc_h5_write_f64(f, "/v", 1, (size_t[]){(size_t)(k + 2)}, v, "1", "values", &err) == SC_OK);
        ENSURE(sc_h5_commit(f, &err) == SC_OK);
        FILE *fp = fopen(path[k], "rb");
        ENSURE(fp);
        img[k] = malloc(1 << 16);
        size[k] = fread(img[k], 1, 1 << 16, fp);
        fclose(fp);
    }
    long ids0 = sc_h5_live_ids();
    sc_h5 *a = NULL, *b = NULL;
    ENSURE(sc_h5_open_image(img[0], size[0], "same.h5", &a, &err) == SC_OK);
    ENSURE(sc_h5_open_image(img[1], size[1], "same.h5", &b, &err) == SC_OK);
    size_t da[1] = {0}, db[1] = {0};
    double *va = NULL, *vb = NULL;
    int ra = sc_h5_read_f64(a, "/v", 1, da, &va, &err), rb = sc_h5_read_f64(b, "/v", 1, db, &vb, &err);
    sc_h5_close(b);
    sc_h5_close(a);
    int ok = ra == SC_OK && rb == SC_OK && da[0] == 2 && db[0] == 3 && va[0] == 1 && vb[0] == 2;
    sc_test_report("two images named same.h5: the second read %zu values starting %g (its own: 3 starting 2)", db[0], vb ? vb[0] : NAN);
    free(va);
    free(vb);
    free(img[0]);
    free(img[1]);
    ENSURE_MSG(ok, "the second image was read as the first (%zu values)", db[0]);
    ENSURE_MSG(sc_h5_live_ids() == ids0, "HDF5 objects left open");
}

/* Checkpoints are inputs (issue 27, items 1-2): a sample-openloop checkpoint damaged in any
 * index, counter or value, with its checksum made right again (as by a hostile hand) or not, is
 * refused on --resume with exit 2 naming the checkpoint, and no output is left; learn-feedback's
 * checkpoint readers likewise (their decoders, in the library). The damage is made on one
 * checkpoint written by an interrupted run of a small preset, patched through libhdf5. */
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/hash.h"
#include "io/checkpoint.h"
#include "io/h5.h"
#include "learn/gain_search.h"
#include "learn/guided.h"
#include "sampling/samcon.h"
#include "fixtures.h"
#include "test.h"

static char out[16384];

/* 40 segments of 0.05 s, 24 samples, 4 elites: stopped after segment 2, with far too many left
   for any load on the machine to let the run end before the SIGTERM reaches it */
static const char *preset(void)
{
    static const char *p;
    if (p) return p;
    return p = sc_fixture_keep(sc_test_write("ckpt_preset.yaml",
                                             "simulation:\n  solver: quick\nsampling:\n  segment: 0.05\n  samples: 24\n  elites: 4\n"
                                             "  end: 2.0\n"));
}

static long long next_segment(const char *path)
{
    sc_h5 *f;
    sc_err err;
    long long k = -1;
    if (sc_h5_open(path, &f, &err)) return -1;
    if (sc_h5_read_attr_i64(f, "/", "next_segment", &k, &err)) k = -1;
    sc_h5_close(f);
    return k;
}

/* A checkpoint of the preset after at least 2 segments (SIGTERM once it is there: the run
   checkpoints and exits 6), kept for every test. */
static int two_segments_done(const void *ck) { return next_segment(ck) >= 2; }

static const char *pristine(void)
{
    static int state;
    static const char *keep;
    if (state) return state > 0 ? keep : NULL;
    state = -1;
    const char *o = sc_fixture_keep(sc_test_tmp("ckpt_run.h5")), *log = sc_fixture_keep(sc_test_tmp("ckpt_run.log"));
    const char *ch = sc_fixture_michelin(), *ref = sc_fixture_march_reference();
    if (!ch || !ref) return NULL;
    char ck[1100];
    snprintf(ck, sizeof ck, "%s.ckpt", o);
    unlink(ck);
    unlink(o);
    sc_test_sh(NULL, 0, "(%s -q -c %s -o %s %s %s > %s 2>&1; echo $? > %s.rc) > /dev/null 2>&1 &", sc_test_tool("sample-openloop"), preset(), o, ch,
               ref, log, log);
    char command[4400];
    snprintf(command, sizeof command, "%s -q -c %s -o %s", sc_test_tool("sample-openloop"), preset(), o);
    int seen = sc_test_wait_while_running(two_segments_done, ck, command, 1800);
    sc_test_sh(NULL, 0, "pkill -TERM -f '^%s -q -c %s -o %s'", sc_test_tool("sample-openloop"), preset(), o);
    char rcfile[1100];
    snprintf(rcfile, sizeof rcfile, "%s.rc", log);
    int rc = -1;
    for (int i = 0; i < 2400 && rc < 0; i++) {
        FILE *f = fopen(rcfile, "r");
        if (f && fscanf(f, "%d", &rc) != 1) rc = -1;
        if (f) fclose(f);
        if (rc < 0) usleep(50000);
    }
    if (!seen || rc != 6 || next_segment(ck) < 2) return NULL;
    keep = sc_fixture_keep(sc_test_tmp("ckpt_pristine.h5"));
    if (sc_test_sh(NULL, 0, "cp %s %s", ck, keep)) return NULL;
    state = 1;
    return keep;
}

/* ---- the /search blob: where things are ---- */

typedef struct blob {
    unsigned char *p;
    size_t n, at; /* at: where the sampler's own layout starts (its magic "SCKPT001") */
} blob;

static int blob_read(const char *path, blob *b)
{
    sc_h5 *f;
    sc_err err;
    memset(b, 0, sizeof *b);
    if (sc_h5_open(path, &f, &err)) return 0;
    int rc = sc_h5_read_bytes(f, "/search", &b->n, &b->p, &err);
    sc_h5_close(f);
    if (rc) return 0;
    const int64_t magic = 0x53434b5054303031ll;
    for (b->at = 0; b->at + 8 <= b->n; b->at += 8)
        if (!memcmp(b->p + b->at, &magic, 8)) return 1;
    return 0;
}

/* The checksum made right again, as a hostile writer would (a blob without a header has none). */
static void blob_reseal(blob *b)
{
    uint64_t magic = SC_CHECKPOINT_MAGIC;
    if (b->at < SC_CHECKPOINT_HEADER || memcmp(b->p, &magic, 8)) return;
    uint64_t h = sc_hash_bytes(SC_HASH_INIT, b->p, SC_CHECKPOINT_HEADER - 8);
    h = sc_hash_bytes(h, b->p + SC_CHECKPOINT_HEADER, b->n - SC_CHECKPOINT_HEADER);
    memcpy(b->p + SC_CHECKPOINT_HEADER - 8, &h, 8);
}

static int blob_write(const char *path, const blob *b)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) return 0;
    hid_t d = H5Dopen2(f, "/search", H5P_DEFAULT);
    herr_t rc = d < 0 ? -1 : H5Dwrite(d, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, b->p);
    if (d >= 0) H5Dclose(d);
    H5Fclose(f);
    return rc >= 0;
}

static void put_i64(blob *b, size_t byte, int64_t v) { memcpy(b->p + b->at + byte, &v, 8); }
static int64_t get_i64(const blob *b, size_t word)
{
    int64_t v;
    memcpy(&v, b->p + b->at + 8 * word, 8);
    return v;
}

/* The sampler's layout (lib/sampling/samcon.c, serialize): 11 words of header, nseg (attempts,
   retries), nseg multipliers, nseg accumulators, then the levels. */
enum { W_NSEG = 2, W_NDOF = 3, W_NAUX = 4, W_K = 5, W_HEAD = 11 };
static size_t attempts_word(const blob *b, int j)
{
    (void)b;
    return W_HEAD + 2 * (size_t)j;
}
static size_t mult_word(const blob *b, int j) { return W_HEAD + 2 * (size_t)get_i64(b, W_NSEG) + (size_t)j; }
/* byte offsets (from at) of level j's parts */
typedef struct level_at {
    size_t n, ids, cost, path_cost, offset, states; /* states: the with-states flag */
    int64_t ne;
} level_at;
static size_t level_start(const blob *b, int j, level_at *L)
{
    size_t nseg = (size_t)get_i64(b, W_NSEG), ndof = (size_t)get_i64(b, W_NDOF), naux = (size_t)get_i64(b, W_NAUX);
    size_t pos = 8 * (W_HEAD + 3 * nseg) + sizeof(sc_samcon_segment) * nseg;
    for (int l = 0; l <= j; l++) {
        int64_t ne;
        memcpy(&ne, b->p + b->at + pos, 8);
        L->ne = ne;
        L->n = pos;
        L->ids = pos + 8;
        L->cost = L->ids + 40 * (size_t)ne;
        L->path_cost = L->cost + 8 * (size_t)ne;
        L->offset = L->path_cost + 8 * (size_t)ne + 8 * (size_t)ne * SC_COST_TERMS + 8 * (size_t)ne;
        L->states = L->offset + 8 * (size_t)ne * (ndof + naux) + sizeof(sc_samcon_segment);
        pos = L->states + 8;
        int64_t with;
        memcpy(&with, b->p + b->at + L->states, 8);
        for (int64_t e = 0; with && e < ne; e++) {
            int64_t sz;
            memcpy(&sz, b->p + b->at + pos, 8);
            pos += 8 + (size_t)sz;
        }
    }
    return pos;
}
static void put_f64(blob *b, size_t byte, double v) { memcpy(b->p + b->at + byte, &v, 8); }

/* ---- one damage, one resume ---- */

/* Resumes from the pristine checkpoint with `damage` applied (reseal: the checksum made right
   again): exit 2 naming the checkpoint, no output. */
static int refused(const char *what, void (*damage)(blob *b, double v), double v, int reseal)
{
    const char *src = pristine();
    CHECK(src, "no checkpoint of an interrupted run: %s", out);
    const char *o = sc_fixture_keep(sc_test_tmp("ckpt_damaged.h5"));
    char ck[1100];
    snprintf(ck, sizeof ck, "%s.ckpt", o);
    unlink(o);
    CHECK(sc_test_sh(NULL, 0, "cp %s %s", src, ck) == 0, "copy");
    blob b;
    CHECK(blob_read(ck, &b), "%s: no sampler state in /search", ck);
    damage(&b, v);
    if (reseal) blob_reseal(&b);
    int ok = blob_write(ck, &b);
    free(b.p);
    CHECK(ok, "patching %s", ck);
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --resume %s %s", sc_test_tool("sample-openloop"), preset(), o, sc_fixture_michelin(),
                        sc_fixture_march_reference());
    CHECK(rc == 2 && strstr(out, ck), "%s: exit %d (2 naming %s expected): %s", what, rc, ck, out);
    CHECK(!sc_test_file_exists(o), "%s: an output was left", what);
    sc_test_report("%s: exit 2: %.300s", what, out);
    return 1;
}

static void set_parent(blob *b, double v)
{
    level_at L;
    level_start(b, 1, &L);
    put_i64(b, L.ids + 8, (int64_t)v); /* elite 0's parent */
}
/* another parent in range: elite 0's is its sample's index mod the parents (4 elites) */
static void shift_parent(blob *b, double v)
{
    (void)v;
    level_at L;
    level_start(b, 1, &L);
    int64_t p;
    memcpy(&p, b->p + b->at + L.ids + 8, 8);
    put_i64(b, L.ids + 8, (p + 1) % 4);
}
static void set_attempts_next(blob *b, double v) { put_i64(b, 8 * attempts_word(b, (int)get_i64(b, W_K)), (int64_t)v); }
static void set_mult_next(blob *b, double v) { put_f64(b, 8 * mult_word(b, (int)get_i64(b, W_K)), v); }
static void set_path_cost(blob *b, double v)
{
    level_at L;
    level_start(b, 1, &L);
    put_f64(b, L.path_cost, v);
}
static void set_offset(blob *b, double v)
{
    level_at L;
    level_start(b, (int)get_i64(b, W_K) - 1, &L);
    put_f64(b, L.offset, v);
}
/* a byte in the middle of the last level's first state (a simulation snapshot) */
static void flip_snapshot(blob *b, double v)
{
    (void)v;
    level_at L;
    level_start(b, (int)get_i64(b, W_K) - 1, &L);
    int64_t sz;
    memcpy(&sz, b->p + b->at + L.states + 8, 8);
    b->p[b->at + L.states + 16 + (size_t)sz / 2] ^= 0x10;
}
/* the byte at fraction v of the whole blob */
static void flip_anywhere(blob *b, double v) { b->p[(size_t)(v * (double)(b->n - 1))] ^= 0x01; }

TEST(checkpoint_elite_parent_out_of_range_is_exit_2)
{
    if (!refused("parent = 1000000", set_parent, 1000000, 1)) return;
    if (!refused("parent = -7", set_parent, -7, 1)) return;
    /* in range but not the sample's own parent */
    refused("parent in range but not its sample's", shift_parent, 0, 1);
}

TEST(checkpoint_damaged_counters_are_exit_2)
{
    if (!refused("attempts of the next segment 0 -> 3", set_attempts_next, 3, 1)) return;
    if (!refused("sample multiplier 1e300", set_mult_next, 1e300, 1)) return;
    if (!refused("sample multiplier NaN", set_mult_next, NAN, 1)) return;
    if (!refused("sample multiplier -5", set_mult_next, -5, 1)) return;
    if (!refused("elite path cost -1e6", set_path_cost, -1e6, 1)) return;
    refused("elite offset 1e300", set_offset, 1e300, 1);
}

TEST(checkpoint_damaged_snapshot_names_the_checkpoint)
{
    if (!refused("a snapshot byte flipped, checksum made right", flip_snapshot, 0, 1)) return;
    refused("a snapshot byte flipped", flip_snapshot, 0, 0);
}

TEST(checkpoint_any_flipped_byte_is_exit_2)
{
    static const double where[] = {0.0, 0.01, 0.02, 0.3, 0.77, 1.0};
    for (size_t i = 0; i < sizeof where / sizeof *where; i++) {
        char what[64];
        snprintf(what, sizeof what, "a byte flipped at %.0f%% of the blob", 100 * where[i]);
        if (!refused(what, flip_anywhere, where[i], 0)) return;
    }
}

/* ---- learn-feedback's decoders ---- */

static void reseal_all(unsigned char *p, size_t n)
{
    uint64_t h = sc_hash_bytes(SC_HASH_INIT, p, SC_CHECKPOINT_HEADER - 8);
    h = sc_hash_bytes(h, p + SC_CHECKPOINT_HEADER, n - SC_CHECKPOINT_HEADER);
    memcpy(p + SC_CHECKPOINT_HEADER - 8, &h, 8);
}

TEST(checkpoint_feedback_decoders_refuse_damage)
{
    sc_err err;
    unsigned char *p;
    size_t n;
    const uint64_t hash = 0x1234;
    /* guided: 3 fragments, 5 DoFs, 2 actions, 2 of 4 iterations done, 6 rows */
    ENSURE_OK(sc_feedback_learner_checkpoint_example(hash, 3, 5, 2, 2, 6, &p, &n, &err), &err);
    ENSURE_OK(sc_feedback_learner_checkpoint_check(p, n, hash, 3, 5, 2, 4, &err), &err);
    ENSURE(sc_feedback_learner_checkpoint_check(p, n, hash + 1, 3, 5, 2, 4, &err) == SC_EINPUT && strstr(err.msg, "other inputs"));
    ENSURE(sc_feedback_learner_checkpoint_check(p, n, hash, 3, 5, 2, 1, &err) == SC_EINPUT); /* 2 done of 1 */
    size_t pay = SC_CHECKPOINT_HEADER, policy = 3 * (5 + SC_FEATURES + 2 + 2 * SC_FEATURES) * 8;
    size_t rows = pay + 40 + 2 * policy; /* the pairs: 6 frags (int), then features, offsets */
    struct {
        size_t at;
        int bytes;
        int64_t v;
        double d;
        const char *what;
    } dmg[] = {{pay + 16, 8, 7, 0, "iterations done 7"},           {pay + 24, 8, -1, 0, "pairs -1"},
               {pay + 24, 8, 1000000, 0, "pairs 1000000"},         {rows, 4, 3, 0, "a pair's fragment 3 of 3"},
               {rows + 4, 4, -1, 0, "a pair's fragment -1"},       {pay + 40, 0, 0, NAN, "a policy offset NaN"},
               {rows + 24, 0, 0, INFINITY, "a pair's feature inf"}};
    for (size_t i = 0; i < sizeof dmg / sizeof *dmg; i++) {
        unsigned char *q = malloc(n);
        memcpy(q, p, n);
        if (dmg[i].bytes == 8) memcpy(q + dmg[i].at, &dmg[i].v, 8);
        else if (dmg[i].bytes == 4) {
            int v = (int)dmg[i].v;
            memcpy(q + dmg[i].at, &v, 4);
        } else {
            memcpy(q + dmg[i].at, &dmg[i].d, 8);
        }
        int rc = sc_feedback_learner_checkpoint_check(q, n, hash, 3, 5, 2, 4, &err);
        ENSURE_MSG(rc == SC_EINPUT, "guided, %s, without the checksum made right: %d %s", dmg[i].what, rc, err.msg);
        ENSURE_MSG(strstr(err.msg, "checksum"), "%s", err.msg);
        reseal_all(q, n);
        rc = sc_feedback_learner_checkpoint_check(q, n, hash, 3, 5, 2, 4, &err);
        free(q);
        ENSURE_MSG(rc == SC_EINPUT, "guided, %s: %d %s", dmg[i].what, rc, err.msg);
    }
    free(p);
    /* search: 6 parameters, 8 candidates, 3 generations */
    ENSURE_OK(sc_feedback_search_checkpoint_example(hash, 6, 8, 0.5, 3, &p, &n, &err), &err);
    ENSURE_OK(sc_feedback_search_checkpoint_check(p, n, hash, 6, 8, 0.5, &err), &err);
    ENSURE(sc_feedback_search_checkpoint_check(p, n, hash, 7, 8, 0.5, &err) == SC_EINPUT);
    /* the weights, sigma, a covariance: after the magic, hash and 4 ints */
    size_t w0 = pay + 16 + 16, sigma = w0 + 8 * (1024 + 7), C0 = sigma + 8 + 8 * (SC_MAX_ACTIONS * (SC_FEATURES + 1));
    struct {
        size_t at;
        double v;
        const char *what;
    } sd[] = {
        {w0, 0.9, "a weight"}, {sigma, -1, "sigma -1"}, {sigma, NAN, "sigma NaN"}, {C0, -2, "a covariance -2"}, {C0, INFINITY, "a covariance inf"}};
    for (size_t i = 0; i < sizeof sd / sizeof *sd; i++) {
        unsigned char *q = malloc(n);
        memcpy(q, p, n);
        memcpy(q + sd[i].at, &sd[i].v, 8);
        reseal_all(q, n);
        int rc = sc_feedback_search_checkpoint_check(q, n, hash, 6, 8, 0.5, &err);
        free(q);
        ENSURE_MSG(rc == SC_EINPUT, "search, %s: %d %s", sd[i].what, rc, err.msg);
    }
    free(p);
    sc_test_report("learn-feedback's learner and search checkpoints: every damage refused, with the checksum made right or not");
}

/* A checkpoint is read through the HDF5 guard process like every other HDF5 input, since a
 * damaged container can crash, hang or exhaust libhdf5 itself (tests/fuzz/regressions holds
 * such files): seen here by a memory limit below what reading it takes, which the guard turns
 * into SC_EINPUT naming the checkpoint (in a child, so the limit does not outlive the test). */
TEST(checkpoint_read_through_the_hdf5_guard)
{
    const char *src = pristine();
    ENSURE_MSG(src, "no checkpoint of an interrupted run: %s", out);
    int fd, pid = sc_test_fork(&fd);
    ENSURE(pid >= 0);
    if (pid == 0) {
        sc_h5_guard_memory_limit(0.01);
        unsigned char *data;
        size_t n;
        sc_err err;
        int rc = sc_checkpoint_read(src, "/search", "softcon.samcon_checkpoint/2", 0, &data, &n, &err);
        dprintf(fd, "%d %s", rc, rc ? err.msg : "");
        _exit(0);
    }
    char buf[2048];
    sc_test_child_output(pid, fd, buf, sizeof buf, NULL);
    sc_test_report("the checkpoint read with the guard's memory limit at 10 KiB: %s", buf);
    ENSURE_MSG(atoi(buf) == SC_EINPUT && strstr(buf, src) && strstr(buf, "MiB of memory"), "%s", buf);
}

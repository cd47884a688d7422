/* Writes the HDF5 seed corpora of the fuzz harnesses (tests/fuzz/corpus/): a tiny character
 * (2 bones, 5 nodes, 2 tets, skinned), a 4-sample reference and a bare trajectory file, all
 * through softcon's own writers so that they are exactly what the tools write, only small
 * (small inputs fuzz faster). Run by `make fuzz-seeds`; the outputs are committed.
 * Usage: fuzz_seeds CORPUS_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "checkpoint_run.h"
#include "io/checkpoint.h"
#include "par/par.h"
#include "learn/gain_search.h"
#include "learn/guided.h"
#include "store/openloop.h"
#include "store/policy.h"
#include "store/reference.h"
#include "sampling/openloop.h"
#include "motion/reference.h"
#include "core/mathx.h"
#include "store/character.h"
#include "io/h5.h"

static int die(const sc_err *e)
{
    fprintf(stderr, "fuzz_seeds: %s\n", e->msg);
    return 1;
}

/* skinned 1: with /skin; 0: without; -1: boneless ([T12]: 0 bones, no fixed nodes) */
static int write_character(const char *path, int skinned, sc_err *err)
{
    sc_model m;
    sc_fuzz_tiny_character(&m, skinned > 0);
    static int free_nodes[5] = {-1, -1, -1, -1, -1};
    if (skinned < 0) {
        m.nbones = m.nfixed = 0;
        m.node_bone = free_nodes;
    }
    sc_h5 *f;
    char *argv[] = {"fuzz_seeds"};
    int rc = sc_h5_create(path, &f, err);
    if (rc) return rc;
    if ((rc = sc_h5_provenance(f, SC_CHARACTER_SCHEMA, 1, argv, "seed: tiny\n", err)) || (rc = sc_character_write(f, &m, err))) {
        sc_h5_abort(f);
        return rc;
    }
    return sc_h5_commit(f, err);
}

/* bare 0: everything sc_reference_write writes; 1: a trajectory (time, names, targets); 2: a
   reference with only the datasets its reader requires */
/* A 4-sample reference of the tiny character's two bones. */
static int tiny_reference(sc_reference *out, sc_err *err)
{
    sc_reference r;
    int rc = sc_reference_alloc(&r, 4, 2, err);
    if (rc) return rc;
    snprintf(r.names[0], SC_NAME_LEN, "pelvis");
    snprintf(r.names[1], SC_NAME_LEN, "spine");
    r.dt = 0.0005;
    for (int k = 0; k < 4; k++) {
        r.time[k] = k * r.dt;
        r.root_pos[3 * k + 1] = 0.9;
        r.com[3 * k + 1] = 1.0;
        for (int j = 0; j < 2; j++) {
            double a = 0.01 * k * (j + 1);
            double q[4] = {cos(a / 2), sin(a / 2), 0, 0};
            memcpy(r.local_quat + 4 * (2 * k + j), q, sizeof q);
            memcpy(r.target_quat + 4 * (2 * k + j), q, sizeof q);
            memcpy(r.bone_quat + 4 * (2 * k + j), q, sizeof q);
            r.contact_flag[2 * k + j] = j == 0;
            r.contact_height[2 * k + j] = 0.1 * j;
        }
    }
    *out = r;
    return SC_OK;
}

static int write_reference(const char *path, int bare, sc_err *err)
{
    sc_reference r;
    int rc = tiny_reference(&r, err);
    if (rc) return rc;
    sc_h5 *f;
    char *argv[] = {"fuzz_seeds"};
    if ((rc = sc_h5_create(path, &f, err))) goto done;
    if ((rc = sc_h5_provenance(f, SC_REFERENCE_SCHEMA, 1, argv, NULL, err))) goto fail;
    if (bare) {
        /* what the trajectory reader needs and nothing else */
        const char *names[2] = {"pelvis", "spine"};
        size_t d1[1] = {4}, d3[3] = {4, 2, 4}, d2[2] = {4, 3};
        if ((rc = sc_h5_write_f64(f, "/time", 1, d1, r.time, "s", "sample times", err)) ||
            (rc = sc_h5_write_strings(f, "/bones/names", 2, names, "bone names", err)) ||
            (rc = sc_h5_write_f64(f, "/targets/local_quat", 3, d3, r.target_quat, "1", "PD targets", err)) ||
            (bare == 2 && (rc = sc_h5_write_f64(f, "/reference/root_pos", 2, d2, r.root_pos, "m", "root", err))) ||
            (bare == 2 && (rc = sc_h5_write_f64(f, "/reference/local_quat", 3, d3, r.local_quat, "1", "poses", err))))
            goto fail;
    } else if ((rc = sc_reference_write(f, &r, err))) {
        goto fail;
    }
    rc = sc_h5_commit(f, err);
    goto done;
fail:
    sc_h5_abort(f);
done:
    sc_reference_free(&r);
    return rc;
}

/* An openloop.h5 of a gait cycle as sample-openloop writes it (sc_openloop_write), for the tiny
   character: 2 fragments repeated twice, a 3-step trace, one frame. */
static int write_openloop(const char *path, sc_err *err)
{
    sc_model m;
    sc_fuzz_tiny_character(&m, 1);
    sc_control_dofs d;
    sc_control_dofs_init(&m, &d);
    sc_reference r;
    int rc = tiny_reference(&r, err);
    if (rc) return rc;
    sc_sim_opts so;
    memset(&so, 0, sizeof so);
    so.dt = 0.0005;
    sc_samcon_config c;
    memset(&c, 0, sizeof c);
    c.base = SC_BASE_ID;
    c.time_scaling = 1;
    c.cycles = 2;
    for (int k = 0; k < SC_COST_TERMS; k++) c.tracker.weights[k] = k + 1;
    sc_cycle cy = {0, 2, 0, 0.001, 0.01, 0.1, 0.05};
    sc_samcon_run run = {.m = &m, .sim_opts = &so, .ref = &r, .cycle = &cy, .fragments = 2, .dofs = &d, .cfg = &c, .seed = 1};
    sc_samcon_segment seg[4];
    double offset[4 * SC_MAX_DOFS] = {0};
    memset(seg, 0, sizeof seg);
    for (int j = 0; j < 4; j++) {
        seg[j].ref_t0 = 0.0005 * (j % 2);
        seg[j].ref_t1 = seg[j].ref_t0 + 0.0005;
        seg[j].start_step = j;
        seg[j].steps = 1;
        seg[j].scale = 1;
        seg[j].cost = seg[j].path_cost = 0.1 * (j + 1);
        seg[j].samples = 10;
        for (int q = 0; q < d.n; q++) offset[j * d.n + q] = 0.01 * (q + 1) * (j % 2 ? -1 : 1);
    }
    sc_samcon_result res;
    memset(&res, 0, sizeof res);
    res.nseg_total = res.nseg = 4;
    res.completed = 1;
    res.seg = seg;
    res.offset = offset;
    res.samples = 40;
    res.ranks = 1;
    double time[3] = {0, 0.0005, 0.001}, targets[3 * 2 * 4], one[1] = {0}, pos[6] = {0, 0.9, 0, 0, 1.1, 0}, quat[8], com[3] = {0, 1, 0};
    for (int k = 0; k < 6; k++) targets[4 * k] = 1, targets[4 * k + 1] = targets[4 * k + 2] = targets[4 * k + 3] = 0;
    memcpy(quat, targets, sizeof quat);
    sc_openloop_trace t;
    memset(&t, 0, sizeof t);
    t.n = 3;
    t.time = t.ref_time = time;
    t.targets = targets;
    t.nframes = 1;
    t.frame_time = t.frame_ref_time = t.joint_error = one;
    t.bone_pos = t.ref_bone_pos = pos;
    t.bone_quat = t.ref_bone_quat = quat;
    t.com = com;
    sc_h5 *f;
    char *argv[] = {"fuzz_seeds"};
    if ((rc = sc_h5_create(path, &f, err))) goto done;
    if ((rc = sc_h5_provenance(f, SC_OPENLOOP_SCHEMA, 1, argv, "seed: tiny\n", err)) || (rc = sc_h5_attr_str(f, "/", "character", "tiny_skinned.h5", err)) ||
        (rc = sc_openloop_write_reference(f, "tiny_reference.h5", &r, err)) || (rc = sc_openloop_write(f, &run, &res, &t, err)))
        sc_h5_abort(f);
    else
        rc = sc_h5_commit(f, err);
done:
    sc_reference_free(&r);
    return rc;
}

/* A policy.h5 as learn-feedback writes it (provenance, root attributes, sc_policy_write; not the
   learning history and evaluation, which no reader reads): 2 fragments, 2 actions, 3 cycle
   samples. nact 0: an open-loop policy (no actions). */
static int write_policy(const char *path, int nact, sc_err *err)
{
    sc_model m;
    sc_fuzz_tiny_character(&m, 1);
    sc_control_dofs d;
    sc_control_dofs_init(&m, &d);
    sc_policy p;
    int rc = sc_policy_alloc(&p, m.nbones, d.n, nact, 2, 3, err);
    if (rc) return rc;
    for (int i = 0; i < nact; i++) p.act[i] = 2 * i;
    p.max_action = 0.3;
    p.period = 0.8;
    p.mean_root_height = 0.9;
    for (int j = 0; j < 2; j++) {
        p.steps[j] = 800;
        p.ref_t0[j] = 0.4 * j;
        p.ref_t1[j] = 0.4 * (j + 1);
        for (int q = 0; q < d.n; q++) p.offset[j * d.n + q] = 0.01 * (q + 1);
        for (int k = 0; k < SC_FEATURES; k++) p.s_bar[j * SC_FEATURES + k] = 0.01 * k;
        for (int i = 0; i < nact; i++) {
            p.a_bar[j * nact + i] = p.offset[j * d.n + p.act[i]];
            for (int k = 0; k < SC_FEATURES; k++) p.M[(j * nact + i) * SC_FEATURES + k] = 0.1 * ((k + i) % 3 - 1);
        }
    }
    for (int s = 0; s < 3; s++) {
        p.base_time[s] = 0.4 * s;
        for (int b = 0; b < 2; b++) p.base_quat[(s * 2 + b) * 4] = p.ref_quat[(s * 2 + b) * 4] = 1;
    }
    p.start_root[1] = 0.9;
    for (int b = 0; b < 2; b++) p.start_quat[4 * b] = 1;
    sc_h5 *f;
    char *argv[] = {"fuzz_seeds"};
    if ((rc = sc_h5_create(path, &f, err))) goto done;
    if ((rc = sc_h5_provenance(f, SC_POLICY_SCHEMA, 1, argv, "seed: tiny\n", err)) || (rc = sc_h5_attr_i64(f, "/", "seed", 1, err)) ||
        (rc = sc_h5_attr_str(f, "/", "character", "tiny_skinned.h5", err)) || (rc = sc_h5_attr_str(f, "/", "openloop", "tiny_openloop.h5", err)) ||
        (rc = sc_h5_attr_str(f, "/", "openloop_hash", "0123456789abcdef", err)) || (rc = sc_h5_attr_str(f, "/", "status", "completed", err)) ||
        (rc = sc_policy_write(f, &p, &m, &d, err)))
        sc_h5_abort(f);
    else
        rc = sc_h5_commit(f, err);
done:
    sc_policy_free(&p);
    return rc;
}

/* a corpus file of fuzz_checkpoint: the reader's byte, the reseal byte, the sealed bytes */
static int write_ckpt_seed(const char *dir, const char *name, int which, const unsigned char *b, size_t n, sc_err *err)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/fuzz_checkpoint/%s", dir, name);
    FILE *fp = fopen(p, "wb");
    unsigned char head[2] = {(unsigned char)which, 1};
    int ok = fp && fwrite(head, 1, 2, fp) == 2 && fwrite(b, 1, n, fp) == n;
    if (fp && fclose(fp)) ok = 0;
    return ok ? SC_OK : sc_fail(err, SC_EIO, "%s: cannot write", p);
}

static struct sc_par *seed_par;
static int seed_stops;
static int stop_after_6(void) { return ++seed_stops > 6; }

/* sample-openloop's checkpoint of the tiny run, through sc_samcon itself: completed, and stopped
   within segment 2 */
static int write_samcon_seed(const char *dir, const char *name, int stop, sc_err *err)
{
    sc_fuzz_samcon f;
    int rc = sc_fuzz_samcon_init(&f, err);
    if (rc) return rc;
    char ck[4096];
    snprintf(ck, sizeof ck, "%s/fuzz_checkpoint/%s.tmp.h5", dir, name);
    f.run.checkpoint = ck;
    seed_stops = 0;
    f.run.monitor.stop = stop ? stop_after_6 : NULL;
    f.run.par = seed_par;
    sc_samcon_result res;
    rc = sc_samcon(&f.run, &res, err);
    if (rc && rc != SC_EINTERRUPTED) return rc;
    sc_samcon_result_free(&res);
    sc_h5 *h;
    unsigned char *b = NULL;
    size_t n = 0;
    if (!(rc = sc_h5_open(ck, &h, err))) {
        rc = sc_h5_read_bytes(h, "/search", &n, &b, err);
        sc_h5_close(h);
    }
    remove(ck);
    if (!rc && !(rc = sc_samcon_checkpoint_check(&f.run, b, n, err))) rc = write_ckpt_seed(dir, name, 0, b, n, err);
    free(b);
    sc_reference_free(&f.r);
    return rc;
}

static int write_checkpoint_seeds(const char *dir, sc_err *err)
{
    unsigned char *b;
    size_t n;
    int argc = 1;
    char *args[] = {"fuzz_seeds", NULL}, **argv = args;
    int rc = sc_par_init(&argc, &argv, 0, &seed_par, err);
    if (!rc) rc = write_samcon_seed(dir, "samcon_completed", 0, err);
    if (!rc) rc = write_samcon_seed(dir, "samcon_stopped", 1, err);
    if (!rc && !(rc = sc_feedback_learner_checkpoint_example(SC_FUZZ_CKPT_HASH, SC_FUZZ_FRAG, SC_FUZZ_DOFS, SC_FUZZ_ACT, 2, 6, &b, &n, err))) {
        rc = write_ckpt_seed(dir, "learner", 1, b, n, err);
        free(b);
    }
    if (!rc && !(rc = sc_feedback_search_checkpoint_example(SC_FUZZ_CKPT_HASH, SC_FUZZ_NP, SC_FUZZ_LAMBDA, 0.5, 3, &b, &n, err))) {
        rc = write_ckpt_seed(dir, "search", 2, b, n, err);
        free(b);
    }
    sc_explore_config ec;
    sc_fuzz_explore_config(&ec);
    if (!rc && !(rc = sc_explore_checkpoint_example(SC_FUZZ_CKPT_HASH, &ec, 3, &b, &n, err))) {
        if (!(rc = sc_explore_checkpoint_check(b, n, SC_FUZZ_CKPT_HASH, &ec, err))) rc = write_ckpt_seed(dir, "explore", 3, b, n, err);
        free(b);
    }
    sc_par_finalize(seed_par);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_seeds CORPUS_DIR\n");
        return 1;
    }
    char p[4096];
    sc_err err;
    snprintf(p, sizeof p, "%s/fuzz_character/tiny_skinned.h5", argv[1]);
    if (write_character(p, 1, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_character/tiny_unskinned.h5", argv[1]);
    if (write_character(p, 0, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_character/tiny_boneless.h5", argv[1]);
    if (write_character(p, -1, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_reference/tiny_reference.h5", argv[1]);
    if (write_reference(p, 0, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_reference/minimal_reference.h5", argv[1]);
    if (write_reference(p, 2, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_trajectory/tiny_reference.h5", argv[1]);
    if (write_reference(p, 0, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_trajectory/bare_trajectory.h5", argv[1]);
    if (write_reference(p, 1, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_openloop/tiny_openloop.h5", argv[1]);
    if (write_openloop(p, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_policy/tiny_policy.h5", argv[1]);
    if (write_policy(p, 2, &err)) return die(&err);
    snprintf(p, sizeof p, "%s/fuzz_policy/openloop_policy.h5", argv[1]);
    if (write_policy(p, 0, &err)) return die(&err);
    if (write_checkpoint_seeds(argv[1], &err)) return die(&err);
    /* the readers accept what they wrote */
    sc_model tiny;
    sc_fuzz_tiny_character(&tiny, 1);
    sc_control_dofs dofs;
    sc_control_dofs_init(&tiny, &dofs);
    sc_openloop_cycle ol;
    snprintf(p, sizeof p, "%s/fuzz_openloop/tiny_openloop.h5", argv[1]);
    if (sc_openloop_cycle_read(p, &tiny, &dofs, &ol, &err)) return die(&err);
    sc_openloop_cycle_free(&ol);
    sc_policy pol;
    snprintf(p, sizeof p, "%s/fuzz_policy/tiny_policy.h5", argv[1]);
    if (sc_policy_read(p, &tiny, &dofs, &pol, &err)) return die(&err);
    sc_policy_free(&pol);
    snprintf(p, sizeof p, "%s/fuzz_policy/openloop_policy.h5", argv[1]);
    if (sc_policy_read(p, &tiny, &dofs, &pol, &err)) return die(&err);
    sc_policy_free(&pol);
    sc_model m;
    sc_reference r;
    snprintf(p, sizeof p, "%s/fuzz_character/tiny_skinned.h5", argv[1]);
    if (sc_character_read(p, &m, 1, &err)) return die(&err);
    sc_model_free(&m);
    snprintf(p, sizeof p, "%s/fuzz_character/tiny_boneless.h5", argv[1]);
    if (sc_character_read(p, &m, 0, &err)) return die(&err);
    if (m.nbones != 0) return die(&(sc_err){SC_EINPUT, "the boneless seed read back with bones"});
    sc_model_free(&m);
    snprintf(p, sizeof p, "%s/fuzz_reference/tiny_reference.h5", argv[1]);
    if (sc_reference_read(p, &r, &err)) return die(&err);
    sc_reference_free(&r);
    return 0;
}

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "io/h5.h"
#include "store/character.h"
#include "store/explore.h"

#define TRY(x)                    \
    do {                          \
        if ((rc = (x))) goto out; \
    } while (0)

int sc_explore_save(const char *path, const sc_explore_provenance *p, const sc_explore_config *cfg, const sc_explore_result *res, const char *status,
                    sc_err *err)
{
    const int K = cfg->nknobs, O = cfg->nobj, N = res->ntrials, R = res->nrounds;
    sc_h5 *f = NULL;
    int rc = sc_h5_create(path, &f, err), S = 0;
    if (rc) return rc;
    for (int i = 0; i < N; i++) S += res->trial[i].success;
    double *x = malloc(sizeof(double) * ((size_t)N * K + 1)), *d = malloc(sizeof(double) * ((size_t)N * O + 1)),
           *tg = malloc(sizeof(double) * ((size_t)N * O + 1)), *ft = malloc(sizeof(double) * ((size_t)N + 1)),
           *rd = malloc(sizeof(double) * ((size_t)R * O * 2 + 1));
    int *iv = malloc(sizeof(int) * ((size_t)N * 6 + R * 4 + 1));
    char names[SC_EXPLORE_MAX_KNOBS][SC_NAME_LEN + 16];
    const char *np[SC_EXPLORE_MAX_KNOBS], *mp[SC_EXPLORE_MAX_OBJ], *up[SC_EXPLORE_MAX_OBJ];
    if (!x || !d || !tg || !ft || !rd || !iv) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto out;
    }
    TRY(sc_h5_provenance(f, SC_EXPLORE_SCHEMA, p->argc, p->argv, p->config_text, err));
    TRY(sc_h5_attr_str(f, "/", "character", p->character, err));
    TRY(sc_character_hash_write(f, p->character_hash, err));
    TRY(sc_h5_attr_str(f, "/", "network", p->network, err));
    TRY(sc_h5_attr_i64(f, "/", "seed", (long long)cfg->seed, err));
    TRY(sc_h5_attr_i64(f, "/", "ranks", res->ranks, err));
    TRY(sc_h5_attr_i64(f, "/", "threads", res->threads, err));
    TRY(sc_h5_attr_f64(f, "/", "wall_seconds", res->wall_seconds, err));
    TRY(sc_h5_attr_str(f, "/", "status", status, err));
    /* knobs and objectives */
    TRY(sc_h5_group(f, "/knobs", "the network's control points the search varied", err));
    for (int k = 0; k < K; k++) {
        const sc_knob *kn = &cfg->knob[k];
        if (kn->point < 0) snprintf(names[k], sizeof names[k], "%s", p->net->node[kn->node].name);
        else snprintf(names[k], sizeof names[k], "%s[%d]", p->net->node[kn->node].name, kn->point);
        np[k] = names[k];
        x[2 * k] = kn->lo;
        x[2 * k + 1] = kn->hi;
    }
    size_t dims[2] = {(size_t)K, 2};
    TRY(sc_h5_write_strings(f, "/knobs/names", (size_t)K, np, "a constant's name, or a spline's name[point index]", err));
    TRY(sc_h5_write_f64(f, "/knobs/initial_bounds", 2, dims, x, "knob", "the sampling bounds given", err));
    for (int k = 0; k < K; k++) {
        x[2 * k] = res->lo[k];
        x[2 * k + 1] = res->hi[k];
    }
    TRY(sc_h5_write_f64(f, "/knobs/bounds", 2, dims, x, "knob", "the bounds after round 0's widening, which every later sample is clamped to", err));
    TRY(sc_h5_attr_i64(f, "/knobs", "grows", res->grows, err));
    TRY(sc_h5_group(f, "/objectives", "what the parameterization is over", err));
    for (int o = 0; o < O; o++) {
        mp[o] = sc_measure_names[cfg->obj[o].measure];
        up[o] = sc_measure_units[cfg->obj[o].measure];
        x[2 * o] = cfg->obj[o].lo;
        x[2 * o + 1] = cfg->obj[o].hi;
        ft[o] = cfg->obj[o].tolerance;
    }
    dims[0] = (size_t)O;
    TRY(sc_h5_write_strings(f, "/objectives/measures", (size_t)O, mp, "distance, speed, turn_rate, jump_distance or jump_height", err));
    TRY(sc_h5_write_strings(f, "/objectives/units", (size_t)O, up, "each measure's unit", err));
    TRY(sc_h5_write_f64(f, "/objectives/ranges", 2, dims, x, "measure", "the range targets are drawn from; a success lies in it", err));
    TRY(sc_h5_write_f64(f, "/objectives/tolerances", 1, dims, ft, "measure", "a hit lies within this of its target", err));
    /* trials */
    for (int i = 0; i < N; i++) {
        const sc_trial *t = &res->trial[i];
        for (int k = 0; k < K; k++) x[(size_t)i * K + k] = t->x[k];
        for (int o = 0; o < O; o++) {
            d[(size_t)i * O + o] = t->d[o];
            tg[(size_t)i * O + o] = t->target[o];
        }
        ft[i] = t->fail_time;
        int *v = iv + (size_t)i * 6;
        v[0] = t->round;
        v[1] = t->kind;
        v[2] = t->target_index;
        v[3] = t->outcome;
        v[4] = t->success;
        v[5] = t->hit;
    }
    TRY(sc_h5_group(f, "/trials", "every trial, in the order run", err));
    size_t dx[2] = {(size_t)N, (size_t)K}, dd[2] = {(size_t)N, (size_t)O};
    TRY(sc_h5_write_f64(f, "/trials/x", 2, dx, x, "knob", "the knob values (units of the nodes they set: rad for angles)", err));
    TRY(sc_h5_write_f64(f, "/trials/reached", 2, dd, d, "measure", "what the trial reached, per objective (NaN: it failed)", err));
    TRY(sc_h5_write_f64(f, "/trials/target", 2, dd, tg, "measure", "its round's target (NaN in round 0)", err));
    TRY(sc_h5_write_f64(f, "/trials/fail_time", 1, dd, ft, "s", "when it fell or touched with another bone (NaN: it did not)", err));
    static const char *const cols[6] = {"round", "kind", "target_index", "outcome", "success", "hit"};
    static const char *const descr[6] = {"its round (0: uniform sampling)",
                                         "0 initial, 1 interpolated from the nearest successes, 2 local sample about an interpolated one",
                                         "the round's target it was made for (-1 in round 0)",
                                         "0 ok, 1 fell, 2 bad contact, 3 still moving at the end, 4 numerical failure",
                                         "1: ok and every objective in range",
                                         "1: a success within tolerance of its target"};
    int *col = malloc(sizeof(int) * ((size_t)N + 1));
    if (!col) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto out;
    }
    for (int c = 0; c < 6 && !rc; c++) {
        char at[64];
        for (int i = 0; i < N; i++) col[i] = iv[(size_t)i * 6 + c];
        snprintf(at, sizeof at, "/trials/%s", cols[c]);
        rc = sc_h5_write_i32(f, at, 1, dd, col, descr[c], err);
    }
    free(col);
    if (rc) goto out;
    /* rounds */
    TRY(sc_h5_group(f, "/rounds", "per round: round 0 samples uniformly, later rounds interpolate toward new targets", err));
    size_t dr[2] = {(size_t)R, (size_t)O};
    int *ri = iv;
    for (int r = 0; r < R; r++) {
        ri[r] = res->round[r].trials;
        ri[R + r] = res->round[r].successes;
        ri[2 * R + r] = res->round[r].interp_hits;
        ri[3 * R + r] = res->round[r].targets_hit;
        for (int o = 0; o < O; o++) {
            rd[(size_t)r * O + o] = r ? res->round[r].interp_error[o] : NAN;
            rd[(size_t)R * O + (size_t)r * O + o] = r ? res->round[r].best_error[o] : NAN;
        }
    }
    TRY(sc_h5_write_i32(f, "/rounds/trials", 1, dr, ri, "trials run", err));
    TRY(sc_h5_write_i32(f, "/rounds/successes", 1, dr, ri + R, "trials that stood and reached the objectives' ranges", err));
    TRY(sc_h5_write_i32(f, "/rounds/interpolated_hits", 1, dr, ri + 2 * R, "targets the interpolated controller hit (of /rounds/targets)", err));
    TRY(sc_h5_write_i32(f, "/rounds/targets_hit", 1, dr, ri + 3 * R, "targets hit by the interpolated controller or a local sample", err));
    TRY(sc_h5_attr_i64(f, "/rounds", "targets", cfg->targets, err));
    TRY(sc_h5_write_f64(f, "/rounds/interpolated_error", 2, dr, rd, "measure", "mean |reached - target| of the interpolated controllers that stood",
                        err));
    TRY(sc_h5_write_f64(f, "/rounds/best_error", 2, dr, rd + (size_t)R * O, "measure",
                        "mean over targets of the smallest |reached - target| of a success (NaN: a target with none)", err));
    /* the parameterization */
    int s = 0;
    for (int i = 0; i < N; i++) {
        if (!res->trial[i].success) continue;
        for (int k = 0; k < K; k++) x[(size_t)s * K + k] = res->trial[i].x[k];
        for (int o = 0; o < O; o++) d[(size_t)s * O + o] = res->trial[i].d[o];
        s++;
    }
    TRY(sc_h5_group(f, "/controllers", "every success: the examples a new objective's knobs are interpolated from", err));
    size_t sx[2] = {(size_t)S, (size_t)K}, sd[2] = {(size_t)S, (size_t)O};
    TRY(sc_h5_write_f64(f, "/controllers/x", 2, sx, x, "knob", "knob values", err));
    TRY(sc_h5_write_f64(f, "/controllers/reached", 2, sd, d, "measure", "what they reached", err));
out:
    free(x);
    free(d);
    free(tg);
    free(ft);
    free(rd);
    free(iv);
    if (rc) {
        sc_h5_abort(f);
        return rc;
    }
    return sc_h5_commit(f, err);
}

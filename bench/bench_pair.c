/* The coupled step on the standing character, with only the API every version of softcon has
 * (sc_sim_create, sc_sim_step, sc_sim_timing's stages), so that scripts/bench.sh can build it
 * against an older library too and time the old and the new step side by side, run after run.
 * Built against the baseline, BENCH_PAIR_BASELINE is defined; the current build also takes
 * --fem-single (the FEM pass in single precision, simulation.fem_precision: single).
 * Usage: bench_pair [character.h5] [--quick-solver] [--steps N] [--fem-single] */
#include <stdio.h>
#include "bench_util.h"
#include <stdlib.h>
#include <string.h>
#include "sim/sim.h"
#ifdef BENCH_PAIR_BASELINE /* an older library: its own headers, and it reads the environment itself */
#if __has_include("store/character.h")
#include "store/character.h"
#else
#include "io/character.h"
#endif
#else
#include "store/character.h"
#include "../cmd/common/environment.h"
#endif

int main(int argc, char **argv)
{
#ifndef BENCH_PAIR_BASELINE
    sc_environment_apply(); /* the settings the tools take from the environment */
#endif
    const char *path = "results/bench/character.h5";
    int exact = 1, steps = 1500, fem_single = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick-solver")) exact = 0;
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fem-single")) fem_single = 1;
        else path = argv[i];
    }
    if (steps < 10) steps = 10;
    sc_model m;
    sc_err err;
    if (sc_character_read(path, &m, 1, &err)) { fprintf(stderr, "bench_pair: %s\n", err.msg); return 1; }
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.skeleton.exact_solver = exact;
#ifdef BENCH_PAIR_BASELINE
    if (fem_single) { fprintf(stderr, "bench_pair: the baseline has no single-precision FEM pass\n"); return 1; }
#else
    o.fem_single = fem_single;
#endif
    sc_sim *s;
    if (sc_sim_create(&m, &o, &s, &err)) { fprintf(stderr, "bench_pair: %s\n", err.msg); return 1; }
    enum { NST = 5 };
    static const char *const names[NST] = {"step", "fem_forces", "skinning", "contact", "ode_step"};
    double *t[NST];
    for (int k = 0; k < NST; k++) t[k] = malloc((size_t)steps * sizeof(double));
    for (int i = 0; i < 300 + steps; i++) {
        sc_sim_timing a = s->timing;
        if (sc_sim_step(s, &err)) { fprintf(stderr, "bench_pair: %s\n", err.msg); return 1; }
        if (i < 300) continue;
        const sc_sim_timing *b = &s->timing;
        double v[NST] = {b->total - a.total, b->fem - a.fem, b->skin - a.skin, b->contact - a.contact, b->ode - a.ode};
        for (int k = 0; k < NST; k++) t[k][i - 300] = v[k];
    }
    for (int k = 0; k < NST; k++) {
        printf("@ pair_%s_median %.1f us\n", names[k], 1e6 * bench_median(t[k], steps));
        free(t[k]);
    }
    sc_sim_free(s);
    sc_model_free(&m);
    return 0;
}

/* [T12] Table 1's time per frame: a behaviour of configs/letters run by lib/muscle/run (what
 * muscle-sim drives) for its first seconds, wall time per 1/30 s of simulated time (median of
 * 3 runs), its plans' share, and the speed-up over [T12]'s total time per frame (a 2.26 GHz core
 * of 2012; the goal: 100 x).
 *
 *   bench_letters NAME CHARACTER.h5 CONFIG.yaml T12_SECONDS_PER_FRAME [SIMULATED_SECONDS]
 *
 * Lines "@ metric value unit" are the figures scripts/bench.sh records. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "bench_util.h"
#include "core/log.h"
#include "io/config.h"
#include "settings/muscle_run.h"
#include "store/character.h"
#include "store/muscles.h"

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: bench_letters NAME CHARACTER.h5 CONFIG.yaml T12_SECONDS_PER_FRAME [SIMULATED_SECONDS]\n");
        return 1;
    }
    const char *name = argv[1];
    const double t12 = atof(argv[4]), seconds = argc > 5 ? atof(argv[5]) : 1.0;
    sc_log_set_level(SC_LOG_WARN);
    sc_err err = {0};
    sc_model m;
    sc_muscles mu;
    int present;
    sc_cfg *cfg;
    sc_muscle_run_config rc;
    if (sc_character_read(argv[2], &m, 0, &err) || sc_character_read_muscles(argv[2], &m, &mu, &present, &err) ||
        sc_cfg_load_file(argv[3], &cfg, &err) || sc_muscle_run_read(cfg, &m, present ? &mu : NULL, &rc, &err)) {
        fprintf(stderr, "bench_letters: %s\n", err.msg);
        return 1;
    }
    const long steps = lround(seconds / rc.run.body.dt);
    double frame[3], plan[3], qps = 0;
    for (int r = 0; r < 3; r++) {
        sc_muscle_run run;
        if (sc_muscle_run_create(&m, present ? &mu : NULL, &rc.run, &run, &err)) {
            fprintf(stderr, "bench_letters: %s\n", err.msg);
            return 1;
        }
        const double t0 = sc_wall_time();
        for (long k = 0; k < steps; k++)
            if (sc_muscle_run_step(&run, &err)) {
                fprintf(stderr, "bench_letters: %s\n", err.msg);
                return 1;
            }
        const double wall = sc_wall_time() - t0, frames = run.s->t * 30;
        frame[r] = wall / frames;
        plan[r] = run.stats.plan_s / frames;
        qps = run.stats.plans ? (double)run.stats.qps / run.stats.plans : 0;
        sc_muscle_run_free(&run);
    }
    const double f = bench_median(frame, 3), p = bench_median(plan, 3);
    printf("bench_letters %s: %d tets, %d muscle segments, %.2f s simulated: %.4f s per 1/30 s frame (plans %.4f s, %.1f QPs each), "
           "[T12] Table 1 %.2f s: %.1f x faster\n",
           name, m.ntets, present ? mu.nsegs : 0, seconds, f, p, qps, t12, t12 / f);
    printf("@ %s_s_per_frame %.4f s\n@ %s_plan_s_per_frame %.4f s\n@ %s_speedup_over_t12 %.2f x\n", name, f, name, p, name, t12 / f);
    sc_muscle_run_config_free(&rc);
    if (present) sc_muscles_free(&mu);
    sc_model_free(&m);
    sc_cfg_free(cfg);
    return 0;
}

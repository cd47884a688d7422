/* Which ODE solver keeps the servos as stiff as the exact one, and at what cost: the coupled
 * Michelin character (default: results/bench/character.h5 from scripts/bench.sh) holds its
 * rest pose on the ground for 1.5 s, takes the push of configs/push.yaml (150 N on the spine
 * for 0.2 s) and stands 1.3 s more, once per solver setting. Reported per setting: the largest
 * torso tilt while standing (0.5-1.5 s) and after the push, the RMS tracking error (angle
 * between each joint's local rotation and its target, RMS over joints and steps) and the
 * median cost of the ODE step and of the whole step.
 * Usage: bench_solver [character.h5] */
#include <stdio.h>
#include "bench_util.h"
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "store/character.h"
#include "sim/sim.h"
#include "../cmd/common/environment.h"

#define STEPS 5600 /* 2.8 s */
#define PUSH_STEP 3000
#define PUSH_STEPS 400

typedef struct {
    const char *name;
    int exact, iterations;
} setting;

static double tilt_deg(sc_quat q) /* angle of the bone's y axis from the vertical */
{
    sc_vec3 up = sc_q_rotate(q, sc_v3(0, 1, 0));
    return acos(fmax(-1, fmin(1, up.y))) * 180 / SC_PI;
}

int main(int argc, char **argv)
{
    sc_environment_apply(); /* the settings the tools take from the environment */
    const char *path = argc > 1 ? argv[1] : "results/bench/character.h5";
    static const setting settings[] = {{"exact", 1, 0},         {"quick 20 it", 0, 20},  {"quick 40 it", 0, 40},
                                       {"quick 80 it", 0, 80},  {"quick 160 it", 0, 160}, {"quick 320 it", 0, 320}};
    const int ns = (int)(sizeof settings / sizeof *settings);
    sc_model m;
    sc_err err;
    if (sc_character_read(path, &m, 1, &err)) { fprintf(stderr, "bench_solver: %s\n", err.msg); return 1; }
    int spine = -1;
    for (int b = 0; b < m.nbones; b++)
        if (!strcmp(m.bone_name[b], "spine")) spine = b;
    if (spine < 0) { fprintf(stderr, "bench_solver: %s has no bone 'spine'\n", path); return 1; }
    static double t_ode[STEPS], t_step[STEPS];
    printf("bench_solver: %s, rest pose held on the ground, 150 N push on the spine at 1.5 s for 0.2 s; tilt of the spine, "
           "tracking error RMS over joints and steps\n", path);
    printf("bench_solver: %-13s %11s %11s %11s %10s %10s\n", "solver", "tilt stand", "tilt push", "track RMS", "ode us", "step us");
    double exact_tilt = 0;
    for (int k = 0; k < ns; k++) {
        sc_sim_opts o;
        sc_sim_default_opts(&o);
        o.skeleton.exact_solver = settings[k].exact;
        if (!settings[k].exact) o.skeleton.iterations = settings[k].iterations;
        sc_sim *s;
        if (sc_sim_create(&m, &o, &s, &err)) { fprintf(stderr, "bench_solver: %s\n", err.msg); return 1; }
        double tilt_stand = 0, tilt_push = 0, se = 0;
        long nse = 0;
        sc_quat local[SC_SIM_MAX_BONES];
        for (int i = 0; i < STEPS; i++) {
            double *push = s->push + 3 * spine;
            push[0] = i >= PUSH_STEP && i < PUSH_STEP + PUSH_STEPS ? 150 : 0;
            sc_sim_timing before = s->timing;
            if (sc_sim_step(s, &err)) { fprintf(stderr, "bench_solver: %s: %s\n", settings[k].name, err.msg); return 1; }
            t_ode[i] = s->timing.ode - before.ode;
            t_step[i] = s->timing.total - before.total;
            double tilt = tilt_deg(s->pose[spine].q);
            if (i >= 1000 && i < PUSH_STEP) tilt_stand = fmax(tilt_stand, tilt);
            if (i >= PUSH_STEP) tilt_push = fmax(tilt_push, tilt);
            sc_skeleton_local_rotations(s->skel, local);
            for (int b = 1; b < m.nbones; b++, nse++) se += pow(sc_q_angle_between(local[b], s->targets[b]), 2);
        }
        sc_sim_free(s);
        qsort(t_ode, STEPS, sizeof *t_ode, bench_cmp_double);
        qsort(t_step, STEPS, sizeof *t_step, bench_cmp_double);
        double track = sqrt(se / (double)nse) * 180 / SC_PI, ode = 1e6 * t_ode[STEPS / 2], step = 1e6 * t_step[STEPS / 2];
        if (k == 0) exact_tilt = tilt_push;
        printf("bench_solver: %-13s %7.3f deg %7.3f deg %7.3f deg %10.1f %10.1f\n", settings[k].name, tilt_stand, tilt_push, track,
               ode, step);
        char key[32];
        snprintf(key, sizeof key, "%s", settings[k].name);
        for (char *c = key; *c; c++)
            if (*c == ' ') *c = '_';
        printf("@ solver_%s_tilt_stand %.3f deg\n@ solver_%s_tilt_push %.3f deg\n@ solver_%s_tracking_rms %.3f deg\n"
               "@ solver_%s_ode_median %.1f us\n@ solver_%s_step_median %.1f us\n", key, tilt_stand, key, tilt_push, key, track, key,
               ode, key, step);
    }
    (void)exact_tilt;
    sc_model_free(&m);
    return 0;
}

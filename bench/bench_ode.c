/* ODE skeleton step cost: a 16-bone humanoid (ball joints, hinge elbows and knees), stable PD
 * servos with moving targets, dt = 0.5 ms: quickstep, the exact step with ODE's dense LCP and
 * the exact step with the tree solver (the default). Prints the median microseconds per step
 * over 4000 steps after 200 warm-up steps, plus tracking and joint-separation errors; the two
 * exact variants run alternately three times each and their medians are paired. */
#include <stdio.h>
#include "bench_util.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/mathx.h"
#include "sim/skeleton.h"
#include "../cmd/common/environment.h"

#define NB 16

typedef struct {
    sc_model m;
    char names[NB][SC_NAME_LEN];
    int parent[NB], type[NB];
    double joint_pos[3 * NB], bone_end[3 * NB], axis[3 * NB], lo[3 * NB], hi[3 * NB];
    double kp[NB], kd[NB], tlim[NB], mass[NB], com[3 * NB], inertia[9 * NB];
} humanoid;

static void bone(humanoid *h, int b, const char *name, int parent, int type, sc_vec3 jp, sc_vec3 end, double mass,
                 double radius, double kp)
{
    snprintf(h->names[b], SC_NAME_LEN, "%s", name);
    h->parent[b] = parent;
    h->type[b] = type;
    sc_v3_store(h->joint_pos + 3 * b, jp);
    sc_v3_store(h->bone_end + 3 * b, end);
    sc_v3_store(h->com + 3 * b, sc_v3_scale(sc_v3_add(jp, end), 0.5));
    h->mass[b] = mass;
    /* solid cylinder from joint to end */
    sc_vec3 d = sc_v3_sub(end, jp);
    double L = sc_v3_norm(d);
    sc_vec3 a = sc_v3_scale(d, 1 / L);
    double ia = 0.5 * mass * radius * radius, ip = mass * (3 * radius * radius + L * L) / 12;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            h->inertia[9 * b + 3 * i + j] = (i == j ? ip : 0) + (ia - ip) * sc_v3_get(a, i) * sc_v3_get(a, j);
    h->kp[b] = kp;
    h->kd[b] = 30;
    h->tlim[b] = 400;
    h->axis[3 * b] = 1; /* hinges bend about x (elbows after the arm rotations below, knees) */
}

static void build(humanoid *h)
{
    memset(h, 0, sizeof *h);
    for (int i = 0; i < 3 * NB; i++) { h->lo[i] = 1; h->hi[i] = -1; }
    const int B = SC_JOINT_BALL, H = SC_JOINT_HINGE;
    bone(h, 0, "pelvis", -1, SC_JOINT_FREE, sc_v3(0, 1.00, 0), sc_v3(0, 1.10, 0), 10, 0.12, 0);
    bone(h, 1, "spine", 0, B, sc_v3(0, 1.10, 0), sc_v3(0, 1.30, 0), 8, 0.11, 1000);
    bone(h, 2, "chest", 1, B, sc_v3(0, 1.30, 0), sc_v3(0, 1.52, 0), 12, 0.13, 1000);
    bone(h, 3, "head", 2, B, sc_v3(0, 1.52, 0), sc_v3(0, 1.80, 0), 5, 0.09, 300);
    for (int s = 0; s < 2; s++) {
        double x = s ? -1 : 1;
        int o = 4 + 3 * s;
        char nm[32];
        snprintf(nm, sizeof nm, "%s_upper_arm", s ? "r" : "l");
        bone(h, o, nm, 2, B, sc_v3(0.18 * x, 1.46, 0), sc_v3(0.46 * x, 1.46, 0), 2.0, 0.045, 500);
        snprintf(nm, sizeof nm, "%s_forearm", s ? "r" : "l");
        bone(h, o + 1, nm, o, H, sc_v3(0.46 * x, 1.46, 0), sc_v3(0.72 * x, 1.46, 0), 1.3, 0.04, 300);
        h->axis[3 * (o + 1)] = 0;
        h->axis[3 * (o + 1) + 1] = 1; /* elbow bends about y for a T-pose arm */
        snprintf(nm, sizeof nm, "%s_hand", s ? "r" : "l");
        bone(h, o + 2, nm, o + 1, B, sc_v3(0.72 * x, 1.46, 0), sc_v3(0.90 * x, 1.46, 0), 0.5, 0.035, 300);
    }
    for (int s = 0; s < 2; s++) {
        double x = s ? -1 : 1;
        int o = 10 + 3 * s;
        char nm[32];
        snprintf(nm, sizeof nm, "%s_thigh", s ? "r" : "l");
        bone(h, o, nm, 0, B, sc_v3(0.10 * x, 0.95, 0), sc_v3(0.10 * x, 0.52, 0), 8, 0.07, 1000);
        snprintf(nm, sizeof nm, "%s_shin", s ? "r" : "l");
        bone(h, o + 1, nm, o, H, sc_v3(0.10 * x, 0.52, 0), sc_v3(0.10 * x, 0.10, 0), 4, 0.05, 800);
        snprintf(nm, sizeof nm, "%s_foot", s ? "r" : "l");
        bone(h, o + 2, nm, o + 1, B, sc_v3(0.10 * x, 0.10, 0), sc_v3(0.10 * x, 0.05, 0.18), 1, 0.04, 500);
    }
    sc_model *m = &h->m;
    m->nbones = NB;
    m->bone_name = h->names;
    m->parent = h->parent;
    m->joint_type = h->type;
    m->joint_pos = h->joint_pos;
    m->bone_end = h->bone_end;
    m->hinge_axis = h->axis;
    m->joint_lo = h->lo;
    m->joint_hi = h->hi;
    m->kp = h->kp;
    m->kd = h->kd;
    m->torque_limit = h->tlim;
    m->bone_mass = h->mass;
    m->bone_com = h->com;
    m->bone_inertia = h->inertia;
}

static void targets(const humanoid *h, double t, sc_quat *tg)
{
    tg[0] = sc_q_identity();
    for (int b = 1; b < NB; b++) {
        double a = 0.5 * sin(2 * SC_PI * 1.2 * t + 0.6 * b);
        if (h->type[b] == SC_JOINT_HINGE) tg[b] = sc_q_axis_angle(sc_v3_load(h->axis + 3 * b), 0.8 + a);
        else tg[b] = sc_q_exp(sc_v3(0.6 * a, 0.3 * cos(2 * SC_PI * 0.8 * t + b), 0.4 * a));
    }
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

enum { WARMUP = 200, STEPS = 4000 };

enum { QUICKSTEP, EXACT_DENSE, EXACT_TREE, MODES };

static int run(const humanoid *h, int mode, double *median, double *p90, double *track, double *sep)
{
    sc_skeleton_opts o;
    sc_skeleton_default_opts(&o);
    o.exact_solver = mode != QUICKSTEP;
    o.tree_solver = mode == EXACT_TREE;
    sc_err err;
    sc_skeleton *s;
    if (sc_skeleton_create(&h->m, &o, &s, &err)) { fprintf(stderr, "bench_ode: %s\n", err.msg); return 1; }
    const double dt = 5e-4;
    static double t_us[STEPS];
    sc_quat tg[NB], loc[NB];
    sc_xform pose[NB];
    *track = 0;
    *sep = 0;
    for (int i = 0; i < WARMUP + STEPS; i++) {
        double t0 = now_us();
        targets(h, i * dt, tg);
        sc_skeleton_set_targets(s, tg);
        if (sc_skeleton_step(s, dt, &err)) { fprintf(stderr, "bench_ode: %s\n", err.msg); sc_skeleton_free(s); return 1; }
        double t1 = now_us();
        if (i >= WARMUP) {
            t_us[i - WARMUP] = t1 - t0;
            /* tracking error and joint separation (not timed) */
            sc_skeleton_local_rotations(s, loc);
            sc_skeleton_get_state(s, pose, NULL, NULL);
            for (int b = 1; b < NB; b++) {
                *track = fmax(*track, sc_q_angle_between(loc[b], tg[b]));
                int p = h->parent[b];
                sc_vec3 off = sc_v3_sub(sc_v3_load(h->joint_pos + 3 * b), sc_v3_load(h->joint_pos + 3 * p));
                *sep = fmax(*sep, sc_v3_dist(sc_xf_apply(pose[p], off), pose[b].p));
            }
        }
    }
    sc_skeleton_free(s);
    qsort(t_us, STEPS, sizeof(double), bench_cmp_double);
    *median = t_us[STEPS / 2];
    *p90 = t_us[STEPS * 9 / 10];
    return 0;
}

int main(void)
{
    sc_environment_apply(); /* the settings the tools take from the environment */
    static humanoid h;
    build(&h);
    double med[MODES], p90[MODES], track[MODES], sep[MODES], rounds[2][3];
    if (run(&h, QUICKSTEP, &med[0], &p90[0], &track[0], &sep[0])) return 1;
    for (int r = 0; r < 3; r++)
        for (int mode = EXACT_DENSE; mode <= EXACT_TREE; mode++) {
            if (run(&h, mode, &med[mode], &p90[mode], &track[mode], &sep[mode])) return 1;
            rounds[mode - EXACT_DENSE][r] = med[mode];
        }
    for (int k = 0; k < 2; k++) {
        qsort(rounds[k], 3, sizeof(double), bench_cmp_double);
        med[EXACT_DENSE + k] = rounds[k][1];
    }
    printf("bench_ode: %d bones, %d joints (4 hinges), dt 0.5 ms, kp 300-1000, kd 30, %d steps after %d warm-up\n", NB,
           NB - 1, STEPS, WARMUP);
    static const char *const label[MODES] = {"quickstep(20 it)       ", "exact, ODE's dense LCP ", "exact, tree solver     "};
    for (int mode = 0; mode < MODES; mode++)
        printf("bench_ode: %s median %.2f us/step (p90 %.2f); max tracking error %.3f rad, max joint separation %.2e m\n",
               label[mode], med[mode], p90[mode], track[mode], sep[mode]);
    printf("bench_ode: exact step, dense LCP / tree solver: %.2f (medians of 3 alternated runs)\n", med[EXACT_DENSE] / med[EXACT_TREE]);
    printf("@ ode_quickstep_step_median %.2f us\n@ ode_exact_dense_step_median %.2f us\n@ ode_exact_step_median %.2f us\n",
           med[QUICKSTEP], med[EXACT_DENSE], med[EXACT_TREE]); /* for scripts/bench.sh */
    return 0;
}

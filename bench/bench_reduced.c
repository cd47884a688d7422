/* [P17]'s reduced body against the full FEM on the same boneless character, side by side: the
 * time of the modal basis (K = 5, 10, 15), the time per step of the full FEM (muscle/softbody:
 * corotated FEM, symplectic Euler, dt 5e-4 s) and of the reduced body (lib/reduced: frame +
 * K implicit modes, at dt 5e-4 s and 5e-3 s), both thrown through water (drag on the boundary
 * faces, 1 m/s, 2 rad/s, no gravity) and in vacuum, and the reduced body's nodal error against
 * the full run (RMS over the nodes at 10 times in 1 s, over the body's size). Medians of 3.
 *
 *   bench_reduced CHARACTER.h5        (a boneless character: configs/letters/I.yaml)
 *
 * Lines "@ metric value unit" are the figures scripts/bench.sh records. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_util.h"
#include "core/log.h"
#include "muscle/softbody.h"
#include "reduced/basis.h"
#include "reduced/body.h"
#include "store/character.h"

#define SAMPLES 10
#define SECONDS 1.0

static const double spin[3] = {0, 2, 0}, velocity[3] = {1, 0, 0};

/* the full FEM's step (us) over SECONDS; positions at SAMPLES times into track (when not NULL) */
static double full_run(const sc_model *m, int wet, double *track, sc_err *err)
{
    sc_softbody_opts o;
    sc_softbody_default_opts(&o);
    memset(o.gravity, 0, sizeof o.gravity);
    o.contact.enabled = 0;
    if (wet) o.fluid = (sc_fluid_opts){1000, 1, {0, 0, 0}};
    sc_softbody *s;
    if (sc_softbody_create(m, NULL, &o, &s, err)) return -1;
    double c[3] = {0, 0, 0}, mass = 0;
    for (int i = 0; i < m->nnodes; i++) {
        mass += m->node_mass[i];
        for (int a = 0; a < 3; a++) c[a] += m->node_mass[i] * m->rest_pos[3 * i + a];
    }
    for (int i = 0; i < m->nnodes; i++) {
        const double r[3] = {m->rest_pos[3 * i] - c[0] / mass, m->rest_pos[3 * i + 1] - c[1] / mass, m->rest_pos[3 * i + 2] - c[2] / mass};
        s->v[3 * i] = velocity[0] + spin[1] * r[2] - spin[2] * r[1];
        s->v[3 * i + 1] = velocity[1] + spin[2] * r[0] - spin[0] * r[2];
        s->v[3 * i + 2] = velocity[2] + spin[0] * r[1] - spin[1] * r[0];
    }
    const long steps = lround(SECONDS / o.dt);
    const double t0 = sc_wall_time();
    for (long k = 1; k <= steps; k++) {
        if (sc_softbody_step(s, err)) {
            sc_softbody_free(s);
            return -1;
        }
        if (track && k % (steps / SAMPLES) == 0) memcpy(track + (k / (steps / SAMPLES) - 1) * 3 * (size_t)m->nnodes, s->x, 24 * (size_t)m->nnodes);
    }
    const double us = 1e6 * (sc_wall_time() - t0) / steps;
    sc_softbody_free(s);
    return us;
}

/* the reduced body's step (us) at dt over SECONDS; its largest RMS nodal distance from track
   into *error (when track is not NULL) */
static double reduced_run(const sc_model *m, const sc_reduced_basis *b, int wet, double dt, const double *track, double *error, sc_err *err)
{
    sc_reduced_opts o;
    sc_reduced_default_opts(&o);
    o.dt = dt;
    memset(o.gravity, 0, sizeof o.gravity);
    if (wet) o.fluid = (sc_fluid_opts){1000, 1, {0, 0, 0}};
    sc_reduced_model rm;
    sc_reduced_state s;
    if (sc_reduced_model_create(m, b, &o, &rm, err)) return -1;
    if (sc_reduced_state_create(&rm, &s, err)) {
        sc_reduced_model_free(&rm);
        return -1;
    }
    memcpy(s.vel, velocity, sizeof s.vel);
    sc_mat3 J;
    memcpy(J.m, b->inertia, sizeof J.m);
    sc_v3_store(s.ang_mom, sc_m3_mulv(J, sc_v3_load(spin)));
    memcpy(s.omega, spin, sizeof s.omega);
    const long steps = lround(SECONDS / dt);
    double *x = malloc(24 * (size_t)m->nnodes), busy = 0;
    if (error && track) *error = 0;
    for (long k = 1; k <= steps; k++) {
        const double t0 = sc_wall_time();
        if (sc_reduced_step(&rm, &s, err)) {
            busy = -1;
            break;
        }
        busy += sc_wall_time() - t0;
        if (track && k % (steps / SAMPLES) == 0) {
            sc_reduced_nodes(&rm, &s, x, NULL);
            const double *xf = track + (k / (steps / SAMPLES) - 1) * 3 * (size_t)m->nnodes;
            double sum = 0;
            for (int i = 0; i < 3 * m->nnodes; i++) sum += (x[i] - xf[i]) * (x[i] - xf[i]);
            *error = fmax(*error, sqrt(sum / m->nnodes));
        }
    }
    free(x);
    sc_reduced_state_free(&s);
    sc_reduced_model_free(&rm);
    return busy < 0 ? -1 : 1e6 * busy / steps;
}

static double body_size(const sc_model *m)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, d = 0;
    for (int i = 0; i < m->nnodes; i++)
        for (int a = 0; a < 3; a++) {
            lo[a] = fmin(lo[a], m->rest_pos[3 * i + a]);
            hi[a] = fmax(hi[a], m->rest_pos[3 * i + a]);
        }
    for (int a = 0; a < 3; a++) d += (hi[a] - lo[a]) * (hi[a] - lo[a]);
    return sqrt(d);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_reduced CHARACTER.h5   (a boneless character)\n");
        return 1;
    }
    sc_log_set_level(SC_LOG_WARN);
    sc_err err = {0};
    sc_model m;
    if (sc_character_read(argv[1], &m, 0, &err)) {
        fprintf(stderr, "bench_reduced: %s\n", err.msg);
        return 1;
    }
    const double size = body_size(&m);
    double *track = malloc(SAMPLES * 24 * (size_t)m.nnodes), full[2][3];
    for (int r = 0; r < 3; r++)
        for (int wet = 0; wet < 2; wet++)
            if ((full[wet][r] = full_run(&m, wet, r == 0 && wet ? track : NULL, &err)) < 0) {
                fprintf(stderr, "bench_reduced: full FEM: %s\n", err.msg);
                return 1;
            }
    const double full_dry = bench_median(full[0], 3), full_wet = bench_median(full[1], 3);
    printf("bench_reduced: %d nodes, %d tets, %.3f m; full FEM (dt 5e-4 s): %.1f us a step in vacuum, %.1f us in water\n", m.nnodes, m.ntets, size,
           full_dry, full_wet);
    printf("@ full_us_per_step %.2f us\n@ full_us_per_step_water %.2f us\n", full_dry, full_wet);
    static const int modes[] = {5, 10, 15};
    for (int j = 0; j < 3; j++) {
        const int K = modes[j];
        sc_reduced_basis b;
        sc_reduced_basis_stats bs;
        if (sc_reduced_basis_compute(&m, K, &b, &bs, &err)) {
            fprintf(stderr, "bench_reduced: basis: %s\n", err.msg);
            return 1;
        }
        double dry[3], wet[3], wet_big[3], e_small = 0, e_big = 0;
        for (int r = 0; r < 3; r++)
            if ((dry[r] = reduced_run(&m, &b, 0, 5e-4, NULL, NULL, &err)) < 0 ||
                (wet[r] = reduced_run(&m, &b, 1, 5e-4, r == 0 ? track : NULL, &e_small, &err)) < 0 ||
                (wet_big[r] = reduced_run(&m, &b, 1, 5e-3, r == 0 ? track : NULL, &e_big, &err)) < 0) {
                fprintf(stderr, "bench_reduced: reduced: %s\n", err.msg);
                return 1;
            }
        const double d = bench_median(dry, 3), w = bench_median(wet, 3), wb = bench_median(wet_big, 3);
        printf("  K = %2d: basis %.3f s (%.2f..%.2f Hz, residual <= %.1e); reduced step %.2f us in vacuum (%.0f x), %.2f us in water (%.1f x); "
               "in water at dt 5e-3 s %.2f us a step, %.0f x per simulated second; error RMS / size %.2e (dt 5e-4 s), %.2e (dt 5e-3 s)\n",
               K, bs.seconds, b.frequency[0], b.frequency[K - 1], bs.max_residual, d, full_dry / d, w, full_wet / w, wb, 10 * full_wet / wb,
               e_small / size, e_big / size);
        printf("@ k%d_basis_s %.4f s\n@ k%d_us_per_step %.3f us\n@ k%d_us_per_step_water %.3f us\n@ k%d_speedup_per_step_water %.2f x\n"
               "@ k%d_speedup_per_second_water_dt5ms %.1f x\n@ k%d_error_rms_over_size %.3e 1\n",
               K, bs.seconds, K, d, K, w, K, full_wet / w, K, 10 * full_wet / wb, K, e_small / size);
        sc_reduced_basis_free(&b);
    }
    free(track);
    sc_model_free(&m);
    return 0;
}

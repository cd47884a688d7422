/* swim.h5 (swim.h). */
#include "store/swim.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "io/h5.h"

#define TRY(x)                    \
    do {                          \
        if ((rc = (x))) goto out; \
    } while (0)

int sc_swim_write(const char *path, const sc_swim_file_info *info, const sc_swim_problem *p, const sc_dmp *d, const sc_swim_terms *terms,
                  const sc_swim_trace *trace, const sc_swim_history *history, const sc_lbfgs_result *lr, sc_err *err)
{
    sc_h5 *f;
    int rc = sc_h5_create(path, &f, err);
    if (rc) return rc;
    const int K = d->nmodes, N = d->nbasis;
    const sc_swim_objective *o = &p->obj;
    TRY(sc_h5_provenance(f, SC_SWIM_SCHEMA, info->argc, info->argv, info->config_text, err));
    TRY(sc_h5_attr_i64(f, "/", "seed", (long long)info->seed, err));
    TRY(sc_h5_attr_str(f, "/", "character", info->character, err));
    TRY(sc_h5_attr_str(f, "/", "model", info->model, err));
    TRY(sc_h5_attr_str(f, "/", "controller_source", info->controller_source, err));
    /* the controller */
    TRY(sc_h5_group(f, "/controller", "a periodic DMP per mode driving the reduced body's modal control forces ([P17] eq. 7)", err));
    TRY(sc_h5_attr_str(f, "/controller", "kind", d->kind == SC_DMP_PERIODIC ? "periodic" : "discrete", err));
    TRY(sc_h5_attr_str(f, "/controller", "formula", "u_k(t) = sum_i weights[k, i] exp(width (cos(phase0 + 2 pi t / period - 2 pi i / basis) - 1))",
                       err));
    TRY(sc_h5_attr_i64(f, "/controller", "modes", K, err));
    TRY(sc_h5_attr_i64(f, "/controller", "basis", N, err));
    TRY(sc_h5_attr_f64(f, "/controller", "period", d->period, err));
    TRY(sc_h5_attr_str(f, "/controller", "period_units", "s", err));
    TRY(sc_h5_attr_f64(f, "/controller", "phase0", d->phase0, err));
    TRY(sc_h5_attr_f64(f, "/controller", "width", d->width, err));
    const size_t wd[2] = {(size_t)K, (size_t)N}, kd[1] = {(size_t)K};
    TRY(sc_h5_write_f64(f, "/controller/weights", 2, wd, d->weight, "N/sqrt(kg)", "w[k, i]: mode k's weight of basis function i", err));
    TRY(sc_h5_write_f64(f, "/controller/mode_frequencies", 1, kd, p->rm->b->frequency, "Hz", "the character's modes the outputs drive", err));
    TRY(sc_h5_write_f64(f, "/controller/weight_scale", 1, kd, p->scale, "N/sqrt(kg)",
                        "s_k = lambda_k sqrt(M) l: the modal force bending mode k statically by l (the optimiser's unit)", err));
    /* the objective and the recorded run's terms */
    TRY(sc_h5_group(f, "/objective", "[P17] eq. 11 (speed), eq. 12 (balance) and the control effort, over the run after the warm-up", err));
    TRY(sc_h5_attr_f64(f, "/objective", "target_speed", o->target_speed, err));
    TRY(sc_h5_attr_f64_array(f, "/objective", "direction", 3, o->direction, err));
    TRY(sc_h5_attr_f64(f, "/objective", "duration", o->duration, err));
    TRY(sc_h5_attr_f64(f, "/objective", "warmup", o->warmup, err));
    const double w3[3] = {o->speed_weight, o->effort_weight, o->balance_weight};
    TRY(sc_h5_attr_f64_array(f, "/objective", "weights", 3, w3, err));
    TRY(sc_h5_attr_f64_array(f, "/objective", "balance_axis", 3, o->balance_axis, err));
    const size_t one[1] = {1};
    TRY(sc_h5_write_f64(f, "/objective/total", 1, one, &terms->total, "1", "speed + effort + balance", err));
    TRY(sc_h5_write_f64(f, "/objective/speed", 1, one, &terms->speed, "1", "weight x mean |v - v* d|^2 / v*^2", err));
    TRY(sc_h5_write_f64(f, "/objective/effort", 1, one, &terms->effort, "1", "weight x mean sum_k (u_k / s_k)^2", err));
    TRY(sc_h5_write_f64(f, "/objective/balance", 1, one, &terms->balance, "1", "weight x mean |R a - a|^2", err));
    TRY(sc_h5_write_f64(f, "/objective/achieved_speed", 1, one, &terms->achieved, "m/s", "the centre of mass's displacement along d / time", err));
    TRY(sc_h5_write_f64(f, "/objective/drift", 1, one, &terms->drift, "m/s", "its displacement across d / time", err));
    TRY(sc_h5_write_f64(f, "/objective/control_rms", 1, one, &terms->control_rms, "N/sqrt(kg)", "the RMS modal force", err));
    /* the optimisation */
    if (history && lr) {
        const size_t hd[1] = {(size_t)history->n};
        TRY(sc_h5_group(f, "/optimisation", "L-BFGS on the DMP's weights and period, central-difference gradients ([P17] Table 1's baseline)", err));
        TRY(sc_h5_write_f64(f, "/optimisation/objective", 1, hd, history->objective, "1", "the start, then every accepted iteration", err));
        TRY(sc_h5_write_f64(f, "/optimisation/achieved_speed", 1, hd, history->achieved, "m/s", "the same points' speed", err));
        TRY(sc_h5_write_f64(f, "/optimisation/seconds", 1, hd, history->seconds, "s", "wall time since the start", err));
        TRY(sc_h5_attr_i64(f, "/optimisation", "iterations", lr->iterations, err));
        TRY(sc_h5_attr_i64(f, "/optimisation", "evaluations", lr->evaluations, err));
        TRY(sc_h5_attr_i64(f, "/optimisation", "forward_runs", p->evaluations, err));
        TRY(sc_h5_attr_i64(f, "/optimisation", "variables", p->nvars, err));
        TRY(sc_h5_attr_i64(f, "/optimisation", "threads", info->threads, err));
        TRY(sc_h5_attr_str(f, "/optimisation", "stop", sc_lbfgs_stop_name(lr->stop), err));
        TRY(sc_h5_attr_f64(f, "/optimisation", "seconds", history->n ? history->seconds[history->n - 1] : 0, err));
        TRY(sc_h5_attr_f64(f, "/optimisation", "initial_objective", history->objective[0], err));
        TRY(sc_h5_attr_f64(f, "/optimisation", "final_objective", lr->f, err));
    }
    /* the trajectory */
    const size_t F = (size_t)trace->nframes, d1[1] = {F}, d3[2] = {F, 3}, d4[2] = {F, 4}, dk[2] = {F, (size_t)K};
    TRY(sc_h5_group(f, "/trajectory", "the controller's run from rest", err));
    TRY(sc_h5_attr_f64(f, "/trajectory", "dt", info->dt, err));
    TRY(sc_h5_attr_i64(f, "/trajectory", "every", info->every, err));
    TRY(sc_h5_write_f64(f, "/trajectory/time", 1, d1, trace->time, "s", NULL, err));
    TRY(sc_h5_write_f64(f, "/trajectory/com", 2, d3, trace->com, "m", "the centre of mass", err));
    TRY(sc_h5_write_f64(f, "/trajectory/velocity", 2, d3, trace->vel, "m/s", "the centre of mass's velocity", err));
    TRY(sc_h5_write_f64(f, "/trajectory/orientation", 2, d4, trace->rot, "1",
                        "w x y z: the frame's (full FEM: the best-fit rotation of the nodes about their centre of mass)", err));
    TRY(sc_h5_write_f64(f, "/trajectory/modes", 2, dk, trace->q, "m sqrt(kg)", "modal coordinates (full FEM: the nodes projected on the modes)",
                        err));
    TRY(sc_h5_write_f64(f, "/trajectory/control", 2, dk, trace->control, "N/sqrt(kg)", "the modal control forces of the step ending at the frame",
                        err));
    return sc_h5_commit(f, err);
out:
    sc_h5_abort(f);
    return rc;
}

#undef TRY
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) goto done; \
    } while (0)

int sc_swim_read_controller(const char *path, int nmodes, sc_dmp *d, sc_err *err)
{
    sc_h5 *f;
    memset(d, 0, sizeof *d);
    int rc = sc_h5_open(path, &f, err);
    if (rc) return rc;
    char *schema = NULL, *kind = NULL;
    double *w = NULL, period, phase0, width;
    long long modes, basis;
    TRY(sc_h5_read_attr_str(f, "/", "schema", &schema, err));
    if (strcmp(schema, SC_SWIM_SCHEMA)) {
        rc = sc_fail(err, SC_EINPUT, "%s:/: schema '%s', not a controller of reduced-opt (%s)", path, schema, SC_SWIM_SCHEMA);
        goto done;
    }
    TRY(sc_h5_read_attr_str(f, "/controller", "kind", &kind, err));
    TRY(sc_h5_read_attr_i64(f, "/controller", "modes", &modes, err));
    TRY(sc_h5_read_attr_i64(f, "/controller", "basis", &basis, err));
    TRY(sc_h5_read_attr_f64(f, "/controller", "period", &period, err));
    TRY(sc_h5_read_attr_f64(f, "/controller", "phase0", &phase0, err));
    TRY(sc_h5_read_attr_f64(f, "/controller", "width", &width, err));
    if (strcmp(kind, "periodic") || modes != nmodes || basis < 1 || basis > SC_DMP_MAX_BASIS || !(period > 0) || !isfinite(period) ||
        !isfinite(phase0) || !(width > 0) || !isfinite(width)) {
        rc = sc_fail(err, SC_EINPUT,
                     "%s:/controller: a periodic DMP of the character's %d modes expected (kind %s, modes %lld, basis %lld, period %g s, width %g)",
                     path, nmodes, kind, modes, basis, period, width);
        goto done;
    }
    size_t dims[2] = {(size_t)modes, (size_t)basis};
    TRY(sc_h5_read_f64(f, "/controller/weights", 2, dims, &w, err));
    TRY(sc_h5_check_finite(f, "/controller/weights", w, dims[0] * dims[1], dims[1], err));
    TRY(sc_dmp_create(SC_DMP_PERIODIC, nmodes, (int)basis, period, d, err));
    d->phase0 = phase0;
    d->width = width;
    memcpy(d->weight, w, sizeof(double) * nmodes * basis);
done:
    free(schema);
    free(kind);
    free(w);
    sc_h5_close(f);
    return rc;
}

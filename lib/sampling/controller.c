/* The PD targets of a controller at any time: keys interpolated (model/targets.h), looped or shifted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sampling/controller.h"

void sc_controller_free(sc_controller *c)
{
    free(c->times);
    free(c->keys);
    free(c->ref_time);
    memset(c, 0, sizeof *c);
}

double sc_controller_duration(const sc_controller *c) { return c->nkeys ? c->times[c->nkeys - 1] : 0; }

double sc_controller_reference_time(const sc_controller *c, double t)
{
    if (!c->ref_time || c->nkeys < 1) return NAN;
    t += c->offset;
    const double *tt = c->times;
    int n = c->nkeys;
    if (n == 1 || t <= tt[0]) return c->ref_time[0] + (t - tt[0]);
    if (t >= tt[n - 1]) return c->ref_time[n - 1] + (t - tt[n - 1]);
    int lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (tt[mid] <= t) lo = mid;
        else hi = mid;
    }
    double a = (t - tt[lo]) / (tt[hi] - tt[lo]);
    return c->ref_time[lo] + a * (c->ref_time[hi] - c->ref_time[lo]);
}

void sc_controller_targets(const sc_controller *c, double t, sc_quat *out)
{
    t += c->offset;
    double end = c->times[c->nkeys - 1];
    if (c->loop && c->nkeys > 1 && t >= end && end > c->times[0]) t = c->times[0] + fmod(t - c->times[0], end - c->times[0]);
    sc_targets_interpolate(c->times, c->nkeys, (const double *)c->keys, c->nbones, t, out);
}

int sc_controller_from_rotations(const sc_model *m, const char *source, const char *dataset, int n, const double *times, char *const *names,
                                 int nnames, const double *quats, const double *ref_time, sc_controller *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    size_t nt = (size_t)n, nb = (size_t)m->nbones;
    c->kind = SC_CTRL_TRAJECTORY;
    c->nbones = m->nbones;
    c->nkeys = n;
    c->times = malloc(nt * sizeof *c->times);
    c->keys = malloc(nt * nb * sizeof *c->keys);
    if (ref_time) c->ref_time = malloc(nt * sizeof *c->ref_time);
    if (!c->times || !c->keys || (ref_time && !c->ref_time)) {
        sc_controller_free(c);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    memcpy(c->times, times, nt * sizeof *c->times);
    if (ref_time) memcpy(c->ref_time, ref_time, nt * sizeof *c->ref_time);
    for (size_t i = 0; i < nt * nb; i++) c->keys[i] = sc_q_identity();
    for (int j = 0; j < nnames; j++) {
        int b = sc_model_bone_index(m, names[j]);
        if (b < 0) {
            sc_controller_free(c);
            return sc_fail(err, SC_EINPUT, "%s:/bones/names: bone '%s' is not in the character", source, names[j]);
        }
        for (size_t i = 0; i < nt; i++) {
            const double *s = quats + (i * (size_t)nnames + (size_t)j) * 4;
            sc_quat k = {s[0], s[1], s[2], s[3]};
            double n2 = k.w * k.w + k.x * k.x + k.y * k.y + k.z * k.z;
            c->keys[i * nb + (size_t)b] = fabs(n2 - 1) <= 1e-12 ? k : sc_q_normalize(k);
        }
    }
    snprintf(c->source, sizeof c->source, "%s", source);
    snprintf(c->dataset, sizeof c->dataset, "%s", dataset);
    return SC_OK;
}

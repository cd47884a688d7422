/* The PD targets of a controller at any time: keys interpolated (model/targets.h), looped or shifted. */
#include <math.h>
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

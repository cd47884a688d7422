/* Periodic and discrete DMPs ([P17] 4.3.1, eq. 7 and 8; dmp.h). */
#include "reduced/dmp.h"
#include <math.h>
#include <stdlib.h>
#include "core/mathx.h"

double sc_dmp_default_width(int kind, int nbasis)
{
    if (kind == SC_DMP_PERIODIC) {
        /* exp(h (cos(pi / N) - 1)) = exp(-1/2) halfway between two centres */
        const double half = SC_PI / nbasis;
        return nbasis > 1 ? 0.5 / (1 - cos(half)) : 1.0;
    }
    /* exp(-h (1 / (2 (N - 1)))^2 / 2) = exp(-1/2) */
    const double half = 0.5 / (nbasis - 1);
    return 1 / (half * half);
}

int sc_dmp_create(int kind, int nmodes, int nbasis, double period, sc_dmp *d, sc_err *err)
{
    d->weight = NULL;
    if (kind != SC_DMP_PERIODIC && kind != SC_DMP_DISCRETE) return sc_fail(err, SC_EINPUT, "dmp: unknown kind %d", kind);
    if (nmodes < 1 || nbasis < (kind == SC_DMP_DISCRETE ? 2 : 1) || nbasis > SC_DMP_MAX_BASIS || !(period > 0) || !isfinite(period))
        return sc_fail(err, SC_EINPUT, "dmp: %d outputs, %d basis functions (1..%d, 2.. for a discrete one), period %g s (> 0)", nmodes, nbasis,
                       SC_DMP_MAX_BASIS, period);
    d->kind = kind;
    d->nmodes = nmodes;
    d->nbasis = nbasis;
    d->period = period;
    d->phase0 = 0;
    d->width = sc_dmp_default_width(kind, nbasis);
    d->weight = sc_alloc(err, (size_t)nmodes * nbasis, sizeof(double));
    return d->weight ? SC_OK : SC_EIO;
}

void sc_dmp_free(sc_dmp *d)
{
    free(d->weight);
    d->weight = NULL;
}

double sc_dmp_phase(const sc_dmp *d, double t)
{
    if (d->kind == SC_DMP_DISCRETE) return t / d->period;
    /* reduce the cycles first so a long run keeps its phase to rounding of one period */
    const double cycles = t / d->period, frac = cycles - floor(cycles);
    double phi = d->phase0 + 2 * SC_PI * frac;
    phi = fmod(phi, 2 * SC_PI);
    return phi < 0 ? phi + 2 * SC_PI : phi;
}

void sc_dmp_basis(const sc_dmp *d, double t, double *psi)
{
    const double phi = sc_dmp_phase(d, t);
    const int n = d->nbasis;
    for (int i = 0; i < n; i++) {
        if (d->kind == SC_DMP_PERIODIC) psi[i] = exp(d->width * (cos(phi - 2 * SC_PI * i / n) - 1));
        else {
            const double r = phi - (double)i / (n - 1);
            psi[i] = exp(-0.5 * d->width * r * r);
        }
    }
}

void sc_dmp_eval(const sc_dmp *d, double t, double *u)
{
    double psi[SC_DMP_MAX_BASIS];
    sc_dmp_basis(d, t, psi);
    for (int k = 0; k < d->nmodes; k++) {
        const double *w = d->weight + (size_t)k * d->nbasis;
        double s = 0;
        for (int i = 0; i < d->nbasis; i++) s += w[i] * psi[i];
        u[k] = s;
    }
}

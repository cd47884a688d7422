/* Fluid drag ([P17] 4.2.2; sim/fluid.h). */
#include "sim/fluid.h"
#include <math.h>
#include "core/hash.h"

int sc_fluid_enabled(const sc_fluid_opts *o) { return o->density > 0 && o->drag > 0; }

int sc_fluid_check(const sc_fluid_opts *o, sc_err *err)
{
    if (o->density >= 0 && o->density < INFINITY && o->drag >= 0 && o->drag < INFINITY && isfinite(o->flow[0]) && isfinite(o->flow[1]) &&
        isfinite(o->flow[2]))
        return SC_OK;
    return sc_fail(err, SC_EINPUT, "fluid: density %g kg/m^3 and drag %g must be finite and >= 0, flow (%g, %g, %g) m/s finite", o->density, o->drag,
                   o->flow[0], o->flow[1], o->flow[2]);
}

uint64_t sc_fluid_hash(uint64_t h, const sc_fluid_opts *o)
{
    if (!sc_fluid_enabled(o)) return h;
    h = sc_hash_f64(sc_hash_f64(h, o->density), o->drag);
    for (int j = 0; j < 3; j++) h = sc_hash_f64(h, o->flow[j]);
    return h;
}

sc_vec3 sc_fluid_drag(double zeta, sc_vec3 n, sc_vec3 u)
{
    const double un = sc_v3_dot(n, u), n2 = sc_v3_dot(n, n);
    if (!(un > 0 && n2 > 0)) return sc_v3(0, 0, 0); /* moving away from the fluid, or degenerate: the limit 0 */
    return sc_v3_scale(n, -zeta * un * un / n2);
}

sc_vec3 sc_fluid_drag_yuksel(double zeta, sc_vec3 n, sc_vec3 u)
{
    const double un = sc_v3_dot(n, u);
    return un > 0 ? sc_v3_scale(u, -zeta * un) : sc_v3(0, 0, 0);
}

void sc_fluid_forces(const sc_fluid_opts *o, int ntris, const int *tris, const double *p, const double *pv, double *pf, sc_vec3 *total)
{
    sc_vec3 sum = sc_v3(0, 0, 0);
    const double zeta = 0.5 * o->density * o->drag, third = 1.0 / 3;
    const sc_vec3 flow = sc_v3_load(o->flow);
    for (int t = 0; t < ntris && sc_fluid_enabled(o); t++) {
        const int *c = tris + 3 * t;
        const sc_vec3 a = sc_v3_load(p + 3 * c[0]), b = sc_v3_load(p + 3 * c[1]), d = sc_v3_load(p + 3 * c[2]);
        const sc_vec3 n = sc_v3_scale(sc_v3_cross(sc_v3_sub(b, a), sc_v3_sub(d, a)), 0.5);
        /* the centre's velocity: the mean of the corners' (the point force spreads back the same way) */
        const sc_vec3 vc = sc_v3_scale(sc_v3_add(sc_v3_add(sc_v3_load(pv + 3 * c[0]), sc_v3_load(pv + 3 * c[1])), sc_v3_load(pv + 3 * c[2])), third);
        const sc_vec3 f = sc_fluid_drag(zeta, n, sc_v3_sub(vc, flow));
        if (f.x == 0 && f.y == 0 && f.z == 0) continue;
        const sc_vec3 share = sc_v3_scale(f, third);
        for (int k = 0; k < 3; k++) sc_v3_store(pf + 3 * c[k], sc_v3_add(sc_v3_load(pf + 3 * c[k]), share));
        sum = sc_v3_add(sum, f);
    }
    if (total) *total = sum;
}

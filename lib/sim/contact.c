#include <string.h>
#include "sim/contact.h"

void sc_contact_default_opts(sc_contact_opts *o)
{
    memset(o, 0, sizeof *o);
    o->enabled = 1;
    o->stiffness = 2e4;
    o->damping = 30;
    o->mu = 0.8;
    o->tangent_stiffness = 2e4;
    o->tangent_damping = 30;
    o->ground.normal = sc_v3(0, 1, 0);
}

double sc_ground_height(const sc_ground *g, sc_vec3 p, sc_vec3 *normal)
{
    double h = sc_v3_dot(g->normal, p) - g->offset;
    sc_vec3 n = g->normal;
    if (g->bump_length > 0 && g->bump_height != 0) {
        double k = 2 * SC_PI / g->bump_length, sx = sin(k * p.x), sz = sin(k * p.z);
        h -= g->bump_height * sx * sz;
        /* gradient of the bump term, removed from the normal (small-slope height field) */
        sc_vec3 grad = sc_v3(g->bump_height * k * cos(k * p.x) * sz, 0, g->bump_height * k * sx * cos(k * p.z));
        n = sc_v3_normalize(sc_v3_sub(n, grad));
    }
    if (normal) *normal = n;
    return h;
}

void sc_contact_forces(const sc_contact_opts *o, const sc_embedding *e, const double *p, const double *node_v,
                       double *anchor, unsigned char *in_contact, double *node_force, sc_contact_result *res)
{
    memset(res, 0, sizeof *res);
    if (!o->enabled) return;
    for (int i = 0; i < e->nverts; i++) {
        sc_vec3 x = sc_v3_load(p + 3 * i), n;
        double h = sc_ground_height(&o->ground, x, &n);
        if (h >= 0) { in_contact[i] = 0; continue; }
        const int *t = e->tets + 4 * e->tet[i];
        const double *w = e->bary + 4 * i;
        sc_vec3 vel = sc_v3(0, 0, 0);
        for (int k = 0; k < 4; k++) vel = sc_v3_axpy(w[k], sc_v3_load(node_v + 3 * t[k]), vel);
        double vn = sc_v3_dot(vel, n);
        double fn = -o->stiffness * h - o->damping * vn;
        if (fn <= 0) { in_contact[i] = 0; continue; } /* penalty may not pull */
        if (!in_contact[i]) { sc_v3_store(anchor + 3 * i, x); in_contact[i] = 1; }
        /* tangential anchor spring, clamped to the friction cone */
        sc_vec3 d = sc_v3_sub(x, sc_v3_load(anchor + 3 * i));
        d = sc_v3_sub(d, sc_v3_scale(n, sc_v3_dot(n, d)));
        sc_vec3 vt = sc_v3_sub(vel, sc_v3_scale(n, vn));
        sc_vec3 ft = sc_v3_add(sc_v3_scale(d, -o->tangent_stiffness), sc_v3_scale(vt, -o->tangent_damping));
        double ftn = sc_v3_norm(ft), lim = o->mu * fn;
        if (ftn > lim) {
            ft = sc_v3_scale(ft, lim / ftn);
            /* sliding: drag the anchor so that the spring alone carries the friction limit */
            if (sc_v3_norm(d) > 0) sc_v3_store(anchor + 3 * i, sc_v3_sub(x, sc_v3_scale(sc_v3_normalize(d), lim / o->tangent_stiffness)));
            res->sliding++;
        }
        sc_vec3 fc = sc_v3_add(sc_v3_scale(n, fn), ft);
        for (int k = 0; k < 4; k++) /* f_c = J_phi^T f~_c ([L13] 4.2.4) */
            sc_v3_store(node_force + 3 * t[k], sc_v3_axpy(w[k], fc, sc_v3_load(node_force + 3 * t[k])));
        res->total_force = sc_v3_add(res->total_force, fc);
        res->count++;
        res->max_depth = fmax(res->max_depth, -h);
    }
}

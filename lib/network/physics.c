#include "network/physics.h"

int sc_bone_is_below(const sc_model *m, int b, int ancestor)
{
    for (; b >= 0; b = m->parent[b])
        if (b == ancestor) return 1;
    return 0;
}

/* tau_b += s (r x f), a hinge's projected on its world axis */
static void add_joint(const sc_model *m, const sc_xform *pose, int b, sc_vec3 p, sc_vec3 f, double s, double *tau)
{
    sc_vec3 t = sc_v3_scale(sc_v3_cross(sc_v3_sub(p, pose[b].p), f), s);
    if (m->joint_type[b] == SC_JOINT_HINGE) {
        const sc_vec3 a = sc_q_rotate(pose[b].q, sc_v3_load(m->hinge_axis + 3 * b));
        t = sc_v3_scale(a, sc_v3_dot(t, a));
    }
    sc_v3_store(tau + 3 * b, sc_v3_add(sc_v3_load(tau + 3 * b), t));
}

void sc_vf_chain(const sc_model *m, const sc_xform *pose, int effector, int base, sc_vec3 p, sc_vec3 f, double *tau)
{
    for (int b = effector; b > 0 && b != base; b = m->parent[b]) add_joint(m, pose, b, p, f, 1, tau);
}

void sc_vf_support(const sc_model *m, const sc_xform *pose, int foot, sc_vec3 p, sc_vec3 f, double *tau)
{
    for (int b = foot; b > 0; b = m->parent[b]) add_joint(m, pose, b, p, f, -1, tau);
}

void sc_vf_gravity(const sc_model *m, const sc_xform *pose, const double *mass, const double *com, const unsigned char *compensate, const double g[3],
                   double *scratch, double *tau)
{
    const int nb = m->nbones;
    double *sub_mass = scratch, *moment = scratch + nb; /* per subtree: mass and sum of m c */
    for (int b = 0; b < nb; b++) {
        sub_mass[b] = mass[b];
        for (int k = 0; k < 3; k++) moment[3 * b + k] = mass[b] * com[3 * b + k];
    }
    for (int b = nb - 1; b > 0; b--) { /* parent[b] < b: children are summed before parents */
        const int p = m->parent[b];
        sub_mass[p] += sub_mass[b];
        for (int k = 0; k < 3; k++) moment[3 * p + k] += moment[3 * b + k];
    }
    const sc_vec3 weight = sc_v3_load(g);
    for (int b = 1; b < nb; b++) {
        if (!compensate[b] || !(sub_mass[b] > 0)) continue;
        /* the subtree's weight acts at its centre of mass; the joint holds it up */
        const sc_vec3 c = sc_v3_scale(sc_v3_load(moment + 3 * b), 1 / sub_mass[b]);
        add_joint(m, pose, b, c, sc_v3_scale(weight, sub_mass[b]), -1, tau);
    }
}

/* [P17] 4.2.2's fluid drag (sim/fluid.h): the force on one triangle by hand and its C1 seam, a
 * block coasting through still water and one carried by a current (against the rigid block's
 * closed form), the boneless body's drag, runs out of the water unchanged to the bit, and the
 * `fluid` section's bad values refused naming their line. */
#include <stdlib.h>
#include <string.h>
#include "core/hash.h"
#include "core/mathx.h"
#include "fixtures.h"
#include "io/config.h"
#include "io/h5.h"
#include "mesh/tetmesh.h"
#include "muscle/softbody.h"
#include "settings/muscle_run.h"
#include "sim/fluid.h"
#include "sim/sim.h"
#include "test.h"

static char out[16384];

/* the drag on the triangle (0,0,0), (2,0,0), (0,1,1): area-weighted normal (0, -1, 1), area
   sqrt 2, every corner moving at v, in a fluid flowing at flow */
static sc_vec3 triangle_drag(const sc_fluid_opts *o, sc_vec3 v, double corner[3][3])
{
    const double p[9] = {0, 0, 0, 2, 0, 0, 0, 1, 1}, pv[9] = {v.x, v.y, v.z, v.x, v.y, v.z, v.x, v.y, v.z};
    const int tri[3] = {0, 1, 2};
    double pf[9] = {0};
    sc_vec3 total;
    sc_fluid_forces(o, 1, tri, p, pv, pf, &total);
    if (corner) memcpy(corner, pf, sizeof pf);
    return total;
}

TEST(fluid_drag_triangle_by_hand_and_c1)
{
    /* zeta = rho C_d / 2 = 1000 * 0.8 / 2 = 400; f = -zeta max(n.u, 0)^2 n / |n|^2, n = (0, -1, 1), |n|^2 = 2 */
    sc_fluid_opts o = {1000, 0.8, {0, 0, -1}};
    static const struct {
        double v[3], f[3]; /* the corners' velocity (the fluid flows at (0, 0, -1)); the force by hand */
    } cases[] = {
        {{0, 0, 0}, {0, 200, -200}},       /* u = (0, 0, 1): n.u = 1, f = -400 * 1 / 2 * n */
        {{3, -1, -0.5}, {0, 450, -450}},   /* u = (3, -1, 0.5): n.u = 1.5, f = -400 * 2.25 / 2 * n; u's tangential part does nothing */
        {{0, 1, -2}, {0, 0, 0}},           /* u = (0, 1, -1): n.u = -2, the face moves away from the fluid */
        {{1, 0, -1}, {0, 0, 0}},           /* u = (1, 0, 0): n.u = 0, tangential */
        {{0, -0.25, -0.75}, {0, 50, -50}}, /* u = (0, -0.25, 0.25): n.u = 0.5, half the normal speed, a quarter of the force */
    };
    double worst = 0, corner_err = 0;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        double corner[3][3];
        const sc_vec3 f = triangle_drag(&o, sc_v3_load(cases[k].v), corner);
        worst = fmax(worst, sc_v3_norm(sc_v3_sub(f, sc_v3_load(cases[k].f))));
        for (int c = 0; c < 3; c++)
            for (int a = 0; a < 3; a++) corner_err = fmax(corner_err, fabs(corner[c][a] - cases[k].f[a] / 3));
        ENSURE_MSG(worst < 1e-12, "case %zu: (%.17g %.17g %.17g)", k, f.x, f.y, f.z);
    }
    /* Yuksel's plain form by hand at u = (3, -1, 0.5): -zeta (n.u) u = -600 (3, -1, 0.5) */
    const sc_vec3 fy = sc_fluid_drag_yuksel(400, sc_v3(0, -1, 1), sc_v3(3, -1, 0.5));
    ENSURE(sc_v3_norm(sc_v3_sub(fy, sc_v3(-1800, 600, -300))) < 1e-12);
    /* the seam: u = u_t + s n^ with u_t = (2, 1, 1) along the face; one-sided difference
       quotients in s at 0. [P17]'s: both sides tend to 0 (C1); Yuksel's jump by zeta A |u_t|. */
    const sc_vec3 nh = sc_v3_normalize(sc_v3(0, -1, 1)), ut = sc_v3(2, 1, 1), n = sc_v3(0, -1, 1);
    const double kink = 400 * sqrt(2) * sc_v3_norm(ut);
    double jump[3], jump_y = 0, cont = 0;
    for (int e = 0; e < 3; e++) {
        const double h = pow(10, -3 - e);
        const sc_vec3 f0 = sc_fluid_drag(400, n, ut), fp = sc_fluid_drag(400, n, sc_v3_axpy(h, nh, ut)),
                      fm = sc_fluid_drag(400, n, sc_v3_axpy(-h, nh, ut));
        jump[e] = sc_v3_norm(sc_v3_sub(sc_v3_scale(sc_v3_sub(fp, f0), 1 / h), sc_v3_scale(sc_v3_sub(f0, fm), 1 / h)));
        cont = sc_v3_norm(sc_v3_sub(fp, fm)); /* at the last (smallest) step */
        const sc_vec3 y0 = sc_fluid_drag_yuksel(400, n, ut), yp = sc_fluid_drag_yuksel(400, n, sc_v3_axpy(h, nh, ut)),
                      ym = sc_fluid_drag_yuksel(400, n, sc_v3_axpy(-h, nh, ut));
        jump_y = sc_v3_norm(sc_v3_sub(sc_v3_scale(sc_v3_sub(yp, y0), 1 / h), sc_v3_scale(sc_v3_sub(y0, ym), 1 / h)));
    }
    sc_test_report("5 velocities against the hand computation: off by at most %.1e N, each corner a third to %.1e N; across n.u = 0 "
                   "(steps 1e-3, 1e-4, 1e-5 m/s): force jumps %.1e N at 1e-5, derivative jumps %.3g, %.3g, %.3g N s/m ([P17], "
                   "zeta A h = %.3g at 1e-3); Yuksel's jumps %.1f (zeta A |u_t| = %.1f)",
                   worst, corner_err, cont, jump[0], jump[1], jump[2], 400 * sqrt(2) * 1e-3, jump_y, kink);
    ENSURE(corner_err < 1e-12);
    ENSURE(cont < 1e-6);                                    /* zeta A h^2 = 5.7e-8 */
    ENSURE(jump[0] < 1 && jump[1] < 0.1 && jump[2] < 0.01); /* zeta A h: 0.57, 0.057, 0.0057 */
    ENSURE(fabs(jump_y - kink) < 1e-3 * kink);
}

/* sc_fixture_block's boundary faces as its fine surface (the fixture leaves it without
   triangles): the tet mesh's outward faces, renumbered as surface vertices (boundary nodes in
   node order, as the fixture lists them) */
static int block_surface(sc_model *m)
{
    sc_tetmesh tm = {m->nnodes, m->ntets, m->rest_pos, m->tets};
    int *faces = NULL, *vert = malloc(sizeof(int) * (size_t)m->nnodes);
    const int nf = sc_tetmesh_boundary(&tm, &faces, NULL);
    if (nf <= 0 || !vert) {
        free(faces);
        free(vert);
        return 0;
    }
    for (int i = 0, v = 0; i < m->nnodes; i++) {
        vert[i] = -1;
        if (v < m->nsurf_verts && !memcmp(m->surf_rest + 3 * v, m->rest_pos + 3 * i, 3 * sizeof(double))) vert[i] = v++;
    }
    for (int k = 0; k < 3 * nf; k++) faces[k] = vert[faces[k]];
    free(vert);
    free(m->surf_tris);
    m->surf_tris = faces;
    m->nsurf_tris = nf;
    return 1;
}

/* the block (4 x 4 x 4 nodes, 5 cm apart, 3.375 kg) in zero gravity with no ground, started at
   velocity v0, in the fluid o for `steps`; per 10 steps its velocity along x (momentum / mass)
   and energy (kinetic + elastic) into vx[] and e[] (steps / 10 + 1 each); the largest power the
   drag put in (sum over triangles of f . u, which must not be positive) into *power */
static int coast(const sc_fluid_opts *fl, double v0, int steps, double *vx, double *e, double *power, uint64_t *hash, sc_err *err)
{
    sc_model m;
    if (!sc_fixture_block(&m, 4, 0.05, 1e5) || !block_surface(&m)) return sc_fail(err, SC_EIO, "the block fixture failed");
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.gravity[1] = 0;
    o.contact.enabled = 0;
    o.plasticity = 0;
    o.damping = SC_DAMP_NONE; /* the drag alone takes energy away */
    o.fluid = *fl;
    sc_sim *s;
    int rc = sc_sim_create(&m, &o, &s, err);
    if (rc) {
        sc_model_free(&m);
        return rc;
    }
    const double zero[3] = {0, 0, 0}, vel[3] = {v0, 0, 0};
    sc_sim_translate(s, zero, vel);
    double *p = malloc(sizeof(double) * 3 * (size_t)m.nsurf_verts), *pv = malloc(sizeof(double) * 3 * (size_t)m.nsurf_verts);
    *power = -INFINITY;
    for (int k = 0; k <= steps && !rc; k++) {
        if (k % 10 == 0) {
            sc_sim_diag d;
            sc_sim_diagnostics(s, &d);
            vx[k / 10] = d.linear[0] / d.mass;
            e[k / 10] = d.kinetic + d.elastic;
        }
        if (sc_fluid_enabled(fl)) { /* the drag's power on the state about to step, triangle by triangle */
            sc_sim_surface(s, p);
            for (int i = 0; i < m.nsurf_verts; i++)
                for (int c = 0; c < 3; c++) {
                    const int *t = m.tets + 4 * m.surf_tet[i];
                    const double *w = m.surf_bary + 4 * i;
                    pv[3 * i + c] = w[0] * s->v[3 * t[0] + c] + w[1] * s->v[3 * t[1] + c] + w[2] * s->v[3 * t[2] + c] + w[3] * s->v[3 * t[3] + c];
                }
            for (int t = 0; t < m.nsurf_tris; t++) {
                const int tri[3] = {m.surf_tris[3 * t], m.surf_tris[3 * t + 1], m.surf_tris[3 * t + 2]};
                double f[9] = {0}, q[9], qv[9];
                const int loc[3] = {0, 1, 2};
                for (int c = 0; c < 9; c++) q[c] = p[3 * tri[c / 3] + c % 3], qv[c] = pv[3 * tri[c / 3] + c % 3] - fl->flow[c % 3];
                sc_fluid_opts still = *fl;
                memset(still.flow, 0, sizeof still.flow);
                sc_fluid_forces(&still, 1, loc, q, qv, f, NULL);
                double pw = 0;
                for (int c = 0; c < 9; c++) pw += f[c] * qv[c];
                *power = fmax(*power, pw);
            }
        }
        if (k < steps) rc = sc_sim_step(s, err);
    }
    if (hash) *hash = sc_hash_bytes(sc_hash_bytes(SC_HASH_INIT, s->x, 24 * (size_t)s->nn), s->v, 24 * (size_t)s->nn) ^ s->options_hash;
    free(p);
    free(pv);
    sc_sim_free(s);
    sc_model_free(&m);
    return rc;
}

TEST(fluid_block_coasts_and_drifts)
{
    enum { STEPS = 600 };                              /* 0.3 s */
    const double zeta_a_over_m = 500 * 0.0225 / 3.375; /* water, C_d 1: zeta A / m of the front face (15 x 15 cm) = 10/3 per m */
    double vx[STEPS / 10 + 1], e[STEPS / 10 + 1], power;
    sc_err err;
    /* still water: a rigid block would slow as v0 / (1 + k v0 t), losing energy all along */
    const sc_fluid_opts water = {1000, 1, {0, 0, 0}};
    ENSURE_OK(coast(&water, 1, STEPS, vx, e, &power, NULL, &err), &err);
    double rise = 0, off = 0;
    for (int k = 1; k <= STEPS / 10; k++) {
        rise = fmax(rise, e[k] - e[k - 1]);
        off = fmax(off, fabs(vx[k] - 1 / (1 + zeta_a_over_m * k * 10 * 0.5e-3)));
    }
    const double v_end = vx[STEPS / 10], e_lost = e[0] - e[STEPS / 10];
    /* a current of 1 m/s along x on the block at rest: it is carried along, v = kt / (1 + kt) */
    const sc_fluid_opts current = {1000, 1, {1, 0, 0}};
    double ux[STEPS / 10 + 1], ue[STEPS / 10 + 1], upower;
    ENSURE_OK(coast(&current, 0, STEPS, ux, ue, &upower, NULL, &err), &err);
    double uoff = 0, back = 0;
    for (int k = 1; k <= STEPS / 10; k++) {
        const double kt = zeta_a_over_m * k * 10 * 0.5e-3;
        uoff = fmax(uoff, fabs(ux[k] - kt / (1 + kt)));
        back = fmin(back, ux[k] - ux[k - 1]);
    }
    sc_test_report("block in still water from 1 m/s: %.4f m/s after 0.3 s (rigid closed form 0.5000), at most %.1e m/s off it; energy "
                   "%.4f -> %.4f J, the largest rise over 5 ms %.1e J; the drag's power never above %.1e W. In a 1 m/s current from "
                   "rest: %.4f m/s after 0.3 s (closed form 0.5000), at most %.1e m/s off",
                   v_end, off, e[0], e[STEPS / 10], rise, power, ux[STEPS / 10], uoff);
    ENSURE(rise <= 0 && e_lost > 0.7 * e[0]); /* 1.6875 J -> 0.42 J for a rigid block */
    ENSURE(power <= 0);
    ENSURE(off < 0.01 && fabs(v_end - 0.5) < 0.01);
    ENSURE(uoff < 0.01 && fabs(ux[STEPS / 10] - 0.5) < 0.01 && back >= 0);
}

TEST(fluid_dry_runs_unchanged_and_wet_runs_repeat)
{
    enum { STEPS = 200 };
    double vx[STEPS / 10 + 1], e[STEPS / 10 + 1], power;
    uint64_t dry, off, wet, wet2;
    sc_err err;
    /* no fluid (the defaults) against density 0 with a drag and a current set: the same bits, the same options hash */
    const sc_fluid_opts none = {0, 0, {0, 0, 0}}, zero_density = {0, 1, {1, 0, 0}}, water = {1000, 1, {0.2, 0, 0.1}};
    ENSURE_OK(coast(&none, 1, STEPS, vx, e, &power, &dry, &err), &err);
    ENSURE_OK(coast(&zero_density, 1, STEPS, vx, e, &power, &off, &err), &err);
    ENSURE_OK(coast(&water, 1, STEPS, vx, e, &power, &wet, &err), &err);
    ENSURE_OK(coast(&water, 1, STEPS, vx, e, &power, &wet2, &err), &err);
    sc_test_report("0.1 s of the coasting block: no fluid %016llx, density 0 %016llx; in water %016llx, again %016llx", (unsigned long long)dry,
                   (unsigned long long)off, (unsigned long long)wet, (unsigned long long)wet2);
    ENSURE(dry == off && wet == wet2 && wet != dry);
}

/* the boneless body ([T12]'s soft body, muscle-sim's): a 10 cm cube of 3 x 3 x 3 nodes at rest
   in a 1 m/s current, read from a muscle-sim config's `fluid` section */
TEST(fluid_carries_a_boneless_body)
{
    sc_model m;
    ENSURE(sc_fixture_column(&m, 3, 3, 3, 0.05, 1e5, 0.3));
    sc_cfg *cfg;
    sc_err err;
    sc_muscle_run_config rc;
    ENSURE_OK(sc_cfg_load_string("simulation: {gravity: [0, 0, 0]}\ncontact: {enabled: false}\nmuscle_control: {solver: none}\n"
                                 "fluid: {density: 1000, drag: 1, flow: [1, 0, 0]}\n",
                                 "fluid_letter.yaml", &cfg, &err),
              &err);
    ENSURE_OK(sc_muscle_run_read(cfg, &m, NULL, &rc, &err), &err);
    sc_softbody_opts o = rc.run.body;
    sc_muscle_run_config_free(&rc);
    sc_cfg_free(cfg);
    ENSURE(o.fluid.density == 1000 && o.fluid.drag == 1 && o.fluid.flow[0] == 1);
    o.contact.enabled = 0;
    sc_softbody *s;
    ENSURE_OK(sc_softbody_create(&m, NULL, &o, &s, &err), &err);
    double worst = 0, v = 0;
    sc_softbody_diag d;
    const double k = 500 * 0.01 / 1.0; /* zeta A / m: 10 x 10 cm upstream face, 1 kg */
    for (int i = 1; i <= 400; i++) {
        ENSURE_OK(sc_softbody_step(s, &err), &err);
        sc_softbody_diagnostics(s, &d);
        v = d.linear[0] / d.mass;
        const double kt = k * i * o.dt;
        worst = fmax(worst, fabs(v - kt / (1 + kt)));
    }
    sc_test_report("boneless 10 cm cube in a 1 m/s current: %.4f m/s after 0.2 s (rigid closed form 0.5000), at most %.1e m/s off", v, worst);
    ENSURE(worst < 0.01);
    sc_softbody_free(s);
    sc_model_free(&m);
}

/* simulate with `fluid: VALUE` on line 4: refused, naming that line (sc_test_simulate_refuses) */
static int fluid_refused(const char *ch, int k, const char *value, const char *want)
{
    char text[512], name[64];
    snprintf(text, sizeof text, "simulation: {duration: 0.01}\ncontroller: {type: hold}\n# under water\nfluid: %s\n", value);
    snprintf(name, sizeof name, "fluid_bad_%d.yaml", k);
    return sc_test_simulate_refuses(out, sizeof out, ch, name, text, 4, want);
}

TEST(fluid_config_errors)
{
    const char *ch = sc_fixture_michelin();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    static const struct {
        const char *fluid, *want;
    } bad[] = {
        {"{density: -1000}", "'fluid.density' = -1000 is outside"},
        {"{density: .nan}", "'fluid.density' must be a number, got '.nan'"},
        {"{density: 1000, drag: -0.5}", "'fluid.drag' = -0.5 is outside"},
        {"{density: 1000, drag: .inf}", "'fluid.drag' must be a number, got '.inf'"},
        {"{density: 1000, flow: [1, 0]}", "'fluid.flow' must be a list of 3 numbers, got 2"},
        {"{density: 1000, flow: [0, 0, .inf]}", ":4:37: 'fluid.flow[2]' must be a number, got '.inf'"},
        {"{density: 1000, flow: 1}", "'fluid.flow' must be a list of 3 numbers, got '1'"},
        {"{densty: 1000}", "unknown key 'densty' in 'fluid' (did you mean 'density'?)"},
        {"1000", "'fluid' must be a mapping"},
    };
    char said[4096] = "";
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        ENSURE_MSG(fluid_refused(ch, (int)k, bad[k].fluid, bad[k].want), "fluid %s: %s", bad[k].fluid, out);
        const char *msg = strstr(out, ".yaml:4:");
        snprintf(said + strlen(said), sizeof said - strlen(said), "\n      %.*s", (int)strcspn(msg, "\n"), msg);
    }
    sc_test_report("%zu bad fluid sections: exit 2 naming line 4, no output:%s", sizeof bad / sizeof *bad, said);
    /* a good one runs under water, and the resolved config keeps it */
    const char *cfg =
        sc_test_write("fluid_ok.yaml", "simulation: {duration: 0.01}\ncontroller: {type: hold}\nfluid: {density: 1000, flow: [0.5, 0, 0]}\n");
    const char *o = sc_test_tmp("fluid_ok.h5");
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("simulate"), cfg, o, ch);
    ENSURE_MSG(rc == 0, "exit %d: %s", rc, out);
    sc_h5 *f;
    sc_err err;
    char *resolved = NULL;
    ENSURE_OK(sc_h5_open(o, &f, &err), &err);
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "config", &resolved, &err), &err);
    double fluid_s = -1;
    ENSURE_OK(sc_h5_read_attr_f64(f, "/timing", "mean_fluid_s", &fluid_s, &err), &err);
    sc_h5_close(f);
    sc_test_report("in water (0.5 m/s current): ran, the drag %.1f us a step", 1e6 * fluid_s);
    int kept = strstr(resolved, "fluid") && strstr(resolved, "drag: 1");
    free(resolved);
    ENSURE(kept);
}

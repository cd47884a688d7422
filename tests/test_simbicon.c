/* [J11]'s rigid contact model and SIMBICON (Yin 2007) on the CMU-skeleton Michelin: the rigid
 * character carries its weight, the state machine switches where it should, the walker walks on
 * rigid and soft contact, the same run twice is bit-identical, and bad configs exit 2. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fixtures.h"
#include "sampling/rollout.h"
#include "settings/scenario.h"
#include "settings/simbicon.h"
#include "simbicon/simbicon.h"
#include "sim/sim.h"
#include "store/character.h"
#include "test.h"

static char out[16384];

static void load(sc_model *m)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    sc_err err = {0};
    ENSURE_OK(sc_character_read(ch, m, 0, &err), &err);
}

/* Both shapes of a rigid bone (the box bounding its skin, its skin's vertices) carry the body at
 * rest on its soles, at the same height: the soles are flat where they touch */
TEST(rigid_contact_carries_the_weight)
{
    sc_model m;
    sc_err err = {0};
    load(&m);
    double pelvis_y[2];
    for (int shape = SC_RIGID_BOX; shape <= SC_RIGID_SKIN; shape++) {
        sc_sim_opts o;
        sc_sim_default_opts(&o);
        o.contact_model = SC_CONTACT_RIGID;
        o.rigid_shape = shape;
        sc_sim *s;
        ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
        const double lift[3] = {0, 0.01, 0}, still[3] = {0, 0, 0};
        sc_sim_translate(s, lift, still); /* dropped from 1 cm */
        for (long k = 0; k < 6000; k++) ENSURE_OK(sc_sim_step(s, &err), &err);
        sc_sim_diag d;
        sc_sim_diagnostics(s, &d);
        const double weight = d.mass * 9.81;
        double total = 0;
        for (int i = 0; i < m.nnodes; i++) total += m.node_mass[i];
        double cop[3];
        sc_contact_cop(&s->contact, cop);
        const double fy = d.contact_force[1], fh = hypot(d.contact_force[0], d.contact_force[2]);
        pelvis_y[shape] = s->pose[0].p.y;
        sc_test_report("rigid %s, 3 s after a 1 cm drop: mass %.3f kg (flesh %.3f kg), ground force %.2f N against the weight %.2f N (%.4f %%), "
                       "sideways %.3g N, %d contacts, penetration %.2g m, momentum %.2g kg m/s, centre of pressure (%.3f, %.3f, %.3f), pelvis at "
                       "%.4f m",
                       shape == SC_RIGID_BOX ? "box" : "skin", d.mass, total, fy, weight, 100 * (fy / weight - 1), fh, d.contacts,
                       s->contact.max_depth, hypot(d.linear[0], hypot(d.linear[1], d.linear[2])), cop[0], cop[1], cop[2], pelvis_y[shape]);
        /* the flesh's whole mass is lumped into the bones, and the ground carries it */
        ENSURE(fabs(d.mass - total) < 1e-9 * total);
        ENSURE(fabs(fy / weight - 1) < 2e-3 && fh < 5e-3 * weight);
        ENSURE(d.contacts >= 6 && s->contact.max_depth < 1e-3);
        ENSURE(hypot(d.linear[0], hypot(d.linear[1], d.linear[2])) < 5e-3 * d.mass); /* 5 mm/s */
        /* the centre of pressure lies between the feet */
        const int lf = sc_model_bone_index(&m, "l_foot"), rf = sc_model_bone_index(&m, "r_foot");
        ENSURE(cop[0] > s->pose[rf].p.x && cop[0] < s->pose[lf].p.x && fabs(cop[1]) < 1e-3);
        sc_sim_free(s);
    }
    ENSURE(fabs(pelvis_y[SC_RIGID_SKIN] - pelvis_y[SC_RIGID_BOX]) < 2e-3);
    /* contact.enabled: false takes the ground away, as for the soft model: 0.1 s of free fall */
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.contact_model = SC_CONTACT_RIGID;
    o.contact.enabled = 0;
    sc_sim *s;
    sc_sim_diag d;
    ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
    for (long k = 0; k < 200; k++) ENSURE_OK(sc_sim_step(s, &err), &err);
    sc_sim_diagnostics(s, &d);
    ENSURE(d.contacts == 0 && fabs(d.linear[1] / d.mass + 9.81 * 0.1) < 1e-6);
    sc_sim_free(s);
    sc_model_free(&m);
}

typedef struct {
    sc_simbicon *c;
    const sc_sim *s;
    int state, stance, switches, bad;
    double state_start;
    char why[256];
} fsm_watch;

/* Checks every transition of the state machine as it happens: state 0 lasts its duration,
   state 1 ends in the first step whose last contact has the swing foot down, and the legs swap. */
static int watch(void *ctx, const sc_sim *s, const sc_quat *targets, const double push[3])
{
    (void)targets;
    (void)push;
    fsm_watch *w = ctx;
    const sc_simbicon *c = w->c;
    if (c->state == w->state && c->stance == w->stance) {
        if (w->state == 1 && sc_sim_bone_touches(s, c->foot[1 - c->stance]) && !w->bad) {
            w->bad = 1;
            snprintf(w->why, sizeof w->why, "t = %.4f s: swing foot down in state 1 without a switch", s->t);
        }
        return 0;
    }
    const double held = s->t - w->state_start;
    if (w->state == 0 && !(c->state == 1 && c->stance == w->stance && fabs(held - c->p.state[0].duration) < 0.6e-3) && !w->bad) {
        w->bad = 1;
        snprintf(w->why, sizeof w->why, "t = %.4f s: state 0 ended after %.4f s", s->t, held);
    }
    if (w->state == 1 && !(c->state == 0 && c->stance != w->stance && sc_sim_bone_touches(s, w->c->foot[c->stance])) && !w->bad) {
        w->bad = 1;
        snprintf(w->why, sizeof w->why, "t = %.4f s: state 1 ended without the swing foot down", s->t);
    }
    w->state = c->state;
    w->stance = c->stance;
    w->state_start = s->t;
    w->switches++;
    return 0;
}

/* The walker of configs/simbicon/NAME.yaml (its contact model and options) for `seconds`, in *made. */
static void walk(const sc_model *loaded, const char *name, double seconds, sc_simbicon *c, fsm_watch *w, sc_model *m, sc_sim **made)
{
    sc_err err = {0};
    sc_cfg *cfg;
    sc_cfg_node *ctl;
    char path[256];
    snprintf(path, sizeof path, "configs/simbicon/%s.yaml", name);
    ENSURE_OK(sc_cfg_load_file(sc_test_repo(path), &cfg, &err), &err);
    sc_scenario sc;
    ENSURE_OK(sc_scenario_read(cfg, loaded, &sc, &err), &err);
    ENSURE_OK(sc_cfg_section(sc_cfg_root(cfg), "controller", &ctl, &err), &err);
    sc_simbicon_params p;
    ENSURE_OK(sc_simbicon_read(ctl, &p, &err), &err);
    sc_cfg_free(cfg);
    ENSURE_OK(sc_simbicon_init(c, loaded, &p, &err), &err);
    ENSURE_OK(sc_model_clone(loaded, m, &err), &err);
    ENSURE_OK(sc_simbicon_set_gains(&p, m, &err), &err);
    sc_sim *s;
    ENSURE_OK(sc_sim_create(m, &sc.sim, &s, &err), &err);
    ENSURE_OK(sc_simbicon_start(c, s, sc.drop_height, sc.init_vel, &err), &err);
    ENSURE_OK(sc_sim_settle(s, &err), &err);
    *w = (fsm_watch){c, s, c->state, c->stance, 0, 0, s->t, ""};
    sc_quat *targets = malloc((size_t)m->nbones * sizeof *targets);
    sc_rollout_result res;
    *made = s;
    ENSURE_OK(sc_rollout(s, sc_simbicon_source(c), NULL, lround(seconds / sc.sim.dt), watch, w, targets, &res, &err), &err);
    free(targets);
}

TEST(simbicon_switches_on_touchdown_and_walks_rigid)
{
    sc_model loaded, m1, m2;
    load(&loaded);
    sc_simbicon c1, c2;
    fsm_watch w1, w2;
    sc_sim *a, *b;
    walk(&loaded, "walk_rigid", 6, &c1, &w1, &m1, &a);
    walk(&loaded, "walk_rigid", 6, &c2, &w2, &m2, &b);
    sc_sim_diag d;
    sc_sim_diagnostics(a, &d);
    const size_t cap = sc_sim_snapshot_capacity(a);
    void *sa = malloc(cap), *sb = malloc(cap);
    const size_t na = sc_sim_snapshot_save(a, sa, cap), nb = sc_sim_snapshot_save(b, sb, cap);
    sc_test_report("rigid SIMBICON, 6 s: %ld foot strikes, %d state switches, centre of mass at (%.3f, %.3f, %.3f) m (%.2f m/s forward); "
                   "a second run %s",
                   c1.steps, w1.switches, d.com[0], d.com[1], d.com[2], d.linear[2] / d.mass,
                   na == nb && !memcmp(sa, sb, na) ? "bit-identical" : "DIFFERS");
    ENSURE_MSG(!w1.bad, "%s", w1.why);
    ENSURE(c1.steps >= 8 && w1.switches == 2 * c1.steps + (c1.state == 1));
    ENSURE(d.com[2] > 1.5 && d.com[1] > 0.7 && fabs(d.com[0]) < 0.5); /* walks forward, upright, near its line */
    ENSURE(na > 0 && na == nb && !memcmp(sa, sb, na));
    free(sa);
    free(sb);
    sc_sim_free(a);
    sc_sim_free(b);
    sc_simbicon_free(&c1);
    sc_simbicon_free(&c2);
    sc_model_free(&m1);
    sc_model_free(&m2);
    sc_model_free(&loaded);
}

/* 3 s of configs/simbicon/CONFIG.yaml on a character: every state switch checked as it happens,
   at least 4 foot strikes and 0.8 m forward; the end state in *d for the caller's checks. */
static void walk_3s(const sc_model *loaded, const char *config, const char *body, sc_sim_diag *d, int *ntets)
{
    sc_model m;
    sc_simbicon c;
    fsm_watch w;
    sc_sim *s;
    walk(loaded, config, 3, &c, &w, &m, &s);
    sc_sim_diagnostics(s, d);
    *ntets = m.ntets;
    sc_test_report("%s, %s.yaml, 3 s: %ld foot strikes, centre of mass at (%.3f, %.3f, %.3f) m, %d of %d tets inverted", body, config, c.steps,
                   d->com[0], d->com[1], d->com[2], d->inverted, m.ntets);
    ENSURE_MSG(!w.bad, "%s: %s", config, w.why);
    ENSURE(c.steps >= 4 && d->com[2] > 0.8);
    sc_sim_free(s);
    sc_simbicon_free(&c);
    sc_model_free(&m);
}

/* [J11]: "control strategies, model coefficients and numerical parameters all remain intact" */
TEST(simbicon_unchanged_walks_on_soft_contact)
{
    sc_model loaded;
    load(&loaded);
    static const char *const configs[2] = {"walk_softlayer", "walk_soft"};
    for (int k = 0; k < 2; k++) {
        sc_sim_diag d;
        int ntets;
        walk_3s(&loaded, configs[k], "CMU Michelin", &d, &ntets);
        ENSURE(d.com[1] > 0.7 && d.inverted < 0.01 * ntets);
    }
    sc_model_free(&loaded);
}

/* The same configs on other bodies: the built-in Michelin (92 kg, longer legs, its own mesh) and
 * the SIMBICON-sized biped (86 kg, 15 bones, a coarse mesh), which walks on all three models */
TEST(simbicon_walks_other_bodies)
{
    static const struct {
        const char *(*fixture)(void), *name;
        int nconfigs;
    } bodies[] = {{sc_fixture_michelin, "built-in Michelin", 2}, {sc_fixture_biped, "biped", 3}};
    static const char *const configs[3] = {"walk_rigid", "walk_softlayer", "walk_soft"};
    for (int b = 0; b < 2; b++) {
        const char *ch = bodies[b].fixture();
        ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
        sc_model loaded;
        sc_err err = {0};
        ENSURE_OK(sc_character_read(ch, &loaded, 0, &err), &err);
        for (int k = 0; k < bodies[b].nconfigs; k++) {
            sc_sim_diag d;
            int ntets;
            walk_3s(&loaded, configs[k], bodies[b].name, &d, &ntets);
            ENSURE_MSG(d.com[1] > 0.75 && fabs(d.com[0]) < 0.3 && d.inverted <= 0.01 * ntets,
                       "%s on the %s after 3 s: centre of mass at (%.3f, %.3f, %.3f) m, %d tets inverted", configs[k], bodies[b].name, d.com[0],
                       d.com[1], d.com[2], d.inverted);
        }
        sc_model_free(&loaded);
    }
}

TEST(simbicon_bad_configs_exit_2)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    static const struct {
        const char *simbicon, *want;
    } bad[] = {
        {"{bones: {left: [l_thigh, l_shin, l_toe, l_upperarm]}}", "the left foot bone 'l_toe' is not a bone"},
        {"{bones: {left: [l_thigh, l_shin]}}", "4 bone names, not 2"},
        {"{bones: {right: [r_thigh, r_foot, r_shin, r_upperarm]}}", "must be a hinge"},
        {"{states: [{duration: 0.3}]}", "the 2 states of a step"},
        {"{states: [{duration: 0}, {duration: 0}]}", "'controller.simbicon.states[0].duration' = 0 is outside"},
        {"{states: [{duration: 0.3, swing_hips: 0.5}, {}]}", "unknown key 'swing_hips'"},
        {"{gains: {l_foot: [300, 0]}}", "kd must be > 0"},
        {"{gains: {l_toe: [300, 30]}}", "'l_toe', which is not a bone"},
        {"{forward: [0, 1, 0]}", "forward must be horizontal"},
    };
    char text[512];
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        snprintf(text, sizeof text, "simulation: {duration: 0.01}\ncontact: {model: rigid}\ncontroller:\n  type: simbicon\n  simbicon: %s\n",
                 bad[k].simbicon);
        const char *cfg = sc_test_write("simbicon_bad.yaml", text), *o = sc_test_tmp("simbicon_bad.h5");
        int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s", sc_test_tool("simulate"), cfg, o, ch);
        ENSURE_MSG(rc == 2 && strstr(out, "simbicon_bad.yaml") && strstr(out, bad[k].want) && !sc_test_file_exists(o), "simbicon %s: exit %d: %s",
                   bad[k].simbicon, rc, out);
    }
    sc_test_report("%zu bad controller.simbicon: exit 2 naming the config, no output; e.g. %s", sizeof bad / sizeof *bad, out);
    /* the soft layer's and the motor noise's keys */
    static const struct {
        const char *yaml, *want;
    } keys[] = {
        {"contact: {model: layer, layer: {bones: [l_foot, l_toe]}}", "contact.layer.bones: 'l_toe' is not a bone"},
        {"contact: {model: layer, layer: {bones: []}}", "contact.layer.bones is empty"},
        {"contact: {model: layer, layer: {thickness: -0.01}}", "'contact.layer.thickness' = -0.01 is outside"},
        {"contact: {model: lcp}", "lcp"},
        {"contact: {model: rigid, rigid: {shape: ball}}", "ball"},
        {"simulation: {duration: 0.01, motor_noise: {b: -75}}", "'simulation.motor_noise.b' = -75 is outside"},
    };
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        snprintf(text, sizeof text, "%s\ncontroller: {type: hold}\n", keys[k].yaml);
        const char *cfg = sc_test_write("layer_bad.yaml", text), *o = sc_test_tmp("layer_bad.h5");
        int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s", sc_test_tool("simulate"), cfg, o, ch);
        ENSURE_MSG(rc == 2 && strstr(out, "layer_bad.yaml:1") && strstr(out, keys[k].want) && !sc_test_file_exists(o), "%s: exit %d: %s",
                   keys[k].yaml, rc, out);
    }
    sc_test_report("%zu bad contact.layer / contact.rigid / motor_noise keys: exit 2 naming the line; e.g. %s", sizeof keys / sizeof *keys, out);
}

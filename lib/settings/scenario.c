/* The scenario's config sections, one reader per section, in the order the keys are read (the
 * resolved config lists the defaults in that order). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "settings/scenario.h"
#include "settings/world.h"

#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)

/* simulation.motor_noise: {b, seed} (Wang et al. 2010; [J11] 6 uses b = 75) */
static int read_motor_noise(sc_cfg_node *sim, sc_motor_noise_opts *n, sc_err *err)
{
    sc_cfg_node *noise;
    long seed;
    int rc;
    TRY(sc_cfg_section(sim, "motor_noise", &noise, err));
    TRY(sc_cfg_double_range(noise, "b", 0, 0, 1e4, &n->b, err));
    TRY(sc_cfg_int(noise, "seed", 1, 0, LONG_MAX, &seed, err));
    n->seed = (uint64_t)seed;
    return SC_OK;
}

static int read_simulation(sc_cfg *cfg, const sc_model *m, sc_scenario *sc, sc_err *err)
{
    sc_cfg_node *sim, *ray;
    sc_sim_opts *so = &sc->sim;
    static const char *const damping[] = {"pose", "rayleigh", "none"}, *const solvers[] = {"quick", "exact"}, *const poses[] = {"rest", "reference"},
                             *const precisions[] = {"double", "single"};
    int solver, rc;
    long iters;
    double zero3[3] = {0, 0, 0};
    TRY(sc_cfg_section(sc_cfg_root(cfg), "simulation", &sim, err));
    TRY(sc_cfg_double_range(sim, "duration", 0, 0, 1e5, &sc->duration, err));
    TRY(sc_cfg_double_range(sim, "dt", 0.5e-3, 1e-6, 0.05, &so->dt, err));
    TRY(sc_world_read_gravity(cfg, so->gravity, err));
    TRY(sc_cfg_bool(sim, "plasticity", 1, &so->plasticity, err));
    TRY(sc_cfg_enum(sim, "fem_precision", precisions, 2, 0, &so->fem_single, err));
    TRY(sc_cfg_enum(sim, "damping", damping, 3, SC_DAMP_POSE, &so->damping, err));
    TRY(sc_cfg_double_range(sim, "pose_damping", so->pose_damping, 0, 1e5, &so->pose_damping, err));
    TRY(sc_cfg_section(sim, "rayleigh", &ray, err));
    TRY(sc_cfg_double_range(ray, "alpha", so->rayleigh_alpha, 0, 1e5, &so->rayleigh_alpha, err));
    TRY(sc_cfg_double_range(ray, "beta", so->rayleigh_beta, 0, 10, &so->rayleigh_beta, err));
    TRY(sc_cfg_enum(sim, "solver", solvers, 2, so->skeleton.exact_solver, &solver, err));
    TRY(sc_cfg_int(sim, "iterations", so->skeleton.iterations, 1, 10000, &iters, err));
    TRY(sc_cfg_double_range(sim, "max_speed", so->max_speed, 1e-3, 1e6, &so->max_speed, err));
    TRY(sc_cfg_double_range(sim, "max_inverted", so->max_inverted, 0, 1, &so->max_inverted, err));
    TRY(sc_cfg_double_range(sim, "drop_height", 0, -10, 100, &sc->drop_height, err));
    TRY(sc_cfg_vec_range(sim, "initial_velocity", 3, zero3, -1e3, 1e3, sc->init_vel, err));
    TRY(sc_cfg_enum(sim, "initial_pose", poses, 2, SC_START_REST, &sc->initial_pose, err));
    TRY(sc_cfg_double_range(sim, "settle", 0, 0, 10, &so->settle, err));
    TRY(sc_cfg_double_range(sim, "youngs_modulus", m->youngs, 1, 1e12, &sc->youngs, err));
    TRY(read_motor_noise(sim, &so->motor_noise, err));
    TRY(sc_cfg_double_range(sim, "poisson_ratio", m->poisson, 0, 0.4999, &sc->poisson, err));
    so->skeleton.exact_solver = solver == 1;
    so->skeleton.iterations = (int)iters;
    return SC_OK;
}

/* contact.layer: its thickness and bones (default: the leaf bones, hands, feet and head) */
static int read_layer(sc_cfg_node *con, const sc_model *m, sc_layer_opts *l, sc_err *err)
{
    sc_cfg_node *layer, *list;
    char w[256];
    int rc;
    TRY(sc_cfg_section(con, "layer", &layer, err));
    TRY(sc_cfg_double_range(layer, "thickness", 0.03, 1e-4, 1, &l->thickness, err));
    TRY(sc_cfg_list(layer, "bones", 0, &list, err));
    l->bones = 0;
    if (!list) {
        int leaves[SC_SIM_MAX_BONES];
        const int n = m->nbones <= SC_SIM_MAX_BONES ? sc_model_leaf_bones(m, leaves) : 0;
        for (int i = 0; i < n; i++) l->bones |= 1ull << leaves[i];
        return SC_OK;
    }
    for (int i = 0; i < sc_cfg_len(list); i++) {
        const sc_cfg_node *e = sc_cfg_at(list, i);
        const char *name = sc_cfg_scalar(e);
        const int b = name ? sc_model_bone_index(m, name) : -1;
        if (b < 0 || b >= SC_SIM_MAX_BONES)
            return sc_fail(err, SC_EINPUT, "%s: contact.layer.bones: '%s' is not a bone of the character", sc_cfg_where(e, w, sizeof w),
                           name ? name : "(not a name)");
        l->bones |= 1ull << b;
    }
    if (!l->bones) return sc_fail(err, SC_EINPUT, "%s: contact.layer.bones is empty", sc_cfg_where(list, w, sizeof w));
    return SC_OK;
}

static int read_contact(sc_cfg *cfg, const sc_model *m, sc_sim_opts *so, sc_err *err)
{
    sc_cfg_node *con;
    int rc;
    static const char *const models[] = {"soft", "rigid", "layer"}, *const shapes[] = {"box", "skin"};
    sc_cfg_node *rigid;
    TRY(sc_cfg_section(sc_cfg_root(cfg), "contact", &con, err));
    TRY(sc_cfg_bool(con, "enabled", 1, &so->contact.enabled, err));
    TRY(sc_cfg_enum(con, "model", models, 3, SC_CONTACT_SOFT, &so->contact_model, err));
    if (so->contact_model == SC_CONTACT_LAYER || sc_cfg_get(con, "layer")) TRY(read_layer(con, m, &so->layer, err));
    TRY(sc_cfg_section(con, "rigid", &rigid, err));
    TRY(sc_cfg_double_range(rigid, "erp", so->rigid.erp, 0, 1, &so->rigid.erp, err));
    TRY(sc_cfg_double_range(rigid, "cfm", so->rigid.cfm, 0, 1, &so->rigid.cfm, err));
    TRY(sc_cfg_double_range(rigid, "spacing", so->rigid.spacing, 0, 1, &so->rigid.spacing, err));
    TRY(sc_cfg_enum(rigid, "shape", shapes, 2, SC_RIGID_BOX, &so->rigid_shape, err));
    TRY(sc_cfg_double_range(con, "stiffness", so->contact.stiffness, 0, 1e9, &so->contact.stiffness, err));
    TRY(sc_cfg_double_range(con, "damping", so->contact.damping, 0, 1e7, &so->contact.damping, err));
    TRY(sc_world_read_friction(cfg, &so->contact.mu, err));
    TRY(sc_cfg_double_range(con, "tangent_stiffness", so->contact.tangent_stiffness, 0, 1e9, &so->contact.tangent_stiffness, err));
    TRY(sc_cfg_double_range(con, "tangent_damping", so->contact.tangent_damping, 0, 1e7, &so->contact.tangent_damping, err));
    return SC_OK;
}

/* ground.tiles ([J11] 6's bumpy floor): absent (no tiles, nothing recorded), or a size with a
 * height no larger (slopes of at most 1 along a cell's edge) and a seed */
static int read_tiles(sc_cfg_node *gr, sc_ground *g, sc_err *err)
{
    sc_cfg_node *t;
    char w[256];
    long seed;
    int rc;
    g->tile_size = g->tile_height = 0;
    g->tile_seed = 0;
    if (!sc_cfg_get(gr, "tiles")) return SC_OK;
    TRY(sc_cfg_section(gr, "tiles", &t, err));
    if (!sc_cfg_get(t, "size")) return sc_fail(err, SC_EINPUT, "%s: ground.tiles needs a size (m, the tiles' edge)", sc_cfg_where(t, w, sizeof w));
    TRY(sc_cfg_double_range(t, "size", 0, 1e-3, 100, &g->tile_size, err));
    TRY(sc_cfg_double_range(t, "height", 0.02, 0, 10, &g->tile_height, err));
    TRY(sc_cfg_int(t, "seed", 1, 0, LONG_MAX, &seed, err));
    g->tile_seed = (uint64_t)seed;
    if (g->tile_height > g->tile_size) {
        sc_cfg_node *h = sc_cfg_get(t, "height");
        return sc_fail(err, SC_EINPUT, "%s: ground.tiles.height = %g m is larger than ground.tiles.size = %g m (slopes up to 1)",
                       sc_cfg_where(h ? h : t, w, sizeof w), g->tile_height, g->tile_size);
    }
    if (g->tile_height == 0) { /* level tiles: the flat floor, with its hash */
        g->tile_size = 0;
        g->tile_seed = 0;
    }
    return SC_OK;
}

/* ground.boxes: obstacles, each {min: [x, y, z], max: [x, y, z]} (world, m), min below max. */
static int read_boxes(sc_cfg_node *gr, sc_ground *g, sc_err *err)
{
    sc_cfg_node *list;
    char w[256];
    int rc;
    g->nboxes = 0;
    TRY(sc_cfg_list(gr, "boxes", 0, &list, err));
    if (!list) return SC_OK;
    if (sc_cfg_len(list) > SC_GROUND_MAX_BOXES)
        return sc_fail(err, SC_EINPUT, "%s: ground.boxes: %d boxes, at most %d", sc_cfg_where(list, w, sizeof w), sc_cfg_len(list),
                       SC_GROUND_MAX_BOXES);
    for (int b = 0; b < sc_cfg_len(list); b++) {
        sc_cfg_node *e = sc_cfg_at(list, b);
        if (!sc_cfg_is_map(e))
            return sc_fail(err, SC_EINPUT, "%s: ground.boxes[%d]: a map {min: [x, y, z], max: [x, y, z]}", sc_cfg_where(e, w, sizeof w), b);
        TRY(sc_cfg_vec_range(e, "min", 3, NULL, -1e4, 1e4, g->box_lo[b], err));
        TRY(sc_cfg_vec_range(e, "max", 3, NULL, -1e4, 1e4, g->box_hi[b], err));
        for (int a = 0; a < 3; a++)
            if (!(g->box_hi[b][a] > g->box_lo[b][a]))
                return sc_fail(err, SC_EINPUT, "%s: ground.boxes[%d]: max[%d] = %g m is not above min[%d] = %g m", sc_cfg_where(e, w, sizeof w), b, a,
                               g->box_hi[b][a], a, g->box_lo[b][a]);
        g->nboxes = b + 1;
    }
    return SC_OK;
}

int sc_ground_read(sc_cfg_node *root, sc_ground *g, sc_err *err)
{
    sc_cfg_node *gr, *bumps;
    double slope, height;
    int rc;
    TRY(sc_cfg_section(root, "ground", &gr, err));
    TRY(sc_cfg_double_range(gr, "slope", 0, -80, 80, &slope, err));
    TRY(sc_cfg_double_range(gr, "height", 0, -100, 100, &height, err));
    TRY(sc_cfg_section(gr, "bumps", &bumps, err));
    TRY(sc_cfg_double_range(bumps, "height", 0, 0, 10, &g->bump_height, err));
    TRY(sc_cfg_double_range(bumps, "wavelength", 1, 1e-3, 1e3, &g->bump_length, err));
    if (g->bump_height == 0) g->bump_length = 0;
    TRY(read_tiles(gr, g, err));
    TRY(read_boxes(gr, g, err));
    /* a slope tilts the ground about z: it rises along +x */
    double a = slope * SC_PI / 180;
    g->normal = sc_v3(-sin(a), cos(a), 0);
    g->offset = height * cos(a);
    return SC_OK;
}

int sc_fluid_read(sc_cfg_node *root, sc_fluid_opts *f, sc_err *err)
{
    sc_cfg_node *fl;
    const double still[3] = {0, 0, 0};
    int rc;
    memset(f, 0, sizeof *f);
    if (!sc_cfg_get(root, "fluid")) return SC_OK; /* no fluid, and nothing recorded: the resolved configs of dry runs stay as they were */
    TRY(sc_cfg_section(root, "fluid", &fl, err));
    TRY(sc_cfg_double_range(fl, "density", 0, 0, 1e5, &f->density, err));
    TRY(sc_cfg_double_range(fl, "drag", 1, 0, 1e3, &f->drag, err));
    TRY(sc_cfg_vec_range(fl, "flow", 3, still, -1e3, 1e3, f->flow, err));
    return SC_OK;
}

static int read_perturbation(sc_cfg_node *e, const sc_model *m, sc_perturbation *p, sc_err *err)
{
    static const char *const kinds[] = {"push", "velocity"};
    char bone[SC_NAME_LEN], w[256];
    int rc;
    if (!sc_cfg_is_map(e)) return sc_fail(err, SC_EINPUT, "%s: a perturbation is a map", sc_cfg_where(e, w, sizeof w));
    TRY(sc_cfg_enum(e, "type", kinds, 2, -1, &p->kind, err));
    TRY(sc_cfg_double_range(e, "time", 0, 0, 1e6, &p->time, err));
    if (p->kind == SC_PERTURB_PUSH) {
        TRY(sc_cfg_string(e, "bone", NULL, bone, sizeof bone, err));
        TRY(sc_cfg_double_range(e, "duration", 0.1, 0, 1e6, &p->duration, err));
        TRY(sc_cfg_vec_range(e, "force", 3, NULL, -1e6, 1e6, p->v, err));
        p->bone = sc_model_bone_index(m, bone);
        if (p->bone < 0)
            return sc_fail(err, SC_EINPUT, "%s: '%s' is not a bone of the character", sc_cfg_where(sc_cfg_get(e, "bone"), w, sizeof w), bone);
        static const char *const frames[] = {"world", "heading"};
        TRY(sc_cfg_enum(e, "frame", frames, 2, SC_FRAME_WORLD, &p->frame, err));
        sc_cfg_node *ph = sc_cfg_get(e, "phase");
        if (ph) {
            if (sc_cfg_get(e, "time"))
                return sc_fail(err, SC_EINPUT, "%s: a push starts at a time or at a phase, not both", sc_cfg_where(ph, w, sizeof w));
            TRY(sc_cfg_double_range(e, "phase", 0, 0, 1, &p->phase, err));
            if (p->phase >= 1) /* [0, 1): phase 1 is the next cycle's 0 */
                return sc_fail(err, SC_EINPUT, "%s: phase %g is outside [0, 1) (the next cycle: cycle + 1, phase 0)", sc_cfg_where(ph, w, sizeof w),
                               p->phase);
            p->at_phase = 1;
            TRY(sc_cfg_int(e, "cycle", 0, 0, 1000000, &p->cycle, err));
        } else if (sc_cfg_get(e, "cycle")) {
            return sc_fail(err, SC_EINPUT, "%s: cycle needs a phase", sc_cfg_where(sc_cfg_get(e, "cycle"), w, sizeof w));
        }
    } else {
        TRY(sc_cfg_vec_range(e, "delta", 3, NULL, -1e3, 1e3, p->v, err));
    }
    return SC_OK;
}

int sc_scenario_read(sc_cfg *cfg, const sc_model *m, sc_scenario *sc, sc_err *err)
{
    sc_cfg_node *root = sc_cfg_root(cfg), *ctl, *out, *list;
    char w[256];
    int rc;
    long every;
    memset(sc, 0, sizeof *sc);
    sc_sim_default_opts(&sc->sim);
    TRY(read_simulation(cfg, m, sc, err));
    TRY(read_contact(cfg, m, &sc->sim, err));
    TRY(sc_ground_read(root, &sc->sim.contact.ground, err));
    TRY(sc_fluid_read(root, &sc->sim.fluid, err));
    TRY(sc_cfg_section(root, "controller", &ctl, err));
    TRY(sc_cfg_double_range(ctl, "kp_scale", 1, 0, 1e3, &sc->kp_scale, err));
    TRY(sc_cfg_double_range(ctl, "kd_scale", 1, 1e-6, 1e3, &sc->kd_scale, err));
    TRY(sc_cfg_double_range(ctl, "torque_limit_scale", 1, 0, 1e3, &sc->limit_scale, err));
    TRY(sc_cfg_list(root, "perturbations", 0, &list, err));
    for (int i = 0; list && i < sc_cfg_len(list); i++) {
        sc_cfg_node *e = sc_cfg_at(list, i);
        if (sc->pert.n == SC_MAX_PERTURBATIONS)
            return sc_fail(err, SC_EINPUT, "%s: at most %d perturbations", sc_cfg_where(e, w, sizeof w), SC_MAX_PERTURBATIONS);
        TRY(read_perturbation(e, m, &sc->pert.p[sc->pert.n++], err));
    }
    TRY(sc_cfg_section(root, "output", &out, err));
    TRY(sc_cfg_int(out, "every", 20, 1, 1000000, &every, err));
    TRY(sc_cfg_bool(out, "nodes", 1, &sc->store_nodes, err));
    sc->every = (int)every;
    return SC_OK;
}

int sc_scenario_check_pushes(sc_cfg *cfg, const sc_scenario *sc, int heading_ok, int phase_ok, const char *why, sc_err *err)
{
    sc_cfg_node *list = sc_cfg_get(sc_cfg_root(cfg), "perturbations");
    char w[256];
    for (int i = 0; list && i < sc->pert.n; i++) {
        const sc_perturbation *p = &sc->pert.p[i];
        sc_cfg_node *e = sc_cfg_at(list, i);
        if (p->at_phase && !phase_ok)
            return sc_fail(err, SC_EINPUT, "%s: a push at a phase of the gait cycle %s", sc_cfg_where(sc_cfg_get(e, "phase"), w, sizeof w), why);
        if (p->kind == SC_PERTURB_PUSH && p->frame == SC_FRAME_HEADING && !heading_ok)
            return sc_fail(err, SC_EINPUT, "%s: a push in the heading frame %s", sc_cfg_where(sc_cfg_get(e, "frame"), w, sizeof w), why);
    }
    return SC_OK;
}

/* muscle-sim's config (muscle_run.h). */
#include "settings/muscle_run.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "settings/scenario.h"
#include "settings/world.h"

#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)

static const char *const objective_types[] = {"momentum", "angular_momentum", "com",        "com_velocity",
                                              "point",    "point_velocity",   "regularise", "kinetic"};
static const char *const whens[] = {"always", "contact", "airborne"};
static const char *const ramps[] = {"none", "linear", "smooth"};
static const char *const solvers[] = {"none", "qp", "qpcc"};

/* map's `region: {min: [x, y, z], max: [x, y, z]}` (rest coordinates, m; each bound open by
   default) into lo and hi. */
static int read_box(sc_cfg_node *map, const char *what, sc_cfg_node **reg, double lo[3], double hi[3], sc_err *err)
{
    char w[256];
    const double inf[3] = {-1e9, -1e9, -1e9}, sup[3] = {1e9, 1e9, 1e9};
    int rc;
    TRY(sc_cfg_require(map, "region", reg, err));
    if (!sc_cfg_is_map(*reg))
        return sc_fail(err, SC_EINPUT, "%s: %s.region: a map {min: [x, y, z], max: [x, y, z]}", sc_cfg_where(*reg, w, sizeof w), what);
    TRY(sc_cfg_vec_range(*reg, "min", 3, inf, -1e9, 1e9, lo, err));
    TRY(sc_cfg_vec_range(*reg, "max", 3, sup, -1e9, 1e9, hi, err));
    return SC_OK;
}

static int in_box(const double p[3], const double lo[3], const double hi[3])
{
    return p[0] >= lo[0] && p[0] <= hi[0] && p[1] >= lo[1] && p[1] <= hi[1] && p[2] >= lo[2] && p[2] <= hi[2];
}

/* The nodes whose rest positions lie in the region's box (malloc'd). */
static int read_region(sc_cfg_node *map, const sc_model *m, const char *what, int **nodes, int *count, sc_err *err)
{
    char w[256];
    sc_cfg_node *reg;
    double lo[3], hi[3];
    int rc;
    TRY(read_box(map, what, &reg, lo, hi, err));
    *nodes = malloc((size_t)m->nnodes * sizeof(int));
    if (!*nodes) return sc_fail(err, SC_EIO, "out of memory");
    int n = 0;
    for (int i = 0; i < m->nnodes; i++)
        if (in_box(m->rest_pos + 3 * i, lo, hi)) (*nodes)[n++] = i;
    *count = n;
    if (!n)
        return sc_fail(err, SC_EINPUT, "%s: %s.region: no node of the body lies in [%g, %g] x [%g, %g] x [%g, %g] (rest coordinates, m)",
                       sc_cfg_where(reg, w, sizeof w), what, lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);
    return SC_OK;
}

/* A map's `group` (optional) and `region`: the muscle segments (of the group) whose rest midpoints
   lie in the region, as a mask (malloc'd); none is an error. */
static int read_segments(sc_cfg_node *map, const sc_muscles *mu, const char *what, unsigned char **mask, sc_err *err)
{
    char w[256], group[SC_MUSCLE_NAME];
    double lo[3], hi[3];
    sc_cfg_node *reg;
    int rc;
    if (!mu) return sc_fail(err, SC_EINPUT, "%s: %s: the character has no muscles", sc_cfg_where(map, w, sizeof w), what);
    TRY(sc_cfg_string(map, "group", "", group, sizeof group, err));
    TRY(read_box(map, what, &reg, lo, hi, err));
    int g = -1;
    for (int k = 0; *group && k < mu->ngroups; k++)
        if (!strcmp(mu->group_name[k], group)) g = k;
    if (*group && g < 0)
        return sc_fail(err, SC_EINPUT, "%s: %s.group: the character has no muscle group '%s'", sc_cfg_where(map, w, sizeof w), what, group);
    if (!(*mask = calloc((size_t)mu->nsegs, 1))) return sc_fail(err, SC_EIO, "out of memory");
    int n = 0;
    for (int f = 0; f < mu->nfibres; f++)
        for (int j = mu->fibre_first[f]; j < mu->fibre_first[f + 1]; j++) {
            double c[3];
            for (int k = 0; k < 3; k++) c[k] = 0.5 * (mu->point_rest[3 * mu->seg_a[j] + k] + mu->point_rest[3 * mu->seg_b[j] + k]);
            (*mask)[j] = (g < 0 || mu->fibre_group[f] == g) && in_box(c, lo, hi);
            n += (*mask)[j];
        }
    if (!n) {
        free(*mask);
        *mask = NULL;
        return sc_fail(err, SC_EINPUT, "%s: %s.region: no muscle segment's midpoint lies in it", sc_cfg_where(reg, w, sizeof w), what);
    }
    return SC_OK;
}

static int read_objective(sc_cfg_node *e, int i, const sc_model *m, const sc_muscles *mu, sc_objective *ob, sc_err *err)
{
    char w[256], what[64];
    const double one[3] = {1, 1, 1}, zero[3] = {0, 0, 0};
    int rc;
    snprintf(what, sizeof what, "muscle_control.objectives[%d]", i);
    if (!sc_cfg_is_map(e)) return sc_fail(err, SC_EINPUT, "%s: %s: a map with a type", sc_cfg_where(e, w, sizeof w), what);
    memset(ob, 0, sizeof *ob);
    TRY(sc_cfg_enum(e, "type", objective_types, 8, -1, &ob->type, err));
    TRY(sc_cfg_double_range(e, "weight", 1, 0, 1e12, &ob->weight, err));
    TRY(sc_cfg_double_range(e, "from", 0, 0, 1e9, &ob->from, err));
    TRY(sc_cfg_double_range(e, "to", 1e9, 0, 1e9, &ob->to, err));
    TRY(sc_cfg_enum(e, "when", whens, 3, SC_WHEN_ALWAYS, &ob->when, err));
    TRY(sc_cfg_vec_range(e, "axes", 3, one, 0, 1e12, ob->axes, err));
    TRY(sc_cfg_vec_range(e, "target", 3, zero, -1e7, 1e7, ob->target, err));
    TRY(sc_cfg_vec_range(e, "amplitude", 3, zero, -1e7, 1e7, ob->amplitude, err));
    TRY(sc_cfg_double_range(e, "period", 0, 0, 1e9, &ob->period, err));
    TRY(sc_cfg_bool(e, "support", 0, &ob->support, err));
    TRY(sc_cfg_double_range(e, "kp", 0, 0, 1e9, &ob->kp, err));
    TRY(sc_cfg_double_range(e, "kd", 0, 0, 1e9, &ob->kd, err));
    TRY(sc_cfg_bool(e, "relative", 0, &ob->relative, err));
    TRY(sc_cfg_enum(e, "ramp", ramps, 3, SC_RAMP_NONE, &ob->ramp, err));
    TRY(sc_cfg_bool(e, "anchored", 0, &ob->anchored, err));
    if (!(ob->to > ob->from))
        return sc_fail(err, SC_EINPUT, "%s: %s: to = %g s is not after from = %g s", sc_cfg_where(e, w, sizeof w), what, ob->to, ob->from);
    if (ob->support && ob->type != SC_OBJ_MOMENTUM)
        return sc_fail(err, SC_EINPUT, "%s: %s: support applies to type momentum only", sc_cfg_where(e, w, sizeof w), what);
    if (ob->ramp != SC_RAMP_NONE && (ob->type == SC_OBJ_REGULARISE || ob->type == SC_OBJ_KINETIC || !sc_cfg_get(e, "to")))
        return sc_fail(err, SC_EINPUT, "%s: %s: ramp grows a target over [from, to]: it needs a `to` and a type with a target",
                       sc_cfg_where(e, w, sizeof w), what);
    if (ob->anchored && ob->type != SC_OBJ_POINT && ob->type != SC_OBJ_COM && ob->type != SC_OBJ_MOMENTUM)
        return sc_fail(err, SC_EINPUT, "%s: %s: anchored applies to types point, com and momentum only", sc_cfg_where(e, w, sizeof w), what);
    if (ob->anchored && (ob->relative || ob->support))
        return sc_fail(err, SC_EINPUT, "%s: %s: anchored offsets are from where the window began, not also %s", sc_cfg_where(e, w, sizeof w), what,
                       ob->relative ? "from the rest centre (relative)" : "from the centre of support (support)");
    if (ob->type == SC_OBJ_POINT || ob->type == SC_OBJ_POINT_VELOCITY) return read_region(e, m, what, &ob->nodes, &ob->nnodes, err);
    if (ob->type == SC_OBJ_REGULARISE) {
        if (sc_cfg_get(e, "target"))
            return sc_fail(err, SC_EINPUT, "%s: %s: a regularise objective has a contraction, not a target", sc_cfg_where(e, w, sizeof w), what);
        TRY(sc_cfg_double_range(e, "contraction", 0, 0, 1, &ob->target[0], err));
        if (ob->target[0] > 0 && ob->relative)
            return sc_fail(err, SC_EINPUT, "%s: %s: relative regularises towards the last plan, not a contraction", sc_cfg_where(e, w, sizeof w),
                           what);
        unsigned char *mask = NULL;
        if (sc_cfg_get(e, "region") && (rc = read_segments(e, mu, what, &mask, err))) return rc;
        ob->segments = mask;
        return SC_OK;
    }
    if (sc_cfg_get(e, "region"))
        return sc_fail(err, SC_EINPUT, "%s: %s: region applies to types point, point_velocity and regularise only", sc_cfg_where(e, w, sizeof w),
                       what);
    return SC_OK;
}

static int read_force(sc_cfg_node *e, int i, const sc_model *m, sc_node_force *f, sc_err *err)
{
    char w[256], what[32];
    int rc;
    snprintf(what, sizeof what, "forces[%d]", i);
    if (!sc_cfg_is_map(e)) return sc_fail(err, SC_EINPUT, "%s: %s: a map with from, to, force and region", sc_cfg_where(e, w, sizeof w), what);
    TRY(sc_cfg_double_range(e, "from", 0, 0, 1e9, &f->from, err));
    TRY(sc_cfg_double_range(e, "to", 1e9, 0, 1e9, &f->to, err));
    TRY(sc_cfg_vec_range(e, "force", 3, NULL, -1e7, 1e7, f->force, err));
    TRY(sc_cfg_bool(e, "ramp", 0, &f->ramp, err));
    if (!(f->to > f->from))
        return sc_fail(err, SC_EINPUT, "%s: %s: to = %g s is not after from = %g s", sc_cfg_where(e, w, sizeof w), what, f->to, f->from);
    return read_region(e, m, what, &f->nodes, &f->nnodes, err);
}

/* contact.backward_friction and contact.forward (horizontal, normalised). */
static int read_anisotropy(sc_cfg_node *root, sc_softbody_opts *b, sc_err *err)
{
    char w[256];
    sc_cfg_node *con;
    const double fwd[3] = {1, 0, 0};
    int rc;
    TRY(sc_cfg_section(root, "contact", &con, err));
    TRY(sc_cfg_double_range(con, "backward_friction", 1, 1, 1000, &b->backward_friction, err));
    TRY(sc_cfg_vec_range(con, "forward", 3, fwd, -1e3, 1e3, b->forward, err));
    const double n = hypot(b->forward[0], b->forward[2]);
    if (fabs(b->forward[1]) > 1e-12 || !(n > 0))
        return sc_fail(err, SC_EINPUT, "%s: contact.forward (%g, %g, %g): a direction in the ground plane (y = 0)",
                       sc_cfg_where(sc_cfg_get(con, "forward"), w, sizeof w), b->forward[0], b->forward[1], b->forward[2]);
    b->forward[0] /= n;
    b->forward[2] /= n;
    return SC_OK;
}

/* muscle_control.locked: segments held at rest length. */
static int read_locked(sc_cfg_node *sec, const sc_muscles *mu, sc_muscle_run_config *out, sc_err *err)
{
    sc_cfg_node *lk = sc_cfg_get(sec, "locked");
    int rc;
    if (!lk) return SC_OK;
    TRY(sc_cfg_section(sec, "locked", &lk, err));
    TRY(read_segments(lk, mu, "muscle_control.locked", &out->locked, err));
    out->run.control.locked = out->locked;
    return SC_OK;
}

static int read_control(sc_cfg_node *root, const sc_model *m, const sc_muscles *mu, sc_muscle_run_config *out, sc_err *err)
{
    char w[256];
    sc_cfg_node *sec, *list;
    sc_muscle_run_opts *o = &out->run;
    long patches, states;
    int rc;
    sc_control_opts *c = &o->control;
    sc_control_default_opts(c);
    TRY(sc_cfg_section(root, "muscle_control", &sec, err));
    TRY(sc_cfg_enum(sec, "solver", solvers, 3, SC_RUN_QPCC, &o->solver, err));
    TRY(sc_cfg_double_range(sec, "period", c->period, 1e-4, 10, &c->period, err));
    TRY(sc_cfg_int(sec, "patches", c->patches, 1, 64, &patches, err));
    TRY(sc_cfg_double_range(sec, "contact_margin", c->contact_margin, 0, 1, &c->contact_margin, err));
    TRY(sc_cfg_int(sec, "max_states", c->max_nodes, 1, 100000, &states, err));
    TRY(sc_cfg_double_range(sec, "ridge", c->ridge, 0, 1, &c->ridge, err));
    TRY(read_locked(sec, mu, out, err));
    TRY(sc_cfg_list(sec, "objectives", o->solver != SC_RUN_PASSIVE, &list, err));
    c->patches = (int)patches;
    c->max_nodes = (int)states;
    c->mu = o->body.contact.mu;
    const int n = list ? sc_cfg_len(list) : 0;
    if (o->solver != SC_RUN_PASSIVE && n < 1)
        return sc_fail(err, SC_EINPUT, "%s: muscle_control.objectives: a controlled run needs at least one objective",
                       sc_cfg_where(list, w, sizeof w));
    c->objectives = calloc((size_t)(n ? n : 1), sizeof *c->objectives);
    if (!c->objectives) return sc_fail(err, SC_EIO, "out of memory");
    for (int i = 0; i < n; i++) {
        TRY(read_objective(sc_cfg_at(list, i), i, m, mu, &c->objectives[i], err));
        c->nobjectives++;
    }
    return SC_OK;
}

int sc_muscle_run_read(sc_cfg *cfg, const sc_model *m, const sc_muscles *mu, sc_muscle_run_config *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    sc_muscle_run_opts *o = &out->run;
    sc_softbody_default_opts(&o->body);
    sc_cfg_node *root = sc_cfg_root(cfg), *sim, *ray, *outs, *list;
    long every;
    int rc;
    TRY(sc_cfg_section(root, "simulation", &sim, err));
    TRY(sc_cfg_double_range(sim, "duration", 5, 0, 1e6, &out->duration, err));
    TRY(sc_cfg_double_range(sim, "dt", o->body.dt, 1e-6, 0.01, &o->body.dt, err));
    TRY(sc_cfg_section(sim, "rayleigh", &ray, err));
    TRY(sc_cfg_double_range(ray, "alpha", o->body.rayleigh_alpha, 0, 1e3, &o->body.rayleigh_alpha, err));
    TRY(sc_cfg_double_range(ray, "beta", o->body.rayleigh_beta, 0, 1, &o->body.rayleigh_beta, err));
    TRY(sc_world_read_gravity(cfg, o->body.gravity, err));
    TRY(sc_world_read_friction(cfg, &o->body.contact.mu, err));
    TRY(read_anisotropy(root, &o->body, err));
    TRY(sc_ground_read(root, &o->body.contact.ground, err));
    TRY(sc_fluid_read(root, &o->body.fluid, err));
    TRY(read_control(root, m, mu, out, err));
    TRY(sc_cfg_list(root, "forces", 0, &list, err));
    const int n = list ? sc_cfg_len(list) : 0;
    o->forces = calloc((size_t)(n ? n : 1), sizeof *o->forces);
    if (!o->forces) return sc_fail(err, SC_EIO, "out of memory");
    for (int i = 0; i < n; i++) {
        TRY(read_force(sc_cfg_at(list, i), i, m, &o->forces[i], err));
        o->nforces++;
    }
    TRY(sc_cfg_section(root, "output", &outs, err));
    TRY(sc_cfg_int(outs, "every", 20, 1, 1000000, &every, err));
    out->every = (int)every;
    return SC_OK;
}

void sc_muscle_run_config_free(sc_muscle_run_config *rc)
{
    sc_control_opts *c = &rc->run.control;
    for (int i = 0; c->objectives && i < c->nobjectives; i++) {
        free(c->objectives[i].nodes);
        free((void *)c->objectives[i].segments);
    }
    free(c->objectives);
    for (int i = 0; rc->run.forces && i < rc->run.nforces; i++) free(rc->run.forces[i].nodes);
    free(rc->run.forces);
    free(rc->locked);
    memset(rc, 0, sizeof *rc);
}

/* The YAML readers of inverse dynamics, retargeting and contact estimation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/paths.h"
#include "mesh/rig.h"
#include "settings/motion.h"
#include "settings/network.h"
#include "settings/world.h"

int sc_retarget_default_opts(sc_retarget_opts *o, sc_err *err)
{
    memset(o, 0, sizeof *o);
    o->unit = 0.056444;
    o->first = 1;
    o->last = -1;
    o->recentre = 1;
    o->hinge_ik = 1;
    snprintf(o->map_where, sizeof o->map_where, "default CMU map");
    /* the CMU map of mesh/rig.c, as YAML list lines "- {name: .., joint: .., tail: .., ...}" */
    const char *list = sc_rig_cmu_map_yaml();
    size_t n = strlen(list);
    char *text = malloc(2 * n + 16);
    if (!text) return sc_fail(err, SC_EIO, "out of memory");
    size_t c = (size_t)sprintf(text, "map:\n");
    for (const char *p = list; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        c += (size_t)sprintf(text + c, "  %.*s\n", (int)len, p);
        p += len + (e ? 1 : 0);
    }
    sc_cfg *cfg;
    int rc = sc_cfg_load_string(text, "default CMU map", &cfg, err);
    free(text);
    if (rc) return rc;
    sc_cfg_node *map = NULL;
    rc = sc_cfg_list(sc_cfg_root(cfg), "map", 1, &map, err);
    for (int i = 0; !rc && i < sc_cfg_len(map) && i < SC_RETARGET_MAX; i++) {
        sc_cfg_node *e = sc_cfg_at(map, i);
        sc_retarget_entry *x = &o->map[o->nmap];
        if ((rc = sc_cfg_string(e, "name", NULL, x->bone, sizeof x->bone, err)) ||
            (rc = sc_cfg_string(e, "joint", NULL, x->joint, sizeof x->joint, err)) ||
            (rc = sc_cfg_string(e, "tail", "", x->tail, sizeof x->tail, err)))
            break;
        snprintf(x->where, sizeof x->where, "default CMU map");
        o->nmap++;
    }
    sc_cfg_free(cfg);
    return rc;
}

static int frames_pair(sc_cfg_node *sec, int *first, int *last, sc_err *err)
{
    double v[2], def[2] = {1, -1};
    int rc = sc_cfg_vec(sec, "frames", 2, def, v, err);
    if (rc) return rc;
    for (int i = 0; i < 2; i++)
        if (v[i] != floor(v[i]) || fabs(v[i]) > 1e8) {
            char w[256];
            return sc_fail(err, SC_EINPUT,
                           "%s: motion.frames must be two whole frame numbers [first, last] (last -1 = the "
                           "clip's last frame), got %g",
                           sc_cfg_where(sc_cfg_get(sec, "frames"), w, sizeof w), v[i]);
        }
    if (v[1] != -1 && v[0] > v[1]) {
        char w[256];
        return sc_fail(err, SC_EINPUT,
                       "%s: motion.frames [%g, %g] is reversed: the first frame must not come after the "
                       "last (use -1 as the last for the end of the clip)",
                       sc_cfg_where(sc_cfg_get(sec, "frames"), w, sizeof w), v[0], v[1]);
    }
    *first = (int)v[0];
    *last = (int)v[1];
    return SC_OK;
}

static int read_map(sc_cfg_node *sec, sc_retarget_opts *o, sc_err *err)
{
    char w[256], buf[32];
    sc_cfg_node *map = sc_cfg_get(sec, "map");
    if (!map || sc_cfg_is_scalar(map)) {
        int rc = sc_cfg_string(sec, "map", "default", buf, sizeof buf, err);
        if (rc) return rc;
        if (strcmp(buf, "default") != 0)
            return sc_fail(err, SC_EINPUT,
                           "%s: retarget.map must be 'default' (the CMU map) or a map from character bones "
                           "to BVH joints ({bone: joint} or {bone: [joint, tail]})",
                           sc_cfg_where(map, w, sizeof w));
        return SC_OK; /* the defaults already hold the CMU map */
    }
    if (!sc_cfg_is_map(map))
        return sc_fail(err, SC_EINPUT, "%s: retarget.map must be a map from character bones to BVH joints", sc_cfg_where(map, w, sizeof w));
    int n = sc_cfg_len(map);
    if (n > SC_RETARGET_MAX) return sc_fail(err, SC_EINPUT, "%s: at most %d bones in retarget.map", sc_cfg_where(map, w, sizeof w), SC_RETARGET_MAX);
    o->nmap = 0;
    sc_cfg_where(map, o->map_where, sizeof o->map_where);
    for (int i = 0; i < n; i++) {
        sc_cfg_node *v = sc_cfg_at(map, i);
        sc_retarget_entry *e = &o->map[o->nmap++];
        memset(e, 0, sizeof *e);
        snprintf(e->bone, sizeof e->bone, "%s", sc_cfg_key_at(map, i));
        sc_cfg_where(v, e->where, sizeof e->where);
        const char *j = NULL, *t = "";
        if (sc_cfg_is_scalar(v)) j = sc_cfg_scalar(v);
        else if (sc_cfg_is_seq(v) && (sc_cfg_len(v) == 1 || sc_cfg_len(v) == 2)) {
            j = sc_cfg_scalar(sc_cfg_at(v, 0));
            if (sc_cfg_len(v) == 2) t = sc_cfg_scalar(sc_cfg_at(v, 1));
        }
        if (!j || !t || !j[0] || strlen(j) >= SC_NAME_LEN || strlen(t) >= SC_NAME_LEN)
            return sc_fail(err, SC_EINPUT, "%s: retarget.map.%s must be a BVH joint name or [joint, tail]", e->where, e->bone);
        snprintf(e->joint, sizeof e->joint, "%s", j);
        snprintf(e->tail, sizeof e->tail, "%s", t);
    }
    return SC_OK;
}

/* `auto` (*out = 0) or a number in [lo, hi]. */
static int auto_or_number(sc_cfg_node *sec, const char *key, double lo, double hi, double *out, sc_err *err)
{
    char buf[64], w[256];
    int rc = sc_cfg_string(sec, key, "auto", buf, sizeof buf, err);
    if (rc) return rc;
    *out = 0;
    if (!strcmp(buf, "auto")) return SC_OK;
    char *end;
    double v = strtod(buf, &end);
    if (*end || end == buf || !(v >= lo) || !(v <= hi))
        return sc_fail(err, SC_EINPUT, "%s: %s must be 'auto' or a number in [%g, %g], got '%s'", sc_cfg_where(sc_cfg_get(sec, key), w, sizeof w),
                       key, lo, hi, buf);
    *out = v;
    return SC_OK;
}

/* A key that moved to a section every tool reads: an error saying where it lives now. */
static int moved(sc_cfg_node *sec, const char *key, const char *old_name, const char *new_name, sc_err *err)
{
    sc_cfg_node *v = sc_cfg_get(sec, key);
    if (!v) return SC_OK;
    char w[256];
    return sc_fail(err, SC_EINPUT, "%s: %s moved: set %s (read by every tool)", sc_cfg_where(v, w, sizeof w), old_name, new_name);
}

static int read_motion(sc_cfg_node *mo, sc_id_config *c, char *name, size_t size, sc_err *err)
{
    char w[256];
    long window;
    static const char *const filters[] = {"none", "moving_average", "butterworth"};
    int rc;
    if ((rc = sc_cfg_string(mo, "bvh", NULL, name, size, err))) return rc;
    sc_cfg_where(sc_cfg_get(mo, "bvh"), c->bvh_where, sizeof c->bvh_where);
    sc_cfg_where(sc_cfg_get(mo, "filter_cutoff"), c->filter_cutoff_where, sizeof c->filter_cutoff_where);
    sc_cfg_node *frames = sc_cfg_get(mo, "frames"); /* absent (the default): the section's place */
    sc_cfg_where(frames ? frames : mo, c->frames_where, sizeof c->frames_where);
    if ((rc = sc_cfg_double_range(mo, "unit", 0.056444, 1e-9, 1e3, &c->retarget.unit, err)) ||
        (rc = frames_pair(mo, &c->retarget.first, &c->retarget.last, err)) || (rc = sc_cfg_bool(mo, "mirror", 0, &c->retarget.mirror, err)) ||
        (rc = sc_cfg_enum(mo, "filter", filters, 3, 0, &c->filter, err)) || (rc = sc_cfg_int(mo, "filter_window", 5, 1, 1001, &window, err)) ||
        (rc = sc_cfg_double_range(mo, "filter_cutoff", 6, 1e-3, 1e4, &c->filter_cutoff, err)))
        return rc;
    if (window % 2 == 0)
        return sc_fail(err, SC_EINPUT, "%s: motion.filter_window must be odd (a centred window), got %ld",
                       sc_cfg_where(sc_cfg_get(mo, "filter_window"), w, sizeof w), window);
    c->filter_window = (int)window;
    return SC_OK;
}

static int read_retarget(sc_cfg_node *rt, sc_id_config *c, sc_err *err)
{
    char w[256], buf[64];
    static const char *const floors[] = {"keep", "flat", "auto"};
    static const char *const hinge_fits[] = {"direction", "twist"};
    int rc;
    if ((rc = read_map(rt, &c->retarget, err)) || (rc = sc_cfg_string(rt, "root_scale", "auto", buf, sizeof buf, err)) ||
        (rc = sc_cfg_bool(rt, "recentre", 1, &c->retarget.recentre, err)) || (rc = sc_cfg_bool(rt, "hinge_ik", 1, &c->retarget.hinge_ik, err)) ||
        (rc = sc_cfg_enum(rt, "hinge_fit", hinge_fits, 2, SC_HINGE_DIRECTION, &c->retarget.hinge_fit, err)) ||
        (rc = sc_cfg_enum(rt, "floor", floors, 3, 2, &c->floor_mode, err)) ||
        (rc = sc_cfg_double_range(rt, "floor_percentile", 50, 0, 100, &c->floor_percentile, err)) ||
        (rc = sc_cfg_double_range(rt, "height_offset", 0, -10, 10, &c->height_offset, err)) ||
        (rc = sc_cfg_bool(rt, "contacts", 1, &c->fit_contacts, err)) || (rc = sc_cfg_bool(rt, "balance", 1, &c->balance, err)))
        return rc;
    if (strcmp(buf, "auto") != 0) {
        char *end;
        double s = strtod(buf, &end);
        if (*end || end == buf || !(s > 0) || !(s < 100))
            return sc_fail(err, SC_EINPUT, "%s: retarget.root_scale must be 'auto' or a number in (0, 100), got '%s'",
                           sc_cfg_where(sc_cfg_get(rt, "root_scale"), w, sizeof w), buf);
        c->retarget.root_scale = s;
    }
    return SC_OK;
}

static int read_contact_bones(sc_cfg_node *co, sc_id_config *c, sc_err *err)
{
    char w[256], buf[64];
    sc_cfg_node *bones = sc_cfg_get(co, "bones");
    c->all_bones = 1;
    if (bones && sc_cfg_is_seq(bones)) {
        c->all_bones = 0;
        sc_cfg_where(bones, c->bones_where, sizeof c->bones_where);
        int n = sc_cfg_len(bones);
        if (n > SC_BODY_MAX_BONES) return sc_fail(err, SC_EINPUT, "%s: too many bones in contact_estimation.bones", c->bones_where);
        for (int i = 0; i < n; i++) {
            const char *s = sc_cfg_scalar(sc_cfg_at(bones, i));
            if (!s || strlen(s) >= SC_NAME_LEN)
                return sc_fail(err, SC_EINPUT, "%s: contact_estimation.bones must list bone names", sc_cfg_where(sc_cfg_at(bones, i), w, sizeof w));
            snprintf(c->allowed[c->nallowed++], SC_NAME_LEN, "%s", s);
        }
        return SC_OK;
    }
    int rc = sc_cfg_string(co, "bones", "all", buf, sizeof buf, err);
    if (rc) return rc;
    if (strcmp(buf, "all") != 0)
        return sc_fail(err, SC_EINPUT, "%s: contact_estimation.bones must be 'all' or a list of bone names, got '%s'",
                       sc_cfg_where(bones, w, sizeof w), buf);
    return SC_OK;
}

static int read_contact_estimation(sc_cfg_node *co, sc_id_config *c, sc_err *err)
{
    sc_gc_opts *ct = &c->id.contact;
    static const char *const splits[] = {"residual", "paper"};
    int rc;
    if ((rc = moved(co, "mu", "contact_estimation.mu", "contact.friction", err)) ||
        (rc = auto_or_number(co, "height_tol", 1e-4, 1, &c->height_tol, err)) ||
        (rc = auto_or_number(co, "speed_tol", 1e-3, 100, &c->speed_tol, err)) ||
        (rc = sc_cfg_double_range(co, "support", ct->support, 0, 1, &ct->support, err)) ||
        (rc = sc_cfg_double_range(co, "min_distance", ct->min_dist, 1e-6, 10, &ct->min_dist, err)) ||
        (rc = sc_cfg_enum(co, "torque_split", splits, 2, SC_SPLIT_RESIDUAL, &ct->torque_split, err)))
        return rc;
    return read_contact_bones(co, c, err);
}

static int read_dynamics(sc_cfg_node *dy, sc_id_config *c, sc_err *err)
{
    static const char *const masses[] = {"skin", "fixed_nodes"};
    static const char *const rates[] = {"analytic", "difference"};
    int mm, rc;
    if ((rc = sc_cfg_enum(dy, "mass_model", masses, 2, 0, &mm, err)) || (rc = moved(dy, "gravity", "dynamics.gravity", "simulation.gravity", err)) ||
        (rc = sc_cfg_enum(dy, "momentum_rate", rates, 2, SC_RATE_ANALYTIC, &c->id.momentum_rate, err)) ||
        (rc = sc_cfg_double_range(dy, "max_target_offset", c->id.max_target_offset, 1e-3, 3.0, &c->id.max_target_offset, err)))
        return rc;
    c->mass_model = mm == 0 ? SC_MASS_SKIN : SC_MASS_FIXED;
    return SC_OK;
}

/* simulation.gravity and contact.friction; the rest of those sections is the simulator's. */
static int read_world(sc_cfg *cfg, sc_id_config *c, sc_err *err)
{
    sc_cfg_node *root = sc_cfg_root(cfg), *sim, *con;
    int rc;
    if ((rc = sc_world_read_gravity(cfg, c->id.gravity, err)) || (rc = sc_world_read_friction(cfg, &c->id.contact.mu, err)) ||
        (rc = sc_cfg_section(root, "simulation", &sim, err)) || (rc = sc_cfg_section(root, "contact", &con, err)))
        return rc;
    sc_cfg_ignore_rest(sim);
    sc_cfg_ignore_rest(con);
    return SC_OK;
}

#define SC_EDIT_DT   0.0025 /* s between the edit's offset samples: finer than a 120 fps capture */
#define SC_EDIT_SPAN 600.0  /* s: the longest edit (its samples' memory) */

/* motion.edit ([BK] 8's motion-capture editing; configs/networks/walk_obstacle.yaml shows it):
 * `nodes`, a motion network of time channels (no feedback: the edit runs before any
 * simulation, and no loop: a clip ends), and `moves`, each {bone, x, y, z} naming the nodes
 * whose values (m, world) move that limb end. The offsets are sampled up to the last control
 * point and held after it. Bones are resolved by inverse-dynamics against the character. */
static int read_edit(sc_cfg_node *mo, sc_limb_edit *ed, sc_err *err)
{
    static const char *const axes[3] = {"x", "y", "z"};
    char w[256];
    sc_cfg_node *edit = sc_cfg_get(mo, "edit"), *nodes, *moves;
    int rc;
    memset(ed, 0, sizeof *ed);
    if (!edit) return SC_OK;
    if (!sc_cfg_is_map(edit))
        return sc_fail(err, SC_EINPUT, "%s: motion.edit is a map {nodes: [...], moves: [...]}", sc_cfg_where(edit, w, sizeof w));
    if ((rc = sc_cfg_list(edit, "nodes", 1, &nodes, err)) || (rc = sc_cfg_list(edit, "moves", 1, &moves, err))) return rc;
    for (int i = 0; i < sc_cfg_len(nodes); i++) {
        sc_cfg_node *e = sc_cfg_at(nodes, i);
        if (sc_cfg_is_map(e) && sc_cfg_get(e, "feedback"))
            return sc_fail(err, SC_EINPUT, "%s: motion.edit's nodes have no feedback: the capture is edited before anything is simulated",
                           sc_cfg_where(e, w, sizeof w));
    }
    if (sc_cfg_len(moves) < 1 || sc_cfg_len(moves) > SC_LIMB_EDIT_MAX)
        return sc_fail(err, SC_EINPUT, "%s: motion.edit.moves: 1 to %d moves", sc_cfg_where(moves, w, sizeof w), SC_LIMB_EDIT_MAX);
    sc_network net;
    sc_network_state st = {0};
    int node[SC_LIMB_EDIT_MAX][3];
    rc = sc_network_read(nodes, NULL, 0, &net, err);
    for (int k = 0; !rc && k < sc_cfg_len(moves); k++) {
        sc_cfg_node *e = sc_cfg_at(moves, k);
        if (!sc_cfg_is_map(e)) {
            rc = sc_fail(err, SC_EINPUT, "%s: motion.edit.moves[%d]: a map {bone, x, y, z}", sc_cfg_where(e, w, sizeof w), k);
            break;
        }
        sc_cfg_where(e, ed->where[k], sizeof ed->where[k]);
        if ((rc = sc_cfg_string(e, "bone", NULL, ed->bone[k], sizeof ed->bone[k], err))) break;
        int any = 0;
        for (int a = 0; a < 3 && !rc; a++) {
            char name[SC_NAME_LEN];
            node[k][a] = -1;
            if ((rc = sc_cfg_string(e, axes[a], "", name, sizeof name, err)) || !*name) continue;
            if ((node[k][a] = sc_network_find(&net, name)) < 0)
                rc = sc_fail(err, SC_EINPUT, "%s: motion.edit.moves[%d].%s names node '%s', which motion.edit.nodes does not have",
                             sc_cfg_where(sc_cfg_get(e, axes[a]), w, sizeof w), k, axes[a], name);
            any = 1;
        }
        if (!rc && !any) rc = sc_fail(err, SC_EINPUT, "%s: motion.edit.moves[%d] moves '%s' along none of x, y, z", ed->where[k], k, ed->bone[k]);
        ed->nmoves = k + 1;
    }
    double last = 0;
    for (int i = 0; !rc && i < net.nnodes; i++) {
        const sc_net_node *d = &net.node[i];
        if (d->kind != SC_NODE_SPLINE && d->kind != SC_NODE_STEP) continue;
        if (d->loop) rc = sc_fail(err, SC_EINPUT, "%s: motion.edit's node '%s' loops: a clip ends, give its points over the clip", d->where, d->name);
        else last = fmax(last, net.pt_t[d->first + d->npoints - 1]);
        if (!rc && !(last <= SC_EDIT_SPAN))
            rc = sc_fail(err, SC_EINPUT, "%s: motion.edit's node '%s' has a point at t = %g s; an edit spans at most %g s", d->where, d->name, last,
                         SC_EDIT_SPAN);
    }
    if (!rc) rc = sc_network_state_init(&net, &st, err);
    if (!rc) {
        ed->dt = SC_EDIT_DT;
        ed->nsamples = (int)ceil(last / ed->dt) + 1;
        ed->offset = calloc((size_t)ed->nsamples * ed->nmoves * 3, sizeof *ed->offset);
        if (!ed->offset) rc = sc_fail(err, SC_EIO, "out of memory");
    }
    for (int i = 0; !rc && i < ed->nsamples; i++) {
        sc_network_eval(&net, &st, i * ed->dt, NULL);
        for (int k = 0; k < ed->nmoves; k++)
            for (int a = 0; a < 3; a++) ed->offset[3 * ((size_t)i * ed->nmoves + k) + a] = node[k][a] >= 0 ? st.value[node[k][a]] : 0;
    }
    sc_network_state_free(&st);
    sc_network_free(&net);
    if (rc) {
        free(ed->offset);
        memset(ed, 0, sizeof *ed);
    }
    return rc;
}

int sc_id_read_config(sc_cfg *cfg, sc_id_config *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    int rc = sc_retarget_default_opts(&c->retarget, err);
    if (rc) return rc;
    sc_id_default_opts(&c->id);
    sc_cfg_node *root = sc_cfg_root(cfg), *mo, *rt, *ki, *co, *dy;
    char name[512];
    static const char *const schemes[] = {"forward", "central"};
    if ((rc = sc_cfg_section(root, "motion", &mo, err)) || (rc = sc_cfg_section(root, "retarget", &rt, err)) ||
        (rc = sc_cfg_section(root, "kinematics", &ki, err)) || (rc = sc_cfg_section(root, "contact_estimation", &co, err)) ||
        (rc = sc_cfg_section(root, "dynamics", &dy, err)))
        return rc;
    if ((rc = read_motion(mo, c, name, sizeof name, err)) || (rc = read_retarget(rt, c, err)) ||
        (rc = sc_cfg_double_range(ki, "dt", 0.0005, 1e-6, 0.1, &c->dt, err)) ||
        (rc = sc_cfg_enum(ki, "differences", schemes, 2, SC_DIFF_FORWARD, &c->scheme, err)) || (rc = read_contact_estimation(co, c, err)) ||
        (rc = read_dynamics(dy, c, err)) || (rc = read_world(cfg, c, err)) ||
        (rc = sc_find_input(name, sc_cfg_path(cfg), 1, c->bvh_where, c->bvh, sizeof c->bvh, err)))
        return rc;
    return read_edit(mo, &c->edit, err);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The first motion key on which a (the tool's config) and b (the reference's) differ, with
 * both values as text; 0 when they agree. */
static int motion_differs(const sc_id_config *a, const char *name_a, const sc_id_config *b, const char *name_b, const char **key, char *va, char *vb,
                          size_t n)
{
    if (strcmp(base_name(name_a), base_name(name_b))) {
        *key = "bvh";
        snprintf(va, n, "%s", name_a);
        snprintf(vb, n, "%s", name_b);
    } else if (a->retarget.first != b->retarget.first || a->retarget.last != b->retarget.last) {
        *key = "frames";
        snprintf(va, n, "[%d, %d]", a->retarget.first, a->retarget.last);
        snprintf(vb, n, "[%d, %d]", b->retarget.first, b->retarget.last);
    } else if (!(fabs(a->retarget.unit - b->retarget.unit) <= 1e-12 * fabs(b->retarget.unit))) {
        *key = "unit";
        snprintf(va, n, "%.9g", a->retarget.unit);
        snprintf(vb, n, "%.9g", b->retarget.unit);
    } else if (a->retarget.mirror != b->retarget.mirror) {
        *key = "mirror";
        snprintf(va, n, "%s", a->retarget.mirror ? "true" : "false");
        snprintf(vb, n, "%s", b->retarget.mirror ? "true" : "false");
    } else if (a->filter != b->filter || (a->filter == 1 && a->filter_window != b->filter_window) ||
               (a->filter == 2 && !(fabs(a->filter_cutoff - b->filter_cutoff) <= 1e-12 * b->filter_cutoff))) {
        *key = "filter";
        const sc_id_config *c[2] = {a, b};
        char *v[2] = {va, vb};
        for (int k = 0; k < 2; k++)
            if (c[k]->filter == 1) snprintf(v[k], n, "moving_average over %d frames", c[k]->filter_window);
            else if (c[k]->filter == 2) snprintf(v[k], n, "butterworth at %g Hz", c[k]->filter_cutoff);
            else snprintf(v[k], n, "none");
    } else return 0;
    return 1;
}

/* 1 when two edits move other bones or by other offsets. */
static int edit_differs(const sc_limb_edit *a, const sc_limb_edit *b)
{
    if (a->nmoves != b->nmoves || a->nsamples != b->nsamples) return 1;
    for (int k = 0; k < a->nmoves; k++)
        if (strcmp(a->bone[k], b->bone[k])) return 1;
    return a->nmoves && memcmp(a->offset, b->offset, (size_t)a->nsamples * a->nmoves * 3 * sizeof *a->offset);
}

int sc_motion_check_reference(const sc_cfg *cfg, const char *ref_path, const sc_reference_origin *origin, sc_err *err)
{
    if (!origin->config || !sc_cfg_path(cfg)) return SC_OK;
    sc_cfg *mine = NULL, *theirs = NULL;
    sc_id_config *a = calloc(2, sizeof *a), *b = a + 1;
    char name_a[512], name_b[512], where[300];
    int rc = a ? sc_cfg_load_file(sc_cfg_path(cfg), &mine, err) : sc_fail(err, SC_EIO, "out of memory");
    if (rc) goto done;
    sc_cfg_node *mo = sc_cfg_get(sc_cfg_root(mine), "motion");
    if (!mo) goto done; /* nothing said about the clip: the reference decides */
    snprintf(where, sizeof where, "%s:/config", ref_path);
    if ((rc = sc_cfg_load_string(origin->config, where, &theirs, err))) goto done;
    sc_cfg_node *ref_mo = sc_cfg_get(sc_cfg_root(theirs), "motion");
    if (!ref_mo) goto done;
    if ((rc = read_motion(mo, a, name_a, sizeof name_a, err)) || (rc = read_motion(ref_mo, b, name_b, sizeof name_b, err)) ||
        (rc = read_edit(mo, &a->edit, err)) || (rc = read_edit(ref_mo, &b->edit, err)))
        goto done;
    const char *key = NULL; /* motion_differs sets it when a key differs */
    char va[300], vb[300];
    if (!motion_differs(a, name_a, b, name_b, &key, va, vb, sizeof va) && edit_differs(&a->edit, &b->edit)) {
        key = "edit";
        snprintf(va, sizeof va, "an edit of %d move%s", a->edit.nmoves, a->edit.nmoves == 1 ? "" : "s");
        snprintf(vb, sizeof vb, "another (%d move%s)", b->edit.nmoves, b->edit.nmoves == 1 ? "" : "s");
    }
    if (key) {
        sc_cfg_node *at = sc_cfg_get(mo, key);
        rc = sc_fail(err, SC_EINPUT,
                     "%s: motion.%s is %s, but %s was made with %s (its /config): it holds another stretch or version of the clip; run "
                     "inverse-dynamics again with this config, or give the reference's motion section",
                     sc_cfg_where(at ? at : mo, where, sizeof where), key, va, ref_path, vb);
    }
done:
    sc_cfg_free(mine);
    sc_cfg_free(theirs);
    if (a) {
        sc_id_config_free(a);
        sc_id_config_free(b);
    }
    free(a);
    return rc;
}

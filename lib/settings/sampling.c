/* The `sampling:` config section, one reader per part (the search, the gait cycle, the offset
 * boxes, the cost, the failure test), in the order the keys are read (the resolved config lists
 * the defaults in that order). */
#include <math.h>
#include <string.h>
#include "settings/sampling.h"

#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)

/* default half-widths (rad) per joint class (segments.h), about the joint frame's x (flexion for
   a character facing +z), y (twist) and z */
static const double class_box[SC_JOINT_CLASSES][3] = {{0.5, 0.1, 0.2}, {0.4, 0, 0}, {0.4, 0.1, 0.2}, {0.2, 0.1, 0.1}, {0.2, 0.2, 0.2}, {0, 0, 0}};

/* A box: one number (every axis of a ball joint, or a hinge's angle) or [x, y, z] (ball only). */
static int read_box(sc_cfg_node *v, int hinge, double out[3], sc_err *err)
{
    char w[256];
    if (sc_cfg_is_scalar(v)) {
        double x;
        int rc = sc_cfg_scalar_double(v, &x, err);
        if (rc) return rc;
        out[0] = out[1] = out[2] = x;
    } else if (sc_cfg_is_seq(v) && sc_cfg_len(v) == 3 && !hinge) {
        for (int k = 0; k < 3; k++) {
            int rc = sc_cfg_scalar_double(sc_cfg_at(v, k), &out[k], err);
            if (rc) return rc;
        }
    } else {
        return sc_fail(err, SC_EINPUT, "%s: a box is %s (radians)", sc_cfg_where(v, w, sizeof w),
                       hinge ? "one half-width (a hinge)" : "one half-width or [x, y, z]");
    }
    for (int k = 0; k < 3; k++)
        if (!(out[k] >= 0 && out[k] <= SC_PI))
            return sc_fail(err, SC_EINPUT, "%s: box half-width %g is outside [0, pi]", sc_cfg_where(v, w, sizeof w), out[k]);
    return SC_OK;
}

/* Sample counts, elites, time scaling, the span tracked and backtracking. */
static int read_search(sc_cfg_node *s, sc_samcon_config *c, sc_err *err)
{
    static const char *const selections[] = {"greedy", "spread"}, *const bases[] = {"id", "reference"}, *const elite_costs[] = {"path", "segment"};
    char w[256];
    long n;
    int rc;
    TRY(sc_cfg_double_range(s, "segment", 0.1, 0.005, 10, &c->segment, err));
    TRY(sc_cfg_int(s, "samples", 1000, 1, 1000000, &n, err));
    c->samples = (int)n;
    TRY(sc_cfg_int(s, "elites", 100, 1, 100000, &n, err));
    c->elites = (int)n;
    if (c->elites > c->samples)
        return sc_fail(err, SC_EINPUT, "%s: sampling.elites = %d is more than sampling.samples = %d",
                       sc_cfg_where(sc_cfg_get(s, "elites"), w, sizeof w), c->elites, c->samples);
    TRY(sc_cfg_enum(s, "selection", selections, 2, SC_SELECT_GREEDY, &c->selection, err));
    TRY(sc_cfg_enum(s, "elite_cost", elite_costs, 2, SC_ELITE_BY_PATH, &c->elite_cost, err));
    TRY(sc_cfg_enum(s, "initial", bases, 2, SC_BASE_ID, &c->base, err));
    TRY(sc_cfg_bool(s, "time_scaling", 1, &c->time_scaling, err));
    TRY(sc_cfg_double_range(s, "time_scale_min", 0.8, 0.1, 10, &c->scale_min, err));
    TRY(sc_cfg_double_range(s, "time_scale_max", 1.25, 0.1, 10, &c->scale_max, err));
    if (c->scale_min > c->scale_max)
        return sc_fail(err, SC_EINPUT, "%s: sampling.time_scale_min = %g is above time_scale_max = %g",
                       sc_cfg_where(sc_cfg_get(s, "time_scale_min"), w, sizeof w), c->scale_min, c->scale_max);
    if (!c->time_scaling) c->scale_min = c->scale_max = 1;
    TRY(sc_cfg_double_range(s, "start", 0, 0, 1e5, &c->start, err));
    TRY(sc_cfg_double_range(s, "end", 0, 0, 1e5, &c->end, err));
    /* checked against the reference later (sc_samcon_span): where each was set (a default: its section) */
    sc_cfg_where(sc_cfg_get(s, "segment"), c->segment_where, sizeof c->segment_where);
    sc_cfg_where(sc_cfg_get(s, "start"), c->start_where, sizeof c->start_where);
    sc_cfg_where(sc_cfg_get(s, "end"), c->end_where, sizeof c->end_where);
    TRY(sc_cfg_int(s, "backtrack", 2, 0, 1000, &n, err));
    c->backtrack = (int)n;
    TRY(sc_cfg_int(s, "max_retries", 4, 0, 1000, &n, err));
    c->max_retries = (int)n;
    TRY(sc_cfg_double_range(s, "growth", 2, 1, 100, &c->growth, err));
    TRY(sc_cfg_double_range(s, "max_cost", 0, 0, 1e12, &c->max_cost, err));
    return SC_OK;
}

/* sampling.cycle (none, auto or [t0, t1]), the periods auto searches, and the repetitions. */
static int read_cycle(sc_cfg_node *s, sc_samcon_config *c, sc_err *err)
{
    char w[256];
    long n;
    int rc;
    sc_cfg_node *cyc = sc_cfg_get(s, "cycle");
    if (!cyc || (sc_cfg_is_scalar(cyc) && !strcmp(sc_cfg_scalar(cyc), "none"))) {
        c->cycle = SC_CYCLE_NONE;
        if (!cyc) TRY(sc_cfg_string(s, "cycle", "none", w, sizeof w, err));
    } else if (sc_cfg_is_scalar(cyc) && !strcmp(sc_cfg_scalar(cyc), "auto")) {
        c->cycle = SC_CYCLE_AUTO;
    } else if (sc_cfg_is_seq(cyc) && sc_cfg_len(cyc) == 2) {
        c->cycle = SC_CYCLE_GIVEN;
        TRY(sc_cfg_vec_range(s, "cycle", 2, NULL, 0, 1e5, c->cycle_span, err));
        if (!(c->cycle_span[1] > c->cycle_span[0] && c->cycle_span[0] >= 0))
            return sc_fail(err, SC_EINPUT, "%s: sampling.cycle [%g, %g] is not a span of the reference (s)", sc_cfg_where(cyc, w, sizeof w),
                           c->cycle_span[0], c->cycle_span[1]);
    } else {
        return sc_fail(err, SC_EINPUT, "%s: sampling.cycle is none, auto or [t0, t1] (s of the reference)", sc_cfg_where(cyc, w, sizeof w));
    }
    double period_def[2] = {0.4, 2.0};
    TRY(sc_cfg_vec_range(s, "cycle_period", 2, period_def, 0, 1e4, c->cycle_period, err));
    if (!(c->cycle_period[0] > 0 && c->cycle_period[1] > c->cycle_period[0]))
        return sc_fail(err, SC_EINPUT, "%s: sampling.cycle_period [%g, %g] is not a range of periods (s)",
                       sc_cfg_where(sc_cfg_get(s, "cycle_period"), w, sizeof w), c->cycle_period[0], c->cycle_period[1]);
    TRY(sc_cfg_int(s, "cycles", 1, 1, 10000, &n, err));
    c->cycles = (int)n;
    if (c->cycle && (c->start > 0 || c->end > 0))
        return sc_fail(err, SC_EINPUT, "%s: sampling.start and end do not apply with a cycle (the cycle sets the span)",
                       sc_cfg_where(cyc, w, sizeof w));
    return SC_OK;
}

/* Offset boxes: class defaults, then the config's classes, then per joint. */
static int read_boxes(sc_cfg_node *s, const sc_model *m, const sc_control_dofs *dofs, sc_samcon_config *c, sc_err *err)
{
    sc_cfg_node *boxes, *joints;
    char w[256];
    int rc;
    double cls[SC_JOINT_CLASSES][3];
    memcpy(cls, class_box, sizeof cls);
    TRY(sc_cfg_section(s, "boxes", &boxes, err));
    for (int i = 0; i < sc_cfg_len(boxes); i++) {
        const char *key = sc_cfg_key_at(boxes, i);
        int k = 0;
        while (k < SC_JOINT_CLASSES && strcmp(sc_joint_class_names[k], key)) k++;
        if (k == SC_JOINT_CLASSES)
            return sc_fail(err, SC_EINPUT,
                           "%s: sampling.boxes has no joint class '%s' (classes: hips, knees, ankles, spine, shoulders, "
                           "others; single joints go under sampling.joints)",
                           sc_cfg_where(sc_cfg_at(boxes, i), w, sizeof w), key);
        TRY(read_box(sc_cfg_at(boxes, i), 0, cls[k], err));
    }
    for (int k = 0; k < SC_JOINT_CLASSES; k++) (void)sc_cfg_get(boxes, sc_joint_class_names[k]);
    for (int d = 0; d < dofs->n; d++) {
        const double *b = cls[sc_joint_class(m->bone_name[dofs->bone[d]])];
        c->box[d] = dofs->axis[d] < 0 ? b[0] : b[dofs->axis[d]];
    }
    TRY(sc_cfg_section(s, "joints", &joints, err));
    for (int i = 0; i < sc_cfg_len(joints); i++) {
        const char *key = sc_cfg_key_at(joints, i);
        int b = sc_model_bone_index(m, key);
        if (b < 0 || dofs->first[b] < 0)
            return sc_fail(err, SC_EINPUT, "%s: sampling.joints names '%s', which is not a joint of the character%s",
                           sc_cfg_where(sc_cfg_at(joints, i), w, sizeof w), key, b == 0 ? " (the root is never sampled)" : "");
        double box[3];
        int hinge = m->joint_type[b] == SC_JOINT_HINGE;
        TRY(read_box(sc_cfg_at(joints, i), hinge, box, err));
        for (int k = 0; k < (hinge ? 1 : 3); k++) c->box[dofs->first[b] + k] = box[k];
    }
    return SC_OK;
}

/* sampling.cost (frame, weights) and sampling.failure (root height, tilt, allowed contacts, obstacles). */
static int read_cost_and_failure(sc_cfg_node *s, const sc_model *m, sc_tracker_opts *tracker, sc_err *err)
{
    sc_cfg_node *cost, *fail;
    char w[256];
    int rc;
    TRY(sc_cfg_section(s, "cost", &cost, err));
    static const char *const frames[] = {"world", "heading"};
    TRY(sc_cfg_enum(cost, "frame", frames, 2, SC_COST_FRAME_WORLD, &tracker->frame, err));
    for (int i = 0; i < SC_COST_TERMS; i++)
        TRY(sc_cfg_double_range(cost, sc_cost_term_names[i], tracker->weights[i], 0, 1e6, &tracker->weights[i], err));
    TRY(sc_cfg_section(s, "failure", &fail, err));
    double tilt_deg;
    TRY(sc_cfg_double_range(fail, "min_root_height", tracker->min_root_height, 0, 1, &tracker->min_root_height, err));
    TRY(sc_cfg_double_range(fail, "max_tilt", 40, 1, 180, &tilt_deg, err));
    tracker->max_tilt = tilt_deg * SC_PI / 180;
    TRY(sc_cfg_double_range(fail, "allowed_margin", tracker->allowed_margin, 0, 1, &tracker->allowed_margin, err));
    static const char *const obstacles[] = {"allowed", "forbidden"};
    TRY(sc_cfg_enum(fail, "obstacles", obstacles, 2, 0, &tracker->obstacles_forbidden, err));
    sc_cfg_node *allowed = sc_cfg_get(fail, "allowed_contacts");
    if (!allowed || (sc_cfg_is_scalar(allowed) && !strcmp(sc_cfg_scalar(allowed), "reference"))) {
        tracker->allowed_from_reference = 1;
        if (!allowed) {
            char def[32] = "reference";
            TRY(sc_cfg_string(fail, "allowed_contacts", def, def, sizeof def, err));
        }
    } else if (sc_cfg_is_seq(allowed)) {
        tracker->allowed_from_reference = 0;
        for (int i = 0; i < sc_cfg_len(allowed); i++) {
            const char *name = sc_cfg_scalar(sc_cfg_at(allowed, i));
            int b = name ? sc_model_bone_index(m, name) : -1;
            if (b < 0)
                return sc_fail(err, SC_EINPUT, "%s: sampling.failure.allowed_contacts names '%s', which is not a bone of the character",
                               sc_cfg_where(sc_cfg_at(allowed, i), w, sizeof w), name ? name : "?");
            tracker->allowed[b] = 1;
        }
    } else {
        return sc_fail(err, SC_EINPUT,
                       "%s: sampling.failure.allowed_contacts is 'reference' (the bones the reference has on the ground) "
                       "or a list of bone names",
                       sc_cfg_where(allowed, w, sizeof w));
    }
    return SC_OK;
}

int sc_samcon_read_config(sc_cfg *cfg, const sc_model *m, const sc_control_dofs *dofs, sc_samcon_config *c, sc_err *err)
{
    sc_cfg_node *s;
    int rc;
    memset(c, 0, sizeof *c);
    sc_tracker_default_opts(&c->tracker);
    TRY(sc_cfg_section(sc_cfg_root(cfg), "sampling", &s, err));
    TRY(read_search(s, c, err));
    TRY(read_cycle(s, c, err));
    TRY(read_boxes(s, m, dofs, c, err));
    TRY(read_cost_and_failure(s, m, &c->tracker, err));
    return SC_OK;
}

#include <stdio.h>
#include <string.h>
#include "sampling/controller.h"
#include "sampling/segments.h"

const char *const sc_joint_class_names[SC_JOINT_CLASSES] = {"hips", "knees", "ankles", "spine", "shoulders", "others"};

static int has(const char *name, const char *part) { return strstr(name, part) != NULL; }

int sc_joint_class(const char *name)
{
    if (has(name, "forearm") || has(name, "elbow") || has(name, "hand") || has(name, "wrist")) return SC_JOINT_OTHERS;
    if (has(name, "thigh") || has(name, "hip") || has(name, "upleg")) return SC_JOINT_HIPS;
    if (has(name, "shin") || has(name, "knee") || has(name, "leg")) return SC_JOINT_KNEES;
    if (has(name, "foot") || has(name, "ankle") || has(name, "toe")) return SC_JOINT_ANKLES;
    if (has(name, "spine") || has(name, "chest") || has(name, "back") || has(name, "torso") || has(name, "abdomen")) return SC_JOINT_SPINE;
    if (has(name, "upperarm") || has(name, "shoulder") || has(name, "clavicle") || has(name, "arm")) return SC_JOINT_SHOULDERS;
    return SC_JOINT_OTHERS;
}

void sc_control_dofs_init(const sc_model *m, sc_control_dofs *d)
{
    memset(d, 0, sizeof *d);
    static const char axes[] = "xyz";
    for (int b = 0; b < m->nbones; b++) {
        d->first[b] = -1;
        if (m->parent[b] < 0) continue;
        d->first[b] = d->n;
        int hinge = m->joint_type[b] == SC_JOINT_HINGE;
        for (int k = 0; k < (hinge ? 1 : 3); k++) {
            d->bone[d->n] = b;
            d->axis[d->n] = hinge ? -1 : k;
            if (hinge) snprintf(d->name[d->n], sizeof d->name[0], "%s", m->bone_name[b]);
            else snprintf(d->name[d->n], sizeof d->name[0], "%s.%c", m->bone_name[b], axes[k]);
            d->n++;
        }
    }
}

int sc_control_dof_index(const sc_control_dofs *d, const char *name)
{
    for (int i = 0; i < d->n; i++)
        if (!strcmp(d->name[i], name)) return i;
    return -1;
}

void sc_apply_offsets(const sc_model *m, const sc_control_dofs *d, const double *offset, sc_quat *targets)
{
    for (int b = 0; b < m->nbones; b++) {
        int i = d->first[b];
        if (i < 0) continue;
        if (m->joint_type[b] == SC_JOINT_HINGE) {
            if (offset[i] != 0) targets[b] = sc_q_mul(targets[b], sc_q_axis_angle(sc_v3_load(m->hinge_axis + 3 * b), offset[i]));
        } else if (offset[i] != 0 || offset[i + 1] != 0 || offset[i + 2] != 0) {
            targets[b] = sc_q_mul(targets[b], sc_q_exp(sc_v3_load(offset + i)));
        }
    }
}

double sc_segment_ref_time(const sc_segment_controller *c, long step, int *segment)
{
    int lo = 0, hi = c->nseg - 1;
    while (lo < hi) { /* the last segment starting at or before step */
        int mid = lo + (hi - lo + 1) / 2;
        if (c->seg[mid].start_step <= step) lo = mid;
        else hi = mid - 1;
    }
    const sc_segment *s = &c->seg[lo];
    long j = step - s->start_step;
    if (j < 0) j = 0;
    if (j > s->steps) j = s->steps;
    if (segment) *segment = lo;
    return s->ref_t0 + ((double)j / (double)s->steps) * (s->ref_t1 - s->ref_t0);
}

void sc_segment_targets(const sc_segment_controller *c, long step, sc_quat *out)
{
    int k;
    double tr = sc_segment_ref_time(c, step, &k);
    sc_targets_interpolate(c->times, c->n, c->base, c->m->nbones, tr, out);
    sc_apply_offsets(c->m, c->dofs, c->seg[k].offset, out);
}

static void segment_eval(void *ctx, const sc_sim *s, sc_quat *out) { sc_segment_targets(ctx, s->step, out); }

sc_target_source sc_segment_source(const sc_segment_controller *c) { return (sc_target_source){.eval = segment_eval, .ctx = (void *)c}; }

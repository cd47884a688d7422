/* The built-in letters' fibres (letter_fibres.h). */
#include "muscle/letter_fibres.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void sc_letter_muscle_default_opts(sc_letter_muscle_opts *o)
{
    memset(o, 0, sizeof *o);
    o->longitudinal_segments = 12;
    o->radial_segments = 6;
    o->helical_segments = 8;
    o->helical_turns = 0.5;
    o->ring_segments = 20;
    o->inset = 0.55;
    o->margin = 0.03;
    o->stiffness = 2e5;
    o->sigma = 0.05;
    o->min_ratio = 0.5;
}

static const char *const kind_names[3] = {"longitudinal", "radial", "helical"};

static int push_fibre(sc_muscle_defs *d, int *cap, int group, int npoints, sc_err *err)
{
    if (d->nfibres == *cap) {
        int ncap = *cap ? 2 * *cap : 16;
        sc_fibre_def *f = realloc(d->fibres, (size_t)ncap * sizeof *f);
        if (!f) return sc_fail(err, SC_EIO, "letter muscles: out of memory");
        d->fibres = f;
        *cap = ncap;
    }
    sc_fibre_def *f = &d->fibres[d->nfibres];
    f->group = group;
    f->npoints = npoints;
    f->where[0] = 0;
    f->points = malloc(3 * (size_t)npoints * sizeof(double));
    if (!f->points) return sc_fail(err, SC_EIO, "letter muscles: out of memory");
    d->nfibres++;
    return SC_OK;
}

static void put(double *p, sc_vec3 v) { sc_v3_store(p, v); }

int sc_letter_muscles(const sc_letter *l, const sc_letter_muscle_opts *o, sc_muscle_defs *d, sc_err *err)
{
    memset(d, 0, sizeof *d);
    d->ngroups = 3;
    d->group_name = calloc(3, SC_MUSCLE_NAME);
    d->group_kind = calloc(3, sizeof(int));
    if (!d->group_name || !d->group_kind) {
        sc_muscle_defs_free(d);
        return sc_fail(err, SC_EIO, "letter muscles: out of memory");
    }
    for (int g = 0; g < 3; g++) {
        strcpy(d->group_name[g], kind_names[g]);
        d->group_kind[g] = g;
    }
    d->stiffness = o->stiffness;
    d->sigma = o->sigma;
    d->min_ratio = o->min_ratio;
    int cap = 0, rc = SC_OK;
    for (int i = 0; i < l->nstrokes && !rc; i++) {
        if (o->strokes && !(o->strokes >> i & 1)) continue;
        const sc_stroke *s = &l->stroke[i];
        if (s->type == SC_STROKE_RING) { /* two concentric loops in the ring's middle plane */
            sc_vec3 ax = s->across, u = fabs(ax.x) < 0.9 ? sc_v3(1, 0, 0) : sc_v3(0, 1, 0);
            u = sc_v3_normalize(sc_v3_sub(u, sc_v3_scale(ax, sc_v3_dot(u, ax))));
            sc_vec3 w = sc_v3_cross(ax, u);
            for (int loop = 0; loop < 2 && !rc; loop++) {
                const double r = s->radius + (loop ? 1 : -1) * o->inset * s->width / 2;
                const int n = o->ring_segments;
                if (n < 3 || (rc = push_fibre(d, &cap, SC_MUSCLE_LONGITUDINAL, n + 1, err))) break;
                for (int k = 0; k <= n; k++) {
                    const double a = 2 * M_PI * (k % n) / n;
                    put(d->fibres[d->nfibres - 1].points + 3 * k, sc_v3_add(s->a, sc_v3_add(sc_v3_scale(u, r * cos(a)), sc_v3_scale(w, r * sin(a)))));
                }
            }
            continue;
        }
        sc_vec3 axis, side, across;
        const double len = sc_stroke_frame(s, &axis, &side, &across), hw = o->inset * s->width / 2, hd = o->inset * s->depth / 2;
        const double t0 = o->margin, t1 = len - o->margin;
        if (t1 <= t0) return sc_fail(err, SC_EINPUT, "letter muscles: stroke %d is shorter (%.3f m) than its two margins", i, len);
        /* longitudinal: along the four edges */
        for (int c = 0; c < 4 && o->longitudinal_segments > 0 && !rc; c++) {
            const double ss = c & 1 ? hw : -hw, ee = c & 2 ? hd : -hd;
            const int n = o->longitudinal_segments;
            if ((rc = push_fibre(d, &cap, SC_MUSCLE_LONGITUDINAL, n + 1, err))) break;
            for (int k = 0; k <= n; k++) {
                const double t = t0 + (t1 - t0) * k / n;
                put(d->fibres[d->nfibres - 1].points + 3 * k,
                    sc_v3_add(s->a, sc_v3_add(sc_v3_scale(axis, t), sc_v3_add(sc_v3_scale(side, ss), sc_v3_scale(across, ee)))));
            }
        }
        /* radial: loops round the cross-section */
        for (int r = 0; r < o->radial_count && !rc; r++) {
            const int n = o->radial_segments;
            if (n < 3 || (rc = push_fibre(d, &cap, SC_MUSCLE_RADIAL, n + 1, err))) break;
            const double t = t0 + (t1 - t0) * (r + 1) / (o->radial_count + 1);
            for (int k = 0; k <= n; k++) {
                const double a = 2 * M_PI * (k % n) / n;
                put(d->fibres[d->nfibres - 1].points + 3 * k,
                    sc_v3_add(s->a, sc_v3_add(sc_v3_scale(axis, t), sc_v3_add(sc_v3_scale(side, hw * cos(a)), sc_v3_scale(across, hd * sin(a))))));
            }
        }
        /* helical: winding round the stroke, alternate fibres the other way */
        for (int h = 0; h < o->helical_fibres && !rc; h++) {
            const int n = o->helical_segments;
            if (n < 1 || (rc = push_fibre(d, &cap, SC_MUSCLE_HELICAL, n + 1, err))) break;
            const double phase = 2 * M_PI * h / o->helical_fibres, turns = (h & 1 ? -1 : 1) * o->helical_turns;
            for (int k = 0; k <= n; k++) {
                const double u = (double)k / n, a = phase + 2 * M_PI * turns * u, t = t0 + (t1 - t0) * u;
                put(d->fibres[d->nfibres - 1].points + 3 * k,
                    sc_v3_add(s->a, sc_v3_add(sc_v3_scale(axis, t), sc_v3_add(sc_v3_scale(side, hw * cos(a)), sc_v3_scale(across, hd * sin(a))))));
            }
        }
    }
    if (rc) {
        sc_muscle_defs_free(d);
        return rc;
    }
    if (d->nfibres == 0) {
        sc_muscle_defs_free(d);
        return sc_fail(err, SC_EINPUT, "letter muscles: the options give letter %s no fibres", l->name);
    }
    return SC_OK;
}

/* The built-in letters (letters.h). */
#include "mesh/letters.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static sc_stroke box(double ax, double ay, double az, double bx, double by, double bz, double width, double depth)
{
    return (sc_stroke){
        .type = SC_STROKE_BOX, .a = sc_v3(ax, ay, az), .b = sc_v3(bx, by, bz), .width = width, .depth = depth, .across = sc_v3(0, 0, 1)};
}

const char *sc_letter_names(void) { return "I, H, F, T, O, X, I_flat"; }

int sc_letter_get(const char *name, sc_letter *l, sc_err *err)
{
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "%s", name);
    l->round = 0.02;
    sc_stroke *s = l->stroke;
    if (!strcmp(name, "I")) { /* [T12] Figure 5: four longitudinal muscles bend it any way */
        s[l->nstrokes++] = box(0, 0, 0, 0, 1.0, 0, 0.3, 0.3);
    } else if (!strcmp(name, "I_flat")) { /* [T12] 7 crawl: the I flattened and laid down along x */
        s[l->nstrokes++] = box(-0.6, 0.075, 0, 0.6, 0.075, 0, 0.15, 0.3);
    } else if (!strcmp(name, "H")) { /* [T12] Figure 4 */
        s[l->nstrokes++] = box(-0.3, 0, 0, -0.3, 1.0, 0, 0.2, 0.25);
        s[l->nstrokes++] = box(0.3, 0, 0, 0.3, 1.0, 0, 0.2, 0.25);
        s[l->nstrokes++] = box(-0.2, 0.55, 0, 0.2, 0.55, 0, 0.2, 0.25);
    } else if (!strcmp(name, "F")) { /* [T12] Figure 6: a bold F that stands (its rest COM over the stem's base) */
        s[l->nstrokes++] = box(0, 0, 0, 0, 1.0, 0, 0.3, 0.25);
        s[l->nstrokes++] = box(0.15, 0.9, 0, 0.46, 0.9, 0, 0.2, 0.25);
        s[l->nstrokes++] = box(0.15, 0.56, 0, 0.38, 0.56, 0, 0.16, 0.25);
    } else if (!strcmp(name, "T")) { /* [T12] Figure 8: helical muscles in the stem */
        s[l->nstrokes++] = box(0, 0, 0, 0, 0.8, 0, 0.25, 0.25);
        s[l->nstrokes++] = box(-0.45, 0.9, 0, 0.45, 0.9, 0, 0.2, 0.25);
    } else if (!strcmp(name, "O")) { /* [T12] Figure 10c: an annulus rolling in its plane */
        s[l->nstrokes++] =
            (sc_stroke){.type = SC_STROKE_RING, .a = sc_v3(0, 0.5, 0), .radius = 0.4, .width = 0.2, .depth = 0.3, .across = sc_v3(0, 0, 1)};
    } else if (!strcmp(name, "X")) { /* [T12] Figure 9: a quadruped, four legs from a raised centre */
        const double h = 0.35, f = 0.42;
        for (int k = 0; k < 4; k++) {
            const double sx = k & 1 ? 1 : -1, sz = k & 2 ? 1 : -1;
            sc_stroke leg = box(0, h, 0, sx * f, 0.06, sz * f, 0.15, 0.15);
            sc_vec3 axis = sc_v3_normalize(sc_v3_sub(leg.b, leg.a));
            leg.across = sc_v3_normalize(sc_v3_cross(axis, sc_v3(sz, 0, -sx))); /* depth in the leg's vertical plane */
            s[l->nstrokes++] = leg;
        }
    } else return sc_fail(err, SC_EINPUT, "unknown letter '%s' (built-in letters: %s)", name, sc_letter_names());
    /* bounds: every stroke's corners (the ring's box) */
    l->lo = sc_v3(INFINITY, INFINITY, INFINITY);
    l->hi = sc_v3(-INFINITY, -INFINITY, -INFINITY);
    for (int i = 0; i < l->nstrokes; i++) {
        const sc_stroke *st = &l->stroke[i];
        double r = st->type == SC_STROKE_RING ? st->radius + st->width / 2 : 0.5 * hypot(st->width, st->depth);
        sc_vec3 lo = st->type == SC_STROKE_RING ? st->a : sc_v3(fmin(st->a.x, st->b.x), fmin(st->a.y, st->b.y), fmin(st->a.z, st->b.z));
        sc_vec3 hi = st->type == SC_STROKE_RING ? st->a : sc_v3(fmax(st->a.x, st->b.x), fmax(st->a.y, st->b.y), fmax(st->a.z, st->b.z));
        l->lo = sc_v3(fmin(l->lo.x, lo.x - r), fmin(l->lo.y, lo.y - r), fmin(l->lo.z, lo.z - r));
        l->hi = sc_v3(fmax(l->hi.x, hi.x + r), fmax(l->hi.y, hi.y + r), fmax(l->hi.z, hi.z + r));
    }
    if (l->lo.y < 0) l->lo.y = 0;
    return SC_OK;
}

double sc_stroke_frame(const sc_stroke *s, sc_vec3 *axis, sc_vec3 *side, sc_vec3 *across)
{
    sc_vec3 d = sc_v3_sub(s->b, s->a);
    double len = sc_v3_norm(d);
    *axis = sc_v3_scale(d, 1 / len);
    *across = sc_v3_normalize(sc_v3_sub(s->across, sc_v3_scale(*axis, sc_v3_dot(s->across, *axis))));
    *side = sc_v3_cross(*across, *axis);
    return len;
}

/* distance to a rectangle of half sizes (hx, hy) with rounded corners of radius r, in 2D */
static double rect2(double x, double y, double hx, double hy, double r)
{
    double qx = fabs(x) - hx + r, qy = fabs(y) - hy + r;
    return hypot(fmax(qx, 0), fmax(qy, 0)) + fmin(fmax(qx, qy), 0) - r;
}

static double stroke_eval(const sc_stroke *s, double round, sc_vec3 p)
{
    if (s->type == SC_STROKE_RING) {
        sc_vec3 d = sc_v3_sub(p, s->a);
        double h = sc_v3_dot(d, s->across);
        double rho = sc_v3_norm(sc_v3_sub(d, sc_v3_scale(s->across, h)));
        return rect2(rho - s->radius, h, s->width / 2, s->depth / 2, round);
    }
    sc_vec3 axis, side, across;
    double len = sc_stroke_frame(s, &axis, &side, &across);
    sc_vec3 d = sc_v3_sub(p, sc_v3_scale(sc_v3_add(s->a, s->b), 0.5));
    sc_vec3 q = sc_v3(fabs(sc_v3_dot(d, side)) - s->width / 2 + round, fabs(sc_v3_dot(d, axis)) - len / 2 + round,
                      fabs(sc_v3_dot(d, across)) - s->depth / 2 + round);
    return sc_v3_norm(sc_v3(fmax(q.x, 0), fmax(q.y, 0), fmax(q.z, 0))) + fmin(fmax(q.x, fmax(q.y, q.z)), 0) - round;
}

double sc_letter_eval(const sc_letter *l, sc_vec3 p)
{
    double d = INFINITY;
    for (int i = 0; i < l->nstrokes; i++) d = fmin(d, stroke_eval(&l->stroke[i], l->round, p));
    return fmax(d, -p.y); /* flat on the ground: nothing below y = 0 */
}

static double field_eval(const void *ctx, sc_vec3 p) { return sc_letter_eval(ctx, p); }

sc_field sc_letter_field(const sc_letter *l) { return (sc_field){.eval = field_eval, .ctx = l, .lo = l->lo, .hi = l->hi}; }

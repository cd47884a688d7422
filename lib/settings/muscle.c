/* mesh-prep's `muscles:` section (muscle.h). */
#include "settings/muscle.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "muscle/letter_fibres.h"

static const char *const kinds[] = {"longitudinal", "radial", "helical"};

/* The group called name (kind given for a new one); -1 when out of memory. */
static int group_index(sc_muscle_defs *d, const char *name, int kind)
{
    for (int g = 0; g < d->ngroups; g++)
        if (!strcmp(d->group_name[g], name)) return g;
    char(*names)[SC_MUSCLE_NAME] = realloc(d->group_name, (size_t)(d->ngroups + 1) * SC_MUSCLE_NAME);
    if (!names) return -1;
    d->group_name = names;
    int *k = realloc(d->group_kind, (size_t)(d->ngroups + 1) * sizeof(int));
    if (!k) return -1;
    d->group_kind = k;
    snprintf(d->group_name[d->ngroups], SC_MUSCLE_NAME, "%s", name);
    d->group_kind[d->ngroups] = kind;
    return d->ngroups++;
}

static int read_letter(sc_cfg_node *sec, const sc_letter *letter, sc_muscle_defs *d, const sc_letter_muscle_opts *base, sc_err *err)
{
    char w[256];
    if (!letter) return sc_fail(err, SC_EINPUT, "%s: muscles.letter needs a built-in letter body (body.letter)", sc_cfg_where(sec, w, sizeof w));
    sc_letter_muscle_opts o = *base;
    sc_cfg_node *strokes = sc_cfg_get(sec, "strokes"), *radial, *helical;
    long v;
    int rc;
    if (strokes) {
        if (!sc_cfg_is_seq(strokes))
            return sc_fail(err, SC_EINPUT, "%s: muscles.letter.strokes: a list of stroke indices", sc_cfg_where(strokes, w, sizeof w));
        o.strokes = 0;
        for (int i = 0; i < sc_cfg_len(strokes); i++) {
            if ((rc = sc_cfg_scalar_int(sc_cfg_at(strokes, i), 0, letter->nstrokes - 1, &v, err))) return rc;
            o.strokes |= 1u << v;
        }
    }
    const int has_radial = sc_cfg_get(sec, "radial") != NULL, has_helical = sc_cfg_get(sec, "helical") != NULL;
    long lon = o.longitudinal_segments, ring = o.ring_segments, rc_count = 0, rc_segs = o.radial_segments, h_fib = 0, h_segs = o.helical_segments;
    double turns = o.helical_turns;
    if ((rc = sc_cfg_int(sec, "longitudinal_segments", lon, 0, 200, &lon, err)) ||
        (rc = sc_cfg_int(sec, "ring_segments", ring, 3, 400, &ring, err)) || (rc = sc_cfg_section(sec, "radial", &radial, err)) ||
        (rc = sc_cfg_section(sec, "helical", &helical, err)) || (rc = sc_cfg_double_range(sec, "inset", o.inset, 0.05, 0.95, &o.inset, err)) ||
        (rc = sc_cfg_double_range(sec, "margin", o.margin, 0, 1, &o.margin, err)))
        return rc;
    if (has_radial &&
        ((rc = sc_cfg_int(radial, "count", 1, 0, 20, &rc_count, err)) || (rc = sc_cfg_int(radial, "segments", rc_segs, 3, 100, &rc_segs, err))))
        return rc;
    if (has_helical &&
        ((rc = sc_cfg_int(helical, "fibres", 4, 0, 32, &h_fib, err)) || (rc = sc_cfg_int(helical, "segments", h_segs, 1, 200, &h_segs, err)) ||
         (rc = sc_cfg_double_range(helical, "turns", turns, -10, 10, &turns, err))))
        return rc;
    o.longitudinal_segments = (int)lon;
    o.ring_segments = (int)ring;
    o.radial_count = (int)rc_count;
    o.radial_segments = (int)rc_segs;
    o.helical_fibres = (int)h_fib;
    o.helical_segments = (int)h_segs;
    o.helical_turns = turns;
    if ((rc = sc_letter_muscles(letter, &o, d, err))) return sc_err_prefix(err, "%s: ", sc_cfg_where(sec, w, sizeof w));
    for (int f = 0; f < d->nfibres; f++)
        snprintf(d->fibres[f].where, sizeof d->fibres[f].where, "%s: muscles.letter, fibre %d", sc_cfg_where(sec, w, sizeof w), f);
    return SC_OK;
}

static int read_fibres(sc_cfg_node *list, sc_muscle_defs *d, sc_err *err)
{
    char w[256];
    int rc;
    for (int i = 0; i < sc_cfg_len(list); i++) {
        sc_cfg_node *fn = sc_cfg_at(list, i), *pts;
        if (!sc_cfg_is_map(fn))
            return sc_fail(err, SC_EINPUT, "%s: muscles.fibres[%d]: a map with group, kind and points", sc_cfg_where(fn, w, sizeof w), i);
        char name[SC_MUSCLE_NAME];
        int kind;
        if ((rc = sc_cfg_string(fn, "group", "fibres", name, sizeof name, err)) || (rc = sc_cfg_enum(fn, "kind", kinds, 3, 0, &kind, err)) ||
            (rc = sc_cfg_list(fn, "points", 1, &pts, err)))
            return rc;
        const int g = group_index(d, name, kind);
        if (g < 0) return sc_fail(err, SC_EIO, "muscles: out of memory");
        if (d->group_kind[g] != kind)
            return sc_fail(err, SC_EINPUT, "%s: muscles.fibres[%d]: group '%s' was given kind %s before, here %s", sc_cfg_where(fn, w, sizeof w), i,
                           name, kinds[d->group_kind[g]], kinds[kind]);
        sc_fibre_def *nf = realloc(d->fibres, (size_t)(d->nfibres + 1) * sizeof *nf);
        if (!nf) return sc_fail(err, SC_EIO, "muscles: out of memory");
        d->fibres = nf;
        sc_fibre_def *f = &d->fibres[d->nfibres];
        memset(f, 0, sizeof *f);
        f->group = g;
        f->npoints = sc_cfg_len(pts);
        f->points = malloc(3 * (size_t)(f->npoints ? f->npoints : 1) * sizeof(double));
        if (!f->points) return sc_fail(err, SC_EIO, "muscles: out of memory");
        d->nfibres++;
        snprintf(f->where, sizeof f->where, "%s: muscles.fibres[%d]", sc_cfg_where(fn, w, sizeof w), i);
        for (int k = 0; k < f->npoints; k++) {
            sc_cfg_node *p = sc_cfg_at(pts, k);
            if (!sc_cfg_is_seq(p) || sc_cfg_len(p) != 3)
                return sc_fail(err, SC_EINPUT, "%s: muscles.fibres[%d].points[%d]: a point [x, y, z] (m)", sc_cfg_where(p, w, sizeof w), i, k);
            for (int c = 0; c < 3; c++)
                if ((rc = sc_cfg_scalar_double(sc_cfg_at(p, c), &f->points[3 * k + c], err))) return rc;
        }
        if (f->npoints < 2) return sc_fail(err, SC_EINPUT, "%s: a fibre needs at least 2 points", f->where);
    }
    return SC_OK;
}

int sc_muscle_settings_read(sc_cfg *cfg, const sc_letter *letter, sc_muscle_defs *d, int *present, sc_err *err)
{
    memset(d, 0, sizeof *d);
    *present = 0;
    sc_cfg_node *sec = sc_cfg_get(sc_cfg_root(cfg), "muscles"), *lsec = NULL, *fibres;
    if (!sec) return SC_OK;
    *present = 1;
    char w[256];
    sc_letter_muscle_opts base;
    sc_letter_muscle_default_opts(&base);
    const int has_letter = sc_cfg_get(sec, "letter") != NULL;
    int rc;
    if ((rc = sc_cfg_section(sc_cfg_root(cfg), "muscles", &sec, err)) ||
        (rc = sc_cfg_double_range(sec, "stiffness", base.stiffness, 1, 1e9, &base.stiffness, err)) ||
        (rc = sc_cfg_double_range(sec, "sigma", base.sigma, 1e-4, 10, &base.sigma, err)) ||
        (rc = sc_cfg_double(sec, "min_ratio", base.min_ratio, &base.min_ratio, err)) ||
        (has_letter && (rc = sc_cfg_section(sec, "letter", &lsec, err))) || (rc = sc_cfg_list(sec, "fibres", 0, &fibres, err)))
        return rc;
    if (!(base.min_ratio > 0 && base.min_ratio < 1)) {
        sc_cfg_node *n = sc_cfg_get(sec, "min_ratio");
        return sc_fail(err, SC_EINPUT, "%s: muscles.min_ratio %g: the bounds min_ratio l0 <= l_d <= l0 need 0 < min_ratio < 1",
                       sc_cfg_where(n, w, sizeof w), base.min_ratio);
    }
    if (!lsec && !fibres)
        return sc_fail(err, SC_EINPUT, "%s: muscles: give `letter:` (a built-in letter's fibres) or `fibres:`", sc_cfg_where(sec, w, sizeof w));
    if (lsec && (rc = read_letter(lsec, letter, d, &base, err))) {
        sc_muscle_defs_free(d);
        return rc;
    }
    if (!lsec) {
        d->stiffness = base.stiffness;
        d->sigma = base.sigma;
        d->min_ratio = base.min_ratio;
    }
    if (fibres && (rc = read_fibres(fibres, d, err))) {
        sc_muscle_defs_free(d);
        return rc;
    }
    return SC_OK;
}

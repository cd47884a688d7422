/* OBJ reader/writer. Line-based over a bounded buffer (no NUL terminator needed). */
#include "io/paths.h"
#include "io/obj.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"

typedef struct {
    const char *file;
    int line;
    sc_err *err;
} ctx;

static int fail_line(const ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_line(const ctx *c, const char *fmt, ...)
{
    if (!c->err) return SC_EINPUT;
    char msg[SC_ERR_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sc_fail(c->err, SC_EINPUT, "%s:%d: %s", c->file, c->line, msg);
}

/* Printable, truncated copy of s[0..n) for messages. */
static const char *show(const char *s, size_t n, char *buf, size_t sz)
{
    size_t m = n < sz - 1 ? n : sz - 1;
    for (size_t k = 0; k < m; k++) {
        unsigned char ch = (unsigned char)s[k];
        buf[k] = (ch < 32 || ch == 127) ? '?' : (char)ch;
    }
    buf[m] = 0;
    if (n > m && m >= 3) memcpy(buf + m - 3, "...", 3);
    return buf;
}

static int is_sp(char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v'; }

/* Next whitespace-separated token in [*p, end). */
static int tok(const char **p, const char *end, const char **ts, size_t *tl)
{
    const char *s = *p;
    while (s < end && is_sp(*s)) s++;
    if (s >= end) {
        *p = s;
        return 0;
    }
    const char *e = s;
    while (e < end && !is_sp(*e)) e++;
    *ts = s;
    *tl = (size_t)(e - s);
    *p = e;
    return 1;
}

static int num(const char *s, size_t n, double *out)
{
    char buf[128];
    if (n == 0 || n >= sizeof buf) return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *e;
    double v = strtod(buf, &e);
    if (e != buf + n || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

static int integer(const char *s, size_t n, long long *out)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf) return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *e;
    errno = 0;
    long long v = strtoll(buf, &e, 10);
    if (e != buf + n || errno) return 0;
    *out = v;
    return 1;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem, sc_err *err)
{
    if (need <= *cap) return SC_OK;
    if (need > (size_t)INT_MAX) return sc_fail(err, SC_EINPUT, "OBJ too large");
    size_t nc = *cap ? *cap : 256;
    while (nc < need) nc *= 2;
    void *q = realloc(*p, nc * elem);
    if (!q) return sc_fail(err, SC_EIO, "out of memory (%zu x %zu bytes)", nc, elem);
    *p = q;
    *cap = nc;
    return SC_OK;
}

static int is_word(const char *s, size_t n, const char *w) { return strlen(w) == n && memcmp(s, w, n) == 0; }

#define SHOW_LEN 80

/* A `v` statement's coordinates (the rest of the line from p): x y z, optionally w or r g b. */
static int parse_vertex(const ctx *c, const char *p, const char *end, sc_trimesh *out, size_t *vcap, sc_err *err)
{
    char sb[SHOW_LEN];
    int rc;
    double xyz[3];
    int k = 0;
    const char *vs;
    size_t vl;
    while (tok(&p, end, &vs, &vl)) {
        double v;
        if (!num(vs, vl, &v)) return fail_line(c, "malformed vertex coordinate '%s'", show(vs, vl, sb, SHOW_LEN));
        if (k < 3) xyz[k] = v;
        k++;
    }
    if (k < 3) return fail_line(c, "vertex needs 3 coordinates, found %d", k);
    if (k > 7) return fail_line(c, "vertex has %d numbers (expected x y z, optionally w or r g b)", k);
    if ((rc = grow((void **)&out->verts, vcap, 3 * (size_t)out->nverts + 3, sizeof(double), err))) return rc;
    memcpy(out->verts + 3 * (size_t)out->nverts, xyz, sizeof xyz);
    out->nverts++;
    return SC_OK;
}

/* An `f` statement (v, v/vt, v//vn or v/vt/vn per corner): a fan of triangles from its first
   vertex, degenerate ones dropped (counted in inf). poly: scratch for the corners. */
static int parse_face(const ctx *c, const char *p, const char *end, sc_trimesh *out, size_t *tcap, int **poly, size_t *pcap, sc_obj_info *inf,
                      sc_err *err)
{
    char sb[SHOW_LEN];
    int rc = SC_OK;
    int nv = 0;
    const char *vs;
    size_t vl;
    while (tok(&p, end, &vs, &vl)) {
        /* v, v/vt, v//vn, v/vt/vn */
        const char *part[3];
        size_t plen[3];
        int np = 0;
        size_t a = 0;
        for (size_t k = 0; k <= vl; k++) {
            if (k == vl || vs[k] == '/') {
                if (np == 3) {
                    np = 4;
                    break;
                }
                part[np] = vs + a;
                plen[np] = k - a;
                np++;
                a = k + 1;
            }
        }
        long long idx[3] = {0, 0, 0};
        int ok = np >= 1 && np <= 3 && integer(part[0], plen[0], &idx[0]);
        if (ok && np >= 2 && !(plen[1] == 0 && np == 3)) ok = integer(part[1], plen[1], &idx[1]);
        if (ok && np == 3) ok = integer(part[2], plen[2], &idx[2]);
        if (!ok) return fail_line(c, "malformed face vertex '%s' (expected v, v/vt, v//vn or v/vt/vn)", show(vs, vl, sb, SHOW_LEN));
        long long r = idx[0] < 0 ? out->nverts + idx[0] + 1 : idx[0];
        if (idx[0] == 0 || r < 1 || r > out->nverts)
            return fail_line(c, "face index %lld out of range (%d vertices so far%s)", idx[0], out->nverts,
                             idx[0] == 0 ? "; OBJ indices start at 1" : "");
        if ((rc = grow((void **)poly, pcap, (size_t)nv + 1, sizeof(int), err))) return rc;
        (*poly)[nv++] = (int)(r - 1);
    }
    if (nv < 3) return fail_line(c, "face needs at least 3 vertices, found %d", nv);
    inf->nfaces++;
    if (nv > 3) inf->npolygons++;
    /* fan from the first vertex */
    for (int k = 1; k + 1 < nv; k++) {
        int t0 = (*poly)[0], t1 = (*poly)[k], t2 = (*poly)[k + 1];
        if (t0 == t1 || t1 == t2 || t0 == t2) {
            inf->ndropped++;
            continue;
        }
        if ((rc = grow((void **)&out->tris, tcap, 3 * (size_t)out->ntris + 3, sizeof(int), err))) return rc;
        int *t = out->tris + 3 * (size_t)out->ntris;
        t[0] = t0;
        t[1] = t1;
        t[2] = t2;
        out->ntris++;
    }
    return rc;
}

int sc_obj_parse_ex(const char *text, size_t len, const char *name_for_errors, sc_trimesh *out, sc_obj_info *info, sc_err *err)
{
    memset(out, 0, sizeof *out);
    sc_obj_info inf = {0, 0, 0};
    ctx c = {name_for_errors ? name_for_errors : "<obj>", 0, err};
    size_t vcap = 0, tcap = 0, pcap = 0;
    int *poly = NULL;
    int rc = SC_OK;
    char sb[SHOW_LEN];
    static const char *const ignored[] = {"vn", "vt", "vp", "g", "o", "s", "l", "p", "usemtl", "mtllib"};
    size_t i = 0;
    if (!text) len = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) i = 3;
    while (i < len && rc == SC_OK) {
        /* one line: [ls, le); '\n', "\r\n" or a lone '\r' ends it */
        size_t ls = i;
        while (i < len && text[i] != '\n' && text[i] != '\r') i++;
        size_t le = i;
        if (i < len) i += (text[i] == '\r' && i + 1 < len && text[i + 1] == '\n') ? 2 : 1;
        c.line++;
        const char *p = text + ls, *end = text + le;
        const char *hash = memchr(p, '#', le - ls);
        if (hash) end = hash;
        const char *ts;
        size_t tl;
        if (!tok(&p, end, &ts, &tl)) continue;
        if (is_word(ts, tl, "v")) {
            rc = parse_vertex(&c, p, end, out, &vcap, err);
        } else if (is_word(ts, tl, "f")) {
            rc = parse_face(&c, p, end, out, &tcap, &poly, &pcap, &inf, err);
        } else {
            int known = 0;
            for (size_t k = 0; k < sizeof ignored / sizeof *ignored; k++) known |= is_word(ts, tl, ignored[k]);
            if (!known) rc = fail_line(&c, "unknown statement '%s'", show(ts, tl, sb, sizeof sb));
        }
    }
    free(poly);
    if (!rc && out->ntris == 0)
        rc = sc_fail(err, SC_EINPUT, "%s: no faces%s (%d vertices)", c.file, inf.ndropped ? " left after dropping degenerate ones" : "", out->nverts);
    if (rc) {
        sc_trimesh_free(out);
        return rc;
    }
    if (inf.ndropped) sc_log_warn("%s: dropped %d degenerate triangles", c.file, inf.ndropped);
    if (info) *info = inf;
    return SC_OK;
}

int sc_obj_parse(const char *text, size_t len, const char *name_for_errors, sc_trimesh *out, sc_err *err)
{
    return sc_obj_parse_ex(text, len, name_for_errors, out, NULL, err);
}

int sc_obj_load_ex(const char *path, sc_trimesh *out, sc_obj_info *info, sc_err *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return sc_fail(err, SC_EIO, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int rc = buf ? SC_OK : sc_fail(err, SC_EIO, "out of memory reading %s", path);
    while (!rc) {
        if (n == cap) {
            if (cap >= SC_OBJ_MAX_BYTES) { /* /dev/zero, a runaway pipe: checked as read */
                rc = sc_fail(err, SC_EINPUT, "%s: more than an OBJ softcon reads (%llu bytes)", path, (unsigned long long)SC_OBJ_MAX_BYTES);
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                rc = sc_fail(err, SC_EIO, "out of memory reading %s", path);
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (!rc && ferror(f)) rc = sc_fail(err, SC_EIO, "cannot read %s: %s", path, strerror(errno));
    fclose(f);
    if (!rc) rc = sc_obj_parse_ex(buf, n, path, out, info, err);
    free(buf);
    return rc;
}

int sc_obj_load(const char *path, sc_trimesh *out, sc_err *err) { return sc_obj_load_ex(path, out, NULL, err); }

void sc_trimesh_free(sc_trimesh *m)
{
    if (!m) return;
    free(m->verts);
    free(m->tris);
    memset(m, 0, sizeof *m);
}

static void fmt_exact(char *buf, size_t sz, double v)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, sz, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

int sc_obj_write(const char *path, const sc_trimesh *m, sc_err *err)
{
    if (m->nverts < 0 || m->ntris < 0 || (m->nverts && !m->verts) || (m->ntris && !m->tris))
        return sc_fail(err, SC_EINPUT, "invalid mesh (%d vertices, %d triangles)", m->nverts, m->ntris);
    for (size_t k = 0; k < 3 * (size_t)m->nverts; k++)
        if (!isfinite(m->verts[k])) return sc_fail(err, SC_EINPUT, "vertex %zu has a non-finite coordinate", k / 3);
    for (size_t k = 0; k < 3 * (size_t)m->ntris; k++)
        if (m->tris[k] < 0 || m->tris[k] >= m->nverts)
            return sc_fail(err, SC_EINPUT, "triangle %zu: vertex index %d out of range (%d vertices)", k / 3, m->tris[k], m->nverts);
    char tmp[4096];
    FILE *f = sc_file_open_tmp(path, "wb", tmp, sizeof tmp, err);
    if (!f) return err->code;
    fprintf(f, "# softcon %d vertices %d triangles\n", m->nverts, m->ntris);
    char a[40], b[40], c[40];
    for (int v = 0; v < m->nverts; v++) {
        fmt_exact(a, sizeof a, m->verts[3 * v]);
        fmt_exact(b, sizeof b, m->verts[3 * v + 1]);
        fmt_exact(c, sizeof c, m->verts[3 * v + 2]);
        fprintf(f, "v %s %s %s\n", a, b, c);
    }
    for (int t = 0; t < m->ntris; t++) fprintf(f, "f %d %d %d\n", m->tris[3 * t] + 1, m->tris[3 * t + 1] + 1, m->tris[3 * t + 2] + 1);
    return sc_file_commit(f, tmp, path, err);
}

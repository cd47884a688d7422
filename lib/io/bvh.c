/* BVH reader/writer. The text is read through a bounded cursor (never past len, no NUL
 * needed) so truncated or garbage input cannot run off the buffer. */
#include "core/cleanup.h"
#include "io/paths.h"
#include "io/bvh.h"
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define TOK_MAX 128
#define NUM_MAX 128

static const char *const k_chan_names[6] = {"Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation"};

const char *sc_bvh_channel_name(int channel) { return channel >= 0 && channel < 6 ? k_chan_names[channel] : "?"; }

/* ---------------------------------------------------------------- cursor */

typedef struct {
    const char *s;
    size_t n, i;
    int line;
    const char *file;
    sc_err *err;
} cursor;

/* A line ends at '\n' or at a lone '\r' (old Mac); "\r\n" counts once. */
static int at_eol(const cursor *c)
{
    if (c->i >= c->n) return 1;
    char ch = c->s[c->i];
    return ch == '\n' || (ch == '\r' && (c->i + 1 >= c->n || c->s[c->i + 1] != '\n'));
}

static int is_blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\f' || ch == '\v' || ch == '\r'; }

/* Skip blanks on the current line (a '\r' of a "\r\n" pair is a blank). */
static void skip_blanks(cursor *c)
{
    while (c->i < c->n && !at_eol(c) && is_blank(c->s[c->i])) c->i++;
}

/* Step over one line ending, if at one. */
static void skip_eol(cursor *c)
{
    if (c->i < c->n && at_eol(c)) {
        c->i++;
        c->line++;
    }
}

static void skip_ws_lines(cursor *c)
{
    for (;;) {
        skip_blanks(c);
        if (c->i >= c->n || !at_eol(c)) return;
        skip_eol(c);
    }
}

static int is_delim(const cursor *c, size_t i)
{
    char ch = c->s[i];
    return ch == ' ' || ch == '\t' || ch == '\f' || ch == '\v' || ch == '\r' || ch == '\n' || ch == '{' || ch == '}';
}

/* Next token on the current line ('{' and '}' are tokens of their own); 0 at end of line.
 * start and len locate it in the text. */
static int next_tok(cursor *c, size_t *start, size_t *len)
{
    skip_blanks(c);
    if (c->i >= c->n || at_eol(c)) return 0;
    *start = c->i;
    if (c->s[c->i] == '{' || c->s[c->i] == '}') {
        c->i++;
    } else {
        while (c->i < c->n && !is_delim(c, c->i)) c->i++;
    }
    *len = c->i - *start;
    return 1;
}

/* Next token, crossing line endings. */
static int next_tok_any(cursor *c, size_t *start, size_t *len)
{
    skip_ws_lines(c);
    return next_tok(c, start, len);
}

/* Printable copy of a token for messages (truncated, control bytes as '?'). */
static const char *tok_str(const cursor *c, size_t start, size_t len, char *buf, size_t bufsz)
{
    size_t m = len < bufsz - 1 ? len : bufsz - 1;
    for (size_t k = 0; k < m; k++) {
        unsigned char ch = (unsigned char)c->s[start + k];
        buf[k] = (ch < 32 || ch == 127) ? '?' : (char)ch;
    }
    buf[m] = 0;
    if (len > m && m >= 3) memcpy(buf + m - 3, "...", 3);
    return buf;
}

static int tok_is(const cursor *c, size_t start, size_t len, const char *word)
{
    size_t wl = strlen(word);
    return len == wl && strncasecmp(c->s + start, word, wl) == 0;
}

#define FAILC(c, ...) fail_at((c), (c)->line, __VA_ARGS__)
static int fail_at(const cursor *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_at(const cursor *c, int line, const char *fmt, ...)
{
    if (!c->err) return SC_EINPUT;
    char msg[SC_ERR_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sc_fail(c->err, SC_EINPUT, "%s:%d: %s", c->file, line, msg);
}

/* Parse a token as a double. Returns 0 ok, 1 not a number, 2 not finite. */
static int parse_double(const cursor *c, size_t start, size_t len, double *out)
{
    char buf[NUM_MAX];
    if (len == 0 || len >= sizeof buf) return 1;
    memcpy(buf, c->s + start, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end != buf + len) return 1;
    if (!isfinite(v)) return 2;
    *out = v;
    return 0;
}

static int parse_int(const cursor *c, size_t start, size_t len, long *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf) return 1;
    memcpy(buf, c->s + start, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (end != buf + len || errno) return 1;
    *out = v;
    return 0;
}

/* ---------------------------------------------------------------- growable arrays */

static int grow(void **p, int *cap, int need, size_t elem, sc_err *err)
{
    if (need <= *cap) return SC_OK;
    if (need > INT_MAX / 2) return sc_fail(err, SC_EINPUT, "BVH too large (%d elements)", need);
    int nc = *cap ? *cap : 16;
    while (nc < need) nc *= 2;
    void *q = realloc(*p, (size_t)nc * elem);
    if (!q) return sc_fail(err, SC_EIO, "out of memory (%d x %zu bytes)", nc, elem);
    *p = q;
    *cap = nc;
    return SC_OK;
}

/* ---------------------------------------------------------------- HIERARCHY */

typedef struct {
    cursor c;
    sc_bvh *b;
    int cap;              /* capacity of b->joints, flags */
    unsigned char *flags; /* per joint: bit 0 OFFSET seen, bit 1 CHANNELS seen */
    int *stack;           /* open joints */
    int depth;
    int *open_line; /* line of each joint's header */
} parser;

static int add_joint(parser *p, int parent, int line)
{
    sc_bvh *b = p->b;
    int cap = p->cap, rc;
    if (b->njoints >= SC_BVH_MAX_JOINTS)
        return fail_at(&p->c, line, "more than %d joints (End Sites included): not a skeleton softcon can use", SC_BVH_MAX_JOINTS);
    if ((rc = grow((void **)&b->joints, &cap, b->njoints + 1, sizeof *b->joints, p->c.err))) return rc;
    cap = p->cap;
    if ((rc = grow((void **)&p->flags, &cap, b->njoints + 1, 1, p->c.err))) return rc;
    cap = p->cap;
    if ((rc = grow((void **)&p->stack, &cap, b->njoints + 1, sizeof(int), p->c.err))) return rc;
    cap = p->cap;
    if ((rc = grow((void **)&p->open_line, &cap, b->njoints + 1, sizeof(int), p->c.err))) return rc;
    p->cap = cap;
    int j = b->njoints++;
    sc_bvh_joint *jt = &b->joints[j];
    memset(jt, 0, sizeof *jt);
    jt->parent = parent;
    jt->channel_offset = b->nchannels;
    p->flags[j] = 0;
    p->open_line[j] = line;
    p->stack[p->depth++] = j;
    return SC_OK;
}

static int expect_open(cursor *c, const char *what)
{
    size_t ts, tl;
    char tb[80];
    if (!next_tok_any(c, &ts, &tl)) return FAILC(c, "unexpected end of file: expected '{' after %s", what);
    if (!tok_is(c, ts, tl, "{")) return FAILC(c, "expected '{' after %s, found '%s'", what, tok_str(c, ts, tl, tb, sizeof tb));
    return SC_OK;
}

/* ROOT/JOINT header: name = rest of the line up to '{' (trimmed), then '{' (same or next line). */
static int joint_header(parser *p, int parent, const char *kw)
{
    cursor *c = &p->c;
    int line = c->line;
    skip_blanks(c);
    size_t s = c->i;
    while (c->i < c->n && !at_eol(c) && c->s[c->i] != '{' && c->s[c->i] != '}') c->i++;
    size_t e = c->i;
    while (e > s && is_blank(c->s[e - 1])) e--;
    if (e == s) return FAILC(c, "expected a joint name after %s", kw);
    char tb[80];
    if (e - s > 63) return FAILC(c, "joint name '%s' too long (at most 63 characters)", tok_str(c, s, e - s, tb, sizeof tb));
    for (size_t k = s; k < e; k++) {
        unsigned char ch = (unsigned char)c->s[k];
        if (ch < 32 || ch == 127) return FAILC(c, "control character in joint name '%s'", tok_str(c, s, e - s, tb, sizeof tb));
    }
    char name[64];
    memcpy(name, c->s + s, e - s);
    name[e - s] = 0;
    for (int j = 0; j < p->b->njoints; j++)
        if (!p->b->joints[j].end_site && strcmp(p->b->joints[j].name, name) == 0)
            return FAILC(c, "duplicate joint name '%s' (first defined at line %d)", name, p->open_line[j]);
    char what[80];
    snprintf(what, sizeof what, "%s %s", kw, name);
    int rc = expect_open(c, what);
    if (rc) return rc;
    rc = add_joint(p, parent, line);
    if (rc) return rc;
    memcpy(p->b->joints[p->b->njoints - 1].name, name, e - s + 1);
    return SC_OK;
}

static int end_site(parser *p, int parent)
{
    cursor *c = &p->c;
    int line = c->line;
    size_t ts, tl;
    if (!next_tok(c, &ts, &tl) || !tok_is(c, ts, tl, "Site")) return FAILC(c, "expected 'Site' after 'End'");
    int rc = expect_open(c, "End Site");
    if (rc) return rc;
    rc = add_joint(p, parent, line);
    if (rc) return rc;
    sc_bvh_joint *jt = &p->b->joints[p->b->njoints - 1];
    jt->end_site = 1;
    /* "<parent>_End", or "<parent>_End2", ... when a joint has several End Sites. */
    char pn[64];
    memcpy(pn, p->b->joints[parent].name, sizeof pn);
    snprintf(jt->name, sizeof jt->name, "%.58s_End", pn);
    for (int k = 2; sc_bvh_find(p->b, jt->name) != p->b->njoints - 1 && k < 1000; k++) snprintf(jt->name, sizeof jt->name, "%.56s_End%d", pn, k);
    return SC_OK;
}

static int offset_line(parser *p, int j)
{
    cursor *c = &p->c;
    sc_bvh_joint *jt = &p->b->joints[j];
    char tb[80];
    if (p->flags[j] & 1) return FAILC(c, "second OFFSET in joint '%s'", jt->name);
    p->flags[j] |= 1;
    double v[3];
    for (int k = 0; k < 3; k++) {
        size_t ts, tl;
        if (!next_tok(c, &ts, &tl)) return FAILC(c, "OFFSET of '%s' needs 3 numbers, found %d", jt->name, k);
        int r = parse_double(c, ts, tl, &v[k]);
        if (r) return FAILC(c, "OFFSET of '%s': '%s' is not a %s", jt->name, tok_str(c, ts, tl, tb, sizeof tb), r == 2 ? "finite number" : "number");
        if (fabs(v[k]) > SC_BVH_MAX_POSITION)
            return FAILC(c, "OFFSET of '%s': %s is implausibly large (more than %g file units)", jt->name, tok_str(c, ts, tl, tb, sizeof tb),
                         SC_BVH_MAX_POSITION);
    }
    size_t ts, tl;
    if (next_tok(c, &ts, &tl)) return FAILC(c, "OFFSET of '%s' needs 3 numbers, found extra '%s'", jt->name, tok_str(c, ts, tl, tb, sizeof tb));
    jt->offset = sc_v3(v[0], v[1], v[2]);
    return SC_OK;
}

static int channels_line(parser *p, int j)
{
    cursor *c = &p->c;
    sc_bvh *b = p->b;
    sc_bvh_joint *jt = &b->joints[j];
    char tb[80];
    if (jt->end_site) return FAILC(c, "an End Site cannot have CHANNELS");
    if (p->flags[j] & 2) return FAILC(c, "second CHANNELS in joint '%s'", jt->name);
    if (j != b->njoints - 1) return FAILC(c, "CHANNELS of '%s' must come before its child joints", jt->name);
    p->flags[j] |= 2;
    size_t ts, tl;
    long n;
    if (!next_tok(c, &ts, &tl)) return FAILC(c, "expected a channel count after CHANNELS");
    if (parse_int(c, ts, tl, &n) || n < 0 || n > 6)
        return FAILC(c, "CHANNELS count '%s' is not an integer in 0..6", tok_str(c, ts, tl, tb, sizeof tb));
    int k = 0;
    while (next_tok(c, &ts, &tl)) {
        int ch = -1;
        for (int q = 0; q < 6; q++)
            if (tok_is(c, ts, tl, k_chan_names[q])) ch = q;
        if (ch < 0)
            return FAILC(c,
                         "unknown channel '%s' in joint '%s' (expected Xposition, Yposition, Zposition, "
                         "Xrotation, Yrotation or Zrotation)",
                         tok_str(c, ts, tl, tb, sizeof tb), jt->name);
        if (k >= n) return FAILC(c, "CHANNELS count %ld of joint '%s' does not match the channel names (more than %ld)", n, jt->name, n);
        for (int q = 0; q < k; q++)
            if (jt->channel[q] == ch) return FAILC(c, "channel %s repeated in joint '%s'", k_chan_names[ch], jt->name);
        jt->channel[k++] = ch;
    }
    if (k != n) return FAILC(c, "CHANNELS count %ld of joint '%s' does not match the %d channel names", n, jt->name, k);
    jt->nchannels = k;
    jt->channel_offset = b->nchannels;
    if (b->nchannels > INT_MAX - 6) return FAILC(c, "too many channels");
    b->nchannels += k;
    return SC_OK;
}

static int close_joint(parser *p)
{
    cursor *c = &p->c;
    int j = p->stack[p->depth - 1];
    if (!(p->flags[j] & 1)) return FAILC(c, "joint '%s' (line %d) has no OFFSET", p->b->joints[j].name, p->open_line[j]);
    p->depth--;
    return SC_OK;
}

static int parse_hierarchy(parser *p)
{
    cursor *c = &p->c;
    size_t ts, tl;
    char tb[80];
    int rc;
    if (c->n >= 3 && memcmp(c->s, "\xEF\xBB\xBF", 3) == 0) c->i = 3; /* UTF-8 BOM */
    if (!next_tok_any(c, &ts, &tl)) return FAILC(c, "empty file (expected HIERARCHY)");
    if (!tok_is(c, ts, tl, "HIERARCHY")) return FAILC(c, "expected HIERARCHY, found '%s'", tok_str(c, ts, tl, tb, sizeof tb));
    for (;;) {
        if (!next_tok_any(c, &ts, &tl)) {
            if (p->depth > 0) {
                int j = p->stack[p->depth - 1];
                return FAILC(c, "unexpected end of file: missing '}' for joint '%s' opened at line %d", p->b->joints[j].name, p->open_line[j]);
            }
            return FAILC(c, "unexpected end of file: expected %s", p->b->njoints ? "ROOT or MOTION" : "ROOT");
        }
        if (p->depth == 0) {
            if (tok_is(c, ts, tl, "ROOT")) {
                if ((rc = joint_header(p, -1, "ROOT"))) return rc;
            } else if (tok_is(c, ts, tl, "MOTION")) {
                if (p->b->njoints == 0) return FAILC(c, "MOTION before any ROOT");
                break;
            } else {
                return FAILC(c, "unknown keyword '%s' (expected %s)", tok_str(c, ts, tl, tb, sizeof tb), p->b->njoints ? "ROOT or MOTION" : "ROOT");
            }
            continue;
        }
        int j = p->stack[p->depth - 1];
        const sc_bvh_joint *jt = &p->b->joints[j];
        if (tok_is(c, ts, tl, "OFFSET")) {
            rc = offset_line(p, j);
        } else if (tok_is(c, ts, tl, "CHANNELS")) {
            rc = channels_line(p, j);
        } else if (tok_is(c, ts, tl, "JOINT")) {
            rc = jt->end_site ? FAILC(c, "an End Site cannot have a child JOINT (missing '}'?)") : joint_header(p, j, "JOINT");
        } else if (tok_is(c, ts, tl, "End")) {
            rc = jt->end_site ? FAILC(c, "an End Site cannot contain another End Site (missing '}'?)") : end_site(p, j);
        } else if (tok_is(c, ts, tl, "}")) {
            rc = close_joint(p);
        } else if (tok_is(c, ts, tl, "MOTION") || tok_is(c, ts, tl, "ROOT")) {
            rc = FAILC(c, "'%s' inside joint '%s': missing '}' for the joint opened at line %d", tok_str(c, ts, tl, tb, sizeof tb), jt->name,
                       p->open_line[j]);
        } else {
            rc = FAILC(c, "unknown keyword '%s' in joint '%s' (expected OFFSET, CHANNELS, JOINT, End Site or '}')", tok_str(c, ts, tl, tb, sizeof tb),
                       jt->name);
        }
        if (rc) return rc;
    }
    if (p->b->nchannels == 0) return FAILC(c, "the HIERARCHY declares no channels");
    return SC_OK;
}

/* ---------------------------------------------------------------- MOTION */

/* "Key:" or "Key :" (key may be two words, "Frame Time"). */
static int expect_key(cursor *c, const char *w1, const char *w2)
{
    size_t ts, tl;
    char tb[80], want[32];
    snprintf(want, sizeof want, "%s%s%s:", w1, w2 ? " " : "", w2 ? w2 : "");
    if (!next_tok_any(c, &ts, &tl)) return FAILC(c, "unexpected end of file: expected '%s'", want);
    const char *last = w1;
    if (w2) {
        if (!tok_is(c, ts, tl, w1)) return FAILC(c, "expected '%s', found '%s'", want, tok_str(c, ts, tl, tb, sizeof tb));
        if (!next_tok(c, &ts, &tl)) return FAILC(c, "expected '%s'", want);
        last = w2;
    }
    size_t ll = strlen(last);
    if (tl == ll + 1 && strncasecmp(c->s + ts, last, ll) == 0 && c->s[ts + ll] == ':') return SC_OK;
    if (tok_is(c, ts, tl, last)) {
        if (next_tok(c, &ts, &tl) && tok_is(c, ts, tl, ":")) return SC_OK;
    }
    return FAILC(c, "expected '%s', found '%s'", want, tok_str(c, ts, tl, tb, sizeof tb));
}

static int rest_of_line_empty(cursor *c, const char *after)
{
    size_t ts, tl;
    char tb[80];
    if (next_tok(c, &ts, &tl)) return FAILC(c, "unexpected '%s' after %s", tok_str(c, ts, tl, tb, sizeof tb), after);
    return SC_OK;
}

static int chan_joint(const sc_bvh *b, int k)
{
    for (int j = 0; j < b->njoints; j++)
        if (k >= b->joints[j].channel_offset && k < b->joints[j].channel_offset + b->joints[j].nchannels) return j;
    return 0;
}

static int parse_motion(parser *p)
{
    cursor *c = &p->c;
    sc_bvh *b = p->b;
    size_t ts, tl;
    char tb[80];
    long nf;
    int rc;
    if ((rc = rest_of_line_empty(c, "MOTION"))) return rc;
    if ((rc = expect_key(c, "Frames", NULL))) return rc;
    if (!next_tok(c, &ts, &tl)) return FAILC(c, "expected a frame count after 'Frames:'");
    if (parse_int(c, ts, tl, &nf) || nf < 0 || nf > INT_MAX / 2)
        return FAILC(c, "frame count '%s' is not a valid non-negative integer", tok_str(c, ts, tl, tb, sizeof tb));
    if ((rc = rest_of_line_empty(c, "the frame count"))) return rc;
    if ((rc = expect_key(c, "Frame", "Time"))) return rc;
    if (!next_tok(c, &ts, &tl)) return FAILC(c, "expected a value after 'Frame Time:'");
    double ft;
    if (parse_double(c, ts, tl, &ft) || !(ft > 0)) return FAILC(c, "Frame Time '%s' must be a positive number", tok_str(c, ts, tl, tb, sizeof tb));
    if ((rc = rest_of_line_empty(c, "the Frame Time"))) return rc;
    b->frame_time = ft;

    const int nch = b->nchannels;
    /* A frame needs at least 2 bytes per value, which bounds what can be present. */
    size_t present_max = (c->n - c->i) / (2 * (size_t)nch) + 1;
    size_t cap = (size_t)nf < present_max ? (size_t)nf : present_max;
    if (cap > (size_t)INT_MAX / (size_t)nch) return FAILC(c, "too many values in MOTION");
    b->frames = malloc((cap ? cap : 1) * (size_t)nch * sizeof(double));
    if (!b->frames) return sc_fail(c->err, SC_EIO, "out of memory for %zu frames", cap);
    /* per channel of a frame: 0 position, 1 rotation, for the magnitude check */
    unsigned char kind[6 * SC_BVH_MAX_JOINTS];
    static const double k_limit[2] = {SC_BVH_MAX_POSITION, SC_BVH_MAX_ROTATION};
    for (int j = 0; j < b->njoints; j++)
        for (int q = 0; q < b->joints[j].nchannels; q++) kind[b->joints[j].channel_offset + q] = b->joints[j].channel[q] >= SC_BVH_XROT;
    int f = 0;
    for (;;) {
        skip_ws_lines(c);
        if (c->i >= c->n) break;
        int line = c->line;
        if (f >= nf) {
            next_tok(c, &ts, &tl);
            return fail_at(c, line, "unexpected '%s' after the last frame ('Frames: %ld' declared)", tok_str(c, ts, tl, tb, sizeof tb), nf);
        }
        if ((size_t)f >= cap) return fail_at(c, line, "internal: frame buffer exhausted"); /* cannot happen */
        double *row = b->frames + (size_t)f * nch;
        int k = 0;
        while (next_tok(c, &ts, &tl)) {
            if (k < nch) {
                int r = parse_double(c, ts, tl, &row[k]);
                const sc_bvh_joint *jt = r || !(fabs(row[k]) <= k_limit[kind[k]]) ? &b->joints[chan_joint(b, k)] : NULL;
                if (r) {
                    int ch = jt->channel[k - jt->channel_offset];
                    return fail_at(c, line, "frame %d, joint %s, channel %s: '%s' is not a %s (frames counted from 0)", f, jt->name, k_chan_names[ch],
                                   tok_str(c, ts, tl, tb, sizeof tb), r == 2 ? "finite number" : "number");
                }
                if (jt) {
                    int ch = jt->channel[k - jt->channel_offset];
                    return fail_at(c, line,
                                   "frame %d, joint %s, channel %s: %s is implausibly large (more than %g %s; "
                                   "frames counted from 0)",
                                   f, jt->name, k_chan_names[ch], tok_str(c, ts, tl, tb, sizeof tb), k_limit[kind[k]],
                                   kind[k] ? "degrees" : "file units");
                }
            }
            if (k < INT_MAX) k++;
        }
        if (k != nch)
            return fail_at(c, line,
                           "frame %d has %s values (%d), expected %d (a frame must be exactly one line; frames "
                           "counted from 0)",
                           f, k < nch ? "too few" : "too many", k, nch);
        f++;
    }
    if (f < nf) return FAILC(c, "truncated MOTION: expected %ld frames, found %d", nf, f);
    b->nframes = f;
    return SC_OK;
}

int sc_bvh_parse(const char *text, size_t len, const char *name_for_errors, sc_bvh *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    parser p;
    memset(&p, 0, sizeof p);
    p.c.s = text;
    p.c.n = text ? len : 0;
    p.c.line = 1;
    p.c.file = name_for_errors ? name_for_errors : "<bvh>";
    p.c.err = err;
    p.b = out;
    int rc = parse_hierarchy(&p);
    if (!rc) rc = parse_motion(&p);
    free(p.flags);
    free(p.stack);
    free(p.open_line);
    if (rc) sc_bvh_free(out);
    return rc;
}

/* ---------------------------------------------------------------- file I/O */

/* Is the first token "HIERARCHY" (after a BOM and blank space)? 1 yes, 0 no, -1 cannot tell yet. */
static int starts_like_bvh(const char *s, size_t n)
{
    size_t i = n >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3) ? 3 : 0;
    while (i < n && s[i] && strchr(" \t\r\n\f\v", s[i])) i++;
    if (n - i < 9) return i < n && strncasecmp(s + i, "HIERARCHY", n - i) ? 0 : -1;
    return strncasecmp(s + i, "HIERARCHY", 9) == 0 && (n - i == 9 || (s[i + 9] && strchr(" \t\r\n\f\v{}", s[i + 9])));
}

/* Reads the file, checking as it goes: a file whose first 64 KiB do not start like a BVH is
 * rejected from that prefix (line 1), and one larger than SC_BVH_MAX_BYTES before it is read,
 * so a multi-gigabyte non-BVH costs milliseconds, not a whole read into memory. */
static int read_all(const char *path, char **buf, size_t *len, int *early, sc_err *err)
{
    *early = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return sc_fail(err, SC_EIO, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (unsigned long long)st.st_size > SC_BVH_MAX_BYTES) {
        char head[4096];
        size_t got = fread(head, 1, sizeof head, f);
        fclose(f);
        if (starts_like_bvh(head, got) == 0) {
            *early = 1; /* the parser reports the first line */
            *buf = malloc(got ? got : 1);
            if (!*buf) return sc_fail(err, SC_EIO, "out of memory reading %s", path);
            memcpy(*buf, head, got);
            *len = got;
            return SC_OK;
        }
        return sc_fail(err, SC_EINPUT, "%s: %llu bytes, more than a BVH softcon reads (%llu bytes)", path, (unsigned long long)st.st_size,
                       (unsigned long long)SC_BVH_MAX_BYTES);
    }
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    if (!b) {
        fclose(f);
        return sc_fail(err, SC_EIO, "out of memory reading %s", path);
    }
    int checked = 0;
    for (;;) {
        if (n == cap) {
            if (!checked) {
                checked = 1;
                if (starts_like_bvh(b, n) == 0) {
                    *early = 1;
                    break;
                }
            }
            char *nb = cap < SC_BVH_MAX_BYTES ? realloc(b, cap * 2) : NULL;
            if (!nb) {
                free(b);
                fclose(f);
                if (cap >= SC_BVH_MAX_BYTES)
                    return sc_fail(err, SC_EINPUT, "%s: more than a BVH softcon reads (%llu bytes)", path, (unsigned long long)SC_BVH_MAX_BYTES);
                return sc_fail(err, SC_EIO, "out of memory reading %s", path);
            }
            b = nb;
            cap *= 2;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    int e = errno;
    fclose(f);
    if (bad) {
        free(b);
        return sc_fail(err, SC_EIO, "cannot read %s: %s", path, strerror(e));
    }
    *buf = b;
    *len = n;
    return SC_OK;
}

int sc_bvh_load(const char *path, sc_bvh *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    char *buf = NULL;
    size_t len = 0;
    int early;
    int rc = read_all(path, &buf, &len, &early, err);
    if (rc) return rc;
    rc = sc_bvh_parse(buf, len, path, out, err);
    free(buf);
    if (early && !rc) { /* cannot happen: the prefix does not start with HIERARCHY */
        sc_bvh_free(out);
        rc = sc_fail(err, SC_EINPUT, "%s:1: expected HIERARCHY", path);
    }
    return rc;
}

void sc_bvh_free(sc_bvh *b)
{
    if (!b) return;
    free(b->joints);
    free(b->frames);
    memset(b, 0, sizeof *b);
}

int sc_bvh_find(const sc_bvh *b, const char *joint_name)
{
    for (int j = 0; j < b->njoints; j++)
        if (strcmp(b->joints[j].name, joint_name) == 0) return j;
    return -1;
}

/* ---------------------------------------------------------------- kinematics */

sc_xform sc_bvh_local(const sc_bvh *b, int j, int f)
{
    const sc_bvh_joint *jt = &b->joints[j];
    const double *v = (f >= 0 && f < b->nframes) ? b->frames + (size_t)f * b->nchannels + jt->channel_offset : NULL;
    sc_xform x = {sc_q_identity(), jt->offset};
    if (!v) return x;
    for (int k = 0; k < jt->nchannels; k++) {
        int ch = jt->channel[k];
        if (ch <= SC_BVH_ZPOS) {
            double *pc = ch == SC_BVH_XPOS ? &x.p.x : ch == SC_BVH_YPOS ? &x.p.y : &x.p.z;
            *pc += v[k];
        } else {
            sc_vec3 ax = sc_v3(ch == SC_BVH_XROT, ch == SC_BVH_YROT, ch == SC_BVH_ZROT);
            x.q = sc_q_mul(x.q, sc_q_axis_angle(ax, v[k] * (SC_PI / 180.0)));
        }
    }
    x.q = sc_q_normalize(x.q);
    return x;
}

void sc_bvh_world(const sc_bvh *b, int f, sc_xform *world)
{
    for (int j = 0; j < b->njoints; j++) {
        sc_xform l = sc_bvh_local(b, j, f);
        int p = b->joints[j].parent;
        world[j] = (p >= 0 && p < j) ? sc_xf_mul(world[p], l) : l;
    }
}

/* ---------------------------------------------------------------- writer */

/* Shortest "%.*g" that reads back to exactly v. */
static void fmt_exact(char *buf, size_t sz, double v)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, sz, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static int validate(const sc_bvh *b, sc_err *err)
{
    if (b->njoints <= 0 || !b->joints) return sc_fail(err, SC_EINPUT, "BVH has no joints");
    if (b->nchannels <= 0) return sc_fail(err, SC_EINPUT, "BVH has no channels");
    if (b->nframes < 0 || (b->nframes > 0 && !b->frames)) return sc_fail(err, SC_EINPUT, "BVH frames missing");
    if (!(b->frame_time > 0) || !isfinite(b->frame_time)) return sc_fail(err, SC_EINPUT, "BVH frame_time %g must be positive", b->frame_time);
    int total = 0;
    for (int j = 0; j < b->njoints; j++) {
        const sc_bvh_joint *jt = &b->joints[j];
        if (!memchr(jt->name, 0, sizeof jt->name) || (!jt->end_site && jt->name[0] == 0) || strpbrk(jt->name, "\r\n{}"))
            return sc_fail(err, SC_EINPUT, "joint %d: name must be non-empty, one line, without braces", j);
        if (jt->parent >= j || jt->parent < -1) return sc_fail(err, SC_EINPUT, "joint %d '%s': parent %d must precede it", j, jt->name, jt->parent);
        if (jt->end_site && (jt->parent < 0 || jt->nchannels != 0))
            return sc_fail(err, SC_EINPUT, "End Site %d '%s' needs a parent and no channels", j, jt->name);
        if (jt->parent >= 0 && b->joints[jt->parent].end_site) return sc_fail(err, SC_EINPUT, "joint '%s' has an End Site as parent", jt->name);
        if (jt->nchannels < 0 || jt->nchannels > 6 || jt->channel_offset != total)
            return sc_fail(err, SC_EINPUT, "joint '%s': channels not in depth-first order", jt->name);
        for (int k = 0; k < jt->nchannels; k++)
            if (jt->channel[k] < 0 || jt->channel[k] > 5) return sc_fail(err, SC_EINPUT, "joint '%s': bad channel code %d", jt->name, jt->channel[k]);
        total += jt->nchannels;
        /* depth-first: the parent must still be open, i.e. an ancestor of the previous joint */
        if (j > 0 && jt->parent >= 0) {
            int a = j - 1;
            while (a >= 0 && a != jt->parent) a = b->joints[a].parent;
            if (a != jt->parent) return sc_fail(err, SC_EINPUT, "joint '%s' is not in depth-first order", jt->name);
        }
    }
    if (total != b->nchannels) return sc_fail(err, SC_EINPUT, "BVH nchannels %d != sum over joints %d", b->nchannels, total);
    for (size_t k = 0; k < (size_t)b->nframes * (size_t)b->nchannels; k++)
        if (!isfinite(b->frames[k]))
            return sc_fail(err, SC_EINPUT, "frame %zu, channel %zu is not finite", k / (size_t)b->nchannels, k % (size_t)b->nchannels);
    return SC_OK;
}

static void indent(FILE *f, int d)
{
    for (int k = 0; k < d; k++) fputc('\t', f);
}

int sc_bvh_write(const char *path, const sc_bvh *b, sc_err *err)
{
    int rc = validate(b, err);
    if (rc) return rc;
    char tmp[4096];
    FILE *f = sc_file_open_tmp(path, "wb", tmp, sizeof tmp, err);
    if (!f) return err->code;
    int *stack = malloc((size_t)b->njoints * sizeof(int));
    if (!stack) {
        fclose(f);
        remove(tmp);
        sc_cleanup_forget(tmp);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    int depth = 0;
    char n1[40], n2[40], n3[40];
    fputs("HIERARCHY\n", f);
    for (int j = 0; j < b->njoints; j++) {
        const sc_bvh_joint *jt = &b->joints[j];
        while (depth > 0 && stack[depth - 1] != jt->parent) {
            depth--;
            indent(f, depth);
            fputs("}\n", f);
        }
        indent(f, depth);
        if (jt->end_site) fputs("End Site\n", f);
        else fprintf(f, "%s %s\n", jt->parent < 0 ? "ROOT" : "JOINT", jt->name);
        indent(f, depth);
        fputs("{\n", f);
        stack[depth++] = j;
        fmt_exact(n1, sizeof n1, jt->offset.x);
        fmt_exact(n2, sizeof n2, jt->offset.y);
        fmt_exact(n3, sizeof n3, jt->offset.z);
        indent(f, depth);
        fprintf(f, "OFFSET %s %s %s\n", n1, n2, n3);
        if (!jt->end_site) {
            indent(f, depth);
            fprintf(f, "CHANNELS %d", jt->nchannels);
            for (int k = 0; k < jt->nchannels; k++) fprintf(f, " %s", k_chan_names[jt->channel[k]]);
            fputc('\n', f);
        }
    }
    while (depth > 0) {
        depth--;
        indent(f, depth);
        fputs("}\n", f);
    }
    free(stack);
    fmt_exact(n1, sizeof n1, b->frame_time);
    fprintf(f, "MOTION\nFrames: %d\nFrame Time: %s\n", b->nframes, n1);
    for (int fr = 0; fr < b->nframes; fr++) {
        const double *row = b->frames + (size_t)fr * b->nchannels;
        for (int k = 0; k < b->nchannels; k++) {
            fmt_exact(n1, sizeof n1, row[k]);
            if (k) fputc(' ', f);
            fputs(n1, f);
        }
        fputc('\n', f);
    }
    return sc_file_commit(f, tmp, path, err);
}

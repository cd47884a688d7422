/* YAML config on libyaml's event parser (this is the only file that includes yaml.h).
 * The event stream is folded into our own small tree so every node keeps its mark and a
 * "known" flag; we avoid libyaml's document API because it has no per-node bookkeeping. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>
#include "config.h"

enum { K_SCALAR = 1, K_MAP, K_SEQ };
enum { MAX_DEPTH = 64 };

struct sc_cfg_node {
    int kind;
    char *text;    /* scalar value */
    int quoted;    /* scalar was quoted (so "null" is a string, not null) */
    int flow;      /* container was written in flow style */
    int line, col; /* 1-based, start of the value */
    int key_line, key_col;
    char *key;      /* key in the parent map, or NULL */
    int index;      /* index in the parent sequence */
    int known;      /* key looked up by the tool */
    int is_default; /* created by a getter, not in the document */
    sc_cfg *cfg;
    sc_cfg_node *parent;
    sc_cfg_node **items; /* document children in order */
    int n, cap;
    sc_cfg_node **defs; /* defaults recorded by getters (maps only) */
    int ndefs, capdefs;
    char **asked; /* absent keys looked up (did-you-mean candidates) */
    int nasked, capasked;
};

struct sc_cfg {
    char *path;
    char *text;
    size_t len;
    sc_cfg_node *root;
};

/* ---------------------------------------------------------------- small helpers */

static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

static char *dup(const char *s) { return dupn(s, strlen(s)); }

static int oom(sc_err *err) { return sc_fail(err, SC_EIO, "out of memory while handling YAML config"); }

static int grow(void *pptr, int *cap, int need, size_t elem)
{
    if (need <= *cap) return 1;
    int nc = *cap ? 2 * *cap : 8;
    while (nc < need) nc *= 2;
    void *p = realloc(*(void **)pptr, (size_t)nc * elem);
    if (!p) return 0;
    *(void **)pptr = p;
    *cap = nc;
    return 1;
}

static sc_cfg_node *node_new(sc_cfg *cfg, int kind, int line, int col)
{
    sc_cfg_node *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->kind = kind;
    n->cfg = cfg;
    n->line = line;
    n->col = col;
    return n;
}

static void node_free(sc_cfg_node *n)
{
    if (!n) return;
    for (int i = 0; i < n->n; i++) node_free(n->items[i]);
    for (int i = 0; i < n->ndefs; i++) node_free(n->defs[i]);
    for (int i = 0; i < n->nasked; i++) free(n->asked[i]);
    free(n->items);
    free(n->defs);
    free(n->asked);
    free(n->text);
    free(n->key);
    free(n);
}

static int append_child(sc_cfg_node *parent, sc_cfg_node *child)
{
    if (!grow(&parent->items, &parent->cap, parent->n + 1, sizeof *parent->items)) return 0;
    child->parent = parent;
    child->index = parent->n;
    parent->items[parent->n++] = child;
    return 1;
}

/* Plain empty, "~" and "null" are YAML nulls; quoted ones are strings. */
static int is_null(const sc_cfg_node *n)
{
    if (n->kind != K_SCALAR || n->quoted) return 0;
    return !n->text[0] || !strcmp(n->text, "~") || !strcmp(n->text, "null") || !strcmp(n->text, "Null") || !strcmp(n->text, "NULL");
}

/* ---------------------------------------------------------------- paths and locations */

static size_t path_into(const sc_cfg_node *n, char *buf, size_t size)
{
    if (!n || !n->parent) {
        if (size) buf[0] = 0;
        return 0;
    }
    size_t len = path_into(n->parent, buf, size);
    if (len >= size) return len;
    int w;
    if (n->parent->kind == K_SEQ) w = snprintf(buf + len, size - len, "[%d]", n->index);
    else w = snprintf(buf + len, size - len, "%s%s", len ? "." : "", n->key ? n->key : "?");
    return w < 0 ? len : len + (size_t)w;
}

const char *sc_cfg_node_path(const sc_cfg_node *n, char *buf, size_t size)
{
    if (!buf || !size) return "";
    buf[0] = 0;
    path_into(n, buf, size);
    return buf;
}

/* Defaults have no place in the file: report the nearest real ancestor. */
static const sc_cfg_node *located(const sc_cfg_node *n)
{
    while (n && n->is_default && n->parent) n = n->parent;
    return n;
}

const char *sc_cfg_where(const sc_cfg_node *n, char *buf, size_t size)
{
    if (!buf || !size) return "";
    const sc_cfg_node *l = located(n);
    if (!l) snprintf(buf, size, "<none>");
    else snprintf(buf, size, "%s:%d:%d", l->cfg->path, l->line, l->col);
    return buf;
}

static const char *where_key(const sc_cfg_node *n, char *buf, size_t size)
{
    if (n->is_default || !n->key) return sc_cfg_where(n, buf, size);
    snprintf(buf, size, "%s:%d:%d", n->cfg->path, n->key_line, n->key_col);
    return buf;
}

/* "in 'material'" or "at the top level" */
static const char *in_map(const sc_cfg_node *map, char *buf, size_t size)
{
    char p[512];
    sc_cfg_node_path(map, p, sizeof p);
    if (!p[0]) snprintf(buf, size, "at the top level");
    else snprintf(buf, size, "in '%s'", p);
    return buf;
}

/* Path of a (possibly absent) key of map, for messages. */
static const char *key_path(const sc_cfg_node *map, const char *key, char *buf, size_t size)
{
    char p[512];
    sc_cfg_node_path(map, p, sizeof p);
    snprintf(buf, size, "%s%s%s", p, p[0] ? "." : "", key);
    return buf;
}

static const char *describe(const sc_cfg_node *n)
{
    if (n->kind == K_MAP) return "a mapping";
    if (n->kind == K_SEQ) return "a list";
    return "an empty value";
}

/* ---------------------------------------------------------------- did-you-mean */

static int levenshtein(const char *a, const char *b)
{
    enum { MAXL = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la > MAXL || lb > MAXL) return 1 << 20;
    int row[MAXL + 1];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int v = diag + cost;
            if (up + 1 < v) v = up + 1;
            if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
        }
    }
    return row[lb];
}

static int has_prefix_ci(const char *s, const char *prefix)
{
    for (; *prefix; s++, prefix++)
        if (tolower((unsigned char)*s) != tolower((unsigned char)*prefix)) return 0;
    return 1;
}

/* Distance if `cand` is a plausible intent for `typed`, else -1. Close means a few edits
 * relative to the length, or one being a (3+ character) prefix of the other ("youngs" for
 * "youngs_modulus"). */
static int closeness(const char *typed, const char *cand)
{
    int d = levenshtein(typed, cand);
    size_t lt = strlen(typed), lc = strlen(cand), lmax = lt > lc ? lt : lc;
    int limit = (int)(lmax / 3) > 2 ? (int)(lmax / 3) : 2;
    if (d <= limit && d < (int)lmax) return d;
    if ((lt >= 3 && has_prefix_ci(cand, typed)) || (lc >= 3 && has_prefix_ci(typed, cand))) return d;
    return -1;
}

typedef struct {
    const char *typed, *best;
    int bestd;
} suggest;

static void suggest_try(suggest *s, const char *cand)
{
    if (!cand || !strcmp(cand, s->typed)) return;
    int d = closeness(s->typed, cand);
    if (d >= 0 && (!s->best || d < s->bestd)) {
        s->best = cand;
        s->bestd = d;
    }
}

/* ---------------------------------------------------------------- loading */

typedef struct {
    sc_cfg_node *node;
    char *key; /* pending key of a map (NULL when a key is expected next) */
    int key_line, key_col;
} frame;

/* 1-based line and column of a byte offset into the text (the reader's errors, such as
 * invalid UTF-8, carry an offset, not a mark). */
static void offset_to_line_col(const sc_cfg *cfg, size_t offset, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < offset && i < cfg->len; i++) {
        if (cfg->text[i] == '\n') {
            ++*line;
            *col = 1;
        } else if (((unsigned char)cfg->text[i] & 0xC0) != 0x80) {
            ++*col; /* columns count characters, not UTF-8 continuation bytes */
        }
    }
}

static int yaml_problem(sc_cfg *cfg, yaml_parser_t *p, sc_err *err)
{
    if (p->error == YAML_MEMORY_ERROR) return oom(err);
    int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;
    if (p->error == YAML_READER_ERROR) {
        offset_to_line_col(cfg, p->problem_offset, &line, &col);
        if (p->problem_value >= 0 && p->problem && strstr(p->problem, "UTF-8"))
            return sc_fail(err, SC_EINPUT, "%s:%d:%d: %s (byte 0x%02X): the file must be UTF-8 text", cfg->path, line, col, p->problem,
                           (unsigned)p->problem_value & 0xFF);
        return sc_fail(err, SC_EINPUT, "%s:%d:%d: %s", cfg->path, line, col, p->problem ? p->problem : "unreadable text");
    }
    char ctx[256] = "";
    if (p->context)
        snprintf(ctx, sizeof ctx, " (%s at line %d, column %d)", p->context, (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
    /* libyaml's message for a tab in indentation is cryptic: say what it is. */
    const char *hint = "";
    const char *s = cfg->text;
    for (int l = 1; s && *s && l < line; s++)
        if (*s == '\n') l++;
    if (s) {
        for (const char *t = s; *t == ' ' || *t == '\t'; t++)
            if (*t == '\t') {
                hint = "; tabs are not allowed in YAML indentation";
                break;
            }
    }
    return sc_fail(err, SC_EINPUT, "%s:%d:%d: %s%s%s", cfg->path, line, col, p->problem ? p->problem : "YAML syntax error", ctx, hint);
}

/* Attach a finished value node to the container on top of the stack. */
static int attach(sc_cfg *cfg, frame *top, sc_cfg_node *v, sc_err *err)
{
    if (top->node->kind == K_SEQ) {
        if (!append_child(top->node, v)) return oom(err);
        return SC_OK;
    }
    v->key = top->key;
    v->key_line = top->key_line;
    v->key_col = top->key_col;
    top->key = NULL;
    return append_child(top->node, v) ? SC_OK : oom(err); /* on failure v (and its key) is freed by the caller */
}

static int parse_events(sc_cfg *cfg, yaml_parser_t *p, sc_err *err)
{
    frame stack[MAX_DEPTH];
    int depth = 0, ndocs = 0, rc = SC_OK;
    sc_cfg_node *root = NULL;
    yaml_event_t ev;

    for (;;) {
        if (!yaml_parser_parse(p, &ev)) {
            rc = yaml_problem(cfg, p, err);
            break;
        }
        int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
        yaml_event_type_t type = ev.type;
        const char *anchor = NULL;
        if (type == YAML_SCALAR_EVENT) anchor = (const char *)ev.data.scalar.anchor;
        if (type == YAML_MAPPING_START_EVENT) anchor = (const char *)ev.data.mapping_start.anchor;
        if (type == YAML_SEQUENCE_START_EVENT) anchor = (const char *)ev.data.sequence_start.anchor;

        if (type == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (type == YAML_DOCUMENT_START_EVENT && ++ndocs > 1) {
            rc = sc_fail(err, SC_EINPUT, "%s:%d:%d: a config file must hold one YAML document, found a second", cfg->path, line, col);
        } else if (type == YAML_ALIAS_EVENT || anchor) {
            rc = sc_fail(err, SC_EINPUT, "%s:%d:%d: YAML anchors and aliases are not supported in configs (found '%s%s')", cfg->path, line, col,
                         anchor ? "&" : "*", anchor ? anchor : (const char *)ev.data.alias.anchor);
        } else if (type == YAML_SCALAR_EVENT || type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_START_EVENT) {
            frame *top = depth ? &stack[depth - 1] : NULL;
            if (type == YAML_SCALAR_EVENT && strlen((const char *)ev.data.scalar.value) != ev.data.scalar.length) {
                rc = sc_fail(err, SC_EINPUT, "%s:%d:%d: NUL characters are not allowed in config values", cfg->path, line, col);
            } else if (top && top->node->kind == K_MAP && !top->key) {
                /* A key. */
                if (type != YAML_SCALAR_EVENT) {
                    rc = sc_fail(err, SC_EINPUT, "%s:%d:%d: map keys must be plain scalars", cfg->path, line, col);
                } else {
                    const char *k = (const char *)ev.data.scalar.value;
                    for (int i = 0; i < top->node->n; i++) {
                        sc_cfg_node *o = top->node->items[i];
                        if (!strcmp(o->key, k)) {
                            char in[600];
                            rc = sc_fail(err, SC_EINPUT, "%s:%d:%d: duplicate key '%s' %s (first defined at line %d, column %d)", cfg->path, line,
                                         col, k, in_map(top->node, in, sizeof in), o->key_line, o->key_col);
                            break;
                        }
                    }
                    if (!rc) {
                        top->key = dup(k);
                        top->key_line = line;
                        top->key_col = col;
                        if (!top->key) rc = oom(err);
                    }
                }
            } else {
                int kind = type == YAML_SCALAR_EVENT ? K_SCALAR : type == YAML_MAPPING_START_EVENT ? K_MAP : K_SEQ;
                sc_cfg_node *v = node_new(cfg, kind, line, col);
                if (!v) rc = oom(err);
                else if (kind == K_SCALAR) {
                    v->text = dupn((const char *)ev.data.scalar.value, ev.data.scalar.length);
                    v->quoted = ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
                    if (!v->text) rc = oom(err);
                } else if (kind == K_MAP) {
                    v->flow = ev.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
                } else {
                    v->flow = ev.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
                }
                if (!rc && top) rc = attach(cfg, top, v, err);
                else if (!rc) {
                    if (root) node_free(root);
                    root = v;
                }
                if (rc && v && (!top || v->parent != top->node)) node_free(v);
                if (!rc && kind != K_SCALAR) {
                    if (depth == MAX_DEPTH) {
                        rc = sc_fail(err, SC_EINPUT, "%s:%d:%d: config nested deeper than %d levels", cfg->path, line, col, MAX_DEPTH);
                    } else {
                        stack[depth].node = v;
                        stack[depth].key = NULL;
                        depth++;
                    }
                }
            }
        } else if (type == YAML_MAPPING_END_EVENT || type == YAML_SEQUENCE_END_EVENT) {
            if (depth > 0) {
                free(stack[depth - 1].key);
                depth--;
            }
        }
        yaml_event_delete(&ev);
        if (rc) break;
    }
    for (int i = 0; i < depth; i++) free(stack[i].key);

    if (!rc && root && !(root->kind == K_MAP) && !is_null(root)) {
        rc = sc_fail(err, SC_EINPUT, "%s:%d:%d: the top level of a config must be a mapping (key: value lines), got %s", cfg->path, root->line,
                     root->col, root->kind == K_SEQ ? "a list" : "a scalar");
    }
    if (!rc && (!root || root->kind != K_MAP)) {
        node_free(root);
        root = node_new(cfg, K_MAP, 1, 1);
        if (!root) rc = oom(err);
    }
    if (rc) {
        node_free(root);
        return rc;
    }
    cfg->root = root;
    return SC_OK;
}

static int load(char *text, size_t len, const char *name, sc_cfg **out, sc_err *err)
{
    *out = NULL;
    sc_cfg *cfg = calloc(1, sizeof *cfg);
    if (!cfg || !(cfg->path = dup(name))) {
        free(cfg);
        free(text);
        return oom(err);
    }
    cfg->text = text;
    cfg->len = len;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        sc_cfg_free(cfg);
        return oom(err);
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int rc = parse_events(cfg, &p, err);
    yaml_parser_delete(&p);
    if (rc) {
        sc_cfg_free(cfg);
        return rc;
    }
    *out = cfg;
    return SC_OK;
}

int sc_cfg_load_string(const char *text, const char *name, sc_cfg **out, sc_err *err)
{
    if (!text) return sc_fail(err, SC_EINPUT, "no config text given");
    char *copy = dup(text);
    if (!copy) return oom(err);
    return load(copy, strlen(copy), name ? name : "<string>", out, err);
}

int sc_cfg_load_buffer(const void *data, size_t len, const char *name, sc_cfg **out, sc_err *err)
{
    *out = NULL;
    if (!data && len) return sc_fail(err, SC_EINPUT, "no config text given");
    char *copy = malloc(len + 1);
    if (!copy) return oom(err);
    if (len) memcpy(copy, data, len);
    copy[len] = 0;
    return load(copy, len, name ? name : "<buffer>", out, err);
}

int sc_cfg_load_file(const char *path, sc_cfg **out, sc_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return sc_fail(err, SC_EIO, "cannot open config '%s': %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return oom(err);
    }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap >= SC_CFG_MAX_BYTES) {
                free(buf);
                fclose(f);
                return sc_fail(err, SC_EINPUT, "config '%s' is larger than %d bytes: not a config", path, SC_CFG_MAX_BYTES);
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                return oom(err);
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    int e = errno;
    fclose(f);
    if (bad) {
        free(buf);
        return sc_fail(err, SC_EIO, "cannot read config '%s': %s", path, strerror(e));
    }
    buf[len] = 0;
    return load(buf, len, path, out, err);
}

void sc_cfg_free(sc_cfg *cfg)
{
    if (!cfg) return;
    node_free(cfg->root);
    free(cfg->text);
    free(cfg->path);
    free(cfg);
}

const char *sc_cfg_text(const sc_cfg *cfg) { return cfg ? cfg->text : NULL; }
const char *sc_cfg_path(const sc_cfg *cfg) { return cfg ? cfg->path : NULL; }
sc_cfg_node *sc_cfg_root(sc_cfg *cfg) { return cfg ? cfg->root : NULL; }

/* ---------------------------------------------------------------- lookup */

static sc_cfg_node *find_item(sc_cfg_node *map, const char *key)
{
    for (int i = 0; i < map->n; i++)
        if (!strcmp(map->items[i]->key, key)) return map->items[i];
    return NULL;
}

static sc_cfg_node *find_default(sc_cfg_node *map, const char *key)
{
    for (int i = 0; i < map->ndefs; i++)
        if (!strcmp(map->defs[i]->key, key)) return map->defs[i];
    return NULL;
}

/* Marks the key known; *val = value or NULL. Errors only when map is not a map. */
static int lookup(sc_cfg_node *map, const char *key, sc_cfg_node **val, sc_err *err)
{
    *val = NULL;
    if (!map) return SC_OK;
    if (map->kind != K_MAP) {
        char w[600], p[512];
        sc_cfg_node_path(map, p, sizeof p);
        return sc_fail(err, SC_EINPUT, "%s: '%s' must be a mapping to hold '%s', got %s", sc_cfg_where(map, w, sizeof w), p, key,
                       map->kind == K_SEQ ? "a list" : "a scalar");
    }
    sc_cfg_node *v = find_item(map, key);
    if (v) {
        v->known = 1;
        *val = v;
        return SC_OK;
    }
    for (int i = 0; i < map->nasked; i++)
        if (!strcmp(map->asked[i], key)) return SC_OK;
    char *k = dup(key);
    if (!k || !grow(&map->asked, &map->capasked, map->nasked + 1, sizeof *map->asked)) {
        free(k);
        return oom(err);
    }
    map->asked[map->nasked++] = k;
    return SC_OK;
}

sc_cfg_node *sc_cfg_get(sc_cfg_node *map, const char *key)
{
    sc_cfg_node *v;
    if (!map || map->kind != K_MAP) return NULL;
    if (lookup(map, key, &v, NULL)) return NULL;
    return v;
}

/* Record a default value node under map (once per key). */
static sc_cfg_node *add_default(sc_cfg_node *map, const char *key, int kind, const char *text, sc_err *err)
{
    if (!map) return NULL;
    sc_cfg_node *old = find_default(map, key);
    if (old) return old;
    sc_cfg_node *d = node_new(map->cfg, kind, map->line, map->col);
    if (!d || !(d->key = dup(key)) || (text && !(d->text = dup(text))) || !grow(&map->defs, &map->capdefs, map->ndefs + 1, sizeof *map->defs)) {
        node_free(d);
        oom(err);
        return NULL;
    }
    d->is_default = 1;
    d->known = 1;
    d->parent = map;
    d->flow = kind == K_SEQ;
    map->defs[map->ndefs++] = d;
    return d;
}

/* Shortest "%.*g" that reads back exactly, so resolved text is both exact and readable. */
static void fmt_double(double v, char *buf, size_t size)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static int record_scalar_default(sc_cfg_node *map, const char *key, const char *text, sc_err *err)
{
    if (!map) return SC_OK;
    return add_default(map, key, K_SCALAR, text, err) ? SC_OK : SC_EIO;
}

/* ---------------------------------------------------------------- scalar parsing */

static int parse_double(const char *s, double *out)
{
    if (!*s) return 0;
    for (const char *t = s; *t; t++)
        if (!strchr("0123456789+-.eE", *t)) return 0; /* no inf/nan/hex/whitespace */
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || end == s || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

/* 1 ok, 0 not an integer, -1 out of long range */
static int parse_long(const char *s, long *out)
{
    if (!*s) return 0;
    for (const char *t = s; *t; t++)
        if (!strchr("0123456789+-", *t)) return 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || end == s) return 0;
    if (errno == ERANGE) return -1;
    *out = v;
    return 1;
}

static int parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
    for (int i = 0; i < 3; i++) {
        if (!strcasecmp(s, yes[i])) {
            *out = 1;
            return 1;
        }
        if (!strcasecmp(s, no[i])) {
            *out = 0;
            return 1;
        }
    }
    return 0;
}

/* "x.yaml:4:12: 'density' must be a number, got 'abc'" */
static int type_error(const sc_cfg_node *v, const char *what, sc_err *err)
{
    char w[600], p[512];
    sc_cfg_where(v, w, sizeof w);
    sc_cfg_node_path(v, p, sizeof p);
    if (v->kind == K_SCALAR && !is_null(v)) return sc_fail(err, SC_EINPUT, "%s: '%s' must be %s, got '%s'", w, p, what, v->text);
    return sc_fail(err, SC_EINPUT, "%s: '%s' must be %s, got %s", w, p, what, describe(v));
}

int sc_cfg_scalar_double(const sc_cfg_node *n, double *out, sc_err *err)
{
    if (!n) return sc_fail(err, SC_EINPUT, "no config value given");
    if (n->kind != K_SCALAR || is_null(n) || !parse_double(n->text, out)) {
        if (n->kind == K_SCALAR && !is_null(n) && strchr("0123456789+-.", n->text[0]) && n->text[0]) {
            double tmp;
            char *end;
            tmp = strtod(n->text, &end);
            if (!*end && !isfinite(tmp)) return type_error(n, "a finite number", err);
        }
        return type_error(n, "a number", err);
    }
    return SC_OK;
}

int sc_cfg_scalar_int(const sc_cfg_node *n, long lo, long hi, long *out, sc_err *err)
{
    if (!n) return sc_fail(err, SC_EINPUT, "no config value given");
    long v = 0;
    int ok = n->kind == K_SCALAR && !is_null(n) ? parse_long(n->text, &v) : 0;
    if (ok == 0) return type_error(n, "an integer", err);
    char w[600], p[512];
    if (ok < 0 || v < lo || v > hi)
        return sc_fail(err, SC_EINPUT, "%s: key '%s' = %s is outside [%ld, %ld]", sc_cfg_where(n, w, sizeof w), sc_cfg_node_path(n, p, sizeof p),
                       n->text, lo, hi);
    *out = v;
    return SC_OK;
}

/* ---------------------------------------------------------------- typed getters */

int sc_cfg_double(sc_cfg_node *map, const char *key, double def, double *out, sc_err *err)
{
    sc_cfg_node *v;
    int rc = lookup(map, key, &v, err);
    if (rc) return rc;
    if (!v) {
        char t[64];
        fmt_double(def, t, sizeof t);
        *out = def;
        return record_scalar_default(map, key, t, err);
    }
    return sc_cfg_scalar_double(v, out, err);
}

int sc_cfg_double_range(sc_cfg_node *map, const char *key, double def, double lo, double hi, double *out, sc_err *err)
{
    double x;
    int rc = sc_cfg_double(map, key, def, &x, err);
    if (rc) return rc;
    if (!(x >= lo && x <= hi)) {
        sc_cfg_node *v = map ? find_item(map, key) : NULL;
        char w[600], p[512], t[64];
        if (v)
            return sc_fail(err, SC_EINPUT, "%s: key '%s' = %s is outside [%g, %g]", sc_cfg_where(v, w, sizeof w), sc_cfg_node_path(v, p, sizeof p),
                           v->text, lo, hi);
        fmt_double(x, t, sizeof t);
        /* a default outside its own range is a programming error, but say so plainly */
        return sc_fail(err, SC_EINPUT, "%s: default of key '%s' = %s is outside [%g, %g]", map ? sc_cfg_where(map, w, sizeof w) : "<none>",
                       map ? key_path(map, key, p, sizeof p) : key, t, lo, hi);
    }
    *out = x;
    return SC_OK;
}

int sc_cfg_int(sc_cfg_node *map, const char *key, long def, long lo, long hi, long *out, sc_err *err)
{
    sc_cfg_node *v;
    int rc = lookup(map, key, &v, err);
    if (rc) return rc;
    if (v) return sc_cfg_scalar_int(v, lo, hi, out, err);
    char t[32];
    snprintf(t, sizeof t, "%ld", def);
    *out = def;
    return record_scalar_default(map, key, t, err);
}

int sc_cfg_bool(sc_cfg_node *map, const char *key, int def, int *out, sc_err *err)
{
    sc_cfg_node *v;
    int rc = lookup(map, key, &v, err);
    if (rc) return rc;
    if (!v) {
        *out = def ? 1 : 0;
        return record_scalar_default(map, key, def ? "true" : "false", err);
    }
    if (v->kind != K_SCALAR || is_null(v) || !parse_bool(v->text, out)) return type_error(v, "true or false (also yes/no, on/off)", err);
    return SC_OK;
}

static int missing(sc_cfg_node *map, const char *key, sc_err *err)
{
    char w[600], in[600];
    if (!map) return sc_fail(err, SC_EINPUT, "missing required key '%s'", key);
    return sc_fail(err, SC_EINPUT, "%s: missing required key '%s' %s", sc_cfg_where(map, w, sizeof w), key, in_map(map, in, sizeof in));
}

int sc_cfg_string(sc_cfg_node *map, const char *key, const char *def, char *buf, size_t bufsize, sc_err *err)
{
    sc_cfg_node *v;
    int rc = lookup(map, key, &v, err);
    if (rc) return rc;
    const char *s;
    if (!v) {
        if (!def) return missing(map, key, err);
        s = def;
    } else {
        if (v->kind != K_SCALAR) return type_error(v, "a string", err);
        s = is_null(v) ? "" : v->text;
    }
    size_t len = strlen(s);
    if (!buf || len >= bufsize) {
        char w[600], p[512];
        if (v)
            return sc_fail(err, SC_EINPUT, "%s: '%s' is too long (%zu bytes, at most %zu)", sc_cfg_where(v, w, sizeof w),
                           sc_cfg_node_path(v, p, sizeof p), len, bufsize ? bufsize - 1 : 0);
        return sc_fail(err, SC_EINPUT, "default of '%s' is too long (%zu bytes, at most %zu)", key, len, bufsize ? bufsize - 1 : 0);
    }
    memcpy(buf, s, len + 1);
    if (v || !map) return SC_OK;
    sc_cfg_node *d = add_default(map, key, K_SCALAR, s, err);
    if (!d) return SC_EIO;
    d->quoted = 1; /* a string default stays a string ("null", "1", "" included) */
    return SC_OK;
}

int sc_cfg_enum(sc_cfg_node *map, const char *key, const char *const *options, int noptions, int def, int *out, sc_err *err)
{
    sc_cfg_node *v;
    int rc = lookup(map, key, &v, err);
    if (rc) return rc;
    if (!v) {
        if (def < 0 || def >= noptions) return missing(map, key, err);
        *out = def;
        return record_scalar_default(map, key, options[def], err);
    }
    if (v->kind == K_SCALAR && !is_null(v)) {
        for (int i = 0; i < noptions; i++)
            if (!strcmp(v->text, options[i])) {
                *out = i;
                return SC_OK;
            }
    }
    char list[1024] = "", w[600], p[512], got[300], hint[300] = "";
    size_t len = 0;
    suggest s = {v->kind == K_SCALAR ? v->text : "", NULL, 0};
    for (int i = 0; i < noptions && len < sizeof list; i++) {
        int k = snprintf(list + len, sizeof list - len, "%s'%s'", i ? ", " : "", options[i]);
        if (k > 0) len += (size_t)k;
        if (v->kind == K_SCALAR) suggest_try(&s, options[i]);
    }
    if (v->kind == K_SCALAR && !is_null(v)) snprintf(got, sizeof got, "'%s'", v->text);
    else snprintf(got, sizeof got, "%s", describe(v));
    if (s.best) snprintf(hint, sizeof hint, " (did you mean '%s'?)", s.best);
    return sc_fail(err, SC_EINPUT, "%s: '%s' must be one of %s, got %s%s", sc_cfg_where(v, w, sizeof w), sc_cfg_node_path(v, p, sizeof p), list, got,
                   hint);
}

int sc_cfg_vec(sc_cfg_node *map, const char *key, int n, const double *def, double *out, sc_err *err)
{
    sc_cfg_node *v;
    int rc = lookup(map, key, &v, err);
    if (rc) return rc;
    if (!v) {
        if (!def) return missing(map, key, err);
        for (int i = 0; i < n; i++) out[i] = def[i];
        if (!map) return SC_OK;
        sc_cfg_node *d = find_default(map, key);
        if (d) return SC_OK;
        d = add_default(map, key, K_SEQ, NULL, err);
        if (!d) return SC_EIO;
        for (int i = 0; i < n; i++) {
            char t[64];
            fmt_double(def[i], t, sizeof t);
            sc_cfg_node *it = node_new(map->cfg, K_SCALAR, map->line, map->col);
            if (!it || !(it->text = dup(t)) || !append_child(d, it)) {
                node_free(it);
                return oom(err);
            }
            it->is_default = 1;
        }
        return SC_OK;
    }
    char what[64];
    snprintf(what, sizeof what, "a list of %d number%s", n, n == 1 ? "" : "s");
    if (v->kind != K_SEQ) return type_error(v, what, err);
    if (v->n != n) {
        char w[600], p[512];
        return sc_fail(err, SC_EINPUT, "%s: '%s' must be %s, got %d", sc_cfg_where(v, w, sizeof w), sc_cfg_node_path(v, p, sizeof p), what, v->n);
    }
    for (int i = 0; i < n; i++) {
        rc = sc_cfg_scalar_double(v->items[i], &out[i], err);
        if (rc) return rc;
    }
    return SC_OK;
}

int sc_cfg_vec_range(sc_cfg_node *map, const char *key, int n, const double *def, double lo, double hi, double *out, sc_err *err)
{
    int rc = sc_cfg_vec(map, key, n, def, out, err);
    if (rc) return rc;
    for (int i = 0; i < n; i++) {
        if (out[i] >= lo && out[i] <= hi) continue;
        sc_cfg_node *v = map ? find_item(map, key) : NULL;
        char w[600], p[512], t[64];
        fmt_double(out[i], t, sizeof t);
        if (v && v->kind == K_SEQ && i < v->n)
            return sc_fail(err, SC_EINPUT, "%s: key '%s[%d]' = %s is outside [%g, %g]", sc_cfg_where(v->items[i], w, sizeof w),
                           sc_cfg_node_path(v, p, sizeof p), i, v->items[i]->text, lo, hi);
        return sc_fail(err, SC_EINPUT, "%s: default of key '%s[%d]' = %s is outside [%g, %g]", map ? sc_cfg_where(map, w, sizeof w) : "<none>",
                       map ? key_path(map, key, p, sizeof p) : key, i, t, lo, hi);
    }
    return SC_OK;
}

int sc_cfg_require(sc_cfg_node *map, const char *key, sc_cfg_node **out, sc_err *err)
{
    sc_cfg_node *v;
    *out = NULL;
    int rc = lookup(map, key, &v, err);
    if (rc) return rc;
    if (!v) return missing(map, key, err);
    *out = v;
    return SC_OK;
}

int sc_cfg_section(sc_cfg_node *map, const char *key, sc_cfg_node **out, sc_err *err)
{
    sc_cfg_node *v;
    *out = NULL;
    int rc = lookup(map, key, &v, err);
    if (rc) return rc;
    if (v) {
        if (v->kind == K_MAP) {
            *out = v;
            return SC_OK;
        }
        if (is_null(v)) { /* "material:" with nothing under it: treat as empty */
            v->kind = K_MAP;
            free(v->text);
            v->text = NULL;
            *out = v;
            return SC_OK;
        }
        return type_error(v, "a mapping", err);
    }
    if (!map) return SC_OK;
    *out = add_default(map, key, K_MAP, NULL, err);
    return *out ? SC_OK : SC_EIO;
}

int sc_cfg_list(sc_cfg_node *map, const char *key, int required, sc_cfg_node **out, sc_err *err)
{
    sc_cfg_node *v;
    *out = NULL;
    int rc = lookup(map, key, &v, err);
    if (rc) return rc;
    if (!v) return required ? missing(map, key, err) : SC_OK;
    if (v->kind != K_SEQ) return type_error(v, "a list", err);
    *out = v;
    return SC_OK;
}

/* ---------------------------------------------------------------- inspection */

int sc_cfg_is_map(const sc_cfg_node *n) { return n && n->kind == K_MAP; }
int sc_cfg_is_seq(const sc_cfg_node *n) { return n && n->kind == K_SEQ; }
int sc_cfg_is_scalar(const sc_cfg_node *n) { return n && n->kind == K_SCALAR; }
int sc_cfg_len(const sc_cfg_node *n) { return n && n->kind != K_SCALAR ? n->n : 0; }

sc_cfg_node *sc_cfg_at(sc_cfg_node *n, int i)
{
    if (!n || n->kind == K_SCALAR || i < 0 || i >= n->n) return NULL;
    n->items[i]->known = 1;
    return n->items[i];
}

const char *sc_cfg_key_at(const sc_cfg_node *map, int i)
{
    if (!map || map->kind != K_MAP || i < 0 || i >= map->n) return NULL;
    return map->items[i]->key;
}

const char *sc_cfg_scalar(const sc_cfg_node *n) { return n && n->kind == K_SCALAR ? n->text : NULL; }

/* ---------------------------------------------------------------- unknown keys */

typedef struct {
    sc_err *err;
    int count;
    size_t len;
} unknown_ctx;

static void report_unknown(unknown_ctx *u, const sc_cfg_node *map, const sc_cfg_node *item)
{
    suggest s = {item->key, NULL, 0};
    for (int i = 0; i < map->n; i++)
        if (map->items[i]->known) suggest_try(&s, map->items[i]->key);
    for (int i = 0; i < map->nasked; i++) suggest_try(&s, map->asked[i]);
    char w[600], in[600], line[1400], hint[300] = "";
    if (s.best) snprintf(hint, sizeof hint, " (did you mean '%s'?)", s.best);
    snprintf(line, sizeof line, "%s: unknown key '%s' %s%s", where_key(item, w, sizeof w), item->key, in_map(map, in, sizeof in), hint);
    u->count++;
    if (!u->err) return;
    if (u->count == 1) {
        sc_fail(u->err, SC_EINPUT, "%s", line);
        u->len = strlen(u->err->msg);
    } else if (u->len + strlen(line) + 2 < sizeof u->err->msg) {
        u->len += (size_t)snprintf(u->err->msg + u->len, sizeof u->err->msg - u->len, "\n%s", line);
    }
}

static void check_node(unknown_ctx *u, const sc_cfg_node *n)
{
    for (int i = 0; i < n->n; i++) {
        const sc_cfg_node *c = n->items[i];
        if (n->kind == K_MAP && !c->known) report_unknown(u, n, c);
        else if (c->known != 2) check_node(u, c);
    }
}

void sc_cfg_ignore(sc_cfg_node *map, const char *key)
{
    sc_cfg_node *v = map && map->kind == K_MAP ? find_item(map, key) : NULL;
    if (v && !v->known) v->known = 2; /* a section the tool read itself stays checked */
}

void sc_cfg_ignore_rest(sc_cfg_node *map)
{
    if (!map || map->kind != K_MAP) return;
    for (int i = 0; i < map->n; i++)
        if (!map->items[i]->known) map->items[i]->known = 2;
}

int sc_cfg_check_unknown(sc_cfg *cfg, sc_err *err)
{
    if (!cfg) return SC_OK;
    unknown_ctx u = {err, 0, 0};
    check_node(&u, cfg->root);
    return u.count ? SC_EINPUT : SC_OK;
}

/* ---------------------------------------------------------------- resolved text */

typedef struct {
    char *buf;
    size_t len, cap;
    int failed;
} outbuf;

static int write_handler(void *data, unsigned char *bytes, size_t size)
{
    outbuf *o = data;
    if (o->len + size + 1 > o->cap) {
        size_t nc = o->cap ? o->cap : 1024;
        while (nc < o->len + size + 1) nc *= 2;
        char *nb = realloc(o->buf, nc);
        if (!nb) {
            o->failed = 1;
            return 0;
        }
        o->buf = nb;
        o->cap = nc;
    }
    memcpy(o->buf + o->len, bytes, size);
    o->len += size;
    o->buf[o->len] = 0;
    return 1;
}

static int emit_scalar(yaml_emitter_t *e, const char *text, int quoted)
{
    yaml_event_t ev;
    /* Plain scalars stay plain when libyaml allows it; quoted ones stay strings. */
    yaml_scalar_style_t style = quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (const yaml_char_t *)text, (int)strlen(text), !quoted, 1, style)) return 0;
    return yaml_emitter_emit(e, &ev);
}

static int emit_node(yaml_emitter_t *e, const sc_cfg_node *n)
{
    yaml_event_t ev;
    if (n->kind == K_SCALAR) {
        /* an empty plain value is a YAML null; write it as one so it survives flow context */
        if (!n->quoted && !n->text[0]) return emit_scalar(e, "null", 0);
        return emit_scalar(e, n->text, n->quoted);
    }
    if (n->kind == K_SEQ) {
        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, n->flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE) ||
            !yaml_emitter_emit(e, &ev))
            return 0;
        for (int i = 0; i < n->n; i++)
            if (!emit_node(e, n->items[i])) return 0;
        return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
    }
    /* A flow map that gained defaults is written in block style (flow would nest block). */
    int flow = n->flow && !n->ndefs;
    if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE) ||
        !yaml_emitter_emit(e, &ev))
        return 0;
    for (int i = 0; i < n->n + n->ndefs; i++) {
        const sc_cfg_node *c = i < n->n ? n->items[i] : n->defs[i - n->n];
        if (!emit_scalar(e, c->key, 0) || !emit_node(e, c)) return 0;
    }
    return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
}

char *sc_cfg_resolved_text(sc_cfg *cfg)
{
    if (!cfg) return NULL;
    outbuf o = {0};
    yaml_emitter_t e;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&e)) return NULL;
    yaml_emitter_set_output(&e, write_handler, &o);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_indent(&e, 2);
    yaml_emitter_set_width(&e, -1);
    int ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&e, &ev) &&
        yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && yaml_emitter_emit(&e, &ev) && emit_node(&e, cfg->root) &&
        yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&e, &ev) && yaml_stream_end_event_initialize(&ev) &&
        yaml_emitter_emit(&e, &ev) && yaml_emitter_flush(&e);
    yaml_emitter_delete(&e);
    if (!ok || o.failed) {
        free(o.buf);
        return NULL;
    }
    if (!o.buf) o.buf = dup("{}\n");
    return o.buf;
}

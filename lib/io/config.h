/* YAML configuration: a loaded document is a tree of scalars, maps and sequences that
 * remember file:line:column. Lookups mark keys as known, so after a tool has read what it
 * understands, sc_cfg_check_unknown() reports every other key (with a did-you-mean) without
 * any schema. Getters record the defaults they used, so sc_cfg_resolved_text() can write the
 * effective configuration into output files for provenance.
 *
 * Typical use:
 *     sc_cfg *cfg; sc_cfg_node *mat;
 *     sc_cfg_load_file(path, &cfg, err);
 *     sc_cfg_section(sc_cfg_root(cfg), "material", &mat, err);
 *     sc_cfg_double_range(mat, "density", 1000, 1, 1e5, &rho, err);
 *     ...
 *     sc_cfg_check_unknown(cfg, err);
 *
 * All messages start with "file:line:column: " (1-based) and name the key path
 * ("material.density", "bones[3].name"). Only lib/io/config.c includes yaml.h. */
#ifndef SC_IO_CONFIG_H
#define SC_IO_CONFIG_H
#include <stddef.h>
#include "core/status.h"

typedef struct sc_cfg sc_cfg; /* a loaded document (owns all nodes) */

#define SC_CFG_MAX_BYTES (16 << 20)     /* a config file larger than this is refused as read */
typedef struct sc_cfg_node sc_cfg_node; /* scalar, map or sequence, with its location */

/* Missing/unreadable file -> SC_EIO naming the path and strerror; YAML syntax error,
 * several documents, anchors/aliases, duplicate keys, non-map top level -> SC_EINPUT. */
int sc_cfg_load_file(const char *path, sc_cfg **out, sc_err *err);
/* name is used in messages in place of a path (NULL -> "<string>"). */
int sc_cfg_load_string(const char *text, const char *name, sc_cfg **out, sc_err *err);
/* len bytes that need not end in NUL (the fuzz harness's entry point); the same checks as a
 * file: invalid UTF-8 is reported at its line and column, a NUL byte is an error. */
int sc_cfg_load_buffer(const void *data, size_t len, const char *name, sc_cfg **out, sc_err *err);
void sc_cfg_free(sc_cfg *cfg);
const char *sc_cfg_text(const sc_cfg *cfg); /* the original text, for provenance */
const char *sc_cfg_path(const sc_cfg *cfg);
sc_cfg_node *sc_cfg_root(sc_cfg *cfg); /* always a map; an empty document gives an empty map */

/* Lookup marks `key` as known for this map (even when absent). NULL if absent or if map is
 * NULL / not a map. */
sc_cfg_node *sc_cfg_get(sc_cfg_node *map, const char *key);

/* Typed getters. An absent key yields `def` (recorded for sc_cfg_resolved_text). A NULL
 * map also yields `def` (nothing recorded). Present but malformed -> SC_EINPUT. */
int sc_cfg_double(sc_cfg_node *map, const char *key, double def, double *out, sc_err *err);
int sc_cfg_double_range(sc_cfg_node *map, const char *key, double def, double lo, double hi, double *out, sc_err *err);
int sc_cfg_int(sc_cfg_node *map, const char *key, long def, long lo, long hi, long *out, sc_err *err);
int sc_cfg_bool(sc_cfg_node *map, const char *key, int def, int *out, sc_err *err); /* true/false/yes/no/on/off */
/* def NULL = required. A value longer than bufsize-1 bytes is an error. */
int sc_cfg_string(sc_cfg_node *map, const char *key, const char *def, char *buf, size_t bufsize, sc_err *err);
/* *out = index into options; a bad value lists the options and suggests the closest. */
int sc_cfg_enum(sc_cfg_node *map, const char *key, const char *const *options, int noptions, int def, int *out, sc_err *err);
/* A flow or block list of exactly n numbers; def NULL = required. */
int sc_cfg_vec(sc_cfg_node *map, const char *key, int n, const double *def, double *out, sc_err *err);
/* The same with every component in [lo, hi]; an outlier is "file:line:col: key 'x.force[1]'
 * = 1e308 is outside [lo, hi]" at that component. Use this for every vector key: a finite but
 * absurd value (gravity 1e308) otherwise reaches the physics. */
int sc_cfg_vec_range(sc_cfg_node *map, const char *key, int n, const double *def, double lo, double hi, double *out, sc_err *err);
/* Missing -> "file:line:col: missing required key 'x' in 'parent.path'". */
int sc_cfg_require(sc_cfg_node *map, const char *key, sc_cfg_node **out, sc_err *err);
/* A nested map. Absent -> a new empty map recorded as a default (so the defaults its getters
 * use appear in the resolved text); present but not a map -> SC_EINPUT. */
int sc_cfg_section(sc_cfg_node *map, const char *key, sc_cfg_node **out, sc_err *err);
/* A sequence. Absent -> *out = NULL (error if `required`); present but not a list -> SC_EINPUT. */
int sc_cfg_list(sc_cfg_node *map, const char *key, int required, sc_cfg_node **out, sc_err *err);

/* Node inspection. */
int sc_cfg_is_map(const sc_cfg_node *n);
int sc_cfg_is_seq(const sc_cfg_node *n);
int sc_cfg_is_scalar(const sc_cfg_node *n);
int sc_cfg_len(const sc_cfg_node *n);                   /* map entries or sequence items */
sc_cfg_node *sc_cfg_at(sc_cfg_node *seq_or_map, int i); /* i-th item / i-th value (marks the key known) */
const char *sc_cfg_key_at(const sc_cfg_node *map, int i);
const char *sc_cfg_scalar(const sc_cfg_node *n); /* NULL if not a scalar */
int sc_cfg_scalar_double(const sc_cfg_node *n, double *out, sc_err *err);
int sc_cfg_scalar_int(const sc_cfg_node *n, long lo, long hi, long *out, sc_err *err);
const char *sc_cfg_where(const sc_cfg_node *n, char *buf, size_t size);     /* "file:line:col" */
const char *sc_cfg_node_path(const sc_cfg_node *n, char *buf, size_t size); /* "bones[3].name" */

/* Every key present in the document that was never looked up is an error:
 * "x.yaml:12:3: unknown key 'youngs' in 'material' (did you mean 'youngs_modulus'?)".
 * Recurses into values whose key was looked up (and into all sequence items); a subtree whose
 * key was never looked up is reported once, as that key. All unknown keys are listed, one per
 * line, the first on the first line. */
int sc_cfg_check_unknown(sc_cfg *cfg, sc_err *err);
/* Marks `key` and everything below it as known without reading it, unless the tool already
   looked it up: a section that belongs to another tool when several share one config file. */
void sc_cfg_ignore(sc_cfg_node *map, const char *key);
/* Marks every key of `map` the tool has not looked up as known without reading it (and everything
   below them): a section whose other keys belong to another tool, after reading the keys it shares
   (inverse dynamics reads simulation.gravity and contact.friction, the simulator the rest). */
void sc_cfg_ignore_rest(sc_cfg_node *map);

/* The document re-emitted as YAML with the defaults recorded by the getters added (comments
 * are not kept). malloc'd; NULL if out of memory. */
char *sc_cfg_resolved_text(sc_cfg *cfg);

#endif

#include <stdlib.h>
#include <string.h>
#include "core/status.h"
#include "io/config.h"
#include "test.h"

/* Expected messages name the scratch path, so build them with the path in front. */
static int msg_is(const sc_err *e, const char *path, const char *rest)
{
    char want[SC_ERR_MSG];
    snprintf(want, sizeof want, "%s%s", path, rest);
    if (!strcmp(e->msg, want)) return 1;
    printf("    got:  %s\n    want: %s\n", e->msg, want);
    return 0;
}

static int msg_has(const sc_err *e, const char *part)
{
    if (strstr(e->msg, part)) return 1;
    printf("    message '%s' lacks '%s'\n", e->msg, part);
    return 0;
}

TEST(config_typed_values_and_defaults)
{
    const char *path = sc_test_write("typed.yaml",
                                     "# a comment\n"
                                     "dt: 1.0e-3\n"
                                     "steps: 250\n"
                                     "verbose: yes\n"
                                     "ground: Off\n"
                                     "name: \"panda bear\"\n"
                                     "label: 42\n"
                                     "gravity: [0, -9.81, 0]\n");
    sc_err e = {0};
    sc_cfg *c;
    ENSURE_OK(sc_cfg_load_file(path, &c, &e), &e);
    ENSURE(!strcmp(sc_cfg_path(c), path));
    ENSURE(!strncmp(sc_cfg_text(c), "# a comment\ndt: 1.0e-3\n", 23));
    sc_cfg_node *r = sc_cfg_root(c);
    ENSURE(sc_cfg_is_map(r) && sc_cfg_len(r) == 7);
    double dt, damping;
    long steps, threads;
    int verbose, ground, fast;
    char name[32], label[8], out[16];
    ENSURE_OK(sc_cfg_double(r, "dt", 0.01, &dt, &e), &e);
    ENSURE(dt == 1e-3);
    ENSURE_OK(sc_cfg_int(r, "steps", 10, 1, 100000, &steps, &e), &e);
    ENSURE(steps == 250);
    ENSURE_OK(sc_cfg_bool(r, "verbose", 0, &verbose, &e), &e);
    ENSURE(verbose == 1);
    ENSURE_OK(sc_cfg_bool(r, "ground", 1, &ground, &e), &e);
    ENSURE(ground == 0);
    ENSURE_OK(sc_cfg_string(r, "name", NULL, name, sizeof name, &e), &e);
    ENSURE(!strcmp(name, "panda bear"));
    ENSURE_OK(sc_cfg_string(r, "label", NULL, label, sizeof label, &e), &e); /* numbers are fine as strings */
    ENSURE(!strcmp(label, "42"));
    /* absent keys take their defaults */
    ENSURE_OK(sc_cfg_double(r, "damping", 0.25, &damping, &e), &e);
    ENSURE(damping == 0.25);
    ENSURE_OK(sc_cfg_int(r, "threads", 4, 1, 64, &threads, &e), &e);
    ENSURE(threads == 4);
    ENSURE_OK(sc_cfg_bool(r, "fast", 1, &fast, &e), &e);
    ENSURE(fast == 1);
    ENSURE_OK(sc_cfg_string(r, "output", "sim.h5", out, sizeof out, &e), &e);
    ENSURE(!strcmp(out, "sim.h5"));
    ENSURE(sc_cfg_get(r, "nothing") == NULL);
    /* gravity was never read: it is the one unknown key */
    ENSURE(sc_cfg_check_unknown(c, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":8:1: unknown key 'gravity' at the top level"));
    double g[3];
    ENSURE_OK(sc_cfg_vec(r, "gravity", 3, NULL, g, &e), &e);
    ENSURE(g[0] == 0 && g[1] == -9.81 && g[2] == 0);
    ENSURE_OK(sc_cfg_check_unknown(c, &e), &e);
    /* required string missing, string too long */
    ENSURE(sc_cfg_string(r, "mesh", NULL, out, sizeof out, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":2:1: missing required key 'mesh' at the top level"));
    ENSURE(sc_cfg_string(r, "name", NULL, label, sizeof label, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":6:7: 'name' is too long (10 bytes, at most 7)"));
    /* bool must be one of the six words */
    sc_cfg_free(c);
    ENSURE_OK(sc_cfg_load_string("flag: 1\n", "b.yaml", &c, &e), &e);
    ENSURE(sc_cfg_bool(sc_cfg_root(c), "flag", 0, &fast, &e) == SC_EINPUT);
    ENSURE(!strcmp(e.msg, "b.yaml:1:7: 'flag' must be true or false (also yes/no, on/off), got '1'"));
    sc_cfg_free(c);
    /* an empty document is an empty map: everything defaults */
    ENSURE_OK(sc_cfg_load_string("# nothing here\n", "empty.yaml", &c, &e), &e);
    ENSURE(sc_cfg_is_map(sc_cfg_root(c)) && sc_cfg_len(sc_cfg_root(c)) == 0);
    ENSURE_OK(sc_cfg_double(sc_cfg_root(c), "dt", 0.5, &dt, &e), &e);
    ENSURE(dt == 0.5);
    ENSURE_OK(sc_cfg_check_unknown(c, &e), &e);
    sc_cfg_free(c);
}

TEST(config_ranges_and_strict_numbers)
{
    const char *path = sc_test_write("range.yaml",
                                     "material:\n"
                                     "  density: 5\n"
                                     "  poisson: 0.45\n"
                                     "iters: 3.5\n"
                                     "big: 99999999999999999999\n"
                                     "count: -7\n");
    sc_err e = {0};
    sc_cfg *c;
    ENSURE_OK(sc_cfg_load_file(path, &c, &e), &e);
    sc_cfg_node *r = sc_cfg_root(c), *m;
    ENSURE_OK(sc_cfg_section(r, "material", &m, &e), &e);
    double x;
    ENSURE_OK(sc_cfg_double_range(m, "poisson", 0.3, 0, 0.5, &x, &e), &e);
    ENSURE(x == 0.45);
    ENSURE(sc_cfg_double_range(m, "density", 1000, 10, 1e5, &x, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":2:12: key 'material.density' = 5 is outside [10, 100000]"));
    ENSURE(e.code == SC_EINPUT);
    /* a value on the boundary is inside */
    ENSURE_OK(sc_cfg_double_range(m, "density", 1000, 5, 5, &x, &e), &e);
    ENSURE(x == 5);
    long n;
    ENSURE(sc_cfg_int(r, "iters", 10, 1, 100, &n, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":4:8: 'iters' must be an integer, got '3.5'"));
    ENSURE(sc_cfg_int(r, "big", 1, 0, 10, &n, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":5:6: key 'big' = 99999999999999999999 is outside [0, 10]"));
    ENSURE(sc_cfg_int(r, "count", 1, 0, 10, &n, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":6:8: key 'count' = -7 is outside [0, 10]"));
    ENSURE_OK(sc_cfg_int(r, "count", 1, -10, 10, &n, &e), &e);
    ENSURE(n == -7);
    sc_cfg_free(c);

    /* strict number parsing: the whole scalar, finite, decimal */
    static const struct {
        const char *text;
        int ok;
        double v;
    } cases[] = {
        {"1e3", 1, 1000}, {"-.5", 1, -0.5}, {"+2.", 1, 2}, {"'7.25'", 1, 7.25}, {"abc", 0, 0},  {"1.5x", 0, 0},
        {"inf", 0, 0},    {".inf", 0, 0},   {"nan", 0, 0}, {"1e400", 0, 0},     {"0x10", 0, 0}, {"1,5", 0, 0},
        {"' 5'", 0, 0},   {"", 0, 0},       {"[1]", 0, 0}, {"{a: 1}", 0, 0},    {"1 2", 0, 0},  {"~", 0, 0},
    };
    int checked = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[64];
        snprintf(text, sizeof text, "v: %s\n", cases[i].text);
        ENSURE_OK(sc_cfg_load_string(text, "n.yaml", &c, &e), &e);
        int rc = sc_cfg_double(sc_cfg_root(c), "v", 123, &x, &e);
        ENSURE_MSG((rc == SC_OK) == cases[i].ok, "'%s' -> rc %d (%s)", cases[i].text, rc, rc ? e.msg : "");
        if (cases[i].ok) ENSURE(x == cases[i].v);
        else
            ENSURE_MSG(!strncmp(e.msg, cases[i].text[0] ? "n.yaml:1:4: 'v' must be a" : "n.yaml:1:3: 'v' must be a", 25), "'%s': %s", cases[i].text,
                       e.msg);
        sc_cfg_free(c);
        checked++;
    }
    sc_test_report("%d number spellings checked", checked);
}

TEST(config_enum)
{
    static const char *const solvers[] = {"newton", "gauss_seidel", "cg"};
    sc_err e = {0};
    sc_cfg *c;
    int k;
    ENSURE_OK(sc_cfg_load_string("solver: cg\nother: newtn\nfar: zzzzzz\nlist: [1]\n", "e.yaml", &c, &e), &e);
    sc_cfg_node *r = sc_cfg_root(c);
    ENSURE_OK(sc_cfg_enum(r, "solver", solvers, 3, 0, &k, &e), &e);
    ENSURE(k == 2);
    ENSURE_OK(sc_cfg_enum(r, "absent", solvers, 3, 1, &k, &e), &e);
    ENSURE(k == 1);
    ENSURE(sc_cfg_enum(r, "other", solvers, 3, 0, &k, &e) == SC_EINPUT);
    ENSURE(!strcmp(e.msg,
                   "e.yaml:2:8: 'other' must be one of 'newton', 'gauss_seidel', 'cg', got 'newtn' "
                   "(did you mean 'newton'?)"));
    ENSURE(sc_cfg_enum(r, "far", solvers, 3, 0, &k, &e) == SC_EINPUT);
    ENSURE(!strcmp(e.msg, "e.yaml:3:6: 'far' must be one of 'newton', 'gauss_seidel', 'cg', got 'zzzzzz'"));
    ENSURE(sc_cfg_enum(r, "list", solvers, 3, 0, &k, &e) == SC_EINPUT);
    ENSURE(!strcmp(e.msg, "e.yaml:4:7: 'list' must be one of 'newton', 'gauss_seidel', 'cg', got a list"));
    /* def = -1 makes the key required */
    ENSURE(sc_cfg_enum(r, "method", solvers, 3, -1, &k, &e) == SC_EINPUT);
    ENSURE(!strcmp(e.msg, "e.yaml:1:1: missing required key 'method' at the top level"));
    sc_cfg_free(c);
}

TEST(config_vec)
{
    const char *path = sc_test_write("vec.yaml",
                                     "flow: [1, 2.5, -3e2]\n"
                                     "block:\n"
                                     "  - 0.5\n"
                                     "  - 1\n"
                                     "  - 2\n"
                                     "short: [1, 2]\n"
                                     "bad: [1, oops, 3]\n"
                                     "scalar: 4\n");
    sc_err e = {0};
    sc_cfg *c;
    ENSURE_OK(sc_cfg_load_file(path, &c, &e), &e);
    sc_cfg_node *r = sc_cfg_root(c);
    double v[3];
    ENSURE_OK(sc_cfg_vec(r, "flow", 3, NULL, v, &e), &e);
    ENSURE(v[0] == 1 && v[1] == 2.5 && v[2] == -300);
    ENSURE_OK(sc_cfg_vec(r, "block", 3, NULL, v, &e), &e);
    ENSURE(v[0] == 0.5 && v[1] == 1 && v[2] == 2);
    const double def[3] = {0, -9.81, 0};
    ENSURE_OK(sc_cfg_vec(r, "gravity", 3, def, v, &e), &e);
    ENSURE(v[0] == 0 && v[1] == -9.81 && v[2] == 0);
    ENSURE(sc_cfg_vec(r, "short", 3, def, v, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":6:8: 'short' must be a list of 3 numbers, got 2"));
    ENSURE(sc_cfg_vec(r, "bad", 3, def, v, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":7:10: 'bad[1]' must be a number, got 'oops'"));
    ENSURE(sc_cfg_vec(r, "scalar", 3, def, v, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":8:9: 'scalar' must be a list of 3 numbers, got '4'"));
    ENSURE(sc_cfg_vec(r, "origin", 3, NULL, v, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":1:1: missing required key 'origin' at the top level"));
    ENSURE_OK(sc_cfg_check_unknown(c, &e), &e);
    sc_cfg_free(c);
}

TEST(config_nested_maps_and_bone_lists)
{
    const char *path = sc_test_write("bones.yaml",
                                     "character:\n"
                                     "  material:\n"
                                     "    youngs_modulus: 5.0e4\n"
                                     "    poisson: 0.45\n"
                                     "  bones:\n"
                                     "    - {name: pelvis, length: 0.20}\n"
                                     "    - name: spine\n"
                                     "      length: 0.35\n"
                                     "      parent: pelvis\n"
                                     "    - {name: head, length: 0.25, parent: spine}\n");
    sc_err e = {0};
    sc_cfg *c;
    ENSURE_OK(sc_cfg_load_file(path, &c, &e), &e);
    sc_cfg_node *r = sc_cfg_root(c), *ch, *mat, *bones;
    ENSURE_OK(sc_cfg_section(r, "character", &ch, &e), &e);
    ENSURE_OK(sc_cfg_section(ch, "material", &mat, &e), &e);
    double E, nu;
    ENSURE_OK(sc_cfg_double(mat, "youngs_modulus", 1e5, &E, &e), &e);
    ENSURE_OK(sc_cfg_double(mat, "poisson", 0.3, &nu, &e), &e);
    ENSURE(E == 5e4 && nu == 0.45);
    ENSURE_OK(sc_cfg_list(ch, "bones", 1, &bones, &e), &e);
    ENSURE(sc_cfg_is_seq(bones) && sc_cfg_len(bones) == 3);
    double total = 0;
    static const char *const want[] = {"pelvis", "spine", "head"};
    for (int i = 0; i < sc_cfg_len(bones); i++) {
        sc_cfg_node *b = sc_cfg_at(bones, i);
        ENSURE(sc_cfg_is_map(b));
        char name[32], parent[32];
        double len;
        ENSURE_OK(sc_cfg_string(b, "name", NULL, name, sizeof name, &e), &e);
        ENSURE(!strcmp(name, want[i]));
        ENSURE_OK(sc_cfg_string(b, "parent", "", parent, sizeof parent, &e), &e);
        ENSURE(i == 0 ? parent[0] == 0 : !strcmp(parent, want[i - 1]));
        ENSURE_OK(sc_cfg_double_range(b, "length", 0.1, 0.01, 10, &len, &e), &e);
        total += len;
    }
    ENSURE_NEAR(total, 0.80, 1e-15);
    /* paths and locations of nested nodes */
    char p[128], w[256];
    sc_cfg_node *spine_len = sc_cfg_get(sc_cfg_at(bones, 1), "length");
    ENSURE(!strcmp(sc_cfg_node_path(spine_len, p, sizeof p), "character.bones[1].length"));
    snprintf(p, sizeof p, "%s:8:15", path);
    ENSURE(!strcmp(sc_cfg_where(spine_len, w, sizeof w), p));
    ENSURE(!strcmp(sc_cfg_node_path(sc_cfg_at(bones, 2), p, sizeof p), "character.bones[2]"));
    ENSURE(!strcmp(sc_cfg_scalar(sc_cfg_get(sc_cfg_at(bones, 0), "name")), "pelvis"));
    ENSURE(sc_cfg_scalar(bones) == NULL);
    ENSURE(!strcmp(sc_cfg_key_at(mat, 1), "poisson"));
    double d;
    ENSURE_OK(sc_cfg_scalar_double(sc_cfg_at(mat, 1), &d, &e), &e);
    ENSURE(d == 0.45);
    /* an item of the wrong type names its index */
    ENSURE(sc_cfg_scalar_double(sc_cfg_get(sc_cfg_at(bones, 2), "name"), &d, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":10:14: 'character.bones[2].name' must be a number, got 'head'"));
    /* a required key missing in a nested map */
    sc_cfg_node *dummy;
    ENSURE(sc_cfg_require(mat, "density", &dummy, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":3:5: missing required key 'density' in 'character.material'"));
    ENSURE(dummy == NULL);
    /* asking a list for a key is a clear error */
    ENSURE(sc_cfg_double(bones, "length", 1, &d, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":6:5: 'character.bones' must be a mapping to hold 'length', got a list"));
    ENSURE_OK(sc_cfg_check_unknown(c, &e), &e);
    sc_cfg_free(c);
}

TEST(config_unknown_key_did_you_mean)
{
    const char *path = sc_test_write("unknown.yaml",
                                     "dt: 0.001\n"       /* 1 */
                                     "material:\n"       /* 2 */
                                     "  density: 1000\n" /* 3 */
                                     "  youngs: 5.0e4\n" /* 4 */
                                     "bones:\n"          /* 5 */
                                     "  - name: a\n"     /* 6 */
                                     "    length: 1\n"   /* 7 */
                                     "  - name: b\n"     /* 8 */
                                     "    lenght: 2\n"   /* 9 */
                                     "render:\n"         /* 10 */
                                     "  width: 640\n"    /* 11 */
                                     "  height: 480\n"   /* 12 */
                                     "xyzzy: 1\n");      /* 13 */
    sc_err e = {0};
    sc_cfg *c;
    ENSURE_OK(sc_cfg_load_file(path, &c, &e), &e);
    sc_cfg_node *r = sc_cfg_root(c), *mat, *bones;
    double x;
    ENSURE_OK(sc_cfg_double(r, "dt", 0.01, &x, &e), &e);
    ENSURE_OK(sc_cfg_section(r, "material", &mat, &e), &e);
    ENSURE_OK(sc_cfg_double(mat, "density", 1000, &x, &e), &e);
    ENSURE_OK(sc_cfg_double(mat, "youngs_modulus", 1e5, &x, &e), &e);
    ENSURE_OK(sc_cfg_double(mat, "poisson", 0.3, &x, &e), &e);
    ENSURE(x == 0.3);
    ENSURE_OK(sc_cfg_list(r, "bones", 1, &bones, &e), &e);
    for (int i = 0; i < sc_cfg_len(bones); i++) {
        char name[16];
        ENSURE_OK(sc_cfg_string(sc_cfg_at(bones, i), "name", NULL, name, sizeof name, &e), &e);
        ENSURE_OK(sc_cfg_double(sc_cfg_at(bones, i), "length", 1, &x, &e), &e);
    }
    /* 'render' never looked up: reported once as a whole; 'xyzzy' has no close match */
    ENSURE(sc_cfg_check_unknown(c, &e) == SC_EINPUT);
    char want[2048];
    snprintf(want, sizeof want,
             "%s:4:3: unknown key 'youngs' in 'material' (did you mean 'youngs_modulus'?)\n"
             "%s:9:5: unknown key 'lenght' in 'bones[1]' (did you mean 'length'?)\n"
             "%s:10:1: unknown key 'render' at the top level\n"
             "%s:13:1: unknown key 'xyzzy' at the top level",
             path, path, path, path);
    ENSURE_MSG(!strcmp(e.msg, want), "got\n%s\nwant\n%s", e.msg, want);
    sc_test_report("%d unknown keys found, first: %.*s", 4, (int)(strchr(e.msg, '\n') - e.msg), e.msg);
    /* reading render.width only leaves render.height */
    sc_cfg_node *render;
    long wdt;
    ENSURE_OK(sc_cfg_section(r, "render", &render, &e), &e);
    ENSURE_OK(sc_cfg_int(render, "width", 320, 1, 8192, &wdt, &e), &e);
    ENSURE(sc_cfg_check_unknown(c, &e) == SC_EINPUT);
    ENSURE(msg_has(&e, ":12:3: unknown key 'height' in 'render'\n"));
    sc_cfg_free(c);
}

TEST(config_syntax_errors)
{
    sc_err e = {0};
    sc_cfg *c = (sc_cfg *)&e;
    const char *p1 = sc_test_write("syntax.yaml", "a: 1\nb: [1, 2\nc: 3\n");
    ENSURE(sc_cfg_load_file(p1, &c, &e) == SC_EINPUT);
    ENSURE(c == NULL);
    ENSURE(msg_is(&e, p1,
                  ":3:2: did not find expected ',' or ']' (while parsing a flow sequence at line 2, "
                  "column 4)"));
    const char *p2 = sc_test_write("tabs.yaml", "material:\n  density: 1\n\tpoisson: 0.3\n");
    ENSURE(sc_cfg_load_file(p2, &c, &e) == SC_EINPUT);
    ENSURE(msg_has(&e, ":3:1: "));
    ENSURE(msg_has(&e, "tabs are not allowed in YAML indentation"));
    const char *p3 = sc_test_write("multi.yaml", "a: 1\n---\nb: 2\n");
    ENSURE(sc_cfg_load_file(p3, &c, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, p3, ":2:1: a config file must hold one YAML document, found a second"));
    ENSURE(sc_cfg_load_string("base: &b {x: 1}\nother: *b\n", "alias.yaml", &c, &e) == SC_EINPUT);
    ENSURE(!strcmp(e.msg, "alias.yaml:1:7: YAML anchors and aliases are not supported in configs (found '&b')"));
    ENSURE(sc_cfg_load_string("- 1\n- 2\n", "list.yaml", &c, &e) == SC_EINPUT);
    ENSURE(msg_has(&e, "list.yaml:1:1: the top level of a config must be a mapping"));
    ENSURE(sc_cfg_load_string("a: b: c\n", NULL, &c, &e) == SC_EINPUT);
    ENSURE(!strcmp(e.msg, "<string>:1:5: mapping values are not allowed in this context"));
    ENSURE(sc_cfg_load_string("? [1, 2]\n: 3\n", "k.yaml", &c, &e) == SC_EINPUT);
    ENSURE(!strcmp(e.msg, "k.yaml:1:3: map keys must be plain scalars"));
    /* 70 levels of nesting are refused rather than recursed into */
    char deep[256] = "a: ";
    for (int i = 0; i < 70; i++) strcat(deep, "[");
    for (int i = 0; i < 70; i++) strcat(deep, "]");
    ENSURE(sc_cfg_load_string(deep, "deep.yaml", &c, &e) == SC_EINPUT);
    ENSURE(msg_has(&e, "deep.yaml:1:"));
    ENSURE(msg_has(&e, "nested deeper than"));
}

TEST(config_missing_file)
{
    sc_err e = {0};
    sc_cfg *c = (sc_cfg *)&e;
    const char *path = sc_test_tmp("does-not-exist.yaml");
    ENSURE(sc_cfg_load_file(path, &c, &e) == SC_EIO);
    ENSURE(c == NULL && e.code == SC_EIO);
    ENSURE(msg_has(&e, path));
    ENSURE(msg_has(&e, "No such file or directory"));
    /* a directory cannot be read as a config */
    ENSURE(sc_cfg_load_file(sc_test_tmpdir(), &c, &e) == SC_EIO);
    ENSURE(msg_has(&e, "Is a directory"));
}

TEST(config_type_errors)
{
    const char *path = sc_test_write("types.yaml",
                                     "dt: 0.01\n"
                                     "material:\n"
                                     "  poisson: 0.3\n"
                                     "  density: abc\n"
                                     "  damping:\n"
                                     "  name: [a, b]\n"
                                     "solver: 3\n");
    sc_err e = {0};
    sc_cfg *c;
    ENSURE_OK(sc_cfg_load_file(path, &c, &e), &e);
    sc_cfg_node *r = sc_cfg_root(c), *m;
    ENSURE_OK(sc_cfg_section(r, "material", &m, &e), &e);
    double x;
    char buf[16];
    ENSURE(sc_cfg_double(m, "density", 1000, &x, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":4:12: 'material.density' must be a number, got 'abc'"));
    ENSURE(sc_cfg_double(m, "damping", 0, &x, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":5:11: 'material.damping' must be a number, got an empty value"));
    ENSURE(sc_cfg_string(m, "name", "x", buf, sizeof buf, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":6:9: 'material.name' must be a string, got a list"));
    ENSURE(sc_cfg_section(r, "dt", &m, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":1:5: 'dt' must be a mapping, got '0.01'"));
    sc_cfg_node *l;
    ENSURE(sc_cfg_list(r, "solver", 0, &l, &e) == SC_EINPUT);
    ENSURE(msg_is(&e, path, ":7:9: 'solver' must be a list, got '3'"));
    ENSURE_OK(sc_cfg_list(r, "absent", 0, &l, &e), &e);
    ENSURE(l == NULL);
    sc_cfg_free(c);
}

TEST(config_duplicate_key)
{
    const char *path = sc_test_write("dup.yaml",
                                     "material:\n"
                                     "  density: 1000\n"
                                     "  poisson: 0.3\n"
                                     "  density: 1100\n");
    sc_err e = {0};
    sc_cfg *c = NULL;
    ENSURE(sc_cfg_load_file(path, &c, &e) == SC_EINPUT);
    ENSURE(c == NULL);
    ENSURE(msg_is(&e, path, ":4:3: duplicate key 'density' in 'material' (first defined at line 2, column 3)"));
    /* the same key in different maps is fine */
    ENSURE_OK(sc_cfg_load_string("a: {x: 1}\nb: {x: 2}\n", "ok.yaml", &c, &e), &e);
    sc_cfg_free(c);
}

TEST(config_resolved_text_roundtrip)
{
    const char *path = sc_test_write("resolved.yaml",
                                     "# comments are not kept\n"
                                     "dt: 0.002\n"
                                     "name: 'yes'\n"
                                     "material:\n"
                                     "  density: 1070\n"
                                     "bones:\n"
                                     "  - {name: pelvis, length: 0.2}\n"
                                     "  - {name: \"null\", length: 0.3}\n");
    static const char *const solvers[] = {"newton", "cg"};
    sc_err e = {0};
    sc_cfg *c, *c2;
    double dt[2], rho[2], nu[2], g[2][3], len[2][2];
    long steps[2];
    int solver[2], contact[2];
    char name[2][16], out[2][32], bname[2][2][16];
    const double gdef[2][3] = {{0, -9.81, 0}, {1, 2, 3}};
    ENSURE_OK(sc_cfg_load_file(path, &c, &e), &e);
    char *text = NULL;
    for (int pass = 0; pass < 2; pass++) {
        sc_cfg *cur = pass ? c2 : c;
        sc_cfg_node *r = sc_cfg_root(cur), *m, *phys, *bones;
        /* the second pass uses different defaults: every value must come from the text */
        ENSURE_OK(sc_cfg_double(r, "dt", pass ? 1 : 0.01, &dt[pass], &e), &e);
        ENSURE_OK(sc_cfg_string(r, "name", "zz", name[pass], sizeof name[pass], &e), &e);
        ENSURE_OK(sc_cfg_string(r, "output", pass ? "other.h5" : "sim out.h5", out[pass], sizeof out[pass], &e), &e);
        ENSURE_OK(sc_cfg_int(r, "steps", pass ? 1 : 1000, 1, 1 << 20, &steps[pass], &e), &e);
        ENSURE_OK(sc_cfg_enum(r, "solver", solvers, 2, pass ? 0 : 1, &solver[pass], &e), &e);
        ENSURE_OK(sc_cfg_section(r, "material", &m, &e), &e);
        ENSURE_OK(sc_cfg_double(m, "density", 1, &rho[pass], &e), &e);
        ENSURE_OK(sc_cfg_double(m, "poisson", pass ? 0.1 : 0.45, &nu[pass], &e), &e);
        /* an absent section carries its defaults into the resolved text */
        ENSURE_OK(sc_cfg_section(r, "physics", &phys, &e), &e);
        ENSURE_OK(sc_cfg_vec(phys, "gravity", 3, gdef[pass], g[pass], &e), &e);
        ENSURE_OK(sc_cfg_bool(phys, "contact", pass ? 0 : 1, &contact[pass], &e), &e);
        ENSURE_OK(sc_cfg_list(r, "bones", 1, &bones, &e), &e);
        ENSURE(sc_cfg_len(bones) == 2);
        for (int i = 0; i < 2; i++) {
            ENSURE_OK(sc_cfg_string(sc_cfg_at(bones, i), "name", NULL, bname[pass][i], 16, &e), &e);
            ENSURE_OK(sc_cfg_double(sc_cfg_at(bones, i), "length", 5, &len[pass][i], &e), &e);
        }
        ENSURE_OK(sc_cfg_check_unknown(cur, &e), &e);
        if (pass == 0) {
            text = sc_cfg_resolved_text(c);
            ENSURE(text != NULL);
            ENSURE_OK(sc_cfg_load_string(text, "resolved", &c2, &e), &e);
        }
    }
    ENSURE(dt[1] == dt[0] && dt[0] == 0.002);
    ENSURE(!strcmp(name[0], "yes") && !strcmp(name[1], "yes"));
    ENSURE(!strcmp(out[0], "sim out.h5") && !strcmp(out[1], out[0]));
    ENSURE(steps[0] == 1000 && steps[1] == 1000);
    ENSURE(solver[0] == 1 && solver[1] == 1);
    ENSURE(rho[0] == 1070 && rho[1] == 1070);
    ENSURE(nu[0] == 0.45 && nu[1] == 0.45);
    for (int k = 0; k < 3; k++) ENSURE(g[0][k] == gdef[0][k] && g[1][k] == gdef[0][k]);
    ENSURE(contact[0] == 1 && contact[1] == 1);
    for (int i = 0; i < 2; i++) { ENSURE(!strcmp(bname[0][i], bname[1][i]) && len[0][i] == len[1][i]); }
    ENSURE(!strcmp(bname[0][1], "null"));
    /* the re-emitted text is itself a fixed point */
    char *text2 = sc_cfg_resolved_text(c2);
    ENSURE(text2 != NULL);
    int same = !strcmp(text, text2);
    if (!same) printf("    first:\n%s\n    second:\n%s\n", text, text2);
    int lines = 0;
    for (const char *t = text; *t; t++) lines += *t == '\n';
    sc_test_report("resolved text %zu bytes, %d lines", strlen(text), lines);
    free(text);
    free(text2);
    ENSURE(same);
    /* the original text is kept verbatim for provenance */
    ENSURE(!strncmp(sc_cfg_text(c), "# comments are not kept\n", 24));
    sc_cfg_free(c);
    sc_cfg_free(c2);
}

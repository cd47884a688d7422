/* Motion networks ([BK]): every operation node against values computed by hand, read from YAML
 * as a designer writes them; bad networks (a cycle, an unknown node or feedback variable, a node
 * of two kinds) are refused naming the line. */
#include <math.h>
#include <string.h>
#include "io/config.h"
#include "settings/network.h"
#include "test.h"

static const char *const feedback_names[] = {"stance", "com_forward"};

static int load(const char *yaml, sc_cfg **cfg, sc_network *n, sc_err *err)
{
    sc_network_init(n, 0);
    *cfg = NULL;
    int rc = sc_cfg_load_string(yaml, "net.yaml", cfg, err);
    if (rc) return rc;
    return sc_network_read(sc_cfg_get(sc_cfg_root(*cfg), "nodes"), feedback_names, 2, n, err);
}

/* value of node `name` after evaluating at t with the given feedback */
static double at(const sc_network *n, sc_network_state *s, const char *name, double t, double stance)
{
    const double fb[2] = {stance, 0.25};
    sc_network_eval(n, s, t, fb);
    return s->value[sc_network_find(n, name)];
}

/* The Hermite basis by hand: h(s) = (2s^3 - 3s^2 + 1) v0 + (s^3 - 2s^2 + s) h m0 + (3s^2 - 2s^3) v1 +
   (s^3 - s^2) h m1 */
static double hermite(double s, double h, double v0, double m0, double v1, double m1)
{
    return (2 * s * s * s - 3 * s * s + 1) * v0 + (s * s * s - 2 * s * s + s) * h * m0 + (3 * s * s - 2 * s * s * s) * v1 + (s * s * s - s * s) * h * m1;
}

TEST(network_nodes_match_hand_computed_values)
{
    const char *yaml = "nodes:\n"
                       "  - {name: sum, add: [k, fb, ease]}\n" /* declared before its inputs */
                       "  - {name: k, const: 0.5}\n"
                       "  - {name: fb, feedback: com_forward}\n"
                       "  - {name: ease, spline: [[0, 0, 0], [1, 1, 0]]}\n"
                       "  - {name: hat, spline: [[0, 0], [1, 1], [2, 0]]}\n"
                       "  - {name: ring, spline: [[0, 0], [1, 1], [2, 0]], loop: true}\n"
                       "  - {name: ramp, spline: [[0, 2], [2, 4]]}\n"
                       "  - {name: prod, multiply: [k, ring]}\n"
                       "  - {name: beat, step: [[0, 1], [0.4, 0], [1.0, 0]], loop: true}\n"
                       "  - {name: stance, feedback: stance}\n"
                       "  - {name: pick, switch: [beat, ease, ramp]}\n"
                       "  - {name: gate, switch: [stance, k]}\n"
                       "  - {name: swing, modulate: [beat, ease, ramp]}\n"
                       "  - {name: felt, modulate: [stance, ease], expected: 0.5}\n";
    sc_cfg *cfg;
    sc_network n;
    sc_network_state s;
    sc_err err = {0};
    ENSURE_OK(load(yaml, &cfg, &n, &err), &err);
    ENSURE_OK(sc_network_state_init(&n, &s, &err), &err);
    /* add (three inputs, one a feedback variable), const, a spline with given tangents */
    ENSURE_NEAR(at(&n, &s, "sum", 0.25, 1), 0.5 + 0.25 + hermite(0.25, 1, 0, 0, 1, 0), 1e-15);
    ENSURE_NEAR(hermite(0.25, 1, 0, 0, 1, 0), 0.15625, 1e-15);
    /* Catmull-Rom tangents: the ends one-sided (1, -1), the middle (0 - 0) / 2 = 0 */
    ENSURE_NEAR(s.value[sc_network_find(&n, "hat")], hermite(0.25, 1, 0, 1, 1, 0), 1e-15);
    ENSURE_NEAR(at(&n, &s, "hat", 1.5, 1), hermite(0.5, 1, 1, 0, 0, -1), 1e-15);
    ENSURE_NEAR(at(&n, &s, "hat", 7, 1), 0, 0); /* held at its last value */
    /* a two-point spline is a straight line */
    ENSURE_NEAR(at(&n, &s, "ramp", 0.5, 1), 2.5, 1e-15);
    /* a loop: period 2, tangents wrapped (0 at the ends), so 0.5, 2.5 and -1.5 agree */
    const double ring = hermite(0.5, 1, 0, 0, 1, 0);
    sc_network_state_reset(&n, &s);
    ENSURE_NEAR(at(&n, &s, "ring", 0.5, 1), ring, 1e-15);
    ENSURE_NEAR(at(&n, &s, "ring", 2.5, 1), ring, 1e-15);
    ENSURE_NEAR(s.value[sc_network_find(&n, "prod")], 0.5 * ring, 1e-15);
    sc_network_state_reset(&n, &s);
    ENSURE_NEAR(at(&n, &s, "ring", -1.5, 1), ring, 1e-15);
    /* step function: high in [0, 0.4) of every second, low in [0.4, 1) */
    sc_network_state_reset(&n, &s);
    ENSURE_NEAR(at(&n, &s, "beat", 0.1, 1), 1, 0);
    ENSURE_NEAR(at(&n, &s, "beat", 0.45, 1), 0, 0);
    ENSURE_NEAR(at(&n, &s, "beat", 1.05, 1), 1, 0);
    /* switch: the first input while high, the second while low, 0 without one */
    sc_network_state_reset(&n, &s);
    ENSURE_NEAR(at(&n, &s, "pick", 0.2, 1), hermite(0.2, 1, 0, 0, 1, 0), 1e-15);
    ENSURE_NEAR(at(&n, &s, "pick", 0.5, 1), 2.5, 1e-15);
    ENSURE_NEAR(at(&n, &s, "gate", 0.6, 1), 0.5, 0);
    ENSURE_NEAR(at(&n, &s, "gate", 0.7, 0), 0, 0);
    /* modulate over a step function: each step's trajectory scaled to the step's known length:
       the high step [0, 0.4) plays ease's [0, 1], the low step [0.4, 1) ramp's [0, 2] */
    sc_network_state_reset(&n, &s);
    ENSURE_NEAR(at(&n, &s, "swing", 0.1, 1), hermite(0.25, 1, 0, 0, 1, 0), 1e-15);
    ENSURE_NEAR(at(&n, &s, "swing", 0.2, 1), 0.5, 1e-15);
    ENSURE_NEAR(at(&n, &s, "swing", 0.7, 1), 3, 1e-14);
    ENSURE_NEAR(at(&n, &s, "swing", 1.3, 1), hermite(0.75, 1, 0, 0, 1, 0), 1e-14); /* the next period */
    /* modulate over a feedback step: the first high step is expected to last 0.5 s, later ones
       as long as the last did (0.3 s here); a step that lasts longer holds the end value */
    sc_network_state_reset(&n, &s);
    double t = 0;
    for (; t < 0.15 - 1e-9; t += 0.01) at(&n, &s, "felt", t, 1);
    ENSURE_NEAR(at(&n, &s, "felt", 0.15, 1), hermite(0.3, 1, 0, 0, 1, 0), 1e-12);
    for (t = 0.16; t < 0.3 - 1e-9; t += 0.01) at(&n, &s, "felt", t, 1);
    for (t = 0.3; t < 0.5 - 1e-9; t += 0.01) ENSURE_NEAR(at(&n, &s, "felt", t, 0), 0, 0); /* low: no second trajectory */
    ENSURE_NEAR(at(&n, &s, "felt", 0.5, 1), 0, 1e-15);                                     /* a new high step begins */
    ENSURE_NEAR(at(&n, &s, "felt", 0.65, 1), 0.5, 1e-12);                                  /* half of 0.3 s */
    ENSURE_NEAR(at(&n, &s, "felt", 0.95, 1), 1, 0);                                        /* past its length: held */
    sc_network_state_free(&s);
    sc_network_free(&n);
    sc_cfg_free(cfg);
}

/* each bad network names the line of the culprit */
TEST(network_bad_configs_name_the_line)
{
    static const struct {
        const char *yaml, *expect;
    } cases[] = {
        {"nodes:\n  - {name: a, add: [b]}\n  - {name: b, multiply: [a, c]}\n  - {name: c, const: 1}\n",
         "net.yaml:2:5: node 'a' is on a cycle (a <- b <- a)"},
        {"nodes:\n  - {name: a, const: 1}\n  - {name: b, add: [a,\n        ghost]}\n", "net.yaml:4:9: 'ghost' is not a node of the network (its nodes: a, b)"},
        {"nodes:\n  - {name: f, feedback: stanse}\n", "did you mean 'stance'"},
        {"nodes:\n  - {name: a, const: 1, spline: [[0, 1], [1, 2]]}\n", "net.yaml:2:5: node 'a' is both a const and a spline"},
        {"nodes:\n  - {name: a, const: 1}\n  - {name: a, const: 2}\n", "net.yaml:3:5: a second node called 'a' (the first at net.yaml:2:5)"},
        {"nodes:\n  - {name: s, spline: [[0, 1], [0, 2]]}\n", "net.yaml:2:5: spline 's': point 1's time 0 does not follow 0"},
        {"nodes:\n  - {name: s, step: [[0, 1], [1, 0.5]]}\n", "point 1's value 0.5 is neither 0 nor 1"},
        {"nodes:\n  - {name: k, const: 1}\n  - {name: m, modulate: [k, k]}\n", "net.yaml:3:5: modulate 'm' scales trajectories in time: 'k' is a constant"},
        {"nodes:\n  - {name: k, const: 1}\n  - {name: p, multiply: [k]}\n", "net.yaml:3:5: multiply 'p' takes 2 inputs, not 1"},
        {"nodes:\n  - {name: k}\n", "net.yaml:2:5: node 'k' has no kind"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sc_cfg *cfg = NULL;
        sc_network n;
        sc_err err = {0};
        const int rc = load(cases[i].yaml, &cfg, &n, &err);
        ENSURE_MSG(rc == SC_EINPUT && strstr(err.msg, cases[i].expect), "case %zu: rc %d, message: %s", i, rc, err.msg);
        sc_network_free(&n);
        sc_cfg_free(cfg);
    }
}

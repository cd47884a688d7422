/* [T12]'s boneless characters through mesh-prep, character.h5 and render: the letters I and O
 * of configs/letters mesh to about [T12] Table 1's sizes with the letter's own mass and stand on
 * the ground, a boneless file reads back (hash, clone), a boneless OBJ body works, a bad letter
 * is exit 2 naming the config line, and the tools that drive bones refuse a boneless character. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/mathx.h"
#include "store/character.h"
#include "io/h5.h"
#include "mesh/tetmesh.h"
#include "test.h"

static char out[16384];

/* The letter's character from configs/letters/NAME.yaml, made once per run (NULL on failure,
   mesh-prep's output in `out`). */
static const char *letter_character(const char *name)
{
    char file[64], cfg[128];
    snprintf(file, sizeof file, "letter_%s.h5", name);
    snprintf(cfg, sizeof cfg, "configs/letters/%s.yaml", name);
    const char *h5 = sc_test_tmp(file);
    if (sc_test_file_exists(h5)) return h5;
    int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s", sc_test_tool("mesh-prep"), sc_test_repo(cfg), h5);
    return rc == 0 ? h5 : NULL;
}

/* A box of outer sizes a x b x c with every edge rounded by r: the inner box grown by a ball of
   radius r (Steiner's formula). */
static double rounded_box_volume(double a, double b, double c, double r)
{
    double x = a - 2 * r, y = b - 2 * r, z = c - 2 * r;
    return x * y * z + 2 * r * (x * y + y * z + z * x) + SC_PI * r * r * (x + y + z) + 4.0 / 3 * SC_PI * r * r * r;
}

/* The checks of a letter's character; 0 on failure (after reporting). */
static int check_letter(const char *h5, int table_tets, double volume)
{
    sc_model m;
    sc_err err;
    if (sc_character_read(h5, &m, 0, &err)) {
        sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
        return 0;
    }
    double mass = 0, lowest = INFINITY, vol_err = 0;
    int nonpos = 0, fixed = 0;
    for (int i = 0; i < m.nnodes; i++) {
        mass += m.node_mass[i];
        lowest = fmin(lowest, m.rest_pos[3 * i + 1]);
        fixed += m.node_bone[i] != -1;
    }
    for (int t = 0; t < m.ntets; t++) {
        const int *v = m.tets + 4 * t;
        double vol = sc_tet_signed_volume(m.rest_pos + 3 * v[0], m.rest_pos + 3 * v[1], m.rest_pos + 3 * v[2], m.rest_pos + 3 * v[3]);
        nonpos += !(vol > 0);
        vol_err = fmax(vol_err, fabs(vol - m.tet_volume[t]) / fabs(vol));
    }
    double want = m.density * volume;
    sc_test_report("%s: %d nodes, %d tets ([T12] Table 1: %d), %d surface vertices; mass %.3f kg = density x %.5f m^3 (analytic %.3f kg, "
                   "%+.2f %%); lowest node y = %.2g m",
                   h5, m.nnodes, m.ntets, table_tets, m.nsurf_verts, mass, mass / m.density, want, 100 * (mass / want - 1), lowest);
    int nb = m.nbones, nf = m.nfixed, k = m.skin_k, nt = m.ntets;
    double poisson = m.poisson;
    sc_model_free(&m);
    CHECK(nb == 0 && nf == 0 && k == 0 && fixed == 0, "boneless: %d bones, %d fixed nodes, skin k %d, %d nodes on a bone", nb, nf, k, fixed);
    CHECK(nt >= 0.75 * table_tets && nt <= 1.25 * table_tets, "%d tets, [T12] Table 1: %d", nt, table_tets);
    CHECK(fabs(mass / want - 1) < 0.03, "mass %.3f kg, density x analytic volume %.3f kg", mass, want);
    CHECK(fabs(lowest) < 0.005, "lowest node at y = %g m: the letter does not stand on the ground", lowest);
    CHECK(nonpos == 0 && vol_err < 1e-9, "%d tets not positively oriented; volumes off by %g", nonpos, vol_err);
    CHECK(fabs(poisson - 0.45) < 1e-12, "poisson ratio %g, the config's 0.45", poisson);
    /* the file says so for a newcomer: 0 bones in the report and an empty /skeleton */
    sc_h5 *f;
    if (sc_h5_open(h5, &f, &err)) {
        sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
        return 0;
    }
    long long bones = -1;
    size_t n = 7;
    char **names = NULL;
    sc_h5_read_attr_i64(f, "/report", "bones", &bones, NULL);
    int rc = sc_h5_read_strings(f, "/skeleton/names", &n, &names, &err);
    sc_h5_free_strings(names, n);
    sc_h5_close(f);
    CHECK(rc == 0 && n == 0 && bones == 0, "/skeleton/names %zu rows, /report bones %lld", n, bones);
    return 1;
}

TEST(letters_meshprep_I_and_O)
{
    const char *i = letter_character("I");
    ENSURE_MSG(i, "mesh-prep configs/letters/I.yaml: %s", out);
    /* the I: a 0.3 x 1.0 x 0.3 m box, its edges rounded by 2 cm */
    if (!check_letter(i, 1066, rounded_box_volume(0.3, 1.0, 0.3, 0.02))) return;
    const char *o = letter_character("O");
    ENSURE_MSG(o, "mesh-prep configs/letters/O.yaml: %s", out);
    /* the O: a ring about a circle of radius 0.4 m, its cross-section a 0.2 x 0.3 m rectangle with
       corners rounded by 2 cm (Pappus: 2 pi R times the cross-section's area) */
    ENSURE(check_letter(o, 911, 2 * SC_PI * 0.4 * (0.2 * 0.3 - (4 - SC_PI) * 0.02 * 0.02)));
}

/* A boneless character in memory: the reader's arrays for 0 bones, hashed, cloned and freed. */
TEST(letters_boneless_model_hash_clone)
{
    const char *i = letter_character("I");
    ENSURE_MSG(i, "mesh-prep configs/letters/I.yaml: %s", out);
    sc_model m, c, again;
    sc_err err;
    ENSURE_OK(sc_character_read(i, &m, 0, &err), &err);
    ENSURE_OK(sc_model_clone(&m, &c, &err), &err);
    ENSURE_OK(sc_character_read(i, &again, 0, &err), &err);
    uint64_t hm = sc_model_hash(&m), hc = sc_model_hash(&c), ha = sc_model_hash(&again);
    c.node_mass[0] *= 2;
    uint64_t changed = sc_model_hash(&c);
    ENSURE_MSG(sc_character_require_bones(i, &m, "simulate", &err) == SC_EINPUT && strstr(err.msg, "boneless"), "%s", err.msg);
    sc_model_free(&m);
    sc_model_free(&c);
    sc_model_free(&again);
    ENSURE(m.nbones == 0 && !m.bone_name && !c.rest_pos);
    ENSURE_MSG(hm == hc && hm == ha && changed != hm, "hashes %016llx %016llx %016llx %016llx", (unsigned long long)hm, (unsigned long long)hc,
               (unsigned long long)ha, (unsigned long long)changed);
    /* the reader wants skin: a boneless character has none, and says why */
    ENSURE(sc_character_read(i, &m, 1, &err) == SC_EINPUT && strstr(err.msg, "boneless"));
}

/* Any closed OBJ without a skeleton is a boneless character too: the I's own surface, meshed
   through the offset envelope (the default for an OBJ) and as itself (envelope.offset 0). */
TEST(letters_boneless_obj_body)
{
    const char *obj = sc_test_tmp("letter_I_surface.obj");
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --surface-obj %s", sc_test_tool("mesh-prep"), sc_test_repo("configs/letters/I.yaml"),
                        sc_test_tmp("letter_I_for_obj.h5"), obj);
    ENSURE_MSG(rc == 0, "mesh-prep: %s", out);
    static const char *const envelopes[2] = {"", "envelope: {offset: 0}\n"};
    for (int e = 0; e < 2; e++) {
        char cfg[1024], name[64], h5name[64];
        snprintf(cfg, sizeof cfg, "body: {obj: %s}\ntetgen: {target_tets: 1500}\nmaterial: {density: 500}\n%s", obj, envelopes[e]);
        snprintf(name, sizeof name, "obj_boneless_%d.yaml", e);
        snprintf(h5name, sizeof h5name, "obj_boneless_%d.h5", e);
        const char *h5 = sc_test_tmp(h5name);
        rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s", sc_test_tool("mesh-prep"), sc_test_write(name, cfg), h5);
        ENSURE_MSG(rc == 0, "mesh-prep (OBJ, %s): %s", e ? "conforming" : "offset envelope", out);
        sc_model m;
        sc_err err;
        ENSURE_OK(sc_character_read(h5, &m, 0, &err), &err);
        double mass = 0, lowest = INFINITY;
        for (int i = 0; i < m.nnodes; i++) {
            mass += m.node_mass[i];
            lowest = fmin(lowest, m.rest_pos[3 * i + 1]);
        }
        int nb = m.nbones, nt = m.ntets;
        sc_model_free(&m);
        double want = 500 * rounded_box_volume(0.3, 1.0, 0.3, 0.02);
        sc_test_report("OBJ body, %s: %d tets, mass %.3f kg (analytic %.3f), lowest node y = %.3g m", e ? "conforming" : "offset envelope", nt, mass,
                       want, lowest);
        ENSURE(nb == 0);
        ENSURE_MSG(fabs(mass / want - 1) < 0.03, "mass %g, want %g", mass, want);
        ENSURE_MSG(e ? fabs(lowest) < 0.005 : lowest < -0.01, "lowest node %g", lowest); /* the offset shell reaches below the ground */
    }
}

/* A letter mesh-prep does not know is exit 2 naming the config's line; so are keys that make no
   sense without bones, and a letter given a skeleton. Nothing is written. */
TEST(letters_bad_config)
{
    static const struct {
        const char *name, *yaml, *n1, *n2;
    } cases[] = {
        {"bad_letter", "# a letter softcon lacks\nbody: {letter: Q}\n", "bad_letter.yaml:2:", "unknown letter 'Q' (built-in letters: I, H, F, T, O, X, I_flat)"},
        {"letter_scale", "body: {letter: I, scale: 2}\n", "letter_scale.yaml:1:", "body.scale does not apply to a letter"},
        {"letter_fixed", "body: {letter: H}\nfixed: {radius: 0.1}\n", "letter_fixed.yaml:2:", "`fixed:` places nodes on bones"},
        {"letter_skeleton", "skeleton: {bones: [{name: root, head: [0, 0, 0], tail: [0, 1, 0]}]}\nbody: {letter: I}\n", "letter_skeleton.yaml:2:",
         "remove `skeleton:`"},
        {"no_skeleton", "body: {builtin: panda}\n", "no_skeleton.yaml", "a built-in body (body.builtin: michelin | panda) is built around a skeleton"},
        {"fibre_outside", "body: {letter: I}\ntetgen: {target_tets: 300}\nmuscles:\n  fibres:\n    - {group: spine, points: [[0, 0.5, 0], [0, 1.6, 0]]}\n",
         "fibre_outside.yaml:5:", "muscles.fibres[0]: point 1 (0.000, 1.600, 0.000) m of muscle fibre 0 lies outside the body"},
        {"bounds_reversed", "body: {letter: I}\nmuscles: {min_ratio: 1.5, letter: {}}\n", "bounds_reversed.yaml:2:", "min_ratio l0 <= l_d <= l0 need 0 < min_ratio < 1"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char file[64], h5[64];
        snprintf(file, sizeof file, "%s.yaml", cases[c].name);
        snprintf(h5, sizeof h5, "%s.h5", cases[c].name);
        const char *outp = sc_test_tmp(h5);
        int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s", sc_test_tool("mesh-prep"), sc_test_write(file, cases[c].yaml), outp);
        sc_test_report("%s: exit %d: %s", cases[c].name, rc, out);
        ENSURE_MSG(rc == 2 && strstr(out, cases[c].n1) && strstr(out, cases[c].n2), "%s: exit %d: %s", cases[c].name, rc, out);
        ENSURE_MSG(!sc_test_file_exists(outp) && !sc_test_temporary_left(outp), "%s left output", cases[c].name);
    }
}

/* skin-weights, inverse-dynamics and simulate refuse a boneless character: exit 2 saying so,
   nothing written; render draws it (a rest-pose PNG, the exports but a skeleton's BVH). */
TEST(letters_boneless_tools)
{
    const char *i = letter_character("I");
    ENSURE_MSG(i, "mesh-prep configs/letters/I.yaml: %s", out);
    static const struct {
        const char *tool, *config;
    } refusing[] = {
        {"skin-weights", "configs/michelin.yaml"},
        {"inverse-dynamics", "configs/walk.yaml"},
        {"simulate", "configs/stand.yaml"},
    };
    for (size_t k = 0; k < sizeof refusing / sizeof *refusing; k++) {
        const char *outp = sc_test_tmp("boneless_refused.h5");
        int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s", sc_test_tool(refusing[k].tool), sc_test_repo(refusing[k].config), outp, i);
        sc_test_report("%s on a boneless character: exit %d: %s", refusing[k].tool, rc, out);
        ENSURE_MSG(rc == 2 && strstr(out, "a boneless character") && strstr(out, refusing[k].tool) && strstr(out, "needs a character with a skeleton"),
                   "%s: exit %d: %s", refusing[k].tool, rc, out);
        ENSURE_MSG(!sc_test_file_exists(outp) && !sc_test_temporary_left(outp), "%s left output", refusing[k].tool);
    }
    const char *dir = sc_test_tmp("letter_I_render");
    int rc = sc_test_sh(out, sizeof out, "%s --size 320x240 --no-movie -o %s %s", sc_test_tool("render"), dir, i);
    ENSURE_MSG(rc == 0 && strstr(out, "no letter_I_skeleton.bvh"), "render: exit %d: %s", rc, out);
    char png[1024], obj[1024], bvh[1024];
    snprintf(png, sizeof png, "%s/frame_00000.png", dir);
    snprintf(obj, sizeof obj, "%s/letter_I_surface.obj", dir);
    snprintf(bvh, sizeof bvh, "%s/letter_I_skeleton.bvh", dir);
    ENSURE(sc_test_file_exists(png) && sc_test_file_exists(obj) && !sc_test_file_exists(bvh));
}

#include "store/muscles.h"

/* mesh-prep stores the I's muscles of configs/letters/I.yaml ([T12] Table 1: 48 control
 * variables) in /muscles, and they read back: every point embedded, and at rest lengths the
 * fibres pull on nothing. */
TEST(letters_muscles_stored_and_read_back)
{
    const char *i = letter_character("I");
    ENSURE_MSG(i, "mesh-prep configs/letters/I.yaml: %s", out);
    sc_model m;
    sc_muscles mu;
    sc_err err;
    int present = 0;
    ENSURE_OK(sc_character_read(i, &m, 0, &err), &err);
    ENSURE_OK(sc_character_read_muscles(i, &m, &mu, &present, &err), &err);
    ENSURE(present && mu.nfibres == 4 && mu.nsegs == 48 && mu.ngroups >= 1);
    double *f = calloc(3 * (size_t)m.nnodes, sizeof(double)), *rot = malloc(9 * (size_t)m.ntets * sizeof(double)), *len = malloc(48 * sizeof(double));
    for (int t = 0; t < m.ntets; t++)
        for (int k = 0; k < 9; k++) rot[9 * t + k] = k % 4 == 0;
    sc_muscle_forces(&mu, &m, m.rest_pos, rot, mu.rest_len, len, f);
    double worst = 0;
    for (int k = 0; k < 3 * m.nnodes; k++) worst = fmax(worst, fabs(f[k]));
    sc_test_report("%s: %d fibres, %d segments, %d tet-segment weights; force at rest %.2e N", i, mu.nfibres, mu.nsegs, mu.inf_first[m.ntets], worst);
    ENSURE(worst < 1e-9);
    free(f);
    free(rot);
    free(len);
    sc_muscles_free(&mu);
    sc_model_free(&m);
}

#include "store/sim.h"

/* The I's tilt (degrees from the vertical) in sim.h5 frame k: its top nodes' centre (rest y >
   0.9 m) against its bottom nodes' (rest y < 0.1 m). */
static double letter_tilt(const char *sim, int last, double *com_y)
{
    sc_sim_file *file;
    sc_sim_data d;
    sc_err err;
    int is_sim;
    if (sc_sim_open(sim, &is_sim, &file, &d, &err)) {
        sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
        return NAN;
    }
    double *x = malloc(3 * (size_t)d.nnodes * sizeof(double)), top[3] = {0}, bot[3] = {0};
    int k = last ? d.nframes - 1 : 0, nt = 0, nb = 0;
    if (sc_sim_read_node_frame(file, d.nnodes, k, x, &err)) sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
    for (int i = 0; i < d.nnodes; i++) {
        const double y0 = d.rest_pos[3 * i + 1];
        for (int c = 0; c < 3; c++) {
            if (y0 > 0.9) top[c] += x[3 * i + c];
            if (y0 < 0.1) bot[c] += x[3 * i + c];
        }
        nt += y0 > 0.9;
        nb += y0 < 0.1;
    }
    double a[3];
    for (int c = 0; c < 3; c++) a[c] = top[c] / nt - bot[c] / nb;
    *com_y = d.com[3 * k + 1];
    free(x);
    sc_sim_data_free(&d);
    sc_sim_close(file);
    return acos(a[1] / sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])) * 180 / SC_PI;
}

/* muscle-sim runs the I of configs/letters/i_balance.yaml for 0.5 s with its push at the head
 * moved to 0.1 s: under QPCC it stands (tilt under 5 degrees), its volume stays within [T12]'s
 * 15 %, every period is planned, and a second run is bit-identical (nodes, muscles, plans). */
TEST(letters_muscle_sim_pushed_i)
{
    const char *i = letter_character("I");
    ENSURE_MSG(i, "mesh-prep configs/letters/I.yaml: %s", out);
    char *base = sc_test_read_file(sc_test_repo("configs/letters/i_balance.yaml"), NULL);
    ENSURE(base);
    char cfg[8192];
    snprintf(cfg, sizeof cfg, "%s", base);
    free(base);
    /* the shipped config, shorter, the push earlier: the same objectives */
    char *dur = strstr(cfg, "duration: 4.0"), *from = strstr(cfg, "from: 0.5, to: 0.6");
    ENSURE(dur && from);
    memcpy(dur, "duration: 0.5", 13);
    memcpy(from, "from: 0.1, to: 0.2", 18);
    const char *yaml = sc_test_write("i_balance_short.yaml", cfg), *a = sc_test_tmp("i_balance_a.h5"), *b = sc_test_tmp("i_balance_b.h5");
    int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s && %s -q -c %s -o %s %s", sc_test_tool("muscle-sim"), yaml, a, i, sc_test_tool("muscle-sim"),
                        yaml, b, i);
    sc_test_report("%s", out);
    ENSURE_MSG(rc == 0, "muscle-sim: exit %d: %s", rc, out);
    ENSURE_MSG(sc_test_h5_same(out, sizeof out, a, b, "/nodes,/muscles,/control,/fem"), "two runs differ: %s", out);
    sc_h5 *f;
    sc_err err;
    ENSURE_OK(sc_h5_open(a, &f, &err), &err);
    double dv = NAN, mindet = NAN;
    long long plans = -1;
    char *status = NULL;
    sc_h5_read_attr_f64(f, "/fem", "max_volume_change", &dv, NULL);
    sc_h5_read_attr_f64(f, "/fem", "min_det", &mindet, NULL);
    sc_h5_read_attr_i64(f, "/control", "plans", &plans, NULL);
    sc_h5_read_attr_str(f, "/", "status", &status, NULL);
    sc_h5_close(f);
    double com0, com1, tilt0 = letter_tilt(a, 0, &com0), tilt = letter_tilt(a, 1, &com1);
    sc_test_report("pushed I under QPCC: tilt %.2f -> %.2f deg, COM height %.3f -> %.3f m, volume change %.2f %%, min det F %.3f, %lld plans", tilt0,
                   tilt, com0, com1, 100 * dv, mindet, plans);
    ENSURE_MSG(status && !strcmp(status, "completed"), "status %s", status ? status : "(none)");
    free(status);
    ENSURE_MSG(plans == 50, "%lld plans in 0.5 s at 10 ms", plans);
    ENSURE_MSG(dv < 0.15, "volume change %.3f", dv);
    ENSURE_MSG(tilt < 5, "tilt %.2f deg after the push", tilt);
}

/* muscle-sim's bad configs are exit 2 naming the line, leaving nothing; a character with bones is
   refused. */
TEST(letters_muscle_sim_bad_config)
{
    const char *i = letter_character("I");
    ENSURE_MSG(i, "mesh-prep configs/letters/I.yaml: %s", out);
    static const struct {
        const char *name, *yaml, *n1, *n2;
    } cases[] = {
        {"ms_no_node", "muscle_control:\n  objectives: [{type: kinetic}]\nforces:\n  - {force: [1, 0, 0], region: {min: [0, 5, 0]}}\n", "ms_no_node.yaml:4:",
         "forces[0].region: no node of the body lies in"},
        {"ms_type", "muscle_control:\n  objectives:\n    - {type: balance}\n", "ms_type.yaml:3:", "balance"},
        {"ms_times", "muscle_control:\n  objectives:\n    - {type: kinetic, from: 2, to: 1}\n", "ms_times.yaml:3:", "is not after from"},
        {"ms_none", "muscle_control:\n  solver: qpcc\n", "ms_none.yaml:2:", "missing required key 'objectives' in 'muscle_control'"},
        {"ms_period", "simulation: {dt: 0.0005}\nmuscle_control:\n  period: 0.0103\n  objectives: [{type: kinetic}]\n", "ms_period.yaml",
         "not a whole number of steps"},
        {"ms_reg", "muscle_control:\n  objectives:\n    - {type: regularise, contraction: 0.2, region: {min: [0, 5, 0]}}\n", "ms_reg.yaml:3:",
         "no muscle segment's midpoint lies in it"},
        {"ms_anchored", "muscle_control:\n  objectives:\n    - {type: com_velocity, anchored: true}\n", "ms_anchored.yaml:3:",
         "anchored applies to types point, com and momentum only"},
        {"ms_ramp", "muscle_control:\n  objectives:\n    - {type: com, ramp: smooth, target: [0.1, 0, 0]}\n", "ms_ramp.yaml:3:", "it needs a `to`"},
        {"ms_ramp_kind", "muscle_control:\n  objectives:\n    - {type: com, ramp: cubic, to: 1}\n", "ms_ramp_kind.yaml:3:", "cubic"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char file[64], h5[64];
        snprintf(file, sizeof file, "%s.yaml", cases[c].name);
        snprintf(h5, sizeof h5, "%s.h5", cases[c].name);
        const char *outp = sc_test_tmp(h5);
        int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s", sc_test_tool("muscle-sim"), sc_test_write(file, cases[c].yaml), outp, i);
        sc_test_report("%s: exit %d: %s", cases[c].name, rc, out);
        ENSURE_MSG(rc == 2 && strstr(out, cases[c].n1) && strstr(out, cases[c].n2), "%s: exit %d: %s", cases[c].name, rc, out);
        ENSURE_MSG(!sc_test_file_exists(outp) && !sc_test_temporary_left(outp), "%s left output", cases[c].name);
    }
}

#include "settings/muscle_run.h"
#include "settings/muscle_sampling.h"

/* Every shipped behaviour config reads against its letter: objectives, forces and every node
   region resolved, the control period a whole number of steps. */
TEST(letters_behaviour_configs_read)
{
    static const struct {
        const char *config, *letter;
        int objectives;
    } shipped[] = {
        {"configs/letters/i_balance.yaml", "I", 3},       {"configs/letters/h_exercise.yaml", "H", 5}, {"configs/letters/f_slide.yaml", "F", 3},
        {"configs/letters/i_jump.yaml", "I", 25},         {"configs/letters/i_jump_forward.yaml", "I", 17}, {"configs/letters/o_roll.yaml", "O", 8},
        {"configs/letters/t_twist_jump.yaml", "T", 14},   {"configs/letters/i_crawl.yaml", "I_flat", 5},   {"configs/letters/i_inchworm.yaml", "I_flat", 5},
        {"configs/letters/x_walk.yaml", "X", 38},         {"configs/letters/x_walk_two.yaml", "X", 74},
        {"configs/letters/i_cartwheel.yaml", "I_strong", 6},
    };
    for (size_t k = 0; k < sizeof shipped / sizeof *shipped; k++) {
        const char *h5 = letter_character(shipped[k].letter);
        ENSURE_MSG(h5, "mesh-prep %s: %s", shipped[k].letter, out);
        sc_model m;
        sc_cfg *cfg;
        sc_err err;
        sc_muscle_run_config rc;
        sc_muscles mu;
        int present;
        ENSURE_OK(sc_character_read(h5, &m, 0, &err), &err);
        ENSURE_OK(sc_character_read_muscles(h5, &m, &mu, &present, &err), &err);
        ENSURE_OK(sc_cfg_load_file(sc_test_repo(shipped[k].config), &cfg, &err), &err);
        int rrc = sc_muscle_run_read(cfg, &m, &mu, &rc, &err);
        if (!rrc && sc_cfg_get(sc_cfg_root(cfg), "muscle_sampling")) { /* muscle-sample's search too */
            sc_msamcon_config sc;
            rrc = sc_msamcon_read(cfg, &rc, &sc, &err) || sc_msamcon_check(&sc, &rc.run, &err);
        }
        sc_cfg_free(cfg);
        sc_muscles_free(&mu);
        sc_model_free(&m);
        ENSURE_MSG(rrc == 0, "%s: %s", shipped[k].config, err.msg);
        const int n = rc.run.control.nobjectives, solver = rc.run.solver;
        const double steps = rc.run.control.period / rc.run.body.dt;
        sc_muscle_run_config_free(&rc);
        ENSURE_MSG(n == shipped[k].objectives && solver == SC_RUN_QPCC, "%s: %d objectives, solver %d", shipped[k].config, n, solver);
        ENSURE_MSG(fabs(steps - lround(steps)) < 1e-9, "%s: period of %g steps", shipped[k].config, steps);
    }
}

/* muscle-sample turns the I about -z by sampling its controller's targets over 0.1 s segments:
 * the path it finds costs less than the greedy controller's (every offset 0), its offsets lie in
 * their boxes, the volume stays within [T12]'s 15 %, and the result is bit-identical alone and
 * under mpiexec.mpich -n 2 with two threads each. A control naming no objective, or an anchored
 * objective, is exit 2 naming the line, leaving nothing. */
TEST(letters_muscle_sample_turns_the_i)
{
    const char *i = letter_character("I");
    ENSURE_MSG(i, "mesh-prep configs/letters/I.yaml: %s", out);
    const char *body = "simulation: {duration: 0.3, dt: 0.0005}\n"
                       "muscle_control:\n"
                       "  objectives:\n"
                       "    - {type: angular_momentum, axes: [0, 0, 1]}\n"
                       "    - {type: angular_momentum, axes: [1, 1, 0], kd: 30}\n"
                       "    - {type: com_velocity, weight: 1000, when: contact, axes: [1, 1, 0]}\n"
                       "    - {type: kinetic, weight: 100}\n"
                       "    - {type: regularise}\n"
                       "muscle_sampling:\n"
                       "  samples: 6\n"
                       "  elites: 2\n"
                       "  controls:\n"
                       "    - {objective: 0, axis: z, half_width: 400}\n"
                       "    - {objective: %d, axis: x, half_width: 2}\n"
                       "  cost:\n"
                       "    - {type: turn, axis: [0, 0, -1], target: 360, from: 0, to: 2.0}\n";
    char yaml[2048];
    snprintf(yaml, sizeof yaml, body, 2);
    const char *cfg = sc_test_write("sample_turn.yaml", yaml), *a = sc_test_tmp("sample_turn_a.h5"), *b = sc_test_tmp("sample_turn_b.h5");
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s && mpiexec.mpich -n 2 %s -q --threads 2 -c %s -o %s %s", sc_test_tool("muscle-sample"),
                        cfg, a, i, sc_test_tool("muscle-sample"), cfg, b, i);
    ENSURE_MSG(rc == 0, "muscle-sample: exit %d: %s", rc, out);
    ENSURE_MSG(sc_test_h5_same(out, sizeof out, a, b, "/nodes,/muscles,/control,/fem,/sampling"), "1 rank and 2 x 2 differ: %s", out);
    sc_h5 *f;
    sc_err err;
    ENSURE_OK(sc_h5_open(a, &f, &err), &err);
    double greedy = NAN, dv = NAN, *cost = NULL, *offset = NULL;
    long long completed = 0;
    size_t dn[1] = {0}, dof[2] = {0, 0};
    sc_h5_read_attr_f64(f, "/sampling", "greedy_path_cost", &greedy, NULL);
    sc_h5_read_attr_i64(f, "/sampling", "completed", &completed, NULL);
    sc_h5_read_attr_f64(f, "/fem", "max_volume_change", &dv, NULL);
    int r1 = sc_h5_read_f64(f, "/sampling/path_cost", 1, dn, &cost, &err), r2 = r1 ? r1 : sc_h5_read_f64(f, "/sampling/offset", 2, dof, &offset, &err);
    sc_h5_close(f);
    ENSURE_OK(r2, &err);
    const size_t n = dn[0];
    sc_test_report("3 segments x 6 samples: path cost %.1f, the greedy controller's %.1f; volume change %.2f %%", cost[n - 1], greedy, 100 * dv);
    ENSURE(completed == 1 && n == 3 && dof[0] == 3 && dof[1] == 2);
    ENSURE_MSG(cost[n - 1] < 0.8 * greedy, "sampled %.1f, greedy %.1f", cost[n - 1], greedy);
    for (size_t k = 0; k < 3; k++) ENSURE(fabs(offset[2 * k]) <= 400 && fabs(offset[2 * k + 1]) <= 2);
    ENSURE(dv < 0.15);
    free(cost);
    free(offset);
    snprintf(yaml, sizeof yaml, body, 9);
    const char *bad = sc_test_write("sample_bad.yaml", yaml), *c = sc_test_tmp("sample_bad.h5");
    rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s", sc_test_tool("muscle-sample"), bad, c, i);
    ENSURE_MSG(rc == 2 && strstr(out, "sample_bad.yaml:14:") && strstr(out, "objective: 9"), "exit %d: %s", rc, out);
    ENSURE(!sc_test_file_exists(c) && !sc_test_temporary_left(c));
    /* an anchored objective: its anchor is the controller's, not the snapshots' (refused) */
    char anchored[2048];
    snprintf(yaml, sizeof yaml, body, 2);
    const char *at = strstr(yaml, "    - {type: regularise}\n");
    ENSURE(at);
    snprintf(anchored, sizeof anchored, "%.*s    - {type: regularise}\n    - {type: com, anchored: true}\n%s", (int)(at - yaml), yaml,
             at + strlen("    - {type: regularise}\n"));
    rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s", sc_test_tool("muscle-sample"), sc_test_write("sample_bad.yaml", anchored), c, i);
    ENSURE_MSG(rc == 2 && strstr(out, "sample_bad.yaml:11:") && strstr(out, "objectives[5] is anchored"), "exit %d: %s", rc, out);
    ENSURE(!sc_test_file_exists(c) && !sc_test_temporary_left(c));
}

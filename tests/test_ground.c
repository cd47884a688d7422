/* The bumpy-tile ground ([J11] 6: 5 x 5 cm tiles, vertices raised uniformly in [0, 2] cm,
 * seeded): the generator, the exact piecewise-planar height and normal, and its config keys. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/rng.h"
#include "fixtures.h"
#include "io/h5.h"
#include "sim/contact.h"
#include "test.h"

static char out[16384];

static sc_ground tiles(uint64_t seed)
{
    sc_contact_opts o;
    sc_contact_default_opts(&o);
    o.ground.offset = 0.1; /* a raised base plane: the tiles sit on it */
    o.ground.tile_size = 0.05;
    o.ground.tile_height = 0.02;
    o.ground.tile_seed = seed;
    return o.ground;
}

TEST(ground_tiles_deterministic_per_seed)
{
    sc_ground a = tiles(1), b = tiles(1), c = tiles(2), flat = tiles(1);
    flat.tile_size = 0;
    long n = 0, same = 0, differ = 0;
    double lo = 1, hi = 0, sum = 0;
    for (long i = -50; i <= 50; i++)
        for (long j = -50; j <= 50; j++) {
            double u = sc_ground_tile_vertex(&a, i, j), v = sc_ground_tile_vertex(&b, i, j), w = sc_ground_tile_vertex(&c, i, j);
            same += !memcmp(&u, &v, sizeof u);
            differ += u != w;
            lo = fmin(lo, u);
            hi = fmax(hi, u);
            sum += u;
            n++;
            ENSURE(u >= 0 && u < a.tile_height);
            ENSURE(sc_ground_tile_vertex(&flat, i, j) == 0);
        }
    /* the far field too: a vertex 10^6 tiles (50 km) away is as good as one near */
    double far = sc_ground_tile_vertex(&a, 1000000, -1000000);
    sc_test_report("%ld vertices, seed 1 twice: %ld identical; seed 2: %ld differ; raises in [%.5f, %.5f] m, mean %.5f m (uniform: 0.01); "
                   "vertex (1e6, -1e6): %.5f m",
                   n, same, differ, lo, hi, sum / n, far);
    ENSURE(same == n && differ == n);
    ENSURE(lo < 0.0005 && hi > 0.0195);
    ENSURE(fabs(sum / n - 0.01) < 3e-4); /* 3.5 standard errors of the mean */
    ENSURE(far >= 0 && far < 0.02 && sc_ground_is_flat(&flat) && !sc_ground_is_flat(&a));
}

/* The plane through the triangle's three vertices, by hand: its height over it along its
 * upward unit normal. */
static double plane_height(const double P[3][3], const double p[3], double nrm[3])
{
    double e1[3], e2[3];
    for (int k = 0; k < 3; k++) {
        e1[k] = P[1][k] - P[0][k];
        e2[k] = P[2][k] - P[0][k];
    }
    double c[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
    double len = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]), s = c[1] > 0 ? 1 / len : -1 / len;
    for (int k = 0; k < 3; k++) nrm[k] = c[k] * s;
    return nrm[0] * (p[0] - P[0][0]) + nrm[1] * (p[1] - P[0][1]) + nrm[2] * (p[2] - P[0][2]);
}

TEST(ground_tiles_are_exact_planes)
{
    sc_ground g = tiles(7);
    const double s = g.tile_size;
    sc_rng r;
    sc_rng_init(&r, 42, 0, 0);
    double err_h = 0, err_n = 0;
    for (int k = 0; k < 2000; k++) {
        double p[3] = {-1 + 2 * sc_rng_uniform(&r), g.offset - 0.05 + 0.1 * sc_rng_uniform(&r), -1 + 2 * sc_rng_uniform(&r)};
        long i = (long)floor(p[0] / s), j = (long)floor(p[2] / s);
        double fx = p[0] / s - i, fz = p[2] / s - j;
        long corner[3][2] = {{i, j}, {i + 1, j + 1}, {fx >= fz ? i + 1 : i, fx >= fz ? j : j + 1}}; /* the diagonal, then the third */
        double P[3][3], nrm[3];
        for (int v = 0; v < 3; v++) {
            P[v][0] = corner[v][0] * s;
            P[v][1] = g.offset + sc_ground_tile_vertex(&g, corner[v][0], corner[v][1]);
            P[v][2] = corner[v][1] * s;
        }
        double want = plane_height((const double(*)[3])P, p, nrm);
        sc_vec3 n;
        double h = sc_ground_height(&g, sc_v3(p[0], p[1], p[2]), &n);
        err_h = fmax(err_h, fabs(h - want));
        err_n = fmax(err_n, fmax(fabs(n.x - nrm[0]), fmax(fabs(n.y - nrm[1]), fabs(n.z - nrm[2]))));
    }
    /* every vertex lies on the ground */
    double err_v = 0;
    for (long i = -20; i <= 20; i++)
        for (long j = -20; j <= 20; j++)
            err_v = fmax(err_v, fabs(sc_ground_height(&g, sc_v3(i * s, g.offset + sc_ground_tile_vertex(&g, i, j), j * s), NULL)));
    sc_test_report("2000 random points against the plane of their triangle's three vertices: height off by at most %.2g m, normal by "
                   "%.2g; 1681 vertices on the ground within %.2g m",
                   err_h, err_n, err_v);
    ENSURE(err_h < 1e-15 && err_n < 1e-12 && err_v < 1e-15);
}

TEST(ground_tiles_are_continuous)
{
    /* across the cells' edges (x or z on the grid) and the diagonal (fx = fz), the ground's
     * level (y - h / n.y on a level base: h is the distance along the triangle's normal) from
     * either side agrees to within the slope times the step, and the normal changes */
    sc_ground g = tiles(3);
    const double s = g.tile_size, eps = 1e-10, y = g.offset + 0.01;
    sc_rng r;
    sc_rng_init(&r, 43, 0, 0);
    double jump[3] = {0, 0, 0};
    int kinks = 0;
    for (int k = 0; k < 3000; k++) {
        long i = (long)(sc_rng_u32(&r) % 40) - 20, j = (long)(sc_rng_u32(&r) % 40) - 20;
        double t = sc_rng_uniform(&r), a[3], b[3];
        int kind = k % 3;
        if (kind == 0) { /* the edge x = i s */
            a[0] = i * s - eps, b[0] = i * s + eps, a[2] = b[2] = (j + t) * s;
        } else if (kind == 1) { /* the edge z = j s */
            a[2] = j * s - eps, b[2] = j * s + eps, a[0] = b[0] = (i + t) * s;
        } else { /* the diagonal of cell (i, j) */
            a[0] = (i + t) * s + eps, a[2] = (j + t) * s - eps, b[0] = (i + t) * s - eps, b[2] = (j + t) * s + eps;
        }
        sc_vec3 na, nb;
        double ha = sc_ground_height(&g, sc_v3(a[0], y, a[2]), &na), hb = sc_ground_height(&g, sc_v3(b[0], y, b[2]), &nb);
        jump[kind] = fmax(jump[kind], fabs((y - ha / na.y) - (y - hb / nb.y)));
        kinks += sc_v3_norm(sc_v3_sub(na, nb)) > 1e-6;
    }
    sc_test_report("3000 crossings of edges in x, edges in z and diagonals (2e-10 m apart): height jumps at most %.2g, %.2g, %.2g m; the "
                   "normal turns at %d of them",
                   jump[0], jump[1], jump[2], kinks);
    /* the slope is at most 2 height / size (0.8): 2e-10 m apart differ by at most 1.6e-10 (and rounding) */
    ENSURE(jump[0] < 2e-10 && jump[1] < 2e-10 && jump[2] < 2e-10);
    ENSURE(kinks > 2900); /* the field is piecewise planar, not smooth */
}

/* simulate with `ground: {slope: 0, KEY: VALUE}` (KEY on line 5 of KEY_bad.yaml): refused, naming
   that line (sc_test_simulate_refuses) */
static int ground_refused(const char *ch, const char *key, const char *value, const char *want)
{
    char text[512], name[64];
    snprintf(text, sizeof text, "simulation: {duration: 0.01}\ncontroller: {type: hold}\nground:\n  slope: 0\n  %s: %s\n", key, value);
    snprintf(name, sizeof name, "%s_bad.yaml", key);
    return sc_test_simulate_refuses(out, sizeof out, ch, name, text, 5, want);
}

TEST(ground_tiles_config_errors)
{
    const char *ch = sc_fixture_michelin();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    static const struct {
        const char *tiles, *want;
    } bad[] = {
        {"{size: 0, height: 0.02}", "'ground.tiles.size' = 0 is outside"},
        {"{size: -0.05}", "'ground.tiles.size' = -0.05 is outside"},
        {"{size: 0.05, height: -0.01}", "'ground.tiles.height' = -0.01 is outside"},
        {"{size: 0.05, height: 0.06}", "larger than ground.tiles.size"},
        {"{size: 0.05, seed: 1.5}", "'ground.tiles.seed' must be an integer"},
        {"{size: 0.05, seed: -3}", "'ground.tiles.seed' = -3 is outside"},
        {"{size: 0.05, seeds: 3}", "unknown key 'seeds' in 'ground.tiles' (did you mean 'seed'?)"},
        {"{height: 0.01, seed: 2}", "ground.tiles needs a size"},
        {"[0.05, 0.02]", "'ground.tiles' must be a mapping"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        ENSURE_MSG(ground_refused(ch, "tiles", bad[k].tiles, bad[k].want), "tiles %s: %s", bad[k].tiles, out);
    sc_test_report("%zu bad ground.tiles: exit 2 naming line 5, no output; e.g. %s", sizeof bad / sizeof *bad, out);
    /* a good one runs, and the resolved config keeps the floor */
    const char *cfg = sc_test_write(
        "tiles_ok.yaml", "simulation: {duration: 0.01}\ncontroller: {type: hold}\nground:\n  tiles: {size: 0.05, height: 0.02, seed: 9}\n");
    const char *o = sc_test_tmp("tiles_ok.h5");
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("simulate"), cfg, o, ch);
    ENSURE_MSG(rc == 0, "exit %d: %s", rc, out);
    sc_h5 *f;
    sc_err err;
    char *resolved = NULL;
    ENSURE_OK(sc_h5_open(o, &f, &err), &err);
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "config", &resolved, &err), &err);
    sc_h5_close(f);
    int kept = strstr(resolved, "tiles") && strstr(resolved, "seed: 9");
    free(resolved);
    ENSURE(kept);
}

/* ground.boxes: an obstacle joined to the floor. Above it the ground is its top; beside it its
   side pushes back horizontally (a foot that does not clear it trips); the nearest surface
   decides inside; the culling bound and the picture's heights include it. Bad boxes exit 2. */
TEST(ground_boxes_are_obstacles)
{
    sc_contact_opts o;
    sc_contact_default_opts(&o);
    sc_ground g = o.ground;
    g.nboxes = 1;
    const double lo[3] = {-0.5, 0, 1.0}, hi[3] = {0.5, 0.1, 1.05};
    memcpy(g.box_lo[0], lo, sizeof lo);
    memcpy(g.box_hi[0], hi, sizeof hi);
    static const struct {
        double p[3], h, n[3];
    } probe[] = {
        {{0, 0.15, 1.02}, 0.05, {0, 1, 0}},     /* over its top */
        {{0, 0.08, 0.97}, 0.03, {0, 0, -1}},    /* before its near side */
        {{0, 0.09, 1.025}, -0.01, {0, 1, 0}},   /* inside, nearest the top */
        {{0, 0.05, 1.005}, -0.005, {0, 0, -1}}, /* inside, nearest the near side */
        {{0, 0.13, 1.09}, 0.05, {0, 0.6, 0.8}}, /* past its top edge: to the edge */
        {{0, 0.02, 0.5}, 0.02, {0, 1, 0}},      /* the floor away from it */
        {{0, -0.01, 1.02}, -0.01, {0, 1, 0}},   /* under its footprint, below the floor */
    };
    double worst = 0;
    for (size_t k = 0; k < sizeof probe / sizeof *probe; k++) {
        sc_vec3 n;
        const double h = sc_ground_height(&g, sc_v3(probe[k].p[0], probe[k].p[1], probe[k].p[2]), &n);
        worst = fmax(worst, fabs(h - probe[k].h) + fabs(n.x - probe[k].n[0]) + fabs(n.y - probe[k].n[1]) + fabs(n.z - probe[k].n[2]));
        ENSURE_MSG(worst < 1e-12, "probe %zu: height %.6g normal (%.3g %.3g %.3g), want %.6g", k, h, n.x, n.y, n.z, probe[k].h);
    }
    ENSURE(!sc_ground_is_flat(&g) && fabs(sc_ground_max_rise(&g) - 0.1) < 1e-15);
    ENSURE(sc_ground_top(&g, 0, 1.02) == 0.1 && sc_ground_top(&g, 0, 0.9) == 0 && sc_ground_top(&g, 0.6, 1.02) == 0);
    sc_test_report("7 probes of a 10 cm box: heights and normals within %.1e; top and culling bound 0.1 m", worst);

    const char *ch = sc_fixture_michelin();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    static const struct {
        const char *boxes, *want;
    } bad[] = {
        {"[{min: [0, 0, 0], max: [1, 0, 1]}]", "ground.boxes[0]: max[1] = 0 m is not above min[1] = 0 m"},
        {"[{min: [0, 0, 0]}]", "missing required key 'max'"},
        {"[{min: [0, 0, 0], max: [1, 1, 1e9]}]", "is outside"},
        {"[[0, 0, 0]]", "ground.boxes[0]: a map"},
        {"[{min: [0, 0, 0], max: [1, 1, 1], height: 2}]", "unknown key 'height'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        ENSURE_MSG(ground_refused(ch, "boxes", bad[k].boxes, bad[k].want), "boxes %s: %s", bad[k].boxes, out);
    sc_test_report("%zu bad ground.boxes: exit 2 naming line 5, no output", sizeof bad / sizeof *bad);
}

/* sampling.failure.obstacles: with `forbidden` a sample whose body touches a ground box fails as a
   forbidden contact; with the default (`allowed`) the same box is floor to stand on. The march
   fixture's left foot stands on a box 5 mm high: forbidden, no sample survives. */
TEST(ground_boxes_forbidden_fail_samples)
{
    ENSURE_MSG(sc_fixture_michelin() && sc_fixture_march_reference(), "fixtures: %s", sc_fixture_log());
    const char *mode[2] = {"allowed", "forbidden"};
    int rc[2];
    char log[2][512];
    for (int k = 0; k < 2; k++) {
        char text[512], name[64];
        snprintf(text, sizeof text,
                 "simulation: {solver: quick}\nground: {boxes: [{min: [0, -0.5, -1], max: [1, 0.005, 1]}]}\n"
                 "sampling: {segment: 0.05, samples: 4, elites: 2, end: 0.05, max_retries: 1, failure: {obstacles: %s}}\n",
                 mode[k]);
        snprintf(name, sizeof name, "box_%s.yaml", mode[k]);
        const char *cfg = sc_test_write(name, text), *o = sc_test_tmp("box_sampled.h5");
        remove(o);
        rc[k] = sc_test_sh(out, sizeof out, "timeout 300 %s -c %s -o %s %s %s", sc_test_tool("sample-openloop"), cfg, o, sc_fixture_michelin(),
                           sc_fixture_march_reference());
        const char *seg = strstr(out, "segment 1/1");
        snprintf(log[k], sizeof log[k], "%.200s", seg ? seg : out);
    }
    sc_test_report("a foot on a 5 mm box: allowed exit %d (%s); forbidden exit %d (%s)", rc[0], log[0], rc[1], log[1]);
    ENSURE(rc[0] == 0 && strstr(log[0], "0% failed"));
    ENSURE(rc[1] != 0 && strstr(log[1], "100% failed (forbidden contact"));
}

#include <stdlib.h>
#include <string.h>
#include "core/mathx.h"
#include "core/rng.h"
#include "core/status.h"
#include "io/obj.h"
#include "test.h"

static int parse(const char *txt, sc_trimesh *m, sc_obj_info *info, sc_err *err)
{
    /* exact-size heap copy without NUL so ASan catches any overread */
    size_t n = strlen(txt);
    char *b = malloc(n ? n : 1);
    memcpy(b, txt, n);
    int rc = sc_obj_parse_ex(b, n, "x.obj", m, info, err);
    free(b);
    return rc;
}

static int tri_is(const sc_trimesh *m, int t, int a, int b, int c)
{
    return m->tris[3 * t] == a && m->tris[3 * t + 1] == b && m->tris[3 * t + 2] == c;
}

static double signed_volume(const sc_trimesh *m)
{
    double v = 0;
    for (int t = 0; t < m->ntris; t++) {
        const double *a = m->verts + 3 * m->tris[3 * t], *b = m->verts + 3 * m->tris[3 * t + 1], *c = m->verts + 3 * m->tris[3 * t + 2];
        v += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])) / 6;
    }
    return v;
}

/* unit cube, outward quads, with assorted ignored statements and comments */
static const char *k_cube = "# cube\nmtllib cube.mtl\no Cube\n"
                            "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1 1.0\nv 0 1 1 0.5 0.5 0.5\n"
                            "vt 0 0\nvt 1 0\nvt 1 1\nvn 0 0 1\ng side\nusemtl skin\ns off\n"
                            "f 1 4 3 2\n"             /* z = 0, normal -z */
                            "f 5/1 6/2 7/3 8/1\n"     /* z = 1 */
                            "f 1//1 2//1 6//1 5//1\n" /* y = 0 */
                            "f 4/1/1 8/2/1 7/3/1 3/1/1  # trailing comment\n"
                            "f 1 5 8 4\n"  /* x = 0 */
                            "f 2 3 7 6\n"; /* x = 1 */

TEST(obj_cube_quads_and_forms)
{
    sc_trimesh m;
    sc_obj_info info;
    sc_err err = {0};
    ENSURE_OK(parse(k_cube, &m, &info, &err), &err);
    ENSURE(m.nverts == 8 && m.ntris == 12);
    ENSURE(info.nfaces == 6 && info.npolygons == 6 && info.ndropped == 0);
    ENSURE(tri_is(&m, 0, 0, 3, 2) && tri_is(&m, 1, 0, 2, 1)); /* fan from the first vertex */
    ENSURE(tri_is(&m, 2, 4, 5, 6) && tri_is(&m, 6, 3, 7, 6));
    ENSURE_NEAR(m.verts[3 * 6 + 2], 1, 0); /* w ignored */
    ENSURE_NEAR(m.verts[3 * 7 + 1], 1, 0); /* colour ignored */
    double vol = signed_volume(&m);
    sc_test_report("cube: 6 quads -> %d triangles, enclosed volume %.15g", m.ntris, vol);
    ENSURE_NEAR(vol, 1, 1e-15); /* consistent outward orientation survives triangulation */
    sc_trimesh_free(&m);
    ENSURE(m.verts == NULL && m.tris == NULL && m.nverts == 0);
}

TEST(obj_pentagon_negative_crlf)
{
    /* regular pentagon (convex), relative indices, CRLF endings */
    char txt[1024];
    int n = 0;
    for (int k = 0; k < 5; k++) n += snprintf(txt + n, sizeof txt - (size_t)n, "v %.17g %.17g 0\r\n", cos(2 * SC_PI * k / 5), sin(2 * SC_PI * k / 5));
    snprintf(txt + n, sizeof txt - (size_t)n, "f -5 -4 -3 -2 -1\r\nv 0 0 1\r\nf -6 -5 -1\r\n");
    sc_trimesh m;
    sc_obj_info info;
    sc_err err = {0};
    ENSURE_OK(parse(txt, &m, &info, &err), &err);
    ENSURE(m.nverts == 6 && m.ntris == 4 && info.npolygons == 1 && info.nfaces == 2);
    ENSURE(tri_is(&m, 0, 0, 1, 2) && tri_is(&m, 1, 0, 2, 3) && tri_is(&m, 2, 0, 3, 4));
    ENSURE(tri_is(&m, 3, 0, 1, 5)); /* -6 = first of 6 vertices, -1 = the apex */
    /* fan area of the convex pentagon = exact area 5/2 sin(72 deg) */
    double area = 0;
    for (int t = 0; t < 3; t++) {
        const double *a = m.verts + 3 * m.tris[3 * t], *b = m.verts + 3 * m.tris[3 * t + 1], *c = m.verts + 3 * m.tris[3 * t + 2];
        area += 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
    }
    ENSURE_NEAR(area, 2.5 * sin(2 * SC_PI / 5), 1e-14);
    sc_test_report("pentagon: 3 fan triangles, area %.15f (exact %.15f)", area, 2.5 * sin(2 * SC_PI / 5));
    sc_trimesh_free(&m);
}

TEST(obj_degenerate_dropped)
{
    const char *txt = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 1 2\nf 1 2 3 3\nf 2 4 3\n";
    sc_trimesh m;
    sc_obj_info info;
    sc_err err = {0};
    ENSURE_OK(parse(txt, &m, &info, &err), &err);
    /* "f 1 1 2" dropped; the quad "1 2 3 3" keeps (1,2,3) and drops (1,3,3) */
    ENSURE(m.ntris == 2 && info.ndropped == 2 && info.nfaces == 3);
    ENSURE(tri_is(&m, 0, 0, 1, 2) && tri_is(&m, 1, 1, 3, 2));
    sc_trimesh_free(&m);
    /* nothing left */
    ENSURE(parse("v 0 0 0\nv 1 0 0\nf 1 2 2\n", &m, &info, &err) == SC_EINPUT);
    ENSURE(strstr(err.msg, "x.obj: no faces left after dropping degenerate ones"));
}

static int bad(const char *txt, const char *expect)
{
    sc_trimesh m;
    sc_err err = {0};
    int rc = parse(txt, &m, NULL, &err);
    int ok = rc == SC_EINPUT && strstr(err.msg, expect) && m.verts == NULL && m.tris == NULL;
    if (!ok) printf("    got %d: %s\n", rc, err.msg);
    return ok;
}

TEST(obj_errors_name_line)
{
    /* 44 vertices on lines 2-45, the face on line 46 */
    char txt[4096] = "# header\n";
    for (int k = 0; k < 44; k++) snprintf(txt + strlen(txt), sizeof txt - strlen(txt), "v %d 0 0\n", k);
    size_t base = strlen(txt);
    strcpy(txt + base, "f 1 2 45\n");
    ENSURE(bad(txt, "x.obj:46: face index 45 out of range (44 vertices so far)"));
    strcpy(txt + base, "f 1 2 0\n");
    ENSURE(bad(txt, "x.obj:46: face index 0 out of range (44 vertices so far; OBJ indices start at 1)"));
    strcpy(txt + base, "f 1 2 -45\n");
    ENSURE(bad(txt, "x.obj:46: face index -45 out of range (44 vertices so far)"));
    strcpy(txt + base, "f 1 2 99999999999999999999\n");
    ENSURE(bad(txt, "x.obj:46: malformed face vertex '99999999999999999999'"));
    strcpy(txt + base, "f 1 2 3x\n");
    ENSURE(bad(txt, "x.obj:46: malformed face vertex '3x'"));
    strcpy(txt + base, "f 1/a 2/1 3/1\n");
    ENSURE(bad(txt, "x.obj:46: malformed face vertex '1/a'"));
    strcpy(txt + base, "f 1/1/1/1 2 3\n");
    ENSURE(bad(txt, "x.obj:46: malformed face vertex '1/1/1/1'"));
    strcpy(txt + base, "f 1/ 2 3\n");
    ENSURE(bad(txt, "x.obj:46: malformed face vertex '1/'"));
    strcpy(txt + base, "f 1 2\n");
    ENSURE(bad(txt, "x.obj:46: face needs at least 3 vertices, found 2"));
    strcpy(txt + base, "v 1 2.5.3 4\n");
    ENSURE(bad(txt, "x.obj:46: malformed vertex coordinate '2.5.3'"));
    strcpy(txt + base, "v 1 nan 4\n");
    ENSURE(bad(txt, "x.obj:46: malformed vertex coordinate 'nan'"));
    strcpy(txt + base, "v 1 2\n");
    ENSURE(bad(txt, "x.obj:46: vertex needs 3 coordinates, found 2"));
    strcpy(txt + base, "vx 1 2 3\n");
    ENSURE(bad(txt, "x.obj:46: unknown statement 'vx'"));
    strcpy(txt + base, "\n");
    ENSURE(bad(txt, "x.obj: no faces (44 vertices)"));
    ENSURE(bad("", "x.obj: no faces (0 vertices)"));
    /* a face before its vertices */
    ENSURE(bad("v 0 0 0\nf 1 2 3\nv 1 0 0\nv 0 1 0\n", "x.obj:2: face index 2 out of range (1 vertices so far)"));
    sc_trimesh m;
    sc_err err = {0};
    ENSURE(sc_obj_load(sc_test_tmp("missing.obj"), &m, &err) == SC_EIO && strstr(err.msg, "No such file"));
}

TEST(obj_write_roundtrip)
{
    sc_rng r;
    sc_rng_init(&r, 3, 0, 0);
    sc_trimesh a = {200, 300, malloc(sizeof(double) * 600), malloc(sizeof(int) * 900)};
    for (int k = 0; k < 600; k++) a.verts[k] = sc_rng_normal(&r) * 1e3 / 7;
    a.verts[0] = -0.0;
    a.verts[1] = 1e-300;
    for (int k = 0; k < 900; k++) a.tris[k] = (int)(sc_rng_u32(&r) % 200);
    for (int t = 0; t < 300; t++) /* avoid degenerate ones, which the reader would drop */
        while (a.tris[3 * t] == a.tris[3 * t + 1] || a.tris[3 * t] == a.tris[3 * t + 2] || a.tris[3 * t + 1] == a.tris[3 * t + 2])
            a.tris[3 * t + 2] = (int)(sc_rng_u32(&r) % 200);
    const char *path = sc_test_tmp("rt.obj");
    sc_err err = {0};
    ENSURE_OK(sc_obj_write(path, &a, &err), &err);
    ENSURE(!sc_test_temporary_left(sc_test_tmp("rt.obj")));
    sc_trimesh b;
    ENSURE_OK(sc_obj_load(path, &b, &err), &err);
    ENSURE(b.nverts == a.nverts && b.ntris == a.ntris);
    ENSURE(memcmp(a.verts, b.verts, sizeof(double) * 600) == 0);
    ENSURE(memcmp(a.tris, b.tris, sizeof(int) * 900) == 0);
    sc_trimesh_free(&b);
    /* invalid meshes are refused without touching the target */
    a.tris[5] = 200;
    ENSURE(sc_obj_write(sc_test_tmp("bad.obj"), &a, &err) == SC_EINPUT && strstr(err.msg, "out of range"));
    ENSURE(!sc_test_file_exists(sc_test_tmp("bad.obj")));
    a.tris[5] = 1;
    a.verts[7] = NAN;
    ENSURE(sc_obj_write(sc_test_tmp("bad.obj"), &a, &err) == SC_EINPUT);
    sc_trimesh_free(&a);
}

TEST(obj_fuzz_mutation)
{
    static const char alphabet[] = "vf /-0123456789.#\n\r\te";
    size_t n = strlen(k_cube);
    char *m = malloc(n);
    sc_rng r;
    sc_rng_init(&r, 11, 0, 0);
    int nok = 0;
    for (int t = 0; t < 3000; t++) {
        memcpy(m, k_cube, n);
        size_t len = sc_rng_u32(&r) % (n + 1);
        for (int e = 0; e < 3; e++) m[sc_rng_u32(&r) % n] = alphabet[sc_rng_u32(&r) % (sizeof alphabet - 1)];
        sc_trimesh mesh;
        sc_err err = {0};
        int rc = sc_obj_parse(m, len, "f.obj", &mesh, &err);
        ENSURE_MSG(rc == SC_OK || (rc == SC_EINPUT && strncmp(err.msg, "f.obj", 5) == 0), "%d %s", rc, err.msg);
        if (rc == SC_OK) {
            nok++;
            for (int k = 0; k < 3 * mesh.ntris; k++) ENSURE(mesh.tris[k] >= 0 && mesh.tris[k] < mesh.nverts);
            sc_trimesh_free(&mesh);
        }
    }
    free(m);
    sc_test_report("obj fuzz: 3000 truncated+mutated cubes, %d parsed", nok);
}

/* mesh-prep end to end: the built-in characters meet the [L13] Table 1 sizes and quality
 * bounds, files are self-describing, and every kind of bad input fails cleanly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/mathx.h"
#include "store/character.h"
#include "io/h5.h"
#include "io/obj.h"
#include "mesh/envelope.h"
#include "mesh/tetmesh.h"
#include "test.h"

static char out[16384];

static long long rep_i(sc_h5 *f, const char *name)
{
    long long v = -1;
    sc_h5_read_attr_i64(f, "/report", name, &v, NULL);
    return v;
}

static double rep_f(sc_h5 *f, const char *name)
{
    double v = -1;
    sc_h5_read_attr_f64(f, "/report", name, &v, NULL);
    return v;
}

/* The checks every character file must pass; returns 0 on failure (after reporting). */
static int check_character(const char *path, int lo_nodes, int hi_nodes)
{
    sc_err err;
    sc_h5 *f;
    if (sc_h5_open(path, &f, &err)) {
        sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
        return 0;
    }
    long long nodes = rep_i(f, "nodes"), tets = rep_i(f, "tets"), sv = rep_i(f, "surface_vertices"), joints = rep_i(f, "joints");
    double mindih = rep_f(f, "min_dihedral_deg"), mass = rep_f(f, "total_mass_kg"), secs = rep_f(f, "seconds");
    long long inside = rep_i(f, "embedded_inside"), nearest = rep_i(f, "embedded_nearest_tet"), bad = rep_i(f, "nonpositive_tets");
    sc_h5_close(f);
    sc_test_report("%s: %lld nodes, %lld tets, %lld surface vertices, %lld joints, min dihedral %.2f deg, "
                   "%lld tets with volume <= 0, embedded %lld inside + %lld nearest-tet, mass %.1f kg, %.2f s",
                   path, nodes, tets, sv, joints, mindih, bad, inside, nearest, mass, secs);
    CHECK(nodes >= lo_nodes && nodes <= hi_nodes, "nodes %lld", nodes);
    CHECK(tets >= 3000 && tets <= 7000, "tets %lld", tets);
    CHECK(sv >= 3000 && sv <= 10000, "surface vertices %lld", sv);
    CHECK(joints == 15 || joints == 16, "joints %lld", joints);
    CHECK(bad == 0, "%lld tets with volume <= 0", bad);
    CHECK(mindih >= 5, "min dihedral %.2f", mindih);
    CHECK(inside + nearest == sv, "embedded %lld + %lld of %lld", inside, nearest, sv);
    CHECK(mass >= 50 && mass <= 100, "mass %.1f kg", mass);

    /* re-derive from the arrays what the report claims */
    sc_model m;
    if (sc_character_read(path, &m, 0, &err)) {
        sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
        return 0;
    }
    double msum = 0, vol_err = 0, bm_err = 0;
    int nonpos = 0;
    for (int i = 0; i < m.nnodes; i++) msum += m.node_mass[i];
    for (int t = 0; t < m.ntets; t++) {
        const int *v = m.tets + 4 * t;
        double vol = sc_tet_signed_volume(m.rest_pos + 3 * v[0], m.rest_pos + 3 * v[1], m.rest_pos + 3 * v[2], m.rest_pos + 3 * v[3]);
        nonpos += vol <= 0;
        vol_err = fmax(vol_err, fabs(vol - m.tet_volume[t]) / vol);
        sc_vec3 x0 = sc_v3_load(m.rest_pos + 3 * v[0]);
        sc_mat3 bm = sc_m3_from_cols(sc_v3_sub(sc_v3_load(m.rest_pos + 3 * v[1]), x0), sc_v3_sub(sc_v3_load(m.rest_pos + 3 * v[2]), x0),
                                     sc_v3_sub(sc_v3_load(m.rest_pos + 3 * v[3]), x0)),
                inv;
        memcpy(inv.m, m.bm_inv + 9 * t, sizeof inv.m);
        sc_mat3 id = sc_m3_mul(bm, inv);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) bm_err = fmax(bm_err, fabs(id.m[r][c] - (r == c)));
    }
    double fixed_err = 0, bone_mass = 0;
    for (int i = 0; i < m.nfixed; i++) {
        sc_vec3 p = sc_v3_add(sc_v3_load(m.joint_pos + 3 * m.fixed_bone[i]), sc_v3_load(m.fixed_local + 3 * i));
        fixed_err = fmax(fixed_err, sc_v3_dist(p, sc_v3_load(m.rest_pos + 3 * m.fixed_node[i])));
        CHECK(m.node_bone[m.fixed_node[i]] == m.fixed_bone[i], "node_bone mismatch");
    }
    for (int b = 0; b < m.nbones; b++) bone_mass += m.bone_mass[b];
    double bone_from_nodes = 0;
    for (int i = 0; i < m.nfixed; i++) bone_from_nodes += m.node_mass[m.fixed_node[i]];
    /* barycentric embedding reproduces the rest surface */
    double emb_err = 0;
    for (int v = 0; v < m.nsurf_verts; v++) {
        sc_vec3 p = sc_v3(0, 0, 0);
        for (int k = 0; k < 4; k++) p = sc_v3_axpy(m.surf_bary[4 * v + k], sc_v3_load(m.rest_pos + 3 * m.tets[4 * m.surf_tet[v] + k]), p);
        emb_err = fmax(emb_err, sc_v3_dist(p, sc_v3_load(m.surf_rest + 3 * v)));
    }
    sc_model_free(&m);
    CHECK(nonpos == 0, "%d non-positive tets", nonpos);
    CHECK(vol_err < 1e-9 && bm_err < 1e-9, "volume err %g, Bm^-1 err %g", vol_err, bm_err);
    CHECK(fabs(msum - mass) < 1e-9 * mass, "node masses %g vs report %g", msum, mass);
    CHECK(fixed_err < 1e-12, "fixed local coords off by %g m", fixed_err);
    CHECK(fabs(bone_mass - bone_from_nodes) < 1e-9 * bone_mass, "bone masses %g vs fixed nodes %g", bone_mass, bone_from_nodes);
    CHECK(emb_err < 1e-9, "embedding reproduces the surface to %g m", emb_err);
    return 1;
}

/* every "file.h5:/path" in an XDMF must exist in the file */
static int check_xdmf(const char *xdmf, const char *h5path)
{
    FILE *x = fopen(xdmf, "r");
    CHECK(x, "no %s", xdmf);
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, x);
    fclose(x);
    buf[n] = 0;
    sc_h5 *f;
    sc_err err;
    if (sc_h5_open(h5path, &f, &err)) {
        sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
        return 0;
    }
    int found = 0, ok = 1;
    for (char *p = strstr(buf, ".h5:/"); p; p = strstr(p + 1, ".h5:/")) {
        char path[256];
        sscanf(p + 4, "%255[^<]", path);
        found++;
        if (!sc_h5_exists(f, path)) {
            sc_test_fail(__FILE__, __LINE__, "%s names %s, missing", xdmf, path);
            ok = 0;
        }
    }
    sc_h5_close(f);
    CHECK(found >= 5, "only %d dataset paths in %s", found, xdmf);
    return ok;
}

TEST(meshprep_michelin_builtin)
{
    const char *h5 = sc_test_tmp("michelin.h5"), *obj = sc_test_tmp("michelin_surface.obj");
    int rc =
        sc_test_sh(out, sizeof out, "%s -c %s -o %s --surface-obj %s", sc_test_tool("mesh-prep"), sc_test_repo("configs/michelin.yaml"), h5, obj);
    ENSURE_MSG(rc == 0, "mesh-prep exit %d: %s", rc, out);
    if (!check_character(h5, 900, 2000)) return;
    ENSURE(check_xdmf(sc_test_tmp("michelin.xdmf"), h5));
    /* self-describing: provenance, schema and units as a newcomer sees them */
    rc = sc_test_sh(out, sizeof out,
                    "h5dump -A %s | grep -E 'ATTRIBUTE \"(softcon_version|schema|created_by)|softcon.character|kg m\\^2|N m/rad|mesh-prep -c'", h5);
    ENSURE(rc == 0);
    ENSURE(strstr(out, "softcon_version") && strstr(out, "softcon.character/1") && strstr(out, "created_by") && strstr(out, "\"kg m^2\"") &&
           strstr(out, "\"N m/rad\"") && strstr(out, "mesh-prep -c"));
    rc = sc_test_sh(out, sizeof out,
                    "/usr/bin/python3 -c \"import h5py,sys; f=h5py.File(sys.argv[1]); "
                    "print(f.attrs['schema'], f['tetmesh/rest_pos'].attrs['units'], f['tetmesh/rest_pos'].shape, "
                    "f['skeleton/names'][0].decode(), 'config' in f.attrs)\" %s",
                    h5);
    ENSURE_MSG(rc == 0 && strstr(out, "softcon.character/1 m (") && strstr(out, "pelvis True"), "h5py: %s", out);
}

TEST(meshprep_cmu_skeleton_and_obj_body)
{
    /* the built-in body on the CMU skeleton of a real clip */
    const char *h5 = sc_test_tmp("cmu.h5"), *obj = sc_test_tmp("cmu_surface.obj");
    int rc =
        sc_test_sh(out, sizeof out, "%s -c %s -o %s --surface-obj %s", sc_test_tool("mesh-prep"), sc_test_repo("configs/michelin_cmu.yaml"), h5, obj);
    ENSURE_MSG(rc == 0, "mesh-prep exit %d: %s", rc, out);
    if (!check_character(h5, 900, 2000)) return;
    /* the same body given as an OBJ file */
    char cfg[4096];
    snprintf(cfg, sizeof cfg,
             "skeleton:\n  bvh: cmu_02_01_walk.bvh\nbody:\n  obj: %s\n  fit_joints: skeleton\nenvelope: {target_vertices: 550}\n"
             "tetgen: {min_dihedral: 15, sliver_angle: 10}\n",
             obj);
    const char *yaml = sc_test_write("obj_body.yaml", cfg);
    const char *h5b = sc_test_tmp("objbody.h5");
    rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s", sc_test_tool("mesh-prep"), yaml, h5b);
    ENSURE_MSG(rc == 0, "mesh-prep (OBJ body) exit %d: %s", rc, out);
    ENSURE(check_character(h5b, 900, 2000));
}

/* runs mesh-prep on a config, expects `code` and every needle in stderr, and no output */
static void expect_failure(const char *name, const char *yaml_text, const char *env, int code, const char *n1, const char *n2)
{
    char file[128], h5[128];
    snprintf(file, sizeof file, "%s.yaml", name);
    snprintf(h5, sizeof h5, "%s.h5", name);
    const char *yaml = yaml_text ? sc_test_write(file, yaml_text) : sc_test_tmp(file);
    const char *outp = sc_test_tmp(h5);
    int rc = sc_test_sh(out, sizeof out, "%s %s -c %s -o %s", env ? env : "", sc_test_tool("mesh-prep"), yaml, outp);
    char xdmf[1100];
    snprintf(xdmf, sizeof xdmf, "%.*s.xdmf", (int)(strlen(outp) - 3), outp);
    sc_test_report("%s: exit %d: %s", name, rc, out);
    ENSURE_MSG(rc == code, "%s: exit %d, expected %d: %s", name, rc, code, out);
    ENSURE_MSG(strstr(out, n1) != NULL, "%s: '%s' not in: %s", name, n1, out);
    ENSURE_MSG(!n2 || strstr(out, n2) != NULL, "%s: '%s' not in: %s", name, n2, out);
    ENSURE_MSG(!sc_test_file_exists(outp) && !sc_test_temporary_left(outp) && !sc_test_file_exists(xdmf), "%s left output", name);
}

static const char *skel = "skeleton:\n"
                          "  bones:\n"
                          "    - {name: pelvis, head: [0, 0.9, 0], tail: [0, 1.1, 0]}\n"
                          "    - {name: spine, parent: pelvis, head: [0, 1.1, 0], tail: [0, 1.4, 0]}\n"
                          "    - {name: l_thigh, parent: pelvis, head: [0.1, 0.9, 0], tail: [0.1, 0.5, 0]}\n"
                          "    - {name: r_thigh, parent: pelvis, head: [-0.1, 0.9, 0], tail: [-0.1, 0.5, 0]}\n";

static char cfgbuf[4096];
static const char *with(const char *tail)
{
    snprintf(cfgbuf, sizeof cfgbuf, "%s%s", skel, tail);
    return cfgbuf;
}

static const char *cube_obj(const char *name, double cx, double cy, double cz, double h, int drop_face, int twice)
{
    char text[4096];
    int n = 0;
    for (int c = 0; c < 1 + twice; c++) {
        double o = c * h; /* the second cube overlaps the first, in general position */
        for (int i = 0; i < 8; i++)
            n += snprintf(text + n, sizeof text - (size_t)n, "v %g %g %g\n", cx + o + (i & 1 ? h : -h), cy + 0.3 * o + (i & 2 ? h : -h),
                          cz + 0.2 * o + (i & 4 ? h : -h));
        static const int q[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
        for (int f = 0; f < 6; f++)
            if (f != drop_face)
                n += snprintf(text + n, sizeof text - (size_t)n, "f %d %d %d %d\n", q[f][0] + 1 + 8 * c, q[f][1] + 1 + 8 * c, q[f][2] + 1 + 8 * c,
                              q[f][3] + 1 + 8 * c);
    }
    return sc_test_write(name, text);
}

TEST(meshprep_bad_input)
{
    char buf[2048];
    expect_failure("missing_config", NULL, NULL, 3, "missing_config.yaml", "No such file");
    expect_failure("bad_yaml", "skeleton: [1, 2\nbody: {}\n", NULL, 2, "bad_yaml.yaml:", NULL);
    expect_failure("unknown_key", with("body:\n  builtin: michelin\n  girht: 1.0\n"), NULL, 2, "unknown_key.yaml:9:3: unknown key 'girht'",
                   "did you mean 'girth'");
    expect_failure("bad_builtin", with("body: {builtin: michelan}\n"), NULL, 2, "bad_builtin.yaml:7:17:", "michelin");
    expect_failure("fit_joints_builtin", with("body: {builtin: michelin, fit_joints: skeleton}\n"), NULL, 2, "fit_joints_builtin.yaml:",
                   "body.fit_joints applies to a skeleton fitted into the body");
    expect_failure("bad_material", with("material: {poisson_ratio: 0.7}\n"), NULL, 2, "poisson_ratio", "outside");
    /* malformed OBJ body and BVH skeleton */
    sc_test_write("broken.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n");
    snprintf(buf, sizeof buf, "%sbody: {obj: %s}\n", skel, sc_test_tmp("broken.obj"));
    expect_failure("bad_obj", buf, NULL, 2, "broken.obj:4", "out of range");
    sc_test_write("broken.bvh", "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Xposition Yposition\n}\n");
    snprintf(buf, sizeof buf, "skeleton:\n  bvh: %s\n", sc_test_tmp("broken.bvh"));
    expect_failure("bad_bvh", buf, NULL, 2, "broken.bvh:5", NULL);
    snprintf(buf, sizeof buf, "skeleton:\n  bvh: no_such_clip.bvh\n");
    expect_failure("missing_bvh", buf, NULL, 3, "no_such_clip.bvh", "SOFTCON_MOCAP_PATH");
    /* envelopes given as OBJ: open, self-intersecting */
    snprintf(buf, sizeof buf, "%senvelope: {obj: %s}\n", skel, cube_obj("open.obj", 0, 1.0, 0, 0.6, 2, 0));
    expect_failure("open_envelope", buf, NULL, 2, "open.obj: surface is not closed", NULL);
    snprintf(buf, sizeof buf, "%senvelope: {obj: %s}\n", skel, cube_obj("twice.obj", 0, 1.0, 0, 0.6, -1, 1));
    expect_failure("self_intersecting_envelope", buf, NULL, 2, "twice.obj: surface intersects itself", NULL);
    /* a body beside its skeleton (of the skeleton's height) */
    snprintf(buf, sizeof buf, "%sbody: {obj: %s, ground: false}\n", skel, cube_obj("aside.obj", 1.5, 0.95, 0, 0.45, -1, 0));
    expect_failure("skeleton_outside", buf, NULL, 2, "lies outside the body envelope", NULL);
    /* tetgen absent or failing */
    expect_failure("tetgen_absent", with("body: {builtin: michelin}\n"), "SOFTCON_TETGEN=/nonexistent/tetgen", 5, "cannot run '/nonexistent/tetgen'",
                   "tetgen");
    expect_failure("tetgen_fails", with("body: {builtin: michelin}\n"), "SOFTCON_TETGEN=false", 5, "'false -pYq", "failed");
    /* usage errors */
    int rc = sc_test_sh(out, sizeof out, "%s -c", sc_test_tool("mesh-prep"));
    ENSURE_MSG(rc == 1 && strstr(out, "usage"), "exit %d: %s", rc, out);
    rc = sc_test_sh(out, sizeof out, "%s --version", sc_test_tool("mesh-prep"));
    ENSURE_MSG(rc == 0 && strstr(out, "softcon"), "exit %d: %s", rc, out);
}

/* A body whose size is implausible for a person in the declared unit is refused with the
 * body.scale that fixes it: a 16 cm body (given in decametres?), a 16.7 m one (decimetres, as a
 * MakeHuman export can be). */
TEST(meshprep_body_size_check)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%sbody: {obj: %s}\n", skel, cube_obj("tiny.obj", 0, 1.0, 0, 0.08, -1, 0));
    expect_failure("size_tiny", buf, NULL, 2, "the body is 0.16 m tall", "in any usual unit; body.scale: 11 would make it 1.7 m tall");
    snprintf(buf, sizeof buf, "%sbody: {obj: %s}\n", skel, cube_obj("cm.obj", 0, 90, 0, 85, -1, 0));
    expect_failure("size_centimetres", buf, NULL, 2, "the body is 170 m tall", "if the OBJ is in centimetres, set body.scale: 0.01");
    snprintf(buf, sizeof buf, "%sbody: {obj: %s}\n", skel, cube_obj("huge.obj", 0, 8.0, 0, 8.35, -1, 0));
    expect_failure("size_decimetres", buf, NULL, 2, "the body is 16.7 m tall",
                   "if the OBJ is in decimetres, set body.scale: 0.1 (it would be 1.67 m tall)");
    /* the same body declared in decimetres passes */
    snprintf(buf, sizeof buf, "%sbody: {obj: %s, scale: 0.1}\n", skel, sc_test_tmp("huge.obj"));
    const char *yaml = sc_test_write("size_declared.yaml", buf);
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s", sc_test_tool("mesh-prep"), yaml, sc_test_tmp("size_declared.h5"));
    ENSURE_MSG(rc == 0, "exit %d: %s", rc, out);
}

static double rep_attr(const char *path, const char *name)
{
    sc_h5 *f;
    double v = NAN;
    if (sc_h5_open(path, &f, NULL)) return v;
    sc_h5_read_attr_f64(f, "/report", name, &v, NULL);
    sc_h5_close(f);
    return v;
}

/* A user's A-pose body: the built-in Michelin in A-pose, exported as an OBJ, fed back with the
 * T-pose CMU skeleton of the walk and no per-bone settings; mesh-prep fits the skeleton into it
 * (arms turned down into the arms), skin-weights runs, and the character stands for 5 s. */
/* simulate configs/stand.yaml on a character: the time reached, how far the pelvis sank and the
   spine's largest tilt (degrees); 0 when simulate failed (reported). */
static int stand(const char *character, const char *sim, double *t_end, double *drop, double *tilt)
{
    sc_err err;
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("simulate"), sc_test_repo("configs/stand.yaml"), sim, character);
    if (rc) {
        sc_test_fail(__FILE__, __LINE__, "simulate exit %d: %s", rc, out);
        return 0;
    }
    sc_h5 *f;
    if (sc_h5_open(sim, &f, &err)) {
        sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
        return 0;
    }
    size_t nt = 0, nn = 0;
    double *t = NULL, *pos = NULL, *q = NULL;
    char **names = NULL;
    int ok = !sc_h5_read_f64(f, "/time", 1, &nt, &t, &err) && !sc_h5_read_strings(f, "/bones/names", &nn, &names, &err);
    size_t d3[3] = {nt, nn, 3}, d4[3] = {nt, nn, 4};
    ok = ok && !sc_h5_read_f64(f, "/bones/position", 3, d3, &pos, &err) && !sc_h5_read_f64(f, "/bones/orientation", 3, d4, &q, &err);
    sc_h5_close(f);
    if (!ok) {
        sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
        return 0;
    }
    int spine = 0;
    for (size_t j = 0; j < nn; j++) spine = strcmp(names[j], "spine") ? spine : (int)j;
    *tilt = 0;
    *drop = pos[1] - pos[3 * (nt - 1) * nn + 1];
    *t_end = t[nt - 1];
    for (size_t k = 0; k < nt; k++) {
        const double *r = q + 4 * (k * nn + (size_t)spine);
        sc_vec3 up = sc_q_rotate(sc_q_normalize((sc_quat){r[0], r[1], r[2], r[3]}), sc_v3(0, 1, 0));
        *tilt = fmax(*tilt, acos(fmin(1, up.y)) * 180 / SC_PI);
    }
    free(t);
    free(pos);
    free(q);
    sc_h5_free_strings(names, nn);
    return 1;
}

TEST(meshprep_apose_obj_fit)
{
    const char *ap = sc_test_tmp("apose.h5"), *obj = sc_test_tmp("apose_surface.obj");
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --surface-obj %s", sc_test_tool("mesh-prep"), sc_test_repo("configs/michelin_apose.yaml"),
                        ap, obj);
    ENSURE_MSG(rc == 0, "mesh-prep (A-pose built-in) exit %d: %s", rc, out);
    if (!check_character(ap, 900, 2000)) return;
    char cfg[2048];
    snprintf(cfg, sizeof cfg, /* the example of docs/tools/mesh-prep.md, as written: a body made around this skeleton */
             "skeleton: {bvh: cmu_02_01_walk.bvh, gains: {kp: 1500, kd: 80, torque_limit: 400}}\nbody: {obj: %s, fit_joints: skeleton}\n", obj);
    const char *yaml = sc_test_write("apose_obj.yaml", cfg), *fit = sc_test_tmp("apose_obj.h5"), *sk = sc_test_tmp("apose_obj_skin.h5");
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s && %s -q -c %s -o %s %s", sc_test_tool("mesh-prep"), yaml, fit, sc_test_tool("skin-weights"),
                    yaml, sk, fit);
    ENSURE_MSG(rc == 0, "mesh-prep / skin-weights (OBJ body) exit %d: %s", rc, out);
    if (!check_character(fit, 900, 2000)) return;
    /* the fitted skeleton against the one the body was built around */
    sc_err err;
    sc_model a, b;
    ENSURE_OK(sc_character_read(ap, &a, 0, &err), &err);
    ENSURE_OK(sc_character_read(fit, &b, 0, &err), &err);
    ENSURE(a.nbones == b.nbones);
    double worst = 0, arm_dir = 0;
    int wb = 0;
    for (int j = 0; j < a.nbones; j++) {
        for (int k = 0; k < 2; k++) {
            const double *p = (k ? a.bone_end : a.joint_pos) + 3 * j, *q = (k ? b.bone_end : b.joint_pos) + 3 * j;
            double d = sc_v3_dist(sc_v3_load(p), sc_v3_load(q));
            if (d > worst) worst = d, wb = j;
        }
        if (strstr(a.bone_name[j], "arm")) {
            sc_vec3 da = sc_v3_normalize(sc_v3_sub(sc_v3_load(a.bone_end + 3 * j), sc_v3_load(a.joint_pos + 3 * j)));
            sc_vec3 db = sc_v3_normalize(sc_v3_sub(sc_v3_load(b.bone_end + 3 * j), sc_v3_load(b.joint_pos + 3 * j)));
            arm_dir = fmax(arm_dir, acos(fmin(1, sc_v3_dot(da, db))) * 180 / SC_PI);
        }
    }
    double down0 = rep_attr(fit, "fit_arm_down_deg_left"), down1 = rep_attr(fit, "fit_arm_down_deg_right"), scale = rep_attr(fit, "fit_scale");
    /* standing 5 s on the ground */
    double t_end, drop, tilt;
    if (!stand(sk, sc_test_tmp("apose_obj_stand.h5"), &t_end, &drop, &tilt)) return;
    sc_test_report("A-pose OBJ body + T-pose CMU skeleton: fitted scale %.4f, arms turned down %.1f / %.1f deg (built at 45), "
                   "arm bones within %.1f deg of the built-in's, joints within %.3f m (%s); standing %.1f s: pelvis %.4f m lower, "
                   "spine tilt <= %.2f deg",
                   scale, down0, down1, arm_dir, worst, a.bone_name[wb], t_end, drop, tilt);
    ENSURE(fabs(down0 - 45) < 6 && fabs(down1 - 45) < 6 && arm_dir < 8);
    ENSURE(worst < 0.05);
    ENSURE(t_end > 4.99 && drop < 0.03 && tilt < 5);
    sc_model_free(&a);
    sc_model_free(&b);
}

/* The README's OBJ recipe: the YAML its printf writes, with "male_generic.obj" replaced by obj
   (0 when the README has no such line). */
static int readme_recipe(const char *obj, char *cfg, size_t n)
{
    FILE *f = fopen(sc_test_repo("README.md"), "r");
    char line[1024];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        char *a = strstr(line, "printf 'skeleton:"), *b = a ? strchr(a + 8, '\'') : NULL, *m = a ? strstr(a, "male_generic.obj") : NULL;
        if (!b || !m || m > b) continue;
        /* the printf's text up to its closing quote, \n unescaped, the body's file replaced */
        size_t k = 0;
        for (char *p = a + 8; p < b && k + strlen(obj) + 2 < n;) {
            if (p == m) k += (size_t)snprintf(cfg + k, n - k, "%s", obj), p += strlen("male_generic.obj");
            else if (p[0] == '\\' && p[1] == 'n') cfg[k++] = '\n', p += 2;
            else cfg[k++] = *p++;
        }
        cfg[k] = 0;
        found = 1;
    }
    if (f) fclose(f);
    return found;
}

/* Issue 28 item 1: real bodies. The fit of a body's joints (every joint and bone midpoint inside
   the body, the shoulders brought down onto the arms), its report in /report, and standing. */
static void real_body(const char *name, const char *obj, int stands)
{
    char cfg[2048], yaml_name[64], fit_name[64], sk_name[64], sim_name[64];
    ENSURE_MSG(readme_recipe(obj, cfg, sizeof cfg), "README.md: no OBJ recipe (printf 'skeleton: ... male_generic.obj ...')");
    ENSURE_MSG(strstr(cfg, "scale: 0.1") && !strstr(cfg, "fixed") && !strstr(cfg, "envelope") && !strstr(cfg, "tetgen"),
               "the README's recipe is not the plain one: %s", cfg);
    snprintf(yaml_name, sizeof yaml_name, "%s.yaml", name);
    snprintf(fit_name, sizeof fit_name, "%s.h5", name);
    snprintf(sk_name, sizeof sk_name, "%s_skin.h5", name);
    snprintf(sim_name, sizeof sim_name, "%s_stand.h5", name);
    const char *yaml = sc_test_write(yaml_name, cfg), *fit = sc_test_tmp(fit_name), *sk = sc_test_tmp(sk_name);
    int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s 2>&1", sc_test_tool("mesh-prep"), yaml, fit);
    ENSURE_MSG(rc == 0 && strstr(out, "fit joint     l_upperarm"), "%s: mesh-prep exit %d: %s", name, rc, out);
    sc_err err;
    sc_model m;
    sc_trimesh body;
    ENSURE_OK(sc_character_read(fit, &m, 0, &err), &err);
    ENSURE_OK(sc_obj_load(obj, &body, &err), &err);
    double lo = INFINITY;
    for (int i = 0; i < body.nverts; i++) lo = fmin(lo, 0.1 * body.verts[3 * i + 1]);
    for (int i = 0; i < 3 * body.nverts; i++) body.verts[i] = 0.1 * body.verts[i] - (i % 3 == 1 ? lo : 0); /* as mesh-prep stands it */
    int outside = 0;
    char which[256] = "";
    for (int j = 0; j < m.nbones; j++)
        for (int k = 0; k < 2; k++) {
            sc_vec3 a = sc_v3_load(m.joint_pos + 3 * j), b = sc_v3_load(m.bone_end + 3 * j);
            double p[3];
            sc_v3_store(p, k ? sc_v3_scale(sc_v3_add(a, b), 0.5) : a);
            if (sc_winding_number(&body, p) < 0.5) {
                outside++;
                snprintf(which + strlen(which), sizeof which - strlen(which), " %s%s", m.bone_name[j], k ? "(mid)" : "");
            }
        }
    sc_h5 *f;
    ENSURE_OK(sc_h5_open(fit, &f, &err), &err);
    const int have = sc_h5_attr_exists(f, "/report", "fit_joint_position_m") && sc_h5_attr_exists(f, "/report", "fit_joint_moved_m") &&
                     sc_h5_attr_exists(f, "/report", "fit_joint_how") && sc_h5_exists(f, "/fit/joint_position") && sc_h5_exists(f, "/fit/joint_rule") &&
                     sc_h5_exists(f, "/fit/landmark_position");
    sc_h5_close(f);
    const int up = sc_model_bone_index(&m, "l_upperarm");
    sc_test_report("%s: %d bones, %d joints or bone midpoints outside the body%s; left shoulder at (%.3f, %.3f, %.3f) m", name, m.nbones, outside,
                   which, m.joint_pos[3 * up], m.joint_pos[3 * up + 1], m.joint_pos[3 * up + 2]);
    ENSURE_MSG(outside == 0, "%s: outside:%s", name, which);
    ENSURE(have);
    sc_trimesh_free(&body);
    sc_model_free(&m);
    if (!stands) return;
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("skin-weights"), yaml, sk, fit);
    ENSURE_MSG(rc == 0, "%s: skin-weights exit %d: %s", name, rc, out);
    double t_end, drop, tilt;
    if (!stand(sk, sc_test_tmp(sim_name), &t_end, &drop, &tilt)) return;
    sc_test_report("%s standing %.1f s: pelvis %.4f m lower, spine tilt <= %.2f deg", name, t_end, drop, tilt);
    ENSURE(t_end > 4.99 && drop < 0.03 && tilt < 5);
}

TEST(meshprep_real_bodies_fit_and_stand)
{
    const char *mg = sc_test_mesh("male_generic.obj");
    ENSURE_MSG(sc_test_file_exists(mg), "%s: the MakeHuman body is missing (../shared/meshes, SOFTCON_MESH_PATH)", mg);
    real_body("male_generic", mg, 1);
    /* other proportions: hips x 1.2, arms x 1.2, made from the fit above */
    const char *variant = sc_test_tmp("wide_long.obj");
    int rc = sc_test_sh(out, sizeof out, "%s %s %s %s", sc_test_repo("scripts/body-variant.py"), mg, sc_test_tmp("male_generic.h5"), variant);
    ENSURE_MSG(rc == 0, "body-variant.py exit %d: %s", rc, out);
    real_body("wide_long", variant, 1);
}

/* Exports for the viewers: HDF5 views (the per-frame datasets ParaView's Xdmf3 reader needs),
 * every .xdmf softcon writes checked dataset by dataset against its HDF5 file, and the real
 * ParaView and Blender opening a small pipeline's outputs (scripts/check-viewers.sh) when
 * they are installed. */
#include <stdlib.h>
#include <string.h>
#include "io/h5.h"
#include "store/xdmf.h"
#include "test.h"

static char out[16384];

TEST(xdmf_views_show_rows_and_columns_without_copying)
{
    const char *path = sc_test_tmp("views.h5");
    sc_err err;
    sc_h5 *f;
    ENSURE_OK(sc_h5_create(path, &f, &err), &err);
    sc_h5_series *t, *s;
    ENSURE_OK(sc_h5_timeline_create(f, "/time", &t, &err), &err);
    ENSURE_OK(sc_h5_series_create(f, "/nodes/position", t, 2, (size_t[]){5, 3}, "m", "positions", &s, &err), &err);
    enum { T = 300 }; /* more than one chunk, and rows still in the append buffer */
    double row[15], m[7 * 4];
    for (int k = 0; k < T; k++) {
        double tk = 0.01 * k;
        for (int i = 0; i < 15; i++) row[i] = k * 100 + i + 0.25;
        ENSURE_OK(sc_h5_series_append(t, &tk, &err), &err);
        ENSURE_OK(sc_h5_series_append(s, row, &err), &err);
    }
    for (int i = 0; i < 28; i++) m[i] = i / 4 + 0.1 * (i % 4);
    ENSURE_OK(sc_h5_write_f64(f, "/m", 2, (size_t[]){7, 4}, m, "1", "matrix", &err), &err);
    ENSURE_OK(sc_xdmf_sim_views(f, T, &err), &err);
    ENSURE_OK(sc_h5_write_view(f, "/m_col/2", "/m", 1, 2, "1", "column 2", &err), &err);
    /* what cannot be a view */
    int bad[5];
    bad[0] = sc_h5_write_view(f, "/v1", "/m", 1, 4, NULL, NULL, &err);
    ENSURE(strstr(err.msg, "no index 4 along dimension 1"));
    bad[1] = sc_h5_write_view(f, "/v2", "/m", 2, 0, NULL, NULL, &err);
    bad[2] = sc_h5_write_view(f, "/v3", "/time", 0, 0, NULL, NULL, &err);
    ENSURE(strstr(err.msg, "views need rank 2 or 3"));
    bad[3] = sc_h5_write_view(f, "/v4", "m", 0, 0, NULL, NULL, &err);
    ENSURE(strstr(err.msg, "not an absolute HDF5 path"));
    bad[4] = sc_h5_write_view(f, "/m_col/2", "/m", 1, 1, NULL, NULL, &err);
    ENSURE(strstr(err.msg, "already exists"));
    for (int i = 0; i < 5; i++) ENSURE_MSG(bad[i] == SC_EINPUT, "bad view %d: %d", i, bad[i]);
    ENSURE_OK(sc_h5_commit(f, &err), &err); /* the views name their source "." : the renamed file itself */

    ENSURE_OK(sc_h5_open(path, &f, &err), &err);
    int wrong = 0;
    for (int k = 0; k < T; k++) {
        char p[64];
        sc_xdmf_frame_path(p, sizeof p, k, "nodes");
        size_t dims[2] = {5, 3};
        double *v;
        ENSURE_OK(sc_h5_read_f64(f, p, 2, dims, &v, &err), &err);
        for (int i = 0; i < 15; i++) wrong += v[i] != k * 100 + i + 0.25;
        free(v);
    }
    size_t d1[1] = {7};
    double *col;
    ENSURE_OK(sc_h5_read_f64(f, "/m_col/2", 1, d1, &col, &err), &err);
    for (int i = 0; i < 7; i++) wrong += col[i] != m[4 * i + 2];
    free(col);
    char *units;
    ENSURE_OK(sc_h5_read_attr_str(f, "/frames/000007/nodes", "units", &units, &err), &err);
    ENSURE(!strcmp(units, "m"));
    free(units);
    sc_h5_close(f);
    long size = 0;
    FILE *fp = fopen(path, "rb");
    if (fp) {
        fseek(fp, 0, SEEK_END);
        size = ftell(fp);
        fclose(fp);
    }
    sc_test_report("%d frame views of a [%d, 5, 3] series and a column view read back with %d wrong values; file %ld bytes "
                   "(the series alone holds %d)",
                   T, T, wrong, size, T * 15 * 8);
    ENSURE(wrong == 0);
}

/* ---- a small pipeline's outputs ---- */

/* mesh-prep + skin-weights + a 0.3 s push + render's exports, once per run (NULL on failure,
   the reason in out). */
static const char *pipeline(void)
{
    static int state; /* 0 not yet, 1 built, -1 failed */
    const char *dir = sc_test_tmp("viewers");
    if (state) return state > 0 ? dir : NULL;
    state = -1;
    const char *cfg = sc_test_write("viewers_push.yaml",
                                    "simulation: {duration: 0.3, solver: exact}\n"
                                    "output: {every: 20, nodes: true}\n"
                                    "ground: {tiles: {size: 0.05, height: 0.02, seed: 3}}\n"
                                    "perturbations:\n  - {type: push, bone: spine, time: 0.05, duration: 0.1, force: [300, 0, 0]}\n");
    if (sc_test_sh(
            out, sizeof out,
            "mkdir -p %s && %s -q -c %s -o %s/character.h5 && %s -q -c %s -o %s/character.h5 %s/character.h5 && "
            "%s -q -c %s -o %s/push.h5 %s/character.h5 && "
            "%s -q --no-frames --no-sheet --no-movie -o %s/push_render --html %s/push_render/push.html --gltf %s/push_render/push.glb %s/push.h5",
            dir, sc_test_tool("mesh-prep"), sc_test_repo("configs/michelin.yaml"), dir, sc_test_tool("skin-weights"),
            sc_test_repo("configs/michelin.yaml"), dir, dir, sc_test_tool("simulate"), cfg, dir, dir, sc_test_tool("render"), dir, dir, dir, dir))
        return NULL;
    state = 1;
    return dir;
}

/* Every HDF DataItem of an XDMF names a dataset of exactly its Dimensions and number type;
   returns the number of references checked (-1 after a reported failure). */
static int check_xdmf_datasets(const char *xdmf, const char *h5path)
{
    char *text = sc_test_read_file(xdmf, NULL);
    CHECK(text, "cannot read %s", xdmf);
    int refs = 0, ok = 1;
    if (strstr(text, "HyperSlab")) {
        sc_test_fail(__FILE__, __LINE__, "%s uses a HyperSlab (ParaView's Xdmf3 reader skips it)", xdmf);
        ok = 0;
    }
    sc_h5 *f;
    sc_err err;
    if (sc_h5_open(h5path, &f, &err)) {
        free(text);
        sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
        return -1;
    }
    for (char *p = strstr(text, "<DataItem "); p && ok; p = strstr(p + 1, "<DataItem ")) {
        size_t want[3] = {0, 0, 0};
        char type[16], fmt[16], file[256], path[256];
        int prec, nd = sscanf(p, "<DataItem Dimensions=\"%zu %zu %zu", &want[0], &want[1], &want[2]);
        char *attrs = strstr(p, "NumberType=");
        if (nd < 1 || !attrs ||
            sscanf(attrs, "NumberType=\"%15[^\"]\" Precision=\"%d\" Format=\"%15[^\"]\">%255[^:]:%255[^<]", type, &prec, fmt, file, path) != 5 ||
            strcmp(fmt, "HDF")) {
            sc_test_fail(__FILE__, __LINE__, "%s: cannot parse %.80s", xdmf, p);
            ok = 0;
            break;
        }
        refs++;
        int rank;
        size_t dims[3];
        if (sc_h5_shape(f, path, &rank, dims, &err)) {
            sc_test_fail(__FILE__, __LINE__, "%s: %s", xdmf, err.msg);
            ok = 0;
            break;
        }
        const char *base = strrchr(h5path, '/');
        int same = rank == nd && !strcmp(base ? base + 1 : h5path, file); /* named relative to the XDMF's folder */
        for (int i = 0; i < nd && same; i++) same = dims[i] == want[i];
        if (!same) {
            sc_test_fail(__FILE__, __LINE__, "%s: %s:%s declared %zu x %zu x %zu (rank %d), the file has rank %d %zu x %zu x %zu", xdmf, file, path,
                         want[0], want[1], want[2], nd, rank, dims[0], dims[1], dims[2]);
            ok = 0;
        }
        int *iv;
        size_t d[3] = {0, 0, 0};
        if (ok && !strcmp(type, "Int")) {
            if (prec != 4 || sc_h5_read_i32(f, path, rank, d, &iv, &err)) {
                sc_test_fail(__FILE__, __LINE__, "%s: %s is not int32", xdmf, path);
                ok = 0;
            } else free(iv);
        } else if (ok && (strcmp(type, "Float") || prec != 8)) {
            sc_test_fail(__FILE__, __LINE__, "%s: %s declared %s/%d", xdmf, path, type, prec);
            ok = 0;
        }
    }
    sc_h5_close(f);
    free(text);
    return ok ? refs : -1;
}

TEST(xdmf_every_export_names_whole_datasets_of_its_shape)
{
    const char *dir = pipeline();
    ENSURE_MSG(dir, "pipeline: %s", out);
    static const char *const files[][2] = {
        {"character.xdmf", "character.h5"}, {"push.xdmf", "push.h5"}, {"push_render/push_frames.xdmf", "push_render/push_frames.h5"}};
    int refs[3];
    for (int i = 0; i < 3; i++) {
        char x[1100], h[1100];
        snprintf(x, sizeof x, "%s/%s", dir, files[i][0]);
        snprintf(h, sizeof h, "%s/%s", dir, files[i][1]);
        refs[i] = check_xdmf_datasets(x, h);
        ENSURE(refs[i] > 0);
    }
    /* sim.xdmf's frames are sim.h5's time series, frame by frame */
    char h[1100];
    snprintf(h, sizeof h, "%s/push.h5", dir);
    sc_h5 *f;
    sc_err err;
    ENSURE_OK(sc_h5_open(h, &f, &err), &err);
    size_t dims[3] = {0, 0, 3};
    double *all, *frame;
    ENSURE_OK(sc_h5_read_f64(f, "/nodes/position", 3, dims, &all, &err), &err);
    int wrong = 0;
    for (size_t k = 0; k < dims[0]; k++) {
        char p[64];
        sc_xdmf_frame_path(p, sizeof p, (int)k, "nodes");
        size_t fd[2] = {dims[1], 3};
        ENSURE_OK(sc_h5_read_f64(f, p, 2, fd, &frame, &err), &err);
        wrong += memcmp(frame, all + k * dims[1] * 3, dims[1] * 3 * sizeof(double)) != 0;
        free(frame);
    }
    free(all);
    sc_h5_close(f);
    sc_test_report("character.xdmf %d, push.xdmf %d, push_frames.xdmf %d HDF5 references, each a whole dataset of the "
                   "declared shape and type, no hyperslab; %zu sim frames, %d differing from /nodes/position",
                   refs[0], refs[1], refs[2], dims[0], wrong);
    ENSURE(wrong == 0 && dims[0] == 31); /* 0 .. 0.3 s every 10 ms */
    ENSURE(refs[0] == 2 * 2 + 3 + 16);   /* 2 grids, 3 tet mesh fields, 16 bone weights */
}

TEST(viewers_paraview_and_blender_open_the_exports)
{
    int have_pv = sc_test_sh(NULL, 0, "command -v pvpython") == 0, have_blender = sc_test_sh(NULL, 0, "command -v blender") == 0;
    int have_chromium = sc_test_sh(NULL, 0, "command -v chromium") == 0;
    if (!have_pv && !have_blender && !have_chromium) {
        sc_test_report("SKIPPED: neither ParaView (pvpython), Blender nor Chromium is installed (scripts/install-deps.sh --viewers)");
        return;
    }
    const char *dir = pipeline();
    ENSURE_MSG(dir, "pipeline: %s", out);
    int rc = sc_test_sh(out, sizeof out, "%s %s", sc_test_repo("scripts/check-viewers.sh"), dir);
    char *summary = strstr(out, "check-viewers: ParaView"), *chromium = strstr(out, "ok    chromium");
    sc_test_report("%s%.*s", summary ? summary : out, chromium ? (int)strcspn(chromium, "\n") : 0, chromium ? chromium : "");
    ENSURE_MSG(rc == 0, "check-viewers.sh exit %d:\n%s", rc, out);
    /* every file was opened by each viewer that is installed, and none skipped silently */
    ENSURE(!have_pv || strstr(out, "ParaView: 3 of 3 .xdmf ok"));
    ENSURE(!have_blender ||
           (strstr(out, "Blender: 1 of 1 OBJ + PC2 ok, 1 of 1 glTF ok") && strstr(out, "BVH 16 bones: Blender's joints match the file's") &&
            strstr(out, "16 bone nodes: joints match")));
    /* the HTML viewer in a real browser: the silhouette where the frames put the surface, twice */
    ENSURE(!have_chromium || (strstr(out, "Chromium: 1 of 1 HTML ok, 1 of 1 glTF ok") && strstr(out, "measured fps=")));
    ENSURE(have_chromium || strstr(out, "SKIPPED Chromium"));
    ENSURE(have_pv || strstr(out, "SKIPPED ParaView"));
    ENSURE(have_blender || strstr(out, "SKIPPED Blender"));
}

/* render --html and --gltf without any client: one page that loads nothing from outside, a
   .glb whose header, chunks and morph targets agree with the frames. */
TEST(viewers_html_and_gltf_stand_alone)
{
    const char *dir = pipeline();
    ENSURE_MSG(dir, "pipeline: %s", out);
    char p[1100];
    size_t hn = 0, gn = 0;
    snprintf(p, sizeof p, "%s/push_render/push.html", dir);
    char *html = sc_test_read_file(p, &hn);
    snprintf(p, sizeof p, "%s/push_render/push.glb", dir);
    char *glb = sc_test_read_file(p, &gn);
    ENSURE(html && glb && gn > 28);
    /* nothing fetched: no script, link or image from a URL */
    ENSURE(!strstr(html, "<script src") && !strstr(html, "<link") && !strstr(html, "<img"));
    ENSURE(strstr(html, "\"format\":\"softcon.viewer/1\"") && strstr(html, "\"frames\":10,") && strstr(html, "\"vertices\":5184,"));
    ENSURE(strstr(html, "\"relief\":{\"x0\":") && strstr(html, "\"dx\":0.05,")); /* the tiles, drawn over the ground track */
    const unsigned char *g = (const unsigned char *)glb;
    unsigned len = g[8] | g[9] << 8 | g[10] << 16 | (unsigned)g[11] << 24, jlen = g[12] | g[13] << 8 | g[14] << 16 | (unsigned)g[15] << 24;
    ENSURE(!memcmp(g, "glTF", 4) && g[4] == 2 && len == gn && !memcmp(g + 16, "JSON", 4) && 20 + jlen + 8 <= gn &&
           !memcmp(g + 20 + jlen + 4, "BIN", 4));
    char *json = malloc(jlen + 1);
    ENSURE(json);
    memcpy(json, g + 20, jlen);
    json[jlen] = 0;
    int targets = 0, nodes = 0;
    for (char *s = strstr(json, "\"targets\":["); s && *s != ']'; s++) targets += !strncmp(s, "{\"POSITION\"", 11);
    for (char *s = strstr(json, "\"nodes\":[{"); s && strncmp(s, "],\"meshes\"", 10); s++) nodes += !strncmp(s, "{\"name\"", 7);
    sc_test_report("push.html %zu bytes (10 frames of 5184 vertices, three.js included), push.glb %zu bytes: %d morph targets, %d nodes "
                   "(the surface, 16 bones, 5 tips)",
                   hn, gn, targets, nodes);
    ENSURE(targets == 10 && nodes == 1 + 16 + 5);
    free(json);
    free(html);
    free(glb);
}

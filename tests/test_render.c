/* The renderer and exports: PNG/deflate correctness (decoded independently by Python's zlib),
 * deterministic pixels, the character's pixels inside its projected bounding box, the shadow,
 * clean failures on damaged sim.h5 files, XDMF paths and shapes, PC2 layout, BVH round trip,
 * the render CLI end to end and scripts/plot.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "core/mathx.h"
#include "io/bvh.h"
#include "store/character.h"
#include "io/h5.h"
#include "io/obj.h"
#include "render/anim.h"
#include "render/export.h"
#include "render/png.h"
#include "render/scene.h"
#include "test.h"

static char out[16384];

/* the built-in Michelin character (mesh-prep only), built once per run */
static const char *character(void)
{
    static int built;
    const char *h5 = sc_test_tmp("render_character.h5");
    if (!built) {
        if (sc_test_sh(out, sizeof out, "%s -q -c %s -o %s", sc_test_tool("mesh-prep"), sc_test_repo("configs/michelin.yaml"), h5)) return NULL;
        built = 1;
    }
    return h5;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) ? -1 : (long)st.st_size;
}

static unsigned char *read_all(const char *path, long *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)*n + 1);
    if (b && fread(b, 1, (size_t)*n, f) != (size_t)*n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[*n] = 0;
    return b;
}

static int write_all(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* width and height from a PNG's IHDR; 0 if not a PNG */
static int png_size(const char *path, int *w, int *h)
{
    long n;
    unsigned char *b = read_all(path, &n);
    int ok = b && n > 33 && !memcmp(b, "\x89PNG\r\n\x1a\n", 8) && !memcmp(b + 12, "IHDR", 4);
    if (ok) {
        *w = (int)((uint32_t)b[16] << 24 | (uint32_t)b[17] << 16 | (uint32_t)b[18] << 8 | b[19]);
        *h = (int)((uint32_t)b[20] << 24 | (uint32_t)b[21] << 16 | (uint32_t)b[22] << 8 | b[23]);
    }
    free(b);
    return ok;
}

/* ---- a synthetic sim.h5: every node rides its bone rigidly while the joints swing ---- */

static sc_quat synth_local(int b, int k, int T)
{
    if (b == 0) return sc_q_mul(sc_q_axis_angle(sc_v3(0, 1, 0), 0.4 * sin(2 * SC_PI * k / T)), sc_q_axis_angle(sc_v3(1, 0, 0), 0.05 * k / T));
    sc_vec3 axis = sc_v3_normalize(sc_v3(sin(1.3 * b), cos(2.1 * b), 0.5));
    return sc_q_axis_angle(axis, 1.2 * sin(2 * SC_PI * k / T + b)); /* up to 69 degrees */
}

/* mode 0: valid; 1: no frames; 2: a face index out of range; 3: no /nodes/position */
static int write_synthetic_sim(const char *path, const sc_model *m, int T, double dt, int mode)
{
    sc_err err;
    sc_h5 *f;
    int nb = m->nbones, nn = m->nnodes;
    const char *config =
        "ground: {slope: 0, height: 0}\nperturbations:\n  - {type: push, bone: spine, time: 0.1, duration: 0.2, force: [150, 0, 0]}\n";
    if (sc_h5_create(path, &f, &err)) return 0;
    sc_h5_series *st, *sp, *sq, *sn = NULL, *sc, *scf, *spf;
    const char *names[256];
    for (int b = 0; b < nb; b++) names[b] = m->bone_name[b];
    int *faces = malloc((size_t)m->nsurf_tris * 3 * sizeof(int));
    memcpy(faces, m->surf_tris, (size_t)m->nsurf_tris * 3 * sizeof(int));
    if (mode == 2) faces[3 * 17 + 1] = m->nsurf_verts + 5;
    int rc = sc_h5_provenance(f, "softcon.sim/1", 0, NULL, config, &err) || sc_h5_timeline_create(f, "/time", &st, &err) ||
        sc_h5_series_create(f, "/bones/position", st, 2, (size_t[]){(size_t)nb, 3}, "m", NULL, &sp, &err) ||
        sc_h5_series_create(f, "/bones/orientation", st, 2, (size_t[]){(size_t)nb, 4}, "1", NULL, &sq, &err) ||
        (mode != 3 && sc_h5_series_create(f, "/nodes/position", st, 2, (size_t[]){(size_t)nn, 3}, "m", NULL, &sn, &err)) ||
        sc_h5_series_create(f, "/momentum/com", st, 1, (size_t[]){3}, "m", NULL, &sc, &err) ||
        sc_h5_series_create(f, "/contact/force", st, 1, (size_t[]){3}, "N", NULL, &scf, &err) ||
        sc_h5_series_create(f, "/control/push_force", st, 1, (size_t[]){3}, "N", NULL, &spf, &err) ||
        sc_h5_write_strings(f, "/bones/names", (size_t)nb, names, NULL, &err) ||
        sc_h5_write_i32(f, "/bones/parents", 1, (size_t[]){(size_t)nb}, m->parent, NULL, &err) ||
        sc_h5_write_i32(f, "/mesh/tets", 2, (size_t[]){(size_t)m->ntets, 4}, m->tets, NULL, &err) ||
        sc_h5_write_f64(f, "/mesh/rest_pos", 2, (size_t[]){(size_t)nn, 3}, m->rest_pos, "m", NULL, &err) ||
        sc_h5_write_i32(f, "/mesh/node_bone", 1, (size_t[]){(size_t)nn}, m->node_bone, NULL, &err) ||
        sc_h5_write_i32(f, "/mesh/surface_faces", 2, (size_t[]){(size_t)m->nsurf_tris, 3}, faces, NULL, &err) ||
        sc_h5_write_i32(f, "/mesh/surface_tet", 1, (size_t[]){(size_t)m->nsurf_verts}, m->surf_tet, NULL, &err) ||
        sc_h5_write_f64(f, "/mesh/surface_bary", 2, (size_t[]){(size_t)m->nsurf_verts, 4}, m->surf_bary, "1", NULL, &err);
    free(faces);
    /* each free node follows the bone of its nearest fixed node */
    int *ride = malloc((size_t)nn * sizeof(int));
    for (int i = 0; i < nn; i++) {
        double bd = 1e30;
        ride[i] = m->node_bone[i] >= 0 ? m->node_bone[i] : 0;
        for (int j = 0; m->node_bone[i] < 0 && j < nn; j++) {
            if (m->node_bone[j] < 0) continue;
            double d = sc_v3_dist(sc_v3_load(m->rest_pos + 3 * i), sc_v3_load(m->rest_pos + 3 * j));
            if (d < bd) {
                bd = d;
                ride[i] = m->node_bone[j];
            }
        }
    }
    double *pos = malloc((size_t)nb * 3 * sizeof(double)), *quat = malloc((size_t)nb * 4 * sizeof(double));
    double *x = malloc((size_t)nn * 3 * sizeof(double));
    sc_quat *R = malloc((size_t)nb * sizeof(sc_quat));
    for (int k = 0; k < (mode == 1 ? 0 : T) && !rc; k++) {
        double t = k * dt;
        for (int b = 0; b < nb; b++) {
            sc_quat l = synth_local(b, k, T);
            int p = m->parent[b];
            sc_vec3 J = sc_v3_load(m->joint_pos + 3 * b);
            sc_vec3 P = p < 0 ? sc_v3_add(J, sc_v3(0.3 * t, 0.02 * sin(5 * t), -0.1 * t))
                              : sc_v3_add(sc_v3_load(pos + 3 * p), sc_q_rotate(R[p], sc_v3_sub(J, sc_v3_load(m->joint_pos + 3 * p))));
            R[b] = p < 0 ? l : sc_q_normalize(sc_q_mul(R[p], l));
            sc_v3_store(pos + 3 * b, P);
            quat[4 * b] = R[b].w;
            quat[4 * b + 1] = R[b].x;
            quat[4 * b + 2] = R[b].y;
            quat[4 * b + 3] = R[b].z;
        }
        sc_vec3 com = sc_v3(0, 0, 0);
        for (int i = 0; i < nn; i++) {
            int b = ride[i];
            sc_vec3 p =
                sc_v3_add(sc_q_rotate(R[b], sc_v3_sub(sc_v3_load(m->rest_pos + 3 * i), sc_v3_load(m->joint_pos + 3 * b))), sc_v3_load(pos + 3 * b));
            sc_v3_store(x + 3 * i, p);
            com = sc_v3_add(com, sc_v3_scale(p, 1.0 / nn));
        }
        double c[3] = {com.x, com.y, com.z}, cf[3] = {0, 800, 0}, pf[3] = {t >= 0.1 && t < 0.3 ? 150 : 0, 0, 0};
        rc = sc_h5_series_append(st, &t, &err) || sc_h5_series_append(sp, pos, &err) || sc_h5_series_append(sq, quat, &err) ||
            (mode != 3 && sc_h5_series_append(sn, x, &err)) || sc_h5_series_append(sc, c, &err) || sc_h5_series_append(scf, cf, &err) ||
            sc_h5_series_append(spf, pf, &err);
    }
    free(ride);
    free(pos);
    free(quat);
    free(x);
    free(R);
    if (rc) {
        sc_h5_abort(f);
        return 0;
    }
    return sc_h5_commit(f, &err) == SC_OK;
}

/* the synthetic sim.h5 (12 frames, 0.05 s apart), written once per run */
static const char *synthetic(sc_model *m_out)
{
    static int done;
    const char *path = sc_test_tmp("render_synthetic.h5");
    sc_err err;
    const char *ch = character();
    if (!ch || sc_character_read(ch, m_out, 0, &err)) return NULL;
    if (!done) {
        if (!write_synthetic_sim(path, m_out, 12, 0.05, 0)) {
            sc_model_free(m_out);
            return NULL;
        }
        done = 1;
    }
    return path;
}

/* ---- PNG ---- */

static const char *png_check_py = "import sys, zlib, struct\n"
                                  "png, raw, w, h = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])\n"
                                  "d = open(png, 'rb').read()\n"
                                  "assert d[:8] == b'\\x89PNG\\r\\n\\x1a\\n'\n"
                                  "pos, idat, ihdr = 8, b'', None\n"
                                  "while pos < len(d):\n"
                                  "    n, = struct.unpack('>I', d[pos:pos + 4]); typ = d[pos + 4:pos + 8]; body = d[pos + 8:pos + 8 + n]\n"
                                  "    crc, = struct.unpack('>I', d[pos + 8 + n:pos + 12 + n])\n"
                                  "    if zlib.crc32(typ + body) & 0xffffffff != crc: print('BADCRC', typ); sys.exit(1)\n"
                                  "    if typ == b'IHDR': ihdr = struct.unpack('>IIBBBBB', body)\n"
                                  "    if typ == b'IDAT': idat += body\n"
                                  "    pos += 12 + n\n"
                                  "    if typ == b'IEND': break\n"
                                  "assert ihdr[:5] == (w, h, 8, 2, 0), ihdr\n"
                                  "data = zlib.decompress(idat)\n"
                                  "stride = 3 * w\n"
                                  "assert len(data) == h * (stride + 1)\n"
                                  "res, prev = bytearray(), bytearray(stride)\n"
                                  "for y in range(h):\n"
                                  "    ft = data[y * (stride + 1)]; row = bytearray(data[y * (stride + 1) + 1:(y + 1) * (stride + 1)])\n"
                                  "    for x in range(stride):\n"
                                  "        a = row[x - 3] if x >= 3 else 0; b = prev[x]; c = prev[x - 3] if x >= 3 else 0\n"
                                  "        if ft == 0: p = 0\n"
                                  "        elif ft == 1: p = a\n"
                                  "        elif ft == 2: p = b\n"
                                  "        elif ft == 3: p = (a + b) // 2\n"
                                  "        elif ft == 4:\n"
                                  "            q = a + b - c; pa, pb, pc = abs(q - a), abs(q - b), abs(q - c)\n"
                                  "            p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)\n"
                                  "        else: print('BADFILTER', ft); sys.exit(1)\n"
                                  "        row[x] = (row[x] + p) & 255\n"
                                  "    res += row; prev = row\n"
                                  "print('OK' if bytes(res) == open(raw, 'rb').read() else 'MISMATCH')\n";

static const char *python(void) { return sc_test_file_exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3"; }

TEST(render_png_checksums_and_independent_decode)
{
    /* published check values */
    ENSURE(sc_crc32(0, (const uint8_t *)"123456789", 9) == 0xCBF43926u);
    ENSURE(sc_adler32(1, (const uint8_t *)"Wikipedia", 9) == 0x11E60398u);
    ENSURE(sc_crc32(sc_crc32(0, (const uint8_t *)"1234", 4), (const uint8_t *)"56789", 5) == 0xCBF43926u);
    /* an odd-sized image: gradients, a flat block, and a noisy quadrant */
    int w = 97, h = 61;
    uint8_t *img = malloc((size_t)w * h * 3);
    uint32_t s = 12345;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = img + 3 * (y * w + x);
            s = s * 1664525u + 1013904223u;
            p[0] = (uint8_t)(2 * x + y);
            p[1] = (uint8_t)(x * y / 16);
            p[2] = x > 60 && y > 30 ? (uint8_t)(s >> 24) : x < 20 ? 200 : (uint8_t)(255 - 3 * y);
        }
    const char *raw = sc_test_tmp("png_raw.bin"), *py = sc_test_write("png_check.py", png_check_py);
    ENSURE(write_all(raw, img, (size_t)w * h * 3));
    size_t sizes[4];
    int levels[4] = {0, 1, 6, 9};
    for (int i = 0; i < 4; i++) {
        uint8_t *png;
        sc_err err;
        ENSURE_OK(sc_png_encode(img, w, h, levels[i], &png, &sizes[i], &err), &err);
        char name[64];
        snprintf(name, sizeof name, "png_level%d.png", levels[i]);
        const char *pp = sc_test_tmp(name);
        ENSURE(write_all(pp, png, sizes[i]));
        free(png);
        int rc = sc_test_sh(out, sizeof out, "%s %s %s %s %d %d", python(), py, pp, raw, w, h);
        ENSURE_MSG(rc == 0 && strstr(out, "OK"), "level %d: %s", levels[i], out);
    }
    sc_test_report("PNG %d x %d (%d raw bytes): %zu / %zu / %zu / %zu bytes at levels 0 / 1 / 6 / 9, all decoded by Python zlib "
                   "bit-exactly",
                   w, h, w * h * 3, sizes[0], sizes[1], sizes[2], sizes[3]);
    ENSURE(sizes[0] > (size_t)(w * h * 3)); /* stored blocks only */
    ENSURE(sizes[2] < sizes[0] * 6 / 10 && sizes[3] <= sizes[2] + 64);
    /* sc_png_write goes through a tmp file */
    sc_err err;
    const char *pw = sc_test_tmp("png_written.png");
    ENSURE_OK(sc_png_write(pw, img, w, h, &err), &err);
    int ww, hh;
    ENSURE(png_size(pw, &ww, &hh) && ww == w && hh == h);
    ENSURE(!sc_test_temporary_left(sc_test_tmp("png_written.png")));
    free(img);
}

/* ---- the picture ---- */

static void quiet_opts(sc_render_opts *o, int camera)
{
    sc_render_default_opts(o);
    o->camera = camera;
    o->labels = 0;
    o->contacts = 0;
    o->pushes = 0;
}

TEST(render_fixed_scene_is_deterministic)
{
    const char *ch = character();
    ENSURE_MSG(ch, "building the character failed: %s", out);
    sc_err err;
    sc_anim a;
    ENSURE_OK(sc_anim_open(ch, &a, &err), &err);
    sc_anim_pose p;
    ENSURE_OK(sc_anim_pose_alloc(&a, &p, &err), &err);
    ENSURE_OK(sc_anim_frame(&a, 0, &p, &err), &err);
    sc_render_opts o;
    sc_render_default_opts(&o);
    o.skeleton = 1;
    size_t n = (size_t)o.width * o.height * 3;
    uint8_t *img1 = malloc(n), *img2 = malloc(n), *img3 = malloc(n), *other = malloc(n);
    sc_renderer *r1, *r2;
    ENSURE_OK(sc_renderer_create(&o, &a, &r1, &err), &err);
    ENSURE_OK(sc_renderer_create(&o, &a, &r2, &err), &err);
    sc_camera cam, cam2;
    sc_render_camera(r1, &a, 0, 30, &cam);
    sc_render_camera(r1, &a, 0, 100, &cam2);
    sc_render_draw(r1, &a, &p, &cam, "t = 0.00 s", img1, NULL);
    sc_render_draw(r1, &a, &p, &cam2, "t = 0.00 s", other, NULL); /* nothing may leak into the next frame */
    sc_render_draw(r1, &a, &p, &cam, "t = 0.00 s", img2, NULL);
    sc_render_draw(r2, &a, &p, &cam, "t = 0.00 s", img3, NULL);
    size_t diff_other = 0;
    for (size_t i = 0; i < n; i++) diff_other += img1[i] != other[i];
    /* a real picture: many distinct colours */
    static uint8_t seen[1 << 15];
    memset(seen, 0, sizeof seen);
    int colours = 0;
    for (size_t i = 0; i < n; i += 3) {
        int key = (img1[i] >> 3) << 10 | (img1[i + 1] >> 3) << 5 | (img1[i + 2] >> 3);
        colours += !seen[key];
        seen[key] = 1;
    }
    uint8_t *png;
    size_t pn;
    ENSURE_OK(sc_png_encode(img1, o.width, o.height, 6, &png, &pn, &err), &err);
    free(png);
    sc_test_report("640 x 480 frame: identical bytes on redraw and from a second renderer; %d colours (15-bit bins); "
                   "%zu bytes differ at another azimuth; PNG %zu KB (%.1f%% of raw)",
                   colours, diff_other, pn / 1024, 100.0 * pn / n);
    ENSURE(memcmp(img1, img2, n) == 0);
    ENSURE(memcmp(img1, img3, n) == 0);
    ENSURE(diff_other > n / 20);
    ENSURE(colours > 200);
    ENSURE(pn < n * 35 / 100);
    free(img1);
    free(img2);
    free(img3);
    free(other);
    sc_renderer_free(r1);
    sc_renderer_free(r2);
    sc_anim_pose_free(&p);
    sc_anim_close(&a);
}

TEST(render_character_pixels_inside_projected_bbox)
{
    const char *ch = character();
    ENSURE_MSG(ch, "building the character failed: %s", out);
    sc_err err;
    sc_anim a;
    ENSURE_OK(sc_anim_open(ch, &a, &err), &err);
    sc_anim_pose p;
    ENSURE_OK(sc_anim_pose_alloc(&a, &p, &err), &err);
    ENSURE_OK(sc_anim_frame(&a, 0, &p, &err), &err);
    int cams[3] = {SC_CAM_SIDE, SC_CAM_FRONT, SC_CAM_ORBIT};
    double az_off[3] = {0, 0, 57};
    for (int c = 0; c < 3; c++) {
        sc_render_opts o;
        quiet_opts(&o, cams[c]);
        o.shadow = 0;
        size_t npx = (size_t)o.width * o.height;
        uint8_t *img = malloc(npx * 3), *empty = malloc(npx * 3), *mask = malloc(npx);
        sc_renderer *r;
        ENSURE_OK(sc_renderer_create(&o, &a, &r, &err), &err);
        sc_camera cam;
        sc_render_camera(r, &a, 0, az_off[c], &cam);
        /* the bounding box predicted by projecting every surface vertex */
        double x0 = 1e9, x1 = -1e9, y0 = 1e9, y1 = -1e9;
        for (int v = 0; v < a.nsv; v++) {
            double x, y, d;
            ENSURE(sc_camera_project(&cam, sc_v3_load(p.surf + 3 * v), &x, &y, &d));
            x0 = fmin(x0, x);
            x1 = fmax(x1, x);
            y0 = fmin(y0, y);
            y1 = fmax(y1, y);
        }
        sc_render_draw(r, &a, &p, &cam, NULL, img, mask);
        /* the same scene with the body sunk 100 m under the ground: only the ground remains */
        for (int v = 0; v < a.nsv; v++) p.surf[3 * v + 1] -= 100;
        sc_render_draw(r, &a, &p, &cam, NULL, empty, NULL);
        for (int v = 0; v < a.nsv; v++) p.surf[3 * v + 1] += 100;
        long covered = 0, outside = 0, changed = 0, changed_outside = 0;
        for (int y = 0; y < o.height; y++)
            for (int x = 0; x < o.width; x++) {
                size_t i = (size_t)y * o.width + x;
                int in = x >= floor(x0) - 1 && x <= ceil(x1) && y >= floor(y0) - 1 && y <= ceil(y1);
                int ch_px = memcmp(img + 3 * i, empty + 3 * i, 3) != 0;
                covered += mask[i] > 0;
                outside += mask[i] > 0 && !in;
                changed += ch_px;
                changed_outside += ch_px && !in;
            }
        double box = (x1 - x0) * (y1 - y0), frac = covered / box;
        sc_test_report("camera %d: projected bbox %.0f..%.0f x %.0f..%.0f px, %ld pixels covered (%.0f%% of the box), "
                       "%ld outside it; %ld pixels differ from the empty scene, %ld outside",
                       c, x0, x1, y0, y1, covered, 100 * frac, outside, changed, changed_outside);
        ENSURE(x0 > 0 && x1 < o.width && y0 > 0 && y1 < o.height); /* the camera frames the character */
        ENSURE(y1 - y0 > 0.5 * o.height && y1 - y0 < 0.85 * o.height);
        ENSURE(outside == 0 && changed_outside == 0);
        ENSURE(frac > 0.15 && frac < 0.95);
        ENSURE(changed >= covered * 9 / 10 && changed <= covered + 4 * (long)(x1 - x0 + y1 - y0));
        free(img);
        free(empty);
        free(mask);
        sc_renderer_free(r);
    }
    sc_anim_pose_free(&p);
    sc_anim_close(&a);
}

TEST(render_shadow_darkens_the_ground_at_the_feet)
{
    const char *ch = character();
    ENSURE_MSG(ch, "building the character failed: %s", out);
    sc_err err;
    sc_anim a;
    ENSURE_OK(sc_anim_open(ch, &a, &err), &err);
    sc_anim_pose p;
    ENSURE_OK(sc_anim_pose_alloc(&a, &p, &err), &err);
    ENSURE_OK(sc_anim_frame(&a, 0, &p, &err), &err);
    double lum[2];
    long count = 0;
    for (int s = 0; s < 2; s++) {
        sc_render_opts o;
        quiet_opts(&o, SC_CAM_FRONT);
        o.shadow = s;
        size_t npx = (size_t)o.width * o.height;
        uint8_t *img = malloc(npx * 3), *mask = malloc(npx);
        sc_renderer *r;
        ENSURE_OK(sc_renderer_create(&o, &a, &r, &err), &err);
        sc_camera cam;
        sc_render_camera(r, &a, 0, 0, &cam);
        sc_render_draw(r, &a, &p, &cam, NULL, img, mask);
        /* ground pixels around the feet: between the projected ankles, down to below the soles */
        double xs0 = 1e9, xs1 = -1e9, ys0 = 1e9, ys1 = -1e9;
        for (int v = 0; v < a.nsv; v++) {
            if (p.surf[3 * v + 1] > 0.12) continue;
            double x, y, d;
            sc_camera_project(&cam, sc_v3_load(p.surf + 3 * v), &x, &y, &d);
            xs0 = fmin(xs0, x);
            xs1 = fmax(xs1, x);
            ys0 = fmin(ys0, y);
            ys1 = fmax(ys1, y);
        }
        double sum = 0;
        count = 0;
        for (int y = (int)ys0; y <= (int)ys1 + 6; y++)
            for (int x = (int)xs0 - 6; x <= (int)xs1 + 6; x++) {
                size_t i = (size_t)y * o.width + x;
                if (mask[i]) continue;
                sum += 0.3 * img[3 * i] + 0.59 * img[3 * i + 1] + 0.11 * img[3 * i + 2];
                count++;
            }
        lum[s] = count ? sum / count : 0;
        free(img);
        free(mask);
        sc_renderer_free(r);
    }
    sc_test_report("ground around the feet (%ld pixels): mean luminance %.1f with the shadow, %.1f without", count, lum[1], lum[0]);
    ENSURE(count > 100);
    ENSURE(lum[1] < 0.85 * lum[0]);
    sc_anim_pose_free(&p);
    sc_anim_close(&a);
}

/* ---- sampling ---- */

TEST(render_anim_reads_sim_and_interpolates)
{
    sc_model m;
    const char *sim = synthetic(&m);
    ENSURE_MSG(sim, "synthetic sim.h5: %s", out);
    sc_err err;
    sc_anim a;
    ENSURE_OK(sc_anim_open(sim, &a, &err), &err);
    ENSURE(a.is_sim && a.has_nodes && a.nframes == 12 && a.nbones == m.nbones && a.nsv == m.nsurf_verts);
    /* rest joints recovered from the fixed nodes of frame 0 */
    double jerr = 0;
    for (int i = 0; i < 3 * m.nbones; i++) jerr = fmax(jerr, fabs(a.joint_rest[i] - m.joint_pos[i]));
    ENSURE(a.npush == 1 && a.push[0].bone == 1 && a.push[0].force[0] == 150);
    sc_anim_pose p0, p1, pm;
    ENSURE_OK(sc_anim_pose_alloc(&a, &p0, &err), &err);
    ENSURE_OK(sc_anim_pose_alloc(&a, &p1, &err), &err);
    ENSURE_OK(sc_anim_pose_alloc(&a, &pm, &err), &err);
    ENSURE_OK(sc_anim_frame(&a, 4, &p0, &err), &err);
    ENSURE_OK(sc_anim_frame(&a, 5, &p1, &err), &err);
    ENSURE_OK(sc_anim_sample(&a, 0.5 * (a.time[4] + a.time[5]), &pm, &err), &err);
    double mid_err = 0, exact_err = 0;
    for (int i = 0; i < 3 * a.nsv; i++) mid_err = fmax(mid_err, fabs(pm.surf[i] - 0.5 * (p0.surf[i] + p1.surf[i])));
    ENSURE_OK(sc_anim_sample(&a, a.time[5], &pm, &err), &err);
    for (int i = 0; i < 3 * a.nsv; i++) exact_err = fmax(exact_err, fabs(pm.surf[i] - p1.surf[i]));
    /* the embedded surface of frame 0 is the rest surface moved rigidly with the pelvis region */
    double *times;
    int n30 = sc_anim_times(&a, 30, 0, 0, 0, &times);
    free(times);
    int n_every = sc_anim_times(&a, 30, 5, 0, 0, &times);
    double t_every1 = times[1];
    free(times);
    sc_test_report("synthetic sim: rest joints recovered to %.1e m; midpoint sample = mean of neighbours to %.1e m; "
                   "a stored time reproduces its frame to %.1e m; %d frames at 30 fps over %.2f s",
                   jerr, mid_err, exact_err, n30, a.time[11]);
    ENSURE(jerr < 1e-9);
    ENSURE(mid_err < 1e-12);
    ENSURE(exact_err == 0);
    ENSURE(n30 == (int)floor(0.55 * 30 + 1e-9) + 1);
    ENSURE(n_every == 3 && fabs(t_every1 - a.time[5]) < 1e-15);
    sc_anim_pose_free(&p0);
    sc_anim_pose_free(&p1);
    sc_anim_pose_free(&pm);
    sc_anim_close(&a);

    /* without node frames the nodes ride their bones rigidly, which is how the synthetic file
       moved them: the same surface from the bones alone */
    const char *nonodes = sc_test_tmp("render_nonodes.h5");
    ENSURE(write_synthetic_sim(nonodes, &m, 12, 0.05, 3));
    sc_anim b;
    ENSURE_OK(sc_anim_open(sim, &a, &err), &err);
    ENSURE_OK(sc_anim_open(nonodes, &b, &err), &err);
    ENSURE_OK(sc_anim_pose_alloc(&a, &p0, &err), &err);
    ENSURE_OK(sc_anim_pose_alloc(&b, &pm, &err), &err);
    ENSURE_OK(sc_anim_frame(&a, 11, &p0, &err), &err);
    ENSURE_OK(sc_anim_frame(&b, 11, &pm, &err), &err);
    double rigid_err = 0;
    for (int i = 0; i < 3 * a.nsv; i++) rigid_err = fmax(rigid_err, fabs(pm.surf[i] - p0.surf[i]));
    sc_test_report("no node frames: the surface rebuilt from the bones alone matches the stored one to %.1e m", rigid_err);
    ENSURE(!b.has_nodes && a.has_nodes);
    ENSURE(rigid_err < 1e-9);
    sc_anim_pose_free(&p0);
    sc_anim_pose_free(&pm);
    sc_anim_close(&a);
    sc_anim_close(&b);
    sc_model_free(&m);
}

/* ---- damaged inputs ---- */

static int dir_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

TEST(render_damaged_sim_files_fail_cleanly)
{
    sc_model m;
    const char *sim = synthetic(&m);
    ENSURE_MSG(sim, "synthetic sim.h5: %s", out);
    long n;
    unsigned char *bytes = read_all(sim, &n);
    ENSURE(bytes && n > 100000);
    struct {
        const char *name;
        int lo, hi;
        const char *must;
    } cases[] = {
        {"render_empty.h5", 2, 2, "not an HDF5 file"},        {"render_garbage.h5", 2, 2, "not an HDF5 file"},
        {"render_truncated.h5", 2, 3, "render_truncated.h5"}, {"render_corrupt.h5", 2, 3, "render_corrupt.h5:/"},
        {"render_noframes.h5", 2, 2, "/time: no frames"},     {"render_badface.h5", 2, 2, "/mesh/surface_faces: face 17"},
        {"render_nodata.h5", 2, 2, "/time: missing"},
    };
    /* build the damaged files */
    ENSURE(write_all(sc_test_tmp(cases[0].name), "", 0));
    unsigned char junk[4096];
    for (int i = 0; i < 4096; i++) junk[i] = (unsigned char)(i * 7919 >> 3);
    ENSURE(write_all(sc_test_tmp(cases[1].name), junk, sizeof junk));
    ENSURE(write_all(sc_test_tmp(cases[2].name), bytes, (size_t)(n * 6 / 10)));
    unsigned char *bad = malloc((size_t)n);
    memcpy(bad, bytes, (size_t)n);
    for (long i = n * 3 / 10; i < n * 7 / 10; i++) bad[i] = 0xA5;
    ENSURE(write_all(sc_test_tmp(cases[3].name), bad, (size_t)n));
    free(bad);
    ENSURE(write_synthetic_sim(sc_test_tmp(cases[4].name), &m, 12, 0.05, 1));
    ENSURE(write_synthetic_sim(sc_test_tmp(cases[5].name), &m, 4, 0.05, 2));
    sc_h5 *f;
    sc_err err;
    ENSURE_OK(sc_h5_create(sc_test_tmp(cases[6].name), &f, &err), &err);
    ENSURE_OK(sc_h5_provenance(f, "softcon.sim/1", 0, NULL, NULL, &err), &err);
    ENSURE_OK(sc_h5_commit(f, &err), &err);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char dir[64];
        snprintf(dir, sizeof dir, "render_out_%zu", c);
        int rc = sc_test_sh(out, sizeof out, "%s -o %s %s", sc_test_tool("render"), sc_test_tmp(dir), sc_test_tmp(cases[c].name));
        sc_test_report("%s -> exit %d: %.300s", cases[c].name, rc, out);
        ENSURE_MSG(rc >= cases[c].lo && rc <= cases[c].hi, "%s: exit %d: %s", cases[c].name, rc, out);
        ENSURE_MSG(strstr(out, cases[c].name) && strstr(out, cases[c].must), "%s: %s", cases[c].name, out);
        ENSURE_MSG(!dir_exists(sc_test_tmp(dir)), "%s: output written despite the error", cases[c].name);
    }
    free(bytes);
    sc_model_free(&m);
}

/* ---- exports ---- */

TEST(render_xdmf_every_dataset_exists_with_its_shape)
{
    sc_model m;
    const char *sim = synthetic(&m);
    ENSURE_MSG(sim, "synthetic sim.h5: %s", out);
    sc_err err;
    sc_anim a;
    ENSURE_OK(sc_anim_open(sim, &a, &err), &err);
    double *times;
    int n = sc_anim_times(&a, 0, 0, 0, 0, &times); /* every stored frame */
    const char *h5p = sc_test_tmp("xdmf_frames.h5"), *xp = sc_test_tmp("xdmf_frames.xdmf");
    ENSURE_OK(sc_export_xdmf(&a, times, n, h5p, xp, 0, NULL, &err), &err);
    long len;
    char *x = (char *)read_all(xp, &len);
    ENSURE(x);
    sc_h5 *f;
    ENSURE_OK(sc_h5_open(h5p, &f, &err), &err);
    int items = 0, bad = 0, times_seen = 0;
    for (char *p = strstr(x, "<DataItem"); p; p = strstr(p + 1, "<DataItem")) {
        char dims[64] = "", path[256] = "", file[256] = "";
        char *d = strstr(p, "Dimensions=\""), *gt = strchr(p, '>');
        ENSURE(d && gt && strstr(p, "Format=\"HDF\"") < gt);
        sscanf(d + 12, "%63[^\"]", dims);
        sscanf(gt + 1, "%255[^:]:%255[^<]", file, path);
        size_t want[3] = {0, 0, 0}, got[3];
        int wr = sscanf(dims, "%zu %zu %zu", &want[0], &want[1], &want[2]), rank;
        items++;
        if (strcmp(file, "xdmf_frames.h5") || sc_h5_shape(f, path, &rank, got, &err) || rank != wr || got[0] != want[0] ||
            (wr > 1 && got[1] != want[1])) {
            if (bad++ < 5) sc_test_fail(__FILE__, __LINE__, "%s:%s declared %s: %s", file, path, dims, err.msg);
        }
    }
    double prev = -1;
    int monotone = 1;
    for (char *p = strstr(x, "<Time Value=\""); p; p = strstr(p + 1, "<Time Value=\"")) {
        double t = atof(p + 13);
        if (times_seen && t <= prev) monotone = 0;
        prev = t;
        times_seen++;
    }
    /* the stored surface of frame 5 is the sampled one */
    size_t dims[2] = {(size_t)a.nsv, 3};
    double *s5;
    ENSURE_OK(sc_h5_read_f64(f, "/frames/000005/surface", 2, dims, &s5, &err), &err);
    sc_anim_pose p;
    ENSURE_OK(sc_anim_pose_alloc(&a, &p, &err), &err);
    ENSURE_OK(sc_anim_frame(&a, 5, &p, &err), &err);
    double e5 = 0;
    for (int i = 0; i < 3 * a.nsv; i++) e5 = fmax(e5, fabs(s5[i] - p.surf[i]));
    sc_test_report("XDMF: %d frames (one temporal collection of 3 grids), %d HDF dataset references, %d with a wrong path or shape; "
                   "frame 5 surface matches to %.1e m",
                   n, items, bad, e5);
    ENSURE(bad == 0);
    ENSURE(items == n * (3 + 3 + 2));    /* surface: faces, xyz, height; tets: tets, xyz, fixed_bone; skeleton: segments, xyz */
    ENSURE(times_seen == n && monotone); /* one time per frame: the grids of a frame share it */
    ENSURE(strstr(x, "HyperSlab") == NULL);
    ENSURE(e5 == 0);
    free(s5);
    free(x);
    free(times);
    sc_h5_close(f);
    sc_anim_pose_free(&p);
    sc_anim_close(&a);
    sc_model_free(&m);
}

TEST(render_pc2_header_and_size)
{
    sc_model m;
    const char *sim = synthetic(&m);
    ENSURE_MSG(sim, "synthetic sim.h5: %s", out);
    sc_err err;
    sc_anim a;
    ENSURE_OK(sc_anim_open(sim, &a, &err), &err);
    double *times;
    int n = sc_anim_times(&a, 24, 0, 0, 0, &times);
    const char *pc2 = sc_test_tmp("surface.pc2"), *obj = sc_test_tmp("surface.obj");
    ENSURE_OK(sc_export_pc2(&a, times, n, pc2, &err), &err);
    ENSURE_OK(sc_export_obj(&a, times[0], obj, &err), &err);
    long len;
    unsigned char *b = read_all(pc2, &len);
    ENSURE(b);
    int32_t version, npts, nsamp;
    float start, rate, x0;
    memcpy(&version, b + 12, 4);
    memcpy(&npts, b + 16, 4);
    memcpy(&start, b + 20, 4);
    memcpy(&rate, b + 24, 4);
    memcpy(&nsamp, b + 28, 4);
    /* sample 3, vertex 100, y */
    memcpy(&x0, b + 32 + ((size_t)3 * npts + 100) * 12 + 4, 4);
    sc_anim_pose p;
    ENSURE_OK(sc_anim_pose_alloc(&a, &p, &err), &err);
    ENSURE_OK(sc_anim_sample(&a, times[3], &p, &err), &err);
    sc_trimesh tm;
    ENSURE_OK(sc_obj_load(obj, &tm, &err), &err);
    sc_test_report("PC2: %d points x %d samples (24 fps over %.2f s), %ld bytes = 32 + %d x %d x 12; OBJ %d vertices, %d faces", npts, nsamp,
                   a.time[a.nframes - 1], len, nsamp, npts, tm.nverts, tm.ntris);
    ENSURE(memcmp(b, "POINTCACHE2\0", 12) == 0);
    ENSURE(version == 1 && npts == a.nsv && nsamp == n && start == 0.0f && rate == 1.0f);
    ENSURE(len == 32 + (long)nsamp * npts * 12);
    ENSURE(n == 14); /* 0.55 s at 24 fps */
    ENSURE(x0 == (float)p.surf[3 * 100 + 1]);
    ENSURE(tm.nverts == a.nsv && tm.ntris == a.nsf && tm.tris[5] == a.faces[5]);
    sc_trimesh_free(&tm);
    free(b);
    free(times);
    sc_anim_pose_free(&p);
    sc_anim_close(&a);
    sc_model_free(&m);
}

TEST(render_bvh_export_import_reproduces_joint_angles)
{
    /* Euler conversion on its own, including gimbal lock */
    double emax = 0;
    for (int i = 0; i < 2000; i++) {
        double e[3],
            in[3] = {fmod(i * 37.1, 360) - 180,
                     i % 50 == 0       ? 90.0
                         : i % 50 == 1 ? -90.0
                                       : fmod(i * 11.3, 180) - 90,
                     fmod(i * 73.7, 360) - 180};
        sc_quat q = sc_q_from_euler_deg("ZYX", in);
        sc_quat_to_euler_zyx_deg(q, e);
        emax = fmax(emax, sc_q_angle_between(q, sc_q_from_euler_deg("ZYX", e)));
    }
    ENSURE_MSG(emax < 1e-9, "Euler round trip %g rad", emax);

    sc_model m;
    const char *sim = synthetic(&m);
    ENSURE_MSG(sim, "synthetic sim.h5: %s", out);
    sc_err err;
    sc_anim a;
    ENSURE_OK(sc_anim_open(sim, &a, &err), &err);
    const char *bvh_path = sc_test_tmp("skeleton.bvh");
    double worst_deg = 0, worst_interp = 0, worst_pos = 0;
    for (int pass = 0; pass < 2; pass++) {
        double *times;
        int n = sc_anim_times(&a, pass ? 45 : 0, 0, 0, 0, &times); /* stored frames, then 45 fps resampled */
        ENSURE_OK(sc_export_bvh(&a, times, n, bvh_path, &err), &err);
        sc_bvh b;
        ENSURE_OK(sc_bvh_load(bvh_path, &b, &err), &err);
        ENSURE(b.nframes == n);
        int ends = 0;
        for (int j = 0; j < b.njoints; j++) ends += b.joints[j].end_site;
        ENSURE(b.njoints == a.nbones + ends && ends >= 5);
        sc_anim_pose p;
        ENSURE_OK(sc_anim_pose_alloc(&a, &p, &err), &err);
        sc_xform *world = malloc((size_t)b.njoints * sizeof *world);
        for (int f = 0; f < n; f++) {
            ENSURE_OK(sc_anim_sample(&a, times[f], &p, &err), &err);
            sc_bvh_world(&b, f, world);
            for (int bone = 0; bone < a.nbones; bone++) {
                int j = sc_bvh_find(&b, a.bone_name[bone]);
                ENSURE(j >= 0);
                sc_quat q = sc_bvh_local(&b, j, f).q;
                double d = sc_q_angle_between(q, sc_anim_local_rotation(&p, &a, bone)) * 180 / SC_PI;
                if (pass == 0) {
                    /* against the generator's own joint rotations */
                    double dg = sc_q_angle_between(q, synth_local(bone, f, 12)) * 180 / SC_PI;
                    worst_deg = fmax(worst_deg, fmax(d, dg));
                    /* forward kinematics of the BVH puts every joint where the simulation had it */
                    worst_pos = fmax(worst_pos, sc_v3_dist(world[j].p, p.bone[bone].p));
                } else {
                    worst_interp = fmax(worst_interp, d);
                }
            }
        }
        free(world);
        free(times);
        sc_anim_pose_free(&p);
        sc_bvh_free(&b);
    }
    sc_test_report("BVH export -> sc_bvh_load: joint angles within %.2e deg (stored frames, vs the generator), %.2e deg "
                   "(45 fps resampled); joint positions by BVH forward kinematics within %.1e m",
                   worst_deg, worst_interp, worst_pos);
    ENSURE(worst_deg < 1e-4);
    ENSURE(worst_interp < 1e-4);
    ENSURE(worst_pos < 1e-9);
    sc_anim_close(&a);
    sc_model_free(&m);
}

/* ---- the tool ---- */

TEST(render_cli_simulation_end_to_end)
{
    const char *ch = character();
    ENSURE_MSG(ch, "building the character failed: %s", out);
    /* one config for simulate and render: each reads its own section */
    const char *cfg = sc_test_write("render_e2e.yaml",
                                    "simulation: {duration: 0.3, plasticity: false, damping: rayleigh}\n"
                                    "output: {every: 20}\n"
                                    "perturbations:\n  - {type: push, bone: spine, time: 0.1, duration: 0.1, force: [150, 0, 0]}\n"
                                    "render:\n  width: 200\n  height: 150\n  fps: 20\n  camera: front\n  skeleton: true\n"
                                    "  contact_sheet: {cols: 3, rows: 2, tile_width: 120}\n");
    const char *sim = sc_test_tmp("render_e2e_sim.h5"), *dir = sc_test_tmp("render_e2e");
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("simulate"), cfg, sim, ch);
    ENSURE_MSG(rc == 0, "simulate: %s", out);
    rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s", sc_test_tool("render"), cfg, dir, sim);
    ENSURE_MSG(rc == 0, "render: %s", out);
    int w, h, frames = 0;
    char p[1200];
    for (int i = 0;; i++) {
        snprintf(p, sizeof p, "%s/frame_%05d.png", dir, i);
        if (!sc_test_file_exists(p)) break;
        ENSURE(png_size(p, &w, &h) && w == 200 && h == 150);
        frames++;
    }
    snprintf(p, sizeof p, "%s/contact_sheet.png", dir);
    ENSURE(png_size(p, &w, &h));
    int sheet_w = w, sheet_h = h;
    int have_ffmpeg = sc_test_sh(NULL, 0, "command -v ffmpeg") == 0;
    snprintf(p, sizeof p, "%s/movie.mp4", dir);
    long movie = file_size(p);
    static const char *const exports[] = {"render_e2e_sim_frames.h5", "render_e2e_sim_frames.xdmf", "render_e2e_sim_surface.obj",
                                          "render_e2e_sim_surface.pc2", "render_e2e_sim_skeleton.bvh"};
    int nexp = 0;
    for (int i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, exports[i]);
        nexp += sc_test_file_exists(p);
    }
    sc_test_report("render CLI on a 0.3 s push simulation: %d frames 200 x 150, contact sheet %d x %d, movie %ld bytes "
                   "(ffmpeg %s), %d of 5 exports",
                   frames, sheet_w, sheet_h, movie, have_ffmpeg ? "present" : "absent", nexp);
    ENSURE(frames == 7); /* 0 .. 0.3 s at 20 fps */
    ENSURE(sheet_w == 3 * 120 + 4 * 4 && sheet_h == 2 * 90 + 3 * 4);
    ENSURE(nexp == 5);
    ENSURE(have_ffmpeg ? movie > 1000 : movie < 0);
    snprintf(p, sizeof p, "%s/frame_00000.png", dir);
    ENSURE(!sc_test_temporary_left(p));

    /* the character at rest, no config: one frame and a turntable sheet */
    const char *dir2 = sc_test_tmp("render_rest");
    rc = sc_test_sh(out, sizeof out, "%s -q --size 160x120 --no-movie --no-export -o %s %s", sc_test_tool("render"), dir2, ch);
    ENSURE_MSG(rc == 0, "render rest: %s", out);
    snprintf(p, sizeof p, "%s/frame_00000.png", dir2);
    ENSURE(png_size(p, &w, &h) && w == 160 && h == 120);
    snprintf(p, sizeof p, "%s/frame_00001.png", dir2);
    ENSURE(!sc_test_file_exists(p));
    snprintf(p, sizeof p, "%s/contact_sheet.png", dir2);
    ENSURE(sc_test_file_exists(p));

    /* a misspelt key and a bad option are clear errors */
    const char *bad = sc_test_write("render_bad.yaml", "render: {widht: 100}\n");
    rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s", sc_test_tool("render"), bad, sc_test_tmp("render_bad"), sim);
    ENSURE_MSG(rc == 2 && strstr(out, "widht") && strstr(out, "did you mean 'width'"), "exit %d: %s", rc, out);
    rc = sc_test_sh(out, sizeof out, "%s --camera top -o %s %s", sc_test_tool("render"), sc_test_tmp("render_bad"), sim);
    ENSURE_MSG(rc == 1 && strstr(out, "--camera"), "exit %d: %s", rc, out);
}

TEST(render_plot_script_makes_pngs)
{
    sc_model m;
    const char *sim = synthetic(&m);
    ENSURE_MSG(sim, "synthetic sim.h5: %s", out);
    /* the synthetic sim lacks energies: plot a real (short) one */
    const char *cfg = sc_test_write("render_plot.yaml", "simulation: {duration: 0.2, plasticity: false, damping: rayleigh}\noutput: {every: 20}\n");
    const char *simh5 = sc_test_tmp("render_plot_sim.h5"), *ref = sc_test_tmp("render_plot_reference.h5");
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("simulate"), cfg, simh5, character());
    ENSURE_MSG(rc == 0, "simulate: %s", out);
    /* a small reference.h5 in the inverse-dynamics layout */
    sc_h5 *f;
    sc_err err;
    int T = 50, nb = m.nbones;
    double *t = malloc(sizeof(double) * T), *tq = calloc((size_t)T * nb * 3, sizeof(double)), *cf = calloc((size_t)T * nb * 3, sizeof(double));
    int *flag = calloc((size_t)T * nb, sizeof(int));
    const char *names[256];
    for (int b = 0; b < nb; b++) names[b] = m.bone_name[b];
    for (int k = 0; k < T; k++) {
        t[k] = 0.01 * k;
        for (int b = 0; b < nb; b++) tq[3 * (k * nb + b)] = 10 * b * sin(6 * t[k]);
        cf[3 * (k * nb + nb - 1) + 1] = 450 + 50 * sin(5 * t[k]);
        flag[k * nb + nb - 1] = 1;
    }
    ENSURE_OK(sc_h5_create(ref, &f, &err), &err);
    rc = sc_h5_provenance(f, "softcon.reference/1", 0, NULL, NULL, &err) ||
        sc_h5_write_f64(f, "/time", 1, (size_t[]){(size_t)T}, t, "s", NULL, &err) ||
        sc_h5_write_strings(f, "/bones/names", (size_t)nb, names, NULL, &err) ||
        sc_h5_write_f64(f, "/torques/joint", 3, (size_t[]){(size_t)T, (size_t)nb, 3}, tq, "N m", NULL, &err) ||
        sc_h5_write_f64(f, "/contact/force", 3, (size_t[]){(size_t)T, (size_t)nb, 3}, cf, "N", NULL, &err) ||
        sc_h5_write_i32(f, "/contact/flag", 2, (size_t[]){(size_t)T, (size_t)nb}, flag, NULL, &err);
    free(t);
    free(tq);
    free(cf);
    free(flag);
    ENSURE_OK(rc ? err.code : sc_h5_commit(f, &err), &err);
    const char *dir = sc_test_tmp("render_plots");
    rc = sc_test_sh(out, sizeof out, "%s -o %s %s %s", sc_test_repo("scripts/plot.sh"), dir, simh5, ref);
    ENSURE_MSG(rc == 0, "plot.sh: %s", out);
    static const char *const pngs[] = {"render_plot_sim_momentum.png",      "render_plot_sim_energy.png",
                                       "render_plot_sim_contact.png",       "render_plot_sim_tracking.png",
                                       "render_plot_reference_torques.png", "render_plot_reference_contact_forces.png"};
    long smallest = 1L << 40;
    for (int i = 0; i < 6; i++) {
        char p[1200];
        int w, h;
        snprintf(p, sizeof p, "%s/%s", dir, pngs[i]);
        ENSURE_MSG(png_size(p, &w, &h) && w == 900 && h == 500, "%s", p);
        ENSURE(strstr(out, pngs[i]));
        smallest = file_size(p) < smallest ? file_size(p) : smallest;
    }
    /* the wrong kind of file is refused */
    int rc2 = sc_test_sh(out, sizeof out, "%s -o %s %s", sc_test_repo("scripts/plot.sh"), dir, character());
    sc_test_report("plot.sh: 6 PNGs 900 x 500 (smallest %ld bytes); character.h5 -> exit %d", smallest, rc2);
    ENSURE(smallest > 8000);
    ENSURE(rc2 == 2 && strstr(out, "expected softcon.sim/1"));
    sc_model_free(&m);
}

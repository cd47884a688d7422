/* The interactive HTML viewer (render/html.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/cleanup.h"
#include "io/paths.h"
#include "learn/evaluate.h"
#include "store/sim.h"
#include "render/html.h"
#include "render/png.h"
#include "render/viewer_assets.h"

enum { NSCALAR = 11 }; /* per frame: t, com[3], contact force[3], push force[3], tracking error */

void sc_html_judge(const sc_anim *a, const char *ref_path, sc_html_figures *fig)
{
    memset(fig, 0, sizeof *fig);
    int nb = a->nbones, nf = a->nframes;
    if (!a->is_sim || nb < 1 || nf < 1) return;
    sc_fall_report r;
    sc_err err;
    if (ref_path && sc_sim_judge_fall(a->path, ref_path, 60, 0, &r, &err) == SC_OK) {
        snprintf(fig->fall_rule, sizeof fig->fall_rule, "against the reference: pelvis below half its height, or torso tilted over 60 deg");
        fig->ref_judged = 1;
        fig->ref_tracking = r.tracking_rms;
    } else {
        /* the simulation's own first frame as a one-sample reference */
        char **names = malloc((size_t)nb * sizeof *names);
        double *local = malloc((size_t)nb * 4 * sizeof(double));
        if (!names || !local) {
            free(names);
            free(local);
            return;
        }
        for (int b = 0; b < nb; b++) {
            names[b] = (char *)a->bone_name[b];
            sc_quat q = {a->bone_quat[4 * b], a->bone_quat[4 * b + 1], a->bone_quat[4 * b + 2], a->bone_quat[4 * b + 3]};
            if (a->parent[b] >= 0) {
                const double *pq = a->bone_quat + 4 * a->parent[b];
                q = sc_q_mul(sc_q_conj((sc_quat){pq[0], pq[1], pq[2], pq[3]}), q);
            }
            local[4 * b] = q.w, local[4 * b + 1] = q.x, local[4 * b + 2] = q.y, local[4 * b + 3] = q.z;
        }
        sc_fall_motion m = {(size_t)nf, (size_t)nb, a->time, a->bone_pos, a->bone_quat, a->parent, names};
        sc_fall_reference fr = {1, (size_t)nb, a->time, a->bone_pos, local, NULL};
        sc_evaluate_fall_motion(&m, &fr, 60, &r);
        free(names);
        free(local);
        snprintf(fig->fall_rule, sizeof fig->fall_rule,
                 "against its first frame: pelvis below half its starting height, or torso tilted over 60 deg");
    }
    fig->judged = 1;
    fig->fell = r.fell;
    fig->fall_time = r.fall_time;
    snprintf(fig->reason, sizeof fig->reason, "%s", r.reason);
}

/* ---- writing ---- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
        else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
        else if (*c == '<') fputs("\\u003c", f); /* never "</script>" inside the page's script */
        else fputc(*c, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "%.9g", v);
    else fputs("null", f);
}

static void json_vec(FILE *f, const double *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputc(',', f);
        json_num(f, v[i]);
    }
    fputc(']', f);
}

static void put_le32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* base64 of src, written in lines of 16 KB (editors and the HTML parser cope better) */
static void write_base64(FILE *f, const uint8_t *src, size_t n)
{
    char line[16384 + 8];
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)src[i] << 16 | (i + 1 < n ? (uint32_t)src[i + 1] << 8 : 0) | (i + 2 < n ? src[i + 2] : 0);
        line[k++] = b64[v >> 18 & 63];
        line[k++] = b64[v >> 12 & 63];
        line[k++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        line[k++] = i + 2 < n ? b64[v & 63] : '=';
        if (k >= 16384 || i + 3 >= n) {
            line[k++] = '\n';
            fwrite(line, 1, k, f);
            k = 0;
        }
    }
}

/* bone b's joint and tip in the world at pose x */
static void bone_points(const sc_anim *a, const sc_xform *x, int b, float *out)
{
    sc_vec3 j = x[b].p, t = sc_xf_apply(x[b], sc_v3_sub(sc_v3_load(a->tip_rest + 3 * b), sc_v3_load(a->joint_rest + 3 * b)));
    out[0] = (float)j.x, out[1] = (float)j.y, out[2] = (float)j.z;
    out[3] = (float)t.x, out[4] = (float)t.y, out[5] = (float)t.z;
}

/* The floor's bumps, tiles and boxes as a height grid over the motion's ground track (1 m
 * around it), one sample per tile (a bump's eighth, 2 cm with boxes), coarser where the grid
 * would pass RELIEF_MAX samples: the page draws it as a mesh over the base plane, y the
 * ground's top over (x, z) (sc_ground_top). */
enum { RELIEF_MAX = 250000 };
static void write_relief(FILE *f, const sc_anim *a, const double lo[3], const double hi[3])
{
    const sc_ground *g = &a->relief;
    if (sc_ground_is_flat(g) || fabs(g->normal.y) < 0.1) return;
    double dx = g->tile_size > 0 ? g->tile_size : g->bump_length > 0 ? 0.125 * g->bump_length : 0.02;
    if (g->bump_length > 0 && g->tile_size > 0) dx = fmin(dx, 0.125 * g->bump_length);
    if (g->nboxes > 0) dx = fmin(dx, 0.02); /* a box's edges within 2 cm */
    const double x0 = lo[0] - 1, z0 = lo[2] - 1, wx = hi[0] - lo[0] + 2, wz = hi[2] - lo[2] + 2;
    while ((wx / dx + 1) * (wz / dx + 1) > RELIEF_MAX) dx *= 2;
    const int nx = (int)ceil(wx / dx) + 1, nz = (int)ceil(wz / dx) + 1;
    fprintf(f, ",\"relief\":{\"x0\":%.9g,\"z0\":%.9g,\"dx\":%.9g,\"nx\":%d,\"nz\":%d,\"y\":[", x0, z0, dx, nx, nz);
    for (int k = 0; k < nz; k++)
        for (int i = 0; i < nx; i++) fprintf(f, "%s%.5g", i || k ? "," : "", sc_ground_top(g, x0 + i * dx, z0 + k * dx));
    fputs("]}", f);
}

/* The meta data the page reads (JSON). */
static void write_meta(FILE *f, const sc_anim *a, int n, int npts, int ghost, const double lo[3], const double hi[3], const size_t off[4], size_t raw,
                       const sc_render_opts *o, const sc_html_figures *fig, const char *title, const double *times)
{
    fputs("{\"format\":\"softcon.viewer/1\",\"generator\":", f);
    json_str(f, "softcon render " SC_VERSION);
    fputs(",\"title\":", f);
    json_str(f, title);
    fprintf(f, ",\"is_sim\":%d,\"frames\":%d,\"vertices\":%d,\"triangles\":%d,\"bones\":%d,\"points\":%d,\"ghost\":%d", a->is_sim, n, a->nsv, a->nsf,
            a->nbones, npts, ghost);
    fputs(",\"names\":[", f);
    for (int b = 0; b < a->nbones; b++) {
        if (b) fputc(',', f);
        json_str(f, a->bone_name[b]);
    }
    fputs("],\"parents\":[", f);
    for (int b = 0; b < a->nbones; b++) fprintf(f, "%s%d", b ? "," : "", a->parent[b]);
    fputs("],\"bbox_min\":", f);
    json_vec(f, lo, 3);
    fputs(",\"bbox_max\":", f);
    json_vec(f, hi, 3);
    fputs(",\"ground_n\":", f);
    json_vec(f, a->ground_n, 3);
    fputs(",\"ground_off\":", f);
    json_num(f, a->ground_off);
    write_relief(f, a, lo, hi);
    fputs(",\"height\":", f);
    json_num(f, a->height);
    fprintf(f, ",\"t0\":%.9g,\"duration\":%.9g", times[0], times[n - 1] - times[0]);
    fprintf(f, ",\"offsets\":{\"faces\":%zu,\"lo\":%zu,\"hi\":%zu,\"scalars\":%zu,\"end\":%zu},\"scalars\":%d", off[0], off[1], off[2], off[3], raw,
            NSCALAR);
    fputs(",\"body_color\":", f);
    json_vec(f, o->body_color, 3);
    fputs(",\"contact_threshold\":", f);
    json_num(f, o->contact_threshold);
    fputs(",\"force_scale\":", f);
    json_num(f, o->force_scale);
    fprintf(f, ",\"skeleton\":%d,\"contacts\":%d,\"fov\":%.9g", o->skeleton, o->contacts, o->fov);
    fputs(",\"status\":", f);
    json_str(f, a->status);
    /* the tracking error over the run (the controller's, per stored frame) */
    double sum = 0, sq = 0, mx = 0;
    int cnt = 0;
    for (int k = 0; a->tracking_error && k < a->nframes; k++)
        if (isfinite(a->tracking_error[k])) {
            sum += a->tracking_error[k];
            sq += a->tracking_error[k] * a->tracking_error[k];
            mx = fmax(mx, a->tracking_error[k]);
            cnt++;
        }
    fputs(",\"tracking\":", f);
    if (cnt) fprintf(f, "{\"mean\":%.9g,\"rms\":%.9g,\"max\":%.9g}", sum / cnt, sqrt(sq / cnt), mx);
    else fputs("null", f);
    fputs(",\"fall\":", f);
    if (fig && fig->judged) {
        fprintf(f, "{\"fell\":%d,\"time\":%.9g,\"rule\":", fig->fell, fig->fall_time);
        json_str(f, fig->fall_rule);
        fputs(",\"reason\":", f);
        json_str(f, fig->reason);
        fputs(",\"reference_tracking_rms\":", f);
        if (fig->ref_judged) json_num(f, fig->ref_tracking);
        else fputs("null", f);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputc('}', f);
}

int sc_export_html(sc_anim *a, const double *times, int n, const sc_render_opts *o, const sc_html_figures *fig, const char *title, const char *path,
                   size_t *bytes, sc_err *err)
{
    if (n < 1) return sc_fail(err, SC_EINPUT, "export: no frames");
    int nb = a->nbones, ghost = a->ghost_n > 0;
    int npts = a->nsv + 2 * nb + (ghost ? 2 * nb : 0);
    size_t per = (size_t)npts * 3, nq = per * (size_t)n;
    float *pts = malloc(nq * sizeof(float) + 1), *sc = malloc((size_t)n * NSCALAR * sizeof(float));
    size_t off[4], raw = 0;
    off[0] = 0;
    off[1] = (size_t)a->nsf * 12;
    off[2] = off[1] + nq;
    off[3] = off[2] + nq;
    raw = off[3] + (size_t)n * NSCALAR * 4;
    uint8_t *payload = malloc(raw + 1), *z = NULL;
    size_t zn = 0;
    sc_anim_pose p = {0};
    int rc = (!pts || !sc || !payload) ? sc_fail(err, SC_EIO, "out of memory") : sc_anim_pose_alloc(a, &p, err);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int k = 0; k < n && !rc; k++) {
        if ((rc = sc_anim_sample(a, times[k], &p, err))) break;
        float *row = pts + per * k;
        for (int i = 0; i < 3 * a->nsv; i++) row[i] = (float)p.surf[i];
        for (int b = 0; b < nb; b++) {
            bone_points(a, p.bone, b, row + 3 * a->nsv + 6 * b);
            if (ghost) bone_points(a, p.ghost, b, row + 3 * a->nsv + 6 * nb + 6 * b);
        }
        for (size_t i = 0; i < per; i++) {
            if (!isfinite(row[i])) continue;
            lo[i % 3] = fmin(lo[i % 3], row[i]);
            hi[i % 3] = fmax(hi[i % 3], row[i]);
        }
        double te = a->tracking_error && p.frame >= 0 && p.frame < a->nframes ? a->tracking_error[p.frame] : NAN;
        double s[NSCALAR] = {times[k],        p.com[0],        p.com[1],        p.com[2], p.contact_force[0], p.contact_force[1], p.contact_force[2],
                             p.push_force[0], p.push_force[1], p.push_force[2], te};
        for (int j = 0; j < NSCALAR; j++) sc[(size_t)k * NSCALAR + j] = (float)s[j];
    }
    if (!rc) {
        for (int d = 0; d < 3; d++)
            if (!(lo[d] <= hi[d])) lo[d] = hi[d] = 0;
        for (int i = 0; i < 3 * a->nsf; i++) put_le32(payload + 4 * i, (uint32_t)a->faces[i]);
        /* 16 bits per axis against the bounding box; frame k - frame k-1 (mod 2^16), each frame
           as all x, then all y, then all z; low bytes and high bytes in two planes (the high
           bytes of small deltas are 0 or 255: they compress to almost nothing) */
        uint8_t *plo = payload + off[1], *phi = payload + off[2];
        uint16_t *last = calloc(per, sizeof *last);
        if (!last) rc = sc_fail(err, SC_EIO, "out of memory");
        for (int k = 0; k < n && !rc; k++) {
            const float *row = pts + per * k;
            size_t m = 0;
            for (int d = 0; d < 3; d++) {
                double scale = hi[d] > lo[d] ? 65535.0 / (hi[d] - lo[d]) : 0;
                for (int i = 0; i < npts; i++, m++) {
                    double x = row[3 * i + d];
                    uint16_t q = isfinite(x) ? (uint16_t)lround(fmin(65535, fmax(0, (x - lo[d]) * scale))) : last[m];
                    uint16_t delta = (uint16_t)(q - last[m]);
                    last[m] = q;
                    plo[per * k + m] = (uint8_t)delta;
                    phi[per * k + m] = (uint8_t)(delta >> 8);
                }
            }
        }
        free(last);
        for (size_t i = 0; i < (size_t)n * NSCALAR && !rc; i++) {
            uint32_t u;
            memcpy(&u, sc + i, 4);
            put_le32(payload + off[3] + 4 * i, u);
        }
        if (!rc) rc = sc_zlib_compress(payload, raw, 6, &z, &zn, err);
    }
    free(pts);
    free(payload);
    char tmp[4200];
    FILE *f = rc ? NULL : sc_file_open_tmp(path, "wb", tmp, sizeof tmp, err);
    if (!rc && !f) rc = err->code;
    if (!rc) {
        /* the page with its markers replaced */
        const char *page = (const char *)sc_asset_viewer_html, *end = page + sc_asset_viewer_html_len, *at = page;
        while (at < end) {
            const char *m = memmem(at, (size_t)(end - at), "/*@", 3);
            if (!m) m = end;
            fwrite(at, 1, (size_t)(m - at), f);
            if (m == end) break;
            const char *close = memmem(m, (size_t)(end - m), "@*/", 3);
            size_t name_n = close ? (size_t)(close - m - 3) : 0;
            if (name_n == 8 && !memcmp(m + 3, "THREE_JS", 8)) fwrite(sc_asset_three_js, 1, sc_asset_three_js_len, f);
            else if (name_n == 8 && !memcmp(m + 3, "ORBIT_JS", 8)) fwrite(sc_asset_orbit_js, 1, sc_asset_orbit_js_len, f);
            else if (name_n == 4 && !memcmp(m + 3, "META", 4)) write_meta(f, a, n, npts, ghost, lo, hi, off, raw, o, fig, title, times);
            else if (name_n == 4 && !memcmp(m + 3, "DATA", 4)) write_base64(f, z, zn);
            else fwrite(m, 1, close ? name_n + 6 : (size_t)(end - m), f); /* a comment of the page's own */
            at = close ? close + 3 : end;
        }
        long size = ftell(f);
        rc = sc_file_commit(f, tmp, path, err);
        if (!rc && bytes) *bytes = (size_t)size;
    }
    free(z);
    free(sc);
    sc_anim_pose_free(&p);
    return rc;
}

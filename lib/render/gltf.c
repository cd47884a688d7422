/* glTF 2.0 binary writer: the one owner of the format (render/gltf.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/cleanup.h"
#include "io/paths.h"
#include "render/gltf.h"

/* little-endian, whatever the host */
static void le32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
}

static void lef(unsigned char *b, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    le32(b, u);
}

/* a JSON string of s followed by suffix */
static void json_str(FILE *f, const char *s, const char *suffix)
{
    fputc('"', f);
    for (const char *c = s; *c; c++) {
        unsigned char u = (unsigned char)*c;
        if (u == '"' || u == '\\') fprintf(f, "\\%c", u);
        else if (u < 0x20) fprintf(f, "\\u%04x", u);
        else fputc(u, f);
    }
    fprintf(f, "%s\"", suffix);
}

/* a value of a failed simulation's last frames: the previous frame's */
static float keep_finite(double v, float prev) { return isfinite(v) ? (float)v : prev; }

typedef struct views {
    FILE *js; /* bufferViews */
    FILE *acc;
    int nviews;
    size_t off;
} views;

/* A bufferView of len bytes at the current offset and an accessor on it; min/max (count dims
   values) when given. Returns the accessor's index. */
static int accessor(views *v, size_t len, int ctype, int count, const char *type, int target, const float *mn, const float *mx, int dims)
{
    fprintf(v->js, "%s{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu%s}", v->nviews ? "," : "", v->off, len,
            target == 34962       ? ",\"target\":34962"
                : target == 34963 ? ",\"target\":34963"
                                  : "");
    fprintf(v->acc, "%s{\"bufferView\":%d,\"componentType\":%d,\"count\":%d,\"type\":\"%s\"", v->nviews ? "," : "", v->nviews, ctype, count, type);
    if (mn) {
        fputs(",\"min\":[", v->acc);
        for (int d = 0; d < dims; d++) fprintf(v->acc, "%s%.9g", d ? "," : "", mn[d]);
        fputs("],\"max\":[", v->acc);
        for (int d = 0; d < dims; d++) fprintf(v->acc, "%s%.9g", d ? "," : "", mx[d]);
        fputs("]", v->acc);
    }
    fputs("}", v->acc);
    v->off += len;
    return v->nviews++;
}

static void vec_bounds(const unsigned char *p, int count, float mn[3], float mx[3])
{
    for (int d = 0; d < 3; d++) mn[d] = count ? INFINITY : 0, mx[d] = count ? -INFINITY : 0;
    for (int i = 0; i < count; i++)
        for (int d = 0; d < 3; d++) {
            float f;
            uint32_t u = (uint32_t)p[12 * i + 4 * d] | (uint32_t)p[12 * i + 4 * d + 1] << 8 | (uint32_t)p[12 * i + 4 * d + 2] << 16 |
                (uint32_t)p[12 * i + 4 * d + 3] << 24;
            memcpy(&f, &u, 4);
            mn[d] = fminf(mn[d], f);
            mx[d] = fmaxf(mx[d], f);
        }
}

/* The bone's pose relative to its parent's (the root: its world pose); frames are world-aligned
   at rest with the origin at the joint. */
static sc_xform local_pose(const sc_anim_pose *p, const sc_anim *a, int b)
{
    int par = a->parent[b];
    if (par < 0) return p->bone[b];
    return sc_xf_mul(sc_xf_inverse(p->bone[par]), p->bone[b]);
}

int sc_export_gltf(sc_anim *a, const double *times, int n, const char *path, sc_err *err)
{
    if (n < 1) return sc_fail(err, SC_EINPUT, "export: no frames");
    int nsv = a->nsv, nsf = a->nsf, nb = a->nbones;
    /* the binary chunk: indices, base positions, n targets, times, weights, per bone T and R */
    size_t nbin = (size_t)nsf * 12 + (size_t)nsv * 12 * (size_t)(n + 1) + (size_t)n * 4 + (size_t)n * n * 4 + (size_t)nb * n * 28;
    unsigned char *bin = calloc(nbin + 4, 1);
    char *jsbuf = NULL, *vbuf = NULL, *abuf = NULL;
    size_t jsn = 0, vn = 0, an = 0;
    FILE *js = open_memstream(&jsbuf, &jsn);
    views v = {open_memstream(&vbuf, &vn), open_memstream(&abuf, &an), 0, 0};
    sc_anim_pose p = {0};
    int rc = SC_OK;
    float *prev = malloc(((size_t)nsv * 6 + (size_t)nb * 7 + 1) * sizeof(float)), *frame0 = prev ? prev + 3 * nsv + 7 * nb : NULL;
    if (!bin || !js || !v.js || !v.acc || !prev) rc = sc_fail(err, SC_EIO, "out of memory");
    if (!rc) rc = sc_anim_pose_alloc(a, &p, err);
    unsigned char *idx = bin, *base = idx + (size_t)nsf * 12, *targ = base + (size_t)nsv * 12, *tim = targ + (size_t)nsv * 12 * n;
    unsigned char *wts = tim + (size_t)n * 4, *bones = wts + (size_t)n * n * 4;
    for (int i = 0; i < 3 * nsf && !rc; i++) le32(idx + 4 * i, (uint32_t)a->faces[i]);
    for (int k = 0; k < n && !rc; k++) {
        if ((rc = sc_anim_sample(a, times[k], &p, err))) break;
        for (int i = 0; i < 3 * nsv; i++) {
            float f = keep_finite(p.surf[i], k ? prev[i] : 0);
            if (!k) {
                lef(base + 4 * i, f);
                frame0[i] = f;
            }
            lef(targ + ((size_t)k * nsv * 3 + i) * 4, f - frame0[i]);
            prev[i] = f;
        }
        lef(tim + 4 * k, (float)(times[k] - times[0]));
        lef(wts + ((size_t)k * n + k) * 4, 1.0f);
        for (int b = 0; b < nb; b++) {
            sc_xform l = local_pose(&p, a, b);
            double tr[7] = {l.p.x, l.p.y, l.p.z, l.q.x, l.q.y, l.q.z, l.q.w}; /* glTF quaternions: x, y, z, w */
            float *pv = prev + 3 * nsv + 7 * b;
            for (int c = 0; c < 7; c++) {
                float f = keep_finite(tr[c], k ? pv[c] : (c == 6));
                lef(bones + ((size_t)b * n * 28) + (c < 3 ? (size_t)k * 12 + 4 * c : (size_t)n * 12 + (size_t)k * 16 + 4 * (c - 3)), f);
                pv[c] = f;
            }
        }
    }
    if (!rc) {
        float mn[3], mx[3];
        int ai = accessor(&v, (size_t)nsf * 12, 5125, 3 * nsf, "SCALAR", 34963, NULL, NULL, 0);
        vec_bounds(base, nsv, mn, mx);
        int apos = accessor(&v, (size_t)nsv * 12, 5126, nsv, "VEC3", 34962, mn, mx, 3);
        int atarg0 = v.nviews;
        for (int k = 0; k < n; k++) {
            vec_bounds(targ + (size_t)k * nsv * 12, nsv, mn, mx);
            accessor(&v, (size_t)nsv * 12, 5126, nsv, "VEC3", 34962, mn, mx, 3);
        }
        float t0 = 0, t1 = (float)(times[n - 1] - times[0]);
        int atime = accessor(&v, (size_t)n * 4, 5126, n, "SCALAR", 0, &t0, &t1, 1);
        int awts = accessor(&v, (size_t)n * n * 4, 5126, n * n, "SCALAR", 0, NULL, NULL, 0);
        int abone0 = v.nviews;
        for (int b = 0; b < nb; b++) {
            accessor(&v, (size_t)n * 12, 5126, n, "VEC3", 0, NULL, NULL, 0);
            accessor(&v, (size_t)n * 16, 5126, n, "VEC4", 0, NULL, NULL, 0);
        }
        fflush(v.js);
        fflush(v.acc);
        /* nodes: 0 the surface, 1.. the bones (node 1 + b), then a tip node per leaf bone */
        fprintf(js, "{\"asset\":{\"version\":\"2.0\",\"generator\":\"softcon render %s\"},\"scene\":0,\"scenes\":[{\"nodes\":[0", SC_VERSION);
        for (int b = 0; b < nb; b++)
            if (a->parent[b] < 0) fprintf(js, ",%d", 1 + b);
        fputs("]}],\"nodes\":[{\"name\":\"surface\",\"mesh\":0}", js);
        int ntip = 0;
        for (int b = 0; b < nb; b++) {
            const double *j = a->joint_rest + 3 * b, *pj = a->parent[b] < 0 ? NULL : a->joint_rest + 3 * a->parent[b];
            fputs(",{\"name\":", js);
            json_str(js, a->bone_name[b], "");
            fprintf(js, ",\"translation\":[%.9g,%.9g,%.9g]", pj ? j[0] - pj[0] : j[0], pj ? j[1] - pj[1] : j[1], pj ? j[2] - pj[2] : j[2]);
            int first = 1, leaf = 1;
            for (int c = b + 1; c < nb; c++)
                if (a->parent[c] == b) {
                    fprintf(js, "%s%d", first ? ",\"children\":[" : ",", 1 + c);
                    first = leaf = 0;
                }
            if (leaf) fprintf(js, "%s%d", first ? ",\"children\":[" : ",", 1 + nb + ntip++), first = 0;
            fputs(first ? "}" : "]}", js);
        }
        for (int b = 0; b < nb; b++) {
            int leaf = 1;
            for (int c = b + 1; c < nb; c++) leaf &= a->parent[c] != b;
            if (!leaf) continue;
            const double *j = a->joint_rest + 3 * b, *t = a->tip_rest + 3 * b;
            fputs(",{\"name\":", js);
            json_str(js, a->bone_name[b], "_end");
            fprintf(js, ",\"translation\":[%.9g,%.9g,%.9g]}", t[0] - j[0], t[1] - j[1], t[2] - j[2]);
        }
        fprintf(js,
                "],\"meshes\":[{\"name\":\"surface\",\"primitives\":[{\"attributes\":{\"POSITION\":%d},\"indices\":%d,\"mode\":4,\"material\":0,"
                "\"targets\":[",
                apos, ai);
        for (int k = 0; k < n; k++) fprintf(js, "%s{\"POSITION\":%d}", k ? "," : "", atarg0 + k);
        fputs("]}],\"weights\":[", js);
        for (int k = 0; k < n; k++) fputs(k ? ",0" : "0", js);
        fputs("],\"extras\":{\"targetNames\":[", js);
        for (int k = 0; k < n; k++) fprintf(js, "%s\"frame_%05d\"", k ? "," : "", k);
        fputs("]}}],\"materials\":[{\"name\":\"body\",\"doubleSided\":false,\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.85,0.82,0.75,1],"
              "\"metallicFactor\":0,\"roughnessFactor\":0.7}}],",
              js);
        fprintf(js, "\"animations\":[{\"name\":\"simulation\",\"samplers\":[{\"input\":%d,\"output\":%d,\"interpolation\":\"LINEAR\"}", atime, awts);
        for (int b = 0; b < nb; b++)
            fprintf(js, ",{\"input\":%d,\"output\":%d,\"interpolation\":\"LINEAR\"},{\"input\":%d,\"output\":%d,\"interpolation\":\"LINEAR\"}", atime,
                    abone0 + 2 * b, atime, abone0 + 2 * b + 1);
        fputs("],\"channels\":[{\"sampler\":0,\"target\":{\"node\":0,\"path\":\"weights\"}}", js);
        for (int b = 0; b < nb; b++)
            fprintf(
                js,
                ",{\"sampler\":%d,\"target\":{\"node\":%d,\"path\":\"translation\"}},{\"sampler\":%d,\"target\":{\"node\":%d,\"path\":\"rotation\"}}",
                1 + 2 * b, 1 + b, 2 + 2 * b, 1 + b);
        fprintf(js, "]}],\"buffers\":[{\"byteLength\":%zu}],\"bufferViews\":[%s],\"accessors\":[%s]}", nbin, vbuf, abuf);
        fflush(js);
    }
    if (!rc && (ferror(js) || !jsbuf)) rc = sc_fail(err, SC_EIO, "out of memory");
    char tmp[4200];
    FILE *f = rc ? NULL : sc_file_open_tmp(path, "wb", tmp, sizeof tmp, err);
    if (!rc && !f) rc = err->code;
    if (!rc) {
        size_t jpad = (jsn + 3) & ~(size_t)3, bpad = (nbin + 3) & ~(size_t)3;
        unsigned char head[20];
        memcpy(head, "glTF", 4);
        le32(head + 4, 2);
        le32(head + 8, (uint32_t)(12 + 8 + jpad + 8 + bpad));
        le32(head + 12, (uint32_t)jpad);
        memcpy(head + 16, "JSON", 4);
        fwrite(head, 1, 20, f);
        fwrite(jsbuf, 1, jsn, f);
        fwrite("    ", 1, jpad - jsn, f); /* JSON chunks pad with spaces */
        le32(head, (uint32_t)bpad);
        memcpy(head + 4, "BIN\0", 4);
        fwrite(head, 1, 8, f);
        fwrite(bin, 1, bpad, f); /* calloc'd: zero padding */
        rc = sc_file_commit(f, tmp, path, err);
    }
    if (js) fclose(js);
    if (v.js) fclose(v.js);
    if (v.acc) fclose(v.acc);
    free(jsbuf);
    free(vbuf);
    free(abuf);
    free(bin);
    free(prev);
    sc_anim_pose_free(&p);
    return rc;
}

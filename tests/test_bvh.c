#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/mathx.h"
#include "core/rng.h"
#include "core/status.h"
#include "io/bvh.h"
#include "test.h"

#define CMU_UNIT 0.056444 /* m per CMU unit, SOURCES.md */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[n] = 0;
    *len = (size_t)n;
    return b;
}

/* Copy of s with the first occurrence of old replaced by new (caller frees). */
static char *subst(const char *s, const char *old, const char *new_)
{
    const char *at = strstr(s, old);
    size_t n = strlen(s), lo = strlen(old), ln = strlen(new_);
    char *r = malloc(n - (at ? lo : 0) + ln + 1);
    if (!at) {
        memcpy(r, s, n + 1);
        return r;
    }
    size_t pre = (size_t)(at - s);
    memcpy(r, s, pre);
    memcpy(r + pre, new_, ln);
    memcpy(r + pre + ln, at + lo, n - pre - lo + 1);
    return r;
}

/* 21 lines; frames on lines 19-21 (frames 0-2). Knee's Xrotation is channel 8. */
static const char *k_small = "HIERARCHY\n"                                                                /* 1 */
                             "ROOT Hips\n"                                                                /* 2 */
                             "{\n"                                                                        /* 3 */
                             "\tOFFSET 0 0 0\n"                                                           /* 4 */
                             "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\n" /* 5 */
                             "\tJOINT Knee\n"                                                             /* 6 */
                             "\t{\n"                                                                      /* 7 */
                             "\t\tOFFSET 0 -10 0\n"                                                       /* 8 */
                             "\t\tCHANNELS 3 Zrotation Yrotation Xrotation\n"                             /* 9 */
                             "\t\tEnd Site\n"                                                             /* 10 */
                             "\t\t{\n"                                                                    /* 11 */
                             "\t\t\tOFFSET 0 -5 0\n"                                                      /* 12 */
                             "\t\t}\n"                                                                    /* 13 */
                             "\t}\n"                                                                      /* 14 */
                             "}\n"                                                                        /* 15 */
                             "MOTION\n"                                                                   /* 16 */
                             "Frames: 3\n"                                                                /* 17 */
                             "Frame Time: 0.01\n"                                                         /* 18 */
                             "0 1 2 0 0 0 0 0 0\n"                                                        /* 19 */
                             "0 1 2 10 20 30 40 50 60\n"                                                  /* 20 */
                             "0 1 2 -10 -20 -30 -40 -50 -60\n";                                           /* 21 */

TEST(bvh_small_parses)
{
    sc_bvh b;
    sc_err err = {0};
    ENSURE_OK(sc_bvh_parse(k_small, strlen(k_small), "x.bvh", &b, &err), &err);
    ENSURE(b.njoints == 3 && b.nchannels == 9 && b.nframes == 3);
    ENSURE_NEAR(b.frame_time, 0.01, 0);
    ENSURE(sc_bvh_find(&b, "Knee") == 1 && sc_bvh_find(&b, "Knee_End") == 2 && sc_bvh_find(&b, "Foo") == -1);
    ENSURE(b.joints[2].end_site && b.joints[2].parent == 1 && b.joints[1].parent == 0 && b.joints[0].parent == -1);
    ENSURE(b.joints[1].channel_offset == 6 && b.joints[1].channel[0] == SC_BVH_ZROT);
    ENSURE_NEAR(b.frames[2 * 9 + 8], -60, 0);
    ENSURE_NEAR(b.joints[2].offset.y, -5, 0);
    sc_bvh_free(&b);
    ENSURE(b.joints == NULL && b.frames == NULL);
}

static const struct {
    const char *name, *file;
    int frames;
    double duration;
} k_clips[] = {
    {"walk", "cmu_02_01_walk.bvh", 344, 2.858},
    {"run", "cmu_02_03_run.bvh", 174, 1.442},
    {"jump", "cmu_02_04_jump.bvh", 484, 4.025},
    {"jumpkick", "cmu_90_05_jumpkick.bvh", 514, 4.275},
    {"roundhouse", "cmu_135_07_roundhousekick.bvh", 1473, 12.267},
};

TEST(bvh_cmu_clips_counts)
{
    for (size_t c = 0; c < sizeof k_clips / sizeof *k_clips; c++) {
        sc_bvh b;
        sc_err err = {0};
        ENSURE_OK(sc_bvh_load(sc_test_mocap(k_clips[c].file), &b, &err), &err);
        int nj = 0, nend = 0;
        for (int j = 0; j < b.njoints; j++) {
            if (b.joints[j].end_site) {
                nend++;
                ENSURE(b.joints[j].nchannels == 0);
            } else {
                nj++;
                /* SOURCES.md: root XYZ position + ZYX rotation, others ZYX rotation */
                int expect0 = j == 0 ? SC_BVH_XPOS : SC_BVH_ZROT;
                ENSURE(b.joints[j].nchannels == (j == 0 ? 6 : 3) && b.joints[j].channel[0] == expect0);
                ENSURE(b.joints[j].channel[b.joints[j].nchannels - 1] == SC_BVH_XROT);
            }
        }
        ENSURE_MSG(nj == 31 && nend == 7, "%s: %d joints, %d End Sites", k_clips[c].file, nj, nend);
        ENSURE(b.nchannels == 96);
        /* "Frames: N" counts every data line, the T-pose frame 0 included. */
        ENSURE_MSG(b.nframes == k_clips[c].frames, "%s: %d frames", k_clips[c].file, b.nframes);
        ENSURE_NEAR(b.frame_time, 1.0 / 120, 1e-6);
        ENSURE_NEAR((b.nframes - 1) * b.frame_time, k_clips[c].duration, 2e-3);
        ENSURE(strcmp(b.joints[0].name, "Hips") == 0 && b.joints[0].parent == -1);
        ENSURE(sc_bvh_find(&b, "LeftToeBase_End") >= 0 && sc_bvh_find(&b, "Head_End") >= 0);
        sc_test_report("%s: %d joints + %d End Sites, %d channels, Frames: %d (frame 0 = T-pose included), "
                       "frame time %.7f s",
                       k_clips[c].file, nj, nend, b.nchannels, b.nframes, b.frame_time);
        sc_bvh_free(&b);
    }
    /* spot values from the walk file: first line of frame 1 */
    sc_bvh b;
    sc_err err = {0};
    ENSURE_OK(sc_bvh_load(sc_test_mocap("cmu_02_01_walk.bvh"), &b, &err), &err);
    ENSURE_NEAR(b.frames[0], 10.4194, 0);
    ENSURE_NEAR(b.frames[96 + 3], -3.0091, 0);
    ENSURE_NEAR(b.frames[96 + 9], -18.0446, 0);
    ENSURE_NEAR(b.frames[9], -21, 0);
    sc_bvh_free(&b);
}

static int bvh_equal(const sc_bvh *a, const sc_bvh *b, double rel)
{
    if (a->njoints != b->njoints || a->nchannels != b->nchannels || a->nframes != b->nframes) return 0;
    if (a->frame_time != b->frame_time) return 0;
    for (int j = 0; j < a->njoints; j++) {
        const sc_bvh_joint *x = &a->joints[j], *y = &b->joints[j];
        if (strcmp(x->name, y->name) || x->parent != y->parent || x->end_site != y->end_site || x->nchannels != y->nchannels ||
            x->channel_offset != y->channel_offset)
            return 0;
        if (sc_v3_dist(x->offset, y->offset) > rel * (1 + sc_v3_norm(x->offset))) return 0;
        for (int k = 0; k < x->nchannels; k++)
            if (x->channel[k] != y->channel[k]) return 0;
    }
    for (size_t k = 0; k < (size_t)a->nframes * a->nchannels; k++)
        if (fabs(a->frames[k] - b->frames[k]) > rel * fmax(fabs(a->frames[k]), 1e-300)) return 0;
    return 1;
}

TEST(bvh_crlf_matches_lf)
{
    const char *path = sc_test_mocap("cmu_90_05_jumpkick.bvh");
    size_t n;
    char *raw = slurp(path, &n);
    ENSURE(raw);
    ENSURE(strstr(raw, "\r\n") != NULL); /* the clip really is CRLF */
    char *lf = malloc(n + 1);
    size_t m = 0, ncr = 0;
    for (size_t i = 0; i < n; i++) {
        if (raw[i] == '\r') ncr++;
        else lf[m++] = raw[i];
    }
    free(raw);
    sc_bvh a, b;
    sc_err err = {0};
    ENSURE_OK(sc_bvh_load(path, &a, &err), &err);
    int rc = sc_bvh_parse(lf, m, "lf.bvh", &b, &err);
    free(lf);
    ENSURE_OK(rc, &err);
    ENSURE(bvh_equal(&a, &b, 0));
    sc_test_report("jumpkick: %zu CRs stripped; CRLF and LF versions identical (%d frames x %d channels)", ncr, a.nframes, a.nchannels);
    sc_bvh_free(&a);
    sc_bvh_free(&b);
}

TEST(bvh_rest_pose_is_accumulated_offsets)
{
    sc_bvh b;
    sc_err err = {0};
    ENSURE_OK(sc_bvh_load(sc_test_mocap("cmu_02_01_walk.bvh"), &b, &err), &err);
    sc_xform *w = malloc(sizeof *w * (size_t)b.njoints);
    sc_bvh_world(&b, -1, w);
    double maxd = 0, maxang = 0;
    for (int j = 0; j < b.njoints; j++) {
        sc_vec3 acc = sc_v3(0, 0, 0);
        for (int a = j; a >= 0; a = b.joints[a].parent) acc = sc_v3_add(acc, b.joints[a].offset);
        maxd = fmax(maxd, sc_v3_dist(acc, w[j].p));
        maxang = fmax(maxang, sc_q_angle_between(w[j].q, sc_q_identity()));
    }
    ENSURE(maxd < 1e-12);
    ENSURE(maxang < 1e-12);
    /* rest skeleton proportions (CMU subject 02): hips about a leg length above the toe tips,
     * the head End Site (CMU's head bone tip) roughly half a metre above the hips */
    int head = sc_bvh_find(&b, "Head_End"), toe = sc_bvh_find(&b, "LeftToeBase_End");
    double leg = (w[0].p.y - w[toe].p.y) * CMU_UNIT, up = (w[head].p.y - w[0].p.y) * CMU_UNIT;
    sc_test_report("walk rest pose: max |FK - sum of offsets| %.2g; hips %.3f m above the toe tip, head end %.3f m "
                   "above the hips",
                   maxd, leg, up);
    ENSURE(leg > 0.85 && leg < 1.0);
    ENSURE(up > 0.4 && up < 0.6);
    free(w);
    sc_bvh_free(&b);
}

TEST(bvh_walk_frame1_heights)
{
    sc_bvh b;
    sc_err err = {0};
    ENSURE_OK(sc_bvh_load(sc_test_mocap("cmu_02_01_walk.bvh"), &b, &err), &err);
    sc_xform *w = malloc(sizeof *w * (size_t)b.njoints);
    int ltoe = sc_bvh_find(&b, "LeftToeBase_End"), rtoe = sc_bvh_find(&b, "RightToeBase_End");
    int lfoot = sc_bvh_find(&b, "LeftFoot"), rfoot = sc_bvh_find(&b, "RightFoot");
    ENSURE(ltoe >= 0 && rtoe >= 0 && lfoot >= 0 && rfoot >= 0);
    sc_bvh_world(&b, 1, w);
    double pelvis = w[0].p.y * CMU_UNIT;
    double toe = fmin(w[ltoe].p.y, w[rtoe].p.y) * CMU_UNIT;
    double ankle = fmin(w[lfoot].p.y, w[rfoot].p.y) * CMU_UNIT;
    /* the root position is exactly the position channels (zero OFFSET) */
    ENSURE_NEAR(w[0].p.y, b.frames[96 + 1], 1e-12);
    /* over the capture (frames 1..), the lowest toe per frame stays near the floor */
    double lo = 1e9, hi = -1e9, plo = 1e9, phi = -1e9;
    for (int f = 1; f < b.nframes; f++) {
        sc_bvh_world(&b, f, w);
        double t = fmin(w[ltoe].p.y, w[rtoe].p.y) * CMU_UNIT;
        lo = fmin(lo, t);
        hi = fmax(hi, t);
        plo = fmin(plo, w[0].p.y * CMU_UNIT);
        phi = fmax(phi, w[0].p.y * CMU_UNIT);
    }
    sc_test_report("walk frame 1: pelvis y %.4f m, lowest toe tip y %.4f m, lowest ankle y %.4f m; frames 1-%d: "
                   "pelvis y in [%.4f, %.4f] m, lowest toe tip y in [%.4f, %.4f] m",
                   pelvis, toe, ankle, b.nframes - 1, plo, phi, lo, hi);
    ENSURE(pelvis > 0.93 && pelvis < 1.0);
    ENSURE(fabs(toe) < 0.06);
    ENSURE(ankle > 0.03 && ankle < 0.15);
    ENSURE(plo > 0.85 && phi < 1.05);
    ENSURE(lo > -0.08 && hi < 0.10);
    free(w);
    sc_bvh_free(&b);
}

static sc_mat3 rot_axis(int axis, double deg)
{
    double a = deg * SC_PI / 180, c = cos(a), s = sin(a);
    sc_mat3 r = sc_m3_identity();
    int i = (axis + 1) % 3, k = (axis + 2) % 3; /* right-handed: x->(y,z), y->(z,x), z->(x,y) */
    r.m[i][i] = c;
    r.m[i][k] = -s;
    r.m[k][i] = s;
    r.m[k][k] = c;
    return r;
}

TEST(bvh_channel_order_and_fk)
{
    /* root: 6 channels with rotations first in X Y Z order; child: 3 rotations X Y Z */
    const char *txt = "HIERARCHY\r\nROOT R\r\n{\r\n  OFFSET 1 2 3\r\n"
                      "  CHANNELS 6 Xrotation Yrotation Zrotation Xposition Yposition Zposition\r\n"
                      "  JOINT C\r\n  {\r\n    OFFSET 0 10 0\r\n    CHANNELS 3 Xrotation Yrotation Zrotation\r\n"
                      "    End Site\r\n    {\r\n      OFFSET 4 0 0\r\n    }\r\n  }\r\n}\r\n"
                      "MOTION\r\nFrames: 1\r\nFrame Time: 0.5\r\n30 -20 45 0.5 -0.25 2   10 20 -70\r\n";
    sc_bvh b;
    sc_err err = {0};
    ENSURE_OK(sc_bvh_parse(txt, strlen(txt), "xyz.bvh", &b, &err), &err);
    ENSURE(b.nchannels == 9 && b.joints[0].channel[0] == SC_BVH_XROT && b.joints[0].channel[3] == SC_BVH_XPOS);
    /* R = Rx(30) Ry(-20) Rz(45), from explicit matrices */
    sc_mat3 r0 = sc_m3_mul(rot_axis(0, 30), sc_m3_mul(rot_axis(1, -20), rot_axis(2, 45)));
    sc_mat3 r1 = sc_m3_mul(rot_axis(0, 10), sc_m3_mul(rot_axis(1, 20), rot_axis(2, -70)));
    sc_xform l0 = sc_bvh_local(&b, 0, 0);
    double e0 = sc_q_angle_between(l0.q, sc_q_from_m3(r0));
    ENSURE(e0 < 1e-12);
    /* hand-computed quaternion components for the root (w, x, y, z) */
    double a = 15 * SC_PI / 180, bb = -10 * SC_PI / 180, c = 22.5 * SC_PI / 180;
    sc_quat qx = {cos(a), sin(a), 0, 0}, qy = {cos(bb), 0, sin(bb), 0}, qz = {cos(c), 0, 0, sin(c)};
    sc_quat qe = sc_q_mul(qx, sc_q_mul(qy, qz));
    ENSURE_NEAR(fabs(sc_q_mul(sc_q_conj(qe), l0.q).w), 1, 1e-14);
    ENSURE(sc_q_angle_between(l0.q, sc_q_from_euler_deg("XYZ", (double[]){30, -20, 45})) < 1e-12);
    ENSURE(sc_q_angle_between(l0.q, sc_q_from_euler_deg("ZYX", (double[]){45, -20, 30})) > 0.1); /* order matters */
    /* translation = offset + position channels */
    ENSURE(sc_v3_dist(l0.p, sc_v3(1.5, 1.75, 5)) < 1e-15);
    sc_xform w[3];
    sc_bvh_world(&b, 0, w);
    sc_vec3 pc = sc_v3_add(sc_v3(1.5, 1.75, 5), sc_m3_mulv(r0, sc_v3(0, 10, 0)));
    sc_vec3 pe = sc_v3_add(pc, sc_m3_mulv(sc_m3_mul(r0, r1), sc_v3(4, 0, 0)));
    ENSURE(sc_v3_dist(w[1].p, pc) < 1e-12);
    ENSURE(sc_v3_dist(w[2].p, pe) < 1e-12);
    sc_test_report("XYZ order: |q - Rx Ry Rz| %.2g rad, end site FK error %.2g", e0, sc_v3_dist(w[2].p, pe));
    sc_bvh_free(&b);

    /* a root with 3 rotations only: its translation is the OFFSET */
    const char *rot_only = "HIERARCHY\nROOT A\n{\n\tOFFSET 0 5 0\n\tCHANNELS 3 Yrotation Xrotation Zrotation\n"
                           "\tEnd Site\n\t{\n\t\tOFFSET 0 0 1\n\t}\n}\nMOTION\nFrames: 2\nFrame Time: .1\n0 0 0\n90 0 0\n";
    ENSURE_OK(sc_bvh_parse(rot_only, strlen(rot_only), "r.bvh", &b, &err), &err);
    sc_bvh_world(&b, 1, w);
    ENSURE(sc_v3_dist(w[0].p, sc_v3(0, 5, 0)) < 1e-15);
    ENSURE(sc_v3_dist(w[1].p, sc_v3(1, 5, 0)) < 1e-12); /* +90 deg about y takes z to x */
    sc_bvh_free(&b);
}

static int check_error(const char *text, const char *s1, const char *s2, const char *s3)
{
    sc_bvh b;
    sc_err err = {0};
    int rc = sc_bvh_parse(text, strlen(text), "x.bvh", &b, &err);
    int ok = rc == SC_EINPUT && err.code == SC_EINPUT && b.joints == NULL && b.frames == NULL && strstr(err.msg, s1) &&
        (!s2 || strstr(err.msg, s2)) && (!s3 || strstr(err.msg, s3));
    if (!ok) printf("    unexpected result %d: %s\n", rc, err.msg);
    return ok;
}

#define BAD(old, new_, s1, s2, s3)                       \
    do {                                                 \
        char *t_ = subst(k_small, old, new_);            \
        int ok_ = check_error(t_, s1, s2, s3);           \
        free(t_);                                        \
        ENSURE_MSG(ok_, "case '%s' -> '%s'", old, new_); \
    } while (0)

TEST(bvh_malformed_messages)
{
    /* frames: one line each */
    BAD("0 1 2 10 20 30 40 50 60\n", "0 1 2 10 20 30 40 50\n", "x.bvh:20: frame 1 has too few values (8), expected 9", "frames counted from 0", NULL);
    BAD("0 1 2 10 20 30 40 50 60\n", "0 1 2 10 20 30 40 50 60 70\n", "x.bvh:20: frame 1 has too many values (10)", NULL, NULL);
    BAD("0 1 2 10 20 30 40 50 60\n", "0 1 2 10 20 30\n40 50 60\n", "x.bvh:20: frame 1 has too few values (6)", NULL, NULL);
    BAD("Frames: 3", "Frames: 5", "x.bvh", "truncated MOTION: expected 5 frames, found 3", NULL);
    BAD("Frames: 3", "Frames: 2", "x.bvh:21: unexpected '0' after the last frame", NULL, NULL);
    BAD("10 20 30 40 50 60", "10 20 30 40 50 nan", "x.bvh:20: frame 1, joint Knee, channel Xrotation: 'nan' is not a finite number", NULL, NULL);
    BAD("-10 -20 -30 -40 -50 -60", "-10 -20 -30 -inf -50 -60", "x.bvh:21: frame 2, joint Knee, channel Zrotation: '-inf' is not a finite number",
        NULL, NULL);
    BAD("0 1 2 0 0 0", "0 1e999 2 0 0 0", "x.bvh:19: frame 0, joint Hips, channel Yposition: '1e999' is not a finite", NULL, NULL);
    BAD("10 20 30 40", "10 2O 30 40", "x.bvh:20: frame 1, joint Hips, channel Yrotation: '2O' is not a number", NULL, NULL);
    /* hierarchy */
    BAD("\t\tOFFSET 0 -10 0", "\t\tOFFSETT 0 -10 0", "x.bvh:8: unknown keyword 'OFFSETT' in joint 'Knee'", NULL, NULL);
    BAD("ROOT Hips", "ROOTS Hips", "x.bvh:2: unknown keyword 'ROOTS'", NULL, NULL);
    BAD("\t{\n\t\tOFFSET 0 -10", "\t\tOFFSET 0 -10", "x.bvh:7: expected '{' after JOINT Knee, found 'OFFSET'", NULL, NULL);
    BAD("\t}\n}\nMOTION", "\t}\nMOTION", "x.bvh:15: 'MOTION' inside joint 'Hips': missing '}'", "line 2", NULL);
    BAD("\t\t}\n\t}\n}\n", "\t\t}\n\t}\n}\n}\n", "x.bvh:16: unknown keyword '}' (expected ROOT or MOTION)", NULL, NULL);
    BAD("End Site", "JOINT Hips", "x.bvh:10: duplicate joint name 'Hips' (first defined at line 2)", NULL, NULL);
    BAD("CHANNELS 3 Zrotation Yrotation Xrotation", "CHANNELS 3 Zrotation Yrotation",
        "x.bvh:9: CHANNELS count 3 of joint 'Knee' does not match the 2 channel names", NULL, NULL);
    BAD("CHANNELS 3 Zrotation Yrotation Xrotation", "CHANNELS 2 Zrotation Yrotation Xrotation",
        "x.bvh:9: CHANNELS count 2 of joint 'Knee' does not match", NULL, NULL);
    BAD("CHANNELS 3 Zrotation Yrotation Xrotation", "CHANNELS 3 Zrotation Wrotation Xrotation", "x.bvh:9: unknown channel 'Wrotation'", NULL, NULL);
    BAD("CHANNELS 3 Zrotation Yrotation Xrotation", "CHANNELS 3 Zrotation Zrotation Xrotation", "x.bvh:9: channel Zrotation repeated", NULL, NULL);
    BAD("CHANNELS 3 Zrotation Yrotation Xrotation", "CHANNELS three Zrotation Yrotation Xrotation", "x.bvh:9: CHANNELS count 'three'", NULL, NULL);
    BAD("OFFSET 0 -10 0", "OFFSET 0 -10", "x.bvh:8: OFFSET of 'Knee' needs 3 numbers, found 2", NULL, NULL);
    BAD("OFFSET 0 -10 0", "OFFSET 0 x 0", "x.bvh:8: OFFSET of 'Knee': 'x' is not a number", NULL, NULL);
    BAD("\t\tOFFSET 0 -10 0\n", "", "x.bvh:13: joint 'Knee' (line 6) has no OFFSET", NULL, NULL);
    BAD("\t\t\tOFFSET 0 -5 0\n", "\t\t\tOFFSET 0 -5 0\n\t\t\tCHANNELS 1 Xrotation\n", "x.bvh:13: an End Site cannot have CHANNELS", NULL, NULL);
    BAD("Frame Time: 0.01", "Frame Time: 0", "x.bvh:18: Frame Time '0' must be a positive number", NULL, NULL);
    BAD("Frame Time: 0.01", "Frame Time: -0.01", "x.bvh:18: Frame Time '-0.01' must be a positive number", NULL, NULL);
    BAD("Frame Time: 0.01", "Frame Tme: 0.01", "x.bvh:18: expected 'Frame Time:', found 'Tme:'", NULL, NULL);
    BAD("Frames: 3", "Frames: -3", "x.bvh:17: frame count '-3'", NULL, NULL);
    BAD("HIERARCHY", "HIERARCHIE", "x.bvh:1: expected HIERARCHY, found 'HIERARCHIE'", NULL, NULL);
    ENSURE(check_error("", "x.bvh:1: empty file", NULL, NULL));
    ENSURE(check_error("HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n",
                       "x.bvh:5: unexpected end of file: missing '}' for "
                       "joint 'A' opened at line 2",
                       NULL, NULL));
    ENSURE(check_error("HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\n}\nMOTION\nFrames: 0\nFrame Time: 1\n", "x.bvh:6: the HIERARCHY declares no channels",
                       NULL, NULL));
    /* the same on a real clip: a 'nan' as the 10th value of frame 3 (file line 191) */
    size_t n;
    char *raw = slurp(sc_test_mocap("cmu_02_01_walk.bvh"), &n);
    ENSURE(raw);
    char *p = raw;
    for (int l = 1; l < 191; l++) p = strchr(p, '\n') + 1;
    for (int k = 0; k < 9; k++) p = strchr(p, ' ') + 1;
    char *q = strchr(p, ' ');
    size_t vl = (size_t)(q - p);
    ENSURE(vl >= 3);
    memcpy(p, "nan", 3);
    memset(p + 3, ' ', vl - 3);
    int ok = check_error(raw, "x.bvh:191: frame 3, joint LeftUpLeg, channel Zrotation: 'nan' is not a finite number", NULL, NULL);
    free(raw);
    ENSURE(ok);
    /* unreadable file */
    sc_bvh b;
    sc_err err = {0};
    int rc = sc_bvh_load(sc_test_tmp("does-not-exist.bvh"), &b, &err);
    ENSURE(rc == SC_EIO && strstr(err.msg, "does-not-exist.bvh") && strstr(err.msg, "No such file"));
    /* alternative spellings that are accepted: "Frames :" and an empty frame count */
    char *t = subst(k_small, "Frames: 3\nFrame Time: 0.01\n", "Frames : 3\n\nFrame  Time :\t0.01\n\n");
    rc = sc_bvh_parse(t, strlen(t), "alt.bvh", &b, &err);
    free(t);
    ENSURE_OK(rc, &err);
    ENSURE(b.nframes == 3);
    sc_bvh_free(&b);
}

TEST(bvh_write_roundtrip)
{
    sc_bvh a, b;
    sc_err err = {0};
    ENSURE_OK(sc_bvh_load(sc_test_mocap("cmu_02_01_walk.bvh"), &a, &err), &err);
    const char *out = sc_test_tmp("walk_rt.bvh");
    ENSURE_OK(sc_bvh_write(out, &a, &err), &err);
    ENSURE(!sc_test_temporary_left(sc_test_tmp("walk_rt.bvh")));
    ENSURE_OK(sc_bvh_load(out, &b, &err), &err);
    ENSURE(bvh_equal(&a, &b, 0)); /* file decimals read back bit for bit */
    sc_bvh_free(&b);
    /* arbitrary doubles (full 17-digit mantissas) survive too */
    sc_rng r;
    sc_rng_init(&r, 7, 0, 0);
    for (size_t k = 0; k < (size_t)a.nframes * a.nchannels; k++) a.frames[k] = 360 * (2 * sc_rng_uniform(&r) - 1) / 7;
    a.joints[3].offset = sc_v3(SC_PI, -1e-7 / 3, 2e5 / 3);
    a.frame_time = 1.0 / 120;
    ENSURE_OK(sc_bvh_write(out, &a, &err), &err);
    ENSURE_OK(sc_bvh_load(out, &b, &err), &err);
    double maxrel = 0;
    for (size_t k = 0; k < (size_t)a.nframes * a.nchannels; k++) maxrel = fmax(maxrel, fabs(a.frames[k] - b.frames[k]) / fabs(a.frames[k]));
    ENSURE(bvh_equal(&a, &b, 1e-9));
    ENSURE(maxrel == 0);
    ENSURE(b.frame_time == 1.0 / 120);
    sc_test_report("walk write/read: max relative channel error %.3g (random values), names/offsets/channels equal", maxrel);
    sc_bvh_free(&b);
    /* an inconsistent structure is refused, and nothing is written */
    a.joints[5].channel_offset++;
    ENSURE(sc_bvh_write(sc_test_tmp("bad.bvh"), &a, &err) == SC_EINPUT);
    ENSURE(!sc_test_file_exists(sc_test_tmp("bad.bvh")));
    sc_bvh_free(&a);
}

/* Parse every prefix in a range from an exactly sized heap copy (no NUL, so ASan sees any
 * overread); every outcome must be success or a clean SC_EINPUT naming the file. */
static int parse_prefix(const char *text, size_t len, int expect_frames, int *nok)
{
    char *buf = malloc(len ? len : 1);
    memcpy(buf, text, len);
    sc_bvh b;
    sc_err err = {0};
    int rc = sc_bvh_parse(buf, len, "cut.bvh", &b, &err);
    free(buf);
    if (rc == SC_OK) {
        int good = b.nframes == expect_frames && b.nchannels > 0;
        sc_bvh_free(&b);
        (*nok)++;
        return good;
    }
    return rc == SC_EINPUT && strncmp(err.msg, "cut.bvh", 7) == 0 && b.joints == NULL && b.frames == NULL;
}

TEST(bvh_fuzz_truncation_and_mutation)
{
    size_t n;
    char *raw = slurp(sc_test_mocap("cmu_02_01_walk.bvh"), &n);
    ENSURE(raw);
    const char *motion = strstr(raw, "MOTION");
    ENSURE(motion);
    size_t hier = (size_t)(motion - raw) + 200;
    int ncuts = 0, nok = 0;
    for (size_t len = 0; len < hier; len++, ncuts++) ENSURE_MSG(parse_prefix(raw, len, 344, &nok), "cut at %zu", len);
    for (size_t len = hier; len < n - 300; len += 1543, ncuts++) ENSURE_MSG(parse_prefix(raw, len, 344, &nok), "cut at %zu", len);
    for (size_t len = n - 300; len <= n; len++, ncuts++) ENSURE_MSG(parse_prefix(raw, len, 344, &nok), "cut at %zu", len);
    /* cuts inside the last value of the last line still give 344 frames; all others fail */
    ENSURE(nok >= 1 && nok < 12);
    int ncut_ok = nok;
    /* random byte mutations of the hierarchy plus 3 frames ("Frames: 3") */
    const char *ft = strstr(motion, "Frame Time");
    ENSURE(ft);
    const char *fr = strchr(ft, '\n') + 1, *fend = fr;
    for (int k = 0; k < 3; k++) fend = strchr(fend, '\n') + 1;
    size_t hl = (size_t)(motion - raw), fl = (size_t)(fend - fr);
    const char *mid = "MOTION\nFrames: 3\nFrame Time: .0083333\n";
    size_t base_len = hl + strlen(mid) + fl;
    char *base = malloc(base_len);
    memcpy(base, raw, hl);
    memcpy(base + hl, mid, strlen(mid));
    memcpy(base + hl + strlen(mid), fr, fl);
    ENSURE(parse_prefix(base, base_len, 3, &nok));
    static const char alphabet[] = "{}\n\r\t 0123456789.-+eE:nafiJOINTEndSiteCHANNELSOFFSETXYZrotaionps#\0\xff";
    sc_rng r;
    sc_rng_init(&r, 42, 1, 0);
    char *m = malloc(base_len);
    int nmut = 3000, mok = 0;
    for (int t = 0; t < nmut; t++) {
        memcpy(m, base, base_len);
        int edits = 1 + (int)(sc_rng_u32(&r) % 4);
        for (int e = 0; e < edits; e++) m[sc_rng_u32(&r) % base_len] = alphabet[sc_rng_u32(&r) % (sizeof alphabet - 1)];
        sc_bvh b;
        sc_err err = {0};
        int rc = sc_bvh_parse(m, base_len, "mut.bvh", &b, &err);
        ENSURE_MSG(rc == SC_OK || (rc == SC_EINPUT && strncmp(err.msg, "mut.bvh:", 8) == 0), "mutation %d: %d %s", t, rc, err.msg);
        if (rc == SC_OK) {
            mok++;
            ENSURE(b.nframes == 3);
            sc_bvh_free(&b);
        }
    }
    free(m);
    free(base);
    free(raw);
    sc_test_report("fuzz: %d truncations (%d parsed OK, inside the last value), %d random mutations (%d still valid)", ncuts, ncut_ok, nmut, mok);
}

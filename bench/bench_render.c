/* Benchmark of the software renderer on the built-in character (character.h5, ~10K surface
 * triangles) at 640 x 480, one core: drawing a frame (surface, ground, shadow, overlays) with
 * and without 2 x 2 anti-aliasing, and encoding it as PNG. The camera orbits so every frame
 * differs. Prints the median over the frames and "@ metric value unit" lines.
 * Usage: bench_render character.h5 [frames] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "render/anim.h"
#include "render/png.h"
#include "render/scene.h"
#include "../cmd/common/environment.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    sc_environment_apply(); /* the settings the tools take from the environment */
    if (argc < 2) {
        fprintf(stderr, "usage: bench_render character.h5 [frames]\n");
        return 1;
    }
    int frames = argc > 2 ? atoi(argv[2]) : 60;
    if (frames < 3) frames = 3;
    sc_err err;
    sc_anim a;
    if (sc_anim_open(argv[1], &a, &err)) {
        fprintf(stderr, "bench_render: %s\n", err.msg);
        return 2;
    }
    sc_anim_pose p;
    if (sc_anim_pose_alloc(&a, &p, &err) || sc_anim_frame(&a, 0, &p, &err)) {
        fprintf(stderr, "bench_render: %s\n", err.msg);
        return 2;
    }
    double *t_aa = malloc(sizeof(double) * frames), *t_plain = malloc(sizeof(double) * frames), *t_png = malloc(sizeof(double) * frames);
    size_t png_bytes = 0;
    for (int aa = 0; aa < 2; aa++) {
        sc_render_opts o;
        sc_render_default_opts(&o);
        o.antialias = aa;
        o.skeleton = 1;
        sc_renderer *r;
        if (sc_renderer_create(&o, &a, &r, &err)) {
            fprintf(stderr, "bench_render: %s\n", err.msg);
            return 2;
        }
        uint8_t *rgb = malloc((size_t)o.width * o.height * 3);
        for (int i = -2; i < frames; i++) { /* two warm-up frames */
            sc_camera cam;
            sc_render_camera(r, &a, 0, 360.0 * i / frames, &cam);
            double t0 = now_ms();
            sc_render_draw(r, &a, &p, &cam, "t = 0.00 s", rgb, NULL);
            double t1 = now_ms();
            if (i < 0) continue;
            (aa ? t_aa : t_plain)[i] = t1 - t0;
            if (aa) {
                uint8_t *png;
                size_t n;
                double t2 = now_ms();
                if (sc_png_encode(rgb, o.width, o.height, 6, &png, &n, &err)) return 3;
                t_png[i] = now_ms() - t2;
                png_bytes += n;
                free(png);
            }
        }
        free(rgb);
        sc_renderer_free(r);
    }
    int tris = a.nsf;
    double m_aa = median(t_aa, frames), m_plain = median(t_plain, frames), m_png = median(t_png, frames);
    printf("640 x 480, %d surface triangles, %d frames orbiting the character at rest (skeleton drawn)\n", tris, frames);
    printf("  draw with 2x2 anti-aliasing  %.2f ms (median)\n", m_aa);
    printf("  draw without anti-aliasing   %.2f ms\n", m_plain);
    printf("  PNG encode (own deflate)     %.2f ms, %.0f KB per frame\n", m_png, png_bytes / 1024.0 / frames);
    printf("@ render_ms_per_frame %.2f ms\n", m_aa);
    printf("@ render_ms_per_frame_no_aa %.2f ms\n", m_plain);
    printf("@ png_encode_ms_per_frame %.2f ms\n", m_png);
    printf("@ surface_triangles %d count\n", tris);
    free(t_aa); free(t_plain); free(t_png);
    sc_anim_pose_free(&p);
    sc_anim_close(&a);
    return 0;
}

/* render: headless pictures and exports of a simulation (sim.h5) or of a character at rest
 * (character.h5): PNG frames, a contact sheet, an MP4 through ffmpeg, XDMF for ParaView,
 * OBJ + PC2 for Blender, BVH; an interactive HTML viewer and binary glTF (--html, --gltf). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/cli.h"
#include <signal.h>
#include "core/cleanup.h"
#include "core/log.h"
#include "io/config.h"
#include "settings/render.h"
#include "render/anim.h"
#include "render/gltf.h"
#include "render/html.h"
#include "render/output.h"

static const char *usage = "[-c CONFIG.yaml] -o OUTDIR [--camera side|front|orbit] [--size WxH] [--fps N] [--skeleton]\n"
                           "       [--reference ref.h5] [--no-frames] [--no-sheet] [--no-movie] [--no-export] [--html OUT.html] [--gltf OUT.glb]\n"
                           "       sim.h5|character.h5\n"
                           "  --html FILE       one self-contained HTML file that plays the motion in a browser from disk (three.js):\n"
                           "                    orbit, zoom, play, time slider, skeleton, contacts, the reference ghost, key figures\n"
                           "  --gltf FILE       binary glTF 2.0: the surface as morph targets, the skeleton as animated nodes\n"
                           "                    (with --html or --gltf, -o is optional: without it only those files are written)\n"
                           "  --reference FILE  draw the skeleton of a reference.h5 (inverse-dynamics) as a blue ghost, at the\n"
                           "                    reference time the simulation played (so time scaling is followed); or of the\n"
                           "                    openloop.h5 the simulation replays (the reference it tracked, repeated cycles included)\n"
                           "Draws the simulation (or the character at rest) headless into OUTDIR: frame_00000.png ...,\n"
                           "contact_sheet.png, movie.mp4 (when the ffmpeg program is installed); exports NAME_frames.xdmf\n"
                           "+ NAME_frames.h5 (ParaView), NAME_surface.obj + NAME_surface.pc2 (Blender Mesh Cache) and\n"
                           "NAME_skeleton.bvh. Settings: the config's `render:` section (all optional).";

/* command-line overrides */
static const char *opt_camera, *opt_size, *opt_fps;
static const char *opt_reference, *opt_html, *opt_gltf;
static int opt_skeleton, opt_no_frames, opt_no_sheet, opt_no_movie, opt_no_export;

/* The command line wins over the config. */
static int apply_overrides(sc_render_settings *c, sc_err *err)
{
    sc_render_opts *o = &c->ro;
    if (opt_camera) {
        int k = sc_render_camera_by_name(opt_camera);
        if (k < 0) return sc_fail(err, SC_EUSAGE, "--camera expects side, front or orbit, got '%s'", opt_camera);
        o->camera = k;
    }
    if (opt_size) {
        int a, b;
        char tail;
        if (sscanf(opt_size, "%dx%d%c", &a, &b, &tail) != 2 || a < 16 || b < 16 || a > 8192 || b > 8192)
            return sc_fail(err, SC_EUSAGE, "--size expects WxH with 16..8192 pixels each, got '%s'", opt_size);
        o->width = a;
        o->height = b;
    }
    if (opt_fps) {
        char *end;
        double v = strtod(opt_fps, &end);
        if (*end || end == opt_fps || !(v >= 0 && v <= 1000)) return sc_fail(err, SC_EUSAGE, "--fps expects a number in 0..1000, got '%s'", opt_fps);
        c->fps = v;
        c->every = 0;
    }
    if (opt_skeleton) o->skeleton = 1;
    if (opt_no_frames) c->images = 0;
    if (opt_no_sheet) c->sheet = 0;
    if (opt_no_movie) c->movie = 0;
    if (opt_no_export) c->xdmf = c->pc2 = c->bvh = 0;
    return SC_OK;
}

static int extra_opt(const char *name, const char *value, int *used)
{
    *used = 2;
    if (!strcmp(name, "--camera") && value) {
        opt_camera = value;
        return 1;
    }
    if (!strcmp(name, "--size") && value) {
        opt_size = value;
        return 1;
    }
    if (!strcmp(name, "--fps") && value) {
        opt_fps = value;
        return 1;
    }
    if (!strcmp(name, "--reference") && value) {
        opt_reference = value;
        return 1;
    }
    if (!strcmp(name, "--html") && value) {
        opt_html = value;
        return 1;
    }
    if (!strcmp(name, "--gltf") && value) {
        opt_gltf = value;
        return 1;
    }
    *used = 1;
    if (!strcmp(name, "--skeleton")) return opt_skeleton = 1;
    if (!strcmp(name, "--no-frames")) return opt_no_frames = 1;
    if (!strcmp(name, "--no-sheet")) return opt_no_sheet = 1;
    if (!strcmp(name, "--no-movie")) return opt_no_movie = 1;
    if (!strcmp(name, "--no-export")) return opt_no_export = 1;
    return 0;
}

/* ---- what this run wrote: a failed or interrupted render removes it all (frames, sheet,
   exports, the folders it created), so OUTDIR holds either a complete result or nothing new */
static char **g_written;
static int g_nwritten, g_capwritten;
static char g_made_dirs[16][4096];
static int g_nmade;

static void written(const char *path)
{
    if (g_nwritten == g_capwritten) {
        int cap = g_capwritten ? 2 * g_capwritten : 64;
        char **grown = realloc(g_written, (size_t)cap * sizeof *grown);
        if (!grown) return;
        g_written = grown;
        g_capwritten = cap;
    }
    if ((g_written[g_nwritten] = strdup(path))) g_nwritten++;
}

static void remove_written(void)
{
    for (int i = g_nwritten - 1; i >= 0; i--) unlink(g_written[i]);
    for (int i = g_nmade - 1; i >= 0; i--) rmdir(g_made_dirs[i]);
    g_nwritten = g_nmade = 0;
}

static void fail(const sc_cli *cli, const sc_err *err)
{
    remove_written();
    sc_cli_die(cli, err);
}

/* Between frames and stages: an interrupted render removes what it wrote, then dies by the signal. */
static void check_stop(const char *tool)
{
    int sig = sc_cli_stop_requested();
    if (!sig) return;
    remove_written();
    sc_cleanup_run(1);
    fprintf(stderr, "%s: interrupted by signal %d; removed the files this run had written\n", tool, sig);
    signal(sig, SIG_DFL);
    raise(sig);
}

static int make_dirs(const char *dir, sc_err *err)
{
    char p[4096];
    if ((size_t)snprintf(p, sizeof p, "%s", dir) >= sizeof p) return sc_fail(err, SC_EIO, "%s: path too long", dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0777) == 0 && g_nmade < 16) snprintf(g_made_dirs[g_nmade++], sizeof g_made_dirs[0], "%s", p);
        else if (errno != EEXIST) return sc_fail(err, SC_EIO, "%s: cannot create: %s", p, strerror(errno));
        *s = '/';
    }
    if (mkdir(p, 0777) == 0 && g_nmade < 16) snprintf(g_made_dirs[g_nmade++], sizeof g_made_dirs[0], "%s", p);
    else if (errno != EEXIST) return sc_fail(err, SC_EIO, "%s: cannot create: %s", p, strerror(errno));
    struct stat st;
    if (stat(p, &st) || !S_ISDIR(st.st_mode)) return sc_fail(err, SC_EIO, "%s: not a directory", p);
    return SC_OK;
}

/* The ffmpeg program on PATH, or 0. */
static int have_program(const char *name)
{
    const char *path = getenv("PATH");
    if (!path) return 0;
    char buf[4096];
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, n ? path : ".", name);
        if (access(buf, X_OK) == 0) return 1;
        path += n + (colon ? 1 : 0);
    }
    return 0;
}

static int run(char *const argv[])
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    sc_cleanup_set_child(pid);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            sc_cleanup_set_child(0);
            return -1;
        }
    sc_cleanup_set_child(0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static int make_movie(const char *dir, int nframes, double fps, sc_err *err)
{
    char pattern[4200], tmp[4200], out[4200], rate[32], count[32];
    snprintf(pattern, sizeof pattern, "%s/frame_%%05d.png", dir);
    snprintf(tmp, sizeof tmp, "%s/movie.tmp.mp4", dir);
    snprintf(out, sizeof out, "%s/movie.mp4", dir);
    snprintf(rate, sizeof rate, "%.6g", fps);
    snprintf(count, sizeof count, "%d", nframes);
    /* H.264 in yuv420p needs even sizes; the pad filter rounds up */
    char *argv[] = {"ffmpeg",    "-nostdin",      "-y",
                    "-loglevel", "error",         "-framerate",
                    rate,        "-start_number", "0",
                    "-i",        pattern,         "-frames:v",
                    count,       "-vf",           "pad=ceil(iw/2)*2:ceil(ih/2)*2",
                    "-c:v",      "libx264",       "-pix_fmt",
                    "yuv420p",   "-crf",          "20",
                    "-movflags", "+faststart",    tmp,
                    NULL};
    sc_cleanup_add(tmp, SC_CLEANUP_TEMP);
    int st = run(argv);
    if (st != 0) { /* an ffmpeg without libx264: its default MPEG-4 encoder */
        char *argv2[] = {"ffmpeg",
                         "-nostdin",
                         "-y",
                         "-loglevel",
                         "error",
                         "-framerate",
                         rate,
                         "-start_number",
                         "0",
                         "-i",
                         pattern,
                         "-frames:v",
                         count,
                         "-vf",
                         "pad=ceil(iw/2)*2:ceil(ih/2)*2",
                         "-pix_fmt",
                         "yuv420p",
                         "-q:v",
                         "3",
                         tmp,
                         NULL};
        st = run(argv2);
    }
    if (st != 0) {
        unlink(tmp);
        sc_cleanup_forget(tmp);
        return sc_fail(err, SC_EEXTERNAL, "ffmpeg failed (exit status %d) making %s from %s", st, out, pattern);
    }
    if (rename(tmp, out)) {
        int e = errno;
        unlink(tmp);
        sc_cleanup_forget(tmp);
        return sc_fail(err, SC_EIO, "%s: %s", out, strerror(e));
    }
    sc_cleanup_forget(tmp);
    return SC_OK;
}

/* Is path one of the files render writes into dir? frame_NNNNN.png, contact_sheet.png,
   movie.mp4 and the exports STEM_{frames.h5,frames.xdmf,surface.obj,surface.pc2,skeleton.bvh}. */
static int render_writes(const char *name, const char *stem)
{
    int k, end = 0;
    if (sscanf(name, "frame_%5d.png%n", &k, &end) == 1 && end == (int)strlen(name)) return 1;
    if (!strcmp(name, "contact_sheet.png") || !strcmp(name, "movie.mp4") || strstr(name, ".tmp.")) return 1;
    static const char *const exports[] = {"_frames.h5", "_frames.xdmf", "_surface.obj", "_surface.pc2", "_skeleton.bvh"};
    size_t n = strlen(stem);
    for (int i = 0; i < 5; i++)
        if (!strncmp(name, stem, n) && !strcmp(name + n, exports[i])) return 1;
    return 0;
}

/* Every file the run reads (the input, the config, --reference) must not be one it writes into
   OUTDIR: exit 1 naming both, before anything is written. */
static void check_inputs_outside(const sc_cli *cli)
{
    char outdir[PATH_MAX];
    if (!realpath(cli->output, outdir)) return; /* a new folder holds no input */
    const char *input = cli->inputs[0], *base = strrchr(input, '/');
    char stem[1024];
    snprintf(stem, sizeof stem, "%s", base ? base + 1 : input);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = 0;
    for (int i = 0; i < cli->nread; i++) {
        char real[PATH_MAX];
        if (!realpath(cli->read[i], real)) continue;
        char *slash = strrchr(real, '/');
        if (!slash) continue;
        *slash = 0;
        if (strcmp(real[0] ? real : "/", outdir) || !render_writes(slash + 1, stem)) continue;
        fprintf(stderr, "render: error: the %s %s is a file render writes into the output folder %s; refusing to overwrite it (choose another -o)\n",
                cli->read_what[i], cli->read[i], cli->output);
        exit(SC_EUSAGE);
    }
}

static void sink_wrote(void *ctx, const char *path) { written(path); }
static void sink_checkpoint(void *ctx) { check_stop(ctx); }

/* --html and --gltf must be writable, and the run owns them (FILE.lock) */
static void own_viewer_files(const sc_cli *cli, int argc, char **argv)
{
    sc_err err = {0};
    const char *const files[2] = {opt_html, opt_gltf}, *const what[2] = {"--html output", "--gltf output"};
    for (int i = 0; i < 2; i++)
        if (files[i] && (sc_cli_check_writable(files[i], what[i], &err) || sc_cli_lock(files[i], what[i], argc, argv, &err))) fail(cli, &err);
}

/* --html and --gltf, at the export times (the config's export: fps, every) */
static void write_viewers(const sc_cli *cli, const sc_render_settings *c, sc_anim *a, const char *stem, const sc_render_sink *sink)
{
    sc_err err = {0};
    double *et = NULL;
    int en = sc_anim_times(a, c->export_fps, c->export_every, c->start, c->end, &et);
    if (en < 0) {
        sc_fail(&err, SC_EIO, "out of memory");
        fail(cli, &err);
    }
    if (opt_html) {
        sc_html_figures fig;
        sc_html_judge(a, opt_reference, &fig);
        size_t bytes = 0;
        if (sc_export_html(a, et, en, &c->ro, &fig, stem, opt_html, &bytes, &err)) fail(cli, &err);
        sink->wrote(sink->ctx, opt_html);
        sink->checkpoint(sink->ctx);
        sc_log_info("render: %s: %d frames, %d vertices, %.1f MB (open it in a browser)", opt_html, en, a->nsv, bytes / 1e6);
    }
    if (opt_gltf) {
        if (sc_export_gltf(a, et, en, opt_gltf, &err)) fail(cli, &err);
        sink->wrote(sink->ctx, opt_gltf);
        sink->checkpoint(sink->ctx);
        sc_log_info("render: %s: %d morph targets of %d vertices, %d bones (glTF 2.0 binary)", opt_gltf, en, a->nsv, a->nbones);
    }
    free(et);
}

int main(int argc, char **argv)
{
    sc_cli cli;
    /* -o is optional when --html or --gltf names the output */
    int no_dir = 1, viewer_out = 0;
    for (int i = 1; i < argc; i++) {
        no_dir &= strcmp(argv[i], "-o") != 0;
        viewer_out |= !strcmp(argv[i], "--html") || !strcmp(argv[i], "--gltf");
    }
    sc_cli_parse(&cli, argc, argv, "render", usage, 1, 1, 0, no_dir && viewer_out ? SC_CLI_NO_OUTPUT : SC_CLI_OUTPUT_DIR | SC_CLI_DEFER_LOCK,
                 extra_opt);
    sc_cli_add_input_named(&cli, opt_reference, "--reference");
    sc_cli_add_output_named(&cli, opt_html, "--html output");
    sc_cli_add_output_named(&cli, opt_gltf, "--gltf output");
    if (cli.output) check_inputs_outside(&cli);
    sc_err err = {0};
    if (!cli.output) own_viewer_files(&cli, argc, argv); /* else once OUTDIR exists: they may be inside it */
    sc_cli_poll_signals();                               /* stop between frames and remove what was written */
    sc_cfg *cfg = NULL;
    sc_render_settings rc;
    if (cli.config && sc_cfg_load_file(cli.config, &cfg, &err)) sc_cli_die(&cli, &err);
    if (sc_render_settings_read(cfg, &rc, &err) || apply_overrides(&rc, &err)) sc_cli_die(&cli, &err);
    if (cfg) {
        sc_cli_ignore_other_sections(cfg);
        if (sc_cfg_check_unknown(cfg, &err)) sc_cli_die(&cli, &err);
    }
    const char *input = cli.inputs[0], *dir = cli.output;
    sc_anim anim;
    if (sc_anim_open(input, &anim, &err)) sc_cli_die(&cli, &err);
    if (opt_reference && sc_anim_attach_reference(&anim, opt_reference, &err)) sc_cli_die(&cli, &err);
    if (!rc.ground_from_sim) {
        anim.ground_n[0] = anim.ground_n[2] = 0;
        anim.ground_n[1] = 1;
        anim.ground_off = 0;
    }
    if (anim.status[0] && strncmp(anim.status, "completed", 9)) sc_log_warn("%s: the simulation's status is '%s'", input, anim.status);
    if (dir && make_dirs(dir, &err)) fail(&cli, &err);
    /* the run owns OUTDIR (OUTDIR.lock beside it, once its parent exists): a second render into
       it is refused before it writes a frame */
    if (dir && sc_cli_lock(dir, "output folder", argc, argv, &err)) fail(&cli, &err);
    if (dir) own_viewer_files(&cli, argc, argv);

    /* name stem for exports: sim.h5 -> sim */
    char stem[1024];
    const char *base = strrchr(input, '/');
    snprintf(stem, sizeof stem, "%s", base ? base + 1 : input);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = 0;

    double *times = NULL;
    int n = sc_anim_times(&anim, rc.fps, rc.every, rc.start, rc.end, &times);
    if (n < 0) {
        sc_fail(&err, SC_EIO, "out of memory");
        fail(&cli, &err);
    }
    double frame_rate = rc.every > 0 || rc.fps <= 0 ? (n > 1 && times[n - 1] > times[0] ? (n - 1) / (times[n - 1] - times[0]) : 30) : rc.fps;
    sc_render_sink sink = {sink_wrote, sink_checkpoint, (void *)cli.tool};
    if (opt_html || opt_gltf) write_viewers(&cli, &rc, &anim, stem, &sink);
    if (!dir) rc.images = rc.sheet = rc.movie = rc.xdmf = rc.pc2 = rc.bvh = 0;
    if (rc.images && sc_render_write_frames(&rc, &anim, times, n, dir, &sink, &err)) fail(&cli, &err);
    if (rc.sheet && sc_render_write_sheet(&rc, &anim, times, n, dir, &sink, &err)) fail(&cli, &err);
    if ((rc.xdmf || rc.pc2 || rc.bvh) && sc_render_write_exports(&rc, &anim, dir, stem, argc, argv, &sink, &err)) fail(&cli, &err);
    int code = 0;
    if (rc.movie && rc.images) {
        if (!have_program("ffmpeg")) {
            sc_log_info("render: note: no movie: the ffmpeg program is not installed (apt-get install ffmpeg); the frames are in %s", dir);
        } else if (make_movie(dir, n, frame_rate, &err)) {
            check_stop(cli.tool);
            fprintf(stderr, "render: error: %s\n", err.msg);
            code = err.code;
        } else {
            sc_log_info("render: %s/movie.mp4 (%d frames at %.4g fps)", dir, n, frame_rate);
        }
    }
    free(times);
    sc_anim_close(&anim);
    sc_cfg_free(cfg);
    return code;
}

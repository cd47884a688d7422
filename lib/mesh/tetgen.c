#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/cleanup.h"
#include "core/log.h"
#include "core/mathx.h"
#include "mesh/tetgen.h"

extern char **environ;

static char *g_program, *g_scratch; /* sc_tetgen_set_defaults' copies; NULL: none */

void sc_tetgen_set_defaults(const char *program, const char *scratch_dir)
{
    free(g_program);
    free(g_scratch);
    g_program = program ? strdup(program) : NULL;
    g_scratch = scratch_dir ? strdup(scratch_dir) : NULL;
}

static int write_inputs(const char *dir, const sc_trimesh *s, int nextra, const double *extra, sc_err *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/env.poly", dir);
    FILE *f = fopen(path, "w");
    if (!f) return sc_fail(err, SC_EIO, "%s: %s", path, strerror(errno));
    /* the fixed nodes go in as isolated PLC vertices after the surface's: TetGen keeps every
       input vertex, and its -i switch crashes on some inputs (Debian tetgen 1.6) */
    fprintf(f, "# softcon envelope + fixed nodes\n%d 3 0 0\n", s->nverts + nextra);
    for (int i = 0; i < s->nverts; i++) fprintf(f, "%d %.17g %.17g %.17g\n", i, s->verts[3 * i], s->verts[3 * i + 1], s->verts[3 * i + 2]);
    for (int i = 0; i < nextra; i++) fprintf(f, "%d %.17g %.17g %.17g\n", s->nverts + i, extra[3 * i], extra[3 * i + 1], extra[3 * i + 2]);
    fprintf(f, "%d 0\n", s->ntris);
    for (int t = 0; t < s->ntris; t++) fprintf(f, "1\n3 %d %d %d\n", s->tris[3 * t], s->tris[3 * t + 1], s->tris[3 * t + 2]);
    fprintf(f, "0\n0\n");
    int bad = ferror(f);
    if (fclose(f) || bad) return sc_fail(err, SC_EIO, "%s: write failed", path);
    return SC_OK;
}

/* Reads a TetGen table: header "<n> <k> ..." then n lines "<index> v1..vk". */
static int read_table(const char *path, int want_cols, int *n_out, double **vals, sc_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return sc_fail(err, SC_EEXTERNAL, "tetgen produced no %s: %s", path, strerror(errno));
    char line[1024];
    int n = -1, cols = 0, lineno = 0, row = 0;
    double *v = NULL;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || !*p) continue;
        if (n < 0) {
            if (sscanf(p, "%d %d", &n, &cols) != 2 || n < 0 || cols < want_cols) break;
            v = malloc(((size_t)n * want_cols + 1) * sizeof *v);
            if (!v) {
                fclose(f);
                return sc_fail(err, SC_EIO, "out of memory reading %s", path);
            }
            continue;
        }
        if (row >= n) break;
        char *end;
        strtol(p, &end, 10);
        p = end;
        for (int c = 0; c < want_cols; c++) {
            v[(size_t)row * want_cols + c] = strtod(p, &end);
            if (end == p) {
                free(v);
                fclose(f);
                return sc_fail(err, SC_EEXTERNAL, "%s:%d: malformed TetGen output", path, lineno);
            }
            p = end;
        }
        row++;
    }
    fclose(f);
    if (n < 0 || row != n) {
        free(v);
        return sc_fail(err, SC_EEXTERNAL, "%s: truncated TetGen output (%d of %d rows)", path, row, n);
    }
    *n_out = n;
    *vals = v;
    return SC_OK;
}

static void log_tail(const char *path, char *buf, size_t n)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, size > (long)n - 1 ? size - (long)n + 1 : 0, SEEK_SET);
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = 0;
    fclose(f);
    for (char *p = buf; *p; p++)
        if (*p == '\n' && p[1]) *p = ' ';
}

static const char *const scratch_names[] = {"env.poly",   "env.a.node",  "env.1.node", "env.1.ele",   "env.1.face",
                                            "env.1.edge", "env.1.smesh", "env.1.mtr",  "env.1.neigh", "tetgen.log"};

/* The scratch folder and what tetgen writes there, in the clean-up registry while it exists:
   an interrupted mesh-prep (SIGINT, SIGTERM) leaves no softcon-tetgen.* behind. */
static void track_dir(const char *dir, int add)
{
    char path[1024];
    if (add) sc_cleanup_add(dir, SC_CLEANUP_DIR);
    for (size_t i = 0; i < sizeof scratch_names / sizeof *scratch_names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, scratch_names[i]);
        if (add) sc_cleanup_add(path, SC_CLEANUP_TEMP);
        else sc_cleanup_forget(path);
    }
    if (!add) sc_cleanup_forget(dir);
}

static void remove_dir(const char *dir)
{
    char path[1024];
    for (size_t i = 0; i < sizeof scratch_names / sizeof *scratch_names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, scratch_names[i]);
        unlink(path);
    }
    rmdir(dir);
    track_dir(dir, 0);
}

int sc_tetgen_run(const sc_trimesh *surface, int nextra, const double *extra, const sc_tetgen_opts *o, sc_tetmesh *out, int *extra_index,
                  char *command, size_t command_size, sc_err *err)
{
    memset(out, 0, sizeof *out);
    const char *prog = o->program ? o->program : g_program;
    if (!prog || !*prog) prog = "tetgen";
    char dir[512];
    snprintf(dir, sizeof dir, "%s/softcon-tetgen.XXXXXX", g_scratch ? g_scratch : "/tmp");
    if (!mkdtemp(dir)) return sc_fail(err, SC_EIO, "cannot create a scratch directory for tetgen: %s", strerror(errno));
    track_dir(dir, 1);
    int rc = write_inputs(dir, surface, nextra, extra, err);
    if (rc) {
        remove_dir(dir);
        return rc;
    }

    /* -p PLC, -Y keep the envelope triangles as they are (splitting them to satisfy -q
       multiplies the node count), -q quality (radius-edge/min dihedral), -a max volume,
       -z zero-based output, -Q quiet */
    char switches[128], poly[600], logpath[600];
    int len = snprintf(switches, sizeof switches, "-pYq%g/%g", o->radius_edge, o->min_dihedral);
    if (o->max_volume > 0) len += snprintf(switches + len, sizeof switches - (size_t)len, "a%.6g", o->max_volume);
    snprintf(switches + len, sizeof switches - (size_t)len, "zQ");
    snprintf(poly, sizeof poly, "%s/env.poly", dir);
    snprintf(logpath, sizeof logpath, "%s/tetgen.log", dir);
    if (command) snprintf(command, command_size, "%s %s env.poly", prog, switches);
    sc_log_debug("running %s %s %s", prog, switches, poly);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    char *argv[] = {(char *)prog, switches, poly, NULL};
    pid_t pid;
    int sp = posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (sp) {
        remove_dir(dir);
        return sc_fail(err, SC_EEXTERNAL, "cannot run '%s': %s (install the Debian package 'tetgen' or set SOFTCON_TETGEN)", prog, strerror(sp));
    }
    int status;
    sc_cleanup_set_child(pid);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    sc_cleanup_set_child(0);
    char tail[600];
    log_tail(logpath, tail, sizeof tail);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            rc = sc_fail(err, SC_EEXTERNAL, "cannot run '%s': not found (install the Debian package 'tetgen' or set SOFTCON_TETGEN)", prog);
        else
            rc = sc_fail(err, SC_EEXTERNAL, "'%s %s' failed (%s %d)%s%s", prog, switches, WIFEXITED(status) ? "exit status" : "signal",
                         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), tail[0] ? ": " : "", tail);
        if (!o->keep_files) remove_dir(dir);
        else track_dir(dir, 0);
        return rc;
    }
    char path[600];
    double *nodes = NULL, *ele = NULL;
    int nn = 0, ne = 0;
    snprintf(path, sizeof path, "%s/env.1.node", dir);
    rc = read_table(path, 3, &nn, &nodes, err);
    if (!rc) {
        snprintf(path, sizeof path, "%s/env.1.ele", dir);
        rc = read_table(path, 4, &ne, &ele, err);
    }
    if (o->keep_files) {
        sc_log_info("tetgen files kept in %s", dir);
        track_dir(dir, 0);
    } else {
        remove_dir(dir);
    }
    if (rc) {
        free(nodes);
        return rc;
    }
    out->nnodes = nn;
    out->ntets = ne;
    out->pos = nodes;
    out->tets = malloc((size_t)ne * 4 * sizeof *out->tets);
    if (!out->tets) {
        free(ele);
        sc_tetmesh_free(out);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (int i = 0; i < 4 * ne; i++) {
        int v = (int)ele[i];
        if (v < 0 || v >= nn) {
            free(ele);
            sc_tetmesh_free(out);
            return sc_fail(err, SC_EEXTERNAL, "tetgen output references node %d of %d", v, nn);
        }
        out->tets[i] = v;
    }
    free(ele);
    /* find the inserted points among the nodes (TetGen prints them back at full precision) */
    for (int i = 0; i < nextra; i++) {
        sc_vec3 p = sc_v3_load(extra + 3 * i);
        int best = surface->nverts + i < nn ? surface->nverts + i : 0; /* TetGen keeps input order */
        double bd = sc_v3_dist(p, sc_v3_load(nodes + 3 * best));
        for (int n = 0; n < nn && bd > 0; n++) {
            double d = sc_v3_dist(p, sc_v3_load(nodes + 3 * n));
            if (d < bd) {
                bd = d;
                best = n;
            }
        }
        if (bd > 1e-9) {
            sc_tetmesh_free(out);
            return sc_fail(err, SC_EEXTERNAL,
                           "tetgen did not keep fixed node %d at (%.4f %.4f %.4f) (nearest node %.3g m away); "
                           "is it outside the envelope or too close to another point?",
                           i, p.x, p.y, p.z, bd);
        }
        extra_index[i] = best;
        sc_v3_store(out->pos + 3 * best, p); /* bit-exact */
    }
    return SC_OK;
}

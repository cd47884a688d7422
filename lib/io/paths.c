/* Finding the input files a config names, and writing files atomically through a temporary. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/cleanup.h"
#include "io/paths.h"

void sc_dirname(const char *path, char *out, size_t n)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (!slash) {
        snprintf(out, n, ".");
        return;
    }
    size_t len = (size_t)(slash - path);
    snprintf(out, n, "%.*s", (int)(len ? len : 1), path);
}

static int readable(const char *p) { return access(p, R_OK) == 0; }

static char g_mocap_path[PATH_MAX]; /* "": none */

void sc_paths_set_mocap_path(const char *dirs) { snprintf(g_mocap_path, sizeof g_mocap_path, "%s", dirs ? dirs : ""); }

int sc_find_input(const char *name, const char *config_path, int search_mocap, const char *where, char *out, size_t n, sc_err *err)
{
    char tried[1536] = "";
    size_t tl = 0;
    char cand[PATH_MAX];
#define TRY(...)                                                                                                        \
    do {                                                                                                                \
        snprintf(cand, sizeof cand, __VA_ARGS__);                                                                       \
        if (readable(cand)) {                                                                                           \
            snprintf(out, n, "%s", cand);                                                                               \
            return SC_OK;                                                                                               \
        }                                                                                                               \
        if (tl < sizeof tried - 2) tl += (size_t)snprintf(tried + tl, sizeof tried - tl, "%s%s", tl ? ", " : "", cand); \
    } while (0)
    if (name[0] == '/') {
        TRY("%s", name);
    } else {
        char dir[PATH_MAX];
        sc_dirname(config_path ? config_path : ".", dir, sizeof dir);
        TRY("%s/%s", dir, name);
        if (search_mocap) {
            TRY("mocap/%s", name);
            char exe[PATH_MAX];
            ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
            if (len > 0) {
                exe[len] = 0;
                char bindir[PATH_MAX];
                sc_dirname(exe, bindir, sizeof bindir);
                TRY("%s/../mocap/%s", bindir, name);
            }
            if (g_mocap_path[0]) {
                char buf[PATH_MAX];
                snprintf(buf, sizeof buf, "%s", g_mocap_path);
                for (char *save = NULL, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) TRY("%s/%s", d, name);
            }
        }
    }
#undef TRY
    return sc_fail(err, SC_EIO, "%s: cannot find '%s' (tried %s%s)", where, name, tried,
                   search_mocap ? "; set SOFTCON_MOCAP_PATH to the folder holding the clips" : "");
}

FILE *sc_file_open_tmp(const char *path, const char *mode, char *tmp, size_t tmp_size, sc_err *err)
{
    if (sc_temp_name(path, tmp, tmp_size)) {
        sc_fail(err, SC_EIO, "%s: file name too long (its temporary name would exceed PATH_MAX or NAME_MAX)", path);
        return NULL;
    }
    FILE *f = fopen(tmp, mode);
    if (!f) {
        sc_fail(err, SC_EIO, "cannot create %s: %s", tmp, strerror(errno));
        return NULL;
    }
    sc_cleanup_add(tmp, SC_CLEANUP_TEMP);
    return f;
}

int sc_file_commit(FILE *f, const char *tmp, const char *path, sc_err *err)
{
    /* The system's reason of the failure: errno of the write that failed (the caller's last
       call), or of a retried flush; never the stale errno of glibc's isatty probe (ENOTTY). */
    int e = errno, bad = ferror(f);
    if (bad) {
        clearerr(f);
        errno = 0;
        if (fflush(f) != 0 && errno) e = errno;
        if (e == ENOTTY || !e) e = EIO;
    } else if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
        bad = 1;
        e = errno;
    }
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        remove(tmp);
        sc_cleanup_forget(tmp);
        return sc_fail(err, SC_EIO, "cannot write %s: %s", tmp, e ? strerror(e) : "write error");
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        remove(tmp);
        sc_cleanup_forget(tmp);
        return sc_fail(err, SC_EIO, "cannot rename %s to %s: %s", tmp, path, strerror(e));
    }
    sc_cleanup_forget(tmp);
    return SC_OK;
}

#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../cmd/common/environment.h"
#include "core/log.h"
#include "test.h"

#define MAX_TESTS 1024

static struct {
    const char *name, *file;
    sc_test_fn fn;
} g_tests[MAX_TESTS];
static int g_ntests, g_failed_current;

void sc_test_register(const char *name, const char *file, sc_test_fn fn)
{
    if (g_ntests < MAX_TESTS) {
        g_tests[g_ntests].name = name;
        g_tests[g_ntests].file = file;
        g_tests[g_ntests].fn = fn;
        g_ntests++;
    }
}

void sc_test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stdout, "    %s:%d: ", file, line);
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    g_failed_current = 1;
}

void sc_test_report(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("    measured: ", stdout);
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    fflush(stdout);
}

static char g_tmpdir[512];

static void rm_rf(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    char sub[1024];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        rm_rf(sub);
    }
    closedir(d);
    rmdir(path);
}

const char *sc_test_tmpdir(void) { return g_tmpdir; }

/* A ring of static buffers so a test can hold several paths at once. Large, because a path held
 * across a loop of calls was silently overwritten when the ring was 32 (test_id_table); a path
 * kept across tests goes through sc_fixture_keep. */
static char *path_slot(void)
{
    static char slots[1024][1024];
    static int next;
    return slots[next++ % 1024];
}

const char *sc_test_tmp(const char *name)
{
    char *p = path_slot();
    snprintf(p, 1024, "%s/%s", g_tmpdir, name);
    return p;
}

const char *sc_test_mocap(const char *name)
{
    const char *dir = getenv("SOFTCON_MOCAP_PATH");
    char *p = path_slot();
    snprintf(p, 1024, "%s/%s", dir ? dir : "../shared/mocap", name);
    return p;
}

const char *sc_test_mesh(const char *name)
{
    const char *dir = getenv("SOFTCON_MESH_PATH");
    char *p = path_slot();
    snprintf(p, 1024, "%s/%s", dir ? dir : "../shared/meshes", name);
    return p;
}

const char *sc_test_repo(const char *rel)
{
    const char *root = getenv("SOFTCON_ROOT");
    char *p = path_slot();
    snprintf(p, 1024, "%s/%s", root ? root : ".", rel);
    return p;
}

const char *sc_test_tool(const char *name)
{
    const char *bin = getenv("SOFTCON_BIN");
    char *p = path_slot();
    snprintf(p, 1024, "%s/%s", bin ? bin : "bin", name);
    return p;
}

const char *sc_test_write(const char *name, const char *text)
{
    const char *path = sc_test_tmp(name);
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

int sc_test_wait_while_running(int (*done)(const void *arg), const void *arg, const char *command, double max_s)
{
    double t0 = sc_wall_time();
    for (long i = 0; sc_wall_time() - t0 < max_s; i++) {
        if (done(arg)) return 1;
        if (i % 50 == 49 && sc_test_sh(NULL, 0, "pgrep -f '^%s' > /dev/null", command) != 0) return done(arg);
        usleep(20000);
    }
    return done(arg);
}

int sc_test_fork(int *fd)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    close(fds[pid == 0 ? 0 : 1]);
    *fd = fds[pid == 0 ? 1 : 0];
    return (int)pid;
}

size_t sc_test_child_output(int pid, int fd, char *buf, size_t n, int *status)
{
    size_t got = 0;
    ssize_t k;
    while (got + 1 < n && (k = read(fd, buf + got, n - 1 - got)) > 0) got += (size_t)k;
    buf[got] = 0;
    close(fd);
    int st = 0;
    waitpid(pid, &st, 0);
    if (status) *status = st;
    return got;
}

int sc_test_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int sc_test_simulate_refuses(char *out, size_t out_size, const char *character, const char *name, const char *text, int line, const char *want)
{
    char h5[256], at[300];
    snprintf(h5, sizeof h5, "%s.h5", name);
    snprintf(at, sizeof at, "%s:%d:", name, line);
    const char *cfg = sc_test_write(name, text), *o = sc_test_tmp(h5);
    int rc = sc_test_sh(out, out_size, "%s -c %s -o %s %s", sc_test_tool("simulate"), cfg, o, character);
    return rc == 2 && strstr(out, at) && strstr(out, want) && !sc_test_file_exists(o);
}

char *sc_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)n + 1)) && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[n] = 0;
    if (b && len) *len = (size_t)n;
    return b;
}

/* Seconds a command of sc_test_sh may run (SOFTCON_TEST_COMMAND_SECONDS): a hung tool fails its
 * test instead of holding the suite (and CI) until an outer limit kills everything. */
static int command_seconds(void)
{
    const char *v = getenv("SOFTCON_TEST_COMMAND_SECONDS");
    int s = v ? atoi(v) : 0;
    return s > 0 ? s : 1200;
}

int sc_test_sh(char *out, size_t out_size, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    /* the command reaches sh through the environment (no quoting to get wrong); timeout runs it
       in a process group of its own and kills the whole group at the limit; stdin is /dev/null,
       since a group that is not the terminal's foreground stops when it reads the terminal */
    const int limit = command_seconds();
    char full[256];
    snprintf(full, sizeof full, "timeout -k 30 %d sh -c \"$SC_TEST_COMMAND\" < /dev/null 2>&1", limit);
    setenv("SC_TEST_COMMAND", cmd, 1);
    const double t0 = sc_wall_time();
    FILE *p = popen(full, "r");
    unsetenv("SC_TEST_COMMAND");
    if (!p) return -1;
    size_t n = 0;
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, p)) > 0) {
        if (out && n + 1 < out_size) {
            size_t take = got < out_size - 1 - n ? got : out_size - 1 - n;
            memcpy(out + n, buf, take);
            n += take;
        }
    }
    if (out && out_size) out[n] = 0;
    int st = pclose(p);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    if ((rc == 124 || rc == 128 + SIGKILL) && sc_wall_time() - t0 >= limit) {
        printf("    a command ran over %d s (SOFTCON_TEST_COMMAND_SECONDS) and was killed: %.400s\n", limit, cmd);
        fflush(stdout);
    }
    return rc;
}

int sc_test_temporary_left(const char *path) { return sc_test_sh(NULL, 0, "ls -d '%s'.tmp* 2> /dev/null | grep -q .", path) == 0; }

int sc_test_h5_same(char *out, size_t out_size, const char *a, const char *b, const char *only)
{
    return sc_test_sh(out, out_size, "/usr/bin/python3 %s %s%s '%s' '%s'", sc_test_repo("scripts/h5-same.py"), only ? "--only " : "",
                      only ? only : "", a, b) == 0;
}

static int cmp_tests(const void *a, const void *b)
{
    const char *fa = ((const __typeof__(g_tests[0]) *)a)->file, *fb = ((const __typeof__(g_tests[0]) *)b)->file;
    int c = strcmp(fa, fb);
    if (c) return c;
    return strcmp(((const __typeof__(g_tests[0]) *)a)->name, ((const __typeof__(g_tests[0]) *)b)->name);
}

static char g_self[4096]; /* this program, for tests that run it under mpiexec */

const char *sc_test_self(void) { return g_self; }

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--par-ranks")) return sc_test_par_ranks(atoi(argv[2])); /* one rank of test_par.c's job */
    if (!realpath(argv[0], g_self)) snprintf(g_self, sizeof g_self, "%s", argv[0]);
    int list = argc > 1 && !strcmp(argv[1], "--list");
    qsort(g_tests, (size_t)g_ntests, sizeof g_tests[0], cmp_tests);
    snprintf(g_tmpdir, sizeof g_tmpdir, "%s/softcon_test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!list && !mkdtemp(g_tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    sc_log_set_level(SC_LOG_WARN);
    sc_environment_apply(); /* what the tools take from the environment, the library too */
    /* SOFTCON_TEST_SHARD=i/n: the i-th of n interleaved shares of the selected tests (make
       asan runs the shares side by side) */
    int shard = 0, nshards = 1, nselected = 0;
    const char *sh = getenv("SOFTCON_TEST_SHARD");
    if (sh && (sscanf(sh, "%d/%d", &shard, &nshards) != 2 || nshards < 1 || shard < 0 || shard >= nshards)) {
        fprintf(stderr, "SOFTCON_TEST_SHARD=%s: expected i/n with 0 <= i < n\n", sh);
        return 2;
    }
    int passed = 0, failed = 0;
    for (int i = 0; i < g_ntests; i++) {
        /* slow_* tests (campaigns whose figures go into the README) run only when a filter that
           names them ("slow...") selects them */
        int slow = !strncmp(g_tests[i].name, "slow_", 5);
        int selected = (argc <= 1 && !slow) || list;
        for (int a = list ? 2 : 1; a < argc && !selected; a++)
            selected = strstr(g_tests[i].name, argv[a]) != NULL && (!slow || strstr(argv[a], "slow"));
        if (!selected || nselected++ % nshards != shard) continue;
        if (list) {
            printf("%s\n", g_tests[i].name);
            continue;
        }
        printf("%s\n", g_tests[i].name);
        fflush(stdout);
        g_failed_current = 0;
        double t0 = sc_wall_time();
        g_tests[i].fn();
        double dt = sc_wall_time() - t0;
        printf("  %s %s (%.2f s)\n", g_failed_current ? "FAIL" : "ok  ", g_tests[i].name, dt);
        fflush(stdout);
        if (g_failed_current) failed++;
        else passed++;
    }
    if (list) return 0;
    if (!getenv("SOFTCON_KEEP_TMP")) rm_rf(g_tmpdir);
    else printf("scratch files kept in %s\n", g_tmpdir);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* The command line every tool shares (cli.h): parsing, the same-file check, signals and exit. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "environment.h"
#include "core/cleanup.h"
#include "core/log.h"
#include "io/config.h"
#include "io/paths.h"

/* ---- signals and exit: the clean-up of core/cleanup.h ---------------------------------- */

static const char *g_tool = "softcon";
static volatile sig_atomic_t g_poll, g_stop;
static const int k_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1};

static const char *signal_name(int sig)
{
    switch (sig) {
        case SIGINT: return "SIGINT";
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
        case SIGUSR1: return "SIGUSR1";
        default: return "a signal";
    }
}

static void say(const char *s) { (void)!write(STDERR_FILENO, s, strlen(s)); }

static void on_signal(int sig)
{
    if (g_poll && !g_stop) {
        g_stop = sig; /* the tool stops at its next safe point */
        return;
    }
    sc_cleanup_run(1);
    say(g_tool);
    say(": interrupted by ");
    say(signal_name(sig));
    say("; temporary files removed\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

static void at_exit_cleanup(void) { sc_cleanup_run(0); }

static void on_fatal(int code, const char *msg)
{
    fflush(stdout);
    fprintf(stderr, "%s: error: %s\n", g_tool, msg);
    sc_cleanup_run(1);
    _exit(code ? code : 1);
}

static void install_handlers(const char *tool)
{
    g_tool = tool;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof k_signals / sizeof *k_signals; i++) sigaddset(&sa.sa_mask, k_signals[i]);
    for (size_t i = 0; i < sizeof k_signals / sizeof *k_signals; i++) {
        struct sigaction old;
        if (sigaction(k_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue; /* nohup, background */
        sigaction(k_signals[i], &sa, NULL);
    }
    atexit(at_exit_cleanup);
    sc_set_fatal_handler(on_fatal);
}

void sc_cli_poll_signals(void) { g_poll = 1; }
int sc_cli_stop_requested(void) { return (int)g_stop; }

/* ---- the same-file check ------------------------------------------------------------- */

/* A path as the system will resolve it: the real path of its folder + its last component, so
   two spellings of a file that does not exist yet compare equal ("out.h5", "./out.h5"). */
static void normalise(const char *p, char *out, size_t n)
{
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(p, '/');
    const char *base = slash ? slash + 1 : p;
    if (slash == p) snprintf(dir, sizeof dir, "/");
    else if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - p), p);
    else snprintf(dir, sizeof dir, ".");
    if (!realpath(dir, real)) {
        snprintf(out, n, "%s", p); /* an unreachable folder: compare the names as spelled */
        return;
    }
    snprintf(out, n, "%s/%s", strcmp(real, "/") ? real : "", base);
}

/* The same file: device and inode when both exist (links, other spellings), the normalised
   names when neither does yet (two outputs, an output and its checkpoint). */
static int same_file(const char *a, const char *b)
{
    if (!a || !b) return 0;
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea || eb) return 0;
    static char na[PATH_MAX + 256], nb[PATH_MAX + 256];
    normalise(a, na, sizeof na);
    normalise(b, nb, sizeof nb);
    return !strcmp(na, nb);
}

static void (*g_die_hook)(const sc_err *err);
static void (*g_leave_hook)(void);

void sc_cli_set_die(void (*die)(const sc_err *err)) { g_die_hook = die; }
void sc_cli_set_leave(void (*leave)(void)) { g_leave_hook = leave; }

static int g_take_threads;
void sc_cli_take_threads(void) { g_take_threads = 1; }

/* The parser's own exits (help, version, usage errors): the MPI tools finalize first. */
static void __attribute__((noreturn)) leave(int code)
{
    fflush(stdout);
    if (g_leave_hook) g_leave_hook();
    exit(code);
}

/* Usage errors found after parsing: through the hook (the MPI tools: rank 0 prints, every rank
   finalizes), else printed here; exit SC_EUSAGE (or the error's code). */
static void die_early(const sc_cli *cli, const sc_err *err)
{
    if (g_die_hook) g_die_hook(err);
    fprintf(stderr, "%s: error: %s\n", cli->tool, err->msg);
    exit(err->code ? err->code : SC_EUSAGE);
}

static void clash_exit(const sc_cli *cli, const char *out, const char *out_what, const char *in, const char *in_what, int both_outputs)
{
    sc_err err;
    if (both_outputs)
        sc_fail(&err, SC_EUSAGE, "the %s %s and the %s %s are the same file: one would overwrite or remove the other (choose other names)", in_what,
                in, out_what, out);
    else
        sc_fail(&err, SC_EUSAGE, "the %s %s is the same file as the %s %s; refusing to overwrite %s %s (choose another name)", out_what, out, in_what,
                in, in_what && !strcmp(in_what, "config") ? "the" : "an", in_what && !strcmp(in_what, "config") ? "config" : "input");
    die_early(cli, &err);
}

void sc_cli_add_input_named(sc_cli *cli, const char *path, const char *what)
{
    if (!path || !path[0]) return;
    if (!what) what = cli->config && path == cli->config ? "config" : "input";
    for (int i = 0; i < cli->nwritten; i++)
        if (same_file(cli->written[i], path) && !(cli->in_place && i == 0)) clash_exit(cli, cli->written[i], cli->written_what[i], path, what, 0);
    if (cli->nread < SC_CLI_MAX_FILES) {
        cli->read_what[cli->nread] = what;
        cli->read[cli->nread++] = path;
    }
}

void sc_cli_add_output_named(sc_cli *cli, const char *path, const char *what)
{
    if (!path || !path[0]) return;
    if (!what) what = "output";
    for (int i = 0; i < cli->nread; i++) {
        int input_allowed = cli->in_place && cli->nwritten == 0 && cli->read[i] != cli->config;
        if (same_file(path, cli->read[i]) && !input_allowed) clash_exit(cli, path, what, cli->read[i], cli->read_what[i], 0);
    }
    for (int i = 0; i < cli->nwritten; i++)
        if (same_file(path, cli->written[i])) clash_exit(cli, path, what, cli->written[i], cli->written_what[i], 1);
    if (cli->nwritten < SC_CLI_MAX_FILES) {
        cli->written_what[cli->nwritten] = what;
        cli->written[cli->nwritten++] = path;
    }
}

void sc_cli_add_input(sc_cli *cli, const char *path) { sc_cli_add_input_named(cli, path, NULL); }
void sc_cli_add_output(sc_cli *cli, const char *path) { sc_cli_add_output_named(cli, path, NULL); }

/* ---- writable before any work --------------------------------------------------------- */

int sc_cli_check_writable(const char *path, const char *what, sc_err *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return sc_fail(err, SC_EIO, "%s: is a directory (the %s must name a file)", path, what);
    char tmp[PATH_MAX];
    char lock[PATH_MAX];
    if (!sc_temp_name_fits(path) || sc_temp_name(path, tmp, sizeof tmp) || (size_t)snprintf(lock, sizeof lock, "%s.lock", path) >= sizeof lock)
        return sc_fail(err, SC_EIO, "%s: the %s's name is too long (its temporary file %s.tmp.<pid>.<random> would exceed PATH_MAX or NAME_MAX)",
                       path, what, path);
    /* probed by creating (and removing) a temporary file the writer could use, so a missing or
       read-only folder is reported before any work (root ignores permission bits) */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        char dir[PATH_MAX];
        sc_dirname(path, dir, sizeof dir);
        return sc_fail(err, SC_EIO, "%s: cannot write the %s into %s: %s", path, what, dir, strerror(errno));
    }
    close(fd);
    unlink(tmp);
    return SC_OK;
}

static void check_writable(const sc_cli *cli, const char *out)
{
    sc_err err;
    if (sc_cli_check_writable(out, "output", &err)) die_early(cli, &err);
}

/* ---- a run owns its output: an advisory lock beside it --------------------------------- */

/* The lock files this process holds: open for the whole run (the kernel drops the lock when
   the process ends, however it ends), removed at exit through the clean-up registry while
   still held. */
static int g_lock_fd[8], g_nlocks;

/* PATH.tmp.<pid>.<hex> files (core/cleanup.h's sc_temp_name) left by a run killed with SIGKILL:
   whoever holds PATH's lock is the only run that writes PATH, so every such file is stale. */
static void remove_stale_temporaries(const char *path, size_t n)
{
    char dir[PATH_MAX], base[NAME_MAX + 1];
    const char *slash = memrchr(path, '/', n);
    size_t dn = slash ? (size_t)(slash - path) : 0, bn = n - (slash ? dn + 1 : 0);
    if (dn >= sizeof dir || bn + 5 >= sizeof base) return;
    snprintf(dir, sizeof dir, "%.*s", (int)(slash ? (dn ? dn : 1) : 1), slash ? path : ".");
    snprintf(base, sizeof base, "%.*s.tmp.", (int)bn, slash ? slash + 1 : path);
    DIR *d = opendir(dir);
    if (!d) return;
    size_t bl = strlen(base);
    for (struct dirent *e; (e = readdir(d));) {
        const char *rest = e->d_name + bl;
        if (strncmp(e->d_name, base, bl) != 0 || !rest[0]) continue;
        size_t digits = strspn(rest, "0123456789"), hex = digits ? strspn(rest + digits + 1, "0123456789abcdef") : 0;
        if (!digits || rest[digits] != '.' || hex != 8 || rest[digits + 1 + hex]) continue;
        char full[PATH_MAX];
        if (snprintf(full, sizeof full, "%s/%s", dir, e->d_name) < (int)sizeof full) unlink(full);
    }
    closedir(d);
}

int sc_cli_lock(const char *path, const char *what, int argc, char **argv, sc_err *err)
{
    char lock[PATH_MAX + 8];
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--; /* a folder (render): OUTDIR.lock beside it */
    if (n + 6 > PATH_MAX) return sc_fail(err, SC_EIO, "%s: name too long for its lock file", path);
    snprintf(lock, sizeof lock, "%.*s.lock", (int)n, path);
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) return sc_fail(err, SC_EIO, "%s: cannot create the lock file %s: %s", path, lock, strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            char holder[512] = "";
            ssize_t got = pread(fd, holder, sizeof holder - 1, 0);
            close(fd);
            if (e != EWOULDBLOCK) return sc_fail(err, SC_EIO, "%s: cannot lock %s: %s", path, lock, strerror(e));
            holder[got > 0 ? got : 0] = 0;
            char *nl = strchr(holder, '\n');
            if (nl) *nl = 0;
            return sc_fail(err, SC_EUSAGE, "the %s %s is in use by another run (%s; lock file %s): wait for it to finish or choose another name",
                           what, path, holder[0] ? holder : "its holder has not written its name yet", lock);
        }
        /* the holder before us may have removed the file after we opened it: a lock on a removed
           file protects nothing, so start again on the file now at that name */
        struct stat a, b;
        if (fstat(fd, &a) != 0 || stat(lock, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
            close(fd);
            continue;
        }
        char host[256] = "?", when[64] = "?", text[2048];
        gethostname(host, sizeof host - 1);
        time_t now = time(NULL);
        struct tm tm;
        if (localtime_r(&now, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
        int k = snprintf(text, sizeof text, "pid %ld on host %s, started %s, cmd", (long)getpid(), host, when);
        for (int i = 0; i < argc && k > 0 && (size_t)k < sizeof text - 2; i++) k += snprintf(text + k, sizeof text - (size_t)k, " %s", argv[i]);
        if (k > 0 && (size_t)k >= sizeof text - 1) k = (int)sizeof text - 2;
        text[k++] = '\n';
        if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)k, 0) != k) {
            int e = errno;
            close(fd);
            return sc_fail(err, SC_EIO, "%s: cannot write the lock file %s: %s", path, lock, strerror(e));
        }
        if (g_nlocks < (int)(sizeof g_lock_fd / sizeof *g_lock_fd)) g_lock_fd[g_nlocks++] = fd;
        sc_cleanup_add(lock, SC_CLEANUP_TEMP); /* removed at exit, still held */
        remove_stale_temporaries(path, n);
        return SC_OK;
    }
    return sc_fail(err, SC_EIO, "%s: cannot lock %s: it keeps being replaced", path, lock);
}

static void lock_output(const sc_cli *cli, const char *what)
{
    sc_err err;
    if (sc_cli_lock(cli->output, what, cli->argc, cli->argv, &err)) die_early(cli, &err);
}

static int parse_count(const char *s, unsigned long long *v)
{
    /* digits only: strtoull would take a sign ("-1" as 2^64-1) or spaces, and clamp an overflow */
    if (!s[0]) return -1;
    for (const char *c = s; *c; c++)
        if (*c < '0' || *c > '9') return -1;
    errno = 0;
    char *end;
    *v = strtoull(s, &end, 10);
    return errno == ERANGE || *end ? -1 : 0;
}

static void usage_exit(const char *tool, const char *usage, int code)
{
    FILE *out = code ? stderr : stdout;
    fprintf(out, "usage: %s %s\n", tool, usage);
    fprintf(out,
            "common options:\n"
            "  -c FILE        YAML config\n"
            "  -o FILE        output file (written to FILE.tmp.<pid>.<random>, renamed when complete;\n"
            "                 FILE.lock marks it in use: a second run on the same FILE is refused)\n"
            "  -v, -q         more / less logging on stderr\n"
            "  --seed N       random seed, a non-negative integer up to 2^64-1 (default 1)\n"
            "%s"
            "  --help, --version\n"
            "exit codes: 0 ok, 1 usage (also: the output is an input, or in use by another run), 2 bad config or input, 3 I/O, 4 numerical failure,\n"
            "            5 external program missing or failed, 6 interrupted by a signal after a\n"
            "            checkpoint (run again with --resume), 7 completed only part of the clip;\n"
            "            killed by SIGINT/SIGTERM/SIGHUP otherwise: 128 + the signal, after removing\n"
            "            temporary files\n",
            g_take_threads ? "  --threads N    threads of each rank that simulate (default 1, at most 1024)\n" : "");
    leave(code);
}

void sc_cli_parse(sc_cli *cli, int argc, char **argv, const char *tool, const char *usage, int min_inputs, int max_inputs, int need_config,
                  int need_output, sc_cli_extra_fn extra)
{
    sc_environment_apply();
    memset(cli, 0, sizeof *cli);
    cli->tool = tool;
    cli->seed = 1;
    cli->threads = 1;
    cli->argc = argc;
    cli->argv = argv;
    int level = SC_LOG_INFO;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage_exit(tool, usage, 0);
        else if (!strcmp(a, "--version")) {
            printf("%s (softcon) %s (%s)\n", tool, SC_VERSION, SC_GIT_REV);
            leave(0);
        } else if (!strcmp(a, "--threads") && !g_take_threads) {
            fprintf(stderr, "%s: option --threads: this tool runs on one thread (sample-openloop and learn-feedback take it)\n", tool);
            usage_exit(tool, usage, SC_EUSAGE);
        } else if (!strcmp(a, "-v")) level++;
        else if (!strcmp(a, "-q")) level = SC_LOG_QUIET;
        else if (!strcmp(a, "-c") || !strcmp(a, "-o") || !strcmp(a, "--seed") || !strcmp(a, "--threads")) {
            if (!next) {
                fprintf(stderr, "%s: option %s needs a value\n", tool, a);
                usage_exit(tool, usage, SC_EUSAGE);
            }
            i++;
            if (!next[0]) {
                fprintf(stderr, "%s: option %s needs a file name, got ''\n", tool, a);
                usage_exit(tool, usage, SC_EUSAGE);
            }
            if (a[1] == 'c') cli->config = next;
            else if (a[1] == 'o') cli->output = next;
            else {
                unsigned long long v;
                if (parse_count(next, &v) || (a[2] == 't' && (v < 1 || v > 1024))) {
                    fprintf(stderr, "%s: %s expects a %s, got '%s'\n", tool, a,
                            a[2] == 't' ? "thread count in 1..1024" : "non-negative integer (0 .. 18446744073709551615)", next);
                    leave(SC_EUSAGE);
                }
                if (a[2] == 's') {
                    cli->seed = v;
                    cli->seed_given = 1;
                } else cli->threads = (int)v;
            }
        } else if (a[0] == '-' && a[1]) {
            int used = 1, mine = extra ? extra(a, next, &used) : 0;
            if (mine < 0) {
                fprintf(stderr, "%s: option %s needs a value\n", tool, a);
                usage_exit(tool, usage, SC_EUSAGE);
            }
            if (mine) {
                i += used - 1;
                continue;
            }
            fprintf(stderr, "%s: unknown option '%s'\n", tool, a);
            usage_exit(tool, usage, SC_EUSAGE);
        } else {
            if (cli->ninputs >= SC_CLI_MAX_INPUTS || cli->ninputs >= max_inputs) {
                fprintf(stderr, "%s: unexpected argument '%s'\n", tool, a);
                usage_exit(tool, usage, SC_EUSAGE);
            }
            cli->inputs[cli->ninputs++] = a;
        }
    }
    sc_log_set_level(level);
    if (need_config && !cli->config) {
        fprintf(stderr, "%s: missing -c CONFIG\n", tool);
        usage_exit(tool, usage, SC_EUSAGE);
    }
    if (need_output && !cli->output) {
        fprintf(stderr, "%s: missing -o OUTPUT\n", tool);
        usage_exit(tool, usage, SC_EUSAGE);
    }
    if (cli->ninputs < min_inputs) {
        fprintf(stderr, "%s: expected %d input file%s\n", tool, min_inputs, min_inputs == 1 ? "" : "s");
        usage_exit(tool, usage, SC_EUSAGE);
    }
    /* nothing is written before the output is known not to be an input or the config */
    int defer_lock = need_output & SC_CLI_DEFER_LOCK;
    need_output &= ~SC_CLI_DEFER_LOCK;
    cli->in_place = need_output == SC_CLI_OUTPUT_IN_PLACE;
    if (cli->config) sc_cli_add_input(cli, cli->config);
    for (int k = 0; k < cli->ninputs; k++) sc_cli_add_input(cli, cli->inputs[k]);
    if (cli->output) sc_cli_add_output(cli, cli->output);
    install_handlers(tool);
    if (cli->output && (need_output == SC_CLI_OUTPUT || need_output == SC_CLI_OUTPUT_IN_PLACE)) check_writable(cli, cli->output);
    /* the run owns its output from here on: a second run on it is refused at once */
    if (cli->output && need_output != SC_CLI_NO_OUTPUT && !defer_lock)
        lock_output(cli, need_output == SC_CLI_OUTPUT_DIR ? "output folder" : "output");
}

void sc_cli_die(const sc_cli *cli, const sc_err *err)
{
    fflush(stdout);
    fprintf(stderr, "%s: error: %s\n", cli->tool, err->msg);
    sc_cleanup_run(1);
    exit(err->code ? err->code : 1);
}

/* The top-level config sections of all the tools. */
static const char *const pipeline_sections[] = {"skeleton",
                                                "body",
                                                "envelope",
                                                "fixed",
                                                "tetgen",
                                                "material",
                                                "muscles",
                                                "reduced", /* mesh-prep */
                                                "skin",    /* skin-weights */
                                                "motion",
                                                "retarget",
                                                "kinematics",
                                                "contact_estimation",
                                                "dynamics", /* inverse-dynamics */
                                                "simulation",
                                                "controller",
                                                "perturbations",
                                                "contact",
                                                "ground",
                                                "fluid",
                                                "output", /* simulate */
                                                "muscle_control",
                                                "forces",          /* muscle-sim */
                                                "muscle_sampling", /* muscle-sample */
                                                "reduced_body",
                                                "swim",
                                                "dmp",
                                                "optimise",
                                                "replay", /* reduced-opt */
                                                "sampling",
                                                "feedback",
                                                "render",
                                                "pipeline", /* later stages, scripts/pipeline.sh */
                                                NULL};

void sc_cli_ignore_other_sections(sc_cfg *cfg)
{
    sc_cfg_node *root = sc_cfg_root(cfg);
    for (const char *const *s = pipeline_sections; *s; s++) sc_cfg_ignore(root, *s);
}

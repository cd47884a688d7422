/* The command line every tool shares (cli.h): parsing, the same-file check, signals and exit. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "environment.h"
#include "core/cleanup.h"
#include "core/log.h"
#include "io/config.h"

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

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void clash_exit(const sc_cli *cli, const char *out, const char *in)
{
    fprintf(stderr, "%s: the output %s is the same file as the %s %s; refusing to overwrite %s (choose another -o)\n", cli->tool, out,
            cli->config && in == cli->config ? "config" : "input", in, cli->config && in == cli->config ? "the config" : "an input");
    exit(SC_EUSAGE);
}

void sc_cli_add_input(sc_cli *cli, const char *path)
{
    if (!path) return;
    for (int i = 0; i < cli->nwritten; i++)
        if (same_file(cli->written[i], path) && !(cli->in_place && i == 0)) clash_exit(cli, cli->written[i], path);
    if (cli->nread < SC_CLI_MAX_FILES) cli->read[cli->nread++] = path;
}

void sc_cli_add_output(sc_cli *cli, const char *path)
{
    if (!path) return;
    for (int i = 0; i < cli->nread; i++) {
        int input_allowed = cli->in_place && cli->nwritten == 0 && cli->read[i] != cli->config;
        if (same_file(path, cli->read[i]) && !input_allowed) clash_exit(cli, path, cli->read[i]);
    }
    if (cli->nwritten < SC_CLI_MAX_FILES) cli->written[cli->nwritten++] = path;
}

/* Can the output be created? Probed by creating (and removing) the temporary file the writer
 * will use, so a read-only folder is reported before any work (root ignores permission bits). */
static void check_writable(const sc_cli *cli, const char *out)
{
    struct stat st;
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: error: %s: is a directory (-o names the output file)\n", cli->tool, out);
        exit(SC_EIO);
    }
    size_t n = strlen(out);
    char *tmp = malloc(n + 5);
    if (!tmp) return;
    memcpy(tmp, out, n);
    memcpy(tmp + n, ".tmp", 5);
    int fd = open(tmp, O_WRONLY | O_CREAT, 0666);
    if (fd < 0) {
        int e = errno;
        fprintf(stderr, "%s: error: %s: cannot write the output: %s\n", cli->tool, out, strerror(e));
        free(tmp);
        exit(SC_EIO);
    }
    close(fd);
    unlink(tmp);
    free(tmp);
}

static void usage_exit(const char *tool, const char *usage, int code)
{
    FILE *out = code ? stderr : stdout;
    fprintf(out, "usage: %s %s\n", tool, usage);
    fprintf(out,
            "common options:\n"
            "  -c FILE        YAML config\n"
            "  -o FILE        output file (written to FILE.tmp, renamed when complete)\n"
            "  -v, -q         more / less logging on stderr\n"
            "  --seed N       random seed (default 1)\n"
            "  --threads N    worker threads (default 1)\n"
            "  --help, --version\n"
            "exit codes: 0 ok, 1 usage, 2 bad config or input, 3 I/O, 4 numerical failure,\n"
            "            5 external program missing or failed, 6 interrupted by a signal after a\n"
            "            checkpoint (run again with --resume), 7 completed only part of the clip;\n"
            "            killed by SIGINT/SIGTERM/SIGHUP otherwise: 128 + the signal, after removing\n"
            "            temporary files\n");
    exit(code);
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
            exit(0);
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
                char *end;
                unsigned long long v = strtoull(next, &end, 10);
                if (*end || end == next || (a[2] == 't' && (v < 1 || v > 1024))) {
                    fprintf(stderr, "%s: %s expects a %s, got '%s'\n", tool, a, a[2] == 't' ? "thread count in 1..1024" : "non-negative integer",
                            next);
                    exit(SC_EUSAGE);
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
    cli->in_place = need_output == SC_CLI_OUTPUT_IN_PLACE;
    if (cli->config) sc_cli_add_input(cli, cli->config);
    for (int k = 0; k < cli->ninputs; k++) sc_cli_add_input(cli, cli->inputs[k]);
    if (cli->output) sc_cli_add_output(cli, cli->output);
    install_handlers(tool);
    if (cli->output && (need_output == SC_CLI_OUTPUT || need_output == SC_CLI_OUTPUT_IN_PLACE)) check_writable(cli, cli->output);
}

void sc_cli_die(const sc_cli *cli, const sc_err *err)
{
    fflush(stdout);
    fprintf(stderr, "%s: error: %s\n", cli->tool, err->msg);
    sc_cleanup_run(1);
    exit(err->code ? err->code : 1);
}

/* The top-level config sections of all the tools. */
static const char *const pipeline_sections[] = {"skeleton",   "body",       "envelope",      "fixed",
                                                "tetgen",     "material", /* mesh-prep */
                                                "skin",                   /* skin-weights */
                                                "motion",     "retarget",   "kinematics",    "contact_estimation",
                                                "dynamics", /* inverse-dynamics */
                                                "simulation", "controller", "perturbations", "contact",
                                                "ground",     "output",                                  /* simulate */
                                                "sampling",   "feedback",   "render",        "pipeline", /* later stages, scripts/pipeline.sh */
                                                NULL};

void sc_cli_ignore_other_sections(sc_cfg *cfg)
{
    sc_cfg_node *root = sc_cfg_root(cfg);
    for (const char *const *s = pipeline_sections; *s; s++) sc_cfg_ignore(root, *s);
}

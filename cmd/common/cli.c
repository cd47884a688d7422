#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "core/log.h"
#include "io/config.h"

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
            "            checkpoint (run again with --resume), 7 completed only part of the clip\n");
    exit(code);
}

void sc_cli_parse(sc_cli *cli, int argc, char **argv, const char *tool, const char *usage,
                  int min_inputs, int max_inputs, int need_config, int need_output, sc_cli_extra_fn extra)
{
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
            if (a[1] == 'c') cli->config = next;
            else if (a[1] == 'o') cli->output = next;
            else {
                char *end;
                unsigned long long v = strtoull(next, &end, 10);
                if (*end || end == next || (a[2] == 't' && (v < 1 || v > 1024))) {
                    fprintf(stderr, "%s: %s expects a %s, got '%s'\n", tool, a,
                            a[2] == 't' ? "thread count in 1..1024" : "non-negative integer", next);
                    exit(SC_EUSAGE);
                }
                if (a[2] == 's') { cli->seed = v; cli->seed_given = 1; }
                else cli->threads = (int)v;
            }
        } else if (a[0] == '-' && a[1]) {
            int used = 1;
            if (extra && extra(a, next, &used)) {
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
}

void sc_cli_die(const sc_cli *cli, const sc_err *err)
{
    fprintf(stderr, "%s: error: %s\n", cli->tool, err->msg);
    exit(err->code ? err->code : 1);
}

/* The top-level config sections of all the tools. */
static const char *const pipeline_sections[] = {
    "skeleton", "body", "envelope", "fixed", "tetgen", "material",              /* mesh-prep */
    "skin",                                                                      /* skin-weights */
    "motion", "retarget", "kinematics", "contact_estimation", "dynamics",        /* inverse-dynamics */
    "simulation", "controller", "perturbations", "contact", "ground", "output",  /* simulate */
    "sampling", "feedback", "render", "pipeline",                                /* later stages, scripts/pipeline.sh */
    NULL};

void sc_cli_ignore_other_sections(sc_cfg *cfg)
{
    sc_cfg_node *root = sc_cfg_root(cfg);
    for (const char *const *s = pipeline_sections; *s; s++) sc_cfg_ignore(root, *s);
}

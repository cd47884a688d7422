/* Shared command-line handling for the softcon tools: `tool -c config.yaml [-o out.h5]
 * [options] [inputs]`, --help, --version, -v/-q, --seed, --threads. Only cmd/ prints and exits. */
#ifndef SC_CLI_H
#define SC_CLI_H
#include <stdint.h>
#include "core/status.h"

#define SC_CLI_MAX_INPUTS 8

typedef struct sc_cli {
    const char *tool;
    const char *config;            /* -c */
    const char *output;            /* -o */
    const char *inputs[SC_CLI_MAX_INPUTS];
    int ninputs;
    uint64_t seed;                 /* --seed, default 1 */
    int seed_given;
    int threads;                   /* --threads, default 1 */
    int argc;
    char **argv;
} sc_cli;

/* A tool's own option: called with an option the common parser does not know and the next
 * argument (NULL at the end); returns 1 and sets *used (1: the option alone, 2: with its
 * value) if it is the tool's, else 0. */
typedef int (*sc_cli_extra_fn)(const char *name, const char *value, int *used);

/* Parses argv; prints usage and exits 0 for --help / --version; exits SC_EUSAGE on bad usage.
 * extra (may be NULL) takes the tool's own options. */
void sc_cli_parse(sc_cli *cli, int argc, char **argv, const char *tool, const char *usage,
                  int min_inputs, int max_inputs, int need_config, int need_output, sc_cli_extra_fn extra);
/* Prints "tool: message" on stderr and exits with err->code. */
void sc_cli_die(const sc_cli *cli, const sc_err *err) __attribute__((noreturn));

#endif

#ifndef SC_CLI_CONFIG
#define SC_CLI_CONFIG
struct sc_cfg;
/* One config file may carry the sections of several tools: each tool reads its own and
 * calls this to leave the others' alone (any other top-level key is still an error). */
void sc_cli_ignore_other_sections(struct sc_cfg *cfg);
#endif

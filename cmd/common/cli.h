/* Shared command-line handling for the softcon tools: `tool -c config.yaml [-o out.h5]
 * [options] [inputs]`, --help, --version, -v/-q, --seed, --threads. Only cmd/ prints and exits.
 *
 * What every tool gets from sc_cli_parse, before it does any work:
 *  - usage errors exit 1 (SC_EUSAGE): unknown options, a missing value, `-o ''`;
 *  - the output must not be the same file (device and inode, so links and other spellings
 *    count) as any input or the config: exit 1. Files named by a tool's own options join the
 *    check through sc_cli_add_input / sc_cli_add_output;
 *  - SIGINT, SIGTERM, SIGHUP and SIGUSR1 remove every temporary file and unfinished output in
 *    the registry of core/cleanup.h (filled by the HDF5 layer and the file writers) and end the
 *    process by the signal (shell status 128 + N); signals ignored at start-up (nohup, a
 *    background job's SIGINT) stay ignored. A tool that must stop cleanly instead (write a
 *    checkpoint, exit with its own code) calls sc_cli_poll_signals() and checks
 *    sc_cli_stop_requested() at safe points; a second signal then ends it at once;
 *  - at exit the temporary files still registered are removed; sc_cli_die removes the
 *    unfinished outputs too, so a failed run leaves nothing;
 *  - the environment variables of environment.h are read and handed to the library first;
 *  - library code that cannot return an error (an ODE assertion outside a step) ends the process
 *    through sc_fatal with the tool's name, its code and the same clean-up. */
#ifndef SC_CLI_H
#define SC_CLI_H
#include <stdint.h>
#include "core/status.h"

#define SC_CLI_MAX_INPUTS 8
#define SC_CLI_MAX_FILES  16

/* need_output of sc_cli_parse */
enum {
    SC_CLI_NO_OUTPUT = 0,       /* -o optional */
    SC_CLI_OUTPUT = 1,          /* -o required; it may not be an input or the config */
    SC_CLI_OUTPUT_IN_PLACE = 2, /* -o required; it may be an input (the tool replaces it atomically) */
    SC_CLI_OUTPUT_DIR = 3       /* -o required, a folder the tool fills (render) */
};

typedef struct sc_cli {
    const char *tool;
    const char *config; /* -c */
    const char *output; /* -o */
    const char *inputs[SC_CLI_MAX_INPUTS];
    int ninputs;
    uint64_t seed; /* --seed, default 1 */
    int seed_given;
    int threads; /* --threads, default 1 */
    int argc;
    char **argv;
    /* every file the run reads / writes, for the same-file check */
    const char *read[SC_CLI_MAX_FILES], *written[SC_CLI_MAX_FILES];
    int nread, nwritten, in_place;
} sc_cli;

/* A tool's own option: called with an option the common parser does not know and the next
 * argument (NULL at the end); returns 1 and sets *used (1: the option alone, 2: with its
 * value) if it is the tool's, -1 if it is the tool's but needs a value that is missing,
 * else 0. */
typedef int (*sc_cli_extra_fn)(const char *name, const char *value, int *used);

/* Parses argv; prints usage and exits 0 for --help / --version; exits SC_EUSAGE on bad usage
 * or when the output is an input or the config; exits SC_EIO when an output file cannot be
 * created (probed before any work). extra (may be NULL) takes the tool's own options.
 * need_output: one of SC_CLI_*OUTPUT*. Installs the signal and exit handlers described above. */
void sc_cli_parse(sc_cli *cli, int argc, char **argv, const char *tool, const char *usage, int min_inputs, int max_inputs, int need_config,
                  int need_output, sc_cli_extra_fn extra);
/* Another file the run reads (an option's value: simulate --trajectory) or writes (mesh-prep
 * --surface-obj, the .xdmf beside an output): checked against the other side at once, exit
 * SC_EUSAGE naming both on a clash. NULL is ignored. */
void sc_cli_add_input(sc_cli *cli, const char *path);
void sc_cli_add_output(sc_cli *cli, const char *path);
/* Prints "tool: error: message" on stderr, removes temporary files and unfinished outputs
 * (core/cleanup.h) and exits with err->code. */
void sc_cli_die(const sc_cli *cli, const sc_err *err) __attribute__((noreturn));

/* Opt-in for tools that stop at safe points: SIGINT, SIGTERM, SIGHUP and SIGUSR1 only record
 * the signal; sc_cli_stop_requested() returns its number (0: none). Temporary files are still
 * removed at exit. */
void sc_cli_poll_signals(void);
int sc_cli_stop_requested(void);

#endif

#ifndef SC_CLI_CONFIG
#define SC_CLI_CONFIG
struct sc_cfg;
/* One config file may carry the sections of several tools: each tool reads its own and
 * calls this to leave the others' alone (any other top-level key is still an error). */
void sc_cli_ignore_other_sections(struct sc_cfg *cfg);
#endif

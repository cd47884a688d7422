/* What a failed or interrupted run must not leave behind: a process-wide registry of the
 * temporary files it is writing and of the outputs it has finished but whose run is not over.
 *
 * The HDF5 layer registers every temporary "<out>.tmp.*" (sc_temp_name) it creates (sc_h5_create, sc_h5_create_from) and
 * forgets it when the file is committed or aborted; sc_file_commit and the other writers that
 * go through a temporary do the same. A tool that writes several outputs registers each finished one
 * as SC_CLEANUP_OUTPUT, so that a failure later in the run removes it too (simulate: sim.h5
 * before sim.xdmf). cmd/common/cli.c installs the handlers that use the registry: on SIGINT,
 * SIGTERM and SIGHUP, and in sc_cli_die, everything registered is removed; at a normal exit the
 * temporary files still registered are removed and the outputs are kept.
 *
 * sc_cleanup_run is async-signal-safe (unlink, rmdir, kill, waitpid only); registering and
 * forgetting are thread-safe and block those signals while they change the registry. A fixed
 * number of slots (SC_CLEANUP_SLOTS), no allocation. */
#ifndef SC_CLEANUP_H
#define SC_CLEANUP_H
#include <stddef.h>
#include <sys/types.h>

#define SC_CLEANUP_SLOTS 64

typedef enum {
    SC_CLEANUP_TEMP = 0,   /* a file being written: removed on failure, on a signal and at exit */
    SC_CLEANUP_OUTPUT = 1, /* a finished output of an unfinished run: removed on failure or a signal */
    SC_CLEANUP_DIR = 2     /* a directory this run created: rmdir'ed (if empty) after the files */
} sc_cleanup_kind;

/* Registers path (copied). Returns 0, or -1 when the path is too long or every slot is taken
 * (the caller then just loses the protection; nothing else fails). */
int sc_cleanup_add(const char *path, sc_cleanup_kind kind);
/* Forgets path (every slot holding it); unknown paths are ignored. */
void sc_cleanup_forget(const char *path);
/* A child process (tetgen, ffmpeg) to terminate before its files are removed; 0 = none. */
void sc_cleanup_set_child(pid_t pid);
/* Removes the registered temporary files (SC_CLEANUP_TEMP), and with include_outputs the
 * outputs and directories too, then forgets them. Async-signal-safe. */
void sc_cleanup_run(int include_outputs);
/* Forgets every SC_CLEANUP_OUTPUT and SC_CLEANUP_DIR entry: the run succeeded. */
void sc_cleanup_keep_outputs(void);
/* Number of registered entries (tests). */
int sc_cleanup_count(void);

/* The temporary name a writer uses for path: "<path>.tmp.<pid>.<8 hex digits>", unique per
 * process and per call (a counter plus random bits), so two runs writing the same file (or a
 * run and its own earlier, killed attempt) never share a temporary file. Returns 0, or -1 when
 * the name does not fit out_size, PATH_MAX or (its last component) NAME_MAX. */
#define SC_TEMP_SUFFIX_MAX 24 /* ".tmp." + a pid of up to 10 digits + "." + 8 hex digits */
int sc_temp_name(const char *path, char *out, size_t out_size);
/* Would every temporary name of path fit (the longest pid assumed)? 1 yes, 0 no. */
int sc_temp_name_fits(const char *path);

/* Last resort for library code that can neither continue nor return an error (an ODE
 * assertion outside a step): calls the handler installed by the program (the CLI's prints
 * "tool: error: msg", cleans up and exits with code), else prints to stderr and aborts. */
typedef void (*sc_fatal_fn)(int code, const char *msg);
void sc_set_fatal_handler(sc_fatal_fn fn);
void sc_fatal(int code, const char *msg) __attribute__((noreturn));

#endif

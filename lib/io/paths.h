/* Finding input files named in a config: next to the config, then in mocap/ (the working
 * directory's and the installation's), then in the mocap path's directories (the tools take it
 * from $SOFTCON_MOCAP_PATH). */
#ifndef SC_PATHS_H
#define SC_PATHS_H
#include <stddef.h>
#include "core/status.h"

/* Resolves `name` into out; SC_EIO with every place tried when it is nowhere. `where` names
 * the config location for the message. */
int sc_find_input(const char *name, const char *config_path, int search_mocap, const char *where, char *out, size_t out_size, sc_err *err);
/* The mocap path: directories separated by ':' (copied; NULL or "" for none, the default). */
void sc_paths_set_mocap_path(const char *dirs);
#include <stdio.h>
/* Opens a temporary file beside path, unique to the run (core/cleanup.h sc_temp_name; its name
 * into tmp, which needs strlen(path) + SC_TEMP_SUFFIX_MAX + 1 bytes) for writing and registers it for clean-up
 * (core/cleanup.h), so an interrupted or failed run does not leave it behind. NULL and SC_EIO
 * in err on failure. */
FILE *sc_file_open_tmp(const char *path, const char *mode, char *tmp, size_t tmp_size, sc_err *err);
/* Flushes, syncs and closes a file written to `tmp` and renames it onto `path`; on any failure
 * removes tmp and returns SC_EIO naming the file and the system's reason (ENOSPC: "No space
 * left on device"). Always closes f and forgets tmp in the clean-up registry. */
int sc_file_commit(FILE *f, const char *tmp, const char *path, sc_err *err);
/* Directory part of a path ("." when none). */
void sc_dirname(const char *path, char *out, size_t out_size);

#endif

/* Finding input files named in a config: next to the config, then in mocap/ (the working
 * directory's and the installation's), then in the directories of $SOFTCON_MOCAP_PATH. */
#ifndef SC_PATHS_H
#define SC_PATHS_H
#include <stddef.h>
#include "core/status.h"

/* Resolves `name` into out; SC_EIO with every place tried when it is nowhere. `where` names
 * the config location for the message. */
int sc_find_input(const char *name, const char *config_path, int search_mocap, const char *where,
                  char *out, size_t out_size, sc_err *err);
/* Closes a file written to `tmp` and renames it onto `path`; on any failure removes tmp and
 * returns SC_EIO naming the file and the system's reason. Always closes f. */
#include <stdio.h>
int sc_file_commit(FILE *f, const char *tmp, const char *path, sc_err *err);
/* Directory part of a path ("." when none). */
void sc_dirname(const char *path, char *out, size_t out_size);

#endif

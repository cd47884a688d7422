/* Bridge to the TetGen program (TetGen is AGPL: we run the executable, never link libtet).
 * The envelope and the fixed nodes (as isolated vertices) are written as one .poly. */
#ifndef SC_TETGEN_H
#define SC_TETGEN_H
#include "io/obj.h"
#include "mesh/tetmesh.h"

typedef struct sc_tetgen_opts {
    const char *program; /* default: sc_tetgen_set_defaults' or "tetgen" on PATH */
    double radius_edge;  /* -q ratio bound, e.g. 1.5 */
    double min_dihedral; /* -q dihedral bound (degrees), e.g. 12 */
    double max_volume;   /* -a bound (m^3); <= 0: none */
    int keep_files;      /* keep the scratch directory (its path is logged) */
} sc_tetgen_opts;

/* Tetrahedralizes the closed surface with the extra points inserted. `extra_index[i]` gets the
 * mesh node of extra point i (every extra point must survive as a node, else SC_EEXTERNAL).
 * `command` (may be NULL) gets the command line used, for provenance. */
int sc_tetgen_run(const sc_trimesh *surface, int nextra, const double *extra, const sc_tetgen_opts *o, sc_tetmesh *out, int *extra_index,
                  char *command, size_t command_size, sc_err *err);
/* The program run when the options name none (NULL or "": "tetgen") and the folder of the
 * scratch directories (NULL: /tmp), for the process; copied. The tools pass $SOFTCON_TETGEN and
 * $TMPDIR. */
void sc_tetgen_set_defaults(const char *program, const char *scratch_dir);

#endif

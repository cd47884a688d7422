/* The environment variables softcon honours (README.md), read in this one place and handed to
 * the library, which never reads the environment. Every program calls sc_environment_apply at
 * start: the tools through sc_cli_parse and sc_longrun_start, and the test and benchmark
 * programs themselves (they include this header, so all read the variables the same way).
 *   SOFTCON_MOCAP_PATH          folders searched for the clips a config names (io/paths.h)
 *   SOFTCON_FEM_KERNEL          the FEM kernel instead of the CPU's widest (sim/fem.h)
 *   SOFTCON_TETGEN, TMPDIR      the TetGen program and its scratch folder (mesh/tetgen.h)
 *   SOFTCON_H5_GUARD=0          no guard process for HDF5 reads (io/h5.h);
 *   SOFTCON_H5_GUARD_SECONDS    its CPU-time limit; SOFTCON_H5_GUARD_MEMORY_MB its memory limit
 *   SLURM_NTASKS                the task count MPI must match (par/par.h, sc_environment_tasks) */
#ifndef SC_ENVIRONMENT_H
#define SC_ENVIRONMENT_H
#include <stdlib.h>
#include <string.h>
#include "io/h5.h"
#include "io/paths.h"
#include "mesh/tetgen.h"
#include "sim/fem.h"

static inline void sc_environment_apply(void)
{
    sc_paths_set_mocap_path(getenv("SOFTCON_MOCAP_PATH"));
    sc_fem_kernel_override(getenv("SOFTCON_FEM_KERNEL"));
    sc_tetgen_set_defaults(getenv("SOFTCON_TETGEN"), getenv("TMPDIR"));
    const char *guard = getenv("SOFTCON_H5_GUARD"), *seconds = getenv("SOFTCON_H5_GUARD_SECONDS"), *memory = getenv("SOFTCON_H5_GUARD_MEMORY_MB");
    sc_h5_guard_config(!(guard && !strcmp(guard, "0")), seconds ? atof(seconds) : 0);
    sc_h5_guard_memory_limit(memory ? atof(memory) : 0);
}

/* SLURM_NTASKS, the task count sc_par_init expects (0 when unset). */
static inline int sc_environment_tasks(void)
{
    const char *n = getenv("SLURM_NTASKS");
    return n ? atoi(n) : 0;
}

#endif

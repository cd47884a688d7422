/* Private to lib/sim: the table of one FEM kernel variant (see fem_kernel.h), and the
 * helpers the variants share. */
#ifndef SC_FEM_INTERNAL_H
#define SC_FEM_INTERNAL_H
#include "sim/fem.h"

typedef struct sc_fem_kernel {
    int id;    /* SC_FEM_KERNEL_* */
    int lanes; /* tets per SIMD group */
    void (*elastic)(const sc_fem *fem, const double *x, const double *pose_rest, double *warm, double *force, sc_fem_stats *stats);
    void (*rayleigh)(const sc_fem *fem, const double *v, const double *warm, double beta, double *force);
    int (*polar_batch)(int n, const double *f, double *q, double *h, int *fallback, long *iters);
} sc_fem_kernel;

extern const sc_fem_kernel sc_fem_kernel_avx2;
extern const sc_fem_kernel sc_fem_kernel_avx512;
extern const sc_fem_kernel sc_fem_kernel_avx2_f32;
extern const sc_fem_kernel sc_fem_kernel_avx512_f32;

/* The exact polar rotation of the row-major g (sc_polar: max-trace, robust when inverted or
 * degenerate) as a quaternion in the hemisphere of q0. */
void sc_fem_polar_exact_start(const double *g, const double *q0, double *q);

#endif

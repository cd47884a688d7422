/* The FEM element kernels for AVX2 + FMA in single precision (simulation.fem_precision:
 * single): 8 tets per group. */
#define FK_VW    8
#define FK_F32   1
#define FK_ID    SC_FEM_KERNEL_AVX2_F32
#define FK_TABLE sc_fem_kernel_avx2_f32
#include "sim/fem_kernel.h"

/* The FEM element kernels for AVX-512 (x86-64-v4) in single precision (simulation.fem_precision:
 * single): 16 tets per group. Called only after sc_fem_init found AVX-512 on the CPU. */
#define FK_VW    16
#define FK_F32   1
#define FK_ID    SC_FEM_KERNEL_AVX512_F32
#define FK_TABLE sc_fem_kernel_avx512_f32
#include "sim/fem_kernel.h"

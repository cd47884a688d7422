/* The FEM element kernels for AVX2 + FMA (the build's baseline, x86-64-v3): 4 tets per group. */
#define FK_VW    4
#define FK_ID    SC_FEM_KERNEL_AVX2
#define FK_TABLE sc_fem_kernel_avx2
#include "sim/fem_kernel.h"

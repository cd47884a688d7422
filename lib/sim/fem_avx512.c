/* The FEM element kernels for AVX-512 (x86-64-v4): 8 tets per group. This file alone is
 * compiled with -march=x86-64-v4 (Makefile); sc_fem_init calls into it only after checking
 * the CPU, so the build still runs on AVX2-only machines. */
#define FK_VW    8
#define FK_ID    SC_FEM_KERNEL_AVX512
#define FK_TABLE sc_fem_kernel_avx512
#include "sim/fem_kernel.h"

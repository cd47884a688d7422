/* Output helpers shared by the tools: the XDMF path beside an HDF5 output. */
#ifndef SC_OUTPUT_H
#define SC_OUTPUT_H
#include <stddef.h>

/* "dir/name.h5" -> xdmf "dir/name.xdmf" and the HDF5 name relative to it ("name.h5"). */
void sc_output_xdmf_paths(const char *h5_path, char *xdmf, size_t xn, char *h5_rel, size_t hn);

#endif

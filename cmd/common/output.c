/* Output paths the tools share (output.h). */
#include <stdio.h>
#include <string.h>
#include "output.h"

void sc_output_xdmf_paths(const char *h5_path, char *xdmf, size_t xn, char *h5_rel, size_t hn)
{
    const char *slash = strrchr(h5_path, '/');
    const char *base = slash ? slash + 1 : h5_path;
    const char *dot = strrchr(base, '.');
    size_t stem = dot ? (size_t)(dot - h5_path) : strlen(h5_path);
    snprintf(xdmf, xn, "%.*s.xdmf", (int)stem, h5_path);
    snprintf(h5_rel, hn, "%s", base);
}

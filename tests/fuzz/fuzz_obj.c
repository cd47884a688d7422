/* libFuzzer harness: the OBJ reader (lib/io/obj.c) on arbitrary text; every triangle it
 * returns must index its vertices and every coordinate be finite. */
#include <math.h>
#include "common.h"
#include "io/obj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_fuzz_init();
    sc_trimesh m;
    sc_obj_info info;
    sc_err err;
    if (sc_obj_parse_ex((const char *)data, size, "fuzz.obj", &m, &info, &err) == SC_OK) {
        SC_FUZZ_ASSERT(m.ntris > 0 && info.nfaces > 0);
        for (size_t k = 0; k < 3 * (size_t)m.nverts; k++) SC_FUZZ_ASSERT(isfinite(m.verts[k]));
        for (size_t k = 0; k < 3 * (size_t)m.ntris; k++) SC_FUZZ_ASSERT(m.tris[k] >= 0 && m.tris[k] < m.nverts);
        sc_trimesh_free(&m);
    } else {
        SC_FUZZ_ASSERT(err.code == SC_EINPUT || err.code == SC_EIO);
    }
    return 0;
}

/* libFuzzer harness: the reference.h5 reader (sc_reference_read_image: guarded HDF5 read and
 * the checks of lib/store/reference.c), then target interpolation on what it accepted. */
#include <math.h>
#include "common.h"
#include "store/reference.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_fuzz_init();
    sc_reference r;
    sc_err err;
    if (sc_reference_read_image(data, size, "fuzz_reference.h5", &r, &err) == SC_OK) {
        SC_FUZZ_ASSERT(r.n >= 1 && r.nb >= 1 && r.nb <= SC_BODY_MAX_BONES);
        sc_quat q[SC_BODY_MAX_BONES];
        sc_reference_targets_at(&r, r.time[0] + 0.37 * (r.time[r.n - 1] - r.time[0]), q);
        for (int j = 0; j < r.nb; j++) SC_FUZZ_ASSERT(isfinite(q[j].w) && isfinite(q[j].x));
        sc_reference_free(&r);
    } else {
        SC_FUZZ_ASSERT(err.code == SC_EINPUT || err.code == SC_EIO);
    }
    SC_FUZZ_H5_CLOSED();
    return 0;
}

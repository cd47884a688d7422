/* libFuzzer harness: the controller's trajectory reader (sc_trajectory_read_image, store/trajectory.h:
 * /time, /bones/names and /targets/local_quat of an inverse-dynamics or sampler output, guarded
 * HDF5 read and checks), matched against a 16-bone character, then targets sampled in time. */
#include <math.h>
#include "common.h"
#include "store/openloop.h"
#include "store/trajectory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_fuzz_init();
    sc_controller c;
    sc_err err;
    const sc_model *m = sc_fuzz_model();
    if (sc_trajectory_read_image(data, size, "fuzz_trajectory.h5", NULL, m, &c, &err) == SC_OK) {
        sc_quat q[16];
        double end = sc_controller_duration(&c);
        for (int k = 0; k <= 4; k++) {
            sc_controller_targets(&c, end * k / 4 - 0.1, q);
            for (int b = 0; b < m->nbones; b++) SC_FUZZ_ASSERT(isfinite(q[b].w) && fabs(q[b].w) <= 1 + 1e-9);
        }
        sc_controller_free(&c);
    } else {
        SC_FUZZ_ASSERT(err.code == SC_EINPUT || err.code == SC_EIO);
    }
    SC_FUZZ_H5_CLOSED();
    return 0;
}

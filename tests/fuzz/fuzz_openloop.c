/* libFuzzer harness: learn-feedback's reader of an openloop.h5 of a gait cycle
 * (sc_openloop_cycle_read_image: schema, /cycle, bone and DoF names matched against the tiny
 * character of the seeds, segments, start state; HDF5 layer and every check), seeded with
 * sample-openloop's writer (sc_openloop_write). What it accepts must satisfy what the policy
 * built from it (sc_policy_from_openloop) relies on. */
#include <math.h>
#include "common.h"
#include "store/openloop.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_fuzz_init();
    static sc_model m;
    static sc_control_dofs dofs;
    if (!m.nbones) {
        sc_fuzz_tiny_character(&m, 1);
        sc_control_dofs_init(&m, &dofs);
    }
    sc_openloop_cycle o;
    sc_err err;
    if (sc_openloop_cycle_read_image(data, size, "fuzz_openloop.h5", &m, &dofs, &o, &err) == SC_OK) {
        SC_FUZZ_ASSERT(o.fragments >= 1 && o.nseg >= o.fragments);
        SC_FUZZ_ASSERT(o.cycle.t0 >= 0 && o.cycle.t1 > o.cycle.t0 && isfinite(o.cycle.t1));
        for (int k = 0; k < o.nseg; k++) {
            SC_FUZZ_ASSERT(o.steps[k] >= 1 && o.ref_t1[k] > o.ref_t0[k] && o.ref_t0[k] >= 0 && isfinite(o.ref_t1[k]));
            for (int d = 0; d < dofs.n; d++) SC_FUZZ_ASSERT(fabs(o.offsets[(size_t)k * dofs.n + d]) <= 10);
        }
        for (int i = 0; i < 3; i++) SC_FUZZ_ASSERT(isfinite(o.start_root[i]) && isfinite(o.start_vel[i]));
        for (int b = 0; b < m.nbones; b++) {
            const double *q = o.start_quat + 4 * b;
            double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
            SC_FUZZ_ASSERT(n >= 0.5 && n <= 2);
            for (int i = 0; i < 3; i++) SC_FUZZ_ASSERT(isfinite(o.start_w[3 * b + i]));
        }
        SC_FUZZ_ASSERT(o.base == SC_BASE_ID || o.base == SC_BASE_REFERENCE);
        sc_openloop_cycle_free(&o);
    } else {
        SC_FUZZ_ASSERT(err.code == SC_EINPUT || err.code == SC_EIO);
    }
    SC_FUZZ_H5_CLOSED();
    return 0;
}

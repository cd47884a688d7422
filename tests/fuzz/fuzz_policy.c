/* libFuzzer harness: the policy.h5 reader of simulate's policy controller (sc_policy_read_image:
 * schema, character hash, bone, feature and DoF names matched against the tiny character of the
 * seeds, every dataset of the law and the cycle, each checked; HDF5 layer included), seeded with
 * learn-feedback's writer (sc_policy_write), with and without actions. Then the law is evaluated
 * at every fragment, feedback on and off: finite actions within max_action of a_bar. */
#include <math.h>
#include "common.h"
#include "store/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_fuzz_init();
    static sc_model m;
    static sc_control_dofs dofs;
    if (!m.nbones) {
        sc_fuzz_tiny_character(&m, 1);
        sc_control_dofs_init(&m, &dofs);
    }
    sc_policy p;
    sc_err err;
    if (sc_policy_read_image(data, size, "fuzz_policy.h5", &m, &dofs, &p, &err) == SC_OK) {
        SC_FUZZ_ASSERT(p.nfrag >= 1 && p.nbase >= 2 && p.nact >= 0 && p.nact <= SC_MAX_ACTIONS && p.nb == m.nbones && p.ndof == dofs.n);
        SC_FUZZ_ASSERT(isfinite(p.max_action) && p.max_action >= 0 && p.period > 0 && isfinite(p.period));
        for (int i = 0; i < p.nact; i++) SC_FUZZ_ASSERT(p.act[i] >= 0 && p.act[i] < dofs.n);
        for (int s = 1; s < p.nbase; s++) SC_FUZZ_ASSERT(p.base_time[s] > p.base_time[s - 1]);
        double a[SC_MAX_ACTIONS];
        for (int j = 0; j < p.nfrag; j++) {
            SC_FUZZ_ASSERT(p.steps[j] >= 1 && p.ref_t1[j] > p.ref_t0[j]);
            double s[SC_FEATURES];
            for (int k = 0; k < SC_FEATURES; k++) s[k] = p.s_bar[(size_t)j * SC_FEATURES + k] + 0.1 * (k % 3 - 1);
            for (int fb = 0; fb < 2; fb++) {
                sc_policy_actions(&p, j, s, fb, a);
                for (int i = 0; i < p.nact; i++) {
                    double abar = p.a_bar[(size_t)j * p.nact + i];
                    SC_FUZZ_ASSERT(isfinite(a[i]) && fabs(a[i] - abar) <= p.max_action * (1 + 1e-12));
                }
            }
        }
        sc_policy_free(&p);
    } else {
        SC_FUZZ_ASSERT(err.code == SC_EINPUT || err.code == SC_EIO);
    }
    SC_FUZZ_H5_CLOSED();
    return 0;
}

#include <stddef.h>
#include "model/targets.h"

void sc_targets_interpolate(const double *times, int n, const double *quats, int nb, double t, sc_quat *out)
{
    int k;
    if (n <= 1 || t <= times[0]) {
        k = 0;
    } else if (t >= times[n - 1]) {
        k = n - 1;
    } else {
        int lo = 0, hi = n - 1; /* times[lo] <= t < times[hi] */
        while (hi - lo > 1) {
            int mid = lo + (hi - lo) / 2;
            if (times[mid] <= t) lo = mid;
            else hi = mid;
        }
        if (times[lo] != t) {
            double a = (t - times[lo]) / (times[hi] - times[lo]);
            const double *q0 = quats + (size_t)lo * nb * 4, *q1 = quats + (size_t)hi * nb * 4;
            for (int b = 0; b < nb; b++)
                out[b] = sc_q_slerp((sc_quat){q0[4 * b], q0[4 * b + 1], q0[4 * b + 2], q0[4 * b + 3]},
                                    (sc_quat){q1[4 * b], q1[4 * b + 1], q1[4 * b + 2], q1[4 * b + 3]}, a);
            return;
        }
        k = lo;
    }
    const double *q = quats + (size_t)k * nb * 4;
    for (int b = 0; b < nb; b++) out[b] = (sc_quat){q[4 * b], q[4 * b + 1], q[4 * b + 2], q[4 * b + 3]};
}

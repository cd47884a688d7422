/* The library's one target interpolator (PD targets, reference poses, policies' bases). */
#ifndef SC_TARGETS_H
#define SC_TARGETS_H
#include "core/mathx.h"

/* nb local rotations (w, x, y, z doubles) per sample at increasing times[n], slerped to time t
 * and clamped to the ends. At a sample's own time the sample is returned exactly (bit for bit),
 * so a trajectory recorded at the simulation rate replays exactly what was applied. */
void sc_targets_interpolate(const double *times, int n, const double *quats, int nb, double t, sc_quat *out);

#endif

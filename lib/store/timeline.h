/* The timeline of a parallel run (par.h's phases) in an output's /run group: one owner of its layout. */
#ifndef SC_STORE_TIMELINE_H
#define SC_STORE_TIMELINE_H
#include "core/status.h"
#include "io/h5.h"

/* GROUP/timeline [rows, ranks, phases] seconds, GROUP/timeline_segment [rows] (NULL: omitted),
 * and GROUP's attributes timeline_<phase>_share: each phase's share of all ranks' wall time. */
int sc_timeline_write(sc_h5 *f, const char *group, int rows, int ranks, const double *t, const int *segment, sc_err *err);
/* "simulate 91.2 %, wait 4.1 %, ..." over rows [from, rows) and every rank. */
void sc_timeline_shares(int rows, int ranks, const double *t, int from, char *out, size_t cap);

#endif

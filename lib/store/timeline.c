#include <stdio.h>
#include "par/par.h"
#include "store/timeline.h"

static void phase_totals(int rows, int ranks, const double *t, int from, double *sum, double *total)
{
    *total = 0;
    for (int k = 0; k < SC_PAR_PHASES; k++) sum[k] = 0;
    for (int i = from < 0 ? 0 : from; i < rows; i++)
        for (int r = 0; r < ranks; r++)
            for (int k = 0; k < SC_PAR_PHASES; k++) {
                double v = t[((size_t)i * (size_t)ranks + (size_t)r) * SC_PAR_PHASES + (size_t)k];
                sum[k] += v;
                *total += v;
            }
}

void sc_timeline_shares(int rows, int ranks, const double *t, int from, char *out, size_t cap)
{
    double sum[SC_PAR_PHASES], total;
    phase_totals(rows, ranks, t, from, sum, &total);
    size_t len = 0;
    out[0] = 0;
    for (int k = 0; k < SC_PAR_PHASES && len < cap; k++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s %.1f %%", k ? ", " : "", sc_par_phase_names[k], total > 0 ? 100 * sum[k] / total : 0);
}

int sc_timeline_write(sc_h5 *f, const char *group, int rows, int ranks, const double *t, const int *segment, sc_err *err)
{
    if (rows < 1 || !t) return SC_OK;
    char path[256], desc[512], name[64];
    snprintf(desc, sizeof desc, "seconds of each rank's wall time per phase (phases: %s, %s, %s, %s, %s), a row per stage of the run",
             sc_par_phase_names[0], sc_par_phase_names[1], sc_par_phase_names[2], sc_par_phase_names[3], sc_par_phase_names[4]);
    snprintf(path, sizeof path, "%s/timeline", group);
    int rc = sc_h5_write_f64(f, path, 3, (size_t[]){(size_t)rows, (size_t)ranks, SC_PAR_PHASES}, t, "s", desc, err);
    if (!rc)
        rc = sc_h5_write_strings(f, (snprintf(path, sizeof path, "%s/timeline_phases", group), path), SC_PAR_PHASES, sc_par_phase_names,
                                 "the phases of the timeline's last axis", err);
    if (!rc && segment)
        rc = sc_h5_write_i32(f, (snprintf(path, sizeof path, "%s/timeline_segment", group), path), 1, (size_t[]){(size_t)rows}, segment,
                             "the segment each row of the timeline sampled (-1: the start-up before the first)", err);
    double sum[SC_PAR_PHASES], total;
    phase_totals(rows, ranks, t, 0, sum, &total);
    for (int k = 0; !rc && k < SC_PAR_PHASES; k++) {
        snprintf(name, sizeof name, "timeline_%s_share", sc_par_phase_names[k]);
        rc = sc_h5_attr_f64(f, group, name, total > 0 ? sum[k] / total : 0, err);
    }
    return rc;
}

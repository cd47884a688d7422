/* mesh-prep's `reduced:` section (reduced.h). */
#include "settings/reduced.h"
#include <stdio.h>
#include <string.h>
#include "reduced/basis.h"

int sc_reduced_settings_read(sc_cfg *cfg, sc_reduced_settings *s, int *present, sc_err *err)
{
    memset(s, 0, sizeof *s);
    *present = 0;
    sc_cfg_node *root = sc_cfg_root(cfg), *sec = sc_cfg_get(root, "reduced");
    if (!sec) return SC_OK;
    *present = 1;
    int rc = sc_cfg_section(root, "reduced", &sec, err);
    if (rc) return rc;
    long modes;
    if ((rc = sc_cfg_int(sec, "modes", 10, 1, SC_REDUCED_MAX_MODES, &modes, err))) return rc;
    s->modes = (int)modes;
    sc_cfg_node *at = sc_cfg_get(sec, "modes");
    sc_cfg_where(at ? at : sec, s->where, sizeof s->where);
    return SC_OK;
}

int sc_reduced_settings_check(const sc_reduced_settings *s, const sc_model *m, sc_err *err)
{
    if (m->nbones) return sc_fail(err, SC_EINPUT, "%s: `reduced:` is for a boneless character ([P17]); this one has %d bones", s->where, m->nbones);
    const int most = sc_reduced_max_modes(m);
    if (s->modes > most)
        return sc_fail(err, SC_EINPUT, "%s: reduced.modes = %d, but the tet mesh of %d nodes has only %d non-rigid modes (3 x nodes - 6)", s->where,
                       s->modes, m->nnodes, most);
    return SC_OK;
}

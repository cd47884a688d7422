/* skin-weights' settings: the `skin:` section. */
#include "settings/skin.h"

int sc_skin_settings_read(sc_cfg *cfg, sc_skin_settings *s, sc_err *err)
{
    sc_cfg_node *sec;
    s->k = 4;
    s->max_iter = 100;
    s->tol = 1e-8;
    int rc;
    if ((rc = sc_cfg_section(sc_cfg_root(cfg), "skin", &sec, err)) || (rc = sc_cfg_int(sec, "k", 4, 1, 64, &s->k, err)) ||
        (rc = sc_cfg_double_range(sec, "tol", 1e-8, 1e-14, 1e-3, &s->tol, err)) ||
        (rc = sc_cfg_int(sec, "max_iter", 100, 1, 100000, &s->max_iter, err)))
        return rc;
    return SC_OK;
}

/* skin-weights' settings: the config's `skin:` section (k, tol, max_iter). */
#ifndef SC_SETTINGS_SKIN_H
#define SC_SETTINGS_SKIN_H
#include "core/status.h"
#include "io/config.h"

typedef struct sc_skin_settings {
    long k;        /* bones kept per node in the top-k form simulate uses */
    double tol;    /* the BBW solver's tolerance */
    long max_iter; /* its active-set iterations per bone */
} sc_skin_settings;

int sc_skin_settings_read(sc_cfg *cfg, sc_skin_settings *s, sc_err *err);

#endif

/* mesh-prep's `reduced:` section ([P17] 3.3, eq. 2; lib/reduced): the deformation basis stored in
 * character.h5's /reduced for a boneless character.
 *
 *   reduced:
 *     modes: 10     # K: the lowest non-rigid vibration modes kept, 1..30 ([P17]: 5-15), at most
 *                   # 3 x nodes - 6 of the tet mesh
 */
#ifndef SC_SETTINGS_REDUCED_H
#define SC_SETTINGS_REDUCED_H
#include "io/config.h"
#include "model/model.h"

typedef struct sc_reduced_settings {
    int modes;
    char where[256]; /* file:line:col of `modes` (or of the section when absent), for the mesh's check */
} sc_reduced_settings;

/* *present = 0 and nothing read when the config has no `reduced:` section. SC_EINPUT naming the
 * line for a value that is not an integer in 1..SC_REDUCED_MAX_MODES. */
int sc_reduced_settings_read(sc_cfg *cfg, sc_reduced_settings *s, int *present, sc_err *err);
/* SC_EINPUT naming the config line when the tet mesh has fewer non-rigid modes than asked, or
 * has bones (the reduced body is boneless). */
int sc_reduced_settings_check(const sc_reduced_settings *s, const sc_model *m, sc_err *err);

#endif

/* character.h5 (schema softcon.character/1): the sc_model on disk, and character.xdmf beside
 * it so ParaView opens the tet mesh with per-node labels (and skin weights when present). */
#ifndef SC_CHARACTER_H
#define SC_CHARACTER_H
#include "io/h5.h"
#include "sim/model.h"

#define SC_CHARACTER_SCHEMA "softcon.character/1"

/* Writes /skeleton, /tetmesh, /fixed, /surface, /material (and /skin/topk_* when m->skin_k). */
int sc_character_write(sc_h5 *f, const sc_model *m, sc_err *err);
/* Reads a character file; /skin is optional (m->skin_k = 0 when absent) unless require_skin. */
int sc_character_read(const char *path, sc_model *m, int require_skin, sc_err *err);
/* character.xdmf for ParaView; `h5_name` is the HDF5 file name as seen from the XDMF's folder.
 * nbones_weights > 0 adds one attribute per bone from /skin/weights. */
int sc_character_write_xdmf(const char *xdmf_path, const char *h5_name, const sc_model *m, int with_weights, sc_err *err);

#endif

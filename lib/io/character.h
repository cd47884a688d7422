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
/* character.xdmf for ParaView (lib/io/xdmf.h): the tet mesh with fixed_bone, node_mass and
 * volume, and with_weights one weight_<bone> field per bone; the fine surface as a second grid.
 * `h5_name` is the HDF5 file name as seen from the XDMF's folder. */
int sc_character_write_xdmf(const char *xdmf_path, const char *h5_name, const sc_model *m, int with_weights, sc_err *err);
/* /skin/bone_weights/NNN: column NNN (a bone) of /skin/weights as a view (sc_h5_write_view), the
 * form ParaView's Xdmf3 reader reads; write them after /skin/weights, before the commit. */
int sc_character_write_weight_views(sc_h5 *f, const sc_model *m, sc_err *err);
void sc_character_weight_view_path(char *out, size_t n, int bone);

#endif

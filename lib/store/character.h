/* character.h5 (schema softcon.character/1): the sc_model on disk, and character.xdmf beside
 * it so ParaView opens the tet mesh with per-node labels (and skin weights when present). A
 * boneless character ([T12], nbones 0) keeps every group: /skeleton's and /fixed's datasets have
 * 0 rows (docs/formats.md). */
#ifndef SC_CHARACTER_H
#define SC_CHARACTER_H
#include <stdint.h>
#include "io/h5.h"
#include "model/model.h"
#include "mesh/prep.h"
#include "muscle/fibre.h"
#include "reduced/basis.h"
#include "skin/weights.h"

#define SC_CHARACTER_SCHEMA "softcon.character/1"

/* Writes /skeleton, /tetmesh, /fixed, /surface, /material (and /skin/topk_* when m->skin_k). */
int sc_character_write(sc_h5 *f, const sc_model *m, sc_err *err);
/* Reads a character file, a boneless one too (nbones 0); /skin is optional (m->skin_k = 0 when
 * absent) unless require_skin.
 * Everything read is checked (counts, indices, finiteness, signs and ranges: masses, volumes,
 * density and Young's modulus > 0, Poisson ratio in [0, 0.5), coordinates within 1 km, skin
 * weights in [0, 1]): a bad value is SC_EINPUT "file:/path[i]: value v, must be ...". The
 * file is read through sc_h5_read_file (guarded against libhdf5 crashes and hangs). */
int sc_character_read(const char *path, sc_model *m, int require_skin, sc_err *err);
/* A boneless character (m->nbones 0: /skeleton's datasets and /fixed have 0 rows, every node is
 * free, no /skin; mesh-prep's body.letter or body.obj without `skeleton:`, [T12]) is SC_EINPUT
 * "path: a boneless character ...; TOOL needs a character with a skeleton" for the tools that
 * drive bones (skin-weights, inverse-dynamics, sample-openloop, learn-feedback, simulate); the
 * reader itself says so when require_skin. SC_OK for a character with bones. */
int sc_character_require_bones(const char *path, const sc_model *m, const char *tool, sc_err *err);
/* The same from an in-memory file image (name stands for it in messages). */
int sc_character_read_image(const void *data, size_t size, const char *name, sc_model *m, int require_skin, sc_err *err);
/* The reader itself, on an open file (for callers that hold one; unguarded). */
int sc_character_read_h5(sc_h5 *f, sc_model *m, int require_skin, sc_err *err);
/* character.xdmf for ParaView (lib/store/xdmf.h): the tet mesh with fixed_bone, node_mass and
 * volume, and with_weights one weight_<bone> field per bone; the fine surface as a second grid.
 * `h5_name` is the HDF5 file name as seen from the XDMF's folder. */
int sc_character_write_xdmf(const char *xdmf_path, const char *h5_name, const sc_model *m, int with_weights, sc_err *err);
/* /skin/bone_weights/NNN: column NNN (a bone) of /skin/weights as a view (sc_h5_write_view), the
 * form ParaView's Xdmf3 reader reads; write them after /skin/weights, before the commit. */
int sc_character_write_weight_views(sc_h5 *f, const sc_model *m, sc_err *err);
void sc_character_weight_view_path(char *out, size_t n, int bone);
/* skin-weights' output: a copy of the character file `input` with /skin replaced by r and m's
   top-k form (dense weights, their views, top-k arrays, per-bone figures, solver attributes and
   the provenance: created_by, the resolved config), committed to `output` (which may be input). */
int sc_character_write_skinned(const char *input, const char *output, const sc_model *m, const sc_skin_result *r, const char *created_by,
                               const char *config, sc_err *err);
/* /report: mesh-prep's figures of the character it made (attributes; lengths m, volumes m^3,
   masses kg, angles degrees, times s). */
int sc_character_write_report(sc_h5 *f, const sc_prep_report *r, sc_err *err);

/* The root attribute character_hash (sc_model_hash, 16 hex digits) of every file made for one
 * character (reference.h5, openloop.h5, policy.h5), and its one check, for every file a
 * controller or a trajectory comes from: SC_EINPUT "path: made for another character" when the
 * record is not m's. *hash = 0: the file has no record (made before files carried one), which
 * the check lets pass; a record that is not 16 hex digits is SC_EINPUT. */
int sc_character_hash_write(sc_h5 *f, uint64_t hash, sc_err *err);
int sc_character_hash_read(sc_h5 *f, uint64_t *hash, sc_err *err);
int sc_character_hash_check(const char *path, uint64_t hash, const sc_model *m, sc_err *err);
/* Both on an open file: read, then check. */
int sc_character_hash_verify(sc_h5 *f, const sc_model *m, sc_err *err);

/* mesh-prep's output: the whole file at path (written to a temporary, renamed on success) with its
 * provenance, the character, its muscles (may be NULL: none; store/muscles.h), its reduced basis
 * (may be NULL: none; store/reduced.h) and the preparation report. */
int sc_character_save(const char *path, int argc, char *const *argv, const char *config_text, const sc_model *m, const sc_muscles *mu,
                      const sc_reduced_basis *reduced, const sc_prep_report *report, sc_err *err);

#endif

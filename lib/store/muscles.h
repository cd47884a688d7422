/* character.h5's /muscles group ([T12] 4.2), written by mesh-prep for a boneless character with
 * a `muscles:` section and read by the tools that drive it. Part of the softcon.character/1
 * schema (docs/formats.md):
 *   /muscles                  attributes stiffness (Pa), sigma (m), min_ratio, fibres, segments
 *   /muscles/group_names      one per group; group_kinds: 0 longitudinal, 1 radial, 2 helical
 *   /muscles/fibre_group      [fibres]; fibre_first [fibres + 1]: first segment (and point, less
 *                             the fibre's index) of each fibre
 *   /muscles/points           [points, 3] m, the polylines' vertices at rest (fibre by fibre)
 *   /muscles/point_tet        [points], point_bary [points, 4]: their embedding in the tet mesh
 *   /muscles/segments         [segments, 2] point indices; rest_length [segments] m
 *   /muscles/influence_first  [tets + 1], influence_segment, influence_weight: each tet's
 *                             segments and weights of eq. 5 (CSR)
 * The reader rebuilds the muscles from the points (sc_muscles_build) and checks that the stored
 * embedding, rest lengths and weights agree with it, so a file edited inconsistently is
 * refused. */
#ifndef SC_STORE_MUSCLES_H
#define SC_STORE_MUSCLES_H
#include "io/h5.h"
#include "model/model.h"
#include "muscle/fibre.h"

int sc_character_write_muscles(sc_h5 *f, const sc_muscles *mu, const sc_model *m, sc_err *err);
/* The muscles of character file path for its model m; *present = 0 (mu empty) when the file has
 * no /muscles. SC_EINPUT naming the HDF5 path for bad or inconsistent data. */
int sc_character_read_muscles(const char *path, const sc_model *m, sc_muscles *mu, int *present, sc_err *err);

#endif

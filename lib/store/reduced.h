/* character.h5's /reduced group ([P17] 3.3, eq. 2, Fig. 21's linear modes with a rigid frame; lib/reduced):
 * the deformation basis of a reduced body, written by mesh-prep when its config has a `reduced:`
 * section and read by whatever steps the reduced body. Self-describing (docs/formats.md):
 *   /reduced                 attributes schema "softcon.reduced/1", modes (K), nodes, model,
 *                            eigensolver, residual_tolerance, mass (kg), mass_units
 *   /reduced/eigenvalues     [K] 1/s^2: lambda_k = omega_k^2 of K phi = lambda M phi, ascending
 *   /reduced/frequencies     [K] Hz: sqrt(lambda_k) / 2 pi
 *   /reduced/residuals       [K] |K phi - lambda M phi| / |K phi| of each mode
 *   /reduced/basis           [3 nodes, K] 1/sqrt(kg): row 3 i + c is node i's axis c (the lumped
 *                            mass matrix M of /tetmesh/node_mass makes phi^T M phi = I)
 *   /reduced/rest_com        [3] m: the rest centre of mass (the frame's origin)
 *   /reduced/rest_inertia    [3, 3] kg m^2: the rest inertia about it, world axes
 * The reader checks the schema, every shape against the character (naming the HDF5 path), the
 * values' finiteness, ascending positive eigenvalues, frequencies that agree with them, and
 * the mass against the character's. */
#ifndef SC_STORE_REDUCED_H
#define SC_STORE_REDUCED_H
#include "io/h5.h"
#include "model/model.h"
#include "reduced/basis.h"

#define SC_REDUCED_SCHEMA "softcon.reduced/1"

int sc_character_write_reduced(sc_h5 *f, const sc_reduced_basis *b, sc_err *err);
/* The basis of character file path for its model m; *present = 0 (b empty) when the file has no
 * /reduced. SC_EINPUT naming the HDF5 path for bad or inconsistent data. */
int sc_character_read_reduced(const char *path, const sc_model *m, sc_reduced_basis *b, int *present, sc_err *err);
/* The same on an open file. */
int sc_character_read_reduced_h5(sc_h5 *f, const sc_model *m, sc_reduced_basis *b, int *present, sc_err *err);

#endif

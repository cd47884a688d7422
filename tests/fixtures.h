/* Test fixtures shared by every test file (Box2D keeps its fixtures in one place): inputs made
 * by the real tools once per run, in the run's scratch directory. Each returns a path, or NULL
 * when building failed (the tool's output is then in sc_fixture_log()). */
#ifndef SC_FIXTURES_H
#define SC_FIXTURES_H
#include "model/model.h"

/* The built-in Michelin of configs/michelin.yaml, with skin weights. */
const char *sc_fixture_michelin(void);
/* The project's march (mocap/march_in_place.bvh) through inverse-dynamics on that Michelin. */
const char *sc_fixture_march_reference(void);
/* The Michelin with the CMU walk's skeleton (configs/michelin_cmu.yaml), with skin weights. */
const char *sc_fixture_michelin_cmu(void);
/* The SIMBICON-sized biped of configs/biped.yaml, with skin weights. */
const char *sc_fixture_biped(void);
const char *sc_fixture_log(void);
/* A soft cube (sc_fixture_column with n x n x n nodes, spacing h, Poisson 0.3) with one
 * free bone whose fixed nodes are the middle cell's corners; its boundary nodes are the fine
 * surface. Returns 0 on failure. */
int sc_fixture_block(sc_model *m, int n, double h, double youngs);
/* A boneless column (nx x ny x nz nodes, spacing h, 6 tets per cell, density 1000) standing on
 * y = 0 and centred on the y axis, as [T12]'s letter I is: no bones, no fixed nodes; its
 * boundary nodes are the fine surface. Returns 0 on failure. */
int sc_fixture_column(sc_model *m, int nx, int ny, int nz, double h, double youngs, double poisson);
/* A copy of path that outlives sc_test_tmp's ring of 32 buffers (a ring of 64 of its own). */
const char *sc_fixture_keep(const char *path);

#endif

/* Test fixtures shared by every test file (Box2D keeps its fixtures in one place): inputs made
 * by the real tools once per run, in the run's scratch directory. Each returns a path, or NULL
 * when building failed (the tool's output is then in sc_fixture_log()). */
#ifndef SC_FIXTURES_H
#define SC_FIXTURES_H

/* The built-in Michelin of configs/michelin.yaml, with skin weights. */
const char *sc_fixture_michelin(void);
/* The project's march (mocap/march_in_place.bvh) through inverse-dynamics on that Michelin. */
const char *sc_fixture_march_reference(void);
/* The Michelin with the CMU walk's skeleton (configs/michelin_cmu.yaml), with skin weights. */
const char *sc_fixture_michelin_cmu(void);
const char *sc_fixture_log(void);

#endif

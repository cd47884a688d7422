/* The world's settings, read from one key each by every tool (the simulator, the sampler, inverse
 * dynamics): simulation.gravity (m/s^2, default {0, -9.81, 0}) and contact.friction (Coulomb,
 * default 0.8). A tool that reads only these of those sections must still accept the sections'
 * other keys (they belong to the simulator). */
#ifndef SC_SETTINGS_WORLD_H
#define SC_SETTINGS_WORLD_H
#include "core/status.h"
#include "io/config.h"

int sc_world_read_gravity(sc_cfg *cfg, double gravity[3], sc_err *err);
int sc_world_read_friction(sc_cfg *cfg, double *friction, sc_err *err);

#endif

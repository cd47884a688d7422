/* The physical world's defaults, defined once: every tool that simulates, estimates contact
 * forces or judges a fall uses these, and every config reads them from one key each
 * (settings/world.h: simulation.gravity, contact.friction). */
#ifndef SC_WORLD_H
#define SC_WORLD_H
#include <math.h>
#include "core/mathx.h"

#define SC_STANDARD_GRAVITY 9.81 /* m/s^2, along -y (y is up) */
#define SC_DEFAULT_FRICTION 0.8  /* Coulomb coefficient between the character and the ground */

/* The one definition of a fall: the root (or torso) lower than min_ratio x its reference
 * height, or its up axis `up` further than max_tilt (rad) from the reference's `ref_up` (world up
 * when no reference pose is tracked). Returns SC_FALL_NONE, SC_FALL_LOW or SC_FALL_TILT. */
enum { SC_FALL_NONE = 0, SC_FALL_LOW = 1, SC_FALL_TILT = 2 };
static inline int sc_fall_test(double height, double ref_height, double min_ratio, sc_vec3 up, sc_vec3 ref_up, double max_tilt)
{
    if (height < min_ratio * ref_height) return SC_FALL_LOW;
    if (sc_v3_dot(up, ref_up) < cos(max_tilt)) return SC_FALL_TILT;
    return SC_FALL_NONE;
}

#endif

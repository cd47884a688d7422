#include "model/world.h"
#include "settings/world.h"

int sc_world_read_gravity(sc_cfg *cfg, double gravity[3], sc_err *err)
{
    sc_cfg_node *sim;
    const double def[3] = {0, -SC_STANDARD_GRAVITY, 0};
    int rc = sc_cfg_section(sc_cfg_root(cfg), "simulation", &sim, err);
    return rc ? rc : sc_cfg_vec_range(sim, "gravity", 3, def, -1e3, 1e3, gravity, err);
}

int sc_world_read_friction(sc_cfg *cfg, double *friction, sc_err *err)
{
    sc_cfg_node *con;
    int rc = sc_cfg_section(sc_cfg_root(cfg), "contact", &con, err);
    return rc ? rc : sc_cfg_double_range(con, "friction", SC_DEFAULT_FRICTION, 0, 10, friction, err);
}

#include <stdlib.h>
#include <string.h>
#include "sim/model.h"

void sc_model_free(sc_model *m)
{
    void *arrays[] = {m->bone_name, m->parent, m->joint_type, m->joint_pos, m->bone_end, m->hinge_axis, m->joint_lo,
                      m->joint_hi, m->kp, m->kd, m->torque_limit, m->bone_mass, m->bone_com, m->bone_inertia,
                      m->rest_pos, m->node_mass, m->tets, m->tet_volume, m->bm_inv, m->fixed_node, m->fixed_bone,
                      m->fixed_local, m->node_bone, m->surf_rest, m->surf_tris, m->surf_tet, m->surf_bary,
                      m->skin_bone, m->skin_w};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) free(arrays[i]);
    memset(m, 0, sizeof *m);
}

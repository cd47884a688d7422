#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "core/log.h"
#include "io/h5.h"

void sc_fuzz_init(void)
{
    static int done;
    if (done) return;
    done = 1;
    sc_log_set_level(SC_LOG_QUIET);
    /* The HDF5 guard (a fork per read, ~250 ms in a sanitized process) is off while fuzzing, so
       that libhdf5's own crashes surface as findings at full speed; SOFTCON_FUZZ_GUARD=1
       replays inputs the way the tools read them (scripts/fuzz-triage.sh). */
    const char *g = getenv("SOFTCON_FUZZ_GUARD");
    sc_h5_guard_config(g && !strcmp(g, "1"), 5);
}

void sc_fuzz_violation(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: reader contract violated: %s\n", file, line, what);
    abort();
}

const sc_model *sc_fuzz_model(void)
{
    static sc_model m;
    static char names[16][SC_NAME_LEN] = {"pelvis", "spine", "neck", "head", "l_upperarm", "l_forearm", "l_hand", "r_upperarm",
                                          "r_forearm", "r_hand", "l_thigh", "l_shin", "l_foot", "r_thigh", "r_shin", "r_foot"};
    static int parent[16] = {-1, 0, 1, 2, 1, 4, 5, 1, 7, 8, 0, 10, 11, 0, 13, 14};
    static int type[16] = {0, 1, 1, 1, 1, 2, 1, 1, 2, 1, 1, 2, 1, 1, 2, 1};
    static double axis[48];
    if (!m.nbones) {
        for (int b = 0; b < 16; b++) axis[3 * b] = 1;
        m.nbones = 16;
        m.bone_name = names;
        m.parent = parent;
        m.joint_type = type;
        m.hinge_axis = axis;
    }
    return &m;
}

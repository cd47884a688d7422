/* libFuzzer harness: the character.h5 reader (sc_character_read_image: the guarded HDF5
 * read, then every check of lib/store/character.c) on arbitrary bytes, seeded with small
 * character files. What it accepts must satisfy what the simulator relies on. */
#include <math.h>
#include "common.h"
#include "store/character.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_fuzz_init();
    sc_model m;
    sc_err err;
    if (sc_character_read_image(data, size, "fuzz_character.h5", &m, 0, &err) == SC_OK) {
        SC_FUZZ_ASSERT(m.nbones >= 0 && m.nnodes >= 1 && m.ntets >= 1);
        if (m.nbones == 0) { /* boneless ([T12]): nothing may refer to a bone */
            SC_FUZZ_ASSERT(m.nfixed == 0);
            for (int i = 0; i < m.nnodes; i++) SC_FUZZ_ASSERT(m.node_bone[i] == -1);
            for (int i = 0; i < m.nnodes * m.skin_k; i++) SC_FUZZ_ASSERT(m.skin_bone[i] == -1);
        }
        for (int i = 0; i < 4 * m.ntets; i++) SC_FUZZ_ASSERT(m.tets[i] >= 0 && m.tets[i] < m.nnodes);
        for (int i = 0; i < m.nnodes; i++) SC_FUZZ_ASSERT(m.node_mass[i] > 0 && isfinite(m.rest_pos[3 * i]));
        for (int i = 0; i < m.nsurf_verts; i++) SC_FUZZ_ASSERT(m.surf_tet[i] >= 0 && m.surf_tet[i] < m.ntets);
        sc_model_free(&m);
    } else {
        SC_FUZZ_ASSERT(err.code == SC_EINPUT || err.code == SC_EIO);
    }
    SC_FUZZ_H5_CLOSED();
    return 0;
}

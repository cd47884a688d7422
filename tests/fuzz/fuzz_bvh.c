/* libFuzzer harness: the BVH reader (lib/io/bvh.c) on arbitrary text, then forward kinematics
 * of what it accepted, and the reader's documented limits checked on the result. */
#include <math.h>
#include <stdlib.h>
#include "common.h"
#include "io/bvh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_fuzz_init();
    sc_bvh b;
    sc_err err;
    if (sc_bvh_parse((const char *)data, size, "fuzz.bvh", &b, &err) == SC_OK) {
        SC_FUZZ_ASSERT(b.njoints >= 1 && b.njoints <= SC_BVH_MAX_JOINTS && b.nchannels >= 1 && b.frame_time > 0);
        for (int j = 0; j < b.njoints; j++) {
            SC_FUZZ_ASSERT(b.joints[j].parent < j && b.joints[j].parent >= -1);
            SC_FUZZ_ASSERT(fabs(b.joints[j].offset.x) <= SC_BVH_MAX_POSITION);
        }
        for (size_t k = 0; k < (size_t)b.nframes * (size_t)b.nchannels; k++)
            SC_FUZZ_ASSERT(isfinite(b.frames[k]) && fabs(b.frames[k]) <= SC_BVH_MAX_POSITION);
        sc_xform *world = malloc((size_t)b.njoints * sizeof *world);
        if (world) {
            for (int f = -1; f < b.nframes && f < 4; f++) {
                sc_bvh_world(&b, f, world);
                for (int j = 0; j < b.njoints; j++) SC_FUZZ_ASSERT(isfinite(world[j].q.w) && isfinite(world[j].p.x));
            }
            free(world);
        }
        sc_bvh_free(&b);
    } else {
        SC_FUZZ_ASSERT(err.code == SC_EINPUT || err.code == SC_EIO);
    }
    return 0;
}

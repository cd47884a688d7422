/* libFuzzer harness: the checkpoint readers of sample-openloop (sc_samcon_checkpoint_check: the
 * seal, then every index, count and value of the search, its snapshots restored) and of
 * learn-feedback (sc_feedback_learner_checkpoint_check, sc_feedback_search_checkpoint_check) and
 * of network-sample (sc_explore_checkpoint_check), on the bytes of a checkpoint's dataset. Input:
 * a byte choosing the reader (mod 4: sampler, learner, search, explore), a byte whose bit 0 asks the harness to make the header's length and checksum
 * right (as a hostile writer would, so that mutations reach the decoders; clear: the seal itself
 * is fuzzed), then the sealed bytes. Seeds: written by softcon's own writers (tests/fuzz/seeds.c).
 * A reader must accept or refuse with SC_EINPUT (or SC_EIO, out of memory), never crash. */
#include <stdlib.h>
#include <string.h>
#include "checkpoint_run.h"
#include "core/hash.h"
#include "io/checkpoint.h"
#include "learn/gain_search.h"
#include "learn/guided.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_fuzz_init();
    static sc_fuzz_samcon f;
    static int ready;
    sc_err err;
    if (!ready) {
        SC_FUZZ_ASSERT(sc_fuzz_samcon_init(&f, &err) == SC_OK);
        ready = 1;
    }
    if (size < 2) return 0;
    int which = data[0] % 4, reseal = data[1] & 1;
    size_t n = size - 2;
    unsigned char *b = malloc(n ? n : 1);
    SC_FUZZ_ASSERT(b);
    memcpy(b, data + 2, n);
    if (reseal && n >= SC_CHECKPOINT_HEADER) {
        uint64_t len = n - SC_CHECKPOINT_HEADER;
        memcpy(b + 32, &len, 8);
        uint64_t h = sc_hash_bytes(SC_HASH_INIT, b, SC_CHECKPOINT_HEADER - 8);
        h = sc_hash_bytes(h, b + SC_CHECKPOINT_HEADER, len);
        memcpy(b + SC_CHECKPOINT_HEADER - 8, &h, 8);
    }
    int rc;
    if (which == 0) rc = sc_samcon_checkpoint_check(&f.run, b, n, &err);
    else if (which == 1)
        rc = sc_feedback_learner_checkpoint_check(b, n, SC_FUZZ_CKPT_HASH, SC_FUZZ_FRAG, SC_FUZZ_DOFS, SC_FUZZ_ACT, SC_FUZZ_ITER, &err);
    else if (which == 2)
        rc = sc_feedback_search_checkpoint_check(b, n, SC_FUZZ_CKPT_HASH, SC_FUZZ_NP, SC_FUZZ_LAMBDA, 0.5, &err);
    else {
        sc_explore_config ec;
        sc_fuzz_explore_config(&ec);
        rc = sc_explore_checkpoint_check(b, n, SC_FUZZ_CKPT_HASH, &ec, &err);
    }
    SC_FUZZ_ASSERT(rc == SC_OK || rc == SC_EINPUT || rc == SC_EIO);
    free(b);
    return 0;
}

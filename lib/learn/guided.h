/* learn-feedback's method: guided (the default): iterations of guided sampling, each fragment's
 * law refitted on what they gathered, every iteration's policy tested closed loop; the best kept.
 * Resumable from the checkpoint written after every iteration; within an iteration the sampler
 * keeps its own checkpoint beside it. */
#ifndef SC_GUIDED_H
#define SC_GUIDED_H
#include <stddef.h>
#include "learn/learning.h"

int sc_feedback_guided(const sc_feedback_run *run, sc_feedback_result *r, sc_err *err);
/* The sampler's checkpoint within an iteration: CHECKPOINT.samcon into path[n] (SC_EINPUT when
 * it does not fit). */
int sc_feedback_sampler_checkpoint(const char *checkpoint, char *path, size_t n);

#endif

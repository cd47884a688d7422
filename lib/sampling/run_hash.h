/* The hash that identifies a long run's inputs in its checkpoints (sample-openloop,
 * learn-feedback): a checkpoint made for other inputs, or by another build of the simulator, is
 * refused on resume. */
#ifndef SC_RUN_HASH_H
#define SC_RUN_HASH_H
#include <stdint.h>

/* The resolved config text, the (scenario's) model's hash, the hashes of the run's other inputs in
 * the order given (sample-openloop: the reference; learn-feedback: the controller and its
 * reference), the seed, then sc_sim_build_hash(). */
uint64_t sc_run_hash(const char *resolved_config, uint64_t model_hash, const uint64_t *input_hashes, int ninputs, uint64_t seed);

#endif

/* learn-feedback's method: search (Liu et al. 2012): the feedback gains, shared by the stance and
 * swing roles of every fragment, searched by CMA-ES on closed-loop runs; resumable from the
 * checkpoint written after every generation. */
#ifndef SC_GAIN_SEARCH_H
#define SC_GAIN_SEARCH_H
#include "learn/learning.h"

int sc_feedback_search(const sc_feedback_run *run, sc_feedback_result *r, sc_err *err);
/* Checks a sealed checkpoint of a search of np parameters, lambda candidates and step size sigma
 * (the dataset's bytes), as --resume does: SC_EINPUT saying what is damaged. For the fuzz
 * harness, whose seeds _example writes: a fresh search after `generations` generations. */
int sc_feedback_search_checkpoint_check(const unsigned char *blob, size_t n, uint64_t run_hash, int np, int lambda, double sigma, sc_err *err);
int sc_feedback_search_checkpoint_example(uint64_t run_hash, int np, int lambda, double sigma, int generations, unsigned char **blob, size_t *n,
                                          sc_err *err);

#endif

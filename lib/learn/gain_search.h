/* learn-feedback's method: search (Liu et al. 2012): the feedback gains, shared by the stance and
 * swing roles of every fragment, searched by CMA-ES on closed-loop runs; resumable from the
 * checkpoint written after every generation. */
#ifndef SC_GAIN_SEARCH_H
#define SC_GAIN_SEARCH_H
#include "learn/learning.h"

int sc_feedback_search(const sc_feedback_run *run, sc_feedback_result *r, sc_err *err);

#endif

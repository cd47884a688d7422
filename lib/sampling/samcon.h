/* Open-loop control by sampling (SAMCON, Liu et al. 2010) started from the inverse-dynamics
 * targets ([L13] 5.1) with the segment durations sampled too (time scaling, [L13] 5.2).
 *
 * The reference is cut into segments of `segment` seconds. For segment k, N samples start from
 * the K elite end states of segment k - 1 (sample i from elite i mod K; segment 0 from the
 * reference's first state). Sample i draws, from its own Philox stream keyed by (seed, k,
 * attempt, i), a time scale s in [time_scale_min, time_scale_max] and PD target offsets uniform
 * in per-DoF boxes; it is simulated for round(s x segment / dt) steps while the base targets play
 * the reference segment stretched to that length (sampling/segments.h), and fails when the root
 * drops, the body tilts, a bone other than those allowed touches the ground, or the step
 * diverges. The K best (or, with selection: spread, Liu 2010's drop-the-worst-40%-then-spread
 * set) by path cost (the sum of segment costs, sampling/cost.h), or with elite_cost: segment by the
 * cost of their own segment's end state alone (Liu 2010), become segment k's elites. When
 * every sample fails, the search backs up `backtrack` segments and samples them again with
 * growth^r times the samples (r: the failures of the segment that failed), at most `max_retries`
 * times per segment; then it gives up and
 * keeps the longest path found. At the end the cheapest path is traced back through the elites'
 * parents and simulated once more from the start, which must reproduce every sampled segment
 * bit for bit.
 *
 * Every rank runs this same loop; samples are spread by sc_par_map and elite states broadcast
 * by the rank that simulated them, so every rank holds the same elites and the result does not
 * depend on the number of ranks. Rank 0 writes a checkpoint after every segment. */
#ifndef SC_SAMCON_H
#define SC_SAMCON_H
#include <stdint.h>
#include "sampling/cost.h"
#include "sampling/segments.h"

enum { SC_BASE_ID = 0, SC_BASE_REFERENCE = 1 };
enum { SC_SELECT_GREEDY = 0, SC_SELECT_SPREAD = 1 };
enum { SC_ELITE_BY_PATH = 0, SC_ELITE_BY_SEGMENT = 1 };
enum { SC_CYCLE_NONE = 0, SC_CYCLE_AUTO = 1, SC_CYCLE_GIVEN = 2 };

typedef struct sc_samcon_config {
    double segment; /* s of reference time per segment (0.1) */
    int samples;    /* N per segment on a first attempt (1000) */
    int elites;     /* K (100) */
    int selection;  /* SC_SELECT_* */
    int elite_cost; /* SC_ELITE_BY_*: the cost elites are ranked by */
    int base;       /* SC_BASE_*: initial targets */
    int time_scaling;
    double scale_min, scale_max;
    double start, end;                                         /* s of reference time to track; end 0 = the clip's end */
    char segment_where[160], start_where[160], end_where[160]; /* their config locations */
    int backtrack, max_retries;
    double growth;
    double max_cost;         /* a sample whose segment cost exceeds this fails (0: no bound) */
    double box[SC_MAX_DOFS]; /* offset half-widths per control DoF (rad); 0: not sampled */
    int cycle;               /* SC_CYCLE_*: track a gait cycle of the reference, repeated */
    double cycle_span[2];    /* s, with SC_CYCLE_GIVEN */
    double cycle_period[2];  /* s, the periods SC_CYCLE_AUTO searches */
    int cycles;              /* repetitions */
    sc_tracker_opts tracker;
} sc_samcon_config;

/* One segment of the final controller, with its statistics. */
typedef struct sc_samcon_segment {
    double ref_t0, ref_t1;
    long start_step, steps;
    double scale; /* steps x dt / (ref_t1 - ref_t0) */
    double cost, path_cost, terms[SC_COST_TERMS];
    int samples, failures, attempts; /* samples drawn for this segment over all attempts */
    long fail_kind[SC_FAIL_KINDS];
    double best_elite, median_elite; /* path costs of the elites at the last attempt */
    double mean_scale_elites;
} sc_samcon_segment;

typedef struct sc_samcon_result {
    int nseg_total; /* segments of the clip */
    /* every segment's elites (last attempt), in path-cost order: for learning from good samples */
    int *nelites;              /* [nseg] */
    double *elite_offset;      /* [sum nelites * ndof] */
    double *elite_aux;         /* [sum nelites * naux] (naux > 0) */
    unsigned char *elite_kept; /* [sum nelites] 1: an ancestor of an elite of the last segment reached (on a
                                   path that went on), 0: a dead end */
    int nseg;                  /* segments of the path found (== total when completed) */
    int completed;
    int interrupted;        /* stopped by a signal: the path the search held then (a checkpoint has the rest) */
    sc_samcon_segment *seg; /* [nseg] */
    double *offset;         /* [nseg * ndof] */
    long samples;           /* every sample simulated, all segments and attempts */
    long numeric_failures;
    double wall_seconds;            /* this run, plus earlier runs resumed from a checkpoint */
    double sample_seconds;          /* simulation time spent in samples, summed over ranks */
    int ranks, threads, backtracks; /* threads: of each rank */
    /* where each rank's time went, on rank 0 (par.h's phases): a row per attempt at a segment of
       this run (the first: the start-up), each [ranks * SC_PAR_PHASES] seconds */
    int ntimeline;
    double *timeline;
    int *timeline_segment; /* [ntimeline] the segment of each row, -1: start-up */
    double *peak_memory;   /* [ranks] on rank 0: each rank's peak resident memory, bytes */
} sc_samcon_result;
void sc_samcon_result_free(sc_samcon_result *r);

struct sc_par;
struct sc_cycle;

/* What a guided caller (learn-feedback) provides per sample. center is required: sample i's
 * offsets are center(segment, its start state) + the uniform box noise, and center also fills
 * naux values of that start state (features) kept with the sample. The rest may be NULL; they
 * serve model fitting (learn-feedback's fit: model): finish also sees each sample's end state,
 * after a rollout that did not fail, and may fill more of its aux values; then on_samples gives
 * every rank every sample of each attempt: n records of ndof offsets and naux aux values, and
 * whether the sample failed (not called for an attempt a signal interrupted). What the caller
 * gathers through on_samples goes into the checkpoint with the search, so a resumed run has it as
 * the uninterrupted run had: save_gathered gives its bytes (malloc'd; nonzero when out of
 * memory), restore_gathered takes them back (nonzero when they are damaged). Each gets ctx. */
typedef struct sc_sample_guide {
    void *ctx;
    int naux;
    void (*center)(void *ctx, int segment, const sc_sim *start, double *offset, double *aux);
    void (*finish)(void *ctx, int segment, const sc_sim *end, double *aux);
    void (*on_samples)(void *ctx, int segment, int n, const double *offset_aux, const unsigned char *failed);
    int (*save_gathered)(void *ctx, unsigned char **bytes, size_t *n);
    int (*restore_gathered)(void *ctx, const unsigned char *bytes, size_t n);
} sc_sample_guide;

/* What a caller watching the run provides (each may be NULL): stop, polled between samples (a
 * signal asked to stop); progress, after every segment on rank 0, with the search's frontier
 * (segments done of nseg) and a line describing the segment just sampled. */
typedef struct sc_samcon_monitor {
    int (*stop)(void);
    void (*progress)(void *ctx, int done, int nseg, const char *line);
    void *ctx;
} sc_samcon_monitor;

typedef struct sc_samcon_run {
    const sc_model *m;
    const sc_sim_opts *sim_opts;
    const sc_reference *ref;      /* what is tracked: the reference, or a cycle of it repeated */
    const struct sc_cycle *cycle; /* that cycle (NULL: none); segments are then its fragments */
    int fragments;                /* segments per cycle */
    const sc_control_dofs *dofs;
    const sc_samcon_config *cfg;
    uint64_t seed;
    uint64_t run_hash;            /* identifies the inputs (config, character, reference, seed) in checkpoints */
    const char *checkpoint;       /* path; NULL: none */
    int resume;                   /* continue from the checkpoint */
    sc_samcon_monitor monitor;    /* stop and progress (both optional) */
    const sc_sample_guide *guide; /* guided sampling (learn-feedback); NULL: offsets about zero */
    const long *segment_steps;    /* when set, each segment's simulated steps (no time scaling) */
    struct sc_par *par;
} sc_samcon_run;

/* Runs the search. SC_OK with r->completed = 0 when it gave up (r holds the longest path);
 * SC_EINTERRUPTED when monitor.stop() fired: a checkpoint was written first, and r holds the
 * path the search held then (r->interrupted; free it as any result). */
int sc_samcon(const sc_samcon_run *run, sc_samcon_result *r, sc_err *err);
/* The reference time tracked, [*t_first, *t_last]: sampling.start to sampling.end (0: the clip's
 * end), in *nseg segments. SC_EINPUT naming the key's config location when start or end lies
 * past the clip (end within one reference sample of it counts as its end), end is not after
 * start, or sampling.segment is longer than that span. ref_name: the reference in messages
 * (NULL: "the reference"). Checked up front by sample-openloop, and again by sc_samcon. */
int sc_samcon_span(const sc_samcon_config *c, const sc_reference *ref, const char *ref_name, double *t_first, double *t_last, int *nseg, sc_err *err);

/* Checks a sealed checkpoint of run's search (the dataset's bytes: seal, then every index,
 * count and value, the states restored), as --resume does; SC_EINPUT saying what is damaged.
 * For the fuzz harness (tests/fuzz/fuzz_checkpoint.c). */
int sc_samcon_checkpoint_check(const sc_samcon_run *run, const unsigned char *blob, size_t n, sc_err *err);

/* The reference's start state put into s (root, local rotations, velocities at cfg->start). */
int sc_samcon_start_state(const sc_samcon_run *run, sc_sim *s, sc_err *err);
/* Simulates the path of r from the start state in s (a fresh simulation of the same model and
 * options), calling hook at every state (for output; may be NULL), and checks that every segment
 * ends with exactly the cost it had when sampled (SC_ENUMERIC otherwise). */
int sc_samcon_replay(const sc_samcon_run *run, const sc_samcon_result *r, sc_sim *s, sc_rollout_hook hook, void *hook_ctx, sc_err *err);
/* The gait cycle sampling.cycle asks for (found among cfg->cycle_period, or the span given) and
 * the reference that repeats it cfg->cycles times, tracked in *fragments segments per cycle:
 * cfg->segment becomes the period over that whole number. Does nothing (*fragments = 0) without
 * a cycle. */
struct sc_cycle;
int sc_samcon_cycle_setup(const sc_reference *ref, sc_samcon_config *cfg, struct sc_cycle *cycle, sc_reference *repeated, int *fragments,
                          sc_err *err);
/* The segment controller of a result (base targets from the reference). seg[] is filled from r. */
void sc_samcon_controller(const sc_samcon_run *run, const sc_samcon_result *r, sc_segment *seg, sc_segment_controller *c);

#endif

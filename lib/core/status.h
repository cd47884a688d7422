/* Error status carried out of every library call (MuJoCo-style message buffer).
 * Library functions return an sc_code and fill an sc_err; only cmd/ prints and exits. */
#ifndef SC_STATUS_H
#define SC_STATUS_H
#include <stddef.h>

/* The codes double as the documented process exit codes (README "Exit codes"). */
typedef enum {
    SC_OK = 0,
    SC_EUSAGE = 1,      /* bad command line */
    SC_EINPUT = 2,      /* bad config or input file: message names file:line:column or HDF5 path */
    SC_EIO = 3,         /* cannot read/write a file, out of memory */
    SC_ENUMERIC = 4,    /* numerical failure: names step, element or node, quantity */
    SC_EEXTERNAL = 5,   /* an external program (tetgen, ffmpeg) is missing or failed */
    SC_EINTERRUPTED = 6 /* stopped by a signal (SIGTERM, SIGUSR1, SIGINT) after writing a checkpoint:
                           run again with --resume (a Slurm job requeues on it) */
    ,
    SC_EPARTIAL = 7 /* the output holds only part of what was asked (the sampler's longest path) */
} sc_code;

#define SC_ERR_MSG 2048

typedef struct sc_err {
    int code;
    char msg[SC_ERR_MSG];
} sc_err;

/* Set err (if non-NULL) and return code. printf-style message. */
int sc_fail(sc_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prepend context ("while reading x: ") to an existing message; returns err->code. */
int sc_err_prefix(sc_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sc_err_clear(sc_err *err);
/* Allocation helpers that set SC_EIO on failure. */
void *sc_alloc(sc_err *err, size_t n, size_t size); /* zeroed */

#endif

/* Motion networks ([BK] 6): a time-dependent directed acyclic graph (T-DAG) of channels and
 * operation nodes whose values drive a character's controller.
 *
 * Channels ([BK] 5, 6): a constant; a spline (control points with tangents, cubic Hermite; a
 * point without a tangent gets the Catmull-Rom one); a step function (a 0/1 value per control
 * point, held until the next); a feedback variable the caller supplies every evaluation (the
 * stance state, the centre of mass's offset and velocity, ...; which ones is the caller's
 * business: the network only holds an index into the caller's array).
 * Operation nodes ([BK] 6.1, Fig. 6):
 *   add       the sum of any number of inputs;
 *   multiply  the product of two;
 *   modulate  a step input and one or two trajectories (splines or step functions): during
 *             each high step the first trajectory is scaled in time to fit the step, during
 *             each low step the second (0 without one). A step whose length is not known in
 *             advance (a feedback or computed step) is expected to last as long as the last
 *             step of the same level did (`expected` before the first); the trajectory then
 *             holds its end value if the step lasts longer;
 *   switch    a step input and one or two inputs: the first while high, the second (0 without
 *             one) while low.
 * A step input is high when its value is at least 0.5.
 *
 * As mjModel and mjData: sc_network is immutable once sc_network_finish has ordered it (a
 * topological order found once; a cycle is refused naming its nodes and where they were
 * declared); sc_network_state is what evaluation changes (every node's value, the modulators'
 * step timing). Evaluation allocates nothing. */
#ifndef SC_NETWORK_TDAG_H
#define SC_NETWORK_TDAG_H
#include "core/status.h"
#include "model/model.h"

typedef enum {
    SC_NODE_CONST = 0,
    SC_NODE_SPLINE,
    SC_NODE_STEP,
    SC_NODE_FEEDBACK,
    SC_NODE_ADD,
    SC_NODE_MULTIPLY,
    SC_NODE_MODULATE,
    SC_NODE_SWITCH
} sc_node_kind;

#define SC_NODE_MAX_INPUTS 16
#define SC_NODE_WHERE_LEN  96

typedef struct sc_net_node {
    sc_node_kind kind;
    char name[SC_NAME_LEN];
    char where[SC_NODE_WHERE_LEN]; /* where it was declared ("net.yaml:12:7"), for messages */
    int ninputs;
    int input[SC_NODE_MAX_INPUTS]; /* node indices; modulate and switch: [step, high, low] */
    double value;                  /* CONST: the value; MODULATE: the expected first step (s) */
    int feedback;                  /* FEEDBACK: the index into the caller's feedback array */
    int first, npoints;            /* SPLINE, STEP: the control points [first, first + npoints) */
    int loop;                      /* SPLINE, STEP: repeats with period t_last - t_first */
} sc_net_node;

typedef struct sc_network {
    int nnodes, cap_nodes;
    sc_net_node *node;
    int *order; /* evaluation order: every node after its inputs (sc_network_finish) */
    int npoints, cap_points;
    double *pt_t, *pt_v, *pt_m; /* control points: time (s), value, tangent (value/s) */
    double *pt_m_given;         /* the tangents as given: NAN where pt_m is Catmull-Rom's */
    int nfeedback;              /* feedback indices run over [0, nfeedback) */
    int finished;
} sc_network;

typedef struct sc_network_state {
    double t;
    double *value;      /* [nnodes] after sc_network_eval */
    double *step_start; /* [nnodes] MODULATE: when the current step began (s; NAN: not yet) */
    double *last_len;   /* [2 nnodes] MODULATE: the last low and high step's length (s) */
    int *level;         /* [nnodes] MODULATE: the current step's level (0, 1; -1: none yet) */
} sc_network_state;

void sc_network_init(sc_network *n, int nfeedback);
void sc_network_free(sc_network *n);
/* Adds a node (inputs by index; they may be added later) and, for SPLINE and STEP, its
 * npoints control points (t strictly increasing; m NULL or a NAN entry: the Catmull-Rom
 * tangent). *index is the new node's index. SC_EINPUT naming `where` for a bad node: a
 * duplicate name, the wrong number of inputs, fewer than 2 points (1 for a step), times not
 * increasing, a step value other than 0 or 1, a feedback index out of range. */
int sc_network_add(sc_network *n, const sc_net_node *node, const double *t, const double *v, const double *m, int *index, sc_err *err);
/* The node called name, -1 if none. */
int sc_network_find(const sc_network *n, const char *name);
/* Checks every input index and that a modulator's trajectories are splines or step functions,
 * and finds the evaluation order; SC_EINPUT naming the nodes of a cycle. */
int sc_network_finish(sc_network *n, sc_err *err);

/* A deep copy of a finished network (for a sample that changes its values). */
int sc_network_clone(const sc_network *src, sc_network *dst, sc_err *err);
/* Sets a constant's value (point -1) or a spline's point value (point >= 0, its Catmull-Rom
 * tangents recomputed): what a sampler varies ([BK] 7's exposed control points). SC_EINPUT for
 * another kind of node or a point out of range. */
int sc_network_set_value(sc_network *n, int node, int point, double value, sc_err *err);
/* The value sc_network_set_value would change. */
double sc_network_get_value(const sc_network *n, int node, int point);

int sc_network_state_init(const sc_network *n, sc_network_state *s, sc_err *err);
void sc_network_state_free(sc_network_state *s);
void sc_network_state_reset(const sc_network *n, sc_network_state *s);
/* Every node's value at time t (s; non-decreasing from one call to the next: the modulators
 * time the steps they see) given the feedback variables [nfeedback]. */
void sc_network_eval(const sc_network *n, sc_network_state *s, double t, const double *feedback);
/* A spline or step function channel's value at time t (its own time: t_first..t_last, or
 * wrapped when it loops). */
double sc_network_channel_at(const sc_network *n, int node, double t);

#endif

/* What the learning methods share: the result's release and the history's checkpoint bytes. */
#include <math.h>
#include <stdlib.h>
#include "core/blob.h"
#include "learn/learning.h"

void sc_feedback_result_free(sc_feedback_result *r)
{
    sc_policy_free(&r->policy);
    free(r->role_of);
    r->role_of = NULL;
}

/* Every field is 8 bytes and put in declaration order: the bytes of the struct itself, as the
   checkpoints have always held them. A field added to the struct must be added here too. */
_Static_assert(sizeof(sc_learning_iteration) == 8 * (11 + SC_MAX_EVAL + 2 * SC_MAX_COSTS) && sizeof(long) == 8,
               "sc_learning_iteration's checkpoint bytes list every field");

static void put_f64s(sc_blob_writer *w, const double *v, int n)
{
    for (int k = 0; k < n; k++) sc_blob_put_f64(w, v[k]);
}
static void get_f64s(sc_blob_reader *r, double *v, int n)
{
    for (int k = 0; k < n; k++) v[k] = sc_blob_get_f64(r);
}

void sc_learning_iterations_put(sc_blob_writer *w, const sc_learning_iteration *it, int n)
{
    for (const sc_learning_iteration *x = it; x < it + n; x++) {
        sc_blob_put_f64(w, x->survived_s);
        put_f64s(w, x->survived_at, SC_MAX_EVAL);
        sc_blob_put_f64(w, x->action_cost);
        sc_blob_put_i64(w, x->maps_kept);
        put_f64s(w, x->cost_survived, SC_MAX_COSTS);
        put_f64s(w, x->cost_joint_error, SC_MAX_COSTS);
        sc_blob_put_f64(w, x->joint_error);
        sc_blob_put_i64(w, x->samples);
        sc_blob_put_i64(w, x->pairs);
        double tail[5] = {x->residual, x->model_error, x->score, x->mean_score, x->sigma};
        put_f64s(w, tail, 5);
    }
}

void sc_learning_iterations_get(sc_blob_reader *r, sc_learning_iteration *it, int n)
{
    for (sc_learning_iteration *x = it; x < it + n; x++) {
        x->survived_s = sc_blob_get_f64(r);
        get_f64s(r, x->survived_at, SC_MAX_EVAL);
        x->action_cost = sc_blob_get_f64(r);
        x->maps_kept = (long)sc_blob_get_i64(r);
        get_f64s(r, x->cost_survived, SC_MAX_COSTS);
        get_f64s(r, x->cost_joint_error, SC_MAX_COSTS);
        x->joint_error = sc_blob_get_f64(r);
        x->samples = (long)sc_blob_get_i64(r);
        x->pairs = (long)sc_blob_get_i64(r);
        x->residual = sc_blob_get_f64(r);
        x->model_error = sc_blob_get_f64(r);
        x->score = sc_blob_get_f64(r);
        x->mean_score = sc_blob_get_f64(r);
        x->sigma = sc_blob_get_f64(r);
    }
}

static int finite_all(const double *v, int n)
{
    for (int k = 0; k < n; k++)
        if (!isfinite(v[k])) return 0;
    return 1;
}

int sc_learning_iterations_ok(const sc_learning_iteration *it, int n)
{
    for (const sc_learning_iteration *x = it; x < it + n; x++) {
        double one[7] = {x->survived_s, x->action_cost, x->joint_error, x->residual, x->model_error, x->score, x->mean_score};
        if (!finite_all(one, 7) || !isfinite(x->sigma) || !finite_all(x->survived_at, SC_MAX_EVAL) || !finite_all(x->cost_survived, SC_MAX_COSTS) ||
            !finite_all(x->cost_joint_error, SC_MAX_COSTS) || x->samples < 0 || x->pairs < 0 || x->survived_s < 0 || x->maps_kept < 0 ||
            x->maps_kept > 64)
            return 0;
    }
    return 1;
}

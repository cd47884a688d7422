/* Skinning a character: its fixed nodes as the handles of bounded biharmonic weights
 * (skin/bbw.h, [L13] 4.2.2), the top-k form simulate uses, and the per-bone figures stored
 * with them (store/character.h writes them to /skin). */
#ifndef SC_SKIN_WEIGHTS_H
#define SC_SKIN_WEIGHTS_H
#include "core/status.h"
#include "model/model.h"
#include "skin/bbw.h"

typedef struct sc_skin_result {
    int nnodes, nbones, k;
    int *handle;             /* [nnodes] bone a node is a handle of, -1 free */
    double *w;               /* [nnodes*nbones] dense weights, rows sum to 1 */
    sc_bbw_bone_stats *bone; /* [nbones] */
    sc_bbw_stats st;
    /* per bone: active-set iterations, KKT residual, largest weight on a free node, nodes
       where the weight exceeds 1e-3, handle nodes */
    double *iterations, *kkt_residual, *max_free_weight, *influence;
    int *handles;
    double wmin, wmax, rowsum_dev, topk_dev; /* over all weights; row sums before and after the top-k form */
} sc_skin_result;

/* Solves the weights of m (named `name` in errors: SC_EINPUT when a bone has no fixed node)
   and replaces m's top-k skin (m->skin_k = k, skin_bone, skin_w). */
int sc_skin_character(const char *name, sc_model *m, int k, const sc_bbw_opts *opts, sc_skin_result *r, sc_err *err);
void sc_skin_result_free(sc_skin_result *r);

#endif

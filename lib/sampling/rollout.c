#include "sampling/controller.h"
#include "sampling/rollout.h"

int sc_rollout(sc_sim *s, sc_target_source src, const sc_perturbations *pert, long end_step, sc_rollout_hook hook, void *hook_ctx, sc_quat *targets,
               sc_rollout_result *res, sc_err *err)
{
    static const sc_perturbations none;
    if (!pert) pert = &none;
    res->steps = 0;
    res->stopped = 0;
    for (;;) {
        double push[3];
        src.eval(src.ctx, s, targets);
        sc_sim_set_targets(s, targets);
        if (src.actuate) src.actuate(src.ctx, s);
        sc_perturbations_apply(pert, s, push);
        if (hook && (res->stopped = hook(hook_ctx, s, targets, push))) return SC_OK;
        if (s->step >= end_step) return SC_OK;
        int rc = sc_sim_step(s, err);
        if (rc) return rc;
        res->steps++;
    }
}

static void controller_eval(void *ctx, const sc_sim *s, sc_quat *out) { sc_controller_targets(ctx, s->t, out); }

sc_target_source sc_controller_source(const sc_controller *c) { return (sc_target_source){.eval = controller_eval, .ctx = (void *)c}; }

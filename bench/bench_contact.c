/* [J11] Table 1's cost for the biped walk, softcon's way: the SIMBICON walker of
 * configs/simbicon/walk_{rigid,softlayer,soft}.yaml on the CMU Michelin (scripts/bench.sh builds
 * results/bench/character_cmu.h5 from configs/michelin_cmu.yaml; and biped.h5 from
 * configs/biped.yaml, recorded under --label biped), the three contact models
 * stepping in turn, 100 steps each, so that all three see the same machine; one thread. The
 * median step, and a 30 frames/s frame's cost (66.7 steps of 0.5 ms) as frames computed per
 * second of wall time ([J11]: 18.5 +- 4.5 frames/s, 4 ms LCP steps every 8 of SIMBICON's 0.5 ms).
 * Usage: bench_contact [character_cmu.h5] [--steps N] [--label NAME] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_util.h"
#include "core/log.h"
#include "sampling/rollout.h"
#include "settings/scenario.h"
#include "settings/simbicon.h"
#include "simbicon/simbicon.h"
#include "store/character.h"

#define NMODELS 3
#define BLOCK   100

static const char *const names[NMODELS] = {"rigid", "softlayer", "soft"};

typedef struct {
    sc_model m;
    sc_simbicon c;
    sc_sim *s;
    sc_target_source src;
    sc_quat *targets;
} walker;

static int fail(const sc_err *err)
{
    fprintf(stderr, "bench_contact: %s\n", err->msg);
    return 1;
}

/* The walker of the model's config, started, settled and walked 1 s. */
static int start(const sc_model *loaded, const char *name, walker *w, sc_err *err)
{
    char path[512];
    const char *root = getenv("SOFTCON_ROOT");
    snprintf(path, sizeof path, "%s/configs/simbicon/walk_%s.yaml", root ? root : ".", name);
    sc_cfg *cfg;
    sc_cfg_node *ctl;
    sc_scenario sc;
    sc_simbicon_params p;
    int rc;
    if ((rc = sc_cfg_load_file(path, &cfg, err))) return rc;
    (void)((rc = sc_scenario_read(cfg, loaded, &sc, err)) || (rc = sc_cfg_section(sc_cfg_root(cfg), "controller", &ctl, err)) ||
           (rc = sc_simbicon_read(ctl, &p, err)));
    sc_cfg_free(cfg);
    if (rc || (rc = sc_simbicon_init(&w->c, loaded, &p, err)) || (rc = sc_model_clone(loaded, &w->m, err)) ||
        (rc = sc_simbicon_set_gains(&p, &w->m, err)) || (rc = sc_sim_create(&w->m, &sc.sim, &w->s, err)) ||
        (rc = sc_simbicon_start(&w->c, w->s, sc.drop_height, sc.init_vel, err)) || (rc = sc_sim_settle(w->s, err)))
        return rc;
    w->src = sc_simbicon_source(&w->c);
    w->targets = malloc((size_t)w->m.nbones * sizeof *w->targets);
    if (!w->targets) return sc_fail(err, SC_EIO, "out of memory");
    for (int k = 0; k < 2000; k++) {
        w->src.eval(w->src.ctx, w->s, w->targets);
        sc_sim_set_targets(w->s, w->targets);
        if ((rc = sc_sim_step(w->s, err))) return rc;
    }
    return SC_OK;
}

int main(int argc, char **argv)
{
    const char *path = "results/bench/character_cmu.h5";
    const char *label = ""; /* metrics contact_<label>_<model>_...: one character's rows apart from another's */
    char prefix[64] = "";
    int steps = 20000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--label") && i + 1 < argc) label = argv[++i];
        else path = argv[i];
    }
    if (*label) snprintf(prefix, sizeof prefix, "%s_", label);
    if (steps < BLOCK) steps = BLOCK;
    steps -= steps % BLOCK;
    sc_log_set_level(SC_LOG_WARN);
    sc_model loaded;
    sc_err err = {0};
    if (sc_character_read(path, &loaded, 0, &err)) return fail(&err);
    walker w[NMODELS];
    memset(w, 0, sizeof w);
    for (int k = 0; k < NMODELS; k++)
        if (start(&loaded, names[k], &w[k], &err)) return fail(&err);
    double *t[NMODELS];
    for (int k = 0; k < NMODELS; k++)
        if (!(t[k] = malloc((size_t)steps * sizeof(double)))) return 1;
    for (int done = 0; done < steps; done += BLOCK)
        for (int k = 0; k < NMODELS; k++)
            for (int j = 0; j < BLOCK; j++) {
                const double t0 = sc_wall_time();
                w[k].src.eval(w[k].src.ctx, w[k].s, w[k].targets);
                sc_sim_set_targets(w[k].s, w[k].targets);
                if (sc_sim_step(w[k].s, &err)) return fail(&err);
                t[k][done + j] = sc_wall_time() - t0;
            }
    int soft_nodes = 0;
    for (int i = 0; i < w[1].s->nn; i++) soft_nodes += w[1].s->m->node_bone[i] < 0;
    printf("bench_contact: %s: %d nodes, %d bones; the SIMBICON walker, %d steps of 0.5 ms per model in blocks of %d, one thread "
           "(the soft layer: %d nodes, %d DoFs simulated)\n",
           path, loaded.nnodes, loaded.nbones, steps, BLOCK, soft_nodes, 3 * soft_nodes + 6 * loaded.nbones);
    for (int k = 0; k < NMODELS; k++) {
        const double med = bench_median(t[k], steps), frame = med * (1.0 / 30) / 0.5e-3; /* steps of 0.5 ms in a frame */
        printf("bench_contact: %-9s median step %7.1f us, a 1/30 s frame %6.2f ms: %6.1f frames/s ([J11]: 18.5)\n@ contact_%s%s_step_median %.1f us\n"
               "@ contact_%s%s_frames_per_second %.1f 1/s\n",
               names[k], 1e6 * med, 1e3 * frame, 1 / frame, prefix, names[k], 1e6 * med, prefix, names[k], 1 / frame);
        free(t[k]);
        free(w[k].targets);
        sc_sim_free(w[k].s);
        sc_simbicon_free(&w[k].c);
        sc_model_free(&w[k].m);
    }
    sc_model_free(&loaded);
    return 0;
}

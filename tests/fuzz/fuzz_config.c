/* libFuzzer harness: the YAML config layer (lib/io/config.c) through real consumers: the
 * config readers of mesh-prep (sc_prep_read_config: skeleton, body, envelope, fixed nodes,
 * tetgen, material), inverse-dynamics (sc_id_read_config: motion, retarget, kinematics,
 * contact_estimation, dynamics, simulation.gravity, contact.friction) and simulate's controller
 * (sc_controller_from_config: hold, keyframes, trajectory), then the unknown-key check and the
 * resolved text written into every output.
 * The config's own folder does not exist, so files it names resolve only in the repository's
 * mocap/ (the authored march) or at an absolute path fuzzed into the text. */
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "settings/controller.h"
#include "settings/motion.h"
#include "io/config.h"
#include "io/paths.h"
#include "mesh/prep.h"
#include "settings/mesh.h"

static void consume(const uint8_t *data, size_t size, int which, int emit)
{
    sc_cfg *cfg;
    sc_err err;
    if (sc_cfg_load_buffer(data, size, "/nonexistent/fuzz.yaml", &cfg, &err)) {
        SC_FUZZ_ASSERT(err.code == SC_EINPUT || err.code == SC_EIO);
        return;
    }
    int rc = SC_OK;
    if (which == 0) {
        sc_prep_opts *o = malloc(sizeof *o);
        if (o) rc = sc_prep_read_config(cfg, o, &err);
        free(o);
    } else if (which == 1) {
        sc_id_config *c = malloc(sizeof *c);
        if (c) rc = sc_id_read_config(cfg, c, &err);
        if (c) sc_id_config_free(c);
        free(c);
    } else {
        sc_cfg_node *ctl;
        sc_controller ctrl;
        rc = sc_cfg_section(sc_cfg_root(cfg), "controller", &ctl, &err);
        if (!rc) rc = sc_controller_from_config(ctl, sc_fuzz_model(), sc_cfg_path(cfg), &ctrl, &err);
        if (!rc) {
            sc_quat q[16];
            sc_controller_targets(&ctrl, 0.5, q);
            sc_controller_free(&ctrl);
        }
    }
    if (rc) SC_FUZZ_ASSERT(err.code >= SC_EINPUT && err.code <= SC_EEXTERNAL);
    else rc = sc_cfg_check_unknown(cfg, &err);
    if (emit) free(sc_cfg_resolved_text(cfg)); /* the costliest step: on half of the inputs */
    sc_cfg_free(cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        sc_fuzz_init();
        sc_paths_set_mocap_path(NULL); /* only the repository's mocap/ stays reachable */
        ready = 1;
    }
    /* the first byte picks the consumer (so one corpus serves all three) and whether the
       resolved text is emitted */
    if (size < 1) return 0;
    consume(data + 1, size - 1, data[0] % 3, data[0] / 3 % 2 == 0);
    return 0;
}

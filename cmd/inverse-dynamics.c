/* inverse-dynamics: BVH reference motion -> reference.h5 with PD targets ([L13] 5.1, eq. 19-32). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/cli.h"
#include "core/log.h"
#include "store/character.h"
#include "io/config.h"
#include "motion/inverse_dynamics.h"
#include "settings/motion.h"
#include "store/reference.h"

static const char *usage = "-c CONFIG.yaml -o reference.h5 character.h5\n"
                           "Retargets the config's BVH motion onto the character keeping the capture's floor contacts,\n"
                           "estimates velocities and accelerations at simulation rate (eq. 20-24), the ground contact\n"
                           "(eq. 25-31) and the joint torques by recursive Newton-Euler, and turns them into PD targets\n"
                           "(eq. 32). See configs/walk.yaml for every key.";

/* The summary on the log: what retargeting, contact estimation and inverse dynamics made of the clip. */
static void log_summary(const char *output, const sc_id_config *c, const sc_model *m, const sc_reference *ref, const sc_id_report *rep,
                        const sc_id_pipeline_info *info)
{
    const sc_retarget_info *rt = &info->retarget;
    const char *src = rep->mass_source == SC_MASS_SKIN ? "skin weights"
        : rep->mass_source == SC_MASS_NEAREST          ? "nearest bone (no /skin)"
                                                       : "fixed nodes";
    sc_log_info("inverse-dynamics: %s", output);
    sc_log_info("  motion        %s frames %d..%d (%.3f s at %.1f fps) -> %d samples at %g s, %s differences", c->bvh, rt->first, rt->last,
                (rt->last - rt->first) * info->frame_time, 1.0 / info->frame_time, ref->n, c->dt,
                c->scheme == SC_DIFF_FORWARD ? "forward" : "central");
    sc_log_info("  retarget      leg %.3f m (character) / %.3f m (BVH): root scale %.4f; largest rest alignment %.1f deg "
                "(%s); hinge fit drops <= %.1f deg (%s), hinge tips within %.3f m of the BVH's",
                rt->leg_char, rt->leg_bvh, rt->root_scale, rt->max_align_deg, m->bone_name[rt->align_bone], rt->max_hinge_swing_deg,
                m->bone_name[rt->hinge_bone], rt->max_hinge_tip_error);
    sc_log_info("  floor         levelled by %.2f deg (slopes %.4f, %.4f), root shifted by %.4f m", info->floor.tilt_deg, info->floor.slope[0],
                info->floor.slope[1], info->floor.shift);
    sc_log_info("  contacts      tolerances %.3f m, %.2f m/s (%s); %d contact intervals in the capture (%ld frames from the "
                "resultant check); fit: %d/%d within 2 cm of the floor (largest gap %.3f m, %s), root lowered by <= %.3f m, "
                "balance moved it by <= %.3f m",
                info->height_tol, info->speed_tol, c->height_tol > 0 || c->speed_tol > 0 ? "given" : "from the character", info->detect.intervals,
                info->detect.frames_rescued, info->fit.kept, info->fit.intervals, info->fit.max_gap, m->bone_name[info->fit.max_gap_bone],
                info->fit.max_root_offset, info->fit.max_balance_offset);
    for (int j = 0; j < m->nbones; j++)
        if (info->detect.bone_intervals[j] > 0) sc_log_info("  contact bone  %-12s %d intervals", m->bone_name[j], info->detect.bone_intervals[j]);
    sc_log_info("  balance       centre-of-mass acceleration off the feasible set: %.3f -> %.3f m/s^2 rms (root moved <= %.4f m)",
                info->balance.misfit_before, info->balance.misfit_after, info->balance.max_offset);
    sc_log_info("  mass          %.2f kg (bone inertias from all nodes by %s); weight %.1f N", rep->total_mass, src, rep->weight);
    sc_log_info("  contact       mean vertical force %.1f N (%.3f x weight; mean resultant before clamps %.1f N), peak %.1f N", rep->mean_contact_fy,
                rep->mean_contact_fy / rep->weight, rep->mean_resultant_fy, rep->peak_contact_fy);
    sc_log_info("  check         mean vertical force %.3f x (m g + m dv/T = %.1f N); unsupported %.2f %% of samples; root residual "
                "rms %.3f m g; peak force in the first 0.2 s %.2f m g; contacts kept %d/%d, largest gap %.3f m (%s)",
                rep->mean_contact_fy / rep->expected_fy, rep->expected_fy, 100.0 * rep->unsupported / ref->n, rep->residual_force_rms / rep->weight,
                rep->peak_contact_fy_start / rep->weight, rep->contacts_kept, rep->contact_intervals, rep->max_contact_gap,
                m->bone_name[rep->max_gap_bone]);
    for (int j = 0; j < m->nbones; j++)
        if (rep->duty[j] > 0) sc_log_info("  duty factor   %-12s %.3f", m->bone_name[j], rep->duty[j]);
    sc_log_info("  clamps        push-only %ld, friction cone %ld, contact torque %ld (of %ld bone-steps in contact); %ld "
                "steps with force but no bone in contact, %ld whose contact came from the resultant",
                rep->contact.push_only, rep->contact.friction, rep->contact.torque, rep->contact.contact_steps, rep->contact.lost_steps,
                rep->contact.rescued_steps);
    sc_log_info("  root residual force rms %.2f N (max %.1f), torque rms %.2f N m (max %.1f)", rep->residual_force_rms, rep->residual_force_max,
                rep->residual_torque_rms, rep->residual_torque_max);
    for (int j = 1; j < m->nbones; j++)
        sc_log_info("  torque        %-12s peak %7.1f  rms %6.1f N m%s", m->bone_name[j], rep->peak_torque[j], rep->rms_torque[j],
                    rep->limit_exceeded[j] ? "  (exceeds the torque limit)" : "");
    sc_log_info("  targets       %ld offsets clamped to %.2f rad; time %.2f s", rep->target_clamps, c->id.max_target_offset, info->seconds);
    for (const char *w = info->warnings; *w;) { /* also in /report/warnings */
        const char *end = strchr(w, '\n');
        int len = end ? (int)(end - w) : (int)strlen(w);
        sc_log_warn("inverse-dynamics: %s: %.*s", output, len, w);
        w += len + (end != NULL);
    }
}

int main(int argc, char **argv)
{
    sc_cli cli;
    sc_cli_parse(&cli, argc, argv, "inverse-dynamics", usage, 1, 1, 1, SC_CLI_OUTPUT, NULL);
    sc_err err = {0};
    sc_cfg *cfg = NULL;
    sc_id_config c;
    if (sc_cfg_load_file(cli.config, &cfg, &err) || sc_id_read_config(cfg, &c, &err) ||
        (sc_cli_ignore_other_sections(cfg), sc_cfg_check_unknown(cfg, &err)))
        sc_cli_die(&cli, &err);
    sc_cli_add_input_named(&cli, c.bvh, "config's motion.bvh"); /* read too: never the output */
    sc_model m;
    sc_reference ref;
    sc_id_report rep;
    sc_id_pipeline_info info;
    if (sc_character_read(cli.inputs[0], &m, 0, &err) || sc_character_require_bones(cli.inputs[0], &m, "inverse-dynamics", &err) ||
        sc_id_compute(&c, &m, &ref, &rep, &info, &err))
        sc_cli_die(&cli, &err);
    char *resolved = sc_cfg_resolved_text(cfg);
    sc_reference_source src = {argc, argv, resolved, cli.inputs[0], c.bvh, c.scheme};
    if (sc_reference_save(cli.output, &src, &m, &ref, &rep, &info, &err)) sc_cli_die(&cli, &err);
    log_summary(cli.output, &c, &m, &ref, &rep, &info);
    free(resolved);
    sc_reference_free(&ref);
    sc_model_free(&m);
    sc_id_config_free(&c);
    sc_cfg_free(cfg);
    return 0;
}

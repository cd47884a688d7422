/* inverse-dynamics: BVH reference motion -> reference.h5 with PD targets ([L13] 5.1, eq. 19-32). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/cli.h"
#include "control/reference.h"
#include "core/log.h"
#include "io/character.h"
#include "io/config.h"

static const char *usage =
    "-c CONFIG.yaml -o reference.h5 character.h5\n"
    "Retargets the config's BVH motion onto the character, estimates velocities and accelerations at\n"
    "simulation rate (eq. 20-24), the ground contact (eq. 25-31) and the joint torques by recursive\n"
    "Newton-Euler, and turns them into PD targets (eq. 32). See configs/walk.yaml for every key.";

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
    double t0 = sc_wall_time();

    sc_model m;
    sc_bvh bvh;
    sc_motion motion;
    sc_retarget_info info;
    sc_body body;
    sc_gc_geom geom;
    sc_traj traj;
    sc_reference ref;
    sc_id_report rep;
    unsigned char allowed[SC_BODY_MAX_BONES];
    sc_cli_add_input(&cli, c.bvh);
    if (sc_character_read(cli.inputs[0], &m, 0, &err)) sc_cli_die(&cli, &err);
    if (sc_bvh_load(c.bvh, &bvh, &err)) sc_cli_die(&cli, &err);
    if (c.filter == 2 && !(c.filter_cutoff < 0.5 / bvh.frame_time)) {
        /* the clip's rate is known only now: say where the cutoff was set */
        char w[256];
        sc_fail(&err, SC_EINPUT, "%s: motion.filter_cutoff %g Hz must be below half the frame rate of %s (%.6g Hz)",
                sc_cfg_where(sc_cfg_get(sc_cfg_get(sc_cfg_root(cfg), "motion"), "filter_cutoff"), w, sizeof w), c.filter_cutoff,
                c.bvh, 0.5 / bvh.frame_time);
        sc_cli_die(&cli, &err);
    }
    if (sc_retarget(&bvh, c.bvh, &m, &c.retarget, &motion, &info, &err) ||
        (c.filter == 1 && sc_motion_smooth(&motion, c.filter_window, &err)) ||
        (c.filter == 2 && sc_motion_lowpass(&motion, c.filter_cutoff, &err)) || sc_body_from_model(&m, c.mass_model, &body, &err) ||
        sc_gc_geom_build(&m, &geom, &err) || sc_id_allowed_mask(&c, &m, allowed, &err))
        sc_cli_die(&cli, &err);
    c.id.contact.allowed = allowed;
    sc_gc_floor_info fl = {0};
    if (c.floor_mode > 0) {
        if (sc_gc_floor(&body, &geom, &motion, allowed, c.id.contact.speed_tol, c.floor_mode == 2, c.floor_percentile, c.height_offset, &fl, &err))
            sc_cli_die(&cli, &err);
    } else {
        fl.shift = c.height_offset;
        for (int f = 0; f < motion.nframes; f++) motion.root_pos[3 * f + 1] += fl.shift;
    }
    sc_log_debug("  timing        retarget, floor done at %.2f s", sc_wall_time() - t0);
    if (sc_traj_from_motion(&motion, c.dt, c.scheme, &traj, &err) || sc_id_run(&m, &body, &geom, &traj, &c.id, &ref, &rep, &err))
        sc_cli_die(&cli, &err);

    sc_log_debug("  timing        ID done at %.2f s", sc_wall_time() - t0);
    char *resolved = sc_cfg_resolved_text(cfg);
    char range[64];
    snprintf(range, sizeof range, "%d..%d", info.first, info.last);
    sc_h5 *f;
    if (sc_h5_create(cli.output, &f, &err)) sc_cli_die(&cli, &err);
    if (sc_h5_provenance(f, SC_REFERENCE_SCHEMA, argc, argv, resolved, &err) ||
        sc_h5_attr_str(f, "/", "character", cli.inputs[0], &err) || sc_reference_write_character(f, &m, &err) ||
        sc_h5_attr_str(f, "/", "motion", c.bvh, &err) ||
        sc_h5_attr_str(f, "/", "frame_range", range, &err) || sc_h5_attr_i64(f, "/", "first_frame", info.first, &err) ||
        sc_h5_attr_i64(f, "/", "last_frame", info.last, &err) || sc_h5_attr_f64(f, "/", "frame_time", bvh.frame_time, &err) ||
        sc_h5_attr_f64(f, "/", "root_scale", info.root_scale, &err) || sc_h5_attr_f64(f, "/", "floor_shift_m", fl.shift, &err) ||
        sc_h5_attr_f64(f, "/", "floor_tilt_deg", fl.tilt_deg, &err) ||
        sc_h5_attr_f64(f, "/", "max_rest_alignment_deg", info.max_align_deg, &err) ||
        sc_h5_attr_f64(f, "/", "max_hinge_tip_error_m", info.max_hinge_tip_error, &err) ||
        sc_h5_attr_str(f, "/", "differences", c.scheme == SC_DIFF_FORWARD ? "forward" : "central", &err) ||
        sc_reference_write(f, &ref, &err) || sc_reference_write_report(f, &ref, &rep, &err)) {
        sc_h5_abort(f);
        sc_cli_die(&cli, &err);
    }
    if (sc_h5_commit(f, &err)) sc_cli_die(&cli, &err);

    const char *src = rep.mass_source == SC_MASS_SKIN ? "skin weights" : rep.mass_source == SC_MASS_NEAREST ? "nearest bone (no /skin)" : "fixed nodes";
    sc_log_info("inverse-dynamics: %s", cli.output);
    sc_log_info("  motion        %s frames %d..%d (%.3f s at %.1f fps) -> %d samples at %g s, %s differences", c.bvh,
                info.first, info.last, (info.last - info.first) * bvh.frame_time, 1.0 / bvh.frame_time, ref.n, c.dt,
                c.scheme == SC_DIFF_FORWARD ? "forward" : "central");
    sc_log_info("  retarget      leg %.3f m (character) / %.3f m (BVH): root scale %.4f; largest rest alignment %.1f deg "
                "(%s); hinge fit drops <= %.1f deg (%s), hinge tips within %.3f m of the BVH's", info.leg_char, info.leg_bvh,
                info.root_scale, info.max_align_deg, m.bone_name[info.align_bone], info.max_hinge_swing_deg,
                m.bone_name[info.hinge_bone], info.max_hinge_tip_error);
    sc_log_info("  floor         levelled by %.2f deg (slopes %.4f, %.4f), root shifted by %.4f m", fl.tilt_deg, fl.slope[0],
                fl.slope[1], fl.shift);
    sc_log_info("  mass          %.2f kg (bone inertias from all nodes by %s); weight %.1f N", rep.total_mass, src, rep.weight);
    sc_log_info("  contact       mean vertical force %.1f N (%.3f x weight; resultant before clamps %.1f N), peak %.1f N",
                rep.mean_contact_fy, rep.mean_contact_fy / rep.weight, rep.mean_resultant_fy, rep.peak_contact_fy);
    for (int j = 0; j < m.nbones; j++)
        if (rep.duty[j] > 0) sc_log_info("  duty factor   %-12s %.3f", m.bone_name[j], rep.duty[j]);
    sc_log_info("  clamps        push-only %ld, friction cone %ld, contact torque %ld (of %ld bone-steps in contact); %ld "
                "steps with force but no bone in contact", rep.contact.push_only, rep.contact.friction, rep.contact.torque,
                rep.contact.contact_steps, rep.contact.lost_steps);
    sc_log_info("  root residual force rms %.2f N (max %.1f), torque rms %.2f N m (max %.1f)", rep.residual_force_rms,
                rep.residual_force_max, rep.residual_torque_rms, rep.residual_torque_max);
    for (int j = 1; j < m.nbones; j++)
        sc_log_info("  torque        %-12s peak %7.1f  rms %6.1f N m%s", m.bone_name[j], rep.peak_torque[j], rep.rms_torque[j],
                    rep.limit_exceeded[j] ? "  (exceeds the torque limit)" : "");
    sc_log_info("  targets       %ld offsets clamped to %.2f rad; time %.2f s", rep.target_clamps, c.id.max_target_offset,
                sc_wall_time() - t0);
    free(resolved);
    sc_reference_free(&ref);
    sc_traj_free(&traj);
    sc_gc_geom_free(&geom);
    sc_body_free(&body);
    sc_motion_free(&motion);
    sc_bvh_free(&bvh);
    sc_model_free(&m);
    sc_cfg_free(cfg);
    return 0;
}

/* reference.h5: the writer (datasets, /report, root attributes) and the checked reader. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/reference.h"
#include "store/character.h"

/* ---- writing ---------------------------------------------------------------------------- */

static int put_f64(sc_h5 *f, sc_h5_series *tl, const char *path, int n, int rank, const size_t *sdims, const double *data, const char *units,
                   const char *desc, sc_err *err)
{
    sc_h5_series *s;
    int rc = sc_h5_series_create(f, path, tl, rank, sdims, units, desc, &s, err);
    if (rc) return rc;
    size_t per = 1;
    for (int i = 0; i < rank; i++) per *= sdims[i];
    for (int k = 0; k < n && !rc; k++) rc = sc_h5_series_append(s, data + (size_t)k * per, err);
    return rc;
}

int sc_reference_write(sc_h5 *f, const sc_reference *r, sc_err *err)
{
    int rc, n = r->n;
    size_t nb = (size_t)r->nb;
    const char *names[SC_BODY_MAX_BONES];
    if (r->nb > SC_BODY_MAX_BONES) return sc_fail(err, SC_EINPUT, "reference: %d bones", r->nb);
    for (int j = 0; j < r->nb; j++) names[j] = r->names[j];
    sc_h5_series *tl;
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)
    TRY(sc_h5_timeline_create(f, "/time", &tl, err));
    for (int k = 0; k < n; k++) TRY(sc_h5_series_append(tl, &r->time[k], err));
    TRY(sc_h5_attr_str(f, "/time", "description", "simulation-rate sample times from the first frame used", err));
    TRY(sc_h5_group(f, "/bones", "the character's bones, in character order (bone 0 is the root)", err));
    TRY(sc_h5_write_strings(f, "/bones/names", nb, names, "bone names", err));
    TRY(sc_h5_group(f, "/reference", "reference motion at simulation rate ([L13] eq. 20-24); quaternions w,x,y,z", err));
    size_t d3[1] = {3}, b3[2] = {nb, 3}, b4[2] = {nb, 4}, b1[1] = {nb}, d6[1] = {6};
    TRY(put_f64(f, tl, "/reference/root_pos", n, 1, d3, r->root_pos, "m", "root bone origin, world", err));
    TRY(put_f64(f, tl, "/reference/root_lin_vel", n, 1, d3, r->root_vel, "m/s", "root origin velocity, world (eq. 20, 23)", err));
    TRY(put_f64(f, tl, "/reference/root_lin_acc", n, 1, d3, r->root_acc, "m/s^2", "root origin acceleration, world (eq. 21-22)", err));
    TRY(put_f64(f, tl, "/reference/local_quat", n, 2, b4, r->local_quat, "1",
                "rotation of each bone relative to its parent (root: world), identity at the character's rest pose", err));
    TRY(put_f64(f, tl, "/reference/local_ang_vel", n, 2, b3, r->local_ang_vel, "rad/s",
                "angular velocity of each bone relative to its parent, in the parent frame (root: world)", err));
    TRY(put_f64(f, tl, "/reference/local_ang_acc", n, 2, b3, r->local_ang_acc, "rad/s^2", "time derivative of local_ang_vel's components", err));
    TRY(put_f64(f, tl, "/reference/bone_pos", n, 2, b3, r->bone_pos, "m", "world position of each bone origin (joint)", err));
    TRY(put_f64(f, tl, "/reference/bone_quat", n, 2, b4, r->bone_quat, "1", "world rotation of each bone", err));
    TRY(put_f64(f, tl, "/reference/com", n, 1, d3, r->com, "m", "whole-body centre of mass of the ID mass model", err));
    TRY(put_f64(f, tl, "/reference/com_vel", n, 1, d3, r->com_vel, "m/s", "velocity of the centre of mass", err));
    TRY(sc_h5_group(f, "/targets", "PD targets ([L13] eq. 32) in the servo convention of the skeleton", err));
    TRY(put_f64(f, tl, "/targets/local_quat", n, 2, b4, r->target_quat, "1",
                "PD target local rotations: ball joints reference*exp(delta), delta = (tau + kd w)/kp in the joint frame; "
                "hinges: rotation about the axis; root: identity. Slerp between samples",
                err));
    TRY(sc_h5_group(f, "/contact", "estimated ground contact ([L13] eq. 25-31); ground plane y = 0", err));
    TRY(put_f64(f, tl, "/contact/force", n, 2, b3, r->contact_force, "N", "ground force on each bone, at its centre of mass", err));
    TRY(put_f64(f, tl, "/contact/torque", n, 2, b3, r->contact_torque, "N m", "ground torque on each bone, about its centre of mass", err));
    {
        sc_h5_series *s;
        TRY(sc_h5_series_create_i32(f, "/contact/flag", tl, 1, b1, "1 when the bone is in contact", &s, err));
        for (int k = 0; k < n; k++) TRY(sc_h5_series_append_i32(s, r->contact_flag + (size_t)k * nb, err));
    }
    {
        sc_h5_series *s;
        TRY(sc_h5_series_create_i32(f, "/contact/captured", tl, 1, b1,
                                    "1 where the capture touches the floor with the bone (the contacts retargeting kept)", &s, err));
        for (int k = 0; k < n; k++) TRY(sc_h5_series_append_i32(s, r->captured + (size_t)k * nb, err));
        int allowed[SC_BODY_MAX_BONES] = {0};
        for (size_t i = 0; i < (size_t)n * nb; i++) allowed[i % nb] |= r->contact_flag[i] | r->captured[i];
        size_t dn[1] = {nb};
        TRY(sc_h5_write_i32(f, "/contact/allowed", 1, dn, allowed, "1 for the bones that touch the floor anywhere in the clip", err));
    }
    TRY(put_f64(f, tl, "/contact/lowest_height", n, 1, b1, r->contact_height, "m", "height of each bone's lowest point", err));
    TRY(put_f64(f, tl, "/contact/lowest_speed", n, 1, b1, r->contact_speed, "m/s", "speed of each bone's lowest (material) point", err));
    TRY(put_f64(f, tl, "/contact/resultant", n, 1, d6, r->contact_resultant, "N, N m",
                "resultant contact force (eq. 25) and torque about the com (eq. 26), before the split and clamps", err));
    TRY(sc_h5_group(f, "/torques", "recursive Newton-Euler inverse dynamics", err));
    TRY(put_f64(f, tl, "/torques/joint", n, 2, b3, r->joint_torque, "N m",
                "servo torque on each bone (world; its parent receives the opposite; hinges: axial part); root 0", err));
    TRY(put_f64(f, tl, "/torques/root_residual", n, 1, d6, r->root_residual, "N, N m",
                "force and torque about the root origin the unactuated root would still need", err));
#undef TRY
    return SC_OK;
}

int sc_reference_write_report(sc_h5 *f, const sc_reference *r, const sc_id_report *rep, sc_err *err)
{
    int rc, nb = rep->nb;
    double tmp[SC_BODY_MAX_BONES];
    char names[SC_BODY_MAX_BONES * (SC_NAME_LEN + 1)] = "";
    size_t c = 0;
    for (int j = 0; j < nb; j++) c += (size_t)snprintf(names + c, sizeof names - c, "%s%s", j ? "," : "", r->names[j]);
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)
    TRY(sc_h5_group(f, "/report", "inverse-dynamics report: torques N m, forces N, masses kg; arrays in joint_names order", err));
    TRY(sc_h5_attr_str(f, "/report", "joint_names", names, err));
    TRY(sc_h5_attr_f64_array(f, "/report", "peak_torque_Nm", (size_t)nb, rep->peak_torque, err));
    TRY(sc_h5_attr_f64_array(f, "/report", "rms_torque_Nm", (size_t)nb, rep->rms_torque, err));
    for (int j = 0; j < nb; j++) tmp[j] = (double)rep->limit_exceeded[j];
    TRY(sc_h5_attr_f64_array(f, "/report", "torque_limit_exceeded", (size_t)nb, tmp, err));
    TRY(sc_h5_attr_f64_array(f, "/report", "contact_duty_factor", (size_t)nb, rep->duty, err));
    for (int j = 0; j < nb; j++)
        if (rep->duty[j] > 0) {
            char a[SC_NAME_LEN + 8];
            snprintf(a, sizeof a, "duty_%s", r->names[j]);
            TRY(sc_h5_attr_f64(f, "/report", a, rep->duty[j], err));
        }
    TRY(sc_h5_attr_i64(f, "/report", "push_only_clamps", rep->contact.push_only, err));
    TRY(sc_h5_attr_i64(f, "/report", "friction_cone_clamps", rep->contact.friction, err));
    TRY(sc_h5_attr_i64(f, "/report", "contact_torque_clamps", rep->contact.torque, err));
    TRY(sc_h5_attr_i64(f, "/report", "contact_bone_steps", rep->contact.contact_steps, err));
    TRY(sc_h5_attr_i64(f, "/report", "steps_without_contact_bones", rep->contact.lost_steps, err));
    TRY(sc_h5_attr_i64(f, "/report", "steps_contact_from_resultant", rep->contact.rescued_steps, err));
    TRY(sc_h5_attr_i64(f, "/report", "target_offset_clamps", rep->target_clamps, err));
    TRY(sc_h5_attr_i64(f, "/report", "samples", r->n, err));
    TRY(sc_h5_attr_f64(f, "/report", "dt_s", r->dt, err));
    TRY(sc_h5_attr_f64(f, "/report", "total_mass_kg", rep->total_mass, err));
    TRY(sc_h5_attr_str(f, "/report", "mass_source",
                       rep->mass_source == SC_MASS_SKIN          ? "skin weights"
                           : rep->mass_source == SC_MASS_NEAREST ? "nearest bone"
                                                                 : "fixed nodes",
                       err));
    TRY(sc_h5_attr_f64(f, "/report", "weight_N", rep->weight, err));
    TRY(sc_h5_attr_f64(f, "/report", "mean_contact_force_y_N", rep->mean_contact_fy, err));
    TRY(sc_h5_attr_f64(f, "/report", "mean_resultant_force_y_N", rep->mean_resultant_fy, err));
    TRY(sc_h5_attr_f64(f, "/report", "peak_contact_force_y_N", rep->peak_contact_fy, err));
    TRY(sc_h5_attr_f64(f, "/report", "root_residual_force_rms_N", rep->residual_force_rms, err));
    TRY(sc_h5_attr_f64(f, "/report", "root_residual_force_max_N", rep->residual_force_max, err));
    TRY(sc_h5_attr_f64(f, "/report", "root_residual_torque_rms_Nm", rep->residual_torque_rms, err));
    TRY(sc_h5_attr_f64(f, "/report", "root_residual_torque_max_Nm", rep->residual_torque_max, err));
    TRY(sc_h5_attr_f64(f, "/report", "expected_mean_force_y_N", rep->expected_fy, err));
    TRY(sc_h5_attr_f64(f, "/report", "mean_force_ratio", rep->mean_contact_fy / rep->expected_fy, err));
    TRY(sc_h5_attr_i64(f, "/report", "unsupported_samples", rep->unsupported, err));
    TRY(sc_h5_attr_f64(f, "/report", "unsupported_fraction", (double)rep->unsupported / r->n, err));
    TRY(sc_h5_attr_f64(f, "/report", "root_residual_force_rms_per_weight", rep->residual_force_rms / rep->weight, err));
    TRY(sc_h5_attr_f64(f, "/report", "peak_contact_force_y_first_0.2s_per_weight", rep->peak_contact_fy_start / rep->weight, err));
    TRY(sc_h5_attr_i64(f, "/report", "contact_intervals", rep->contact_intervals, err));
    TRY(sc_h5_attr_i64(f, "/report", "contact_intervals_kept", rep->contacts_kept, err));
    TRY(sc_h5_attr_f64(f, "/report", "max_contact_gap_m", rep->max_contact_gap, err));
#undef TRY
    return SC_OK;
}

int sc_reference_write_pipeline_report(sc_h5 *f, const sc_id_pipeline_info *info, sc_err *err)
{
    int rc;
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)
    TRY(sc_h5_attr_f64(f, "/report", "contact_height_tol_m", info->height_tol, err));
    TRY(sc_h5_attr_f64(f, "/report", "contact_speed_tol_m_per_s", info->speed_tol, err));
    TRY(sc_h5_attr_i64(f, "/report", "captured_contact_intervals", info->detect.intervals, err));
    TRY(sc_h5_attr_i64(f, "/report", "captured_frames_from_resultant", info->detect.frames_rescued, err));
    TRY(sc_h5_attr_f64(f, "/report", "fit_max_gap_keyframes_m", info->fit.max_gap, err));
    TRY(sc_h5_attr_f64(f, "/report", "fit_root_lowered_m", info->fit.max_root_offset, err));
    TRY(sc_h5_attr_f64(f, "/report", "fit_balance_offset_m", info->fit.max_balance_offset, err));
    TRY(sc_h5_attr_f64(f, "/report", "balance_misfit_before_m_per_s2", info->balance.misfit_before, err));
    TRY(sc_h5_attr_f64(f, "/report", "balance_misfit_after_m_per_s2", info->balance.misfit_after, err));
    TRY(sc_h5_attr_f64(f, "/report", "balance_offset_m", info->balance.max_offset, err));
    TRY(sc_h5_attr_i64(f, "/report", "warning_count", info->nwarnings, err));
    TRY(sc_h5_attr_str(f, "/report", "warnings", info->warnings, err));
#undef TRY
    return SC_OK;
}

/* ---- reading ---------------------------------------------------------------------------- */

int sc_reference_check_character(const sc_reference *r, const char *path, const sc_model *m, sc_err *err)
{
    return sc_character_hash_check(path, r->character_hash, m, err);
}

/* The root attributes: where the reference came from and what retargeting made of the clip. */
static int write_source(sc_h5 *f, const sc_reference_source *src, const sc_model *m, const sc_id_pipeline_info *info, sc_err *err)
{
    const sc_retarget_info *rt = &info->retarget;
    char range[64];
    snprintf(range, sizeof range, "%d..%d", rt->first, rt->last);
    int rc;
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)
    TRY(sc_h5_provenance(f, SC_REFERENCE_SCHEMA, src->argc, src->argv, src->config_text, err));
    TRY(sc_h5_attr_str(f, "/", "character", src->character, err));
    TRY(sc_character_hash_write(f, sc_model_hash(m), err));
    TRY(sc_h5_attr_str(f, "/", "motion", src->motion, err));
    TRY(sc_h5_attr_str(f, "/", "frame_range", range, err));
    TRY(sc_h5_attr_i64(f, "/", "first_frame", rt->first, err));
    TRY(sc_h5_attr_i64(f, "/", "last_frame", rt->last, err));
    TRY(sc_h5_attr_f64(f, "/", "frame_time", info->frame_time, err));
    TRY(sc_h5_attr_f64(f, "/", "root_scale", rt->root_scale, err));
    TRY(sc_h5_attr_f64(f, "/", "floor_shift_m", info->floor.shift, err));
    TRY(sc_h5_attr_f64(f, "/", "floor_tilt_deg", info->floor.tilt_deg, err));
    TRY(sc_h5_attr_f64(f, "/", "max_rest_alignment_deg", rt->max_align_deg, err));
    TRY(sc_h5_attr_f64(f, "/", "max_hinge_tip_error_m", rt->max_hinge_tip_error, err));
    TRY(sc_h5_attr_str(f, "/", "differences", src->scheme == SC_DIFF_FORWARD ? "forward" : "central", err));
#undef TRY
    return SC_OK;
}

int sc_reference_save(const char *path, const sc_reference_source *src, const sc_model *m, const sc_reference *r, const sc_id_report *rep,
                      const sc_id_pipeline_info *info, sc_err *err)
{
    sc_h5 *f;
    int rc = sc_h5_create(path, &f, err);
    if (rc) return rc;
    if ((rc = write_source(f, src, m, info, err)) || (rc = sc_reference_write(f, r, err)) || (rc = sc_reference_write_report(f, r, rep, err)) ||
        (rc = sc_reference_write_pipeline_report(f, info, err))) {
        sc_h5_abort(f);
        return rc;
    }
    return sc_h5_commit(f, err);
}

static int rd(sc_h5 *f, const char *path, int required, int rank, size_t n, size_t nb, size_t last, double *dst, sc_err *err)
{
    if (!sc_h5_exists(f, path)) {
        if (required) return sc_fail(err, SC_EINPUT, "%s:%s: missing", sc_h5_filename(f), path);
        return SC_OK;
    }
    size_t dims[3] = {n, rank == 3 ? nb : last, last}; /* rank 2: [n, last]; rank 3: [n, nb, last] */
    double *data;
    int rc = sc_h5_read_f64(f, path, rank, dims, &data, err);
    if (rc) return rc;
    size_t tot = n * (rank == 3 ? nb * last : last);
    memcpy(dst, data, tot * sizeof(double));
    free(data);
    return SC_OK;
}

/* The values of a reference, checked after reading (a hand-edited or damaged file fails here,
   naming the dataset and element, instead of steering a simulation with NaN). */
static int check_reference(sc_h5 *f, const sc_reference *r, int has_flag, int has_captured, sc_err *err)
{
    size_t n = (size_t)r->n, nb = (size_t)r->nb, q4[3] = {n, nb, 4}, v3[3] = {n, nb, 3};
    int rc;
#define CHECK(x)                   \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)
    CHECK(sc_h5_check_increasing(f, "/time", r->time, n, err));
    CHECK(sc_h5_check_range(f, "/reference/root_pos", r->root_pos, 3 * n, 3, -1e4, 1e4, 0, err));
    CHECK(sc_h5_check_unit_quats(f, "/reference/local_quat", r->local_quat, 3, q4, err));
    CHECK(sc_h5_check_unit_quats(f, "/targets/local_quat", r->target_quat, 3, q4, err));
    /* the optional series are zero when absent */
    CHECK(sc_h5_check_finite(f, "/reference/root_lin_vel", r->root_vel, 3 * n, 3, err));
    CHECK(sc_h5_check_finite(f, "/reference/root_lin_acc", r->root_acc, 3 * n, 3, err));
    CHECK(sc_h5_check_range_nd(f, "/reference/local_ang_vel", r->local_ang_vel, 3, v3, -INFINITY, INFINITY, 0, err));
    CHECK(sc_h5_check_range_nd(f, "/reference/local_ang_acc", r->local_ang_acc, 3, v3, -INFINITY, INFINITY, 0, err));
    CHECK(sc_h5_check_range_nd(f, "/reference/bone_pos", r->bone_pos, 3, v3, -1e4, 1e4, 0, err));
    CHECK(sc_h5_check_range_nd(f, "/reference/bone_quat", r->bone_quat, 3, q4, -INFINITY, INFINITY, 0, err));
    CHECK(sc_h5_check_range(f, "/reference/com", r->com, 3 * n, 3, -1e4, 1e4, 0, err));
    CHECK(sc_h5_check_finite(f, "/reference/com_vel", r->com_vel, 3 * n, 3, err));
    CHECK(sc_h5_check_range_nd(f, "/contact/force", r->contact_force, 3, v3, -INFINITY, INFINITY, 0, err));
    CHECK(sc_h5_check_range_nd(f, "/contact/torque", r->contact_torque, 3, v3, -INFINITY, INFINITY, 0, err));
    CHECK(sc_h5_check_finite(f, "/contact/lowest_height", r->contact_height, n * nb, nb, err));
    CHECK(sc_h5_check_range(f, "/contact/lowest_speed", r->contact_speed, n * nb, nb, 0, INFINITY, 0, err));
    CHECK(sc_h5_check_finite(f, "/contact/resultant", r->contact_resultant, 6 * n, 6, err));
    CHECK(sc_h5_check_range_nd(f, "/torques/joint", r->joint_torque, 3, v3, -INFINITY, INFINITY, 0, err));
    CHECK(sc_h5_check_finite(f, "/torques/root_residual", r->root_residual, 6 * n, 6, err));
    if (has_flag) CHECK(sc_h5_check_index(f, "/contact/flag", r->contact_flag, n * nb, nb, 0, 1, err));
    if (has_captured) CHECK(sc_h5_check_index(f, "/contact/captured", r->captured, n * nb, nb, 0, 1, err));
#undef CHECK
    return SC_OK;
}

int sc_reference_read_h5(sc_h5 *f, sc_reference *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    const char *path = sc_h5_filename(f);
    char **names = NULL;
    size_t nnames = 0, tdims[1] = {0};
    double *time = NULL;
    int rc, has[2] = {0, 0}; /* /contact/flag, /contact/captured present */
    if ((rc = sc_h5_read_strings(f, "/bones/names", &nnames, &names, err)) ||
        (rc = sc_h5_check_count(f, "/bones/names", nnames, 1, SC_BODY_MAX_BONES, err)) ||
        (rc = sc_h5_check_names(f, "/bones/names", names, nnames, SC_NAME_LEN, err)) || (rc = sc_h5_read_f64(f, "/time", 1, tdims, &time, err)) ||
        (rc = sc_h5_check_count(f, "/time", tdims[0], 1, INT_MAX / 64, err)))
        goto fail;
    if ((rc = sc_reference_alloc(r, (int)tdims[0], (int)nnames, err))) goto fail;
    memcpy(r->time, time, tdims[0] * sizeof(double));
    r->dt = tdims[0] > 1 ? time[1] - time[0] : 0;
    for (size_t j = 0; j < nnames; j++) snprintf(r->names[j], SC_NAME_LEN, "%s", names[j]);
    size_t n = tdims[0], nb = nnames;
    if ((rc = rd(f, "/reference/root_pos", 1, 2, n, nb, 3, r->root_pos, err)) ||
        (rc = rd(f, "/reference/local_quat", 1, 3, n, nb, 4, r->local_quat, err)) ||
        (rc = rd(f, "/targets/local_quat", 1, 3, n, nb, 4, r->target_quat, err)) ||
        (rc = rd(f, "/reference/root_lin_vel", 0, 2, n, nb, 3, r->root_vel, err)) ||
        (rc = rd(f, "/reference/root_lin_acc", 0, 2, n, nb, 3, r->root_acc, err)) ||
        (rc = rd(f, "/reference/local_ang_vel", 0, 3, n, nb, 3, r->local_ang_vel, err)) ||
        (rc = rd(f, "/reference/local_ang_acc", 0, 3, n, nb, 3, r->local_ang_acc, err)) ||
        (rc = rd(f, "/reference/bone_pos", 0, 3, n, nb, 3, r->bone_pos, err)) ||
        (rc = rd(f, "/reference/bone_quat", 0, 3, n, nb, 4, r->bone_quat, err)) || (rc = rd(f, "/reference/com", 0, 2, n, nb, 3, r->com, err)) ||
        (rc = rd(f, "/reference/com_vel", 0, 2, n, nb, 3, r->com_vel, err)) ||
        (rc = rd(f, "/contact/force", 0, 3, n, nb, 3, r->contact_force, err)) ||
        (rc = rd(f, "/contact/torque", 0, 3, n, nb, 3, r->contact_torque, err)) ||
        (rc = rd(f, "/contact/lowest_height", 0, 2, n, nb, nb, r->contact_height, err)) ||
        (rc = rd(f, "/contact/lowest_speed", 0, 2, n, nb, nb, r->contact_speed, err)) ||
        (rc = rd(f, "/contact/resultant", 0, 2, n, nb, 6, r->contact_resultant, err)) ||
        (rc = rd(f, "/torques/joint", 0, 3, n, nb, 3, r->joint_torque, err)) ||
        (rc = rd(f, "/torques/root_residual", 0, 2, n, nb, 6, r->root_residual, err)))
        goto fail;
    static const char *const ipaths[2] = {"/contact/flag", "/contact/captured"};
    int *idst[2] = {r->contact_flag, r->captured};
    for (int i = 0; i < 2; i++)
        if (sc_h5_exists(f, ipaths[i])) {
            size_t d[2] = {n, nb};
            int *fl;
            if ((rc = sc_h5_read_i32(f, ipaths[i], 2, d, &fl, err))) goto fail;
            memcpy(idst[i], fl, n * nb * sizeof(int));
            free(fl);
            has[i] = 1;
        }
    if ((rc = check_reference(f, r, has[0], has[1], err))) goto fail;
    if ((rc = sc_character_hash_read(f, &r->character_hash, err))) goto fail;
    sc_h5_free_strings(names, nnames);
    free(time);
    return SC_OK;
fail:
    (void)path;
    if (names) sc_h5_free_strings(names, nnames);
    free(time);
    sc_reference_free(r);
    return rc;
}

static int reference_reader(sc_h5 *f, void *arg, sc_err *err) { return sc_reference_read_h5(f, arg, err); }

int sc_reference_read(const char *path, sc_reference *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    return sc_h5_read_file(path, reference_reader, r, err);
}

int sc_reference_read_image(const void *data, size_t size, const char *name, sc_reference *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    return sc_h5_read_image(data, size, name, reference_reader, r, err);
}

static int origin_reader(sc_h5 *f, void *arg, sc_err *err)
{
    sc_reference_origin *o = arg;
    char *motion = NULL;
    int rc = SC_OK;
    if (sc_h5_attr_exists(f, "/", "motion") && (rc = sc_h5_read_attr_str(f, "/", "motion", &motion, err))) return rc;
    if (motion) snprintf(o->motion, sizeof o->motion, "%s", motion);
    free(motion);
    if (sc_h5_attr_exists(f, "/", "first_frame") && (rc = sc_h5_read_attr_i64(f, "/", "first_frame", &o->first_frame, err))) return rc;
    if (sc_h5_attr_exists(f, "/", "last_frame") && (rc = sc_h5_read_attr_i64(f, "/", "last_frame", &o->last_frame, err))) return rc;
    if (sc_h5_attr_exists(f, "/", "config")) rc = sc_h5_read_attr_str(f, "/", "config", &o->config, err);
    return rc;
}

int sc_reference_read_origin(const char *path, sc_reference_origin *o, sc_err *err)
{
    memset(o, 0, sizeof *o);
    o->first_frame = o->last_frame = -1;
    int rc = sc_h5_read_file(path, origin_reader, o, err);
    if (rc) sc_reference_origin_free(o);
    return rc;
}

void sc_reference_origin_free(sc_reference_origin *o)
{
    free(o->config);
    o->config = NULL;
}

/* ---- what simulate replays, and render's ghost -------------------------------------------- */

int sc_reference_read_trajectory_h5(sc_h5 *f, const char *dataset, const sc_model *m, sc_controller *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    if (!dataset || !dataset[0]) dataset = "/targets/local_quat";
    sc_h5_rotations r;
    int rc = sc_h5_read_rotations(f, dataset, SC_NAME_LEN, &r, err);
    if (rc) return rc;
    /* a reference plays its own time */
    rc = sc_controller_from_rotations(m, sc_h5_filename(f), dataset, (int)r.n, r.time, r.names, (int)r.nb, r.quat, r.time, c, err);
    sc_h5_rotations_free(&r);
    return rc;
}

int sc_reference_read_poses(const char *path, sc_h5_poses *p, sc_err *err)
{
    memset(p, 0, sizeof *p);
    sc_h5 *f;
    int rc = sc_h5_open(path, &f, err);
    if (rc) return rc;
    rc = sc_h5_read_poses(f, "/time", "/reference/bone_pos", "/reference/bone_quat", p, err);
    sc_h5_close(f);
    return rc;
}

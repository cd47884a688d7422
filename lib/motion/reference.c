/* The reference in memory: allocation, the state and PD targets at a time, the content hash. */
#include <stdlib.h>
#include <string.h>
#include "core/hash.h"
#include "motion/reference.h"
#include "model/targets.h"

/* ---- memory ----------------------------------------------------------------------------- */

void sc_reference_free(sc_reference *r)
{
    if (!r) return;
    free(r->names);
    free(r->time);
    free(r->root_pos);
    free(r->root_vel);
    free(r->root_acc);
    free(r->local_quat);
    free(r->local_ang_vel);
    free(r->local_ang_acc);
    free(r->bone_pos);
    free(r->bone_quat);
    free(r->com);
    free(r->com_vel);
    free(r->target_quat);
    free(r->contact_force);
    free(r->contact_torque);
    free(r->contact_flag);
    free(r->captured);
    free(r->contact_height);
    free(r->contact_speed);
    free(r->contact_resultant);
    free(r->joint_torque);
    free(r->root_residual);
    memset(r, 0, sizeof *r);
}

int sc_reference_alloc(sc_reference *r, int n, int nb, sc_err *err)
{
    memset(r, 0, sizeof *r);
    if (n < 1 || nb < 1) return sc_fail(err, SC_EINPUT, "reference: %d samples, %d bones", n, nb);
    size_t N = (size_t)n, B = (size_t)nb;
    r->n = n;
    r->nb = nb;
    r->names = sc_alloc(err, B, sizeof *r->names);
    r->time = sc_alloc(err, N, sizeof(double));
    r->root_pos = sc_alloc(err, N * 3, sizeof(double));
    r->root_vel = sc_alloc(err, N * 3, sizeof(double));
    r->root_acc = sc_alloc(err, N * 3, sizeof(double));
    r->local_quat = sc_alloc(err, N * B * 4, sizeof(double));
    r->local_ang_vel = sc_alloc(err, N * B * 3, sizeof(double));
    r->local_ang_acc = sc_alloc(err, N * B * 3, sizeof(double));
    r->bone_pos = sc_alloc(err, N * B * 3, sizeof(double));
    r->bone_quat = sc_alloc(err, N * B * 4, sizeof(double));
    r->com = sc_alloc(err, N * 3, sizeof(double));
    r->com_vel = sc_alloc(err, N * 3, sizeof(double));
    r->target_quat = sc_alloc(err, N * B * 4, sizeof(double));
    r->contact_force = sc_alloc(err, N * B * 3, sizeof(double));
    r->contact_torque = sc_alloc(err, N * B * 3, sizeof(double));
    r->contact_flag = sc_alloc(err, N * B, sizeof(int));
    r->captured = sc_alloc(err, N * B, sizeof(int));
    r->contact_height = sc_alloc(err, N * B, sizeof(double));
    r->contact_speed = sc_alloc(err, N * B, sizeof(double));
    r->contact_resultant = sc_alloc(err, N * 6, sizeof(double));
    r->joint_torque = sc_alloc(err, N * B * 3, sizeof(double));
    r->root_residual = sc_alloc(err, N * 6, sizeof(double));
    if (!r->names || !r->time || !r->root_pos || !r->root_vel || !r->root_acc || !r->local_quat || !r->local_ang_vel || !r->local_ang_acc ||
        !r->bone_pos || !r->bone_quat || !r->com || !r->com_vel || !r->target_quat || !r->contact_force || !r->contact_torque || !r->contact_flag ||
        !r->captured || !r->contact_height || !r->contact_speed || !r->contact_resultant || !r->joint_torque || !r->root_residual) {
        sc_reference_free(r);
        return SC_EIO;
    }
    return SC_OK;
}

/* ---- lookups ---------------------------------------------------------------------------- */

int sc_reference_state_at(const sc_reference *r, const sc_model *m, double t, double root_pos[3], sc_quat *local, double root_vel[3],
                          double *local_ang_vel, sc_err *err)
{
    int k = 0; /* the sample at or just before t */
    while (k + 1 < r->n && r->time[k + 1] <= t) k++;
    for (int b = 0; b < m->nbones; b++) {
        local[b] = sc_q_identity();
        if (local_ang_vel) local_ang_vel[3 * b] = local_ang_vel[3 * b + 1] = local_ang_vel[3 * b + 2] = 0;
    }
    for (int j = 0; j < r->nb; j++) {
        int b = sc_model_bone_index(m, r->names[j]);
        if (b < 0) return sc_fail(err, SC_EINPUT, "reference: bone '%s' is not in the character", r->names[j]);
        const double *q = r->local_quat + ((size_t)k * r->nb + j) * 4;
        local[b] = sc_q_normalize((sc_quat){q[0], q[1], q[2], q[3]});
        if (local_ang_vel) memcpy(local_ang_vel + 3 * b, r->local_ang_vel + ((size_t)k * r->nb + j) * 3, 3 * sizeof(double));
    }
    if (root_pos) memcpy(root_pos, r->root_pos + 3 * k, 3 * sizeof(double));
    if (root_vel) memcpy(root_vel, r->root_vel + 3 * k, 3 * sizeof(double));
    return SC_OK;
}

void sc_reference_targets_at(const sc_reference *r, double t, sc_quat *out) { sc_targets_interpolate(r->time, r->n, r->target_quat, r->nb, t, out); }

uint64_t sc_reference_hash(const sc_reference *r)
{
    uint64_t h = SC_HASH_INIT;
    size_t n = (size_t)r->n, nb = (size_t)r->nb;
    h = sc_hash_bytes(h, r->time, 8 * n);
    h = sc_hash_bytes(h, r->root_pos, 24 * n);
    h = sc_hash_bytes(h, r->root_vel, 24 * n);
    h = sc_hash_bytes(h, r->local_quat, 32 * n * nb);
    h = sc_hash_bytes(h, r->local_ang_vel, 24 * n * nb);
    h = sc_hash_bytes(h, r->target_quat, 32 * n * nb);
    h = sc_hash_bytes(h, r->bone_pos, 24 * n * nb);
    h = sc_hash_bytes(h, r->bone_quat, 32 * n * nb);
    h = sc_hash_bytes(h, r->com, 24 * n);
    h = sc_hash_bytes(h, r->com_vel, 24 * n);
    return sc_hash_bytes(h, r->contact_flag, sizeof(int) * n * nb);
}

/* Rigid skeleton on ODE with stable PD servos ([L13] 4.1, eq. 1-5). The only file that
 * includes ode.h.
 *
 * Stable PD through an ODE motor row. For every constraint row ODE solves (step.cpp and
 * quickstep.cpp both scale the row's rhs and CFM by 1/h before the LCP)
 *     (J M^-1 J^T + CFM/h) lambda = c/h - J (v_t/h + M^-1 f),   v_t+1 = v_t + h M^-1 (f + J^T lambda)
 * which, multiplied by h, is exactly
 *     J v_t+1 = c - CFM lambda            ([L13] eq. 3 with C = -CFM)
 * with lambda the row's force (torque for an angular row). A motor row has J v = q' (the
 * joint rate along the axis) and c = the target velocity. Choosing
 *     c = (kp/kd)(q~ - q_t),   CFM = 1/kd
 * gives lambda = kd (c - q'_t+1) = kp (q~ - q_t) - kd q'_t+1: the PD torque of eq. 1 with
 * the damper evaluated at the END of the step, and since lambda enters M (v_t+1 - v_t)/h =
 * f + J^T lambda this is eq. 4, i.e. eq. 5's (M + hD)^-1 solve, done by ODE's own LCP
 * together with all joint constraints. FMax = torque limit turns the row into a boxed LCP
 * variable |lambda| <= limit, so saturation is handled inside the same solve. For one hinge
 * of inertia I this is w_t+1 = (I w_t + h kp (q~ - q_t)) / (I + h kd) (tests check it). */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ode/ode.h>
#include "model/world.h"
#include "core/cleanup.h"
#include "core/log.h"
#include "sim/skeleton.h"
#include "sim/tree_solve.h"

#ifndef dDOUBLE
#error "softcon needs ODE built in double precision (dReal == double)"
#endif

/* Per bone in a snapshot: pos 3, q 4, lvel 3, avel 3, force 3, torque 3, target 4, motor 3. */
#define SNAP_PER_BONE         27
/* Speeds beyond this are a diverged simulation, stopped before ODE overflows into its asserts. */
#define SC_SKELETON_MAX_SPEED 1e9
/* External loads beyond this (N, N m) are refused before they reach ODE: a finite 1e308 N
 * overflows its integrator into a quaternion assertion. No body needs more than ~1e6 N. */
#define SC_SKELETON_MAX_LOAD  1e12

struct sc_skeleton {
    int nb;
    sc_skeleton_opts opts;
    dWorldID world;
    dThreadingImplementationID threading; /* the world's own: ODE's default one is process-wide */
    dBodyID *body;
    dJointID *joint;    /* ball or hinge to the parent; NULL for the root */
    dJointID *amotor;   /* servo of ball joints (3 axes) and of hinges with stops (1 axis) */
    dJointFeedback *fb; /* servo feedback per bone (the amotor, else the hinge) */
    int *parent, *type;
    char (*name)[SC_NAME_LEN];
    double *com_local; /* [3nb] bone-frame centre of mass (origin -> com) */
    double *mass;      /* [nb] */
    double *inertia;   /* [9nb] about the com, bone frame */
    double *kp, *kd, *tlim;
    double *kp0, *kd0;        /* [nb] the model's gains, which sc_skeleton_set_gain_scale scales */
    double *axis;             /* [3nb] hinge axis, bone frame */
    sc_quat *target;          /* [nb] */
    double *motor_tau;        /* [3nb] last step, world */
    double *bone_load;        /* [nb] last step's ground normal force on each bone (rigid contact) */
    double *explicit_tau;     /* [3nb] this step's explicit servo torque (kd == 0) */
    double *pre_axis, *pre_r; /* [3nb] hinge world axis and anchor - com before the step */
    int broken;               /* an ODE error abandoned a step: ODE's state is not to be trusted */
    long ode_messages;        /* ODE messages (warnings) raised while stepping this skeleton */
    char last_ode_message[160];
    unsigned char *boxed; /* [nb] the servo's rows carry their torque bound in this step */
    double *undo;         /* [state size] the state before a step that may be redone */
    long redone;          /* exact steps redone with every servo boxed */
    /* the exact step's tree solver (tree_step) */
    sc_tree_solver *tree;
    sc_tree_rows *rows;          /* [nb] */
    double *lambda;              /* [6nb] */
    sc_mat3 *inv_inertia;        /* [nb] body frame */
    double *stop_lo, *stop_hi;   /* [nb] a hinge's stops as set in ODE; -inf, inf without */
    double *anchor_c, *anchor_p; /* [3nb] the joint's anchor from the child's / the parent's com, body frames */
    double *iw, *u;              /* [9nb] world inertia, [6nb] v/h + M^-1 f of the step */
    long tree_steps;             /* exact steps taken by the tree solver */
    /* rigid contact (sc_skeleton_set_colliders) */
    int ncoll, npts;
    int *coll_bone, *coll_first; /* [ncoll], [ncoll + 1]: collider c's points are coll_first[c] .. */
    double *coll_reach;          /* [ncoll] m: the farthest of its points from the body's centre of mass */
    double *coll_pts;            /* [3 npts] from the body's centre of mass, body frame */
    sc_vec3 *coll_world, *coll_normal;
    double *coll_depth; /* [npts] scratch of the contact search */
    sc_ground ground;
    sc_rigid_contact_opts contact;
    dJointGroupID contact_group;
    dJointFeedback *contact_fb; /* [ncoll * SC_BOX_CONTACTS] */
    sc_vec3 *contact_pos, *contact_normal;
    int *contact_bone;
    int ncontacts;
    double contact_depth; /* deepest penetration at the last step's start (m) */
};

/* ---- ODE process setup ------------------------------------------------------------------ */

static pthread_once_t g_ode_once = PTHREAD_ONCE_INIT;
/* The skeleton this thread is stepping: ODE's message handler is process-wide, so it charges
 * the message to the skeleton that raised it (warnings are counted per simulation). */
static _Thread_local sc_skeleton *t_stepping;
/* Quickstep shuffles its rows with ODE's process-global dRand() seed. Resetting it to this
 * value before every quickstep makes a step a function of the skeleton's state alone (no seed
 * to carry in snapshots). Threads quickstepping at once would race on that seed, so a
 * quickstep holds g_quickstep (the exact solver reads no global state and takes no lock);
 * t_quickstep_locked lets an ODE error that jumps out of the step release it. */
#define SC_QUICKSTEP_SEED 0x5eed
static pthread_mutex_t g_quickstep = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int t_quickstep_locked;
/* ODE wants dAllocateODEDataForThread in every thread that uses it: a thread that steps
 * skeletons another created (a worker thread of a sampler) makes the call at its first step. */
static _Thread_local int t_ode_thread_ready;

static void ode_message(int num, const char *msg, va_list ap)
{
    sc_skeleton *s = t_stepping;
    char buf[160];
    vsnprintf(buf, sizeof buf, msg, ap);
    if (s) {
        s->ode_messages++;
        snprintf(s->last_ode_message, sizeof s->last_ode_message, "ODE message %d: %s", num, buf);
    } else {
        sc_log_warn("ODE message %d: %s", num, buf);
    }
}

/* ODE's error (dError) and internal assertion (dDebug) handlers must not return: ODE exits or
 * aborts after them. Inside sc_skeleton_step they jump back to it, which then fails with
 * SC_ENUMERIC and the message; anywhere else (a call that cannot return an error) they end the
 * process through sc_fatal with exit code 4 and the message, never an abort. */
static _Thread_local jmp_buf *tls_ode_jump;
static _Thread_local char tls_ode_msg[600];

static void ode_fatal(int num, const char *msg, va_list ap)
{
    char buf[512];
    vsnprintf(buf, sizeof buf, msg, ap);
    snprintf(tls_ode_msg, sizeof tls_ode_msg, "ODE error %d: %s", num, buf);
    if (tls_ode_jump) longjmp(*tls_ode_jump, 1);
    sc_fatal(SC_ENUMERIC, tls_ode_msg);
}

static void ode_init_once(void)
{
    dInitODE2(0);
    dSetMessageHandler(ode_message);
    dSetErrorHandler(ode_fatal);
    dSetDebugHandler(ode_fatal);
}

/* ---- small helpers ---------------------------------------------------------------------- */

static sc_quat body_q(dBodyID b)
{
    const dReal *q = dBodyGetQuaternion(b);
    sc_quat r = {q[0], q[1], q[2], q[3]};
    return r;
}
static sc_vec3 v3d(const dReal *a) { return sc_v3(a[0], a[1], a[2]); }
static sc_mat3 m3_at(const double *a) /* row-major 9 */
{
    sc_mat3 m;
    memcpy(m.m, a, sizeof m.m);
    return m;
}
static double wrap_pi(double a) { return remainder(a, 2 * SC_PI); }

/* Angle of the twist of q about the unit axis a (swing-twist decomposition). */
static double twist_angle(sc_quat q, sc_vec3 a)
{
    double p = q.x * a.x + q.y * a.y + q.z * a.z;
    return wrap_pi(2 * atan2(p, q.w));
}

static int all_finite(const double *a, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(a[i])) return 0;
    return 1;
}

void sc_skeleton_default_opts(sc_skeleton_opts *o)
{
    memset(o, 0, sizeof *o);
    o->gravity[1] = -SC_STANDARD_GRAVITY;
    o->exact_solver = 1;
    o->iterations = 20;
    o->erp = 0.2;
    o->cfm = 1e-10;
    o->fix_root = 0;
    o->finite_rotation = 1;
    o->speculative = 1;
    o->tree_solver = 1;
}

/* ---- validation ------------------------------------------------------------------------- */

static int validate(const sc_model *m, sc_err *err)
{
    if (m->nbones < 1) return sc_fail(err, SC_EINPUT, "skeleton: model has %d bones", m->nbones);
    if (!m->parent || !m->joint_type || !m->joint_pos || !m->bone_mass || !m->bone_com || !m->bone_inertia)
        return sc_fail(err, SC_EINPUT, "skeleton: model lacks skeleton arrays");
    for (int b = 0; b < m->nbones; b++) {
        const char *nm = m->bone_name ? m->bone_name[b] : "?";
        if (b == 0 && (m->parent[0] != -1 || m->joint_type[0] != SC_JOINT_FREE))
            return sc_fail(err, SC_EINPUT, "skeleton: bone 0 '%s' must be the root with a free joint", nm);
        if (b > 0) {
            if (m->parent[b] < 0 || m->parent[b] >= b)
                return sc_fail(err, SC_EINPUT, "skeleton: bone %d '%s' has parent %d (needs 0 <= parent < %d)", b, nm, m->parent[b], b);
            int t = m->joint_type[b];
            if (t != SC_JOINT_BALL && t != SC_JOINT_HINGE)
                return sc_fail(err, SC_EINPUT, "skeleton: bone %d '%s' joint type %d (non-root joints are ball or hinge)", b, nm, t);
            if (t == SC_JOINT_HINGE) {
                if (!m->hinge_axis) return sc_fail(err, SC_EINPUT, "skeleton: hinge bone %d '%s' but no hinge axes", b, nm);
                double n = sc_v3_norm(sc_v3_load(m->hinge_axis + 3 * b));
                if (!(n > 1e-9) || !isfinite(n)) return sc_fail(err, SC_EINPUT, "skeleton: bone %d '%s' has a degenerate hinge axis", b, nm);
            }
            if (m->kp && m->kd && (!(m->kp[b] >= 0) || !(m->kd[b] >= 0) || !isfinite(m->kp[b]) || !isfinite(m->kd[b])))
                return sc_fail(err, SC_EINPUT, "skeleton: bone %d '%s' has invalid PD gains kp %g kd %g", b, nm, m->kp[b], m->kd[b]);
        }
        if (!(m->bone_mass[b] > 0) || !isfinite(m->bone_mass[b]))
            return sc_fail(err, SC_EINPUT, "skeleton: bone %d '%s' has mass %g (must be > 0)", b, nm, m->bone_mass[b]);
        if (!all_finite(m->joint_pos + 3 * b, 3) || !all_finite(m->bone_com + 3 * b, 3) || !all_finite(m->bone_inertia + 9 * b, 9))
            return sc_fail(err, SC_EINPUT, "skeleton: bone %d '%s' has non-finite geometry or inertia", b, nm);
        sc_mat3 in;
        for (int i = 0; i < 9; i++) in.m[i / 3][i % 3] = m->bone_inertia[9 * b + i];
        double asym = 0, scale = fabs(sc_m3_trace(in));
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) asym = fmax(asym, fabs(in.m[i][j] - in.m[j][i]));
        double e[3];
        sc_mat3 v;
        sc_m3_sym_eigen(in, e, &v);
        if (asym > 1e-9 * scale || !(e[2] > 1e-12 * scale) || !(scale > 0))
            return sc_fail(err, SC_EINPUT,
                           "skeleton: bone %d '%s' inertia is not symmetric positive definite "
                           "(eigenvalues %g %g %g)",
                           b, nm, e[0], e[1], e[2]);
        /* ODE (and physics) want the principal moments to satisfy the triangle inequality. */
        if (e[0] > (e[1] + e[2]) * (1 + 1e-9))
            return sc_fail(err, SC_EINPUT,
                           "skeleton: bone %d '%s' principal moments %g %g %g violate the triangle "
                           "inequality",
                           b, nm, e[0], e[1], e[2]);
    }
    return SC_OK;
}

/* ---- create / free ---------------------------------------------------------------------- */

/* The arrays of sc_skeleton_set_colliders. */
static void colliders_free(sc_skeleton *s)
{
    free(s->coll_bone);
    free(s->coll_first);
    free(s->coll_reach);
    free(s->coll_pts);
    free(s->coll_world);
    free(s->coll_normal);
    free(s->coll_depth);
    free(s->contact_fb);
    free(s->contact_pos);
    free(s->contact_normal);
    free(s->contact_bone);
    s->ncoll = s->npts = 0;
}

void sc_skeleton_free(sc_skeleton *s)
{
    if (!s) return;
    if (s->contact_group) dJointGroupDestroy(s->contact_group);
    if (s->world) {
        dWorldSetStepThreadingImplementation(s->world, NULL, NULL);
        dWorldDestroy(s->world); /* also destroys the bodies and group-0 joints */
    }
    /* an ODE error that jumped out of a step left a job list in it, which ODE asserts on when
     * freed: that one (a small object, in a run that is failing) is left */
    if (s->threading && !s->broken) dThreadingFreeImplementation(s->threading);
    free(s->body);
    free(s->joint);
    free(s->amotor);
    free(s->fb);
    free(s->parent);
    free(s->type);
    free(s->name);
    free(s->com_local);
    free(s->mass);
    free(s->inertia);
    free(s->kp);
    free(s->kd);
    free(s->kp0);
    free(s->kd0);
    free(s->tlim);
    free(s->axis);
    free(s->target);
    free(s->motor_tau);
    free(s->bone_load);
    free(s->explicit_tau);
    free(s->pre_axis);
    free(s->pre_r);
    free(s->boxed);
    free(s->undo);
    sc_tree_solver_free(s->tree);
    free(s->rows);
    free(s->lambda);
    free(s->inv_inertia);
    free(s->stop_lo);
    free(s->stop_hi);
    free(s->anchor_c);
    free(s->anchor_p);
    free(s->iw);
    free(s->u);
    colliders_free(s);
    free(s);
}

int sc_skeleton_nbones(const sc_skeleton *s) { return s->nb; }

/* The arrays of a skeleton of nb bones (SC_EIO naming the allocation that failed: s is freed). */
static sc_skeleton *skeleton_alloc(int nb, sc_err *err)
{
    sc_skeleton *s = sc_alloc(err, 1, sizeof *s);
    if (!s) return NULL;
    s->nb = nb;
    s->body = sc_alloc(err, nb, sizeof *s->body);
    s->joint = sc_alloc(err, nb, sizeof *s->joint);
    s->amotor = sc_alloc(err, nb, sizeof *s->amotor);
    s->fb = sc_alloc(err, nb, sizeof *s->fb);
    s->parent = sc_alloc(err, nb, sizeof(int));
    s->type = sc_alloc(err, nb, sizeof(int));
    s->name = sc_alloc(err, nb, sizeof *s->name);
    s->com_local = sc_alloc(err, 3 * nb, sizeof(double));
    s->mass = sc_alloc(err, nb, sizeof(double));
    s->inertia = sc_alloc(err, 9 * nb, sizeof(double));
    s->kp = sc_alloc(err, nb, sizeof(double));
    s->kd = sc_alloc(err, nb, sizeof(double));
    s->kp0 = sc_alloc(err, nb, sizeof(double));
    s->kd0 = sc_alloc(err, nb, sizeof(double));
    s->tlim = sc_alloc(err, nb, sizeof(double));
    s->axis = sc_alloc(err, 3 * nb, sizeof(double));
    s->target = sc_alloc(err, nb, sizeof(sc_quat));
    s->motor_tau = sc_alloc(err, 3 * nb, sizeof(double));
    s->bone_load = sc_alloc(err, nb, sizeof(double));
    s->explicit_tau = sc_alloc(err, 3 * nb, sizeof(double));
    s->pre_axis = sc_alloc(err, 3 * nb, sizeof(double));
    s->pre_r = sc_alloc(err, 3 * nb, sizeof(double));
    s->boxed = sc_alloc(err, nb, 1);
    s->undo = sc_alloc(err, 1 + (size_t)SNAP_PER_BONE * nb, sizeof(double));
    s->rows = sc_alloc(err, nb, sizeof *s->rows);
    s->lambda = sc_alloc(err, 6 * (size_t)nb, sizeof(double));
    s->inv_inertia = sc_alloc(err, nb, sizeof *s->inv_inertia);
    s->stop_lo = sc_alloc(err, nb, sizeof(double));
    s->stop_hi = sc_alloc(err, nb, sizeof(double));
    s->anchor_c = sc_alloc(err, 3 * (size_t)nb, sizeof(double));
    s->anchor_p = sc_alloc(err, 3 * (size_t)nb, sizeof(double));
    s->iw = sc_alloc(err, 9 * (size_t)nb, sizeof(double));
    s->u = sc_alloc(err, 6 * (size_t)nb, sizeof(double));
    if (!s->boxed || !s->undo || !s->body || !s->joint || !s->amotor || !s->fb || !s->parent || !s->type || !s->name || !s->com_local || !s->mass ||
        !s->inertia || !s->kp || !s->kd || !s->kp0 || !s->kd0 || !s->tlim || !s->axis || !s->target || !s->motor_tau || !s->bone_load ||
        !s->explicit_tau || !s->pre_axis || !s->pre_r || !s->rows || !s->lambda || !s->inv_inertia || !s->stop_lo || !s->stop_hi || !s->anchor_c ||
        !s->anchor_p || !s->iw || !s->u) {
        sc_skeleton_free(s);
        return NULL;
    }
    return s;
}

/* Bone b's parameters from the model and its ODE body at the rest pose. */
static int bone_create(sc_skeleton *s, const sc_model *m, const sc_skeleton_opts *o, int b, sc_err *err)
{
    s->parent[b] = m->parent[b];
    s->type[b] = m->joint_type[b];
    if (m->bone_name) snprintf(s->name[b], SC_NAME_LEN, "%s", m->bone_name[b]);
    else snprintf(s->name[b], SC_NAME_LEN, "bone%d", b);
    for (int k = 0; k < 3; k++) s->com_local[3 * b + k] = m->bone_com[3 * b + k] - m->joint_pos[3 * b + k];
    s->mass[b] = m->bone_mass[b];
    for (int k = 0; k < 9; k++) s->inertia[9 * b + k] = 0.5 * (m->bone_inertia[9 * b + k] + m->bone_inertia[9 * b + 3 * (k % 3) + k / 3]);
    s->kp[b] = m->kp ? m->kp[b] : 0;
    s->kd[b] = m->kd ? m->kd[b] : 0;
    s->kp0[b] = s->kp[b];
    s->kd0[b] = s->kd[b];
    double tl = m->torque_limit ? m->torque_limit[b] : 0;
    s->tlim[b] = (tl > 0 && isfinite(tl)) ? tl : dInfinity; /* <= 0 means unlimited */
    if (s->type[b] == SC_JOINT_HINGE) {
        sc_vec3 a = sc_v3_normalize(sc_v3_load(m->hinge_axis + 3 * b));
        sc_v3_store(s->axis + 3 * b, a);
    }
    s->target[b] = sc_q_identity();
    sc_m3_inverse(m3_at(s->inertia + 9 * b), &s->inv_inertia[b]); /* positive definite: validated */
    s->stop_lo[b] = -INFINITY;
    s->stop_hi[b] = INFINITY;
    if (b > 0)
        for (int k = 0; k < 3; k++) {
            s->anchor_c[3 * b + k] = m->joint_pos[3 * b + k] - m->bone_com[3 * b + k];
            s->anchor_p[3 * b + k] = m->joint_pos[3 * b + k] - m->bone_com[3 * m->parent[b] + k];
        }

    dBodyID bd = dBodyCreate(s->world);
    s->body[b] = bd;
    dMass ms;
    const double *I = s->inertia + 9 * b;
    dMassSetParameters(&ms, s->mass[b], 0, 0, 0, I[0], I[4], I[8], I[1], I[2], I[5]);
    if (!dMassCheck(&ms)) return sc_fail(err, SC_EINPUT, "skeleton: bone %d '%s': ODE rejects mass %g / inertia", b, s->name[b], s->mass[b]);
    dBodySetMass(bd, &ms);
    dBodySetPosition(bd, m->bone_com[3 * b], m->bone_com[3 * b + 1], m->bone_com[3 * b + 2]);
    dBodySetAutoDisableFlag(bd, 0);
    dBodySetFiniteRotationMode(bd, o->finite_rotation ? 1 : 0);
    if (b == 0 && o->fix_root) dBodySetKinematic(bd); /* after dBodySetMass, which would undo it */
    return SC_OK;
}

/* Hinge joint of bone b at jp, its servo (fmax, cfm) in the hinge or, with stops, in its own
   amotor. */
static void hinge_create(sc_skeleton *s, const sc_model *m, int b, const double *jp, double fm, double cfm)
{
    dBodyID child = s->body[b], par = s->body[s->parent[b]];
    /* body1 = child, so the hinge angle and rate are the child's relative to the parent */
    dJointID j = dJointCreateHinge(s->world, 0);
    dJointAttach(j, child, par);
    dJointSetHingeAnchor(j, jp[0], jp[1], jp[2]);
    const double *a = s->axis + 3 * b;
    dJointSetHingeAxis(j, a[0], a[1], a[2]);
    s->joint[b] = j;
    int stops = m->joint_lo && m->joint_hi && m->joint_lo[3 * b] < m->joint_hi[3 * b];
    if (stops) {
        s->stop_lo[b] = fmax(m->joint_lo[3 * b], -SC_PI);
        s->stop_hi[b] = fmin(m->joint_hi[3 * b], SC_PI);
        dJointSetHingeParam(j, dParamLoStop, s->stop_lo[b]);
        dJointSetHingeParam(j, dParamHiStop, s->stop_hi[b]);
    }
    if (s->kd[b] > 0 && stops) {
        /* ODE merges a hinge's motor into its stop row while at the stop and then pushes
         * with the full FMax (infinite when unlimited) instead of the PD force, so with
         * stops the servo is a separate 1-axis amotor: its own LCP row next to the stop */
        dJointID am = dJointCreateAMotor(s->world, 0);
        dJointAttach(am, par, child);
        dJointSetAMotorMode(am, dAMotorUser);
        dJointSetAMotorNumAxes(am, 1);
        dJointSetAMotorAxis(am, 0, 1, a[0], a[1], a[2]);
        dJointSetAMotorParam(am, dParamFMax, fm);
        dJointSetAMotorParam(am, dParamCFM, cfm);
        dJointSetAMotorParam(am, dParamVel, 0);
        dJointSetFeedback(am, &s->fb[b]);
        s->amotor[b] = am;
    } else if (s->kd[b] > 0) {
        dJointSetHingeParam(j, dParamFMax, fm);
        dJointSetHingeParam(j, dParamCFM, cfm);
        dJointSetHingeParam(j, dParamVel, 0);
        dJointSetFeedback(j, &s->fb[b]);
    }
}

/* Ball joint of bone b at jp, its 3-axis servo amotor. */
static void ball_create(sc_skeleton *s, int b, const double *jp, double fm, double cfm)
{
    dBodyID child = s->body[b], par = s->body[s->parent[b]];
    dJointID j = dJointCreateBall(s->world, 0);
    dJointAttach(j, child, par);
    dJointSetBallAnchor(j, jp[0], jp[1], jp[2]);
    s->joint[b] = j;
    /* body1 = parent, axes fixed in the parent frame (rel = 1) */
    dJointID am = dJointCreateAMotor(s->world, 0);
    dJointAttach(am, par, child);
    dJointSetAMotorMode(am, dAMotorUser);
    dJointSetAMotorNumAxes(am, 3);
    dJointSetAMotorAxis(am, 0, 1, 1, 0, 0);
    dJointSetAMotorAxis(am, 1, 1, 0, 1, 0);
    dJointSetAMotorAxis(am, 2, 1, 0, 0, 1);
    static const int pf[3] = {dParamFMax, dParamFMax2, dParamFMax3};
    static const int pc[3] = {dParamCFM, dParamCFM2, dParamCFM3};
    static const int pv[3] = {dParamVel, dParamVel2, dParamVel3};
    for (int k = 0; k < 3; k++) {
        dJointSetAMotorParam(am, pf[k], fm);
        dJointSetAMotorParam(am, pc[k], cfm);
        dJointSetAMotorParam(am, pv[k], 0);
    }
    dJointSetFeedback(am, &s->fb[b]);
    s->amotor[b] = am;
}

int sc_skeleton_create(const sc_model *m, const sc_skeleton_opts *o, sc_skeleton **out, sc_err *err)
{
    *out = NULL;
    int rc = validate(m, err);
    if (rc) return rc;
    sc_skeleton_opts def;
    if (!o) {
        sc_skeleton_default_opts(&def);
        o = &def;
    }
    if (!o->exact_solver && o->iterations < 1) return sc_fail(err, SC_EINPUT, "skeleton: quickstep iterations %d (must be >= 1)", o->iterations);
    double g = sc_v3_norm(sc_v3_load(o->gravity));
    if (!(g <= 1e4)) return sc_fail(err, SC_EINPUT, "skeleton: gravity of %g m/s^2 (must be finite and at most 1e4)", g);
    pthread_once(&g_ode_once, ode_init_once);
    dAllocateODEDataForThread(dAllocateMaskAll);
    t_ode_thread_ready = 1;

    int nb = m->nbones;
    sc_skeleton *s = skeleton_alloc(nb, err);
    if (!s) return SC_EIO;
    s->opts = *o;
    if ((rc = sc_tree_solver_create(nb, m->parent, &s->tree, err))) {
        sc_skeleton_free(s);
        return rc;
    }

    s->world = dWorldCreate();
    /* ODE steps every world through one process-wide self-threaded implementation unless a
     * world has its own: skeletons stepped on different threads at once need their own */
    if (!(s->threading = dThreadingAllocateSelfThreadedImplementation())) {
        sc_skeleton_free(s);
        return sc_fail(err, SC_EIO, "skeleton: out of memory for ODE's threading object");
    }
    dWorldSetStepThreadingImplementation(s->world, dThreadingImplementationGetFunctions(s->threading), s->threading);
    dWorldSetGravity(s->world, o->gravity[0], o->gravity[1], o->gravity[2]);
    dWorldSetERP(s->world, o->erp);
    dWorldSetCFM(s->world, o->cfm);
    dWorldSetQuickStepNumIterations(s->world, o->iterations > 0 ? o->iterations : 20);
    dWorldSetAutoDisableFlag(s->world, 0); /* sleeping bodies would break determinism */
    for (int b = 0; b < nb; b++)
        if ((rc = bone_create(s, m, o, b, err))) {
            sc_skeleton_free(s);
            return rc;
        }

    /* Joints at the rest pose, where every bone frame is the world frame. */
    for (int b = 1; b < nb; b++) {
        const double *jp = m->joint_pos + 3 * b;
        double fm = (s->kd[b] > 0) ? s->tlim[b] : 0; /* fmax 0 leaves the motor unpowered */
        double cfm = (s->kd[b] > 0) ? 1.0 / s->kd[b] : o->cfm;
        if (s->type[b] == SC_JOINT_HINGE) hinge_create(s, m, b, jp, fm, cfm);
        else ball_create(s, b, jp, fm, cfm);
    }
    *out = s;
    return SC_OK;
}

/* ---- state ------------------------------------------------------------------------------ */

void sc_skeleton_get_state(const sc_skeleton *s, sc_xform *pose, double *lin_vel, double *ang_vel)
{
    for (int b = 0; b < s->nb; b++) {
        dBodyID bd = s->body[b];
        sc_quat q = body_q(bd);
        sc_vec3 rc = sc_q_rotate(q, sc_v3_load(s->com_local + 3 * b)); /* origin -> com, world */
        sc_vec3 w = v3d(dBodyGetAngularVel(bd));
        if (pose) {
            pose[b].q = q;
            pose[b].p = sc_v3_sub(v3d(dBodyGetPosition(bd)), rc);
        }
        if (lin_vel) sc_v3_store(lin_vel + 3 * b, sc_v3_sub(v3d(dBodyGetLinearVel(bd)), sc_v3_cross(w, rc)));
        if (ang_vel) sc_v3_store(ang_vel + 3 * b, w);
    }
}

void sc_skeleton_set_state(sc_skeleton *s, const sc_xform *pose, const double *lin_vel, const double *ang_vel)
{
    for (int b = 0; b < s->nb; b++) {
        dBodyID bd = s->body[b];
        sc_quat q = sc_q_normalize(pose[b].q);
        dQuaternion dq = {q.w, q.x, q.y, q.z};
        dBodySetQuaternion(bd, dq);
        q = body_q(bd);
        sc_vec3 rc = sc_q_rotate(q, sc_v3_load(s->com_local + 3 * b));
        sc_vec3 c = sc_v3_add(pose[b].p, rc);
        dBodySetPosition(bd, c.x, c.y, c.z);
        sc_vec3 w = ang_vel ? sc_v3_load(ang_vel + 3 * b) : sc_v3(0, 0, 0);
        sc_vec3 v = lin_vel ? sc_v3_load(lin_vel + 3 * b) : sc_v3(0, 0, 0);
        v = sc_v3_add(v, sc_v3_cross(w, rc));
        dBodySetLinearVel(bd, v.x, v.y, v.z);
        dBodySetAngularVel(bd, w.x, w.y, w.z);
    }
}

void sc_skeleton_bone_com(const sc_skeleton *s, int bone, double com[3], double com_vel[3])
{
    if (bone < 0 || bone >= s->nb) return;
    const dReal *p = dBodyGetPosition(s->body[bone]), *v = dBodyGetLinearVel(s->body[bone]);
    for (int k = 0; k < 3; k++) {
        if (com) com[k] = p[k];
        if (com_vel) com_vel[k] = v[k];
    }
}

void sc_skeleton_add_force_at(sc_skeleton *s, int bone, const double f[3], const double p[3])
{
    if (bone < 0 || bone >= s->nb) {
        sc_log_warn("skeleton: force on bone %d of %d ignored", bone, s->nb);
        return;
    }
    dBodyAddForceAtPos(s->body[bone], f[0], f[1], f[2], p[0], p[1], p[2]);
}

void sc_skeleton_add_torque(sc_skeleton *s, int bone, const double tau[3])
{
    if (bone < 0 || bone >= s->nb) {
        sc_log_warn("skeleton: torque on bone %d of %d ignored", bone, s->nb);
        return;
    }
    dBodyAddTorque(s->body[bone], tau[0], tau[1], tau[2]);
}

void sc_skeleton_set_targets(sc_skeleton *s, const sc_quat *target_local)
{
    for (int b = 1; b < s->nb; b++) s->target[b] = sc_q_normalize(target_local[b]);
}

void sc_skeleton_set_gain_scale(sc_skeleton *s, const double *scale)
{
    static const int pc[3] = {dParamCFM, dParamCFM2, dParamCFM3};
    for (int b = 1; b < s->nb; b++) {
        if (!(s->kd0[b] > 0)) continue; /* a servo without damper stays as it is */
        const double a = fmax(scale[b], SC_SKELETON_MIN_GAIN_SCALE), kp = s->kp0[b] * a, kd = s->kd0[b] * sqrt(a);
        if (kp == s->kp[b] && kd == s->kd[b]) continue;
        s->kp[b] = kp;
        s->kd[b] = kd;
        if (s->amotor[b])
            for (int k = 0; k < (s->type[b] == SC_JOINT_HINGE ? 1 : 3); k++) dJointSetAMotorParam(s->amotor[b], pc[k], 1 / kd);
        else dJointSetHingeParam(s->joint[b], dParamCFM, 1 / kd);
    }
}

void sc_skeleton_local_rotations(const sc_skeleton *s, sc_quat *local)
{
    for (int b = 0; b < s->nb; b++) {
        sc_quat q = body_q(s->body[b]);
        local[b] = b == 0 ? q : sc_q_mul(sc_q_conj(body_q(s->body[s->parent[b]])), q);
    }
}

void sc_skeleton_motor_torques(const sc_skeleton *s, double *tau) { memcpy(tau, s->motor_tau, 3 * (size_t)s->nb * sizeof(double)); }

/* ---- rigid contact ------------------------------------------------------------------------ */

static sc_mat3 body_R(dBodyID b);

/* Divisions of a box's edges for points at most `spacing` apart (at most 64; 0: corners). */
static void box_divisions(const sc_box_collider *b, double spacing, int k[3])
{
    for (int a = 0; a < 3; a++) k[a] = spacing > 0 ? (int)fmin(64, ceil(2 * b->half[a] / spacing)) : 1;
}

static int check_rigid_opts(const sc_rigid_contact_opts *o, sc_err *err)
{
    if (!(o->mu >= 0) || !(o->spacing >= 0) || !(o->erp >= 0 && o->erp <= 1) || !(o->cfm >= 0))
        return sc_fail(err, SC_EINPUT, "rigid contact: friction %g, spacing %g m, erp %g, cfm %g (need >= 0, erp <= 1)", o->mu, o->spacing, o->erp,
                       o->cfm);
    return SC_OK;
}

int sc_skeleton_set_point_colliders(sc_skeleton *s, int n, const int *bone, const int *first, const double *pts, const sc_ground *g,
                                    const sc_rigid_contact_opts *o, sc_err *err)
{
    int rc = check_rigid_opts(o, err);
    if (rc) return rc;
    for (int c = 0; c < n; c++)
        if (bone[c] < 0 || bone[c] >= s->nb || first[c + 1] <= first[c])
            return sc_fail(err, SC_EINPUT, "collider %d: bone %d of %d, %d points (need a bone and a point)", c, bone[c], s->nb,
                           first[c + 1] - first[c]);
    const int npts = first[n];
    colliders_free(s);
    s->coll_bone = sc_alloc(err, (size_t)n + 1, sizeof(int));
    s->coll_first = sc_alloc(err, (size_t)n + 1, sizeof(int));
    s->coll_reach = sc_alloc(err, (size_t)n + 1, sizeof(double));
    s->coll_pts = sc_alloc(err, 3 * (size_t)npts + 1, sizeof(double));
    s->coll_world = sc_alloc(err, (size_t)npts + 1, sizeof(sc_vec3));
    s->coll_normal = sc_alloc(err, (size_t)npts + 1, sizeof(sc_vec3));
    s->coll_depth = sc_alloc(err, (size_t)npts + 1, sizeof(double));
    s->contact_fb = sc_alloc(err, (size_t)n * SC_BOX_CONTACTS + 1, sizeof(dJointFeedback));
    s->contact_pos = sc_alloc(err, (size_t)n * SC_BOX_CONTACTS + 1, sizeof(sc_vec3));
    s->contact_normal = sc_alloc(err, (size_t)n * SC_BOX_CONTACTS + 1, sizeof(sc_vec3));
    s->contact_bone = sc_alloc(err, (size_t)n * SC_BOX_CONTACTS + 1, sizeof(int));
    if (!s->contact_group) s->contact_group = dJointGroupCreate(0);
    if (!s->coll_bone || !s->coll_first || !s->coll_reach || !s->coll_pts || !s->coll_world || !s->coll_normal || !s->coll_depth || !s->contact_fb ||
        !s->contact_pos || !s->contact_normal || !s->contact_bone || !s->contact_group)
        return SC_EIO;
    for (int c = 0; c <= n; c++) s->coll_first[c] = first[c];
    for (int c = 0; c < n; c++) {
        s->coll_bone[c] = bone[c];
        s->coll_reach[c] = 0;
        for (int i = first[c]; i < first[c + 1]; i++) {
            double r2 = 0;
            for (int a = 0; a < 3; a++) {
                s->coll_pts[3 * i + a] = pts[3 * i + a] - s->com_local[3 * bone[c] + a];
                r2 += s->coll_pts[3 * i + a] * s->coll_pts[3 * i + a];
            }
            s->coll_reach[c] = fmax(s->coll_reach[c], sqrt(r2));
        }
    }
    s->ncoll = n;
    s->npts = npts;
    s->ground = *g;
    s->contact = *o;
    return SC_OK;
}

int sc_skeleton_set_colliders(sc_skeleton *s, int n, const sc_box_collider *boxes, const sc_ground *g, const sc_rigid_contact_opts *o, sc_err *err)
{
    int rc = check_rigid_opts(o, err);
    if (rc) return rc;
    int npts = 0;
    for (int c = 0; c < n; c++) {
        const sc_box_collider *b = &boxes[c];
        if (b->bone < 0 || b->bone >= s->nb || !(b->half[0] > 0 && b->half[1] > 0 && b->half[2] > 0))
            return sc_fail(err, SC_EINPUT, "collision box %d: bone %d of %d, half extents %g %g %g m (need a bone and a volume)", c, b->bone, s->nb,
                           b->half[0], b->half[1], b->half[2]);
        int k[3];
        box_divisions(b, o->spacing, k);
        npts += (k[0] + 1) * (k[1] + 1) * (k[2] + 1) - (k[0] - 1) * (k[1] - 1) * (k[2] - 1); /* the grid's surface */
    }
    int *bone = sc_alloc(err, (size_t)n + 1, sizeof(int)), *first = sc_alloc(err, (size_t)n + 1, sizeof(int));
    double *pts = sc_alloc(err, 3 * (size_t)npts + 1, sizeof(double));
    if (!bone || !first || !pts) {
        free(bone), free(first), free(pts);
        return SC_EIO;
    }
    int at = 0;
    for (int c = 0; c < n; c++) {
        const sc_box_collider *b = &boxes[c];
        int k[3];
        box_divisions(b, o->spacing, k);
        bone[c] = b->bone;
        first[c] = at;
        for (int i = 0; i <= k[0]; i++)
            for (int j = 0; j <= k[1]; j++)
                for (int l = 0; l <= k[2]; l++) {
                    if (i > 0 && i < k[0] && j > 0 && j < k[1] && l > 0 && l < k[2]) continue; /* inside */
                    const int u[3] = {i, j, l};
                    for (int a = 0; a < 3; a++) pts[3 * at + a] = b->center[a] + b->half[a] * (2.0 * u[a] / k[a] - 1);
                    at++;
                }
    }
    first[n] = at;
    rc = sc_skeleton_set_point_colliders(s, n, bone, first, pts, g, o, err);
    free(bone), free(first), free(pts);
    return rc;
}

/* The step's contact joints from the bodies' positions (see skeleton.h). */
static void make_contacts(sc_skeleton *s)
{
    s->ncontacts = 0;
    s->contact_depth = 0;
    if (!s->ncoll) return;
    dJointGroupEmpty(s->contact_group);
    for (int c = 0; c < s->ncoll; c++) {
        const int first = s->coll_first[c], np = s->coll_first[c + 1] - first;
        dBodyID bd = s->body[s->coll_bone[c]];
        const sc_vec3 x = v3d(dBodyGetPosition(bd));
        if (sc_v3_dot(s->ground.normal, x) - s->ground.offset - sc_ground_max_rise(&s->ground) > s->coll_reach[c]) continue; /* all above it */
        const sc_mat3 r = body_R(bd);
        sc_vec3 *wp = s->coll_world + first, *nrm = s->coll_normal + first;
        double *depth = s->coll_depth + first;
        int chosen[SC_BOX_CONTACTS], nch = 0, deepest = -1;
        for (int i = 0; i < np; i++) {
            wp[i] = sc_v3_add(x, sc_m3_mulv(r, sc_v3_load(s->coll_pts + 3 * (first + i))));
            depth[i] = -sc_ground_height(&s->ground, wp[i], &nrm[i]);
            if (depth[i] > 0 && (deepest < 0 || depth[i] > depth[deepest])) deepest = i;
        }
        if (deepest < 0) continue;
        chosen[nch++] = deepest;
        while (nch < SC_BOX_CONTACTS) { /* the point farthest from those chosen spreads the support */
            int best = -1;
            double far = 1e-8; /* m^2: points closer than 0.1 mm add nothing */
            for (int i = 0; i < np; i++) {
                if (!(depth[i] > 0)) continue;
                double near = INFINITY;
                for (int k = 0; k < nch; k++) near = fmin(near, sc_v3_dot(sc_v3_sub(wp[i], wp[chosen[k]]), sc_v3_sub(wp[i], wp[chosen[k]])));
                if (near > far) {
                    far = near;
                    best = i;
                }
            }
            if (best < 0) break;
            chosen[nch++] = best;
        }
        for (int k = 0; k < nch; k++) {
            const int i = chosen[k], q = s->ncontacts++;
            dContact ct;
            memset(&ct, 0, sizeof ct);
            ct.surface.mode = dContactApprox1 | dContactSoftERP | (s->contact.cfm > 0 ? dContactSoftCFM : 0);
            ct.surface.mu = s->contact.mu;
            ct.surface.soft_erp = s->contact.erp;
            ct.surface.soft_cfm = s->contact.cfm;
            sc_v3_store(ct.geom.pos, wp[i]);
            sc_v3_store(ct.geom.normal, nrm[i]);
            ct.geom.depth = depth[i];
            s->contact_pos[q] = wp[i];
            s->contact_normal[q] = nrm[i];
            s->contact_bone[q] = s->coll_bone[c];
            s->contact_depth = fmax(s->contact_depth, depth[i]);
            dJointID j = dJointCreateContact(s->world, s->contact_group, &ct);
            dJointAttach(j, bd, 0);
            dJointSetFeedback(j, &s->contact_fb[q]);
        }
    }
}

double sc_skeleton_bone_contact_force(const sc_skeleton *s, int bone) { return s->bone_load[bone]; }

/* each bone's ground load from the step's contact joints (kept in snapshots: after a restore the
   joints' feedback is another run's) */
static void collect_bone_loads(sc_skeleton *s)
{
    memset(s->bone_load, 0, (size_t)s->nb * sizeof *s->bone_load);
    for (int q = 0; q < s->ncontacts; q++) s->bone_load[s->contact_bone[q]] += fmax(0, sc_v3_dot(v3d(s->contact_fb[q].f1), s->contact_normal[q]));
}

void sc_skeleton_rigid_contact(const sc_skeleton *s, sc_contact_result *res)
{
    memset(res, 0, sizeof *res);
    for (int q = 0; q < s->ncontacts; q++) {
        const sc_vec3 fq = v3d(s->contact_fb[q].f1);
        const double fn = sc_v3_dot(fq, s->contact_normal[q]);
        res->total_force = sc_v3_add(res->total_force, fq);
        if (fn > 0) {
            res->count++;
            if (s->ground.nboxes) res->obstacles += sc_ground_nearest_box(&s->ground, s->contact_pos[q]) >= 0;
            res->normal_force += fn;
            res->load_moment = sc_v3_axpy(fn, s->contact_pos[q], res->load_moment);
            /* at the friction pyramid's edge: sliding */
            const sc_vec3 ft = sc_v3_sub(fq, sc_v3_scale(s->contact_normal[q], fn));
            if (sc_v3_norm(ft) > 0.99 * s->contact.mu * fn) res->sliding++;
        }
    }
    res->max_depth = s->contact_depth;
}

/* ---- step ------------------------------------------------------------------------------- */

/* Motor rows from the current state and the targets ([L13] eq. 1, 4). */
static void setup_servos(sc_skeleton *s)
{
    static const int pv[3] = {dParamVel, dParamVel2, dParamVel3}, pf[3] = {dParamFMax, dParamFMax2, dParamFMax3};
    for (int b = 1; b < s->nb; b++) {
        double kp = s->kp[b], kd = s->kd[b];
        sc_vec3 zero = {0, 0, 0};
        sc_v3_store(s->explicit_tau + 3 * b, zero);
        if (kd > 0 && isfinite(s->tlim[b])) { /* the torque bound, or none in a speculative step */
            double fm = s->boxed[b] ? s->tlim[b] : dInfinity;
            if (s->amotor[b])
                for (int k = 0; k < (s->type[b] == SC_JOINT_HINGE ? 1 : 3); k++) dJointSetAMotorParam(s->amotor[b], pf[k], fm);
            else dJointSetHingeParam(s->joint[b], dParamFMax, fm);
        }
        if (s->type[b] == SC_JOINT_HINGE) {
            dJointID j = s->joint[b];
            double err = wrap_pi(twist_angle(s->target[b], sc_v3_load(s->axis + 3 * b)) - dJointGetHingeAngle(j));
            dVector3 ax, anc;
            dJointGetHingeAxis(j, ax);
            dJointGetHingeAnchor(j, anc);
            const dReal *c = dBodyGetPosition(s->body[b]);
            for (int k = 0; k < 3; k++) {
                s->pre_axis[3 * b + k] = ax[k];
                s->pre_r[3 * b + k] = anc[k] - c[k];
            }
            if (kd > 0 && s->amotor[b]) {
                dJointSetAMotorParam(s->amotor[b], dParamVel, -kp / kd * err); /* rate a.(w_parent - w_child) */
            } else if (kd > 0) {
                dJointSetHingeParam(j, dParamVel, kp / kd * err);
            } else if (kp > 0) { /* no damper: plain explicit P torque */
                double t = fmax(-s->tlim[b], fmin(s->tlim[b], kp * err));
                dJointAddHingeTorque(j, t);
                sc_v3_store(s->explicit_tau + 3 * b, sc_v3_scale(v3d(ax), t));
            }
        } else {
            sc_quat qp = body_q(s->body[s->parent[b]]), qc = body_q(s->body[b]);
            sc_quat ql = sc_q_mul(sc_q_conj(qp), qc);
            /* error rotation in the child frame, then on the parent-fixed motor axes */
            sc_vec3 ec = sc_q_log(sc_q_mul(sc_q_conj(ql), s->target[b]));
            sc_vec3 ep = sc_q_rotate(ql, ec);
            if (kd > 0) {
                /* the amotor row rate is a.(w_parent - w_child): hence the minus */
                for (int k = 0; k < 3; k++) dJointSetAMotorParam(s->amotor[b], pv[k], -kp / kd * sc_v3_get(ep, k));
            } else if (kp > 0) {
                double t[3];
                for (int k = 0; k < 3; k++) t[k] = fmax(-s->tlim[b], fmin(s->tlim[b], kp * sc_v3_get(ep, k)));
                dJointAddAMotorTorques(s->amotor[b], -t[0], -t[1], -t[2]);
                sc_v3_store(s->explicit_tau + 3 * b, sc_q_rotate(qp, sc_v3(t[0], t[1], t[2])));
            }
        }
    }
}

static void collect_motor_torques(sc_skeleton *s)
{
    memset(s->motor_tau, 0, 3 * sizeof(double));
    for (int b = 1; b < s->nb; b++) {
        sc_vec3 t = {0, 0, 0};
        if (s->kd[b] > 0) {
            const dJointFeedback *f = &s->fb[b];
            if (!s->amotor[b]) {
                /* hinge motor, child = body1: its joint torque minus the moment of the anchor
                 * force leaves the motor row, as the two other angular rows are normal to it */
                sc_vec3 a = sc_v3_load(s->pre_axis + 3 * b), r = sc_v3_load(s->pre_r + 3 * b);
                double lam = sc_v3_dot(a, sc_v3_sub(v3d(f->t1), sc_v3_cross(r, v3d(f->f1))));
                t = sc_v3_scale(a, lam);
            } else {
                t = v3d(f->t2); /* child = body2 of an amotor, which has only motor rows */
            }
        }
        t = sc_v3_add(t, sc_v3_load(s->explicit_tau + 3 * b));
        sc_v3_store(s->motor_tau + 3 * b, t);
    }
}

/* ---- the exact step through the tree solver ---------------------------------------------- */
/* ODE's exact step, for a skeleton none of whose rows is bounded, is one linear system with
 * the dense 90 x 90 (for 15 joints) matrix J M^-1 J^T + CFM/h, which libode factors in about
 * three quarters of its step. tree_step builds the same rows (joint.cpp's setBall, the hinge's
 * two angular rows, the motors' rows of addLimot) and the same right-hand side (step.cpp),
 * solves them in linear time over the skeleton's tree, applies J^T lambda to the bodies as
 * forces and lets dWorldStep integrate them with the joints disabled. ODE still does every
 * step in which a row needs the LCP: a hinge at its stop, or a servo over its torque limit. */

static sc_mat3 body_R(dBodyID b)
{
    const dReal *r = dBodyGetRotation(b); /* 3 x 4, row-major */
    sc_mat3 m = {{{r[0], r[1], r[2]}, {r[4], r[5], r[6]}, {r[8], r[9], r[10]}}};
    return m;
}

/* ODE 0.16's implicit gyroscopic torque (step.cpp, after Lacoursiere 2006), which dWorldStep
 * adds to the torque accumulator before its solve: the right-hand side must see it too. */
static sc_vec3 gyroscopic_torque(sc_mat3 iw, sc_vec3 w, double h)
{
    sc_vec3 l = sc_m3_mulv(iw, w);
    sc_mat3 inv;
    if (!sc_m3_inverse(sc_m3_sub(iw, sc_m3_scale(sc_m3_skew(l), h)), &inv)) return sc_v3(0, 0, 0);
    sc_mat3 g = sc_m3_mul(iw, inv);
    for (int k = 0; k < 3; k++) g.m[k][k] -= 1;
    return sc_m3_mulv(g, sc_v3_scale(l, 1 / h));
}

/* Row r of a joint: Jacobian (child linear, child angular, parent linear, parent angular),
 * ODE's c (a velocity) and CFM, scaled by 1/h as step.cpp does. */
static void set_row(sc_tree_rows *j, int r, sc_vec3 cl, sc_vec3 ca, sc_vec3 pl, sc_vec3 pa, double c, double cfm, double fps, const double *uc,
                    const double *up)
{
    double *jc = j->child[r], *jp = j->parent[r];
    sc_v3_store(jc, cl);
    sc_v3_store(jc + 3, ca);
    sc_v3_store(jp, pl);
    sc_v3_store(jp + 3, pa);
    j->sigma[r] = cfm * fps;
    double ju = 0;
    for (int k = 0; k < 6; k++) ju += jc[k] * uc[k] + jp[k] * up[k];
    j->rhs[r] = c * fps - ju;
}

/* Ball rows: the anchor seen from both bodies moves together, drift corrected by ERP. */
static void ball_rows(sc_tree_rows *j, sc_vec3 a1, sc_vec3 p1, sc_vec3 a2, sc_vec3 p2, double k, double cfm, double fps, const double *uc,
                      const double *up)
{
    sc_vec3 gap = sc_v3_sub(sc_v3_add(a2, p2), sc_v3_add(a1, p1));
    for (int i = 0; i < 3; i++) {
        sc_vec3 e = sc_v3(i == 0, i == 1, i == 2);
        set_row(j, i, e, sc_v3_cross(a1, e), sc_v3_scale(e, -1), sc_v3_scale(sc_v3_cross(a2, e), -1), k * sc_v3_get(gap, i), cfm, fps, uc, up);
    }
}

/* Unit p, q with (a, p, q) orthonormal, for the unit a (any pair spans the rows' space). */
static void plane_space(sc_vec3 a, sc_vec3 *p, sc_vec3 *q)
{
    *p = fabs(a.z) > 0.7071 ? sc_v3(0, -a.z, a.y) : sc_v3(-a.y, a.x, 0);
    *p = sc_v3_normalize(*p);
    *q = sc_v3_cross(a, *p);
}

enum { TREE_STEPPED = 1, TREE_NEEDS_LCP = 0, TREE_OVER_LIMIT = 2, TREE_NO_MEMORY = -1 };

/* Takes the step, or leaves everything as it was when it needs ODE's LCP (a hinge at its stop,
 * a singular system) or a servo is over its limit. */
static int tree_step(sc_skeleton *s, double dt)
{
    const int nb = s->nb;
    const double fps = 1 / dt, k = fps * s->opts.erp, cfm = s->opts.cfm;
    const sc_vec3 grav = sc_v3_load(s->opts.gravity);
    for (int b = 1; b < nb; b++) { /* hinge.cpp getInfo1: a stop row when at or past a stop */
        if (s->type[b] != SC_JOINT_HINGE || !isfinite(s->stop_lo[b]) || s->stop_lo[b] > s->stop_hi[b]) continue; /* ODE ignores crossed stops */
        double a = dJointGetHingeAngle(s->joint[b]);
        if (a <= s->stop_lo[b] || a >= s->stop_hi[b]) return TREE_NEEDS_LCP;
    }
    for (int b = 0; b < nb; b++) {
        dBodyID bd = s->body[b];
        sc_mat3 r = body_R(bd);
        sc_mat3 iw = sc_m3_mul_nt(sc_m3_mul(r, m3_at(s->inertia + 9 * b)), r), iwi = sc_m3_mul_nt(sc_m3_mul(r, s->inv_inertia[b]), r);
        memcpy(s->iw + 9 * b, iw.m, sizeof iw.m);
        sc_vec3 w = v3d(dBodyGetAngularVel(bd));
        sc_vec3 f = sc_v3_add(v3d(dBodyGetForce(bd)), sc_v3_scale(grav, s->mass[b]));
        sc_vec3 tau = sc_v3_add(v3d(dBodyGetTorque(bd)), gyroscopic_torque(iw, w, dt));
        double *u = s->u + 6 * b;
        sc_v3_store(u, sc_v3_add(sc_v3_scale(f, 1 / s->mass[b]), sc_v3_scale(v3d(dBodyGetLinearVel(bd)), fps)));
        sc_v3_store(u + 3, sc_v3_add(sc_m3_mulv(iwi, tau), sc_v3_scale(w, fps)));
    }
    for (int b = 1; b < nb; b++) {
        const int p = s->parent[b];
        dBodyID bc = s->body[b], bp = s->body[p];
        sc_mat3 rc = body_R(bc), rp = body_R(bp);
        sc_tree_rows *j = &s->rows[b];
        const double *uc = s->u + 6 * b, *up = s->u + 6 * p;
        sc_vec3 a1 = sc_m3_mulv(rc, sc_v3_load(s->anchor_c + 3 * b)), a2 = sc_m3_mulv(rp, sc_v3_load(s->anchor_p + 3 * b));
        ball_rows(j, a1, v3d(dBodyGetPosition(bc)), a2, v3d(dBodyGetPosition(bp)), k, cfm, fps, uc, up);
        const sc_vec3 z = {0, 0, 0};
        int m = 3;
        if (s->type[b] == SC_JOINT_HINGE) {
            sc_vec3 axis = sc_v3_load(s->axis + 3 * b);
            sc_vec3 ax1 = sc_m3_mulv(rc, axis), ax2 = sc_m3_mulv(rp, axis), pv, qv;
            plane_space(ax1, &pv, &qv);
            sc_vec3 bx = sc_v3_cross(ax1, ax2);
            set_row(j, m++, z, pv, z, sc_v3_scale(pv, -1), k * sc_v3_dot(bx, pv), cfm, fps, uc, up);
            set_row(j, m++, z, qv, z, sc_v3_scale(qv, -1), k * sc_v3_dot(bx, qv), cfm, fps, uc, up);
            if (s->kd[b] > 0 && s->amotor[b]) { /* 1-axis amotor on the parent-fixed axis, body1 = parent */
                sc_vec3 ax = sc_m3_mulv(rp, axis);
                set_row(j, m++, z, sc_v3_scale(ax, -1), z, ax, dJointGetAMotorParam(s->amotor[b], dParamVel), 1 / s->kd[b], fps, uc, up);
            } else if (s->kd[b] > 0) { /* the hinge's own motor, body1 = child */
                set_row(j, m++, z, ax1, z, sc_v3_scale(ax1, -1), dJointGetHingeParam(s->joint[b], dParamVel), 1 / s->kd[b], fps, uc, up);
            }
        } else if (s->kd[b] > 0) { /* 3-axis amotor on the parent's axes, body1 = parent */
            static const int pv[3] = {dParamVel, dParamVel2, dParamVel3};
            for (int i = 0; i < 3; i++) {
                sc_vec3 ax = sc_m3_col(rp, i);
                set_row(j, m++, z, sc_v3_scale(ax, -1), z, ax, dJointGetAMotorParam(s->amotor[b], pv[i]), 1 / s->kd[b], fps, uc, up);
            }
        }
        j->m = m;
    }
    if (sc_tree_solve(s->tree, s->mass, s->iw, s->rows, s->lambda)) return TREE_NEEDS_LCP;
    /* the servos' torques on their child (rows 3.. of a ball, 5 of a hinge); over a limit, the
     * bounded LCP decides */
    for (int b = 1; b < nb; b++) {
        const sc_tree_rows *j = &s->rows[b];
        sc_vec3 t = {0, 0, 0};
        for (int r = s->type[b] == SC_JOINT_HINGE ? 5 : 3; r < j->m; r++)
            t = sc_v3_add(t, sc_v3_scale(sc_v3_load(j->child[r] + 3), s->lambda[6 * b + r]));
        if (s->kd[b] > 0 && isfinite(s->tlim[b]) && sc_v3_norm(t) > s->tlim[b]) return TREE_OVER_LIMIT;
        sc_v3_store(s->motor_tau + 3 * b, sc_v3_add(t, sc_v3_load(s->explicit_tau + 3 * b)));
    }
    memset(s->motor_tau, 0, 3 * sizeof(double));
    for (int b = 1; b < nb; b++) {
        const sc_tree_rows *j = &s->rows[b];
        double fc[6] = {0}, fp[6] = {0};
        for (int r = 0; r < j->m; r++)
            for (int i = 0; i < 6; i++) {
                fc[i] += j->child[r][i] * s->lambda[6 * b + r];
                fp[i] += j->parent[r][i] * s->lambda[6 * b + r];
            }
        dBodyID bc = s->body[b], bp = s->body[s->parent[b]];
        dBodyAddForce(bc, fc[0], fc[1], fc[2]);
        dBodyAddTorque(bc, fc[3], fc[4], fc[5]);
        dBodyAddForce(bp, fp[0], fp[1], fp[2]);
        dBodyAddTorque(bp, fp[3], fp[4], fp[5]);
    }
    for (int b = 1; b < nb; b++) {
        dJointDisable(s->joint[b]);
        if (s->amotor[b]) dJointDisable(s->amotor[b]);
    }
    int ok = dWorldStep(s->world, dt);
    for (int b = 1; b < nb; b++) {
        dJointEnable(s->joint[b]);
        if (s->amotor[b]) dJointEnable(s->amotor[b]);
    }
    s->tree_steps++;
    return ok ? TREE_STEPPED : TREE_NO_MEMORY;
}

static int skeleton_step(sc_skeleton *s, double dt, sc_err *err)
{
    if (!(dt > 0) || !isfinite(dt)) return sc_fail(err, SC_EINPUT, "skeleton: time step %g (must be > 0)", dt);
    /* ODE asserts (aborts) on non-finite quaternions, so bad input must not reach it. A
     * refused step discards the pending loads. */
    for (int b = 0; b < s->nb; b++) {
        dBodyID bd = s->body[b];
        int rc = SC_OK;
        double v = sc_v3_norm(v3d(dBodyGetLinearVel(bd))), w = sc_v3_norm(v3d(dBodyGetAngularVel(bd)));
        double f = sc_v3_norm(v3d(dBodyGetForce(bd))), t = sc_v3_norm(v3d(dBodyGetTorque(bd)));
        if (!(f < SC_SKELETON_MAX_LOAD) || !(t < SC_SKELETON_MAX_LOAD))
            rc = sc_fail(err, SC_ENUMERIC, "skeleton: %s external load on bone %d '%s' (|F| %g N, |tau| %g N m)",
                         isfinite(f) && isfinite(t) ? "excessive" : "non-finite", b, s->name[b], f, t);
        else if (!(v < SC_SKELETON_MAX_SPEED) || !(w < SC_SKELETON_MAX_SPEED))
            rc = sc_fail(err, SC_ENUMERIC, "skeleton: bone %d '%s' diverged (|v| %g m/s, |w| %g rad/s)", b, s->name[b], v, w);
        if (rc) {
            for (int k = 0; k < s->nb; k++) {
                dBodySetForce(s->body[k], 0, 0, 0);
                dBodySetTorque(s->body[k], 0, 0, 0);
            }
            return rc;
        }
    }
    /* The exact solver's LCP is far cheaper without bounds on the servo rows, and a bound
     * that does not bind does not change its solution (unique: the system is positive
     * definite). So a servo whose last torque was below half its limit steps unbounded; if
     * any of them then exceeds its limit, the step is redone from the saved state with every
     * servo bounded, as ODE would have solved it. (|tau| bounds every motor row's torque.) */
    make_contacts(s);
    int speculative = 0, any_boxed = 0;
    for (int b = 1; b < s->nb; b++) {
        int bounded = s->kd[b] > 0 && isfinite(s->tlim[b]);
        s->boxed[b] = !s->opts.exact_solver || !s->opts.speculative || (bounded && sc_v3_norm(sc_v3_load(s->motor_tau + 3 * b)) > 0.5 * s->tlim[b]);
        speculative |= bounded && !s->boxed[b];
        any_boxed |= bounded && s->boxed[b];
    }
    /* The tree solver solves without bounds, whatever boxed says: within them its solution is
     * the bounded LCP's too. */
    const int try_tree = s->opts.exact_solver && s->opts.speculative && s->opts.tree_solver && !s->opts.fix_root && !s->ncontacts;
    if (speculative || (try_tree && any_boxed)) sc_skeleton_save(s, s->undo); /* before setup_servos adds the explicit torques */
    setup_servos(s);
    int ok, tree = 0;
    t_stepping = s;
    if (try_tree) {
        tree = tree_step(s, dt);
        if (tree == TREE_OVER_LIMIT) {       /* as a speculative step redone: every servo bounded */
            sc_skeleton_restore(s, s->undo); /* the loads without this step's explicit torques */
            for (int b = 1; b < s->nb; b++) s->boxed[b] = 1;
            setup_servos(s);
            speculative = 0;
            s->redone++;
            tree = 0;
        }
    }
    if (tree) {
        ok = tree == TREE_STEPPED;
    } else if (s->opts.exact_solver) {
        ok = dWorldStep(s->world, dt);
        if (ok && speculative) {
            collect_motor_torques(s);
            int exceeded = 0;
            for (int b = 1; b < s->nb; b++) exceeded |= s->kd[b] > 0 && !s->boxed[b] && sc_v3_norm(sc_v3_load(s->motor_tau + 3 * b)) > s->tlim[b];
            if (exceeded) {
                sc_skeleton_restore(s, s->undo);
                for (int b = 1; b < s->nb; b++) s->boxed[b] = 1;
                setup_servos(s);
                ok = dWorldStep(s->world, dt);
                s->redone++;
            }
        }
    } else {
        pthread_mutex_lock(&g_quickstep);
        t_quickstep_locked = 1;
        dRandSetSeed(SC_QUICKSTEP_SEED);
        ok = dWorldQuickStep(s->world, dt);
        t_quickstep_locked = 0;
        pthread_mutex_unlock(&g_quickstep);
    }
    t_stepping = NULL;
    if (!ok) return sc_fail(err, SC_EIO, "skeleton: ODE could not allocate its step memory");
    if (!tree) collect_motor_torques(s);
    collect_bone_loads(s);
    for (int b = 0; b < s->nb; b++) {
        dBodyID bd = s->body[b];
        if (!all_finite(dBodyGetPosition(bd), 3) || !all_finite(dBodyGetQuaternion(bd), 4) || !all_finite(dBodyGetLinearVel(bd), 3) ||
            !all_finite(dBodyGetAngularVel(bd), 3))
            return sc_fail(err, SC_ENUMERIC, "skeleton: non-finite position or velocity of bone %d '%s' after the step", b, s->name[b]);
    }
    return SC_OK;
}

long sc_skeleton_redone_steps(const sc_skeleton *s) { return s->redone; }
long sc_skeleton_tree_steps(const sc_skeleton *s) { return s->tree_steps; }

int sc_skeleton_step(sc_skeleton *s, double dt, sc_err *err)
{
    if (s->broken) return sc_fail(err, SC_ENUMERIC, "skeleton: an earlier ODE error left this skeleton unusable: %s", tls_ode_msg);
    if (!t_ode_thread_ready) {
        pthread_once(&g_ode_once, ode_init_once);
        dAllocateODEDataForThread(dAllocateMaskAll);
        t_ode_thread_ready = 1;
    }
    jmp_buf jump;
    if (setjmp(jump)) {
        tls_ode_jump = NULL;
        t_stepping = NULL;
        if (t_quickstep_locked) {
            t_quickstep_locked = 0;
            pthread_mutex_unlock(&g_quickstep);
        }
        s->broken = 1;
        return sc_fail(err, SC_ENUMERIC, "skeleton: %s (inside the ODE step; the simulation cannot continue)", tls_ode_msg);
    }
    tls_ode_jump = &jump;
    int rc = skeleton_step(s, dt, err);
    tls_ode_jump = NULL;
    return rc;
}

/* ---- snapshot --------------------------------------------------------------------------- */
/* What ODE carries from step to step: body pos/q/R/velocities and the force accumulators.
 * Joints hold only constants set at creation (anchors, axes, hinge qrel, params); the motor
 * velocities are recomputed at every step from the targets. ODE 0.16's quickstep keeps no
 * lambda warm-start cache (WARM_STARTING is compiled out), its row shuffle is reseeded before
 * every step (SC_QUICKSTEP_SEED), and auto-disable is off. */

size_t sc_skeleton_state_size(const sc_skeleton *s) { return (size_t)SNAP_PER_BONE * s->nb; }

void sc_skeleton_save(const sc_skeleton *s, double *buf)
{
    double *p = buf;
    for (int b = 0; b < s->nb; b++, p += SNAP_PER_BONE) {
        dBodyID bd = s->body[b];
        memcpy(p, dBodyGetPosition(bd), 3 * sizeof(double));
        memcpy(p + 3, dBodyGetQuaternion(bd), 4 * sizeof(double));
        memcpy(p + 7, dBodyGetLinearVel(bd), 3 * sizeof(double));
        memcpy(p + 10, dBodyGetAngularVel(bd), 3 * sizeof(double));
        memcpy(p + 13, dBodyGetForce(bd), 3 * sizeof(double));
        memcpy(p + 16, dBodyGetTorque(bd), 3 * sizeof(double));
        const sc_quat *t = &s->target[b];
        p[19] = t->w;
        p[20] = t->x;
        p[21] = t->y;
        p[22] = t->z;
        memcpy(p + 23, s->motor_tau + 3 * b, 3 * sizeof(double));
        p[26] = s->bone_load[b];
    }
}

void sc_skeleton_restore(sc_skeleton *s, const double *buf)
{
    const double *p = buf;
    for (int b = 0; b < s->nb; b++, p += SNAP_PER_BONE) {
        dBodyID bd = s->body[b];
        dBodySetPosition(bd, p[0], p[1], p[2]);
        dBodySetQuaternion(bd, p + 3);
        /* dBodySetQuaternion renormalizes, which can move the last bit of a quaternion that
         * the stepper already normalized. Write the saved bits back into the body's own
         * storage and rebuild R with ODE's dQtoR, exactly what the stepper ends with. */
        dReal *q = (dReal *)dBodyGetQuaternion(bd);
        memcpy(q, p + 3, 4 * sizeof(double));
        dRfromQ((dReal *)dBodyGetRotation(bd), q);
        dBodySetLinearVel(bd, p[7], p[8], p[9]);
        dBodySetAngularVel(bd, p[10], p[11], p[12]);
        dBodySetForce(bd, p[13], p[14], p[15]);
        dBodySetTorque(bd, p[16], p[17], p[18]);
        s->target[b].w = p[19];
        s->target[b].x = p[20];
        s->target[b].y = p[21];
        s->target[b].z = p[22];
        memcpy(s->motor_tau + 3 * b, p + 23, 3 * sizeof(double));
        s->bone_load[b] = p[26];
    }
}

/* ---- diagnostics ------------------------------------------------------------------------ */

void sc_skeleton_momentum(const sc_skeleton *s, double lin[3], double ang[3])
{
    sc_vec3 P = {0, 0, 0}, L = {0, 0, 0};
    for (int b = 0; b < s->nb; b++) {
        dBodyID bd = s->body[b];
        sc_vec3 x = v3d(dBodyGetPosition(bd)), v = v3d(dBodyGetLinearVel(bd)), w = v3d(dBodyGetAngularVel(bd));
        sc_vec3 mv = sc_v3_scale(v, s->mass[b]);
        sc_mat3 R = sc_q_to_m3(body_q(bd));
        sc_mat3 Iw = sc_m3_mul_nt(sc_m3_mul(R, m3_at(s->inertia + 9 * b)), R);
        P = sc_v3_add(P, mv);
        L = sc_v3_add(L, sc_v3_add(sc_v3_cross(x, mv), sc_m3_mulv(Iw, w)));
    }
    sc_v3_store(lin, P);
    sc_v3_store(ang, L);
}

long sc_skeleton_ode_messages(const sc_skeleton *s, const char **last)
{
    if (last) *last = s->last_ode_message;
    return s->ode_messages;
}

void sc_skeleton_set_gravity(sc_skeleton *s, const double g[3])
{
    memcpy(s->opts.gravity, g, 3 * sizeof(double));
    dWorldSetGravity(s->world, g[0], g[1], g[2]);
}

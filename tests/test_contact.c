/* Contact detection and the contact-preserving fit on synthetic motions whose contacts are
 * known: standing, one foot lifted, a hop (a ballistic flight), and a body held up with its feet
 * above the floor (where only the resultant says something must touch). */
#include <stdlib.h>
#include <string.h>
#include "motion/inverse_dynamics.h"
#include "settings/motion.h"
#include "io/bvh.h"
#include "store/character.h"
#include "io/config.h"
#include "test.h"

static char out[16384];

/* michelin_cmu.yaml by mesh-prep (no skin weights: the nearest-bone fallback), built once */
static const char *character(void)
{
    static int built;
    static char path[1024];
    if (!built) {
        snprintf(path, sizeof path, "%s", sc_test_tmp("contact_cmu.h5"));
        int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s", sc_test_tool("mesh-prep"), sc_test_repo("configs/michelin_cmu.yaml"), path);
        built = rc == 0 ? 1 : -1;
        if (rc) sc_test_fail(__FILE__, __LINE__, "mesh-prep: exit %d: %s", rc, out);
    }
    return built == 1 ? path : NULL;
}

/* The phases of the synthetic clip (seconds from frame 1, the first frame used). */
#define T_LIFT0 0.5 /* right foot starts to rise (0.15 s up, 0.3 s held, 0.15 s down) */
#define T_LIFT1 1.1
#define T_HOP0  1.4 /* ballistic flight: 1.2 m/s up, 0.245 s */
#define HOP_V   1.2
#define T_END   2.2

static double smooth01(double x) { return x <= 0 ? 0 : x >= 1 ? 1 : 0.5 - 0.5 * cos(SC_PI * x); }

static int channel_of(const sc_bvh *b, const char *joint, int kind)
{
    int j = sc_bvh_find(b, joint);
    if (j < 0) return -1;
    for (int c = 0; c < b->joints[j].nchannels; c++)
        if (b->joints[j].channel[c] == kind) return b->joints[j].channel_offset + c;
    return -1;
}

/* The CMU walk's skeleton standing in its rest pose, lifting the right foot (hip flexed 30 deg,
 * knee 60 deg, the foot level), then hopping; frame 0 is the T-pose frame the CMU conversions start with. */
static const char *synthetic_bvh(sc_err *err)
{
    sc_bvh b;
    if (sc_bvh_load(sc_test_mocap("cmu_02_01_walk.bvh"), &b, err)) return NULL;
    free(b.frames);
    b.nframes = 1 + (int)lround(T_END / b.frame_time);
    b.frames = calloc((size_t)b.nframes * b.nchannels, sizeof(double));
    int hy = channel_of(&b, "Hips", SC_BVH_YPOS), th = channel_of(&b, "RightUpLeg", SC_BVH_XROT), kn = channel_of(&b, "RightLeg", SC_BVH_XROT),
        ft = channel_of(&b, "RightFoot", SC_BVH_XROT);
    if (hy < 0 || th < 0 || kn < 0 || ft < 0) {
        sc_bvh_free(&b);
        sc_fail(err, SC_EINPUT, "walk BVH without Hips Yposition / RightUpLeg, RightLeg Xrotation");
        return NULL;
    }
    double flight = 2 * HOP_V / 9.81;
    for (int f = 0; f < b.nframes; f++) {
        double t = (f - 1) * b.frame_time, *fr = b.frames + (size_t)f * b.nchannels, lift = 0, y = 0;
        if (t > T_LIFT0 && t < T_LIFT1) lift = smooth01((t - T_LIFT0) / 0.15) * smooth01((T_LIFT1 - t) / 0.15);
        if (t > T_HOP0 && t < T_HOP0 + flight) y = HOP_V * (t - T_HOP0) - 0.5 * 9.81 * (t - T_HOP0) * (t - T_HOP0);
        fr[hy] = 16.7 + y / 0.056444;
        fr[th] = -30 * lift;
        fr[kn] = 60 * lift;
        fr[ft] = -30 * lift; /* the foot stays level */
    }
    const char *path = sc_test_tmp("synthetic_contacts.bvh");
    int rc = sc_bvh_write(path, &b, err);
    sc_bvh_free(&b);
    return rc ? NULL : path;
}

static int bone(const sc_model *m, const char *name)
{
    for (int j = 0; j < m->nbones; j++)
        if (!strcmp(m->bone_name[j], name)) return j;
    return -1;
}

TEST(id_contacts_known_synthetic)
{
    sc_err err;
    const char *ch = character(), *bvh = synthetic_bvh(&err);
    ENSURE(ch);
    ENSURE_MSG(bvh, "%s", err.msg);
    char text[2048];
    snprintf(text, sizeof text, "motion: {bvh: %s, filter: butterworth, filter_cutoff: 8}\n", bvh);
    const char *yaml = sc_test_write("synthetic_contacts.yaml", text);
    sc_cfg *cfg;
    sc_id_config c;
    sc_model m;
    ENSURE_OK(sc_cfg_load_file(yaml, &cfg, &err), &err);
    ENSURE_OK(sc_id_read_config(cfg, &c, &err), &err);
    sc_cfg_free(cfg);
    ENSURE_OK(sc_character_read(ch, &m, 0, &err), &err);
    sc_reference r;
    sc_id_report rep;
    sc_id_pipeline_info info;
    ENSURE_OK(sc_id_compute(&c, &m, &r, &rep, &info, &err), &err);
    int lf = bone(&m, "l_foot"), rf = bone(&m, "r_foot");
    ENSURE(lf >= 0 && rf >= 0);
    /* the truth, away from the transitions (the 8 Hz filter blurs them over ~0.06 s) */
    double flight = 2 * HOP_V / 9.81, edges[] = {T_LIFT0 + 0.075, T_LIFT1 - 0.075, T_HOP0, T_HOP0 + flight};
    long wrong[2] = {0, 0}, judged = 0, others = 0, lift_h = 0;
    double hmin_lift = INFINITY;
    for (int k = 0; k < r.n; k++) {
        double t = r.time[k], near = INFINITY;
        for (int e = 0; e < 4; e++) near = fmin(near, fabs(t - edges[e]));
        int air = t > T_HOP0 && t<T_HOP0 + flight, lifted = t> T_LIFT0 + 0.075 && t < T_LIFT1 - 0.075;
        for (int j = 0; j < r.nb; j++) others += j != lf && j != rf && r.captured[(size_t)k * r.nb + j];
        if (lifted && near > 0.08) {
            hmin_lift = fmin(hmin_lift, r.contact_height[(size_t)k * r.nb + rf]);
            lift_h++;
        }
        if (near < 0.08) continue;
        judged++;
        wrong[0] += r.captured[(size_t)k * r.nb + lf] != !air;
        wrong[1] += r.captured[(size_t)k * r.nb + rf] != (!air && !lifted);
    }
    sc_test_report("synthetic stand / lift / hop (%d samples, %ld judged away from transitions): contact tolerances %.3f m, "
                   "%.2f m/s (from the character); %d contact intervals; wrong l_foot %ld, r_foot %ld samples; other bones in "
                   "contact %ld; lifted foot >= %.3f m up; mean vertical force %.4f x expected, unsupported %ld, root residual "
                   "rms %.4f m g; contacts kept %d/%d, largest gap %.4f m",
                   r.n, judged, info.height_tol, info.speed_tol, info.detect.intervals, wrong[0], wrong[1], others, hmin_lift,
                   rep.mean_contact_fy / rep.expected_fy, rep.unsupported, rep.residual_force_rms / rep.weight, rep.contacts_kept,
                   rep.contact_intervals, rep.max_contact_gap);
    ENSURE(lift_h > 0 && hmin_lift > 0.05); /* the lift really lifts */
    ENSURE(wrong[0] == 0 && wrong[1] == 0 && others == 0);
    ENSURE(info.detect.intervals == 5); /* l_foot: 2, r_foot: 3 */
    ENSURE(fabs(rep.mean_contact_fy / rep.expected_fy - 1) < 0.01);
    ENSURE(rep.unsupported == 0);
    ENSURE(rep.residual_force_rms < 0.01 * rep.weight);
    ENSURE(rep.contacts_kept == rep.contact_intervals && rep.max_contact_gap < 0.01);
    sc_reference_free(&r);
    sc_model_free(&m);
}

/* The consistency check: the standing body held 6 cm up (its feet above height_tol) needs its
 * weight carried, so its lowest bones touch; the same height in free fall needs nothing. */
TEST(id_contacts_from_the_resultant)
{
    sc_err err;
    const char *ch = character();
    ENSURE(ch);
    sc_model m;
    ENSURE_OK(sc_character_read(ch, &m, 0, &err), &err);
    sc_body b;
    sc_gc_geom g;
    ENSURE_OK(sc_body_from_model(&m, SC_MASS_SKIN, &b, &err), &err);
    ENSURE_OK(sc_gc_geom_build(&m, &g, &err), &err);
    int nb = m.nbones, n = 121;
    double dt = 1.0 / 120, ground = INFINITY;
    for (int i = 0; i < m.nsurf_verts; i++) ground = fmin(ground, m.surf_rest[3 * i + 1]);
    sc_gc_detect_opts o;
    sc_gc_detect_default_opts(&o);
    sc_gc_auto_tolerances(&m, 9.81, &o.height_tol, &o.speed_tol);
    long touching[2] = {0, 0}, rescued[2] = {0, 0};
    for (int fall = 0; fall < 2; fall++) {
        sc_motion mo;
        ENSURE_OK(sc_motion_alloc(&mo, n, nb, dt, &err), &err);
        for (int f = 0; f < n; f++) {
            double t = f * dt;
            sc_v3_store(mo.root_pos + 3 * f, sc_v3_load(m.joint_pos));
            mo.root_pos[3 * f + 1] += 0.06 - ground + (fall ? -0.5 * 9.81 * (t - 0.5) * (t - 0.5) + 0.5 * 9.81 * 0.25 : 0);
            for (int j = 0; j < nb; j++) mo.local[(size_t)f * nb + j] = sc_q_identity();
        }
        unsigned char *flags = malloc((size_t)n * nb);
        sc_gc_detect_info info;
        ENSURE_OK(sc_gc_detect(&b, &g, &mo, &o, flags, &info, &err), &err);
        for (int f = 0; f < n; f++)
            for (int j = 0; j < nb; j++) touching[fall] += flags[(size_t)f * nb + j];
        rescued[fall] = info.frames_rescued;
        sc_test_report("body %s with its feet 6 cm (and more) above the floor (height tolerance %.3f m): %ld bone-frames in "
                       "contact, %ld frames from the resultant, %ld frames needing support without contact",
                       fall ? "falling freely" : "held still", o.height_tol, touching[fall], rescued[fall], info.frames_unsupported);
        if (!fall) {
            ENSURE(info.frames_unsupported == 0 && rescued[0] == n);
            for (int f = 0; f < n; f++) ENSURE(flags[(size_t)f * nb + bone(&m, "l_foot")] && flags[(size_t)f * nb + bone(&m, "r_foot")]);
        }
        free(flags);
        sc_motion_free(&mo);
    }
    ENSURE(touching[0] == 2 * n); /* both feet, nothing else */
    ENSURE(touching[1] == 0 && rescued[1] == 0);
    sc_gc_geom_free(&g);
    sc_body_free(&b);
    sc_model_free(&m);
}

/* simulate: the two-way coupled skeleton + soft body of [L13] section 4 with a controller
 * (hold, keyframes, or a PD target trajectory) and perturbations; writes sim.h5 + sim.xdmf. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/cli.h"
#include "common/output.h"
#include "control/controller.h"
#include "core/cleanup.h"
#include "core/log.h"
#include "io/character.h"
#include "io/config.h"
#include "io/paths.h"
#include "sim/sim.h"

static const char *usage =
    "-c CONFIG.yaml -o sim.h5 [--trajectory reference.h5 [--raw]] character.h5\n"
    "  --trajectory FILE  track the PD targets of FILE (inverse-dynamics / sample-openloop output)\n"
    "                     from the reference's initial pose (overrides the config's controller)\n"
    "  --raw              with --trajectory: use the raw reference poses as targets instead\n"
    "Simulates the character (skin weights required for pose-based plasticity and damping)\n"
    "under the config's controller and perturbations; writes sim.h5 and sim.xdmf (ParaView).";

#define MAX_PERT 64
typedef struct { int kind, bone; double time, duration, v[3]; } perturbation; /* kind 0 push, 1 velocity */

typedef struct {
    double duration, drop_height, init_vel[3];
    int initial_pose; /* 0 rest, 1 the reference's state at the controller's start */
    double youngs, poisson, kp_scale, kd_scale, limit_scale;
    int every, store_nodes;
    int npert;
    perturbation pert[MAX_PERT];
} run_opts;

static int bone_of(const sc_model *m, const char *name)
{
    for (int b = 0; b < m->nbones; b++)
        if (!strcmp(m->bone_name[b], name)) return b;
    return -1;
}

static int read_config(sc_cfg *cfg, const sc_model *m, sc_sim_opts *so, run_opts *ro, sc_controller *ctrl, sc_err *err)
{
    sc_cfg_node *root = sc_cfg_root(cfg), *sim, *con, *gr, *ctl, *out, *ray, *bumps;
    char w[256];
    int rc;
    sc_sim_default_opts(so);
    memset(ro, 0, sizeof *ro);
    static const char *const damping[] = {"pose", "rayleigh", "none"}, *const solvers[] = {"quick", "exact"};
    int solver;
    long iters, every;
    double zero3[3] = {0, 0, 0}, g[3] = {0, -9.81, 0};
#define TRY(x) if ((rc = (x))) return rc
    TRY(sc_cfg_section(root, "simulation", &sim, err));
    TRY(sc_cfg_double_range(sim, "duration", 0, 0, 1e5, &ro->duration, err)); /* 0: the trajectory's length, else 5 s */
    TRY(sc_cfg_double_range(sim, "dt", 0.5e-3, 1e-6, 0.05, &so->dt, err));
    TRY(sc_cfg_vec_range(sim, "gravity", 3, g, -1e3, 1e3, so->gravity, err));
    TRY(sc_cfg_bool(sim, "plasticity", 1, &so->plasticity, err));
    TRY(sc_cfg_enum(sim, "damping", damping, 3, SC_DAMP_POSE, &so->damping, err));
    TRY(sc_cfg_double_range(sim, "pose_damping", so->pose_damping, 0, 1e5, &so->pose_damping, err));
    TRY(sc_cfg_section(sim, "rayleigh", &ray, err));
    TRY(sc_cfg_double_range(ray, "alpha", so->rayleigh_alpha, 0, 1e5, &so->rayleigh_alpha, err));
    TRY(sc_cfg_double_range(ray, "beta", so->rayleigh_beta, 0, 10, &so->rayleigh_beta, err));
    TRY(sc_cfg_enum(sim, "solver", solvers, 2, 0, &solver, err));
    TRY(sc_cfg_int(sim, "iterations", 20, 1, 10000, &iters, err));
    TRY(sc_cfg_double_range(sim, "max_speed", so->max_speed, 1e-3, 1e6, &so->max_speed, err));
    TRY(sc_cfg_double_range(sim, "max_inverted", so->max_inverted, 0, 1, &so->max_inverted, err));
    TRY(sc_cfg_double_range(sim, "drop_height", 0, -10, 100, &ro->drop_height, err));
    TRY(sc_cfg_vec_range(sim, "initial_velocity", 3, zero3, -1e3, 1e3, ro->init_vel, err));
    static const char *const poses[] = {"rest", "reference"};
    TRY(sc_cfg_enum(sim, "initial_pose", poses, 2, 0, &ro->initial_pose, err));
    TRY(sc_cfg_double_range(sim, "youngs_modulus", m->youngs, 1, 1e12, &ro->youngs, err));
    TRY(sc_cfg_double_range(sim, "poisson_ratio", m->poisson, 0, 0.4999, &ro->poisson, err));
    so->skeleton.exact_solver = solver == 1;
    so->skeleton.iterations = (int)iters;

    TRY(sc_cfg_section(root, "contact", &con, err));
    TRY(sc_cfg_bool(con, "enabled", 1, &so->contact.enabled, err));
    TRY(sc_cfg_double_range(con, "stiffness", so->contact.stiffness, 0, 1e9, &so->contact.stiffness, err));
    TRY(sc_cfg_double_range(con, "damping", so->contact.damping, 0, 1e7, &so->contact.damping, err));
    TRY(sc_cfg_double_range(con, "friction", so->contact.mu, 0, 10, &so->contact.mu, err));
    TRY(sc_cfg_double_range(con, "tangent_stiffness", so->contact.tangent_stiffness, 0, 1e9, &so->contact.tangent_stiffness, err));
    TRY(sc_cfg_double_range(con, "tangent_damping", so->contact.tangent_damping, 0, 1e7, &so->contact.tangent_damping, err));
    double slope, height;
    TRY(sc_cfg_section(root, "ground", &gr, err));
    TRY(sc_cfg_double_range(gr, "slope", 0, -80, 80, &slope, err));
    TRY(sc_cfg_double_range(gr, "height", 0, -100, 100, &height, err));
    TRY(sc_cfg_section(gr, "bumps", &bumps, err));
    TRY(sc_cfg_double_range(bumps, "height", 0, 0, 10, &so->contact.ground.bump_height, err));
    TRY(sc_cfg_double_range(bumps, "wavelength", 1, 1e-3, 1e3, &so->contact.ground.bump_length, err));
    if (so->contact.ground.bump_height == 0) so->contact.ground.bump_length = 0;
    /* a slope tilts the ground about z: it rises along +x */
    double a = slope * SC_PI / 180;
    so->contact.ground.normal = sc_v3(-sin(a), cos(a), 0);
    so->contact.ground.offset = height * cos(a);

    TRY(sc_cfg_section(root, "controller", &ctl, err));
    TRY(sc_cfg_double_range(ctl, "kp_scale", 1, 0, 1e3, &ro->kp_scale, err));
    TRY(sc_cfg_double_range(ctl, "kd_scale", 1, 1e-6, 1e3, &ro->kd_scale, err));
    TRY(sc_cfg_double_range(ctl, "torque_limit_scale", 1, 0, 1e3, &ro->limit_scale, err));
    TRY(sc_controller_from_config(ctl, m, sc_cfg_path(cfg), ctrl, err));

    sc_cfg_node *list;
    TRY(sc_cfg_list(root, "perturbations", 0, &list, err));
    for (int i = 0; list && i < sc_cfg_len(list); i++) {
        sc_cfg_node *e = sc_cfg_at(list, i);
        if (ro->npert == MAX_PERT) return sc_fail(err, SC_EINPUT, "%s: at most %d perturbations", sc_cfg_where(e, w, sizeof w), MAX_PERT);
        perturbation *p = &ro->pert[ro->npert++];
        static const char *const kinds[] = {"push", "velocity"};
        char bone[SC_NAME_LEN];
        if (!sc_cfg_is_map(e)) return sc_fail(err, SC_EINPUT, "%s: a perturbation is a map", sc_cfg_where(e, w, sizeof w));
        TRY(sc_cfg_enum(e, "type", kinds, 2, -1, &p->kind, err));
        TRY(sc_cfg_double_range(e, "time", 0, 0, 1e6, &p->time, err));
        if (p->kind == 0) {
            TRY(sc_cfg_string(e, "bone", NULL, bone, sizeof bone, err));
            TRY(sc_cfg_double_range(e, "duration", 0.1, 0, 1e6, &p->duration, err));
            TRY(sc_cfg_vec_range(e, "force", 3, NULL, -1e6, 1e6, p->v, err));
            p->bone = bone_of(m, bone);
            if (p->bone < 0) return sc_fail(err, SC_EINPUT, "%s: '%s' is not a bone of the character", sc_cfg_where(sc_cfg_get(e, "bone"), w, sizeof w), bone);
        } else {
            TRY(sc_cfg_vec_range(e, "delta", 3, NULL, -1e3, 1e3, p->v, err));
        }
    }
    TRY(sc_cfg_section(root, "output", &out, err));
    TRY(sc_cfg_int(out, "every", 20, 1, 1000000, &every, err));
    TRY(sc_cfg_bool(out, "nodes", 1, &ro->store_nodes, err));
    ro->every = (int)every;
#undef TRY
    return SC_OK;
}

/* time series of sim.h5 */
typedef struct {
    sc_h5_series *time, *bpos, *bquat, *blin, *bang, *nodes, *ke, *ee, *pe, *te, *lin, *ang, *com, *cf, *cn, *depth, *inv,
        *track, *push, *steptime;
} series;

static int create_series(sc_h5 *f, const sc_model *m, int store_nodes, series *s, sc_err *err)
{
    size_t nb = (size_t)m->nbones, nn = (size_t)m->nnodes;
    int rc;
#define S(ptr, path, rank, dims, units, desc) if ((rc = sc_h5_series_create(f, path, s->time, rank, dims, units, desc, &s->ptr, err))) return rc
    if ((rc = sc_h5_timeline_create(f, "/time", &s->time, err))) return rc;
    if ((rc = sc_h5_group(f, "/bones", "rigid bones; position is the bone origin (its joint)", err))) return rc;
    S(bpos, "/bones/position", 2, ((size_t[]){nb, 3}), "m", "bone origin positions");
    S(bquat, "/bones/orientation", 2, ((size_t[]){nb, 4}), "1", "bone rotations (w, x, y, z) from the rest pose");
    S(blin, "/bones/linear_velocity", 2, ((size_t[]){nb, 3}), "m/s", "velocity of each bone origin");
    S(bang, "/bones/angular_velocity", 2, ((size_t[]){nb, 3}), "rad/s", "angular velocity, world frame");
    if (store_nodes) {
        if ((rc = sc_h5_group(f, "/nodes", "tet node trajectories", err))) return rc;
        S(nodes, "/nodes/position", 2, ((size_t[]){nn, 3}), "m", "tet node positions");
    }
    if ((rc = sc_h5_group(f, "/energy", "energies; total = kinetic + elastic + gravitational potential", err))) return rc;
    S(ke, "/energy/kinetic", 0, NULL, "J", "kinetic energy of free nodes and bones");
    S(ee, "/energy/elastic", 0, NULL, "J", "corotated elastic energy (relative to the pose-based rest shape with plasticity)");
    S(pe, "/energy/potential", 0, NULL, "J", "gravitational potential energy");
    S(te, "/energy/total", 0, NULL, "J", "kinetic + elastic + potential");
    if ((rc = sc_h5_group(f, "/momentum", "whole-body momentum (free nodes + bones)", err))) return rc;
    S(lin, "/momentum/linear", 1, ((size_t[]){3}), "kg m/s", "total linear momentum");
    S(ang, "/momentum/angular", 1, ((size_t[]){3}), "kg m^2/s", "angular momentum about the centre of mass");
    S(com, "/momentum/com", 1, ((size_t[]){3}), "m", "centre of mass");
    if ((rc = sc_h5_group(f, "/contact", "ground contact on the fine surface", err))) return rc;
    S(cf, "/contact/force", 1, ((size_t[]){3}), "N", "total contact force on the body");
    S(depth, "/contact/max_depth", 0, NULL, "m", "deepest ground penetration of a surface vertex");
    if ((rc = sc_h5_series_create_i32(f, "/contact/count", s->time, 0, NULL, "surface vertices in contact", &s->cn, err))) return rc;
    if ((rc = sc_h5_group(f, "/fem", "soft body", err))) return rc;
    if ((rc = sc_h5_series_create_i32(f, "/fem/inverted", s->time, 0, NULL, "inverted tets", &s->inv, err))) return rc;
    if ((rc = sc_h5_group(f, "/control", "controller", err))) return rc;
    S(track, "/control/tracking_error", 0, NULL, "rad", "RMS over joints of the angle between local rotation and PD target");
    S(push, "/control/push_force", 1, ((size_t[]){3}), "N", "total external push force applied");
    if ((rc = sc_h5_group(f, "/timing", "wall-clock cost", err))) return rc;
    S(steptime, "/timing/step", 0, NULL, "s", "mean wall time per step since the previous frame");
#undef S
    return SC_OK;
}

static int write_mesh(sc_h5 *f, const sc_model *m, sc_err *err)
{
    const char *names[SC_SIM_MAX_BONES];
    for (int b = 0; b < m->nbones; b++) names[b] = m->bone_name[b];
    int rc;
#define TRY(x) if ((rc = (x))) return rc
    TRY(sc_h5_write_strings(f, "/bones/names", (size_t)m->nbones, names, "bone names, in the order of every /bones dataset", err));
    TRY(sc_h5_write_i32(f, "/bones/parents", 1, (size_t[]){(size_t)m->nbones}, m->parent, "parent bone, -1 for the root", err));
    TRY(sc_h5_group(f, "/mesh", "the character's topology, so this file stands alone (copied from character.h5)", err));
    TRY(sc_h5_write_i32(f, "/mesh/tets", 2, (size_t[]){(size_t)m->ntets, 4}, m->tets, "tets (node indices)", err));
    TRY(sc_h5_write_f64(f, "/mesh/rest_pos", 2, (size_t[]){(size_t)m->nnodes, 3}, m->rest_pos, "m", "rest node positions", err));
    TRY(sc_h5_write_i32(f, "/mesh/node_bone", 1, (size_t[]){(size_t)m->nnodes}, m->node_bone, "bone a node is fixed to, -1 free", err));
    TRY(sc_h5_write_i32(f, "/mesh/surface_faces", 2, (size_t[]){(size_t)m->nsurf_tris, 3}, m->surf_tris, "fine surface triangles", err));
    TRY(sc_h5_write_i32(f, "/mesh/surface_tet", 1, (size_t[]){(size_t)m->nsurf_verts}, m->surf_tet, "embedding tet of each surface vertex", err));
    TRY(sc_h5_write_f64(f, "/mesh/surface_bary", 2, (size_t[]){(size_t)m->nsurf_verts, 4}, m->surf_bary, "1", "barycentric weights", err));
#undef TRY
    return SC_OK;
}

static int write_xdmf(const char *path, const char *h5, const sc_model *m, long nframes, const double *times, sc_err *err)
{
    char tmp[1100];
    FILE *x = sc_file_open_tmp(path, "w", tmp, sizeof tmp, err);
    if (!x) return err->code;
    fprintf(x, "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n <Domain>\n  <Grid Name=\"sim\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
    for (long k = 0; k < nframes; k++) {
        fprintf(x, "   <Grid Name=\"frame%ld\" GridType=\"Uniform\">\n    <Time Value=\"%.6f\"/>\n", k, times[k]);
        fprintf(x, "    <Topology TopologyType=\"Tetrahedron\" NumberOfElements=\"%d\">\n", m->ntets);
        fprintf(x, "     <DataItem Dimensions=\"%d 4\" NumberType=\"Int\" Format=\"HDF\">%s:/mesh/tets</DataItem>\n    </Topology>\n", m->ntets, h5);
        fprintf(x, "    <Geometry GeometryType=\"XYZ\">\n     <DataItem ItemType=\"HyperSlab\" Dimensions=\"%d 3\" Type=\"HyperSlab\">\n", m->nnodes);
        fprintf(x, "      <DataItem Dimensions=\"3 3\" Format=\"XML\">%ld 0 0 1 1 1 1 %d 3</DataItem>\n", k, m->nnodes);
        fprintf(x, "      <DataItem Dimensions=\"%ld %d 3\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">%s:/nodes/position</DataItem>\n", nframes, m->nnodes, h5);
        fprintf(x, "     </DataItem>\n    </Geometry>\n");
        fprintf(x, "    <Attribute Name=\"fixed_bone\" Center=\"Node\">\n     <DataItem Dimensions=\"%d\" NumberType=\"Int\" Format=\"HDF\">%s:/mesh/node_bone</DataItem>\n    </Attribute>\n", m->nnodes, h5);
        fprintf(x, "   </Grid>\n");
    }
    fprintf(x, "  </Grid>\n </Domain>\n</Xdmf>\n");
    return sc_file_commit(x, tmp, path, err);
}

static const char *trajectory;
static int raw;

static int extra_opt(const char *name, const char *value, int *used)
{
    *used = 2;
    if (!strcmp(name, "--trajectory")) {
        if (!value) return -1;
        trajectory = value;
        return 1;
    }
    *used = 1;
    if (!strcmp(name, "--raw")) return raw = 1;
    return 0;
}

int main(int argc, char **argv)
{
    sc_cli cli;
    sc_cli_parse(&cli, argc, argv, "simulate", usage, 1, 1, 1, SC_CLI_OUTPUT, extra_opt);
    if (raw && !trajectory) {
        fprintf(stderr, "simulate: --raw only applies with --trajectory FILE (it selects the raw reference poses of FILE)\n");
        return SC_EUSAGE;
    }
    sc_cli_add_input(&cli, trajectory);
    char xdmf[1024], h5rel[1024];
    sc_output_xdmf_paths(cli.output, xdmf, sizeof xdmf, h5rel, sizeof h5rel);
    sc_cli_add_output(&cli, xdmf);
    sc_err err = {0};
    sc_model m;
    sc_cfg *cfg = NULL;
    sc_sim_opts so;
    run_opts ro;
    sc_controller ctrl;
    if (sc_character_read(cli.inputs[0], &m, 0, &err)) sc_cli_die(&cli, &err);
    if (sc_cfg_load_file(cli.config, &cfg, &err) || read_config(cfg, &m, &so, &ro, &ctrl, &err)) sc_cli_die(&cli, &err);
    sc_cli_ignore_other_sections(cfg);
    if (sc_cfg_check_unknown(cfg, &err)) sc_cli_die(&cli, &err);
    if (trajectory) {
        sc_controller_free(&ctrl);
        if (sc_controller_load_trajectory(trajectory, raw ? "/reference/local_quat" : NULL, &m, &ctrl, &err)) sc_cli_die(&cli, &err);
        ro.initial_pose = 1;
    }
    m.youngs = ro.youngs;
    m.poisson = ro.poisson;
    for (int b = 0; b < m.nbones; b++) {
        m.kp[b] *= ro.kp_scale;
        m.kd[b] *= ro.kd_scale;
        m.torque_limit[b] *= ro.limit_scale;
    }
    sc_sim *sim;
    if (sc_sim_create(&m, &so, &sim, &err)) { sc_err_prefix(&err, "%s: ", cli.inputs[0]); sc_cli_die(&cli, &err); }
    if (ro.initial_pose == 1) {
        /* start in the reference's pose and velocity (a clip starts mid-motion) */
        if (ctrl.kind != SC_CTRL_TRAJECTORY) {
            sc_fail(&err, SC_EINPUT, "%s: simulation.initial_pose: reference needs controller.type: trajectory", cli.config);
            sc_cli_die(&cli, &err);
        }
        double root[3], root_vel[3], *wl = malloc((size_t)m.nbones * 3 * sizeof *wl);
        sc_quat *lq = malloc((size_t)m.nbones * sizeof *lq);
        if (!wl || !lq || sc_reference_state(ctrl.source, &m, ctrl.offset, root, lq, root_vel, wl, &err)) sc_cli_die(&cli, &err);
        root[1] += ro.drop_height;
        sc_sim_set_pose(sim, root, lq, root_vel, wl);
        free(wl);
        free(lq);
    } else {
        double off[3] = {0, ro.drop_height, 0};
        sc_sim_translate(sim, off, ro.init_vel);
    }

    char *resolved = sc_cfg_resolved_text(cfg);
    sc_h5 *f;
    series s;
    memset(&s, 0, sizeof s);
    if (sc_h5_create(cli.output, &f, &err)) sc_cli_die(&cli, &err);
    if (sc_h5_provenance(f, "softcon.sim/1", argc, argv, resolved, &err) || sc_h5_attr_str(f, "/", "character", cli.inputs[0], &err) ||
        sc_h5_attr_f64(f, "/", "dt", so.dt, &err) || create_series(f, &m, ro.store_nodes, &s, &err) || write_mesh(f, &m, &err)) {
        sc_h5_abort(f);
        sc_cli_die(&cli, &err);
    }
    if (ro.duration <= 0) ro.duration = ctrl.kind == SC_CTRL_TRAJECTORY ? sc_controller_duration(&ctrl) - ctrl.offset : 5.0;
    long nsteps = (long)llround(ro.duration / so.dt), nframes = 0;
    double *frame_times = malloc((size_t)(nsteps / ro.every + 2) * sizeof *frame_times);
    sc_quat *targets = malloc((size_t)m.nbones * sizeof *targets), *local = malloc((size_t)m.nbones * sizeof *local);
    double *push_total = calloc(3, sizeof(double));
    int *applied = calloc(MAX_PERT, sizeof(int));
    if (!frame_times || !targets || !local || !push_total || !applied) {
        sc_fail(&err, SC_EIO, "out of memory for %ld output frames (simulation.duration %g s / output.every %d steps)",
                nsteps / ro.every + 2, ro.duration, ro.every);
        sc_h5_abort(f);
        sc_cli_die(&cli, &err);
    }
    sc_progress prog;
    sc_progress_begin(&prog, "simulate", nsteps);
    int failed = 0;
    double max_depth = 0, last_wall = sc_wall_time();
    long last_step = 0;
    sc_err step_err = {0};
    for (long k = 0; k <= nsteps; k++) {
        double t = sim->t;
        sc_controller_targets(&ctrl, t, targets);
        sc_sim_set_targets(sim, targets);
        memset(sim->push, 0, (size_t)m.nbones * 3 * sizeof(double));
        push_total[0] = push_total[1] = push_total[2] = 0;
        for (int p = 0; p < ro.npert; p++) {
            perturbation *q = &ro.pert[p];
            if (q->kind == 0 && t >= q->time && t < q->time + q->duration) {
                for (int d = 0; d < 3; d++) { sim->push[3 * q->bone + d] += q->v[d]; push_total[d] += q->v[d]; }
            } else if (q->kind == 1 && !applied[p] && t >= q->time) {
                sc_sim_add_velocity(sim, q->v, NULL);
                applied[p] = 1;
            }
        }
        if (k % ro.every == 0) { /* an output frame: the state at time t, before stepping */
            sc_sim_diag d;
            sc_sim_diagnostics(sim, &d);
            sc_skeleton_local_rotations(sim->skel, local);
            double se = 0;
            int nj = 0;
            for (int b = 1; b < m.nbones; b++, nj++) { double a = sc_q_angle_between(local[b], targets[b]); se += a * a; }
            double track = nj ? sqrt(se / nj) : 0, total = d.kinetic + d.elastic + d.potential;
            double now = sc_wall_time(), per = k > last_step ? (now - last_wall) / (double)(k - last_step) : 0;
            last_wall = now;
            last_step = k;
            double *bp = malloc((size_t)m.nbones * 14 * sizeof(double));
            if (!bp) { sc_fail(&err, SC_EIO, "out of memory"); failed = 1; break; }
            for (int b = 0; b < m.nbones; b++) {
                sc_v3_store(bp + 3 * b, sim->pose[b].p);
                double *q = bp + 3 * m.nbones + 4 * b;
                q[0] = sim->pose[b].q.w; q[1] = sim->pose[b].q.x; q[2] = sim->pose[b].q.y; q[3] = sim->pose[b].q.z;
            }
            int inv = d.inverted, cnt = d.contacts;
            double depth = sim->contact.max_depth;
            max_depth = fmax(max_depth, depth);
            int rc = sc_h5_series_append(s.time, &t, &err) || sc_h5_series_append(s.bpos, bp, &err) ||
                     sc_h5_series_append(s.bquat, bp + 3 * m.nbones, &err) || sc_h5_series_append(s.blin, sim->lin_vel, &err) ||
                     sc_h5_series_append(s.bang, sim->ang_vel, &err) || (s.nodes && sc_h5_series_append(s.nodes, sim->x, &err)) ||
                     sc_h5_series_append(s.ke, &d.kinetic, &err) || sc_h5_series_append(s.ee, &d.elastic, &err) ||
                     sc_h5_series_append(s.pe, &d.potential, &err) || sc_h5_series_append(s.te, &total, &err) ||
                     sc_h5_series_append(s.lin, d.linear, &err) || sc_h5_series_append(s.ang, d.angular, &err) ||
                     sc_h5_series_append(s.com, d.com, &err) || sc_h5_series_append(s.cf, d.contact_force, &err) ||
                     sc_h5_series_append(s.depth, &depth, &err) || sc_h5_series_append_i32(s.cn, &cnt, &err) ||
                     sc_h5_series_append_i32(s.inv, &inv, &err) || sc_h5_series_append(s.track, &track, &err) ||
                     sc_h5_series_append(s.push, push_total, &err) || sc_h5_series_append(s.steptime, &per, &err);
            free(bp);
            if (rc) { failed = 1; break; }
            frame_times[nframes++] = t;
        }
        if (k == nsteps) break;
        if (sc_sim_step(sim, &step_err)) { failed = 2; break; }
        sc_progress_update(&prog, k + 1);
    }
    sc_progress_end(&prog);
    if (failed == 1) { sc_h5_abort(f); sc_cli_die(&cli, &err); }
    /* timing and status; a numerical failure keeps what was written and says so */
    const sc_sim_timing *tm = &sim->timing;
    double n = tm->steps ? (double)tm->steps : 1;
    char status[SC_ERR_MSG + 16];
    snprintf(status, sizeof status, failed ? "failed: %s" : "completed", step_err.msg);
    int rc = sc_h5_attr_str(f, "/", "status", status, &err) || sc_h5_attr_i64(f, "/", "steps", tm->steps, &err) ||
             sc_h5_attr_f64(f, "/timing", "mean_step_s", tm->total / n, &err) || sc_h5_attr_f64(f, "/timing", "mean_fem_s", tm->fem / n, &err) ||
             sc_h5_attr_f64(f, "/timing", "mean_skinning_s", tm->skin / n, &err) ||
             sc_h5_attr_f64(f, "/timing", "mean_damping_s", tm->damping / n, &err) ||
             sc_h5_attr_f64(f, "/timing", "mean_contact_s", tm->contact / n, &err) ||
             sc_h5_attr_f64(f, "/timing", "mean_coupling_s", tm->coupling / n, &err) || sc_h5_attr_f64(f, "/timing", "mean_ode_s", tm->ode / n, &err) ||
             sc_h5_attr_f64(f, "/contact", "max_depth_m", max_depth, &err);
    if (rc) { sc_h5_abort(f); sc_cli_die(&cli, &err); }
    if (sc_h5_commit(f, &err)) sc_cli_die(&cli, &err);
    sc_cleanup_add(cli.output, SC_CLEANUP_OUTPUT); /* removed again if the .xdmf cannot be written */
    if (ro.store_nodes && write_xdmf(xdmf, h5rel, &m, nframes, frame_times, &err)) sc_cli_die(&cli, &err);
    sc_cleanup_keep_outputs();
    if (!failed)
        sc_log_info("simulate: %s: %ld steps (%.3f s simulated) in %.2f s wall, %.1f us/step (fem %.1f, skinning %.1f, damping %.1f, contact %.1f, "
                "coupling %.1f, ODE %.1f); max ground penetration %.4f m",
                cli.output, tm->steps, sim->t, tm->total, 1e6 * tm->total / n, 1e6 * tm->fem / n, 1e6 * tm->skin / n,
                1e6 * tm->damping / n, 1e6 * tm->contact / n, 1e6 * tm->coupling / n, 1e6 * tm->ode / n, max_depth);
    free(frame_times); free(targets); free(local); free(push_total); free(applied); free(resolved);
    sc_controller_free(&ctrl);
    sc_sim_free(sim);
    sc_model_free(&m);
    sc_cfg_free(cfg);
    if (failed) {
        fprintf(stderr, "simulate: error: %s (the output written so far is in %s, marked failed)\n", step_err.msg, cli.output);
        return SC_ENUMERIC;
    }
    return 0;
}

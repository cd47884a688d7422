/* The boneless soft body (softbody.h). */
#include "muscle/softbody.h"
#include "core/blob.h"
#include "core/hash.h"
#include "mesh/tetmesh.h"
#include "sim/sim.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void sc_softbody_default_opts(sc_softbody_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dt = 5e-4;
    o->gravity[1] = -9.81;
    o->rayleigh_alpha = 0; /* mass damping would drag the whole body (a fall, a slide) */
    o->rayleigh_beta = 2e-4;
    sc_contact_default_opts(&o->contact);
    o->forward[0] = 1;
    o->backward_friction = 1;
    o->max_speed = 50;
}

double sc_softbody_friction_scale(const sc_softbody_opts *o, const double dir[3])
{
    const double along = dir[0] * o->forward[0] + dir[1] * o->forward[1] + dir[2] * o->forward[2];
    return 1 + (o->backward_friction - 1) * fmax(0, along);
}

int sc_tet_boundary_nodes(const sc_model *m, int **out, int *count, sc_err *err)
{
    sc_tetmesh tm = {m->nnodes, m->ntets, m->rest_pos, m->tets};
    int *faces = NULL;
    const int nf = sc_tetmesh_boundary(&tm, &faces, err);
    char *on = calloc((size_t)m->nnodes, 1);
    if (nf < 0 || !on) {
        free(faces);
        free(on);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (int k = 0; k < 3 * nf; k++) on[faces[k]] = 1;
    free(faces);
    int n = 0;
    for (int i = 0; i < m->nnodes; i++) n += on[i];
    *out = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (*out) {
        n = 0;
        for (int i = 0; i < m->nnodes; i++)
            if (on[i]) (*out)[n++] = i;
    }
    free(on);
    *count = n;
    return *out ? SC_OK : sc_fail(err, SC_EIO, "out of memory");
}

static uint64_t setup_hash(const sc_softbody *s);

void sc_softbody_free(sc_softbody *s)
{
    if (!s) return;
    sc_fem_free(&s->fem);
    free(s->x);
    free(s->v);
    free(s->warm);
    free(s->ld);
    free(s->ext);
    free(s->f);
    free(s->f_elastic);
    free(s->bound);
    free(s->faces);
    free(s->rot);
    free(s->len);
    free(s);
}

int sc_softbody_create(const sc_model *m, const sc_muscles *mu, const sc_softbody_opts *o, sc_softbody **out, sc_err *err)
{
    *out = NULL;
    if (m->nbones != 0 || m->nfixed != 0)
        return sc_fail(err, SC_EINPUT, "soft body: the character has %d bones and %d fixed nodes: a boneless one is needed", m->nbones, m->nfixed);
    if (!(o->dt > 0)) return sc_fail(err, SC_EINPUT, "soft body: dt %g s must be > 0", o->dt);
    sc_softbody *s = sc_alloc(err, 1, sizeof *s);
    if (!s) return SC_EIO;
    s->m = m;
    s->mu = mu;
    s->o = *o;
    int rc = sc_fem_init(&s->fem, m, err);
    if (rc) {
        free(s);
        return rc;
    }
    const size_t n3 = 3 * (size_t)m->nnodes, nseg = mu ? (size_t)mu->nsegs : 0;
    s->x = malloc(n3 * sizeof(double));
    s->v = calloc(n3, sizeof(double));
    s->warm = malloc(sc_fem_warm_size(&s->fem) * sizeof(double));
    s->ld = malloc((nseg + 1) * sizeof(double));
    s->ext = calloc(n3, sizeof(double));
    s->f = malloc(n3 * sizeof(double));
    s->f_elastic = calloc(n3, sizeof(double));
    s->rot = malloc(9 * (size_t)m->ntets * sizeof(double));
    s->len = malloc((nseg + 1) * sizeof(double));
    if (!s->x || !s->v || !s->warm || !s->ld || !s->ext || !s->f || !s->f_elastic || !s->rot || !s->len) {
        sc_softbody_free(s);
        return sc_fail(err, SC_EIO, "out of memory creating the soft body");
    }
    if ((rc = sc_tet_boundary_nodes(m, &s->bound, &s->nbound, err))) {
        sc_softbody_free(s);
        return rc;
    }
    const sc_fluid_opts *fl = &o->fluid;
    if ((rc = sc_fluid_check(fl, err))) {
        sc_softbody_free(s);
        return rc;
    }
    if (sc_fluid_enabled(fl)) {
        sc_tetmesh tm = {m->nnodes, m->ntets, m->rest_pos, m->tets};
        if ((s->nfaces = sc_tetmesh_boundary(&tm, &s->faces, err)) < 0) {
            sc_softbody_free(s);
            return SC_EIO;
        }
    }
    memcpy(s->x, m->rest_pos, n3 * sizeof(double));
    sc_fem_warm_reset(&s->fem, s->warm);
    if (mu) memcpy(s->ld, mu->rest_len, nseg * sizeof(double));
    s->model_hash = sc_model_hash(m);
    s->setup_hash = setup_hash(s);
    *out = s;
    return SC_OK;
}

void sc_softbody_rotations(const sc_softbody *s, double *rot)
{
    for (int t = 0; t < s->m->ntets; t++) {
        sc_mat3 R = sc_q_to_m3(sc_fem_warm_get(&s->fem, s->warm, t, 0));
        memcpy(rot + 9 * t, R.m, 9 * sizeof(double));
    }
}

/* [T12]'s contact, per boundary node (see softbody.h): v is the velocity after the forces. */
static void rigid_contact(sc_softbody *s)
{
    const sc_model *m = s->m;
    const double dt = s->o.dt, mu = s->o.contact.mu;
    sc_contact_result *r = &s->contact;
    for (int k = 0; k < s->nbound; k++) {
        const int i = s->bound[k];
        double *x = s->x + 3 * i, *v = s->v + 3 * i;
        sc_vec3 n;
        const double gap = sc_ground_height(&s->o.contact.ground, sc_v3_load(x), &n);
        double vn = v[0] * n.x + v[1] * n.y + v[2] * n.z;
        /* reach the ground at the end of the step, never pull: a node already below is not pushed out faster than it sank */
        const double want = -fmax(gap, 0) / dt;
        if (vn >= want) continue;
        const double mi = m->node_mass[i], pn = mi * (want - vn); /* normal impulse */
        double vt[3] = {v[0] - vn * n.x, v[1] - vn * n.y, v[2] - vn * n.z};
        const double st = sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]);
        double mu_i = mu; /* the friction impulse points along -vt */
        if (st > 0 && s->o.backward_friction != 1) {
            const double dir[3] = {-vt[0] / st, -vt[1] / st, -vt[2] / st};
            mu_i *= sc_softbody_friction_scale(&s->o, dir);
        }
        const double slow = st > 0 ? fmin(1, mu_i * pn / (mi * st)) : 0; /* stick when the cone allows it */
        double p[3];
        for (int c = 0; c < 3; c++) {
            const double nc = c == 0 ? n.x : c == 1 ? n.y : n.z;
            p[c] = pn * nc - mi * slow * vt[c];
            v[c] += p[c] / mi;
        }
        r->count++;
        r->sliding += slow < 1;
        r->max_depth = fmax(r->max_depth, -gap);
        r->total_force = sc_v3_add(r->total_force, sc_v3(p[0] / dt, p[1] / dt, p[2] / dt));
        r->normal_force += pn / dt;
        r->load_moment = sc_v3_add(r->load_moment, sc_v3_scale(sc_v3_load(x), pn / dt));
    }
}

int sc_softbody_step(sc_softbody *s, sc_err *err)
{
    const sc_model *m = s->m;
    const sc_softbody_opts *o = &s->o;
    const int nn = m->nnodes;
    memset(s->f_elastic, 0, 3 * (size_t)nn * sizeof(double));
    sc_fem_elastic_forces(&s->fem, s->x, NULL, s->warm, s->f_elastic, &s->fem_stats);
    for (int i = 0; i < 3 * nn; i++) s->f[i] = s->ext[i] + s->f_elastic[i];
    if (o->rayleigh_alpha > 0 || o->rayleigh_beta > 0)
        sc_fem_rayleigh_damping(&s->fem, m->node_mass, s->v, s->warm, o->rayleigh_alpha, o->rayleigh_beta, s->f);
    if (s->mu) {
        sc_softbody_rotations(s, s->rot);
        sc_muscle_forces(s->mu, m, s->x, s->rot, s->ld, s->len, s->f);
    }
    if (s->faces) sc_fluid_forces(&o->fluid, s->nfaces, s->faces, s->x, s->v, s->f, NULL); /* the faces' corners are nodes */
    const double dt = o->dt, vmax2 = o->max_speed * o->max_speed;
    memset(&s->contact, 0, sizeof s->contact);
    for (int i = 0; i < nn; i++) {
        const double k = dt / m->node_mass[i];
        for (int c = 0; c < 3; c++) s->v[3 * i + c] += k * s->f[3 * i + c] + dt * o->gravity[c];
    }
    if (o->contact.enabled) rigid_contact(s);
    for (int i = 0; i < nn; i++) {
        double sp2 = 0;
        for (int c = 0; c < 3; c++) {
            s->x[3 * i + c] += dt * s->v[3 * i + c];
            sp2 += s->v[3 * i + c] * s->v[3 * i + c];
        }
        if (!(sp2 <= vmax2))
            return sc_fail(err, SC_ENUMERIC, "soft body: step %ld (t = %.4f s): node %d moves at %.3g m/s (max_speed %g)", s->step, s->t, i,
                           sqrt(sp2), o->max_speed);
    }
    s->t += dt;
    s->step++;
    return SC_OK;
}

static double det3(const double *a, const double *b, const double *c, const double *d)
{
    double e1[3], e2[3], e3[3];
    for (int k = 0; k < 3; k++) {
        e1[k] = b[k] - a[k];
        e2[k] = c[k] - a[k];
        e3[k] = d[k] - a[k];
    }
    return e1[0] * (e2[1] * e3[2] - e2[2] * e3[1]) - e1[1] * (e2[0] * e3[2] - e2[2] * e3[0]) + e1[2] * (e2[0] * e3[1] - e2[1] * e3[0]);
}

void sc_softbody_diagnostics(const sc_softbody *s, sc_softbody_diag *d)
{
    const sc_model *m = s->m;
    memset(d, 0, sizeof *d);
    for (int i = 0; i < m->nnodes; i++) {
        const double mi = m->node_mass[i], *x = s->x + 3 * i, *v = s->v + 3 * i;
        d->mass += mi;
        for (int c = 0; c < 3; c++) {
            d->com[c] += mi * x[c];
            d->linear[c] += mi * v[c];
            d->kinetic += 0.5 * mi * v[c] * v[c];
            d->potential -= mi * s->o.gravity[c] * x[c];
        }
    }
    for (int c = 0; c < 3; c++) d->com[c] /= d->mass;
    for (int i = 0; i < m->nnodes; i++) {
        const double mi = m->node_mass[i], *x = s->x + 3 * i, *v = s->v + 3 * i;
        const double r[3] = {x[0] - d->com[0], x[1] - d->com[1], x[2] - d->com[2]};
        d->angular[0] += mi * (r[1] * v[2] - r[2] * v[1]);
        d->angular[1] += mi * (r[2] * v[0] - r[0] * v[2]);
        d->angular[2] += mi * (r[0] * v[1] - r[1] * v[0]);
    }
    double vol = 0, vol0 = 0;
    d->min_det = INFINITY;
    d->max_det = -INFINITY;
    for (int t = 0; t < m->ntets; t++) {
        const int *n = m->tets + 4 * t;
        const double v6 = det3(s->x + 3 * n[0], s->x + 3 * n[1], s->x + 3 * n[2], s->x + 3 * n[3]);
        const double r = v6 / 6 / m->tet_volume[t];
        vol += v6 / 6;
        vol0 += m->tet_volume[t];
        d->min_det = fmin(d->min_det, r);
        d->max_det = fmax(d->max_det, r);
    }
    d->volume_ratio = vol / vol0;
    d->elastic = s->fem_stats.elastic_energy;
}

sc_mat3 sc_softbody_orientation(const sc_softbody *s)
{
    const sc_model *m = s->m;
    double c[3] = {0, 0, 0}, c0[3] = {0, 0, 0}, mass = 0;
    for (int i = 0; i < m->nnodes; i++) mass += m->node_mass[i];
    for (int i = 0; i < m->nnodes; i++)
        for (int k = 0; k < 3; k++) {
            c[k] += m->node_mass[i] * s->x[3 * i + k] / mass;
            c0[k] += m->node_mass[i] * m->rest_pos[3 * i + k] / mass;
        }
    sc_mat3 F = sc_m3_zero(), R, Sm;
    for (int i = 0; i < m->nnodes; i++)
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++) F.m[r][k] += m->node_mass[i] * (s->x[3 * i + r] - c[r]) * (m->rest_pos[3 * i + k] - c0[k]);
    sc_polar(F, &R, &Sm); /* a rotation even for a degenerate body (sc_polar completes the frame) */
    return R;
}

/* ---- snapshots ---- */

typedef struct snapshot_header {
    char magic[8];
    uint32_t layout, kernel;
    uint64_t model_hash, setup_hash, build_hash;
    uint64_t payload_bytes, checksum;
} snapshot_header;
static const char snapshot_magic[8] = {'S', 'C', 'S', 'O', 'F', 'T', 0, 1};
#define SOFT_SNAPSHOT_LAYOUT 1
#define DIAG_F64             10
#define DIAG_I64             6

/* The muscles and every option that changes a step, field by field (padding is not hashed). */
static uint64_t setup_hash(const sc_softbody *s)
{
    const sc_softbody_opts *o = &s->o;
    uint64_t h = sc_hash_i64(SC_HASH_INIT, s->mu ? s->mu->nsegs : -1);
    if (s->mu) h = sc_hash_bytes(h, s->mu->rest_len, (size_t)s->mu->nsegs * sizeof(double));
    const double f[] = {o->dt,         o->gravity[0], o->gravity[1], o->gravity[2], o->rayleigh_alpha,    o->rayleigh_beta,
                        o->contact.mu, o->forward[0], o->forward[1], o->forward[2], o->backward_friction, o->max_speed};
    h = sc_hash_bytes(h, f, sizeof f);
    h = sc_hash_i64(h, o->contact.enabled);
    h = sc_fluid_hash(h, &o->fluid);
    return sc_hash_bytes(h, &o->contact.ground, sizeof o->contact.ground);
}

static size_t payload_size(const sc_softbody *s)
{
    const size_t n3 = 3 * (size_t)s->m->nnodes, nseg = s->mu ? (size_t)s->mu->nsegs : 0;
    return 8 * (2 + 3 * n3 + sc_fem_warm_size(&s->fem) + nseg + DIAG_F64 + DIAG_I64);
}

size_t sc_softbody_snapshot_size(const sc_softbody *s) { return sizeof(snapshot_header) + payload_size(s); }

void sc_softbody_snapshot_save(const sc_softbody *s, void *buf)
{
    const size_t n3 = 3 * (size_t)s->m->nnodes, nseg = s->mu ? (size_t)s->mu->nsegs : 0, payload = payload_size(s);
    unsigned char *base = buf;
    sc_blob_writer w;
    sc_blob_writer_fixed(&w, base + sizeof(snapshot_header), payload);
    sc_blob_put_f64(&w, s->t);
    sc_blob_put_i64(&w, s->step);
    sc_blob_put(&w, s->x, 8 * n3);
    sc_blob_put(&w, s->v, 8 * n3);
    sc_blob_put(&w, s->f_elastic, 8 * n3);
    sc_blob_put(&w, s->warm, 8 * sc_fem_warm_size(&s->fem));
    sc_blob_put(&w, s->ld, 8 * nseg);
    const sc_fem_stats *fs = &s->fem_stats;
    const sc_contact_result *cr = &s->contact;
    const double df[DIAG_F64] = {fs->elastic_energy, fs->worst_det,    cr->total_force.x, cr->total_force.y, cr->total_force.z,
                                 cr->max_depth,      cr->normal_force, cr->load_moment.x, cr->load_moment.y, cr->load_moment.z};
    sc_blob_put(&w, df, sizeof df);
    const int64_t di[DIAG_I64] = {fs->inverted, fs->worst_tet, fs->fallbacks, fs->newton_steps, cr->count, cr->sliding};
    sc_blob_put(&w, di, sizeof di);
    snapshot_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, snapshot_magic, sizeof h.magic);
    h.layout = SOFT_SNAPSHOT_LAYOUT;
    h.kernel = (uint32_t)s->fem.kernel;
    h.model_hash = s->model_hash;
    h.setup_hash = s->setup_hash;
    h.build_hash = sc_sim_build_hash();
    h.payload_bytes = payload;
    h.checksum = sc_hash_words(base + sizeof h, payload);
    memcpy(base, &h, sizeof h);
}

int sc_softbody_snapshot_restore(sc_softbody *s, const void *buf, size_t size, sc_err *err)
{
    snapshot_header h;
    if (size < sizeof h) return sc_fail(err, SC_EINPUT, "soft body snapshot: %zu bytes, shorter than its header", size);
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, snapshot_magic, sizeof h.magic)) return sc_fail(err, SC_EINPUT, "soft body snapshot: not a softcon soft body snapshot");
    if (h.layout != SOFT_SNAPSHOT_LAYOUT)
        return sc_fail(err, SC_EINPUT, "soft body snapshot: layout version %u, this build reads %d", h.layout, SOFT_SNAPSHOT_LAYOUT);
    if (h.kernel != (uint32_t)s->fem.kernel)
        return sc_fail(err, SC_EINPUT, "soft body snapshot: made with the %s FEM kernel, this body runs %s", sc_fem_kernel_name((int)h.kernel),
                       sc_fem_kernel_name(s->fem.kernel));
    if (h.build_hash != sc_sim_build_hash()) return sc_fail(err, SC_EINPUT, "soft body snapshot: made by another build of softcon");
    if (h.model_hash != s->model_hash) return sc_fail(err, SC_EINPUT, "soft body snapshot: made for another character model");
    if (h.setup_hash != s->setup_hash) return sc_fail(err, SC_EINPUT, "soft body snapshot: made with other muscles or options");
    const size_t payload = payload_size(s);
    if (h.payload_bytes != size - sizeof h || payload != size - sizeof h)
        return sc_fail(err, SC_EINPUT, "soft body snapshot: %zu payload bytes, the header says %llu and this body needs %zu", size - sizeof h,
                       (unsigned long long)h.payload_bytes, payload);
    const unsigned char *base = buf;
    if (sc_hash_words(base + sizeof h, payload) != h.checksum) return sc_fail(err, SC_EINPUT, "soft body snapshot: checksum mismatch (damaged)");
    const size_t n3 = 3 * (size_t)s->m->nnodes, nseg = s->mu ? (size_t)s->mu->nsegs : 0;
    sc_blob_reader r;
    sc_blob_reader_init(&r, base + sizeof h, payload);
    s->t = sc_blob_get_f64(&r);
    s->step = (long)sc_blob_get_i64(&r);
    sc_blob_get(&r, s->x, 8 * n3);
    sc_blob_get(&r, s->v, 8 * n3);
    sc_blob_get(&r, s->f_elastic, 8 * n3);
    sc_blob_get(&r, s->warm, 8 * sc_fem_warm_size(&s->fem));
    sc_blob_get(&r, s->ld, 8 * nseg);
    double df[DIAG_F64];
    int64_t di[DIAG_I64];
    sc_blob_get(&r, df, sizeof df);
    sc_blob_get(&r, di, sizeof di);
    sc_fem_stats *fs = &s->fem_stats;
    sc_contact_result *cr = &s->contact;
    memset(cr, 0, sizeof *cr);
    fs->elastic_energy = df[0];
    fs->worst_det = df[1];
    cr->total_force = sc_v3(df[2], df[3], df[4]);
    cr->max_depth = df[5];
    cr->normal_force = df[6];
    cr->load_moment = sc_v3(df[7], df[8], df[9]);
    fs->inverted = (int)di[0];
    fs->worst_tet = (int)di[1];
    fs->fallbacks = (int)di[2];
    fs->newton_steps = di[3];
    cr->count = (int)di[4];
    cr->sliding = (int)di[5];
    return SC_OK;
}

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mesh/tetmesh.h"
#include "fixtures.h"
#include "test.h"

static char log_text[8192];

const char *sc_fixture_log(void) { return log_text; }

const char *sc_fixture_keep(const char *path)
{
    static char slots[64][1024];
    static int next;
    char *p = slots[next++ % 64];
    snprintf(p, 1024, "%s", path);
    return p;
}

/* sc_test_tmp's buffers are a ring reused by later calls: fixtures keep their own copies */
static const char *keep(char *buf, size_t n, const char *path)
{
    snprintf(buf, n, "%s", path);
    return buf;
}

static const char *skinned(const char *name, const char *config, int *state, char *buf, size_t n)
{
    const char *h5 = keep(buf, n, sc_test_tmp(name));
    if (*state == 0) {
        const char *cfg = sc_test_repo(config);
        *state = sc_test_sh(log_text, sizeof log_text, "%s -q -c %s -o %s && %s -q -c %s -o %s %s", sc_test_tool("mesh-prep"), cfg, h5,
                            sc_test_tool("skin-weights"), cfg, h5, h5)
            ? -1
            : 1;
    }
    return *state > 0 ? h5 : NULL;
}

const char *sc_fixture_michelin(void)
{
    static int state;
    static char path[1024];
    return skinned("fixture_michelin.h5", "configs/michelin.yaml", &state, path, sizeof path);
}

const char *sc_fixture_michelin_cmu(void)
{
    static int state;
    static char path[1024];
    return skinned("fixture_michelin_cmu.h5", "configs/michelin_cmu.yaml", &state, path, sizeof path);
}

const char *sc_fixture_biped(void)
{
    static int state;
    static char path[1024];
    return skinned("fixture_biped.h5", "configs/biped.yaml", &state, path, sizeof path);
}

const char *sc_fixture_march_reference(void)
{
    static int state;
    static char path[1024];
    const char *ref = keep(path, sizeof path, sc_test_tmp("fixture_march_ref.h5")), *ch = sc_fixture_michelin();
    if (state == 0)
        state = ch &&
                !sc_test_sh(log_text, sizeof log_text, "%s -q -c %s -o %s %s", sc_test_tool("inverse-dynamics"), sc_test_repo("configs/march.yaml"),
                            ref, ch)
            ? 1
            : -1;
    return state > 0 ? ref : NULL;
}

int sc_fixture_block(sc_model *m, int n, double h, double youngs)
{
    if (!sc_fixture_column(m, n, n, n, h, youngs, 0.3)) return 0;
#define ID(i, j, k) (((k)*n + (j)) * n + (i))
    /* one free-root bone holding the middle cell */
    int mid = (n - 1) / 2;
    m->nbones = 1;
    m->bone_name = calloc(1, sizeof *m->bone_name);
    strcpy(m->bone_name[0], "block");
    m->parent = calloc(1, sizeof(int));
    m->parent[0] = -1;
    m->joint_type = calloc(1, sizeof(int));
    m->joint_pos = calloc(3, sizeof(double));
    m->bone_end = calloc(3, sizeof(double));
    m->hinge_axis = calloc(3, sizeof(double));
    m->joint_lo = calloc(3, sizeof(double));
    m->joint_hi = calloc(3, sizeof(double));
    m->kp = calloc(1, sizeof(double));
    m->kd = calloc(1, sizeof(double));
    m->torque_limit = calloc(1, sizeof(double));
    m->kd[0] = 1;
    m->nfixed = 8;
    m->fixed_node = malloc(sizeof(int) * 8);
    m->fixed_bone = calloc(8, sizeof(int));
    m->fixed_local = malloc(sizeof(double) * 24);
    double mass = 0, com[3] = {0, 0, 0};
    for (int q = 0; q < 8; q++) {
        int node = ID(mid + (q & 1), mid + ((q >> 1) & 1), mid + ((q >> 2) & 1));
        m->fixed_node[q] = node;
        m->node_bone[node] = 0;
        mass += m->node_mass[node];
        for (int d = 0; d < 3; d++) com[d] += m->node_mass[node] * m->rest_pos[3 * node + d];
    }
    for (int d = 0; d < 3; d++) {
        com[d] /= mass;
        m->joint_pos[d] = com[d];
        m->bone_end[d] = com[d];
    }
    m->bone_end[1] += h;
    m->bone_mass = malloc(sizeof(double));
    m->bone_mass[0] = mass;
    m->bone_com = malloc(sizeof(double) * 3);
    memcpy(m->bone_com, com, sizeof com);
    m->bone_inertia = calloc(9, sizeof(double));
    for (int q = 0; q < 8; q++) {
        int node = m->fixed_node[q];
        double r[3];
        for (int d = 0; d < 3; d++) {
            r[d] = m->rest_pos[3 * node + d] - com[d];
            m->fixed_local[3 * q + d] = r[d];
        }
        double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) m->bone_inertia[3 * a + b] += m->node_mass[node] * ((a == b) * r2 - r[a] * r[b]);
    }
#undef ID
    return 1;
}

int sc_fixture_column(sc_model *m, int nx, int ny, int nz, double h, double youngs, double poisson)
{
    memset(m, 0, sizeof *m);
    const int nn = nx * ny * nz;
    m->nnodes = nn;
    m->ntets = 6 * (nx - 1) * (ny - 1) * (nz - 1);
    m->rest_pos = malloc(sizeof(double) * 3 * nn);
    m->tets = malloc(sizeof(int) * 4 * m->ntets);
    m->node_bone = malloc(sizeof(int) * nn);
#define ID(i, j, k) (((k)*ny + (j)) * nx + (i))
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                double *p = m->rest_pos + 3 * ID(i, j, k);
                p[0] = (i - 0.5 * (nx - 1)) * h;
                p[1] = j * h;
                p[2] = (k - 0.5 * (nz - 1)) * h;
                m->node_bone[ID(i, j, k)] = -1;
            }
    int t = 0;
    for (int k = 0; k + 1 < nz; k++)
        for (int j = 0; j + 1 < ny; j++)
            for (int i = 0; i + 1 < nx; i++) {
                int c[8];
                for (int q = 0; q < 8; q++) c[q] = ID(i + (q & 1), j + ((q >> 1) & 1), k + ((q >> 2) & 1));
                static const int split[6][4] = {{0, 1, 3, 7}, {0, 3, 2, 7}, {0, 2, 6, 7}, {0, 6, 4, 7}, {0, 4, 5, 7}, {0, 5, 1, 7}};
                for (int s = 0; s < 6; s++, t++)
                    for (int q = 0; q < 4; q++) m->tets[4 * t + q] = c[split[s][q]];
            }
    sc_tetmesh tm = {nn, m->ntets, m->rest_pos, m->tets};
    sc_tetmesh_orient(&tm);
    m->tet_volume = malloc(sizeof(double) * m->ntets);
    m->bm_inv = malloc(sizeof(double) * 9 * m->ntets);
    m->node_mass = malloc(sizeof(double) * nn);
    m->density = 1000;
    m->youngs = youngs;
    m->poisson = poisson;
    if (sc_tetmesh_geometry(&tm, m->density, m->tet_volume, m->bm_inv, m->node_mass, NULL)) return 0;
    m->surf_tet = malloc(sizeof(int) * nn);
    m->surf_bary = calloc((size_t)nn * 4, sizeof(double));
    m->surf_rest = malloc(sizeof(double) * 3 * nn);
    m->surf_tris = calloc(3, sizeof(int));
    int nv = 0;
    for (int v = 0; v < nn; v++) {
        int i = v % nx, j = (v / nx) % ny, k = v / (nx * ny);
        if (i && j && k && i < nx - 1 && j < ny - 1 && k < nz - 1) continue;
        for (int tt = 0; tt < m->ntets; tt++)
            for (int q = 0; q < 4; q++)
                if (m->tets[4 * tt + q] == v) {
                    m->surf_tet[nv] = tt;
                    m->surf_bary[4 * nv + q] = 1;
                    tt = m->ntets;
                    break;
                }
        memcpy(m->surf_rest + 3 * nv, m->rest_pos + 3 * v, 3 * sizeof(double));
        nv++;
    }
    m->nsurf_verts = nv;
#undef ID
    return 1;
}

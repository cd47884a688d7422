/* character.h5: the writer and the checked reader of the sc_model on disk, /skin included, and character.xdmf. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/character.h"
#include "io/paths.h"
#include "store/xdmf.h"
#include "store/muscles.h"
#include "store/reduced.h"

#define D1(n) \
    (size_t[]) { (size_t)(n) }
#define D2(n, k) \
    (size_t[]) { (size_t)(n), (size_t)(k) }
#define D3(n, k, l) \
    (size_t[]) { (size_t)(n), (size_t)(k), (size_t)(l) }

int sc_character_write(sc_h5 *f, const sc_model *m, sc_err *err)
{
    int nb = m->nbones, nn = m->nnodes, ne = m->ntets, nf = m->nfixed, nv = m->nsurf_verts;
    const char *names[SC_NAME_LEN * 4];
    if (nb > (int)(sizeof names / sizeof *names)) return sc_fail(err, SC_EINPUT, "too many bones (%d)", nb);
    for (int b = 0; b < nb; b++) names[b] = m->bone_name[b];
    int rc;
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)
    TRY(sc_h5_group(f, "/skeleton",
                    nb ? "rigid skeleton; bone frames are world-aligned at rest with origin at the joint"
                       : "no bones: a boneless character ([T12]); every dataset here has 0 rows, /fixed too",
                    err));
    TRY(sc_h5_write_strings(f, "/skeleton/names", (size_t)nb, names, "bone names; bone 0 is the root", err));
    TRY(sc_h5_write_i32(f, "/skeleton/parents", 1, D1(nb), m->parent, "parent bone index, -1 for the root", err));
    TRY(sc_h5_write_i32(f, "/skeleton/joint_types", 1, D1(nb), m->joint_type, "0 free (root), 1 ball, 2 hinge", err));
    TRY(sc_h5_write_f64(f, "/skeleton/joint_pos", 2, D2(nb, 3), m->joint_pos, "m", "rest world position of each bone's joint (bone origin)", err));
    TRY(sc_h5_write_f64(f, "/skeleton/bone_end", 2, D2(nb, 3), m->bone_end, "m", "rest world position of each bone's tip", err));
    TRY(sc_h5_write_f64(f, "/skeleton/hinge_axis", 2, D2(nb, 3), m->hinge_axis, "1", "hinge axis in the bone frame (hinges)", err));
    TRY(sc_h5_write_f64(f, "/skeleton/joint_lo", 2, D2(nb, 3), m->joint_lo, "rad", "lower joint limits; lo > hi means no limit", err));
    TRY(sc_h5_write_f64(f, "/skeleton/joint_hi", 2, D2(nb, 3), m->joint_hi, "rad", "upper joint limits", err));
    TRY(sc_h5_write_f64(f, "/skeleton/kp", 1, D1(nb), m->kp, "N m/rad", "PD proportional gain ([L13] eq. 1)", err));
    TRY(sc_h5_write_f64(f, "/skeleton/kd", 1, D1(nb), m->kd, "N m s/rad", "PD damping gain, applied implicitly ([L13] eq. 4-5)", err));
    TRY(sc_h5_write_f64(f, "/skeleton/torque_limit", 1, D1(nb), m->torque_limit, "N m", "servo torque limit", err));
    TRY(sc_h5_write_f64(f, "/skeleton/mass", 1, D1(nb), m->bone_mass, "kg", "bone mass from its fixed nodes ([L13] 4.3)", err));
    TRY(sc_h5_write_f64(f, "/skeleton/com", 2, D2(nb, 3), m->bone_com, "m", "rest world centre of mass of each bone", err));
    TRY(sc_h5_write_f64(f, "/skeleton/inertia", 3, D3(nb, 3, 3), m->bone_inertia, "kg m^2", "inertia about the centre of mass, world rest axes",
                        err));

    TRY(sc_h5_group(f, "/tetmesh", "coarse volumetric mesh (TetGen), positively oriented tets", err));
    TRY(sc_h5_write_f64(f, "/tetmesh/rest_pos", 2, D2(nn, 3), m->rest_pos, "m", "rest node positions X", err));
    TRY(sc_h5_write_i32(f, "/tetmesh/tets", 2, D2(ne, 4), m->tets, "node indices of each tet, positive volume", err));
    TRY(sc_h5_write_f64(f, "/tetmesh/volume", 1, D1(ne), m->tet_volume, "m^3", "rest volume of each tet", err));
    TRY(sc_h5_write_f64(f, "/tetmesh/node_mass", 1, D1(nn), m->node_mass, "kg", "lumped node masses", err));
    TRY(sc_h5_write_f64(f, "/tetmesh/bm_inv", 3, D3(ne, 3, 3), m->bm_inv, "1/m", "Bm^-1 of each tet, row-major ([L13] eq. 11)", err));
    TRY(sc_h5_write_i32(f, "/tetmesh/node_bone", 1, D1(nn), m->node_bone, "bone a node is fixed to, -1 for free nodes", err));

    TRY(sc_h5_group(f, "/fixed", "tet nodes rigidly attached to bones ([L13] 4.3, Figure 4)", err));
    TRY(sc_h5_write_i32(f, "/fixed/node", 1, D1(nf), m->fixed_node, "tet node index", err));
    TRY(sc_h5_write_i32(f, "/fixed/bone", 1, D1(nf), m->fixed_bone, "bone index", err));
    TRY(sc_h5_write_f64(f, "/fixed/local_pos", 2, D2(nf, 3), m->fixed_local, "m", "position in the bone frame", err));

    TRY(sc_h5_group(f, "/surface", "fine surface mesh embedded in the tet mesh ([L13] 4.2)", err));
    TRY(sc_h5_write_f64(f, "/surface/vertices", 2, D2(nv, 3), m->surf_rest, "m", "rest vertex positions", err));
    TRY(sc_h5_write_i32(f, "/surface/faces", 2, D2(m->nsurf_tris, 3), m->surf_tris, "triangles, counter-clockwise seen from outside", err));
    TRY(sc_h5_write_i32(f, "/surface/tet", 1, D1(nv), m->surf_tet, "enclosing (or nearest) tet of each vertex", err));
    TRY(sc_h5_write_f64(f, "/surface/bary", 2, D2(nv, 4), m->surf_bary, "1", "barycentric weights in that tet (sum 1)", err));

    TRY(sc_h5_group(f, "/material", "soft-body material", err));
    TRY(sc_h5_attr_f64(f, "/material", "density", m->density, err));
    TRY(sc_h5_attr_str(f, "/material", "density_units", "kg/m^3", err));
    TRY(sc_h5_attr_f64(f, "/material", "youngs_modulus", m->youngs, err));
    TRY(sc_h5_attr_str(f, "/material", "youngs_modulus_units", "Pa", err));
    TRY(sc_h5_attr_f64(f, "/material", "poisson_ratio", m->poisson, err));
    if (m->skin_k > 0) {
        TRY(sc_h5_group(f, "/skin", "skinning weights ([L13] eq. 13)", err));
        TRY(sc_h5_write_i32(f, "/skin/topk_bone", 2, D2(nn, m->skin_k), m->skin_bone, "k most influential bones per node, -1 unused", err));
        TRY(sc_h5_write_f64(f, "/skin/topk_weight", 2, D2(nn, m->skin_k), m->skin_w, "1", "their weights, renormalized to sum 1", err));
    }
#undef TRY
    return SC_OK;
}

/* The layer reads a 0 in dims as "any": a count of 0 (a boneless character's bones, no fixed
   nodes) must find 0 rows too. */
static int rows_are(sc_h5 *f, const char *path, size_t want, size_t got, sc_err *err)
{
    if (got == want) return SC_OK;
    return sc_fail(err, SC_EINPUT, "%s:%s: %zu rows, expected %zu", sc_h5_filename(f), path, got, want);
}

static int read_f(sc_h5 *f, const char *path, int rank, size_t d0, size_t d1, size_t d2, double **out, sc_err *err)
{
    size_t dims[3] = {d0, d1, d2};
    int rc = sc_h5_read_f64(f, path, rank, dims, out, err);
    return rc ? rc : rows_are(f, path, d0, dims[0], err);
}

static int read_i(sc_h5 *f, const char *path, int rank, size_t d0, size_t d1, int **out, sc_err *err)
{
    size_t dims[2] = {d0, d1};
    int rc = sc_h5_read_i32(f, path, rank, dims, out, err);
    return rc ? rc : rows_are(f, path, d0, dims[0], err);
}

/* Plausibility bounds of what a character file may hold (SI units). */
#define MAX_COORD 1e3       /* m: positions and offsets */
#define MAX_NODES (1 << 26) /* nodes, tets, fixed nodes, surface vertices and faces */

/* The root `schema` attribute, when present, names a character. */
static int check_schema(sc_h5 *f, sc_err *err)
{
    char *schema = NULL;
    int rc = SC_OK;
    if (sc_h5_read_attr_str(f, "/", "schema", &schema, NULL) == SC_OK && strncmp(schema, "softcon.character/", 18))
        rc = sc_fail(err, SC_EINPUT, "%s: schema is '%.200s', expected %s", sc_h5_filename(f), schema, SC_CHARACTER_SCHEMA);
    free(schema);
    return rc;
}

#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) goto done; \
    } while (0)

/* /skeleton: the bones' names and every per-bone dataset (0 rows each: a boneless character). */
static int read_skeleton(sc_h5 *f, sc_model *m, sc_err *err)
{
    int rc = SC_OK;
    size_t nb = 0;
    char **names = NULL;
    TRY(sc_h5_read_strings(f, "/skeleton/names", &nb, &names, err));
    TRY(sc_h5_check_count(f, "/skeleton/names", nb, 0, 256, err));
    TRY(sc_h5_check_names(f, "/skeleton/names", names, nb, SC_NAME_LEN, err));
    m->nbones = (int)nb;
    m->bone_name = calloc(nb ? nb : 1, sizeof *m->bone_name);
    if (!m->bone_name) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    for (size_t b = 0; b < nb; b++) snprintf(m->bone_name[b], SC_NAME_LEN, "%s", names[b]);
    TRY(read_i(f, "/skeleton/parents", 1, nb, 0, &m->parent, err));
    TRY(read_i(f, "/skeleton/joint_types", 1, nb, 0, &m->joint_type, err));
    TRY(read_f(f, "/skeleton/joint_pos", 2, nb, 3, 0, &m->joint_pos, err));
    TRY(read_f(f, "/skeleton/bone_end", 2, nb, 3, 0, &m->bone_end, err));
    TRY(read_f(f, "/skeleton/hinge_axis", 2, nb, 3, 0, &m->hinge_axis, err));
    TRY(read_f(f, "/skeleton/joint_lo", 2, nb, 3, 0, &m->joint_lo, err));
    TRY(read_f(f, "/skeleton/joint_hi", 2, nb, 3, 0, &m->joint_hi, err));
    TRY(read_f(f, "/skeleton/kp", 1, nb, 0, 0, &m->kp, err));
    TRY(read_f(f, "/skeleton/kd", 1, nb, 0, 0, &m->kd, err));
    TRY(read_f(f, "/skeleton/torque_limit", 1, nb, 0, 0, &m->torque_limit, err));
    TRY(read_f(f, "/skeleton/mass", 1, nb, 0, 0, &m->bone_mass, err));
    TRY(read_f(f, "/skeleton/com", 2, nb, 3, 0, &m->bone_com, err));
    TRY(read_f(f, "/skeleton/inertia", 3, nb, 3, 3, &m->bone_inertia, err));
done:
    if (names) sc_h5_free_strings(names, nb);
    return rc;
}

/* /tetmesh and /fixed. */
static int read_tetmesh(sc_h5 *f, sc_model *m, sc_err *err)
{
    int rc = SC_OK;
    size_t dims[3] = {0, 3, 0};
    TRY(sc_h5_read_f64(f, "/tetmesh/rest_pos", 2, dims, &m->rest_pos, err));
    TRY(sc_h5_check_count(f, "/tetmesh/rest_pos", dims[0], 1, MAX_NODES, err));
    m->nnodes = (int)dims[0];
    dims[0] = 0;
    dims[1] = 4;
    TRY(sc_h5_read_i32(f, "/tetmesh/tets", 2, dims, &m->tets, err));
    TRY(sc_h5_check_count(f, "/tetmesh/tets", dims[0], 1, MAX_NODES, err));
    m->ntets = (int)dims[0];
    size_t nn = (size_t)m->nnodes, ne = (size_t)m->ntets;
    TRY(read_f(f, "/tetmesh/volume", 1, ne, 0, 0, &m->tet_volume, err));
    TRY(read_f(f, "/tetmesh/node_mass", 1, nn, 0, 0, &m->node_mass, err));
    TRY(read_f(f, "/tetmesh/bm_inv", 3, ne, 3, 3, &m->bm_inv, err));
    TRY(read_i(f, "/tetmesh/node_bone", 1, nn, 0, &m->node_bone, err));
    dims[0] = 0;
    TRY(sc_h5_read_i32(f, "/fixed/node", 1, dims, &m->fixed_node, err));
    TRY(sc_h5_check_count(f, "/fixed/node", dims[0], 0, MAX_NODES, err));
    m->nfixed = (int)dims[0];
    TRY(read_i(f, "/fixed/bone", 1, (size_t)m->nfixed, 0, &m->fixed_bone, err));
    TRY(read_f(f, "/fixed/local_pos", 2, (size_t)m->nfixed, 3, 0, &m->fixed_local, err));
done:
    return rc;
}

/* /surface, /material and /skin (required with require_skin). */
static int read_surface_material_skin(sc_h5 *f, sc_model *m, int require_skin, sc_err *err)
{
    int rc = SC_OK;
    size_t dims[3] = {0, 3, 0}, nn = (size_t)m->nnodes;
    TRY(sc_h5_read_f64(f, "/surface/vertices", 2, dims, &m->surf_rest, err));
    TRY(sc_h5_check_count(f, "/surface/vertices", dims[0], 0, MAX_NODES, err));
    m->nsurf_verts = (int)dims[0];
    dims[0] = 0;
    dims[1] = 3;
    TRY(sc_h5_read_i32(f, "/surface/faces", 2, dims, &m->surf_tris, err));
    TRY(sc_h5_check_count(f, "/surface/faces", dims[0], 0, MAX_NODES, err));
    m->nsurf_tris = (int)dims[0];
    TRY(read_i(f, "/surface/tet", 1, (size_t)m->nsurf_verts, 0, &m->surf_tet, err));
    TRY(read_f(f, "/surface/bary", 2, (size_t)m->nsurf_verts, 4, 0, &m->surf_bary, err));
    TRY(sc_h5_read_attr_f64(f, "/material", "density", &m->density, err));
    TRY(sc_h5_read_attr_f64(f, "/material", "youngs_modulus", &m->youngs, err));
    TRY(sc_h5_read_attr_f64(f, "/material", "poisson_ratio", &m->poisson, err));
    if (sc_h5_exists(f, "/skin/topk_bone")) {
        dims[0] = nn;
        dims[1] = 0;
        TRY(sc_h5_read_i32(f, "/skin/topk_bone", 2, dims, &m->skin_bone, err));
        TRY(sc_h5_check_count(f, "/skin/topk_bone (columns)", dims[1], 1, 64, err));
        m->skin_k = (int)dims[1];
        TRY(read_f(f, "/skin/topk_weight", 2, nn, (size_t)m->skin_k, 0, &m->skin_w, err));
    } else if (require_skin && m->nbones == 0) {
        rc = sc_character_require_bones(sc_h5_filename(f), m, "this tool", err);
    } else if (require_skin) {
        rc = sc_fail(err, SC_EINPUT, "%s:/skin/topk_bone: missing (run skin-weights on this character first)", sc_h5_filename(f));
    }
done:
    return rc;
}

/* Values: a damaged or hand-edited file must fail here, naming the dataset and element, not as a
   numerical failure in the middle of a run (exit 2, never 4). */
static int check_values(sc_h5 *f, const sc_model *m, sc_err *err)
{
    const char *path = sc_h5_filename(f);
    int rc = SC_OK;
    size_t nb = (size_t)m->nbones, nn = (size_t)m->nnodes, ne = (size_t)m->ntets;
    size_t nf = (size_t)m->nfixed, nv = (size_t)m->nsurf_verts, nt = (size_t)m->nsurf_tris, k = (size_t)m->skin_k;
    TRY(sc_h5_check_index(f, "/skeleton/joint_types", m->joint_type, nb, 1, 0, 2, err));
    for (int b = 0; b < m->nbones; b++)
        if (m->parent[b] >= b || (b > 0 && m->parent[b] < 0) || (b == 0 && m->parent[b] != -1))
            return sc_fail(err, SC_EINPUT, "%s:/skeleton/parents[%d]: value %d, must be %s", path, b, m->parent[b],
                           b ? "a bone before it (parents precede children)" : "-1 (bone 0 is the root)");
    TRY(sc_h5_check_range(f, "/skeleton/joint_pos", m->joint_pos, 3 * nb, 3, -MAX_COORD, MAX_COORD, 0, err));
    TRY(sc_h5_check_range(f, "/skeleton/bone_end", m->bone_end, 3 * nb, 3, -MAX_COORD, MAX_COORD, 0, err));
    TRY(sc_h5_check_range(f, "/skeleton/hinge_axis", m->hinge_axis, 3 * nb, 3, -1e3, 1e3, 0, err));
    TRY(sc_h5_check_range(f, "/skeleton/joint_lo", m->joint_lo, 3 * nb, 3, -100, 100, 0, err));
    TRY(sc_h5_check_range(f, "/skeleton/joint_hi", m->joint_hi, 3 * nb, 3, -100, 100, 0, err));
    TRY(sc_h5_check_range(f, "/skeleton/kp", m->kp, nb, 1, 0, 1e9, 0, err));
    TRY(sc_h5_check_range(f, "/skeleton/kd", m->kd, nb, 1, 0, 1e9, 0, err));
    TRY(sc_h5_check_range(f, "/skeleton/torque_limit", m->torque_limit, nb, 1, 0, 1e9, 0, err));
    TRY(sc_h5_check_range(f, "/skeleton/mass", m->bone_mass, nb, 1, 0, 1e6, 1, err));
    TRY(sc_h5_check_range(f, "/skeleton/com", m->bone_com, 3 * nb, 3, -MAX_COORD, MAX_COORD, 0, err));
    TRY(sc_h5_check_range(f, "/skeleton/inertia", m->bone_inertia, 9 * nb, 9, -1e6, 1e6, 0, err));
    TRY(sc_h5_check_range(f, "/tetmesh/rest_pos", m->rest_pos, 3 * nn, 3, -MAX_COORD, MAX_COORD, 0, err));
    TRY(sc_h5_check_index(f, "/tetmesh/tets", m->tets, 4 * ne, 4, 0, m->nnodes - 1, err));
    TRY(sc_h5_check_range(f, "/tetmesh/volume", m->tet_volume, ne, 1, 0, 1e6, 1, err));
    TRY(sc_h5_check_range(f, "/tetmesh/node_mass", m->node_mass, nn, 1, 0, 1e6, 1, err));
    TRY(sc_h5_check_finite(f, "/tetmesh/bm_inv", m->bm_inv, 9 * ne, 9, err));
    TRY(sc_h5_check_index(f, "/tetmesh/node_bone", m->node_bone, nn, 1, -1, m->nbones - 1, err));
    TRY(sc_h5_check_index(f, "/fixed/node", m->fixed_node, nf, 1, 0, m->nnodes - 1, err));
    TRY(sc_h5_check_index(f, "/fixed/bone", m->fixed_bone, nf, 1, 0, m->nbones - 1, err));
    TRY(sc_h5_check_range(f, "/fixed/local_pos", m->fixed_local, 3 * nf, 3, -MAX_COORD, MAX_COORD, 0, err));
    TRY(sc_h5_check_range(f, "/surface/vertices", m->surf_rest, 3 * nv, 3, -MAX_COORD, MAX_COORD, 0, err));
    TRY(sc_h5_check_index(f, "/surface/faces", m->surf_tris, 3 * nt, 3, 0, m->nsurf_verts - 1, err));
    TRY(sc_h5_check_index(f, "/surface/tet", m->surf_tet, nv, 1, 0, m->ntets - 1, err));
    TRY(sc_h5_check_range(f, "/surface/bary", m->surf_bary, 4 * nv, 4, -1e3, 1e3, 0, err));
    TRY(sc_h5_check_range(f, "/material (attribute density)", &m->density, 1, 1, 0, 1e6, 1, err));
    TRY(sc_h5_check_range(f, "/material (attribute youngs_modulus)", &m->youngs, 1, 1, 0, 1e12, 1, err));
    TRY(sc_h5_check_range(f, "/material (attribute poisson_ratio)", &m->poisson, 1, 1, 0, 0.5, 0, err));
    if (m->poisson >= 0.5) return sc_fail(err, SC_EINPUT, "%s:/material: attribute poisson_ratio %g, must be below 0.5", path, m->poisson);
    if (k) {
        TRY(sc_h5_check_index(f, "/skin/topk_bone", m->skin_bone, nn * k, k, -1, m->nbones - 1, err));
        TRY(sc_h5_check_range(f, "/skin/topk_weight", m->skin_w, nn * k, k, 0, 1, 0, err));
    }
done:
    return rc;
}
#undef TRY

int sc_character_read_h5(sc_h5 *f, sc_model *m, int require_skin, sc_err *err)
{
    memset(m, 0, sizeof *m);
    int rc = check_schema(f, err);
    if (rc) return rc;
    if ((rc = read_skeleton(f, m, err)) || (rc = read_tetmesh(f, m, err)) || (rc = read_surface_material_skin(f, m, require_skin, err)) ||
        (rc = check_values(f, m, err)))
        sc_model_free(m);
    return rc;
}

typedef struct {
    sc_model *m;
    int require_skin;
} read_arg;

static int reader(sc_h5 *f, void *arg, sc_err *err)
{
    read_arg *a = arg;
    return sc_character_read_h5(f, a->m, a->require_skin, err);
}

int sc_character_read(const char *path, sc_model *m, int require_skin, sc_err *err)
{
    memset(m, 0, sizeof *m);
    read_arg a = {m, require_skin};
    return sc_h5_read_file(path, reader, &a, err);
}

int sc_character_read_image(const void *data, size_t size, const char *name, sc_model *m, int require_skin, sc_err *err)
{
    memset(m, 0, sizeof *m);
    read_arg a = {m, require_skin};
    return sc_h5_read_image(data, size, name, reader, &a, err);
}

int sc_character_require_bones(const char *path, const sc_model *m, const char *tool, sc_err *err)
{
    if (m->nbones > 0) return SC_OK;
    return sc_fail(err, SC_EINPUT,
                   "%s: a boneless character (no skeleton: mesh-prep made it from body.letter or body.obj without `skeleton:`, "
                   "[T12]); %s needs a character with a skeleton (muscle-sim simulates a boneless one)",
                   path, tool);
}

void sc_character_weight_view_path(char *out, size_t n, int bone) { snprintf(out, n, "/skin/bone_weights/%03d", bone); }

int sc_character_write_weight_views(sc_h5 *f, const sc_model *m, sc_err *err)
{
    int rc = sc_h5_group(f, "/skin/bone_weights", "column j of /skin/weights as its own dataset (a view) for XDMF readers", err);
    for (int b = 0; b < m->nbones && !rc; b++) {
        char path[64], desc[SC_NAME_LEN + 64];
        sc_character_weight_view_path(path, sizeof path, b);
        snprintf(desc, sizeof desc, "weight of bone %d (%s) per node: /skin/weights[:, %d] (a view)", b, m->bone_name[b], b);
        rc = sc_h5_write_view(f, path, "/skin/weights", 1, (size_t)b, "1", desc, err);
    }
    return rc;
}

int sc_character_write_xdmf(const char *xdmf_path, const char *h5, const sc_model *m, int with_weights, sc_err *err)
{
    int nw = with_weights ? m->nbones : 0;
    sc_xdmf_field *fields = sc_alloc(err, (size_t)(3 + nw), sizeof *fields);
    char(*names)[SC_NAME_LEN + 8] = sc_alloc(err, (size_t)nw + 1, sizeof *names);
    char(*paths)[32] = sc_alloc(err, (size_t)nw + 1, sizeof *paths);
    if (!fields || !names || !paths) {
        free(fields);
        free(names);
        free(paths);
        return SC_EIO;
    }
    fields[0] = (sc_xdmf_field){"fixed_bone", SC_XDMF_NODE, 1, 1, {"/tetmesh/node_bone", 0}};
    fields[1] = (sc_xdmf_field){"node_mass", SC_XDMF_NODE, 0, 1, {"/tetmesh/node_mass", 0}};
    fields[2] = (sc_xdmf_field){"volume", SC_XDMF_CELL, 0, 1, {"/tetmesh/volume", 0}};
    for (int b = 0; b < nw; b++) {
        snprintf(names[b], sizeof names[b], "weight_%s", m->bone_name[b]);
        sc_character_weight_view_path(paths[b], sizeof paths[b], b);
        fields[3 + b] = (sc_xdmf_field){names[b], SC_XDMF_NODE, 0, 1, {paths[b], 0}};
    }
    const sc_xdmf_grid grids[2] = {
        {"tetmesh", SC_XDMF_TETRAHEDRON, m->ntets, m->nnodes, {"/tetmesh/tets", 0}, {"/tetmesh/rest_pos", 0}, fields, 3 + nw},
        {"surface", SC_XDMF_TRIANGLE, m->nsurf_tris, m->nsurf_verts, {"/surface/faces", 0}, {"/surface/vertices", 0}, NULL, 0},
    };
    int rc = sc_xdmf_write(xdmf_path, h5, "character", grids, 2, NULL, 0, err);
    free(fields);
    free(names);
    free(paths);
    return rc;
}

int sc_character_write_skinned(const char *input, const char *output, const sc_model *m, const sc_skin_result *r, const char *created_by,
                               const char *config, sc_err *err)
{
    int nn = r->nnodes, nb = r->nbones, k = r->k;
    const sc_bbw_stats *st = &r->st;
    sc_h5 *f;
    int rc = sc_h5_create_from(input, output, &f, err);
    if (rc) return rc;
    rc = sc_h5_delete(f, "/skin", err);
#define TRY(x) \
    if (!rc) rc = (x)
    TRY(sc_h5_group(f, "/skin", "bounded biharmonic skinning weights ([L13] eq. 13; Jacobson et al. 2011), fixed nodes as handles", err));
    TRY(sc_h5_write_f64(f, "/skin/weights", 2, D2(nn, nb), r->w, "1", "dense weights w_ij, node i (row) x bone j; rows sum to 1", err));
    TRY(sc_character_write_weight_views(f, m, err)); /* what character.xdmf shows */
    TRY(sc_h5_write_i32(f, "/skin/topk_bone", 2, D2(nn, k), m->skin_bone, "k most influential bones per node, -1 unused", err));
    TRY(sc_h5_write_f64(f, "/skin/topk_weight", 2, D2(nn, k), m->skin_w, "1", "their weights, renormalized to sum 1 (what simulate uses)", err));
    TRY(sc_h5_write_f64(f, "/skin/bone_iterations", 1, D1(nb), r->iterations, "1", "active-set iterations per bone", err));
    TRY(sc_h5_write_f64(f, "/skin/bone_kkt_residual", 1, D1(nb), r->kkt_residual, "1", "relative KKT residual of each bone's QP (see lib/skin/bbw.h)",
                        err));
    TRY(sc_h5_write_f64(f, "/skin/bone_max_free_weight", 1, D1(nb), r->max_free_weight, "1", "largest weight of each bone on a non-handle node",
                        err));
    TRY(sc_h5_write_f64(f, "/skin/bone_influence_nodes", 1, D1(nb), r->influence, "1", "nodes where the bone's weight exceeds 1e-3", err));
    TRY(sc_h5_write_i32(f, "/skin/bone_handles", 1, D1(nb), r->handles, "handle (fixed) nodes per bone", err));
    TRY(sc_h5_attr_str(f, "/skin", "partition_of_unity", "per-bone bound-constrained QPs, then each row normalized", err));
    TRY(sc_h5_attr_f64(f, "/skin", "max_rowsum_deviation_before_normalization", st->max_rowsum_dev_before_norm, err));
    TRY(sc_h5_attr_f64(f, "/skin", "max_change_by_normalization", st->max_change_by_norm, err));
    TRY(sc_h5_attr_f64(f, "/skin", "max_kkt_residual", st->max_kkt_residual, err));
    TRY(sc_h5_attr_f64(f, "/skin", "seconds", st->seconds, err));
    TRY(sc_h5_attr_i64(f, "/skin", "k", k, err));
    TRY(sc_h5_attr_i64(f, "/skin", "factor_nnz", st->factor_nnz, err));
    TRY(sc_h5_attr_str(f, "/skin", "created_by", created_by, err));
    TRY(sc_h5_attr_str(f, "/skin", "config", config ? config : "", err));
    TRY(sc_h5_attr_str(f, "/skin", "softcon_version", SC_VERSION " (" SC_GIT_REV ")", err));
#undef TRY
    if (rc) {
        sc_h5_abort(f);
        return rc;
    }
    return sc_h5_commit(f, err);
}

/* /fit: the skeleton's fit into an OBJ body, joint by joint, and the body's landmarks that placed
   the joints (a group of datasets with units, so h5py or h5dump read it without this code). */
static int write_fit(sc_h5 *f, const sc_fit_info *fi, sc_err *err)
{
    int rc;
    const size_t nj = (size_t)fi->njoints, d3[2] = {nj, 3}, l3[2] = {5, 3};
    const char *names[SC_MAX_BONES], *rules[SC_MAX_BONES];
    char rule_text[SC_MAX_BONES][160];
    for (size_t b = 0; b < nj; b++) {
        names[b] = fi->joint_name[b];
        snprintf(rule_text[b], sizeof rule_text[b], "%s%s", fi->joint_how[b] ? fi->joint_how[b] : "",
                 fi->foot_turned[b] ? "; foot turned along the body's" : "");
        rules[b] = rule_text[b];
    }
    const sc_body_landmarks *l = &fi->landmarks;
    static const char *const lm_names[5] = {"crotch", "armpit_left", "armpit_right", "neck_base", "neck_narrowest"};
    const sc_vec3 lm_at[5] = {l->crotch, l->armpit[0], l->armpit[1], l->neck_base, l->neck_narrowest};
    const int found[5] = {l->have_crotch, l->have_armpit[0], l->have_armpit[1], l->have_neck, l->have_neck};
    double lm_pos[15];
    for (int i = 0; i < 5; i++) sc_v3_store(lm_pos + 3 * i, lm_at[i]);
    const size_t five = 5;
    if ((rc = sc_h5_group(f, "/fit",
                          "mesh-prep's fit of the skeleton into an OBJ body (docs/tools/mesh-prep.md): per bone, its joint (head) where "
                          "the fit put it, where the skeleton scaled to the body's height had it, and the rule that placed it; the body's "
                          "landmarks found from its surface. Character frame: y up, soles on y = 0, facing +z, left +x",
                          err)) ||
        (rc = sc_h5_attr_f64(f, "/fit", "body_height_m", fi->body_height, err)) ||
        (rc = sc_h5_attr_f64(f, "/fit", "skeleton_scale", fi->scale, err)) ||
        (rc = sc_h5_write_strings(f, "/fit/joint_names", nj, names, "bone names in /skeleton's order; each row is the bone's joint (head)", err)) ||
        (rc = sc_h5_write_f64(f, "/fit/joint_position", 2, d3, fi->joint_pos, "m", "where the fit put each joint", err)) ||
        (rc = sc_h5_write_f64(f, "/fit/joint_scaled", 2, d3, fi->joint_scaled, "m", "where the skeleton scaled to the body's height had it", err)) ||
        (rc = sc_h5_write_f64(f, "/fit/joint_moved", 1, &nj, fi->joint_moved, "m", "distance from joint_scaled to joint_position", err)) ||
        (rc = sc_h5_write_strings(f, "/fit/joint_rule", nj, rules, "the rule that placed the joint last, or why the body's landmark could not",
                                  err)) ||
        (rc = sc_h5_write_strings(f, "/fit/landmark_names", 5, lm_names, "landmarks of the body found from its surface alone", err)) ||
        (rc = sc_h5_write_f64(f, "/fit/landmark_position", 2, l3, lm_pos, "m", "each landmark's position (meaningless where not found)", err)) ||
        (rc = sc_h5_write_i32(f, "/fit/landmark_found", 1, &five, found, "1: found; 0: the body shows none (e.g. no armpit gap in a T-pose)", err)))
        return rc;
    return SC_OK;
}

int sc_character_write_report(sc_h5 *f, const sc_prep_report *r, sc_err *err)
{
    int rc;
#define A_I(n, v) \
    if ((rc = sc_h5_attr_i64(f, "/report", n, v, err))) return rc
#define A_F(n, v) \
    if ((rc = sc_h5_attr_f64(f, "/report", n, v, err))) return rc
    if ((rc = sc_h5_group(f, "/report", "mesh-prep report; lengths m, volumes m^3, masses kg, angles degrees, times s", err))) return rc;
    A_I("nodes", r->nnodes);
    A_I("tets", r->ntets);
    A_I("surface_vertices", r->nsurf_verts);
    A_I("surface_faces", r->nsurf_tris);
    A_I("bones", r->nbones);
    A_I("joints", r->njoints);
    A_I("fixed_nodes", r->nfixed);
    A_I("envelope_vertices", r->env_verts);
    A_I("envelope_faces", r->env_tris);
    A_F("min_dihedral_deg", r->quality.min_dihedral);
    A_F("max_dihedral_deg", r->quality.max_dihedral);
    A_F("min_tet_volume_m3", r->quality.min_volume);
    A_F("max_tet_volume_m3", r->quality.max_volume);
    A_I("nonpositive_tets", r->quality.nonpositive);
    A_F("radius_edge_mean", r->quality.radius_edge_mean);
    A_F("radius_edge_max", r->quality.radius_edge_max);
    A_I("embedded_inside", r->embed.inside);
    A_I("embedded_nearest_tet", r->embed.fallback);
    A_F("max_nearest_tet_distance_m", r->embed.max_fallback_distance);
    A_I("slivers_peeled", r->improve.peeled);
    A_I("sliver_node_moves", r->improve.smoothed_moves);
    A_F("tetgen_min_dihedral_deg", r->improve.min_dihedral_before);
    A_F("total_mass_kg", r->total_mass);
    A_F("bone_mass_kg", r->bone_mass_total);
    A_F("volume_m3", r->volume);
    A_F("body_volume_m3", r->body_volume);
    A_I("mass_floored_nodes", r->mass_floored);
    A_F("tet_volume_m3", r->tet_volume);
    A_F("seconds", r->seconds);
    A_F("seconds_tetgen", r->seconds_tetgen);
    A_F("ground_shift_m", r->shift_y);
    A_I("skeleton_fitted", r->fitted);
    A_I("fixed_boxes_sized_to_body", r->fixed_fitted);
    if (r->fitted) {
        A_F("fit_body_height_m", r->fit.body_height);
        A_F("fit_scale", r->fit.scale);
        static const char *const side[2] = {"left", "right"};
        for (int i = 0; i < 2; i++) {
            char a[64];
#define A_S(fmt, v)                      \
    snprintf(a, sizeof a, fmt, side[i]); \
    A_F(a, v)
            A_S("fit_arm_down_deg_%s", r->fit.arm_down_deg[i]);
            A_S("fit_arm_forward_deg_%s", r->fit.arm_forward_deg[i]);
            A_S("fit_arm_length_scale_%s", r->fit.arm_length_scale[i]);
            A_S("fit_leg_shift_m_%s", r->fit.leg_shift[i]);
#undef A_S
        }
        /* joint by joint: the bones' order, their heads (the joints) after the fit, how far each
           moved from the skeleton scaled to the body, and the step that placed it */
        char names[SC_MAX_BONES * (SC_NAME_LEN + 1)] = "", how[SC_MAX_BONES * 160] = "";
        for (int b = 0; b < r->fit.njoints; b++) {
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", b ? "," : "", r->fit.joint_name[b]);
            snprintf(how + strlen(how), sizeof how - strlen(how), "%s%s", b ? ";" : "", r->fit.joint_how[b]);
        }
        if ((rc = sc_h5_attr_str(f, "/report", "fit_joint_names", names, err)) ||
            (rc = sc_h5_attr_f64_array(f, "/report", "fit_joint_position_m", 3 * (size_t)r->fit.njoints, r->fit.joint_pos, err)) ||
            (rc = sc_h5_attr_f64_array(f, "/report", "fit_joint_moved_m", (size_t)r->fit.njoints, r->fit.joint_moved, err)) ||
            (rc = sc_h5_attr_str(f, "/report", "fit_joint_how", how, err)) || (rc = write_fit(f, &r->fit, err)))
            return rc;
    }
#undef A_I
#undef A_F
    return sc_h5_attr_str(f, "/report", "tetgen_command", r->tetgen_command, err);
}

int sc_character_save(const char *path, int argc, char *const *argv, const char *config_text, const sc_model *m, const sc_muscles *mu,
                      const sc_reduced_basis *reduced, const sc_prep_report *report, sc_err *err)
{
    sc_h5 *f;
    int rc = sc_h5_create(path, &f, err);
    if (rc) return rc;
    if ((rc = sc_h5_provenance(f, SC_CHARACTER_SCHEMA, argc, argv, config_text, err)) || (rc = sc_character_write(f, m, err)) ||
        (mu && (rc = sc_character_write_muscles(f, mu, m, err))) || (reduced && (rc = sc_character_write_reduced(f, reduced, err))) ||
        (rc = sc_character_write_report(f, report, err))) {
        sc_h5_abort(f);
        return rc;
    }
    return sc_h5_commit(f, err);
}

/* ---- the character a file was made for ---------------------------------------------------- */

int sc_character_hash_write(sc_h5 *f, uint64_t hash, sc_err *err)
{
    char hex[24];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)hash);
    return sc_h5_attr_str(f, "/", "character_hash", hex, err);
}

int sc_character_hash_read(sc_h5 *f, uint64_t *hash, sc_err *err)
{
    char *hex = NULL;
    *hash = 0;
    if (sc_h5_read_attr_str(f, "/", "character_hash", &hex, NULL)) return SC_OK; /* no record */
    size_t n = strlen(hex), k = 0;
    while (k < n && isxdigit((unsigned char)hex[k])) k++;
    int rc = SC_OK;
    if (n != 16 || k != n) rc = sc_fail(err, SC_EINPUT, "%s: character_hash '%.40s' is not a character hash (16 hex digits)", sc_h5_filename(f), hex);
    else *hash = strtoull(hex, NULL, 16);
    free(hex);
    return rc;
}

int sc_character_hash_check(const char *path, uint64_t hash, const sc_model *m, sc_err *err)
{
    uint64_t mine = sc_model_hash(m);
    if (hash && hash != mine)
        return sc_fail(
            err, SC_EINPUT,
            "%s: made for another character (its character_hash %016llx is not this character's %016llx): make it again from this character", path,
            (unsigned long long)hash, (unsigned long long)mine);
    return SC_OK;
}

int sc_character_hash_verify(sc_h5 *f, const sc_model *m, sc_err *err)
{
    uint64_t hash;
    int rc = sc_character_hash_read(f, &hash, err);
    return rc ? rc : sc_character_hash_check(sc_h5_filename(f), hash, m, err);
}

/* NAME_frames.h5 and its .xdmf: the writer of render's ParaView export. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io/h5.h"
#include "store/frames.h"
#include "store/xdmf.h"

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The root attributes and /mesh. */
static int write_mesh(sc_h5 *f, const sc_frames_mesh *mesh, int n, int argc, char *const *argv, sc_err *err)
{
    int nb = mesh->nbones, nseg = 0, rc = 0;
    int *seg = malloc((size_t)(nb > 1 ? nb - 1 : 1) * 2 * sizeof(int));
    if (!seg) return sc_fail(err, SC_EIO, "out of memory");
    for (int b = 1; b < nb; b++) {
        seg[2 * nseg] = mesh->parent[b];
        seg[2 * nseg + 1] = b;
        nseg++;
    }
#define TRY(x)             \
    do {                   \
        if (!rc) rc = (x); \
    } while (0)
    TRY(sc_h5_provenance(f, SC_FRAMES_SCHEMA, argc, argv, NULL, err));
    TRY(sc_h5_attr_str(f, "/", "source", mesh->source, err));
    TRY(sc_h5_attr_i64(f, "/", "frames", n, err));
    TRY(sc_h5_group(f, "/mesh", "topology shared by every frame", err));
    TRY(sc_h5_write_i32(f, "/mesh/surface_faces", 2, (size_t[]){(size_t)mesh->nsf, 3}, mesh->faces, "fine surface triangles", err));
    TRY(sc_h5_write_i32(f, "/mesh/tets", 2, (size_t[]){(size_t)mesh->ntets, 4}, mesh->tets, "tet node indices", err));
    TRY(sc_h5_write_i32(f, "/mesh/node_bone", 1, (size_t[]){(size_t)mesh->nnodes}, mesh->node_bone, "bone a node is fixed to, -1 free", err));
    if (nseg) TRY(sc_h5_write_i32(f, "/mesh/bone_segments", 2, (size_t[]){(size_t)nseg, 2}, seg, "parent joint, child joint", err));
    TRY(sc_h5_write_strings(f, "/mesh/bone_names", (size_t)nb, mesh->bone_names, "bone names, in the order of each frame's joints", err));
#undef TRY
    free(seg);
    return rc;
}

/* /frames/NNNNNN for every frame. */
static int write_frames(sc_h5 *f, const sc_frames_mesh *mesh, const double *times, int n, sc_frames_sampler sample, void *ctx, sc_err *err)
{
    int rc = sc_h5_group(f, "/frames", "one group per exported frame (ParaView reads per-frame datasets)", err);
#define TRY(x)             \
    do {                   \
        if (!rc) rc = (x); \
    } while (0)
    for (int i = 0; i < n && !rc; i++) {
        char g[64], path[96];
        sc_frames_pose p = {0};
        rc = sample(ctx, times[i], &p, err);
        sc_xdmf_frame_path(g, sizeof g, i, NULL);
        TRY(sc_h5_group(f, g, NULL, err));
        TRY(sc_h5_attr_f64(f, g, "time", times[i], err));
        sc_xdmf_frame_path(path, sizeof path, i, "surface");
        TRY(sc_h5_write_f64(f, path, 2, (size_t[]){(size_t)mesh->nsv, 3}, p.surface, "m", "fine surface vertices", err));
        sc_xdmf_frame_path(path, sizeof path, i, "surface_height");
        TRY(sc_h5_write_f64(f, path, 1, (size_t[]){(size_t)mesh->nsv}, p.surface_height, "m", "height of each surface vertex above the ground", err));
        sc_xdmf_frame_path(path, sizeof path, i, "nodes");
        TRY(sc_h5_write_f64(f, path, 2, (size_t[]){(size_t)mesh->nnodes, 3}, p.nodes, "m", "tet node positions", err));
        sc_xdmf_frame_path(path, sizeof path, i, "joints");
        TRY(sc_h5_write_f64(f, path, 2, (size_t[]){(size_t)mesh->nbones, 3}, p.joints, "m", "bone origins (joints)", err));
    }
#undef TRY
    return rc;
}

int sc_frames_save(const char *h5_path, const char *xdmf_path, const sc_frames_mesh *mesh, const double *times, int n, sc_frames_sampler sample,
                   void *ctx, int argc, char *const *argv, sc_err *err)
{
    sc_h5 *f;
    int rc = sc_h5_create(h5_path, &f, err);
    if (rc) return rc;
    if ((rc = write_mesh(f, mesh, n, argc, argv, err)) || (rc = write_frames(f, mesh, times, n, sample, ctx, err))) {
        sc_h5_abort(f);
        return rc;
    }
    if ((rc = sc_h5_commit(f, err))) return rc;
    const sc_xdmf_field height = {"height", SC_XDMF_NODE, 0, 1, {"surface_height", 1}};
    const sc_xdmf_field fixed_bone = {"fixed_bone", SC_XDMF_NODE, 1, 1, {"/mesh/node_bone", 0}};
    const sc_xdmf_grid grids[3] = {
        {"surface", SC_XDMF_TRIANGLE, mesh->nsf, mesh->nsv, {"/mesh/surface_faces", 0}, {"surface", 1}, &height, 1},
        {"tetmesh", SC_XDMF_TETRAHEDRON, mesh->ntets, mesh->nnodes, {"/mesh/tets", 0}, {"nodes", 1}, &fixed_bone, 1},
        {"skeleton", SC_XDMF_SEGMENT, mesh->nbones - 1, mesh->nbones, {"/mesh/bone_segments", 0}, {"joints", 1}, NULL, 0},
    };
    rc = sc_xdmf_write(xdmf_path, base_name(h5_path), "frames", grids, mesh->nbones > 1 ? 3 : 2, times, n, err);
    if (rc) unlink(h5_path);
    return rc;
}

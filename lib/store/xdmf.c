/* XDMF descriptions of the HDF5 files softcon writes (character, sim, render frames). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "io/paths.h"
#include "store/xdmf.h"

void sc_xdmf_frame_path(char *out, size_t n, int frame, const char *leaf)
{
    if (leaf && leaf[0]) snprintf(out, n, "/frames/%06d/%s", frame, leaf);
    else snprintf(out, n, "/frames/%06d", frame);
}

/* Text for an XML attribute value or element body. */
static void put_escaped(FILE *x, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
            case '&': fputs("&amp;", x); break;
            case '<': fputs("&lt;", x); break;
            case '>': fputs("&gt;", x); break;
            case '"': fputs("&quot;", x); break;
            default: fputc(*s, x);
        }
    }
}

static void put_item(FILE *x, const char *indent, int rows, int cols, int is_int, const char *h5, const sc_xdmf_data *d, int frame)
{
    char path[512];
    if (d->per_frame) sc_xdmf_frame_path(path, sizeof path, frame, d->path);
    else snprintf(path, sizeof path, "%s", d->path);
    fprintf(x, "%s<DataItem Dimensions=\"%d", indent, rows);
    if (cols > 1) fprintf(x, " %d", cols);
    fprintf(x, "\" NumberType=\"%s\" Precision=\"%d\" Format=\"HDF\">", is_int ? "Int" : "Float", is_int ? 4 : 8);
    put_escaped(x, h5);
    fputc(':', x);
    put_escaped(x, path);
    fputs("</DataItem>\n", x);
}

/* A uniform grid; in a time series (time != NULL) its per-frame data are those of `frame`. */
static void put_grid(FILE *x, const char *indent, const sc_xdmf_grid *g, const char *h5, int frame, const double *time)
{
    static const char *const topo[] = {"Triangle", "Tetrahedron", "Polyline"};
    static const int per_cell[] = {3, 4, 2};
    char in2[32];
    snprintf(in2, sizeof in2, "%s  ", indent);
    fprintf(x, "%s<Grid Name=\"", indent);
    put_escaped(x, g->name);
    fputs("\" GridType=\"Uniform\">\n", x);
    if (time) fprintf(x, "%s <Time Value=\"%.17g\"/>\n", indent, *time);
    fprintf(x, "%s <Topology TopologyType=\"%s\"", indent, topo[g->topology]);
    if (g->topology == SC_XDMF_SEGMENT) fputs(" NodesPerElement=\"2\"", x);
    fprintf(x, " NumberOfElements=\"%d\">\n", g->ncells);
    put_item(x, in2, g->ncells, per_cell[g->topology], 1, h5, &g->cells, frame);
    fprintf(x, "%s </Topology>\n%s <Geometry GeometryType=\"XYZ\">\n", indent, indent);
    put_item(x, in2, g->npoints, 3, 0, h5, &g->points, frame);
    fprintf(x, "%s </Geometry>\n", indent);
    for (int i = 0; i < g->nfields; i++) {
        const sc_xdmf_field *a = &g->fields[i];
        fprintf(x, "%s <Attribute Name=\"", indent);
        put_escaped(x, a->name);
        fprintf(x, "\" AttributeType=\"%s\" Center=\"%s\">\n", a->ncomp == 3 ? "Vector" : "Scalar", a->center == SC_XDMF_CELL ? "Cell" : "Node");
        put_item(x, in2, a->center == SC_XDMF_CELL ? g->ncells : g->npoints, a->ncomp, a->is_int, h5, &a->data, frame);
        fprintf(x, "%s </Attribute>\n", indent);
    }
    fprintf(x, "%s</Grid>\n", indent);
}

int sc_xdmf_write(const char *xdmf_path, const char *h5_name, const char *name, const sc_xdmf_grid *grids, int ngrids, const double *times,
                  int nframes, sc_err *err)
{
    if (ngrids < 1) return sc_fail(err, SC_EINPUT, "%s: no grids", xdmf_path);
    for (int g = 0; g < ngrids; g++) {
        const sc_xdmf_grid *gr = &grids[g];
        int per_frame = gr->cells.per_frame || gr->points.per_frame;
        for (int i = 0; i < gr->nfields; i++) {
            per_frame |= gr->fields[i].data.per_frame;
            if (gr->fields[i].ncomp != 1 && gr->fields[i].ncomp != 3)
                return sc_fail(err, SC_EINPUT, "%s: field %s: %d components (1 or 3)", xdmf_path, gr->fields[i].name, gr->fields[i].ncomp);
        }
        if (per_frame && nframes < 1) return sc_fail(err, SC_EINPUT, "%s: grid %s has per-frame data but no frames", xdmf_path, gr->name);
    }
    if (nframes > 0 && !times) return sc_fail(err, SC_EINPUT, "%s: no frame times", xdmf_path);
    char tmp[4200];
    FILE *x = sc_file_open_tmp(xdmf_path, "w", tmp, sizeof tmp, err);
    if (!x) return err->code;
    fputs("<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n <Domain>\n", x);
    if (nframes == 0) {
        for (int g = 0; g < ngrids; g++) put_grid(x, "  ", &grids[g], h5_name, 0, NULL);
    } else {
        fputs("  <Grid Name=\"", x);
        put_escaped(x, name);
        fputs("\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", x);
        for (int k = 0; k < nframes; k++) {
            if (ngrids == 1) {
                put_grid(x, "   ", &grids[0], h5_name, k, &times[k]);
                continue;
            }
            fprintf(x, "   <Grid Name=\"frame_%06d\" GridType=\"Collection\" CollectionType=\"Spatial\">\n", k);
            fprintf(x, "    <Time Value=\"%.17g\"/>\n", times[k]);
            for (int g = 0; g < ngrids; g++) put_grid(x, "    ", &grids[g], h5_name, k, NULL);
            fputs("   </Grid>\n", x);
        }
        fputs("  </Grid>\n", x);
    }
    fputs(" </Domain>\n</Xdmf>\n", x);
    return sc_file_commit(x, tmp, xdmf_path, err);
}

/* ---- sim.h5 ---- */

int sc_xdmf_sim_views(sc_h5 *f, int nframes, sc_err *err)
{
    int rc = sc_h5_flush(f, err);
    if (!rc) rc = sc_h5_group(f, "/frames", "one group per stored frame: views of the time series for XDMF readers", err);
    for (int k = 0; k < nframes && !rc; k++) {
        char path[64];
        sc_xdmf_frame_path(path, sizeof path, k, "nodes");
        rc = sc_h5_write_view(f, path, "/nodes/position", 0, (size_t)k, "m", "tet node positions: /nodes/position[k] (a view)", err);
    }
    return rc;
}

int sc_xdmf_write_sim(const char *xdmf_path, const char *h5_name, const sc_model *m, const double *times, int nframes, sc_err *err)
{
    const sc_xdmf_field fixed_bone = {"fixed_bone", SC_XDMF_NODE, 1, 1, {"/mesh/node_bone", 0}};
    const sc_xdmf_grid tetmesh = {"tetmesh", SC_XDMF_TETRAHEDRON, m->ntets, m->nnodes, {"/mesh/tets", 0}, {"nodes", 1}, &fixed_bone, 1};
    return sc_xdmf_write(xdmf_path, h5_name, "sim", &tetmesh, 1, times, nframes, err);
}

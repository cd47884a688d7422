/* XDMF (version 3) descriptions of softcon's HDF5 files, one writer for every .xdmf softcon
 * writes (character.xdmf, sim.xdmf, render's NAME_frames.xdmf), so ParaView opens them.
 *
 * What ParaView 5.11's Xdmf3 reader reads, checked by scripts/check-viewers.sh: every DataItem
 * is a whole HDF5 dataset of exactly the declared shape. It does not read HyperSlab items
 * (geometry comes out with 0 points, attributes are skipped), so a frame of a time series or a
 * column of a matrix is given to it as its own dataset: per-frame datasets
 * /frames/NNNNNN/<leaf>, written as data (render) or as HDF5 views of the series
 * (sc_h5_write_view: nothing copied). A missing dataset or a wrong shape aborts ParaView, so
 * the description must match the file exactly. */
#ifndef SC_XDMF_H
#define SC_XDMF_H
#include <stddef.h>
#include "core/status.h"
#include "io/h5.h"
#include "model/model.h"

typedef enum { SC_XDMF_TRIANGLE, SC_XDMF_TETRAHEDRON, SC_XDMF_SEGMENT } sc_xdmf_topology;
typedef enum { SC_XDMF_NODE, SC_XDMF_CELL } sc_xdmf_center;

/* An HDF5 dataset: a fixed path ("/mesh/tets"), or with per_frame the leaf of
   /frames/NNNNNN/<leaf> for each frame. Float datasets are float64, int ones int32. */
typedef struct {
    const char *path;
    int per_frame;
} sc_xdmf_data;

/* A field on a grid: `ncomp` 1 (scalar) or 3 (vector) values per node or cell. */
typedef struct {
    const char *name;
    sc_xdmf_center center;
    int is_int;
    int ncomp;
    sc_xdmf_data data;
} sc_xdmf_field;

/* A block ParaView shows: cells (int32, ncells x 3 | 4 | 2) over points (float64, npoints x 3). */
typedef struct {
    const char *name;
    sc_xdmf_topology topology;
    int ncells, npoints;
    sc_xdmf_data cells, points;
    const sc_xdmf_field *fields;
    int nfields;
} sc_xdmf_grid;

/* Path of a per-frame dataset: "/frames/000012/nodes" (leaf NULL: the frame's group). */
void sc_xdmf_frame_path(char *out, size_t n, int frame, const char *leaf);

/* Writes xdmf_path (through a temporary renamed into place) describing `grids` in the HDF5 file
   named h5_name (relative to the XDMF's folder: "sim.h5"). nframes == 0: the grids side by side
   in the domain (no per-frame data allowed). nframes > 0: one temporal collection called `name`
   over times[0..nframes-1] (s) whose every step holds the grids (a spatial collection of them
   when there are several): the layout under which ParaView's Xdmf3 Reader T names the blocks
   after the grids (its Reader S merges the grids of a step into the pieces of one block). */
int sc_xdmf_write(const char *xdmf_path, const char *h5_name, const char *name, const sc_xdmf_grid *grids, int ngrids, const double *times,
                  int nframes, sc_err *err);

/* sim.h5 (softcon.sim/1): /frames/NNNNNN/nodes for k < nframes, views of /nodes/position[k]
   (no data copied). Call before sc_h5_commit, after the last frame is appended. */
int sc_xdmf_sim_views(sc_h5 *f, int nframes, sc_err *err);
/* sim.xdmf: the tet mesh over time (/mesh/tets, the frames' nodes) with fixed_bone
   (/mesh/node_bone), after sc_xdmf_sim_views and the commit of sim.h5. */
int sc_xdmf_write_sim(const char *xdmf_path, const char *h5_name, const sc_model *m, const double *times, int nframes, sc_err *err);

#endif

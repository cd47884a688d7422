"""pvpython scripts/viewers/check_paraview.py FILE.xdmf

Opens one .xdmf that softcon wrote with ParaView's Xdmf3 readers (the "Xdmf3 Reader T" and
"Xdmf3 Reader S" a user picks in File > Open) and checks what ParaView loaded against the HDF5 file the XDMF describes:
the time steps (/time or the frames' time attributes), every block's point and cell counts,
its connectivity, its point and cell field names, and the values of points and fields at the
first, middle and last time step. What to expect comes from the HDF5 file alone (its `schema`
root attribute says which softcon file it is), never from the XDMF.
Prints one line per file; exit 0 when it matches, 2 when it does not (scripts/check-viewers.sh
runs it once per file, because a bad XDMF aborts ParaView itself)."""
import os
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np
from paraview import servermanager
from paraview import simple as pvs
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkCommonDataModel import vtkCompositeDataSet, vtkMultiBlockDataSet, vtkMultiPieceDataSet


class Mismatch(Exception):
    pass


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


class Block:
    """What one grid must look like: counts, connectivity, and per-frame positions and fields."""

    def __init__(self, cells, positions, point_fields=None, cell_fields=None):
        self.cells = np.asarray(cells)            # ncells x nodes-per-cell
        self.positions = positions                # frame index -> npoints x 3
        self.point_fields = point_fields or {}    # name -> frame index -> values
        self.cell_fields = cell_fields or {}


def fixed(a):
    return lambda k: a


def expect_character(h):
    nodes = h["/tetmesh/rest_pos"][()]
    point = {"fixed_bone": fixed(h["/tetmesh/node_bone"][()]), "node_mass": fixed(h["/tetmesh/node_mass"][()])}
    if "/skin/weights" in h:
        w = h["/skin/weights"][()]
        for b, name in enumerate(h["/skeleton/names"][()]):
            point["weight_" + text(name)] = fixed(w[:, b])
    blocks = {
        "tetmesh": Block(h["/tetmesh/tets"][()], fixed(nodes), point, {"volume": fixed(h["/tetmesh/volume"][()])}),
        "surface": Block(h["/surface/faces"][()], fixed(h["/surface/vertices"][()])),
    }
    return [], blocks


def expect_sim(h):
    times = h["/time"][()]
    pos = h["/nodes/position"]
    node_bone = h["/mesh/node_bone"][()]
    return list(times), {"tetmesh": Block(h["/mesh/tets"][()], lambda k: pos[k], {"fixed_bone": fixed(node_bone)})}


def expect_frames(h):
    n = int(h.attrs["frames"])
    frame = lambda k, leaf: h["/frames/%06d/%s" % (k, leaf)][()]
    times = [float(h["/frames/%06d" % k].attrs["time"]) for k in range(n)]
    blocks = {
        "surface": Block(h["/mesh/surface_faces"][()], lambda k: frame(k, "surface"),
                         {"height": lambda k: frame(k, "surface_height")}),
        "tetmesh": Block(h["/mesh/tets"][()], lambda k: frame(k, "nodes"),
                         {"fixed_bone": fixed(h["/mesh/node_bone"][()])}),
    }
    if "/mesh/bone_segments" in h:
        blocks["skeleton"] = Block(h["/mesh/bone_segments"][()], lambda k: frame(k, "joints"))
    return times, blocks


EXPECT = {"softcon.character/1": expect_character, "softcon.sim/1": expect_sim, "softcon.frames/1": expect_frames}


def h5_of(xdmf):
    names = set()
    for item in ET.parse(xdmf).iter("DataItem"):
        if item.get("Format") == "HDF":
            names.add(item.text.strip().split(":", 1)[0])
    if len(names) != 1:
        raise Mismatch("expected one HDF5 file named in the XDMF, found %s" % sorted(names))
    return os.path.join(os.path.dirname(xdmf), names.pop())


def blocks_of(data, out=None):
    """[(block name or None, dataset)] of what a reader produced, depth first."""
    out = [] if out is None else out
    if isinstance(data, vtkMultiBlockDataSet):
        for i in range(data.GetNumberOfBlocks()):
            meta = data.GetMetaData(i) if data.HasMetaData(i) else None
            name = meta.Get(vtkCompositeDataSet.NAME()) if meta else None
            sub = data.GetBlock(i)
            if isinstance(sub, (vtkMultiBlockDataSet, vtkMultiPieceDataSet)):
                blocks_of(sub, out)
            else:
                out.append((name, sub))
    elif isinstance(data, vtkMultiPieceDataSet):
        for i in range(data.GetNumberOfPieces()):
            out.append((None, data.GetPiece(i)))
    elif data is not None:
        out.append((None, data))
    return out


def arrays(fd):
    return {fd.GetArrayName(i): vtk_to_numpy(fd.GetArray(i)) for i in range(fd.GetNumberOfArrays())}


def compare(label, got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        raise Mismatch("%s: ParaView has shape %s, the HDF5 file %s" % (label, got.shape, want.shape))
    if got.size and np.max(np.abs(got.astype(float) - want.astype(float))) > 0:
        raise Mismatch("%s: differs from the HDF5 file by up to %.3g" % (label, np.max(np.abs(got - want))))


def check_reader(reader_name, xdmf, times, want):
    """Opens xdmf with one of ParaView's Xdmf3 readers. Reader T names each block after its grid;
    Reader S gives the grids of a step as unnamed pieces, in the grids' order."""
    reader = getattr(pvs, reader_name)(FileName=[xdmf])
    reader.UpdatePipelineInformation()
    got_times = list(reader.TimestepValues) if len(times) > 1 else []
    if len(times) > 1 and (len(got_times) != len(times) or np.max(np.abs(np.array(got_times) - times)) > 0):
        raise Mismatch("%s: time steps: ParaView has %d (%s..%s), the HDF5 file %d (%s..%s)" % (
            reader_name, len(got_times), got_times[:1], got_times[-1:], len(times), times[:1], times[-1:]))
    frames = sorted({0, len(times) // 2, len(times) - 1}) if times else [0]
    for k in frames:
        reader.UpdatePipeline(times[k] if times else 0.0)
        got = blocks_of(reader.GetClientSideObject().GetOutputDataObject(0))
        names = [n for n, _ in got]
        if len(got) != len(want):
            raise Mismatch("%s: %d blocks %s, expected %s" % (reader_name, len(got), names, list(want)))
        # Reader T names a block after its grid; after the first step it appends "[step]"
        if reader_name == "Xdmf3ReaderT" and len(want) > 1 and [(n or "").split("[")[0] for n in names] != list(want):
            raise Mismatch("%s: blocks named %s, expected %s" % (reader_name, names, list(want)))
        for (_, d), (name, b) in zip(got, want.items()):
            at = "%s: %s, frame %d" % (reader_name, name, k)
            if d.GetNumberOfPoints() != len(b.positions(k)) or d.GetNumberOfCells() != len(b.cells):
                raise Mismatch("%s: ParaView has %d points and %d cells, the HDF5 file %d and %d" % (
                    at, d.GetNumberOfPoints(), d.GetNumberOfCells(), len(b.positions(k)), len(b.cells)))
            compare(at + ": points", vtk_to_numpy(d.GetPoints().GetData()), b.positions(k))
            compare(at + ": connectivity", vtk_to_numpy(d.GetCells().GetConnectivityArray()), b.cells.ravel())
            for kind, fd, fields in (("point", d.GetPointData(), b.point_fields), ("cell", d.GetCellData(), b.cell_fields)):
                have = arrays(fd)
                if sorted(have) != sorted(fields):
                    raise Mismatch("%s: %s fields %s, expected %s" % (at, kind, sorted(have), sorted(fields)))
                for f, values in fields.items():
                    compare("%s: %s field %s" % (at, kind, f), have[f], values(k))
    pvs.Delete(reader)
    return frames


def check(xdmf):
    h5path = h5_of(xdmf)
    with h5py.File(h5path, "r") as h:
        schema = text(h.attrs.get("schema", ""))
        if schema not in EXPECT:
            raise Mismatch("%s: schema '%s' is not one softcon writes XDMF for" % (h5path, schema))
        times, want = EXPECT[schema](h)
        for reader_name in ("Xdmf3ReaderT", "Xdmf3ReaderS"):
            frames = check_reader(reader_name, xdmf, times, want)
        summary = "; ".join("%s %d points %d cells%s" % (
            n, len(b.positions(0)), len(b.cells),
            (" [" + " ".join(sorted(b.point_fields) + sorted(b.cell_fields)) + "]") if b.point_fields or b.cell_fields else "")
            for n, b in want.items())
        return "%s, %d time steps, frames %s, Xdmf3 Readers T and S: %s" % (schema, len(times), frames if times else "-", summary)


def main():
    if len(sys.argv) != 2:
        print("usage: pvpython check_paraview.py FILE.xdmf", file=sys.stderr)
        return 1
    # Xdmf3 joins the HDF5 name to the .xdmf name given without a folder: always a full path
    xdmf = os.path.abspath(sys.argv[1])
    try:
        print("ok    paraview %s: %s" % (xdmf, check(xdmf)), flush=True)
        return 0
    except (Mismatch, OSError, KeyError) as e:
        print("FAIL  paraview %s: %s" % (xdmf, e), flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())

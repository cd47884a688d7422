#!/usr/bin/python3
"""How a simulated character passed the obstacles of its ground (ground.boxes in the sim.h5's
config), from its fine surface: per box, each foot's crossing (its vertices' centre from before
the box to past it) and its clearance (the lowest of its points over the box's top while over
its footprint), the closest any surface point came to the box, and whether one entered it (a
contact); then whether the run completed standing (root at the end above 70 % of its start
height). --plot draws a side view of the soles over each box, one stroke per frame.

  scripts/obstacle-clearance.py [--plot PNG] sim.h5
"""
import argparse
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import yaml


def surface(f):
    """Surface vertex positions [T, nv, 3] from the nodes by the embedding, and at rest."""
    tets, st, bary = f["/mesh/tets"][:], f["/mesh/surface_tet"][:], f["/mesh/surface_bary"][:]
    corners = tets[st]  # [nv, 4]
    nodes = f["/nodes/position"][:]
    x = np.einsum("vk,tvkd->tvd", bary, nodes[:, corners, :])
    rest = np.einsum("vk,vkd->vd", bary, f["/mesh/rest_pos"][:][corners])
    return x, rest


def box_distance(p, lo, hi):
    """Signed distance of points p [n, 3] to a box (negative inside)."""
    c, e = (lo + hi) / 2, (hi - lo) / 2
    q = np.abs(p - c) - e
    outside = np.linalg.norm(np.maximum(q, 0), axis=1)
    inside = np.minimum(q.max(axis=1), 0)
    return outside + inside


def plot(a, boxes, t, x, feet):
    """A side view per box (gnuplot, as scripts/plot.sh): the box, and each foot's sole (its lowest
    point per 1 cm of z) every other frame while it is near."""
    with tempfile.TemporaryDirectory() as d:
        cmds = ["set terminal pngcairo size 900,%d enhanced font 'DejaVu Sans,11'" % (330 * len(boxes)), "set output '%s'" % a.plot,
                "set multiplot layout %d,1" % len(boxes)]
        for b, box in enumerate(boxes):
            lo, hi = np.array(box["min"], float), np.array(box["max"], float)
            clauses = []
            for name, sel, colour in (("left foot", feet["left"], "#4477aa"), ("right foot", feet["right"], "#cc6677")):
                z = x[:, sel, 2].mean(axis=1)
                near = np.nonzero(np.abs(z - (lo[2] + hi[2]) / 2) < 0.45)[0][::2]
                path = os.path.join(d, "%d_%s.dat" % (b, name.split()[0]))
                with open(path, "w") as f:
                    for k in near:
                        p = x[k][sel]
                        bins = np.floor(p[:, 2] / 0.01).astype(int)
                        for c in np.unique(bins):
                            f.write("%.4f %.4f %.3f\n" % ((c + 0.5) * 0.01, p[bins == c, 1].min(), t[k]))
                        f.write("\n")
                clauses.append("'%s' u 1:2 w l lw 0.8 lc rgb '%s' t '%s'" % (path, colour, name))
            cmds += ["set title \"%s: box %d, the soles every other frame\" noenhanced" % (os.path.basename(a.sim), b),
                     "set xlabel 'z (m, forward)'", "set ylabel 'height (m)'", "set xrange [%g:%g]" % (lo[2] - 0.5, hi[2] + 0.5),
                     "set yrange [-0.02:0.35]", "set size ratio -1", "unset object",
                     "set object 1 rect from %g,%g to %g,%g fc rgb 'gray50' fs solid front" % (lo[2], lo[1], hi[2], hi[1]),
                     "plot 0 w l lc rgb 'black' notitle, " + ", ".join(clauses)]
        cmds.append("unset multiplot")
        subprocess.run(["gnuplot"], input="\n".join(cmds) + "\n", text=True, check=True)
    print("plot           %s" % a.plot)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sim")
    ap.add_argument("--plot", help="PNG: a side view of the feet over each box")
    a = ap.parse_args()
    f = h5py.File(a.sim, "r")
    cfg = yaml.safe_load(f.attrs["config"]) or {}
    boxes = (cfg.get("ground") or {}).get("boxes") or []
    if not boxes:
        sys.exit("%s: its config has no ground.boxes: no obstacle to measure" % a.sim)
    t = f["/time"][:]
    x, rest = surface(f)
    low = rest[:, 1] < 0.08 * (rest[:, 1].max() - rest[:, 1].min()) + rest[:, 1].min()  # the feet, standing at rest
    feet = {"left": low & (rest[:, 0] > 0), "right": low & (rest[:, 0] < 0)}
    status = f.attrs.get("status", b"")
    status = status.decode() if isinstance(status, bytes) else str(status)
    print("file           %s" % a.sim)
    print("status         %s" % status)
    ok = True
    for b, box in enumerate(boxes):
        lo, hi = np.array(box["min"], float), np.array(box["max"], float)
        over = (x[:, :, 0] >= lo[0]) & (x[:, :, 0] <= hi[0]) & (x[:, :, 2] >= lo[2]) & (x[:, :, 2] <= hi[2])
        dist = np.array([box_distance(x[k], lo, hi).min() for k in range(len(t))])
        inside = np.nonzero(dist < 0)[0]
        print("box %d          [%g %g %g] - [%g %g %g] m, %.2f m high" % (b, *lo, *hi, hi[1] - lo[1]))
        for name, sel in feet.items():
            z = x[:, sel, 2].mean(axis=1)
            before, after = np.nonzero(z < lo[2])[0], np.nonzero(z > hi[2])[0]
            crossed = len(before) and len(after) and after[-1] > before[0]
            clear = np.where(over[:, sel], x[:, sel, 1] - hi[1], np.inf).min(axis=1)
            i = int(np.argmin(clear))
            print("  %-5s foot   %s, clearance %s" % (name, "crossed at %.2f s" % t[after[0]] if crossed else "did not cross",
                                                   "%.3f m at %.2f s" % (clear[i], t[i]) if np.isfinite(clear[i]) else "- (never over it)"))
            ok &= bool(crossed)
        k = int(np.argmin(dist))
        print("  closest      %.3f m at %.2f s (any surface point)" % (dist[k], t[k]))
        print("  contact      %s" % ("none" if not len(inside) else "%d frames from %.2f s, %.3f m deep" % (len(inside), t[inside[0]], -dist.min())))
        ok &= not len(inside)
    root0, root1 = f["/bones/position"][0, 0, 1], f["/bones/position"][-1, 0, 1]
    standing = status == "completed" and root1 > 0.7 * root0
    print("standing       %s (root %.3f -> %.3f m)" % ("yes" if standing else "no", root0, root1))
    print("result         %s" % ("cleared" if ok and standing else "NOT cleared"))
    if a.plot:
        plot(a, boxes, t, x, feet)
    return 0 if ok and standing else 1


if __name__ == "__main__":
    sys.exit(main())

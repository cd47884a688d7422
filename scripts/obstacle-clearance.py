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
import sys

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
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(len(boxes), 1, figsize=(8, 3.2 * len(boxes)), squeeze=False)
        for b, box in enumerate(boxes):
            lo, hi = np.array(box["min"], float), np.array(box["max"], float)
            ax = axes[b, 0]
            ax.add_patch(plt.Rectangle((lo[2], lo[1]), hi[2] - lo[2], hi[1] - lo[1], color="0.45", zorder=3))
            for name, sel, cmap in (("left foot", feet["left"], "Blues"), ("right foot", feet["right"], "Oranges")):
                z = x[:, sel, 2].mean(axis=1)
                near = np.nonzero(np.abs(z - (lo[2] + hi[2]) / 2) < 0.45)[0]
                for k in near[::2]:  # the sole: the lowest point per 1 cm of z
                    p = x[k][sel]
                    bins = np.floor(p[:, 2] / 0.01).astype(int)
                    zs = np.unique(bins)
                    sole = np.array([p[bins == b, 1].min() for b in zs])
                    ax.plot((zs + 0.5) * 0.01, sole, "-", lw=0.7, color=plt.get_cmap(cmap)(0.35 + 0.6 * (k - near[0]) / max(1, near[-1] - near[0])))
                ax.plot([], [], "-", color=plt.get_cmap(cmap)(0.8), label=name)
            ax.axhline(0, color="k", lw=0.8)
            ax.set_xlim(lo[2] - 0.5, hi[2] + 0.5)
            ax.set_ylim(-0.02, 0.35)
            ax.set_aspect("equal")
            ax.set_xlabel("z (m, forward)")
            ax.set_ylabel("height (m)")
            ax.set_title("%s: box %d, the soles every other frame (later: darker)" % (a.sim.split("/")[-1], b))
            ax.legend(loc="upper right")
        fig.tight_layout()
        fig.savefig(a.plot, dpi=100)
        print("plot           %s" % a.plot)
    return 0 if ok and standing else 1


if __name__ == "__main__":
    sys.exit(main())

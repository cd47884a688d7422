#!/usr/bin/python3
"""What a boneless character did in a muscle-sim sim.h5 ([T12] 7's measures), one line each:
the COM's travel and largest rise, the lowest node's largest clearance and the time with no
contact (jumps), the letter's tilt (its top nodes' centre over its bottom nodes'), its turn about
each axis (a roll, a twist: the body's best-fit rotation, unwrapped) and, after a full turn
(330 deg), how long it stands upright again (a cartwheel), the COM's swing along x
(a sine fitted at --period), the largest volume change and the wall time per 1/30 s frame
against [T12] Table 1.

  scripts/letters-measure.py [--period S] [--after S] sim.h5 [sim.h5 ...]
"""
import argparse
import sys

import h5py
import numpy as np


def best_rotation(rest, x):
    """The rotation that best carries the centred rest nodes to the centred nodes (Kabsch)."""
    a, b = rest - rest.mean(0), x - x.mean(0)
    u, _, vt = np.linalg.svd(b.T @ a)
    d = np.sign(np.linalg.det(u @ vt))
    return u @ np.diag([1, 1, d]) @ vt


def measure(path, period, after):
    f = h5py.File(path, "r")
    if "/bones" in f or "/nodes/position" not in f:
        sys.exit("%s: not a boneless body's sim.h5 (muscle-sim)" % path)
    t, com = f["/time"][:], f["/momentum/com"][:]
    rest, x = f["/mesh/rest_pos"][:], f["/nodes/position"]
    y = rest[:, 1]
    top, bot = y > y.max() - 0.1, y < y.min() + 0.1
    tilt, lowest, turns = [], [], []
    prev, total = None, np.zeros(3)
    for k in range(len(t)):
        xk = x[k]
        a = xk[top].mean(0) - xk[bot].mean(0)
        tilt.append(np.degrees(np.arccos(a[1] / np.linalg.norm(a))))
        lowest.append(xk[:, 1].min())
        r = best_rotation(rest, xk)
        if prev is not None:  # the increment's rotation vector, summed: an unwrapped turn per axis
            d = r @ prev.T
            ang = np.arccos(np.clip((np.trace(d) - 1) / 2, -1, 1))
            axis = np.array([d[2, 1] - d[1, 2], d[0, 2] - d[2, 0], d[1, 0] - d[0, 1]])
            n = np.linalg.norm(axis)
            if n > 1e-12:
                total += ang * axis / n
        prev = r
        turns.append(total.copy())
    tilt, lowest, turns = np.array(tilt), np.array(lowest), np.degrees(np.array(turns))
    count = f["/contact/count"][:]
    dt = np.diff(t, append=t[-1])
    dt[0] = 0  # the first frame comes before the first step (no contact solved yet)
    stand = com[t <= min(0.4, t[-1]), 1].min()
    a = f["/"].attrs
    fem, ctl, tim = f["/fem"].attrs, f["/control"].attrs, f["/timing"].attrs
    frame = float(tim["mean_step_s"]) * (1 / 30) / float(a["dt"])
    out = [
        ("file", path),
        ("status", a["status"].decode() if isinstance(a["status"], bytes) else a["status"]),
        ("solver", ctl.get("solver", b"?").decode() if isinstance(ctl.get("solver"), bytes) else ctl.get("solver")),
        ("duration_s", "%.2f" % t[-1]),
        ("com_travel_m", "x %+.3f z %+.3f" % (com[-1, 0] - com[0, 0], com[-1, 2] - com[0, 2])),
        ("com_rise_m", "%.3f (over its stance height %.3f m in the first 0.4 s)" % (com[:, 1].max() - stand, stand)),
        ("clearance_m", "%.3f (the lowest node's largest height)" % lowest.max()),
        ("airborne_s", "%.3f" % dt[count == 0].sum()),
        ("tilt_deg", "max %.1f, at the end %.1f" % (tilt.max(), tilt[-1])),
        ("turn_deg", "about x %+.0f, y %+.0f, z %+.0f" % tuple(turns[-1])),
        ("volume_change", "%.2f %% (det F min %.3f)" % (100 * float(fem["max_volume_change"]), float(fem["min_det"]))),
        ("plans", "%d (%d infeasible), %.1f QPs and %.1f ms each" % (ctl["plans"], ctl["failed_plans"], ctl["mean_qps"],
                                                                    1e3 * float(tim["mean_plan_s"]))),
        ("s_per_frame", "%.3f per 1/30 s frame ([T12] Table 1: 0.42-1.24 s on a 2.26 GHz core)" % frame),
    ]
    ax = int(np.argmax(np.abs(turns).max(0)))  # a cartwheel: a full turn, then upright again
    full = np.nonzero(np.abs(turns[:, ax]) >= 330)[0]
    if len(full):
        k1 = full[0]
        up = np.nonzero(tilt[k1:] <= 20)[0]
        out.append(("full_turn", "about %s by %.2f s; then upright (tilt <= 20 deg) %s" % (
            "xyz"[ax], t[k1], "from %.2f s for %.2f s" % (t[k1 + up[0]], dt[k1:][tilt[k1:] <= 20].sum()) if len(up) else "never")))
    if period > 0:
        m = t >= after
        w = 2 * np.pi * t[m] / period
        c = np.linalg.lstsq(np.c_[np.sin(w), np.cos(w), np.ones(m.sum())], com[m, 0], rcond=None)[0]
        out.append(("swing_x_m", "amplitude %.4f, phase %+.0f deg (a sine of period %g s fitted after %g s)" %
                    (np.hypot(c[0], c[1]), np.degrees(np.arctan2(c[1], c[0])), period, after)))
    for k, v in out:
        print("%-14s %s" % (k, v))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--period", type=float, default=0, help="fit a sine of this period (s) to the COM's x")
    p.add_argument("--after", type=float, default=0, help="fit from this time (s) on")
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    for i, path in enumerate(a.files):
        if i:
            print()
        measure(path, a.period, a.after)


if __name__ == "__main__":
    main()

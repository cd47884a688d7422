#!/usr/bin/env python3
"""Writes a synthetic roll on the floor, whose contacts are known, as a BVH on the CMU skeleton
hierarchy of scripts/make-march.py: a test for contact estimation on the back, the shoulders, the
head and the arms (issue 28: a roll's contacts must be found without a hand-written list).

The motion, at 120 fps, after the CMU convention's T-pose at frame 0: lying on the back (legs
together, arms stretched overhead) 0.5 s, a log roll onto the left side over 0.8 s, 0.4 s there,
back over 0.8 s, the same onto the right side, 0.5 s on the back. On the back the pelvis, spine,
head, arms and heels touch the floor; on a side that side's arm, shoulder, hip, thigh, shin and foot.
The root rolls without slipping: it moves sideways by its height times the angle turned.
Angles follow the CMU files: Zrotation Yrotation Xrotation, degrees, R = Rz Ry Rx; y up; the body
lies along z (head towards -z), facing up; its left is +x. Plain Python 3.
Run: scripts/make-roll.py out.bvh
"""
import importlib.util
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("make_march", os.path.join(here, "make-march.py"))
march = importlib.util.module_from_spec(spec)
spec.loader.exec_module(march)

BACK, SIDE = 1.9, 3.1  # CMU units: the hip joint's height lying on the back, on a side


def smoothstep(x):
    x = min(1.0, max(0.0, x))
    return x * x * (3 - 2 * x)


def roll_angle(t):
    """Degrees about the body's long axis: 0 on the back, -90 on the left side, +90 on the right."""
    keys = [(0.5, 0), (1.3, -90), (1.7, -90), (2.5, 0), (2.9, 0), (3.7, 90), (4.1, 90), (4.9, 0)]
    for (t0, a0), (t1, a1) in zip(keys, keys[1:]):
        if t0 <= t <= t1:
            return a0 + (a1 - a0) * smoothstep((t - t0) / (t1 - t0))
    return 0.0


def pose(t):
    phi = roll_angle(t)
    r = math.radians(phi)
    height = math.hypot(BACK * math.cos(r), SIDE * math.sin(r))  # an elliptic cross-section's support
    ch = {j: [0.0, 0.0, 0.0] for j in march.JOINTS}
    ch["LeftUpLeg"][0], ch["RightUpLeg"][0] = -20.0, 20.0  # legs together
    ch["LeftArm"][0], ch["RightArm"][0] = 80.0, -80.0  # arms overhead
    # lying: Rx(-90) turns the standing body face up, head towards -z; Rz(phi) rolls it
    root = [-0.5 * (BACK + SIDE) * r, height, 0.0, phi, 0.0, -90.0]
    return root, ch


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/make-roll.py out.bvh")
    duration = 5.4
    n = int(round(duration * march.FPS)) + 1
    lines = march.hierarchy()
    lines += ["MOTION", "Frames: %d" % (n + 1), "Frame Time: %.7f" % (1.0 / march.FPS)]
    tpose = ["0"] * (3 + 3 * len(march.JOINTS))
    tpose[1] = "16.7048"
    lines.append(" ".join(tpose))
    for f in range(n):
        root, ch = pose(f / march.FPS)
        vals = root + [v for j in march.JOINTS[1:] for v in ch[j]]
        lines.append(" ".join(march.num(v) for v in vals))
    with open(sys.argv[1], "w", newline="\n") as fh:
        fh.write("\n".join(lines) + "\n")
    print("wrote %s: %d frames (%.2f s at %g fps) + T-pose frame 0" % (sys.argv[1], n, (n - 1) / march.FPS, march.FPS))


if __name__ == "__main__":
    main()

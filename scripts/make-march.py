#!/usr/bin/env python3
"""Writes mocap/march_in_place.bvh: a project-authored reference motion (marching in place) on the
CMU skeleton hierarchy (the joint names, topology, channel layout and subject-02 bone offsets of the
clips in ../shared/mocap), so that the pipeline runs with no external data.

The motion, at 120 fps, after the CMU convention's T-pose at frame 0:
  0.4 s standing (legs brought together, arms down), 0.6 s swaying into the rhythm, 3 cycles of
  1.2 s in which each knee is lifted in turn (hip 50 deg, knee 85 deg, foot kept level) while the
  pelvis sways 4 cm towards the supporting foot in phase with the lifts (the legs tilt so that the
  feet stay where they are; the centre of pressure then swings under the supporting foot), and the
  arm opposite the lifted knee swings forward, then 0.6 s settling and 0.4 s standing.
Checked with bin/inverse-dynamics -c configs/march.yaml on the michelin.yaml character: the
estimated ground contact needs none of the clamps of [L13] eq. 29-31.
Angles follow the CMU files: Zrotation Yrotation Xrotation, degrees, R = Rz Ry Rx; y up, +z forward,
the character's left is +x. Plain Python 3, no dependencies. Run: scripts/make-march.py [out.bvh]
"""
import math
import os
import sys

FPS = 120.0
UNIT = 0.056444  # m per CMU unit

# (name, parent, offset) in file order; 'End' rows are End Sites of the row's parent.
SKELETON = [
    ("Hips", None, (0, 0, 0)),
    ("LHipJoint", "Hips", (0, 0, 0)),
    ("LeftUpLeg", "LHipJoint", (1.65674, -1.80282, 0.62477)),
    ("LeftLeg", "LeftUpLeg", (2.59720, -7.13576, 0)),
    ("LeftFoot", "LeftLeg", (2.49236, -6.84770, 0)),
    ("LeftToeBase", "LeftFoot", (0.19704, -0.54136, 2.14581)),
    ("End", "LeftToeBase", (0, 0, 1.11249)),
    ("RHipJoint", "Hips", (0, 0, 0)),
    ("RightUpLeg", "RHipJoint", (-1.61070, -1.80282, 0.62476)),
    ("RightLeg", "RightUpLeg", (-2.59502, -7.12977, 0)),
    ("RightFoot", "RightLeg", (-2.46780, -6.78024, 0)),
    ("RightToeBase", "RightFoot", (-0.23024, -0.63258, 2.13368)),
    ("End", "RightToeBase", (0, 0, 1.11569)),
    ("LowerBack", "Hips", (0, 0, 0)),
    ("Spine", "LowerBack", (0.01961, 2.05450, -0.14112)),
    ("Spine1", "Spine", (0.01021, 2.06436, -0.05921)),
    ("Neck", "Spine1", (0, 0, 0)),
    ("Neck1", "Neck", (0.00713, 1.56711, 0.14968)),
    ("Head", "Neck1", (0.03429, 1.56041, -0.10006)),
    ("End", "Head", (0.01305, 1.62560, -0.05265)),
    ("LeftShoulder", "Spine1", (0, 0, 0)),
    ("LeftArm", "LeftShoulder", (3.54205, 0.90436, -0.17364)),
    ("LeftForeArm", "LeftArm", (4.86513, 0, 0)),
    ("LeftHand", "LeftForeArm", (3.35554, 0, 0)),
    ("LeftFingerBase", "LeftHand", (0, 0, 0)),
    ("LeftHandIndex1", "LeftFingerBase", (0.66117, 0, 0)),
    ("End", "LeftHandIndex1", (0.53306, 0, 0)),
    ("LThumb", "LeftHand", (0, 0, 0)),
    ("End", "LThumb", (0.54120, 0, 0.54120)),
    ("RightShoulder", "Spine1", (0, 0, 0)),
    ("RightArm", "RightShoulder", (-3.49802, 0.75994, -0.32616)),
    ("RightForeArm", "RightArm", (-5.02649, 0, 0)),
    ("RightHand", "RightForeArm", (-3.36431, 0, 0)),
    ("RightFingerBase", "RightHand", (0, 0, 0)),
    ("RightHandIndex1", "RightFingerBase", (-0.73041, 0, 0)),
    ("End", "RightHandIndex1", (-0.58887, 0, 0)),
    ("RThumb", "RightHand", (0, 0, 0)),
    ("End", "RThumb", (-0.59786, 0, 0.59786)),
]
JOINTS = [s[0] for s in SKELETON if s[0] != "End"]


def hierarchy():
    children = {}
    for i, (name, parent, _) in enumerate(SKELETON):
        children.setdefault(parent, []).append(i)
    out = ["HIERARCHY"]

    def emit(i, depth):
        name, parent, off = SKELETON[i]
        pad = "\t" * depth
        if name == "End":
            out.append(pad + "End Site")
        else:
            out.append(pad + ("ROOT " if parent is None else "JOINT ") + name)
        out.append(pad + "{")
        out.append(pad + "\tOFFSET %.5f %.5f %.5f" % off)
        if name == "Hips":
            out.append(pad + "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation")
        elif name != "End":
            out.append(pad + "\tCHANNELS 3 Zrotation Yrotation Xrotation")
        if name != "End":
            for c in children.get(name, []):
                emit(c, depth + 1)
        out.append(pad + "}")

    emit(0, 0)
    return out


def num(v):
    """A channel value with 5 decimals (1e-5 deg, 0.6 um), trailing zeros dropped."""
    t = ("%.5f" % v).rstrip("0").rstrip(".")
    return "0" if t in ("", "-0") else t


def smoothstep(x):
    x = min(1.0, max(0.0, x))
    return x * x * (3 - 2 * x)


def lift(s):
    """Knee-lift profile from the cycle's sine: only while it exceeds 0.35, C1 at the ends."""
    return max(0.0, (s - 0.35) / 0.65) ** 2


LEG = 7.59 + 7.29  # hip to ankle with the legs together (CMU units)
SWAY = 0.7  # pelvis sway amplitude (CMU units, 4 cm)


def pose(t, t0, period, cycles):
    """Channel values (dict joint -> [Z, Y, X] or Hips -> [x, y, z, Z, Y, X]) at time t."""
    ramp_in, ramp_out = 0.6, 0.6
    t1 = t0 + cycles * period
    env = smoothstep((t - (t0 - ramp_in)) / ramp_in) * (1 - smoothstep((t - t1) / ramp_out))
    ph = 2 * math.pi * (t - t0) / period
    s = math.sin(ph)
    active = t0 <= t <= t1
    sl = lift(s) if active else 0.0   # left knee up in the first half of a cycle
    sr = lift(-s) if active else 0.0  # right knee up in the second half
    # a sinusoidal sway in phase with the lifts: like an inverted pendulum driven above its
    # natural frequency, the centre of pressure then swings (1 + w^2 h / g) times as far as
    # the pelvis, i.e. under the supporting foot, and the lifted foot never carries weight
    sway = -SWAY * env * math.sin(ph)
    tilt = -math.degrees(math.asin(sway / LEG))  # both legs tilt so that the feet do not slide
    ch = {j: [0.0, 0.0, 0.0] for j in JOINTS}
    # standing: legs together (the CMU rest pose has them 20 deg apart), arms down, elbows bent
    ch["LeftUpLeg"][0], ch["RightUpLeg"][0] = -20.0 + tilt, 20.0 + tilt
    ch["LeftFoot"][0], ch["RightFoot"][0] = -tilt, -tilt
    ch["LeftArm"][0], ch["RightArm"][0] = -75.0, 75.0
    ch["LeftForeArm"][1], ch["RightForeArm"][1] = -20.0, 20.0
    for side, a in (("Left", sl), ("Right", sr)):
        hip, knee = 50.0 * a, 85.0 * a
        ch[side + "UpLeg"][2] = -hip    # hip flexion: thigh forward
        ch[side + "Leg"][2] = knee      # knee flexion: shin back
        ch[side + "Foot"][2] = hip - knee  # foot level
    # the arm opposite the lifted knee swings forward, the other back
    # (a positive Y turns the left arm backwards and the right arm forwards)
    ch["LeftArm"][1] = -25.0 * (sr - sl)
    ch["RightArm"][1] = -25.0 * (sr - sl)
    # pelvis: over the supporting foot, at the height of straight legs
    root = [sway, 17.60, 0.0, 0.0, 0.0, 0.0]
    return root, ch


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mocap",
                                                                   "march_in_place.bvh")
    stand, ramp, period, cycles = 0.4, 0.6, 1.2, 3
    t0 = stand + ramp
    duration = t0 + cycles * period + ramp + stand
    n = int(round(duration * FPS)) + 1
    lines = hierarchy()
    lines += ["MOTION", "Frames: %d" % (n + 1), "Frame Time: %.7f" % (1.0 / FPS)]
    # frame 0: the T-pose of the CMU conversions (all rotations zero, standing on the floor)
    tpose = ["0"] * (3 + 3 * len(JOINTS))
    tpose[1] = "16.7048"
    lines.append(" ".join(tpose))
    for f in range(n):
        root, ch = pose(f / FPS, t0, period, cycles)
        vals = root + [v for j in JOINTS[1:] for v in ch[j]]
        lines.append(" ".join(num(v) for v in vals))
    with open(out_path, "w", newline="\n") as fh:
        fh.write("\n".join(lines) + "\n")
    print("wrote %s: %d frames (%.2f s at %g fps) + T-pose frame 0" % (out_path, n, (n - 1) / FPS, FPS))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the muscle_control objectives of the X's walk ([T12] 7, Figure 9) for muscle-sim: the
feet's trajectories, phase by phase, as an animator would key them.

A phase moves one foot (--gait one: left hind, left fore, right hind, right fore) or a diagonal
pair (--gait two: left hind with right fore, then left fore with right hind). It first shifts the
centre of mass (a momentum objective, eq. 12-13, to an absolute target: over the centre of the
planned feet, --lateral of the way towards the stance feet's centre across the body, --lead
ahead), then swings each moving foot: an anchored point objective on the foot's region, a smooth
ramp of --step forward from where the foot was when the swing began and a half sine of --lift up
([T12]: "specify the trajectories of ... each foot"). Every other foot is held where it stood at
the start of its stance (an anchored point objective in x and z; y free, so gravity places it).
The regulariser, the kinetic objective (the motion about the centre of mass, which damps the
modes a greedy plan excites) and, optionally, yaw damping (angular momentum about y) run always.

  scripts/make-x-walk.py [--gait one|two] [options] > objectives.yaml
      (paste below `objectives:` of a config: configs/letters/x_walk.yaml, x_walk_two.yaml)
"""
import argparse

# rest-coordinate boxes of the feet (the legs' lowest 15 cm): the X's feet lie 0.4 m out along
# the diagonals; left is -z, hind is -x
FEET = {"lh": (-1, -1), "lf": (1, -1), "rh": (-1, 1), "rf": (1, 1)}
GAITS = {"one": [["lh"], ["lf"], ["rh"], ["rf"]], "two": [["lh", "rf"], ["lf", "rh"]]}


def region(foot):
    sx, sz = FEET[foot]
    x = (-1, -0.25) if sx < 0 else (0.25, 1)
    z = (-1, -0.25) if sz < 0 else (0.25, 1)
    return "{min: [%g, -1, %g], max: [%g, 0.15, %g]}" % (x[0], z[0], x[1], z[1])


def hold(a, t0, t1, foot):
    return ("- {type: point, weight: %s, from: %s, to: %s, anchored: true, axes: [1, 0, 1], region: %s}   # %s stands"
            % (num(a.hold), num(t0), num(t1), region(foot), foot))


def num(x):
    return "%.4g" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gait", choices=sorted(GAITS), default="one")
    ap.add_argument("--duration", type=float, default=7.0, help="s, the run's")
    ap.add_argument("--start", type=float, default=0.5, help="s standing before the first phase")
    ap.add_argument("--shift", type=float, default=0.3, help="s of a phase before its swing")
    ap.add_argument("--swing", type=float, default=0.35, help="s of a swing")
    ap.add_argument("--step", type=float, default=0.15, help="m forward per swing")
    ap.add_argument("--lift", type=float, default=0.08, help="m, the swing's half sine")
    ap.add_argument("--lateral", type=float, default=0.4, help="of the way to the stance feet's centre (z)")
    ap.add_argument("--lead", type=float, default=0.02, help="m, the COM target ahead of the feet's centre")
    ap.add_argument("--hold", type=float, default=1e7, help="weight of a stance foot's hold")
    ap.add_argument("--swing-weight", type=float, default=3e7)
    ap.add_argument("--com-weight", type=float, default=300)
    ap.add_argument("--kp", type=float, default=16)
    ap.add_argument("--kd", type=float, default=8)
    ap.add_argument("--kinetic", type=float, default=300)
    ap.add_argument("--yaw", type=float, default=0, help="weight of the yaw damping (kd 30), 0: none")
    a = ap.parse_args()
    end = a.duration + 1  # past the run
    pos = {f: [0.4 * FEET[f][0], 0.4 * FEET[f][1]] for f in FEET}  # planned foot centres (x, z)
    since = {f: 0.0 for f in FEET}  # the start of each foot's stance
    out = ["- {type: regularise, weight: 1}"]
    if a.yaw > 0:
        out.append("- {type: angular_momentum, weight: %s, kd: 30, axes: [0, 1, 0]}   # yaw damped" % num(a.yaw))
    out.append("- {type: kinetic, weight: %s}" % num(a.kinetic))
    com = [(0.0, a.start, 0.0, 0.0)]
    t, k, phase = a.start, 0, a.shift + a.swing
    while t + phase <= a.duration + 1e-9:
        moving = GAITS[a.gait][k % len(GAITS[a.gait])]
        centre = [sum(p[i] for p in pos.values()) / 4 for i in (0, 1)]
        stance_z = sum(pos[f][1] for f in FEET if f not in moving) / (4 - len(moving))
        com.append((t, t + phase, centre[0] + a.lead, centre[1] + a.lateral * (stance_z - centre[1])))
        t_swing = t + a.shift
        for f in moving:  # its stance ends, its swing
            out.append(hold(a, since[f], t_swing, f))
            out.append("- {type: point, weight: %s, from: %s, to: %s, anchored: true, ramp: smooth, target: [%s, 0, 0], "
                       "amplitude: [0, %s, 0], period: %s,\n   region: %s}   # %s swings"
                       % (num(a.swing_weight), num(t_swing), num(t + phase), num(a.step), num(a.lift), num(2 * a.swing), region(f), f))
            pos[f][0] += a.step
            since[f] = t + phase
        t += phase
        k += 1
    for f in FEET:
        out.append(hold(a, since[f], end, f))
    centre = [sum(p[i] for p in pos.values()) / 4 for i in (0, 1)]
    com.append((com[-1][1], end, centre[0], centre[1]))  # after the last phase: over the feet
    for (t0, t1, x, z) in com:
        out.append("- {type: momentum, weight: %s, kp: %s, kd: %s, axes: [1, 0, 1], from: %s, to: %s, target: [%s, 0, %s]}"
                   % (num(a.com_weight), num(a.kp), num(a.kd), num(t0), num(min(t1, end)), num(x), num(z)))
    print("\n".join("    " + line.replace("\n", "\n    ") for line in out))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A body of other proportions made from a user's OBJ and the skeleton mesh-prep fitted into it
(a character.h5 of that OBJ): hips widened and arms lengthened, so the fit can be checked on a
body no one modelled by hand (issue 28: wide hips, long arms).

  scripts/body-variant.py [--hips F] [--arms F] [--scale S] body.obj character.h5 out.obj

Each vertex belongs to its nearest bone. Arm vertices move along the line from the shoulder to the
hand's end, by (arms - 1) x their distance along it; the others widen in x by up to (hips - 1),
a Gaussian of 0.1 m about the hip joints' height. The OBJ keeps its unit (--scale: metres per
unit, as the config's body.scale) and its faces; the character's frame stands the body's lowest
point on y = 0, as mesh-prep does.
"""
import argparse

import h5py
import numpy as np


def read_obj(path):
    verts, lines = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("v "):
                verts.append([float(a) for a in line.split()[1:4]])
            lines.append(line)
    return np.array(verts), lines


def segment_distance(p, a, b):
    ab = b - a
    t = np.clip(((p - a) @ ab) / max(ab @ ab, 1e-12), 0, 1)
    return np.linalg.norm(p - (a + t[:, None] * ab), axis=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hips", type=float, default=1.2)
    ap.add_argument("--arms", type=float, default=1.2)
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("obj")
    ap.add_argument("character")
    ap.add_argument("out")
    a = ap.parse_args()
    raw, lines = read_obj(a.obj)
    v = raw * a.scale
    lift = -v[:, 1].min()
    v[:, 1] += lift
    f = h5py.File(a.character, "r")
    names = [n.decode() if isinstance(n, bytes) else n for n in f["/skeleton/names"][:]]
    head, tail = f["/skeleton/joint_pos"][:], f["/skeleton/bone_end"][:]
    near = np.argmin(np.stack([segment_distance(v, head[j], tail[j]) for j in range(len(names))]), axis=0)
    out = v.copy()
    arm = np.zeros(len(v), bool)
    for side in "lr":
        bones = [names.index(side + "_" + b) for b in ("upperarm", "forearm", "hand")]
        mine = np.isin(near, bones)
        arm |= mine
        s, e = head[bones[0]], tail[bones[2]]
        u = (e - s) / np.linalg.norm(e - s)
        t = np.clip((v[mine] - s) @ u, 0, None)
        out[mine] += (a.arms - 1) * t[:, None] * u
    hip_y = 0.5 * (head[names.index("l_thigh")][1] + head[names.index("r_thigh")][1])
    w = (a.hips - 1) * np.exp(-(((v[:, 1] - hip_y) / 0.1) ** 2))
    out[~arm, 0] *= 1 + w[~arm]
    out[:, 1] -= lift
    out /= a.scale
    k = 0
    with open(a.out, "w") as g:
        g.write("# %s: %s with hips x %.2f and arms x %.2f (scripts/body-variant.py)\n" % (a.out, a.obj, a.hips, a.arms))
        for line in lines:
            if line.startswith("v "):
                g.write("v %.6f %.6f %.6f\n" % tuple(out[k]))
                k += 1
            else:
                g.write(line)
    print("%s: %d vertices, %d on the arms; height %.3f m, width %.3f m (was %.3f)" % (
        a.out, len(v), arm.sum(), (out[:, 1].max() - out[:, 1].min()) * a.scale, np.ptp(out[:, 0]) * a.scale, np.ptp(v[:, 0])))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""h5-same.py [--only /G1,/G2] A.h5 B.h5 [...]: whether two softcon outputs hold the same results.

Every object of A is in B and back; every dataset has the same shape, type and bytes (h5diff
1.10 exits 0 on a shape difference: this does not); every attribute is equal, except those that
say when, where and how fast a run went (created_*, host, config, softcon_version, *seconds*,
*per_second*, reference_path, the dimension-scale bookkeeping) and the /run and /timing groups. Prints SAME or DIFF with the
first differences; exit 0 when every pair given is the same, 1 otherwise. Several pairs: A1 B1 A2 B2 ...
--only: compare only these groups or datasets (and what they hold), e.g. --only /bones,/nodes."""
import sys

import h5py
import numpy as np

SKIP = {"config", "host", "softcon_version", "DIMENSION_LIST", "REFERENCE_LIST", "reference_path"}
TIMING = "timing"  # sim.h5's wall-clock timings of the step stages


def skipped(name):
    return name in SKIP or name.startswith("created") or "seconds" in name or "per_second" in name


def objects(f):
    found = {"/": f}

    def visit(name, obj):
        found[name] = obj  # returns None: visititems stops at the first callback that returns a value

    f.visititems(visit)
    return found


def selected(name, only):
    return not only or any(name == g or name.startswith(g + "/") for g in only)


def compare(a_path, b_path, only):
    bad = []
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        oa, ob = objects(a), objects(b)
        oa = {k: v for k, v in oa.items() if selected(k, only)}
        ob = {k: v for k, v in ob.items() if selected(k, only)}
        for g in only:
            if g not in oa and g not in ob:
                bad.append(f"/{g}: in neither file")
        for name in sorted(set(oa) ^ set(ob)):
            bad.append(f"{name}: only in {'A' if name in oa else 'B'}")
        for name in sorted(set(oa) & set(ob)):
            if name.split("/")[0] in ("run", TIMING):
                continue
            x, y = oa[name], ob[name]
            if isinstance(x, h5py.Dataset) != isinstance(y, h5py.Dataset):
                bad.append(f"{name}: a dataset in one file only")
                continue
            if isinstance(x, h5py.Dataset):
                if x.shape != y.shape or x.dtype != y.dtype:
                    bad.append(f"{name}: shape/type {x.shape} {x.dtype} vs {y.shape} {y.dtype}")
                elif x.dtype.kind in "fiub" and x[()].tobytes() != y[()].tobytes():
                    bad.append(f"{name}: values differ")
                elif x.dtype.kind not in "fiub" and not np.array_equal(np.asarray(x[()]), np.asarray(y[()])):
                    bad.append(f"{name}: values differ")
            ax = {k: x.attrs[k] for k in x.attrs if not skipped(k)}
            ay = {k: y.attrs[k] for k in y.attrs if not skipped(k)}
            for k in sorted(set(ax) ^ set(ay)):
                bad.append(f"{name}@{k}: in one file only")
            for k in sorted(set(ax) & set(ay)):
                if not np.array_equal(np.asarray(ax[k]), np.asarray(ay[k])):
                    bad.append(f"{name}@{k}: {ax[k]!r} vs {ay[k]!r}")
    print(("SAME " if not bad else "DIFF ") + f"{a_path} {b_path}")
    for line in bad[:20]:
        print("  " + line)
    return not bad


args = sys.argv[1:]
only = []
if args[:1] == ["--only"] and len(args) > 1:
    only = [g.strip("/") for g in args[1].split(",") if g.strip("/")]
    args = args[2:]
if len(args) < 2 or len(args) % 2:
    sys.exit(__doc__)
ok = all([compare(args[i], args[i + 1], only) for i in range(0, len(args), 2)])
sys.exit(0 if ok else 1)

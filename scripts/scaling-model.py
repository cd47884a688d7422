#!/usr/bin/env python3
"""A model of sample-openloop's parallel efficiency, calibrated on the 16-core measurements of
scripts/bench-scaling.sh (docs/cluster.md, Scaling), projected to clusters of several nodes.

Per segment of n samples on R ranks x T threads (N = R T cores), every rank pays
  simulate  n t / N                      t: one sample's time on a loaded node (t1 / c)
  wait      t (1 + log2 R) + ne S / Bs   the tail (the last sample, the steals) and rank 0's
                                         serializing of the elites for the checkpoint
  share     ne S / Bb(R, node)           every rank receives every elite's snapshot (ne of S bytes)
efficiency = c simulate / (simulate + wait + share), c: the node's own factor (contention of the
cores for memory and clocks; fitted, see below).

  scripts/scaling-model.py [--samples 1000] [--elites 100] [--check]
"""
import argparse
import math

# measured on a 16-core Intel Xeon (device), scripts/bench-scaling.sh
T1 = 1 / 20.30          # s per sample, 1 rank x 1 thread alone (the march)
# c, fitted to the five 16-core points (--check) against T1, which came from another machine of
# the same kind: that one ran about 10 % slower (one copy alone: 22.35 against 24.74 samples/s),
# which cancels the contention of 16 processes (16 copies at once: 75 % of one alone); 16 threads
# of one rank lose less (they share the model)
CEILING_PROCESSES = 1.0
CEILING_THREADS = 0.925
SNAPSHOT = 613_336        # bytes of one elite's snapshot
SERIALIZE_BW = 2.0e9      # B/s: rank 0 copying the elites into the checkpoint blob
SHM_BW = 2.5e9            # B/s a node's ranks receive broadcasts at, together (fitted as c)
NET_BW = {"10GbE": 1.1e9, "100Gb IB": 11e9}  # B/s into a node


def efficiency(n, ne, ranks, threads, ranks_per_node, net_bw, nodes):
    cores = ranks * threads
    c = CEILING_THREADS if ranks_per_node == 1 and threads > 1 else CEILING_PROCESSES if cores > 1 else 1.0
    t = T1 / c
    simulate = n * t / cores
    wait = t * (1 + math.log2(ranks)) + ne * SNAPSHOT / SERIALIZE_BW if ranks > 1 else t
    share = 0.0
    if ranks > 1:
        share = ne * SNAPSHOT * ranks_per_node / SHM_BW  # a node's ranks receive from memory
        if nodes > 1:
            share = max(share, 2 * ne * SNAPSHOT / net_bw)  # and the node from the network (a tree bcast's scatter + allgather)
    return c * simulate / (simulate + wait + share)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--elites", type=int, default=100)
    ap.add_argument("--check", action="store_true", help="the model against the 16-core measurements")
    a = ap.parse_args()
    if a.check:
        measured = [(320, 32, 16, 1, 0.72), (320, 32, 8, 1, 0.90), (1000, 100, 16, 1, 0.80), (320, 32, 1, 16, 0.89), (1000, 100, 1, 16, 0.90)]
        print("samples elites layout  measured  model")
        for n, ne, r, th, m in measured:
            print(f"{n:7d} {ne:6d} {r:3d}x{th:<3d} {100 * m:7.0f} % {100 * efficiency(n, ne, r, th, r, NET_BW['10GbE'], 1):5.0f} %")
        return
    print(f"{a.samples} samples, {a.elites} elites per segment; nodes of 16 or 32 cores")
    print(f"{'cores':>5} {'node':>4} {'layout':<34} {'10GbE':>6} {'100Gb IB':>9}")
    for cores in (16, 64, 128, 256):
        for node in (16, 32):
            nodes = max(1, cores // node)
            if node > cores:
                continue
            for name, ranks, threads, rpn in (("a rank per core", cores, 1, node), ("a rank per node x threads", nodes, node, 1)):
                e = [efficiency(a.samples, a.elites, ranks, threads, rpn, bw, nodes) for bw in NET_BW.values()]
                print(f"{cores:5d} {node:4d} {name + f' ({ranks}x{threads})':<34} {100 * e[0]:5.0f}% {100 * e[1]:8.0f}%")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks lib/'s include graph against lib/LAYOUT: every include of lib/<room>/... from a file of
another room must be allowed for that room, and no two files (x.c/x.h taken as one module) may
reach each other through includes. Exit 0 when the layout holds, 1 with every violation listed."""
import os, re, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
lib = os.path.join(root, "lib")
allowed, order = {}, []
for n, line in enumerate(open(os.path.join(lib, "LAYOUT")), 1):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    room, _, deps = line.partition(":")
    allowed[room.strip()] = set(deps.split())
    order.append(room.strip())

def modname(path):
    """x.c and x.h are one module; x_internal.h (a module's private header) belongs to x."""
    base = path.rsplit(".", 1)[0]
    return base[: -len("_internal")] if base.endswith("_internal") else base

inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
problems, edges = [], {}
rooms = sorted(d for d in os.listdir(lib) if os.path.isdir(os.path.join(lib, d)))
for room in rooms:
    if room not in allowed:
        problems.append(f"lib/{room}/: a room not listed in lib/LAYOUT")
        continue
    for name in sorted(os.listdir(os.path.join(lib, room))):
        if not name.endswith((".c", ".h")):
            continue
        path = f"{room}/{name}"
        module = modname(path)
        for n, line in enumerate(open(os.path.join(lib, path), errors="replace"), 1):
            m = inc.match(line)
            if not m:
                continue
            target = m.group(1)
            if "/" not in target:  # a sibling in the same folder
                target = f"{room}/{target}"
            troom = target.split("/", 1)[0]
            if troom != room and troom not in allowed[room]:
                problems.append(f"lib/{path}:{n}: includes {target}: {room} may not include {troom} (lib/LAYOUT)")
            if troom in allowed:
                tmod = modname(target)
                if tmod != module:
                    edges.setdefault(module, set()).add(tmod)

# include cycles between modules (Tarjan's strongly connected components)
index, low, stack, on, sccs = {}, {}, [], set(), []
def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in sorted(edges.get(v, ())):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(sorted(comp))
sys.setrecursionlimit(10000)
for v in sorted(edges):
    if v not in index:
        visit(v)
for comp in sccs:
    problems.append("include cycle: " + " <-> ".join(comp))

for p in problems:
    print(p)
if problems:
    print(f"check-layout: {len(problems)} problem(s)")
    sys.exit(1)
print(f"check-layout: {len(rooms)} rooms, {len(edges)} modules with includes: no upward include, no cycle")

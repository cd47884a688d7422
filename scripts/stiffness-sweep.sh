#!/usr/bin/env bash
# Issue-4 test 8: the range of Young's modulus for which the character stands 5 s at dt = 0.5 ms
# (torso tilt < 10 deg, pelvis above 90 % of its start, penetration < 1 cm, no inverted tet).
# Usage: scripts/stiffness-sweep.sh character.h5 [E ...]
set -euo pipefail
cd "$(dirname "$0")/.."
ch=${1:?usage: scripts/stiffness-sweep.sh character.h5 [E ...]}; shift || true
values=("$@"); [ ${#values[@]} -gt 0 ] || values=(1e3 2e3 3e3 5e3 1e4 5e4 1e5 2e5 5e5 8e5 1e6 2e6)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '%10s  %-8s %s\n' "E (Pa)" result details
for e in "${values[@]}"; do
  sed "s/^simulation:/simulation:\n  youngs_modulus: $e/" configs/stand.yaml > "$tmp/stand.yaml"
  bin/simulate -q -c "$tmp/stand.yaml" -o "$tmp/s.h5" "$ch" 2>/dev/null || true
  /usr/bin/python3 - "$tmp/s.h5" "$e" <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1]); names = [n.decode() for n in f['bones/names'][:]]
q = f['bones/orientation'][:, names.index('spine') if 'spine' in names else 0, :]
w, x, y, z = q.T
tilt = np.degrees(np.arccos(np.clip(1 - 2 * (x * x + z * z), -1, 1)))  # angle of the rotated +y from +y
h = f['bones/position'][:, 0, 1]; depth = f['contact/max_depth'][:]; inv = f['fem/inverted'][:]
status = f.attrs['status']; status = status.decode() if isinstance(status, bytes) else status
ok = status == 'completed' and tilt.max() < 10 and h.min() > 0.9 * h[0] and depth.max() < 0.01 and inv.max() == 0
print('%10s  %-8s tilt %.2f deg, pelvis >= %.3f, penetration %.2f mm, inverted %d, %s'
      % (sys.argv[2], 'stands' if ok else 'FAILS', tilt.max(), h.min() / h[0], 1e3 * depth.max(), inv.max(), status[:70]))
PY
done

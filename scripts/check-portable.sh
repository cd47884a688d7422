#!/usr/bin/env bash
# Checks that the portable build (x86-64-v3) runs on a CPU without AVX-512: the FEM tests and
# a short standing simulation under QEMU's user-mode emulation of a Haswell (AVX2, no AVX-512;
# Debian package qemu-user). The FEM kernel must then be the AVX2 one, and every test pass.
# Usage: scripts/check-portable.sh   (after make all and make build/release/softcon_test)
# Exit: 0 ok, 4 a test or the simulation failed under emulation, 5 qemu-x86_64 is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
qemu=$(command -v qemu-x86_64 || true)
if [[ -z "$qemu" ]]; then
  echo "check-portable: qemu-x86_64 not found (apt-get install qemu-user)" >&2
  exit 5
fi
emulate() { "$qemu" -cpu Haswell "$@" 2> >(grep -v "TCG doesn't support" >&2); }
out=results/portable
mkdir -p "$out"

echo "== the FEM, skinning and contact tests on an emulated Haswell (AVX2, no AVX-512)"
if ! emulate build/release/softcon_test fem_ lbs_plan > "$out/tests.log"; then
  tail -20 "$out/tests.log"
  exit 4
fi
grep -E "kernel selected|passed" "$out/tests.log"
grep -q "kernel selected on this CPU: avx2-f64x4" "$out/tests.log" || { echo "check-portable: not the AVX2 kernel" >&2; exit 4; }

echo "== 20 ms of configs/stand.yaml under emulation"
[[ -f results/bench/character.h5 ]] || {
  bin/mesh-prep -q -c configs/michelin.yaml -o "$out/character.h5"
  bin/skin-weights -q -c configs/michelin.yaml -o "$out/character.h5" "$out/character.h5"
}
chr=results/bench/character.h5
[[ -f $chr ]] || chr="$out/character.h5"
sed 's/^\(  duration: *\)[0-9.]*/\10.02/' configs/stand.yaml > "$out/stand_short.yaml"
if ! emulate bin/simulate -q -c "$out/stand_short.yaml" -o "$out/stand_short.h5" "$chr"; then
  echo "check-portable: simulate failed under emulation" >&2
  exit 4
fi
echo "check-portable: ok (the AVX2 kernel was selected; no AVX-512 instruction was reached)"

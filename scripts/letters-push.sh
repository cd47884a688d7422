#!/usr/bin/env bash
# [T12] 6's balance claim, measured: the largest push at the I's head (0.1 s, along +x) that the
# I survives under QPCC, under the static-contact QP ([T12]'s baseline) and with no control,
# by bisection on configs/letters/i_balance.yaml. Survived: the run completes and the I's axis
# (its top nodes' centre over its bottom nodes') ends within 30 degrees of the vertical.
#
#   scripts/letters-push.sh [-o OUTDIR] [-r RESOLUTION_N] [-m MAX_N]
set -euo pipefail
cd "$(dirname "$0")/.."
out=results/letters-push res=25 max=800
while getopts "o:r:m:h" opt; do
  case $opt in
    o) out=$OPTARG ;; r) res=$OPTARG ;; m) max=$OPTARG ;;
    *) sed -n '2,8p' "$0"; exit 1 ;;
  esac
done
mkdir -p "$out"
character=$out/I.h5
[ -e "$character" ] || bin/mesh-prep -q -c configs/letters/I.yaml -o "$character"

tilt() { # final tilt (degrees) of the I in sim.h5 $1, as scripts/letters-measure.py measures it
  scripts/letters-measure.py "$1" | awk '$1 == "tilt_deg" { print $NF }'
}

survives() { # survives SOLVER FORCE: 0 when the I stands at the end
  local cfg=$out/push_$1_$2.yaml sim=$out/push_$1_$2.h5
  sed -e "s/^  solver: qpcc /  solver: $1 /" -e "s/force: \[200, 0, 0\]/force: [$2, 0, 0]/" configs/letters/i_balance.yaml > "$cfg"
  grep -q "force: \[$2, 0, 0\]" "$cfg" && grep -q "solver: $1 " "$cfg" || { echo "letters-push: could not set the push in $cfg" >&2; exit 2; }
  [ -e "$sim" ] || bin/muscle-sim -q -c "$cfg" -o "$sim" "$character" || true
  local t; t=$(tilt "$sim")
  echo "  $1 $2 N: final tilt $t deg" >&2
  awk -v t="$t" 'BEGIN { exit !(t < 30) }'
}

printf "%-6s %s\n" solver "largest push survived at the head (N, 0.1 s)"
for solver in qpcc qp none; do
  lo=0 hi=$max
  if survives "$solver" "$hi"; then lo=$hi; else
    while [ $((hi - lo)) -gt "$res" ]; do
      mid=$(((lo + hi) / 2))
      if survives "$solver" "$mid"; then lo=$mid; else hi=$mid; fi
    done
  fi
  printf "%-6s %d (falls at %d)\n" "$solver" "$lo" "$hi"
done

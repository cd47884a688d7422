#!/usr/bin/env bash
# [T12] 7's behaviours, measured: every configs/letters/<letter>_<behaviour>.yaml run by
# muscle-sim with its own solver (QPCC) and with the static-contact QP ([T12]'s baseline), each
# measured by scripts/letters-measure.py, the QPCC run rendered (contact sheet, muscles drawn).
#
#   scripts/letters-table.sh [-o OUTDIR] [CONFIG ...]      (default: every behaviour config)
set -euo pipefail
cd "$(dirname "$0")/.."
out=results/letters-table
while getopts "o:h" opt; do
  case $opt in
    o) out=$OPTARG ;;
    *) sed -n '2,7p' "$0"; exit 1 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- configs/letters/[a-z]*_*.yaml
mkdir -p "$out"
for cfg in "$@"; do
  name=$(basename "$cfg" .yaml)
  letter=$(awk '/^pipeline:/ { p = 1; next } /^[^ #]/ { p = 0 } p && $1 == "character:" { print $2; exit }' "$cfg")
  character=$out/${letter%.yaml}.h5
  [ -e "$character" ] || bin/mesh-prep -q -c "$(dirname "$cfg")/$letter" -o "$character"
  for solver in qpcc qp; do
    run=$out/${name}_$solver
    sed "s/^  solver: qpcc/  solver: $solver/" "$cfg" > "$run.yaml"
    [ -e "$run.h5" ] || bin/muscle-sim -q -c "$run.yaml" -o "$run.h5" "$character" || true
    echo "== $name, $solver"
    [ -e "$run.h5" ] && scripts/letters-measure.py "$run.h5" | tail -n +2
  done
  [ -e "$out/${name}_qpcc_render/contact_sheet.png" ] || bin/render -q --no-movie --no-export -c "$cfg" -o "$out/${name}_qpcc_render" "$out/${name}_qpcc.h5"
done

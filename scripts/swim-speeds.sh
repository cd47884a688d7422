#!/usr/bin/env bash
# The fish of configs/reduced/fish_swim.yaml optimised for several target speeds ([P17] Fig. 20:
# achieved against target), each controller then replayed in the full FEM (fish_swim_full.yaml);
# prints one table row per speed (target, achieved in the reduced body, drift, objective,
# optimisation time, iterations, achieved and drift in the full FEM).
#
#   scripts/swim-speeds.sh [-o OUTDIR] [-t THREADS] [SPEED ...]     (default 0.05 0.1 0.2 m/s)
set -euo pipefail
cd "$(dirname "$0")/.."
out=results/reduced/speeds threads=2
while getopts "o:t:h" opt; do
  case $opt in
    o) out=$OPTARG ;;
    t) threads=$OPTARG ;;
    *) sed -n '2,8p' "$0"; exit 1 ;;
  esac
done
shift $((OPTIND - 1))
speeds=("$@")
[ ${#speeds[@]} -gt 0 ] || speeds=(0.05 0.1 0.2)
mkdir -p "$out"
[ -e "$out/fish.h5" ] || bin/mesh-prep -q -c configs/reduced/fish.yaml -o "$out/fish.h5"
attr() { h5dump -a "$2" "$1" | awk '/\(0\)/ { print $2; exit }'; }
val() { h5dump -d "$2" "$1" | awk '/\(0\)/ { print $2; exit }'; }
echo "| target (m/s) | reduced: achieved (m/s) | drift (m/s) | objective | optimisation (s) | iterations | full FEM: achieved (m/s) | drift (m/s) |"
echo "|---|---|---|---|---|---|---|---|"
for v in "${speeds[@]}"; do
  cfg=$out/fish_swim_$v.yaml full=$out/fish_swim_full_$v.yaml
  sed "s/^  target_speed: .*/  target_speed: $v/" configs/reduced/fish_swim.yaml | grep -v '^pipeline:\|^  character:' > "$cfg"
  sed "s/^  target_speed: .*/  target_speed: $v/" configs/reduced/fish_swim_full.yaml | grep -v '^pipeline:\|^  character:\|^  controller:' > "$full"
  bin/reduced-opt -q -c "$cfg" -o "$out/swim_$v.h5" --threads "$threads" "$out/fish.h5"
  bin/reduced-opt -q -c "$full" -o "$out/swim_full_$v.h5" "$out/fish.h5" "$out/swim_$v.h5"
  r=$out/swim_$v.h5 f=$out/swim_full_$v.h5
  printf '| %s | %.4f | %.4f | %.3g | %.0f | %s | %.4f | %.4f |\n' "$v" "$(val "$r" /objective/achieved_speed)" "$(val "$r" /objective/drift)" \
    "$(val "$r" /objective/total)" "$(attr "$r" /optimisation/seconds)" "$(attr "$r" /optimisation/iterations)" \
    "$(val "$f" /objective/achieved_speed)" "$(val "$f" /objective/drift)"
done

#!/usr/bin/env bash
# Benchmarks (make bench): prints median figures and writes them to bench/results/<machine>.csv
# (committed, one file per machine kind). Arguments: the benchmark programs built by make.
set -euo pipefail
cd "$(dirname "$0")/.."
machine="$(uname -m)-$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //; s/[^A-Za-z0-9]\+/-/g; s/-$//')-$(nproc)cpu"
mkdir -p bench/results results/bench
csv="bench/results/$machine.csv"
echo "benchmark,metric,value,unit" > "$csv.tmp"
record() { echo "$1,$2,$3,$4" >> "$csv.tmp"; printf '  %-28s %-28s %12s %s\n' "$1" "$2" "$3" "$4"; }

echo "== mesh-prep + skin-weights on the built-in Michelin character (median of 3)"
for i in 1 2 3; do
  bin/mesh-prep -q -c configs/michelin.yaml -o results/bench/character.h5
  bin/skin-weights -q -c configs/michelin.yaml -o results/bench/character.h5 results/bench/character.h5
  /usr/bin/python3 -c "import h5py; f=h5py.File('results/bench/character.h5'); print(f['report'].attrs['seconds'], f['skin'].attrs['seconds'])"
done > results/bench/prep_times.txt
read -r mp sw < <(sort -n -k2 results/bench/prep_times.txt | sed -n 2p)
record mesh-prep wall_seconds "$(printf %.3f "$mp")" s
record skin-weights bbw_solve_seconds "$(printf %.3f "$sw")" s

for prog in "$@"; do
  name=$(basename "$prog")
  echo "== $name"
  # programs print their report; lines "@ metric value unit" are the figures to record
  "$prog" results/bench/character.h5 > "results/bench/$name.txt"
  grep -v '^@ ' "results/bench/$name.txt" || true
  { grep '^@ ' "results/bench/$name.txt" || true; } | while read -r _ metric value unit; do record "$name" "$metric" "$value" "$unit"; done
done
mv "$csv.tmp" "$csv"
echo "written $csv"

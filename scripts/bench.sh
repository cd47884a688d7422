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

echo "== sample-openloop throughput on the march: 0.1 s segments, 1 rank and 2 ranks alternately (median of 3 each)"
cat > results/bench/sampling.yaml <<'CFG'
simulation: {solver: quick}
sampling: {segment: 0.1, samples: 96, elites: 8, end: 0.6}
CFG
bin/inverse-dynamics -q -c configs/march.yaml -o results/bench/march_ref.h5 results/bench/character.h5
for i in 1 2 3; do
  for n in 1 2; do
    rm -f results/bench/sampling_$n.h5 results/bench/sampling_$n.h5.ckpt
    mpiexec.mpich -n $n bin/sample-openloop -q -c results/bench/sampling.yaml -o results/bench/sampling_$n.h5 \
      results/bench/character.h5 results/bench/march_ref.h5
    /usr/bin/python3 -c "import h5py; a = h5py.File('results/bench/sampling_$n.h5')['run'].attrs; print($n, a['samples_per_second'], a['samples_per_second_per_rank'])"
  done
done > results/bench/sampling.txt
read -r _ r1 c1 < <(awk '$1 == 1' results/bench/sampling.txt | sort -g -k2 | sed -n 2p)
read -r _ r2 c2 < <(awk '$1 == 2' results/bench/sampling.txt | sort -g -k2 | sed -n 2p)
record sample-openloop samples_per_s_1_rank "$(printf %.1f "$r1")" samples/s
record sample-openloop samples_per_s_2_ranks "$(printf %.1f "$r2")" samples/s
record sample-openloop samples_per_s_per_rank_2_ranks "$(printf %.1f "$c2")" samples/s
record sample-openloop speedup_2_ranks_over_1 "$(awk -v a="$r2" -v b="$r1" 'BEGIN { printf "%.2f", a / b }')" x

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

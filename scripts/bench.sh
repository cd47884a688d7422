#!/usr/bin/env bash
# Benchmarks (make bench): prints the figures and APPENDS them, one dated row per figure, to
# bench/results/<machine>.csv (committed, one file per machine kind; columns date, commit,
# benchmark, metric, value, unit). Arguments: the benchmark programs built by make.
#
#   1. mesh-prep and skin-weights on the built-in Michelin (median of 3), inverse-dynamics of
#      the march clip (the reference of the rollout benchmark);
#   2. every benchmark program on that character ("@ metric value unit" lines are recorded;
#      bench_contact on the CMU Michelin of configs/michelin_cmu.yaml, whose skeleton SIMBICON's
#      configs name, and again on the biped of configs/biped.yaml, its figures named contact_biped_*;
#      bench_qpcc, [T12] Table 2's QPCC experiment, on its own random problems: no character;
#      bench_letters, [T12] Table 1's time per frame, on the letter I of configs/letters);
#   3. the step side by side with a baseline build of softcon (BASELINE, default the code
#      before the performance work of issue 11): bench/bench_pair.c is compiled against both
#      libraries and run alternately PAIRS times (the current one with the FEM pass in double,
#      then in single precision); medians of each and their ratios;
#   4. the scaling series: the same character from configs/michelin.yaml with mesh-prep's own
#      resolution settings scaled (SCALING, below: about 1.7K, 2.3K, 5.2K, 10K and 21K tets),
#      skin-weights, the step on each with the FEM pass in double and in single precision;
#      plotted by gnuplot (when installed) into docs/perf_scaling.png.
# Environment: BENCH_ONLY=sampling (only 1's preparation and the sampler's throughput: a few
# minutes), BENCH_ONLY=qpcc (only bench_qpcc: about a minute), BENCH_ONLY=letters (only bench_letters), BENCH_ONLY=reduced (only bench_reduced), BASELINE (a git revision; "none" skips 3), PAIRS (default 5), SCALING_ROUNDS
# (default 3: the meshes are timed in turn that many times, medians), SCALING ("none"
# skips 4; else levels "tetgen.target_tets:envelope.target_vertices:gains.fixed_spacing:
# tetgen.radius_edge:tetgen.min_dihedral", or "default" for configs/michelin.yaml as it is).
set -euo pipefail
cd "$(dirname "$0")/.."
# the machine's file: architecture, CPU name, family and model (hosts that all call themselves "AMD EPYC"
# have timed the same step at 165 and 219 us), cores
cpu_field() { grep -m1 "^$1[[:space:]]*:" /proc/cpuinfo | sed 's/.*: //'; }
machine="$(uname -m)-$(cpu_field 'model name' | sed 's/[^A-Za-z0-9]\+/-/g; s/-$//')-f$(cpu_field 'cpu family')m$(cpu_field model)-$(nproc)cpu"
BASELINE="${BASELINE:-a3b491a}"
PAIRS="${PAIRS:-5}"
SCALING="${SCALING:-1000:80:0.2:2.0:10 2000:150:0.1:2.0:10 default 10000:1000:0.05:1.5:15 18000:1800:0.04:1.5:15}"
out=results/bench
mkdir -p bench/results "$out"
csv="bench/results/$machine.csv"
header="date,commit,benchmark,metric,value,unit"
if [[ ! -f "$csv" ]]; then
  echo "$header" > "$csv"
elif [[ "$(head -1 "$csv")" != "$header" ]]; then
  # an older file without dates: its rows get the date and commit of its last commit
  old_date=$(git log -1 --format=%cs -- "$csv" 2>/dev/null || true)
  old_rev=$(git log -1 --format=%h -- "$csv" 2>/dev/null || true)
  { echo "$header"; tail -n +2 "$csv" | sed "s/^/${old_date:-unknown},${old_rev:-unknown},/"; } > "$csv.tmp" && mv "$csv.tmp" "$csv"
fi
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || rev="$rev+dirty"
rows="$out/rows.csv"
: > "$rows"
record() { echo "$now,$rev,$1,$2,$3,$4" >> "$rows"; printf '  %-28s %-40s %12s %s\n' "$1" "$2" "$3" "$4"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
# runs one benchmark program with its arguments: prints its report, records its "@ metric value unit" lines
run_bench() {
  local prog=$1 name
  name=$(basename "$prog")
  shift
  "$prog" "$@" > "$out/$name.txt"
  grep -v '^@ ' "$out/$name.txt" || true
  { grep '^@ ' "$out/$name.txt" || true; } | while read -r _ metric value unit; do record "$name" "$metric" "$value" "$unit"; done
}

# bench_qpcc: [T12] 8 / Table 2, the QPCC pivoting solver against the static-contact QP and branch
# and bound on ten random problems of 98 variables and 40 pairs (about a minute; no character)
if [[ "${BENCH_ONLY:-}" == qpcc ]]; then
  for prog in "$@"; do
    [[ "$(basename "$prog")" == bench_qpcc ]] || continue
    echo "== bench_qpcc"
    run_bench "$prog"
  done
  cat "$rows" >> "$csv"
  echo "appended $(wc -l < "$rows") rows to $csv"
  exit 0
fi

# bench_letters: [T12] Table 1's time per frame, the I balancing and jumping (configs/letters; a
# few minutes)
letters() {
  for prog in "$@"; do
    [[ "$(basename "$prog")" == bench_letters ]] || continue
    echo "== bench_letters"
    bin/mesh-prep -q -c configs/letters/I.yaml -o "$out/letter_I.h5"
    run_bench "$prog" i_balance "$out/letter_I.h5" configs/letters/i_balance.yaml 0.59 2.0
    mv "$out/bench_letters.txt" "$out/bench_letters_balance.txt"
    run_bench "$prog" i_jump "$out/letter_I.h5" configs/letters/i_jump.yaml 0.81 2.0
  done
}
if [[ "${BENCH_ONLY:-}" == letters ]]; then
  letters "$@"
  cat "$rows" >> "$csv"
  echo "appended $(wc -l < "$rows") rows to $csv"
  exit 0
fi

# bench_reduced: [P17]'s reduced body (lib/reduced) against the full FEM, side by side, on the
# letter I of configs/letters (its basis, step and error; half a minute)
reduced() {
  for prog in "$@"; do
    [[ "$(basename "$prog")" == bench_reduced ]] || continue
    echo "== bench_reduced"
    bin/mesh-prep -q -c configs/letters/I.yaml -o "$out/reduced_I.h5"
    run_bench "$prog" "$out/reduced_I.h5"
  done
}
if [[ "${BENCH_ONLY:-}" == reduced ]]; then
  reduced "$@"
  cat "$rows" >> "$csv"
  echo "appended $(wc -l < "$rows") rows to $csv"
  exit 0
fi

echo "== mesh-prep + skin-weights on the built-in Michelin character (median of 3)"
for i in 1 2 3; do
  bin/mesh-prep -q -c configs/michelin.yaml -o "$out/character.h5"
  bin/skin-weights -q -c configs/michelin.yaml -o "$out/character.h5" "$out/character.h5"
  printf '%s %s\n' "$(h5dump -a /report/seconds "$out/character.h5" | awk '/\(0\)/ { print $2 }')" \
                   "$(h5dump -a /skin/seconds "$out/character.h5" | awk '/\(0\)/ { print $2 }')"
done > "$out/prep_times.txt"
record mesh-prep wall_seconds "$(awk '{ print $1 }' "$out/prep_times.txt" | median)" s
record skin-weights bbw_solve_seconds "$(awk '{ print $2 }' "$out/prep_times.txt" | median)" s
bin/inverse-dynamics -q -c configs/march.yaml -o "$out/march_ref.h5" "$out/character.h5"

echo "== sample-openloop throughput on the march: 0.1 s segments, 1 rank and 2 ranks, double and single precision FEM alternately (median of 3 each)"
for prec in double single; do
  cat > "results/bench/sampling_$prec.yaml" <<CFG
simulation: {solver: exact, fem_precision: $prec}
sampling: {segment: 0.1, samples: 96, elites: 8, end: 0.6}
CFG
done
for i in 1 2 3; do
  for prec in double single; do
    for n in 1 2; do
      o=results/bench/sampling_${prec}_$n.h5
      rm -f "$o" "$o.ckpt"
      mpiexec.mpich -n $n bin/sample-openloop -q -c "results/bench/sampling_$prec.yaml" -o "$o" \
        results/bench/character.h5 results/bench/march_ref.h5
      /usr/bin/python3 -c "import h5py; a = h5py.File('$o')['run'].attrs; print('$prec', $n, a['samples_per_second'], a['samples_per_second_per_rank'])"
    done
  done
done > results/bench/sampling.txt
for prec in double single; do
  pre=; if [ $prec = single ]; then pre=f32_; fi
  read -r _ _ r1 c1 < <(awk -v p=$prec '$1 == p && $2 == 1' results/bench/sampling.txt | sort -g -k3 | sed -n 2p)
  read -r _ _ r2 c2 < <(awk -v p=$prec '$1 == p && $2 == 2' results/bench/sampling.txt | sort -g -k3 | sed -n 2p)
  record sample-openloop "${pre}samples_per_s_1_rank" "$(printf %.1f "$r1")" samples/s
  record sample-openloop "${pre}samples_per_s_2_ranks" "$(printf %.1f "$r2")" samples/s
  record sample-openloop "${pre}samples_per_s_per_rank_2_ranks" "$(printf %.1f "$c2")" samples/s
  record sample-openloop "${pre}speedup_2_ranks_over_1" "$(awk -v a="$r2" -v b="$r1" 'BEGIN { printf "%.2f", a / b }')" x
  if [ $prec = double ]; then d1=$r1 d2=$r2; fi
done
record sample-openloop single_over_double_1_rank "$(awk -v a="$r1" -v b="$d1" 'BEGIN { printf "%.2f", a / b }')" x
record sample-openloop single_over_double_2_ranks "$(awk -v a="$r2" -v b="$d2" 'BEGIN { printf "%.2f", a / b }')" x
if [ "${BENCH_ONLY:-}" = sampling ]; then
  cat "$rows" >> "$csv"
  echo "appended $(wc -l < "$rows") rows to $csv"
  exit 0
fi

# bench_contact walks SIMBICON on the CMU Michelin (its skeleton comes from a CMU clip)
cmu_ok=0
if SOFTCON_MOCAP_PATH="${SOFTCON_MOCAP_PATH:-../shared/mocap}" bin/mesh-prep -q -c configs/michelin_cmu.yaml -o "$out/character_cmu.h5" &&
  bin/skin-weights -q -c configs/michelin_cmu.yaml -o "$out/character_cmu.h5" "$out/character_cmu.h5"; then cmu_ok=1; fi

for prog in "$@"; do
  name=$(basename "$prog")
  [[ "$name" == bench_pair ]] && continue # run below, against the baseline
  if [[ "$name" == bench_qpcc ]]; then    # its own problems, no character
    echo "== $name"
    run_bench "$prog"
    continue
  fi
  if [[ "$name" == bench_letters ]]; then # the letters, above
    letters "$prog"
    continue
  fi
  if [[ "$name" == bench_reduced ]]; then # the reduced body, above
    reduced "$prog"
    continue
  fi
  char="$out/character.h5"
  if [[ "$name" == bench_contact ]]; then
    [[ $cmu_ok == 1 ]] || { echo "== $name: skipped (the CMU Michelin could not be built: set SOFTCON_MOCAP_PATH to the CMU clips)"; continue; }
    char="$out/character_cmu.h5"
  fi
  echo "== $name"
  # programs print their report; lines "@ metric value unit" are the figures to record
  "$prog" "$char" > "$out/$name.txt"
  if [[ "$name" == bench_contact ]] && bin/mesh-prep -q -c configs/biped.yaml -o "$out/biped.h5" &&
    bin/skin-weights -q -c configs/biped.yaml -o "$out/biped.h5" "$out/biped.h5"; then
    "$prog" "$out/biped.h5" --label biped >> "$out/$name.txt"
  fi
  grep -v '^@ ' "$out/$name.txt" || true
  { grep '^@ ' "$out/$name.txt" || true; } | while read -r _ metric value unit; do record "$name" "$metric" "$value" "$unit"; done
done

pair_bin=""
for prog in "$@"; do [[ "$(basename "$prog")" == bench_pair ]] && pair_bin="$prog"; done
if [[ "$BASELINE" != none && -n "$pair_bin" ]]; then
  echo "== the step side by side with the baseline $BASELINE ($PAIRS alternating runs each, exact ODE solver)"
  base_src="build/baseline-$(git rev-parse --short "$BASELINE")"
  if [[ ! -f "$base_src/lib/libsoftcon.a" ]]; then
    rm -rf "$base_src" && mkdir -p "$base_src"
    git archive "$BASELINE" | tar -x -C "$base_src"
    make -s -C "$base_src" -j2 lib/libsoftcon.a > "$out/baseline_build.log" 2>&1
  fi
  cflags="-std=c11 -D_GNU_SOURCE -O2 -march=x86-64-v3 $(pkg-config --cflags hdf5-serial yaml-0.1 ode)"
  libs="$(pkg-config --libs hdf5-serial yaml-0.1 ode lapacke openblas mpich) -lcholmod -lm -lpthread"
  # shellcheck disable=SC2086
  gcc $cflags -DBENCH_PAIR_BASELINE -I"$base_src/lib" bench/bench_pair.c "$base_src/lib/libsoftcon.a" $libs -o "$out/bench_pair_baseline"
  : > "$out/pair.txt"
  for i in $(seq "$PAIRS"); do
    "$out/bench_pair_baseline" "$out/character.h5" | sed 's/^@ /baseline /' >> "$out/pair.txt"
    "$pair_bin" "$out/character.h5" | sed 's/^@ /current /' >> "$out/pair.txt"
    "$pair_bin" "$out/character.h5" --fem-single | sed 's/^@ /current_f32 /' >> "$out/pair.txt"
  done
  for metric in $(awk '{ print $2 }' "$out/pair.txt" | sort -u); do
    key=$(echo "$metric" | sed 's/^pair_//; s/_median$//')
    b=$(awk -v m="$metric" '$1 == "baseline" && $2 == m { print $3 }' "$out/pair.txt" | median)
    c=$(awk -v m="$metric" '$1 == "current" && $2 == m { print $3 }' "$out/pair.txt" | median)
    c32=$(awk -v m="$metric" '$1 == "current_f32" && $2 == m { print $3 }' "$out/pair.txt" | median)
    record bench_pair "baseline_${key}_median" "$b" us
    record bench_pair "current_${key}_median" "$c" us
    record bench_pair "baseline_over_current_${key}" "$(awk -v b="$b" -v c="$c" 'BEGIN { printf "%.2f", b / c }')" x
    record bench_pair "current_f32_${key}_median" "$c32" us
    record bench_pair "baseline_over_current_f32_${key}" "$(awk -v b="$b" -v c="$c32" 'BEGIN { printf "%.2f", b / c }')" x
  done
fi

if [[ "$SCALING" != none ]]; then
  echo "== scaling: the step against the number of tets (configs/michelin.yaml at other resolutions)"
  sim_bin=""
  for prog in "$@"; do [[ "$(basename "$prog")" == bench_sim ]] && sim_bin="$prog"; done
  : > "$out/scaling.dat"
  meshes=()
  for level in $SCALING; do
    n=${level%%:*}
    cfg="$out/michelin_$n.yaml"
    if [[ "$level" == default ]]; then
      cp configs/michelin.yaml "$cfg"
    else
      IFS=: read -r tt ev fs re md <<< "$level"
      sed "s/^\(  target_tets: *\)[0-9]*/\1$tt/; /^envelope:/,/^[a-z]/ s/^\(  target_vertices: *\)[0-9]*/\1$ev/;
           s/^\(    torque_limit: 200 .*\)/\1\n    fixed_spacing: $fs/; s/^\(  radius_edge: *\)[0-9.]*/\1$re/;
           s/^\(  min_dihedral: *\)[0-9.]*/\1$md/" configs/michelin.yaml > "$cfg"
    fi
    bin/mesh-prep -q -c "$cfg" -o "$out/scaling_$n.h5"
    bin/skin-weights -q -c "$cfg" -o "$out/scaling_$n.h5" "$out/scaling_$n.h5"
    meshes+=("$out/scaling_$n.h5")
  done
  # the meshes and both FEM precisions in turn, SCALING_ROUNDS times: a neighbour's load falls on all of them alike
  : > "$out/scaling_runs.txt"
  for round in $(seq "${SCALING_ROUNDS:-3}"); do
    for mesh in "${meshes[@]}"; do
      for prec in double single; do
        "$sim_bin" "$mesh" --only $prec --steps 600 > "$out/scaling_run.txt"
        awk -v m="$mesh" -v p=$prec '$2 == "sim_tets" { t = $3 } $2 == "sim_step_median" { s = $3 } $2 == "sim_fem_forces_median" { f = $3 }
                                     END { print m, p, t, s, f }' "$out/scaling_run.txt" >> "$out/scaling_runs.txt"
      done
    done
  done
  # scaling.dat: tets, then step and FEM medians in double, then in single precision
  for mesh in "${meshes[@]}"; do
    tets=$(awk -v m="$mesh" '$1 == m { print $3; exit }' "$out/scaling_runs.txt")
    row="$tets"
    for prec in double single; do
      pre=; if [ $prec = single ]; then pre=f32_; fi
      step=$(awk -v m="$mesh" -v p=$prec '$1 == m && $2 == p { print $4 }' "$out/scaling_runs.txt" | median)
      fem=$(awk -v m="$mesh" -v p=$prec '$1 == m && $2 == p { print $5 }' "$out/scaling_runs.txt" | median)
      row="$row $step $fem"
      record scaling "${pre}step_median_${tets}_tets" "$step" us
      record scaling "${pre}fem_median_${tets}_tets" "$fem" us
    done
    echo "$row" >> "$out/scaling.dat"
  done
  # linear growth: the cost per tet of the largest mesh against the smallest's
  sort -n -o "$out/scaling.dat" "$out/scaling.dat"
  read -r t0 s0 f0 s0f f0f < <(head -1 "$out/scaling.dat")
  read -r t1 s1 f1 s1f f1f < <(tail -1 "$out/scaling.dat")
  per_tet() { awk -v a="$1" -v b="$2" -v n0="$t0" -v n1="$t1" 'BEGIN { printf "%.2f", (b / n1) / (a / n0) }'; }
  # at most 1: the step grows no faster than the number of tets (its fixed part, the ODE step,
  # makes it less); the FEM pass alone should stay near 1
  record scaling step_per_tet_largest_over_smallest "$(per_tet "$s0" "$s1")" x
  record scaling fem_per_tet_largest_over_smallest "$(per_tet "$f0" "$f1")" x
  record scaling f32_step_per_tet_largest_over_smallest "$(per_tet "$s0f" "$s1f")" x
  record scaling f32_fem_per_tet_largest_over_smallest "$(per_tet "$f0f" "$f1f")" x
  if command -v gnuplot > /dev/null; then
    gnuplot <<EOF
set terminal pngcairo size 800,560 font ",11" noenhanced
set output "docs/perf_scaling.png"
set title "Coupled step against mesh size (built-in Michelin, $machine)"
set xlabel "tetrahedra"
set ylabel "median time (us)"
set key below Left reverse
set grid
set xrange [0:*]
set yrange [0:*]
step_linear(x) = $s0f / $t0 * x
fem_linear(x) = $f0f / $t0 * x
plot "$out/scaling.dat" using 1:2 with linespoints lw 2 pt 7 lc rgb "#1f77b4" title "whole step, FEM in double", \
     "$out/scaling.dat" using 1:3 with linespoints lw 2 pt 5 lc rgb "#ff7f0e" title "FEM forces, double", \
     "$out/scaling.dat" using 1:4 with linespoints lw 2 pt 6 dt 4 lc rgb "#1f77b4" title "whole step, FEM in single", \
     "$out/scaling.dat" using 1:5 with linespoints lw 2 pt 4 dt 4 lc rgb "#ff7f0e" title "FEM forces, single", \
     step_linear(x) with lines dt 2 lc rgb "gray40" title "proportional to the tets (through the smallest mesh, single)", \
     fem_linear(x) with lines dt 3 lc rgb "gray60" title ""
EOF
    echo "  plot: docs/perf_scaling.png"
  else
    echo "  (gnuplot not installed: no plot)"
  fi
fi

cat "$rows" >> "$csv"
echo "appended $(wc -l < "$rows") rows to $csv"

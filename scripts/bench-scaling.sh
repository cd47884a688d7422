#!/usr/bin/env bash
# The sampler's scaling over ranks x threads (issue 34): runs sample-openloop on a fixed preset at
# each layout, prints wall time, samples/s, speed-up and efficiency (samples/s against P x T
# times 1 x 1's: the first layout when it is 1x1, else --base-rate, else one copy's rate of
# --contention when it starts with 1, which is the first segment only), the peak memory of all ranks
# together and the timeline's shares (par.h: simulate, wait, share, checkpoint, other), checks that
# every layout wrote the same controller, and appends the figures to bench/results/<machine>.csv
# (as scripts/bench.sh). --contention "1 8 16" first runs that many independent one-rank copies
# of one segment at once: the machine's own ceiling (memory bandwidth, clocks) for any layout.
#
#   scripts/bench-scaling.sh [--layouts "1x1 2x1 4x1 1x4"] [--preset march|march-default|walk]
#                            [--bin DIR] [--work DIR] [--character FILE --reference FILE]
#                            [--base-rate SAMPLES_PER_S] [--contention "1 16"]
#                            [--label TEXT] [--no-record] [--launcher ARGS]
#
# Presets: march (the built-in Michelin's march, 0.6 s = 6 segments of 320 samples and 32 elites;
# FEM in single precision, exact ODE solver), march-default (the same clip at the configs' default
# sampling: 1000 samples, 100 elites), walk (the CMU walk 02_01 on michelin_cmu, 1000 / 100, the
# first 1.2 s: needs ../shared/mocap). The character and reference are made with the tools of
# --bin into --work unless given. Needs only the tools, mpiexec and h5dump (no Python), so a
# bundle (../shared/tools/bundle-for-device.sh) runs it on a machine without the Debian packages.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
layouts="1x1 2x1"
preset=march
bin=$root/bin
work=$root/results/bench-scaling
character= reference= label= record=1 base_rate= contention=
launcher="${MPIEXEC:-mpiexec.mpich}"
while [ $# -gt 0 ]; do
  case "$1" in
    --layouts) layouts=$2; shift 2 ;;
    --preset) preset=$2; shift 2 ;;
    --bin) bin=$(cd "$2" && pwd); shift 2 ;;
    --work) mkdir -p "$2"; work=$(cd "$2" && pwd); shift 2 ;;
    --character) character=$2; shift 2 ;;
    --reference) reference=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --base-rate) base_rate=$2; shift 2 ;;
    --contention) contention=$2; shift 2 ;;
    --no-record) record=0; shift ;;
    --launcher) launcher=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-scaling: unknown argument '$1' (see --help)" >&2; exit 1 ;;
  esac
done
case "$preset" in march|march-default|walk) ;; *) echo "bench-scaling: unknown preset '$preset' (march, march-default, walk)" >&2; exit 1 ;; esac
for l in $layouts; do
  [[ "$l" =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "bench-scaling: layout '$l' is not RANKSxTHREADS (e.g. 4x1)" >&2; exit 1; }
done
mkdir -p "$work"
attr() { h5dump -a "$2" "$1" | awk '/\(0\)/ { print $2; exit }'; }

# ---- the character and its reference -----------------------------------------------------------
if [ -z "$character" ]; then
  character=$work/character_$preset.h5 reference=$work/reference_$preset.h5
  if [ ! -f "$reference" ]; then
    echo "== making the character and the reference of the $preset preset into $work"
    if [ "$preset" = walk ]; then
      export SOFTCON_MOCAP_PATH="${SOFTCON_MOCAP_PATH:-$root/../shared/mocap}"
      "$bin/mesh-prep" -q -c configs/michelin_cmu.yaml -o "$character"
      "$bin/skin-weights" -q -c configs/michelin_cmu.yaml -o "$character" "$character"
      "$bin/inverse-dynamics" -q -c configs/walk.yaml -o "$reference" "$character"
    else
      "$bin/mesh-prep" -q -c configs/michelin.yaml -o "$character"
      "$bin/skin-weights" -q -c configs/michelin.yaml -o "$character" "$character"
      "$bin/inverse-dynamics" -q -c configs/march.yaml -o "$reference" "$character"
    fi
  fi
fi
[ -n "$reference" ] || { echo "bench-scaling: --character needs --reference" >&2; exit 1; }

cfg=$work/$preset.yaml
case "$preset" in
  march) sampling="{segment: 0.1, samples: 320, elites: 32, end: 0.6}" ;;
  march-default) sampling="{segment: 0.1, samples: 1000, elites: 100, end: 0.6}" ;;
  walk) sampling="{segment: 0.1, samples: 1000, elites: 100, end: 1.2}" ;;
esac
cat > "$cfg" <<CFG
# scripts/bench-scaling.sh, preset $preset
simulation: {solver: exact, fem_precision: single}
sampling: $sampling
CFG

now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || rev="$rev+dirty"
rows=$work/rows.csv
: > "$rows"

# ---- the machine's own ceiling: independent one-rank copies at once -----------------------------
if [ -n "$contention" ]; then
  printf 'simulation: {solver: exact, fem_precision: single}\nsampling: {segment: 0.1, samples: 320, elites: 32, end: 0.1}\n' > "$work/one.yaml"
  one=
  for n in $contention; do
    for i in $(seq 1 "$n"); do "$bin/sample-openloop" -q -c "$work/one.yaml" -o "$work/copy_${n}_$i.h5" "$character" "$reference" & done
    wait
    rate=$(for i in $(seq 1 "$n"); do attr "$work/copy_${n}_$i.h5" /run/samples_per_second; done | awk '{ s += $1; k++ } END { printf "%.2f", s / k }')
    rm -f "$work"/copy_"${n}"_*.h5
    [ -n "$one" ] || one=$rate
    [ -n "$base_rate" ] || [ "$n" != 1 ] || [ "${layouts%% *}" = 1x1 ] || { base_rate=$rate; echo "== efficiency below against one copy of one segment: $rate samples/s"; }
    echo "== $n independent copies at once: $rate samples/s each ($(awk -v a="$rate" -v b="$one" 'BEGIN { printf "%.0f", 100 * a / b }') % of one alone)"
    echo "$now,$rev,bench-scaling${label:+ $label},contention_${n}_copies_samples_per_s_each,$rate,samples/s" >> "$rows"
  done
fi

# ---- the layouts --------------------------------------------------------------------------------
cpu=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //')
echo "== sample-openloop, preset $preset ($sampling), on $(nproc) cpus: $cpu"
printf '%-7s %9s %9s %8s %10s %11s  %s\n' layout wall_s samples/s speedup efficiency memory_GB "timeline (all ranks)"
first=
for l in $layouts; do
  ranks=${l%x*} threads=${l#*x}
  out=$work/${preset}_$l.h5
  rm -f "$out" "$out.ckpt"
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  $launcher -n "$ranks" "$bin/sample-openloop" -c "$cfg" -o "$out" --threads "$threads" "$character" "$reference" 2> "$work/${preset}_$l.log" ||
    { echo "bench-scaling: layout $l failed (exit $?): $work/${preset}_$l.log" >&2; tail -5 "$work/${preset}_$l.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  sampled=$(attr "$out" /run/wall_seconds)
  rate=$(attr "$out" /run/samples_per_second)
  [ -n "$base_rate" ] || { [ "$l" = 1x1 ] && base_rate=$rate; } || { echo "bench-scaling: the first layout is not 1x1: give --base-rate" >&2; exit 1; }
  speedup=$(awk -v a="$rate" -v b="$base_rate" 'BEGIN { printf "%.2f", a / b }')
  eff=$(awk -v s="$speedup" -v n=$((ranks * threads)) 'BEGIN { printf "%.0f", 100 * s / n }')
  mem=$(h5dump -d /run/peak_memory "$out" | awk '/\([0-9]+\)/ { sub(/^.*\): */, ""); n = split($0, v, /, */); for (i = 1; i <= n; i++) s += v[i] } END { printf "%.2f", s / 1e9 }')
  shares=$(sed -n "s/.*the ranks' time: //p" "$work/${preset}_$l.log" | tail -1)
  printf '%-7s %9s %9.2f %8s %9s%% %11s  %s\n' "$l" "$sampled" "$rate" "${speedup}x" "$eff" "$mem" "$shares"
  # the same controller whatever the layout
  h5dump -d /segments/offsets -d /segments/steps -d /segments/cost "$out" | grep -v "^HDF5" > "$work/${preset}_$l.controller"
  if [ -z "$first" ]; then first=$l; elif ! cmp -s "$work/${preset}_$first.controller" "$work/${preset}_$l.controller"; then
    echo "bench-scaling: layout $l wrote another controller than $first: the result must not depend on the layout" >&2; exit 4
  fi
  m="${preset}_${l}"
  for kv in "wall_seconds $sampled s" "process_wall_seconds $wall s" "samples_per_s $rate samples/s" "speedup $speedup x" "efficiency $eff %" "peak_memory_all_ranks $mem GB"; do
    set -- $kv
    echo "$now,$rev,bench-scaling${label:+ $label},${m}_$1,$2,$3" >> "$rows"
  done
done
echo "== every layout wrote the same controller (/segments/offsets, steps and cost)"
if [ "$record" = 1 ]; then
  machine="$(uname -m)-$(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //; s/[^A-Za-z0-9]\+/-/g; s/-$//')-f$(grep -m1 '^cpu family' /proc/cpuinfo | sed 's/.*: //')m$(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | sed 's/.*: //')-$(nproc)cpu"
  csv=$root/bench/results/$machine.csv
  [ -f "$csv" ] || echo "date,commit,benchmark,metric,value,unit" > "$csv"
  cat "$rows" >> "$csv"
  echo "appended $(wc -l < "$rows") rows to $csv"
fi

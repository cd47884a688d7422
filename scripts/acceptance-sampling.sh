#!/usr/bin/env bash
# The sampler's acceptance runs (issue 9): sample-openloop on the whole CMU walk and run
# (michelin_cmu) and the march (built-in Michelin), each replayed by simulate and rendered with
# the tracked reference as a ghost, then one table of what openloop.h5's /report and /run say.
#
#   scripts/acceptance-sampling.sh [-o OUTDIR] [-n RANKS] [-s SAMPLES] [-e ELITES] [GAIT...]
#
# GAIT: walk run march (default: all three). -s/-e override sampling.samples/elites of the
# configs (1000/100; the table says what was used). Hours of CPU at the configs' sizes: run it
# niced on a quiet machine or under Slurm (scripts/slurm/sample-openloop.sbatch).
set -euo pipefail
cd "$(dirname "$0")/.."
out=results/acceptance ranks=$(nproc) samples= elites=
while getopts "o:n:s:e:h" opt; do
  case $opt in
    o) out=$OPTARG ;; n) ranks=$OPTARG ;; s) samples=$OPTARG ;; e) elites=$OPTARG ;;
    *) sed -n '2,10p' "$0"; exit 1 ;;
  esac
done
shift $((OPTIND - 1))
gaits=("$@")
[ ${#gaits[@]} -gt 0 ] || gaits=(walk run march)
export SOFTCON_MOCAP_PATH="${SOFTCON_MOCAP_PATH:-$PWD/../shared/mocap}"
mkdir -p "$out"
attr() { h5dump -a "/$2/$3" "$1" 2>/dev/null | sed -n 's/^ *(0): *//p' | head -1; }

for g in "${gaits[@]}"; do
  case $g in
    walk | run) chcfg=configs/michelin_cmu.yaml character=$out/michelin_cmu.h5 ;;
    march) chcfg=configs/michelin.yaml character=$out/michelin.h5 ;;
    *) echo "acceptance-sampling: unknown gait '$g' (walk, run, march)" >&2; exit 1 ;;
  esac
  if [ ! -e "$character" ]; then
    bin/mesh-prep -q -c "$chcfg" -o "$character"
    bin/skin-weights -q -c "$chcfg" -o "$character" "$character"
  fi
  cfg=$out/$g.yaml
  # the gait's config with the sample counts asked for (a copy next to the results, so the
  # relative paths it names still resolve: motion.bvh is looked up in SOFTCON_MOCAP_PATH)
  cp "configs/$g.yaml" "$cfg"
  [ -n "$samples" ] && sed -i "s/^  samples: [0-9]*/  samples: $samples/" "$cfg"
  [ -n "$elites" ] && sed -i "s/^  elites: [0-9]*/  elites: $elites/" "$cfg"
  bin/inverse-dynamics -q -c "$cfg" -o "$out/${g}_ref.h5" "$character"
  rm -f "$out/${g}_openloop.h5"
  t0=$(date +%s)
  mpiexec.mpich -n "$ranks" bin/sample-openloop -c "$cfg" -o "$out/${g}_openloop.h5" --resume "$character" "$out/${g}_ref.h5" \
    > "$out/${g}_sampling.log" 2>&1 || echo "acceptance-sampling: $g: sample-openloop exit $? (see $out/${g}_sampling.log)"
  echo "$g $(( $(date +%s) - t0 ))" >> "$out/wall_seconds.txt"
  [ -e "$out/${g}_openloop.h5" ] || continue
  bin/simulate -q -c "$cfg" -o "$out/${g}_sim.h5" --trajectory "$out/${g}_openloop.h5" "$character" || true
  [ -e "$out/${g}_sim.h5" ] && bin/render -q --reference "$out/${g}_ref.h5" -o "$out/${g}_render" "$out/${g}_sim.h5" || true
done

{
  echo "| gait | samples/elites | completed | segments | RMS joint error | root drift | root height error | final cost | samples | backtracks | wall time ($ranks ranks) | samples/s |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for g in "${gaits[@]}"; do
    f=$out/${g}_openloop.h5
    [ -e "$f" ] || { echo "| $g | | no output | | | | | | | | | |"; continue; }
    s=$(sed -n 's/^  samples: *\([0-9]*\).*/\1/p' "$out/$g.yaml" | head -1) e=$(sed -n 's/^  elites: *\([0-9]*\).*/\1/p' "$out/$g.yaml" | head -1)
    rms=$(attr "$f" report rms_joint_error_rad)
    printf "| %s | %s/%s | %s | %s of %s | %.1f deg | %.2f m | %.3f m | %.1f | %s | %s | %.0f s | %.1f |\n" "$g" "$s" "$e" \
      "$(attr "$f" report completed)" "$(attr "$f" report segments)" "$(attr "$f" report segments_of_clip)" \
      "$(echo "$rms * 57.29578" | bc -l)" "$(attr "$f" report root_drift_m)" "$(attr "$f" report root_height_error_m)" \
      "$(attr "$f" report final_cost)" "$(attr "$f" report samples)" "$(attr "$f" report backtracks)" \
      "$(attr "$f" run wall_seconds)" "$(attr "$f" run samples_per_second)"
  done
} | tee "$out/table.md"

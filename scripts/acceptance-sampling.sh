#!/usr/bin/env bash
# The sampler's acceptance runs (issue 9): sample-openloop on the whole CMU walk and run
# (michelin_cmu) and the march (built-in Michelin), each replayed by simulate and rendered with
# the tracked reference as a ghost, then one table of what openloop.h5's /report and /run say.
#
#   scripts/acceptance-sampling.sh [-o OUTDIR] [-n RANKS] [-s SAMPLES] [-e ELITES] [-A] [GAIT...]
#
# GAIT: walk run march jump jumpkick ... (a configs/GAIT.yaml with a motion; default: walk run
# march). -s/-e override sampling.samples/elites of the configs (the table says what was used).
# -A: the ablation instead, every gait sampled four times: base targets {id, reference (raw
# poses)} x {time scaling, none}. Hours of CPU at the configs' sizes: run it niced on a quiet
# machine or under Slurm (scripts/slurm/sample-openloop.sbatch).
set -euo pipefail
cd "$(dirname "$0")/.."
out=results/acceptance ranks=$(nproc) samples= elites= ablation=
while getopts "o:n:s:e:Ah" opt; do
  case $opt in
    o) out=$OPTARG ;; n) ranks=$OPTARG ;; s) samples=$OPTARG ;; e) elites=$OPTARG ;; A) ablation=1 ;;
    *) sed -n '2,12p' "$0"; exit 1 ;;
  esac
done
shift $((OPTIND - 1))
gaits=("$@")
[ ${#gaits[@]} -gt 0 ] || gaits=(walk run march)
export SOFTCON_MOCAP_PATH="${SOFTCON_MOCAP_PATH:-$PWD/../shared/mocap}"
mkdir -p "$out"
attr() { h5dump -a "/$2/$3" "$1" 2>/dev/null | sed -n 's/^ *(0): *//p' | head -1; }

# CONFIG KEY VALUE: sets sampling.KEY (adds a sampling section when there is none)
set_sampling() {
  grep -q '^sampling:' "$1" || printf '\nsampling:\n' >> "$1"
  sed -i "/^sampling:/,/^[^ #]/{/^  $2:/d}" "$1"
  sed -i "s/^sampling:.*/&\n  $2: $3/" "$1"
}
runs=()
for g in "${gaits[@]}"; do
  if [ -n "$ablation" ]; then runs+=("$g:id:true" "$g:id:false" "$g:reference:true" "$g:reference:false")
  else runs+=("$g"); fi
done

for r in "${runs[@]}"; do
  IFS=: read -r g initial scaling <<< "$r"
  [ -e "configs/$g.yaml" ] || { echo "acceptance-sampling: no configs/$g.yaml" >&2; exit 1; }
  if [ "$g" = march ]; then chcfg=configs/michelin.yaml character=$out/michelin.h5
  else chcfg=configs/michelin_cmu.yaml character=$out/michelin_cmu.h5; fi
  name=$g${initial:+_$initial}${scaling:+_scaling_$scaling}
  if [ ! -e "$character" ]; then
    bin/mesh-prep -q -c "$chcfg" -o "$character"
    bin/skin-weights -q -c "$chcfg" -o "$character" "$character"
  fi
  # the gait's config with what was asked for (a copy next to the results: motion.bvh is
  # looked up in SOFTCON_MOCAP_PATH)
  cfg=$out/$name.yaml
  cp "configs/$g.yaml" "$cfg"
  [ -n "$samples" ] && set_sampling "$cfg" samples "$samples"
  [ -n "$elites" ] && set_sampling "$cfg" elites "$elites"
  [ -n "$initial" ] && set_sampling "$cfg" initial "$initial" && set_sampling "$cfg" time_scaling "$scaling"
  [ -e "$out/${g}_ref.h5" ] || bin/inverse-dynamics -q -c "$cfg" -o "$out/${g}_ref.h5" "$character"
  rm -f "$out/${name}_openloop.h5" "$out/${name}_openloop.h5.ckpt"
  mpiexec.mpich -n "$ranks" bin/sample-openloop -c "$cfg" -o "$out/${name}_openloop.h5" "$character" "$out/${g}_ref.h5" \
    > "$out/${name}_sampling.log" 2>&1 || echo "acceptance-sampling: $name: sample-openloop exit $? (see $out/${name}_sampling.log)"
  [ -e "$out/${name}_openloop.h5" ] || continue
  [ -n "$ablation" ] && continue
  bin/simulate -q -c "$cfg" -o "$out/${name}_sim.h5" --trajectory "$out/${name}_openloop.h5" "$character" || true
  [ -e "$out/${name}_sim.h5" ] && bin/render -q --reference "$out/${g}_ref.h5" -o "$out/${name}_render" "$out/${name}_sim.h5" || true
done

{
  echo "| gait | samples/elites | completed | segments | RMS joint error | root drift | root height error | final cost | samples | backtracks | wall time ($ranks ranks) | samples/s |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for r in "${runs[@]}"; do
    IFS=: read -r g initial scaling <<< "$r"
    name=$g${initial:+_$initial}${scaling:+_scaling_$scaling}
    f=$out/${name}_openloop.h5
    [ -e "$f" ] || { echo "| $name | | no output | | | | | | | | | |"; continue; }
    s=$(sed -n 's/^  samples: *\([0-9]*\).*/\1/p' "$out/$name.yaml" | head -1) e=$(sed -n 's/^  elites: *\([0-9]*\).*/\1/p' "$out/$name.yaml" | head -1)
    rms=$(attr "$f" report rms_joint_error_rad)
    printf "| %s | %s/%s | %s | %s of %s | %.1f deg | %.2f m | %.3f m | %.1f | %s | %s | %.0f s | %.1f |\n" "$name" "$s" "$e" \
      "$(attr "$f" report completed)" "$(attr "$f" report segments)" "$(attr "$f" report segments_of_clip)" \
      "$(awk -v r="$rms" 'BEGIN { print r * 57.29578 }')" "$(attr "$f" report root_drift_m)" "$(attr "$f" report root_height_error_m)" \
      "$(attr "$f" report final_cost)" "$(attr "$f" report samples)" "$(attr "$f" report backtracks)" \
      "$(attr "$f" run wall_seconds)" "$(attr "$f" run samples_per_second)"
  done
} | tee "$out/table${ablation:+_ablation}.md"

#!/usr/bin/env bash
# Issue 28 item 1's acceptance on real bodies: MakeHuman's male_generic (../shared/meshes) and a
# body of other proportions made from it (scripts/body-variant.py: hips and arms 1.2 x), each with
# the CMU skeleton of cmu_02_01_walk.bvh and no other key (the README's OBJ recipe): mesh-prep,
# skin-weights, standing 5 s (configs/stand.yaml), then the CMU walk's first second (frames 1-120)
# by inverse-dynamics and sample-openloop with configs/walk.yaml's sampler. Prints one table.
# About 15-30 minutes on 2 cores (the sampling); run it niced on a shared machine.
#
#   scripts/real-bodies.sh [-o OUTDIR] [-n RANKS] [-s SAMPLES]
set -euo pipefail
cd "$(dirname "$0")/.."
out=results/real-bodies ranks=2 samples=
while getopts "o:n:s:h" opt; do
  case $opt in
    o) out=$OPTARG ;; n) ranks=$OPTARG ;; s) samples=$OPTARG ;;
    *) sed -n '2,9p' "$0"; exit 1 ;;
  esac
done
export SOFTCON_MOCAP_PATH="${SOFTCON_MOCAP_PATH:-$PWD/../shared/mocap}"
meshes="${SOFTCON_MESH_PATH:-$PWD/../shared/meshes}"
[ -e "$meshes/male_generic.obj" ] || { echo "real-bodies: no $meshes/male_generic.obj (SOFTCON_MESH_PATH)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
attr() { h5dump -a "/$2/$3" "$1" 2>/dev/null | sed -n 's/^ *(0): *//p' | head -1; }

# the walk's first second: frames 1..120 of the 120 fps clip
walk=$out/walk_1s.yaml
sed 's/^  frames: \[1, -1\]/  frames: [1, 120]/' configs/walk.yaml > "$walk"
grep -q '^  frames: \[1, 120\]' "$walk" || { echo "real-bodies: configs/walk.yaml has no 'frames: [1, -1]' to narrow" >&2; exit 1; }
[ -n "$samples" ] && sed -i "s/^  samples: [0-9]*/  samples: $samples/" "$walk"

body() { # NAME OBJ: character, skin, stand, walk
  local name=$1 obj=$2
  printf 'skeleton: {bvh: cmu_02_01_walk.bvh, gains: {kp: 1500, kd: 80, torque_limit: 400}}\nbody: {obj: %s, scale: 0.1}\n' "$obj" > "$out/$name.yaml"
  bin/mesh-prep -c "$out/$name.yaml" -o "$out/$name.h5" > "$out/${name}_mesh-prep.log" 2>&1
  bin/skin-weights -q -c "$out/$name.yaml" -o "$out/${name}_skin.h5" "$out/$name.h5"
  bin/simulate -q -c configs/stand.yaml -o "$out/${name}_stand.h5" "$out/${name}_skin.h5"
  bin/inverse-dynamics -q -c "$walk" -o "$out/${name}_walk_ref.h5" "$out/${name}_skin.h5"
  rm -f "$out/${name}_walk_openloop.h5" "$out/${name}_walk_openloop.h5.ckpt"
  mpiexec.mpich -n "$ranks" bin/sample-openloop -c "$walk" -o "$out/${name}_walk_openloop.h5" "$out/${name}_skin.h5" "$out/${name}_walk_ref.h5" \
    > "$out/${name}_sampling.log" 2>&1 || echo "real-bodies: $name: sample-openloop exit $? (see $out/${name}_sampling.log)"
}
body male_generic "$meshes/male_generic.obj"
scripts/body-variant.py "$meshes/male_generic.obj" "$out/male_generic.h5" "$out/wide_long.obj"
body wide_long "$out/wide_long.obj"

# the pelvis's height (bone 0's origin) in a sim.h5's first and last frame
pelvis_y() { h5dump -d /bones/position -s "$2,0,1" -c "1,1,1" "$1" 2>/dev/null | sed -n 's/^ *([0-9,]*): *\([-0-9.e]*\).*/\1/p' | head -1; }
{
  echo "| body | tets | stand 5 s | pelvis at the start, end | walk 1 s: completed | segments | RMS joint error | final cost | wall time ($ranks ranks) |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for name in male_generic wide_long; do
    f=$out/${name}_walk_openloop.h5 s=$out/${name}_stand.h5
    rms=$(attr "$f" report rms_joint_error_rad)
    last=$(($(h5dump -H -d /time "$s" | sed -n 's/.*SIMPLE { ( \([0-9]*\) ).*/\1/p' | head -1) - 1))
    printf "| %s | %s | %s | %.4f, %.4f m | %s | %s of %s | %.1f deg | %.1f | %.0f s |\n" "$name" "$(attr "$out/$name.h5" report tets)" \
      "$(h5dump -a /status "$s" | sed -n 's/^ *(0): *//p')" "$(pelvis_y "$s" 0)" "$(pelvis_y "$s" "$last")" \
      "$(attr "$f" report completed)" "$(attr "$f" report segments)" "$(attr "$f" report segments_of_clip)" \
      "$(awk -v r="${rms:-0}" 'BEGIN { print r * 57.29578 }')" "$(attr "$f" report final_cost)" "$(attr "$f" run wall_seconds)"
  done
} | tee "$out/table.md"

#!/usr/bin/env bash
# The main job on the built-in default character: installs dependencies, builds, and runs
# every stage that exists into results/quickstart/. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
make -j"$(nproc)" all
OUT=results/quickstart
mkdir -p "$OUT"
export SOFTCON_MOCAP_PATH="${SOFTCON_MOCAP_PATH:-$PWD/../shared/mocap}"

echo "== mesh-prep: built-in Michelin character"
bin/mesh-prep -c configs/michelin.yaml -o "$OUT/character.h5" --surface-obj "$OUT/surface.obj" --envelope-obj "$OUT/envelope.obj"

echo "== skin-weights: bounded biharmonic weights"
bin/skin-weights -c configs/michelin.yaml -o "$OUT/character.h5" "$OUT/character.h5"

echo "== inverse-dynamics: the project's march-in-place motion (mocap/march_in_place.bvh)"
bin/inverse-dynamics -c configs/march.yaml -o "$OUT/march_ref.h5" "$OUT/character.h5"

echo "== simulate: standing, then a push, then the march's inverse-dynamics targets alone (it falls)"
bin/simulate -c configs/stand.yaml -o "$OUT/stand.h5" "$OUT/character.h5"
bin/simulate -c configs/push.yaml -o "$OUT/push.h5" "$OUT/character.h5"
bin/simulate -c configs/stand.yaml -o "$OUT/march_id_only.h5" --trajectory "$OUT/march_ref.h5" "$OUT/character.h5"

echo "== sample-openloop: a controller for the march by sampling (SAMCON) on $(nproc) ranks"
rm -f "$OUT/march_openloop.h5.ckpt"
mpiexec.mpich -n "$(nproc)" bin/sample-openloop -c configs/march.yaml -o "$OUT/march_openloop.h5" "$OUT/character.h5" "$OUT/march_ref.h5"
bin/simulate -c configs/march.yaml -o "$OUT/march.h5" --trajectory "$OUT/march_openloop.h5" "$OUT/character.h5"

echo "== learn-feedback: the march's gait cycle on closed loop (4 cycles sampled, a feedback policy, 20 s of marching)"
rm -f "$OUT/march_loop_openloop.h5.ckpt" "$OUT/march_loop_policy.h5.ckpt" "$OUT/march_loop_policy.h5.ckpt.samcon"
mpiexec.mpich -n "$(nproc)" bin/sample-openloop -c configs/march_loop.yaml -o "$OUT/march_loop_openloop.h5" "$OUT/character.h5" "$OUT/march_ref.h5"
mpiexec.mpich -n "$(nproc)" bin/learn-feedback -c configs/march_loop.yaml -o "$OUT/march_loop_policy.h5" "$OUT/character.h5" "$OUT/march_loop_openloop.h5"
evaluation() { h5dump -a "/evaluation/$1" "$OUT/march_loop_policy.h5" | sed -n 's/^ *(0): //p'; }
CLOSED_LOOP="the march on closed loop (learn-feedback's test: $(evaluation closedloop_survived_s) of $(evaluation test_seconds) s before a fall)"
# a fall that ends in a numerical failure (exit 4) is a result: its output is kept, marked failed
rc=0
bin/simulate -c configs/march_loop.yaml -o "$OUT/march_loop.h5" --policy "$OUT/march_loop_policy.h5" --cycles 17 "$OUT/character.h5" || rc=$?
if [ "$rc" -ne 0 ]; then
  [ "$rc" -eq 4 ] || exit "$rc"
  CLOSED_LOOP="$CLOSED_LOOP; it fell, then failed numerically: h5dump -a /status $OUT/march_loop.h5"
fi

echo "== render: pictures, movies, exports and plots"
bin/render --camera front -o "$OUT/push_render" "$OUT/push.h5"
bin/render --reference "$OUT/march_ref.h5" -o "$OUT/march_render" "$OUT/march.h5"
bin/render --reference "$OUT/march_ref.h5" --no-export -o "$OUT/march_id_only_render" "$OUT/march_id_only.h5"
# beside its movie: the closed loop to turn around in a browser (one HTML file) and in Blender (glTF)
bin/render --no-export -o "$OUT/march_loop_render" --html "$OUT/march_loop_render/march_loop.html" \
  --gltf "$OUT/march_loop_render/march_loop.glb" "$OUT/march_loop.h5"
scripts/plot.sh -o "$OUT/plots" "$OUT/push.h5" "$OUT/march.h5" "$OUT/march_ref.h5" "$OUT/march_loop_policy.h5" > /dev/null

cat <<MSG

Done. Look at:
  $OUT/character.h5     the character (h5dump -A, h5py)
  $OUT/character.xdmf   open in ParaView: tet mesh with fixed-node bone labels (and skin weights)
  $OUT/surface.obj      the fine surface; envelope.obj the coarse envelope (Blender, MeshLab)
MSG
echo "  $OUT/march_ref.h5     inverse dynamics of the march: reference, contact forces, torques, PD targets"
echo "  $OUT/march_openloop.h5  the sampled controller (h5dump -A -g /report: how well it tracks)"
echo "  $OUT/march_render/contact_sheet.png  the character marching under it, the reference as a blue ghost"
echo "  $OUT/march_id_only_render/contact_sheet.png  the inverse-dynamics targets alone: it falls"
echo "  $OUT/march_loop_policy.h5  the feedback policy of the march's cycle (h5dump -g /evaluation: pushes, stiffness)"
echo "  $OUT/march_loop_render/contact_sheet.png  $CLOSED_LOOP"
echo "  $OUT/march_loop_render/march_loop.html  open it in a browser: orbit, play, skeleton, key figures (no server needed)"
echo "  $OUT/march_loop_render/march_loop.glb  glTF 2.0 (Blender: File > Import > glTF 2.0, Shading: Smooth)"
for f in "$OUT"/stand.xdmf "$OUT"/push.xdmf "$OUT"/march.xdmf; do [ -f "$f" ] && echo "  $f   ParaView: the simulation over time"; done
for d in "$OUT/push_render" "$OUT/march_render" "$OUT/march_id_only_render" "$OUT/march_loop_render"; do
  echo "  $d/contact_sheet.png   frames $d/frame_00000.png .. $(basename "$(ls "$d"/frame_*.png | tail -1)")"
  if [ -f "$d/movie.mp4" ]; then echo "  $d/movie.mp4"; else echo "  (no movie in $d: ffmpeg is not installed)"; fi
  if ls "$d"/*_frames.xdmf > /dev/null 2>&1; then echo "  $d/*_frames.xdmf (ParaView), *_surface.obj + .pc2 (Blender Mesh Cache), *_skeleton.bvh"; fi
done
echo "  $OUT/plots/*.png   momentum, energy, contact, tracking; march_ref torques and contact forces; the policy's pushes and stiffness"
exit 0

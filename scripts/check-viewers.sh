#!/usr/bin/env bash
# Opens softcon's exports in the real viewers, headless, and checks what they load against the
# HDF5 files:
#  - ParaView (pvpython, python3-paraview): every .xdmf under RESULTS_DIR through the Xdmf3
#    reader: time steps, blocks, point and cell counts, connectivity, field names and values
#    (scripts/viewers/check_paraview.py, one pvpython per file: a bad XDMF aborts ParaView);
#  - Blender (blender -b): every NAME_surface.obj + NAME_surface.pc2 through the OBJ importer and
#    a Mesh Cache modifier, and NAME_skeleton.bvh through the BVH importer: positions at the
#    first, middle and last frame against NAME_frames.h5 (the BVH's joints against the file's
#    own forward kinematics, and those within 2 mm of the simulated joints: a BVH has fixed bone
#    lengths) (scripts/viewers/check_blender.py);
#    every NAME.glb (render --gltf) through the glTF importer: shape keys and bone nodes against
#    NAME_frames.h5 beside it;
#  - Chromium (headless, SwiftShader): every NAME.html (render --html) from its file:// URL: no
#    console error, the character's silhouette at two times against NAME_frames.h5's surface
#    projected through the same camera, and the frame rate it plays at; every NAME.glb through
#    three.js's GLTFLoader (Debian's libjs-three r111): morph targets and bone nodes at two times
#    against NAME_frames.h5, the drawn silhouette, the frame rate (scripts/viewers/check_chromium.py).
# A viewer that is not installed is skipped, and the summary says so (--require: an error).
# Install them with scripts/install-deps.sh --viewers. SOFTCON_VIEWER_SHOTS=DIR keeps Chromium's
# screenshots there.
#
# usage: scripts/check-viewers.sh [--require] RESULTS_DIR
# exit: 0 every check that ran passed, 1 usage, 2 a check failed (or a viewer aborted on a
#       file), 5 --require and a viewer is missing
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
require=0
if [ "${1:-}" = "--require" ]; then require=1; shift; fi
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: scripts/check-viewers.sh [--require] RESULTS_DIR   (a folder holding softcon outputs)" >&2
  exit 1
fi
dir="$(cd "$1" && pwd)"

mapfile -t xdmfs < <(find "$dir" -name '*.xdmf' -type f | sort)
mapfile -t objs < <(find "$dir" -name '*_surface.obj' -type f | sort)
mapfile -t glbs < <(find "$dir" -name '*.glb' -type f | sort)
mapfile -t htmls < <(find "$dir" -name '*.html' -type f | sort)
if [ ${#xdmfs[@]} -eq 0 ] && [ ${#objs[@]} -eq 0 ] && [ ${#glbs[@]} -eq 0 ] && [ ${#htmls[@]} -eq 0 ]; then
  echo "check-viewers: $dir holds no .xdmf, NAME_surface.obj, .glb or .html: nothing to check" >&2
  exit 2
fi

failed=0 missing=0
paraview="skipped" blender="skipped" chromium="skipped"
if [ ${#xdmfs[@]} -eq 0 ]; then
  paraview="nothing to check"
elif ! command -v pvpython >/dev/null; then
  echo "check-viewers: SKIPPED ParaView: pvpython is not installed (scripts/install-deps.sh --viewers)"
  missing=1
else
  bad=0
  for x in "${xdmfs[@]}"; do
    log="$(pvpython "$here/viewers/check_paraview.py" "$x" 2>&1)"
    rc=$?
    if [ $rc -eq 0 ] || [ $rc -eq 2 ]; then
      grep -E '^(ok|FAIL) ' <<<"$log"
    else
      echo "FAIL  paraview $x: pvpython exited with $rc; its last words:"
      grep -v '^ *[0-9]* *0x' <<<"$log" | tail -5 | sed 's/^/        /'
    fi
    [ $rc -eq 0 ] || bad=$((bad + 1))
  done
  paraview="$(( ${#xdmfs[@]} - bad )) of ${#xdmfs[@]} .xdmf ok ($(pvpython --version 2>/dev/null | tail -1))"
  [ $bad -eq 0 ] || failed=1
fi

if [ ${#objs[@]} -eq 0 ] && [ ${#glbs[@]} -eq 0 ]; then
  blender="nothing to check"
elif ! command -v blender >/dev/null; then
  echo "check-viewers: SKIPPED Blender: blender is not installed (scripts/install-deps.sh --viewers)"
  missing=1
else
  log="$(blender -b --factory-startup --python-exit-code 3 --python "$here/viewers/check_blender.py" -- "${objs[@]}" "${glbs[@]}" 2>&1)"
  rc=$?
  grep -E '^(ok|FAIL) ' <<<"$log"
  nok=$(grep -c '^ok .*_surface\.obj:' <<<"$log")
  nglb=$(grep -c '^ok .*\.glb:' <<<"$log")
  if [ $rc -ne 0 ] || [ "$nok" -ne ${#objs[@]} ] || [ "$nglb" -ne ${#glbs[@]} ]; then
    failed=1
    [ $rc -eq 0 ] || [ $rc -eq 2 ] || { echo "FAIL  blender exited with $rc; its last words:"; tail -5 <<<"$log" | sed 's/^/        /'; }
  fi
  blender="$nok of ${#objs[@]} OBJ + PC2 ok, $nglb of ${#glbs[@]} glTF ok ($(blender --version 2>/dev/null | head -1))"
fi

chromium_bin="$(command -v chromium || command -v chromium-browser || true)"
if [ ${#htmls[@]} -eq 0 ] && [ ${#glbs[@]} -eq 0 ]; then
  chromium="nothing to check"
elif [ -z "$chromium_bin" ]; then
  echo "check-viewers: SKIPPED Chromium: chromium is not installed (scripts/install-deps.sh --viewers)"
  missing=1
else
  py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3 # Debian's, with python3-h5py
  log="$("$py" "$here/viewers/check_chromium.py" ${SOFTCON_VIEWER_SHOTS:+--keep "$SOFTCON_VIEWER_SHOTS"} "${htmls[@]}" "${glbs[@]}" 2>&1)"
  rc=$?
  grep -E '^(ok|FAIL) ' <<<"$log"
  nok=$(grep -c '^ok .*\.html:' <<<"$log")
  nglb=$(grep -c '^ok .*\.glb:' <<<"$log")
  if [ $rc -ne 0 ] || [ "$nok" -ne ${#htmls[@]} ] || [ "$nglb" -ne ${#glbs[@]} ]; then
    failed=1
    [ $rc -eq 0 ] || [ $rc -eq 2 ] || { echo "FAIL  chromium check exited with $rc; its last words:"; tail -5 <<<"$log" | sed 's/^/        /'; }
  fi
  chromium="$nok of ${#htmls[@]} HTML ok, $nglb of ${#glbs[@]} glTF ok ($("$chromium_bin" --version 2>/dev/null | head -1))"
fi

echo "check-viewers: ParaView: $paraview; Blender: $blender; Chromium: $chromium"
if [ $failed -ne 0 ]; then exit 2; fi
if [ $missing -ne 0 ] && [ $require -ne 0 ]; then
  echo "check-viewers: --require: a viewer is missing" >&2
  exit 5
fi
exit 0

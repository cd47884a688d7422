#!/usr/bin/env bash
# Runs every softcon stage a config asks for, in order, into OUTDIR; a stage whose output is
# newer than all its inputs (configs, input files, the tool itself) is skipped, so re-running
# after an edit redoes only what changed.
#
#   scripts/pipeline.sh [-o OUTDIR] [-n RANKS] [-c CHARACTER_CONFIG] CONFIG
#
# Stages (each when the config, or the character config it names, has the sections):
#   mesh-prep + skin-weights  character.h5     (sections skeleton/body...; or pipeline.character;
#                                               a boneless character: mesh-prep alone)
#   inverse-dynamics          NAME_ref.h5      (motion)
#   sample-openloop           NAME_openloop.h5 (sampling; mpiexec.mpich -n RANKS, --resume)
#   learn-feedback            NAME_policy.h5   (feedback; when bin/learn-feedback exists)
#   simulate                  NAME_sim.h5      (the policy for 20 s, else the open loop replayed;
#                                               a config without sampling: its own controller)
#   network-sample            NAME_explore.h5  (parameterize: a motion network's controllers over an
#                                               objective, [BK] 7; mpiexec.mpich -n RANKS; plots)
#   muscle-sim                NAME_sim.h5      (muscle_control: a boneless character, [T12];
#     or muscle-sample                          with muscle_sampling: mpiexec.mpich -n RANKS)
#   reduced-opt               NAME_swim.h5     (swim: a reduced body's DMP swimming controller, [P17];
#                                               --threads RANKS; pipeline.controller: the config
#                                               whose swim.h5 is replayed, run first)
#   render                    NAME_render/     (an open loop with the tracked reference as a ghost)
#   obstacle-clearance        NAME_clearance.png (ground.boxes: how the feet passed each box)
# The config's optional `pipeline:` section: character (the config the character is built
# from, next to CONFIG; default CONFIG itself), reference (the config whose inverse-dynamics
# reference is tracked; default CONFIG itself), controller (reduced-opt: the config whose
# swim.h5 is replayed) and name (default: CONFIG's file name).
# -c builds the character from CHARACTER_CONFIG instead (the same SIMBICON walker on another
# body: -c configs/biped.yaml configs/simbicon/walk_rigid.yaml). OUTDIR/character.h5 is rebuilt
# whenever the config it was built from changes.
set -euo pipefail
cd "$(dirname "$0")/.."
out=results/pipeline ranks=$(nproc) chcfg=
while getopts "o:n:c:h" opt; do
  case $opt in
    o) out=$OPTARG ;;
    n) ranks=$OPTARG ;;
    c) chcfg=$OPTARG; [ -f "$chcfg" ] || { echo "pipeline: $chcfg: no such file" >&2; exit 3; } ;;
    *) sed -n '2,31p' "$0"; exit 1 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { sed -n '2,31p' "$0"; exit 1; }
cfg=$1
[ -f "$cfg" ] || { echo "pipeline: $cfg: no such file" >&2; exit 3; }
export SOFTCON_MOCAP_PATH="${SOFTCON_MOCAP_PATH:-$PWD/../shared/mocap}"
mkdir -p "$out"

has() { grep -q "^$2:" "$1"; }                         # top-level section present
key() { awk -v k="$2" '/^pipeline:/ { p = 1; next } /^[^ #]/ { p = 0 } p && $1 == k":" { print $2; exit }' "$1"; }
newer() { # newer OUT IN...: OUT exists and is newer than every IN
  local o=$1; shift
  [ -e "$o" ] || return 1
  for i in "$@"; do [ "$o" -nt "$i" ] || return 1; done
}
stage() { echo "== $*"; }
skip() { echo "== $1: $2 is up to date"; }

name=$(key "$cfg" name); name=${name:-$(basename "$cfg" .yaml)}
if [ -z "$chcfg" ]; then
  chcfg=$(key "$cfg" character)
  if [ -n "$chcfg" ]; then chcfg="$(dirname "$cfg")/$chcfg"; else chcfg=$cfg; fi
fi
character=$out/character.h5 built_from=$out/character.h5.config

if has "$chcfg" skeleton || has "$chcfg" body; then
  if newer "$character" "$chcfg" bin/mesh-prep bin/skin-weights && [ "$(cat "$built_from" 2>/dev/null)" = "$(realpath "$chcfg")" ]; then
    skip mesh-prep "$character"
  else
    stage "mesh-prep + skin-weights: $chcfg"
    rm -f "$built_from"
    bin/mesh-prep -c "$chcfg" -o "$character"
    has "$chcfg" skeleton && bin/skin-weights -c "$chcfg" -o "$character" "$character"
    realpath "$chcfg" > "$built_from"
  fi
fi
[ -e "$character" ] || { echo "pipeline: no character: $cfg has no mesh-prep sections and no pipeline.character" >&2; exit 2; }

refcfg=$(key "$cfg" reference)
if [ -n "$refcfg" ]; then refcfg="$(dirname "$cfg")/$refcfg"; else refcfg=$cfg; fi
refname=$(key "$refcfg" name); refname=${refname:-$(basename "$refcfg" .yaml)}
ref=$out/${refname}_ref.h5
if has "$refcfg" motion; then
  if newer "$ref" "$refcfg" "$character" bin/inverse-dynamics; then skip inverse-dynamics "$ref"; else
    stage "inverse-dynamics: $refcfg"
    bin/inverse-dynamics -c "$refcfg" -o "$ref" "$character"
  fi
fi

controller=
ol=$out/${name}_openloop.h5
if has "$cfg" sampling && [ -e "$ref" ]; then
  # a checkpoint beside it: an interrupted run's path so far (exit 6), to be continued
  if [ ! -e "$ol.ckpt" ] && newer "$ol" "$cfg" "$character" "$ref" bin/sample-openloop; then skip sample-openloop "$ol"; else
    stage "sample-openloop on $ranks rank(s): $cfg"
    mpiexec.mpich -n "$ranks" bin/sample-openloop -c "$cfg" -o "$ol" --resume "$character" "$ref"
  fi
  controller=$ol
fi

policy=$out/${name}_policy.h5
if has "$cfg" feedback && [ -x bin/learn-feedback ] && [ -e "$ol" ]; then
  if newer "$policy" "$cfg" "$character" "$ol" bin/learn-feedback; then skip learn-feedback "$policy"; else
    stage "learn-feedback on $ranks rank(s): $cfg"
    mpiexec.mpich -n "$ranks" bin/learn-feedback -c "$cfg" -o "$policy" --resume "$character" "$ol"
  fi
fi

if [ -n "$controller" ] || { has "$cfg" controller && ! has "$cfg" sampling; }; then
  sim=$out/${name}_sim.h5
  ctl=() inputs=()
  if [ -n "$controller" ]; then ctl=(--trajectory "$controller") && inputs=("$controller"); fi
  if [ -e "$policy" ]; then ctl=(--policy "$policy") && inputs=("$policy"); fi  # 20 s unless simulation.duration says
  if newer "$sim" "$cfg" "$character" ${inputs[@]+"${inputs[@]}"} bin/simulate; then skip simulate "$sim"; else
    stage "simulate: ${ctl[*]:-the config controller}"
    bin/simulate -c "$cfg" -o "$sim" ${ctl[@]+"${ctl[@]}"} "$character"
  fi
  rdir=$out/${name}_render
  if newer "$rdir/contact_sheet.png" "$sim" bin/render; then skip render "$rdir"; else
    stage "render: $rdir"
    if [ -e "$policy" ] || [ -z "$controller" ]; then bin/render -o "$rdir" "$sim"; else bin/render --reference "$controller" -o "$rdir" "$sim"; fi
  fi
  if awk '/^ground:/ { g = 1; next } /^[^ #]/ { g = 0 } g && $1 == "boxes:" { f = 1 } END { exit !f }' "$cfg"; then
    clear=$out/${name}_clearance.png
    if newer "$clear" "$sim"; then skip obstacle-clearance "$clear"; else
      stage "obstacle-clearance: $clear"
      scripts/obstacle-clearance.py --plot "$clear" "$sim" || echo "pipeline: obstacle-clearance: $sim did not clear its obstacles, or could not be measured (above)" >&2
    fi
  fi
fi
if has "$cfg" parameterize; then
  explore=$out/${name}_explore.h5
  netcfg=$(awk '/^parameterize:/ { p = 1; next } /^[^ #]/ { p = 0 } p && $1 == "network:" { print $2; exit }' "$cfg")
  if [ ! -e "$explore.ckpt" ] && newer "$explore" "$cfg" "$(dirname "$cfg")/$netcfg" "$character" bin/network-sample; then skip network-sample "$explore"; else
    stage "network-sample on $ranks rank(s): $cfg"
    mpiexec.mpich -n "$ranks" bin/network-sample -c "$cfg" -o "$explore" --resume "$character"
  fi
  if newer "$out/${name}_explore_rounds.png" "$explore"; then skip plots "$out/${name}_explore_rounds.png"; else scripts/plot.sh "$explore"; fi
fi
if has "$cfg" muscle_control; then
  sim=$out/${name}_sim.h5 rdir=$out/${name}_render
  if has "$cfg" muscle_sampling; then
    if newer "$sim" "$cfg" "$character" bin/muscle-sample; then skip muscle-sample "$sim"; else
      stage "muscle-sample: $cfg ($ranks ranks)"
      mpiexec.mpich -n "$ranks" bin/muscle-sample -c "$cfg" -o "$sim" "$character"
    fi
  elif newer "$sim" "$cfg" "$character" bin/muscle-sim; then skip muscle-sim "$sim"; else
    stage "muscle-sim: $cfg"
    bin/muscle-sim -c "$cfg" -o "$sim" "$character"
  fi
  if newer "$rdir/contact_sheet.png" "$sim" "$cfg" bin/render; then skip render "$rdir"; else
    stage "render: $rdir"
    bin/render -c "$cfg" -o "$rdir" "$sim"
  fi
fi
if has "$cfg" swim; then
  swim=$out/${name}_swim.h5 swimctl=()
  ctlcfg=$(key "$cfg" controller)
  if [ -n "$ctlcfg" ]; then # the controller's own run first (skipped when up to date)
    ctlcfg="$(dirname "$cfg")/$ctlcfg"
    ctlname=$(key "$ctlcfg" name); ctlname=${ctlname:-$(basename "$ctlcfg" .yaml)}
    scripts/pipeline.sh -o "$out" -n "$ranks" "$ctlcfg" | sed '/^pipeline: done/d'
    swimctl=("$out/${ctlname}_swim.h5")
  fi
  if newer "$swim" "$cfg" "$character" ${swimctl[@]+"${swimctl[@]}"} bin/reduced-opt; then skip reduced-opt "$swim"; else
    stage "reduced-opt: $cfg"
    bin/reduced-opt -c "$cfg" -o "$swim" --threads "$ranks" "$character" ${swimctl[@]+"${swimctl[@]}"}
  fi
fi
echo "pipeline: done; outputs in $out"

#!/usr/bin/env bash
# Installs every Debian package softcon needs (bookworm). Idempotent and non-interactive:
# packages already present are skipped. Run as root (or it uses sudo when available).
#   --viewers  also ParaView (python3-paraview: pvpython), Blender and Chromium, for scripts/check-viewers.sh
#   --slurm    also Slurm (slurmctld, slurmd, sbatch) and munge, for scripts/slurm/local-cluster.sh
set -euo pipefail

PACKAGES=(
  build-essential pkg-config git
  libode-dev                       # rigid skeleton (lib/sim/skeleton.c)
  libopenblas-dev liblapacke-dev   # dense linear algebra
  libsuitesparse-dev               # CHOLMOD (skin-weights)
  tetgen                           # tetrahedralization, run as a program (AGPL: never linked)
  mpich libmpich-dev               # sample-openloop across ranks (mpicc.mpich / mpiexec.mpich)
  libyaml-dev                      # configs
  libhdf5-dev hdf5-tools           # all data files (pkg-config hdf5-serial), h5dump
  python3 python3-h5py python3-numpy python3-yaml  # tests read outputs the way users do; the experiment runner
  gnuplot-nox ffmpeg               # plots and movies (optional at run time)
  clang libclang-rt-14-dev llvm    # make fuzz: libFuzzer harnesses (tests/fuzz), llvm-cov for their coverage
  cppcheck clang-format            # make lint (static analysis, scripts/cppcheck-baseline.txt), make check-format
  libjs-three                      # three.js r111, embedded into render --html's pages at build time
)
for opt in "$@"; do
  case "$opt" in
    --viewers) PACKAGES+=(python3-paraview blender chromium) ;;
    --slurm) PACKAGES+=(slurmctld slurmd slurm-client munge) ;;
    *) echo "usage: scripts/install-deps.sh [--viewers] [--slurm]" >&2; exit 1 ;;
  esac
done

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "install-deps: need root to install: ${missing[*]}" >&2; exit 3
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"

#!/usr/bin/env bash
# The test command: installs dependencies, builds everything, runs every test.
# Ends with the line "N passed, N failed". Extra arguments select tests by name.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
make -j"$(nproc)" all
make test T="$*"

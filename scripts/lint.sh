#!/usr/bin/env bash
# Static analysis: cppcheck on lib/ and cmd/ (warnings, portability, errors). A finding is
# accepted only when scripts/cppcheck-baseline.txt lists its file and check id with the reason it
# is not a defect (matched without line numbers, so moving code does not break it); anything
# else fails with exit 1, printed as file:line.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cppcheck > /dev/null || { echo "lint: cppcheck is not installed (apt-get install cppcheck)"; exit 3; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# the dependencies' defines (ODE's dDOUBLE) so that the code is analysed as it is built
# ODE is built in double precision on Debian (ode/precision.h, a system header cppcheck does not read)
defs="-DdDOUBLE $(pkg-config --cflags-only-other ode 2> /dev/null || true)"
cppcheck --quiet --enable=warning,portability --std=c11 -D_GNU_SOURCE $defs -Ilib -Icmd --inline-suppr \
  --template='{file}:{line}: {id}: {message}' -j"$(nproc)" lib cmd 2> "$out"
status=0 n=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  n=$((n + 1))
  file=${line%%:*}
  id=$(echo "$line" | sed -E 's/^[^:]+:[0-9]+: ([A-Za-z0-9_]+):.*/\1/')
  if ! grep -qE "^$file $id( |$)" scripts/cppcheck-baseline.txt; then
    echo "$line"
    status=1
  fi
done < "$out"
if [ $status -ne 0 ]; then
  echo "lint: findings above are not in scripts/cppcheck-baseline.txt: fix them, or add 'file id  # why it is not a defect'"
  exit 1
fi
echo "lint: cppcheck clean ($n findings, all in the reviewed baseline)"

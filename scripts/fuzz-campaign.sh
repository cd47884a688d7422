#!/usr/bin/env bash
# The acceptance campaign of issue 14 (tests/fuzz/README.md): at least 10 million executions
# of each text-format harness (BVH, OBJ, YAML) and 1 million of each HDF5 reader, one harness
# at a time (niced: it takes only idle CPU; FUZZ_FORK=N for N processes), in slices of SLICE
# seconds on the corpora that persist in build/fuzz/corpus. Resumable: slices already logged are
# counted, not rerun (FORCE=1 reruns them). Results: build/fuzz/logs, one table per harness in
# build/fuzz/campaign.md.
# Usage: nice -n 19 scripts/fuzz-campaign.sh [NAME...]     (CPU-heavy: hours)
set -uo pipefail
cd "$(dirname "$0")/.."
make fuzz-build CC=clang BUILD=build/fuzz OPT="-O1 -g -fno-omit-frame-pointer" \
  SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" >/dev/null
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(fuzz_character fuzz_trajectory fuzz_reference fuzz_openloop fuzz_policy fuzz_bvh fuzz_obj fuzz_config)
mkdir -p build/fuzz/logs
out=build/fuzz/campaign.md
status=0
for name in "${names[@]}"; do
  # no execution budget in fork mode: run in slices until the count is reached
  if compgen -G "tests/fuzz/corpus/$name/*.h5" > /dev/null; then target=${H5_EXECS:-1000000}
  else target=${TEXT_EXECS:-10000000}; fi
  total=0 slice=${SLICE:-3600} n=0
  while [ $total -lt "$target" ]; do
    f="build/fuzz/logs/$name.campaign.$n.txt"
    if [ -s "$f" ] && [ -z "${FORCE:-}" ]; then :; else
      FUZZ_FORK=${FUZZ_FORK:-0} scripts/fuzz.sh build/fuzz/fuzzers "$slice" "${FLAGS:-}" "$name" > "$f" 2>&1 || { status=1; cat "$f"; break; }
    fi
    e=$(grep -E "^\| $name " "$f" | cut -d'|' -f3 | tr -d ' ')
    total=$((total + ${e:-0})); n=$((n + 1))
    echo "$name: slice $n: ${e:-?} executions, $total of $target"
  done
  { echo "## $name ($(date -u +%FT%TZ)): $total executions"; cat build/fuzz/logs/$name.campaign.*.txt | grep -E '^\| |^   '; } >> "$out"
done
exit $status

#!/usr/bin/env bash
# The acceptance campaign of issue 14 (tests/fuzz/README.md): at least 10 million executions
# of each text-format harness (BVH, OBJ, YAML) and 1 million of each HDF5 reader, one harness
# at a time, niced, on the corpora that persist in build/fuzz/corpus. Resumable: a harness
# whose log already shows its target is skipped (FORCE=1 reruns). Results: build/fuzz/logs,
# one table per harness in build/fuzz/campaign.md.
# Usage: nice -n 19 scripts/fuzz-campaign.sh [NAME...]     (CPU-heavy: hours)
set -uo pipefail
cd "$(dirname "$0")/.."
make fuzz-build CC=clang BUILD=build/fuzz OPT="-O1 -g -fno-omit-frame-pointer" \
  SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" LIB_EXCLUDE=lib/sim/fem.c >/dev/null
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(fuzz_bvh fuzz_obj fuzz_config fuzz_trajectory fuzz_character fuzz_reference)
mkdir -p build/fuzz/logs
out=build/fuzz/campaign.md
status=0
for name in "${names[@]}"; do
  if compgen -G "tests/fuzz/corpus/$name/*.h5" > /dev/null; then
    # fork mode has no execution budget: run in slices until the count is reached
    target=${H5_EXECS:-1000000} total=0 slice=${H5_SLICE:-3600} n=0
    while [ $total -lt "$target" ]; do
      scripts/fuzz.sh build/fuzz/fuzzers "$slice" "${FLAGS:-}" "$name" > "build/fuzz/logs/$name.campaign.$n.txt" 2>&1 || status=1
      e=$(grep -E "^\| $name " "build/fuzz/logs/$name.campaign.$n.txt" | cut -d'|' -f3 | tr -d ' ')
      total=$((total + ${e:-0})); n=$((n + 1))
      echo "$name: slice $n: ${e:-?} executions, $total of $target"
    done
  else
    scripts/fuzz.sh build/fuzz/fuzzers 86400 "-runs=${TEXT_EXECS:-10000000} ${FLAGS:-}" "$name" \
      > "build/fuzz/logs/$name.campaign.0.txt" 2>&1 || status=1
    grep -E "^\| $name " "build/fuzz/logs/$name.campaign.0.txt"
  fi
  { echo "## $name ($(date -u +%FT%TZ))"; cat build/fuzz/logs/$name.campaign.*.txt | grep -E '^\| |^   '; } >> "$out"
done
exit $status

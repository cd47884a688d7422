#!/usr/bin/env bash
# Runs a test program as N interleaved shares side by side (SOFTCON_TEST_SHARD=i/N, tests/main.c),
# each into its own log, then prints the logs in order and the summed "N passed, N failed".
#   scripts/test-shards.sh N TEST_PROGRAM [FILTER...]
set -uo pipefail
n=$1
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/softcon_shards.XXXXXX")
trap 'kill $(jobs -p) 2> /dev/null; rm -rf "$dir"' EXIT
pids=()
for ((i = 0; i < n; i++)); do
  SOFTCON_TEST_SHARD=$i/$n "$@" > "$dir/$i.log" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
passed=0 failed=0
for ((i = 0; i < n; i++)); do
  echo "== share $i of $n"
  cat "$dir/$i.log"
  line=$(tail -n 1 "$dir/$i.log")
  if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1])) failed=$((failed + BASH_REMATCH[2]))
  else
    echo "share $i of $n ended without its summary (crashed)"
    rc=1
  fi
done
echo "$passed passed, $failed failed"
exit $rc

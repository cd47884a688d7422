#!/usr/bin/env bash
# The README's test command (scripts/test.sh) ROUNDS times in a row while HOGS other CPU-bound
# processes keep the machine busy: tests must assert properties, never race the clock.
#   scripts/test-under-load.sh [ROUNDS=3] [HOGS=2]
# Prints one line per round (passed, failed, minutes, load average) and exits 1 if any failed;
# each round's whole output is in build/test-under-load/round-N.log.
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3} hogs=${2:-2}
logs=build/test-under-load
mkdir -p "$logs"
pids=()
stop_hogs() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null; }
trap stop_hogs EXIT
for ((h = 0; h < hogs; h++)); do
  /bin/sh -c 'while :; do :; done' &
  pids+=($!)
done
failed=0
for ((r = 1; r <= rounds; r++)); do
  t0=$SECONDS
  scripts/test.sh >"$logs/round-$r.log" 2>&1
  rc=$?
  summary="$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$logs/round-$r.log" | tail -1)"
  echo "round $r of $rounds with $hogs CPU hogs: exit $rc, ${summary:-no summary}, $(((SECONDS - t0) / 60)) min," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg) at its end"
  grep -E '^  FAIL ' "$logs/round-$r.log"
  [ "$rc" -eq 0 ] || failed=1
done
exit $failed

#!/usr/bin/env bash
# The inverse-dynamics acceptance table (README, inverse-dynamics): the six CMU clips of
# ../shared/mocap on the michelin_cmu character and on the panda with one set of defaults, the
# open-loop tracking of their ID targets, and the A-pose built-in character standing. About 5
# minutes on 2 cores; runs the test slow_id_table_six_clips_two_characters, which also asserts
# the acceptance criteria, and prints the Markdown table.
# Usage: scripts/id-table.sh [-o FILE.md]
set -euo pipefail
cd "$(dirname "$0")/.."
out=""
if [ "${1:-}" = "-o" ]; then out="$2"; fi
make -j"$(nproc)" all >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
make test T=slow_id_table > "$log" 2>&1 || status=$?
grep -E '^    measured: ' "$log" | sed 's/^    measured: //' > "$log.table" || true
if [ -n "$out" ]; then cp "$log.table" "$out"; fi
cat "$log.table"
rm -f "$log.table"
grep -E '^  (ok|FAIL) |passed, ' "$log" || tail -20 "$log"
exit $status

#!/usr/bin/env bash
# Line coverage of the readers reached by the fuzz corpora (seed + working corpus of each
# harness, build/fuzz/corpus): the harnesses are rebuilt with clang's source-based coverage
# (no sanitizers) in build/fuzzcov, every corpus input is run once, and llvm-cov reports the
# lines of each harness's reader sources that ran.
# Usage: scripts/fuzz-coverage.sh [NAME...]
set -uo pipefail
cd "$(dirname "$0")/.."
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(fuzz_bvh fuzz_obj fuzz_config fuzz_character fuzz_reference fuzz_trajectory fuzz_openloop fuzz_policy)
make fuzz-build CC=clang BUILD=build/fuzzcov OPT="-O1 -g" \
  SAN="-fsanitize=fuzzer-no-link -fprofile-instr-generate -fcoverage-mapping" >/dev/null || exit 1
sources() {
  case $1 in
    fuzz_bvh) echo lib/io/bvh.c ;;
    fuzz_obj) echo lib/io/obj.c ;;
    fuzz_config) echo lib/io/config.c ;;
    fuzz_character) echo lib/io/character.c lib/io/h5.c ;;
    fuzz_reference) echo lib/motion/reference.c lib/io/h5.c ;;
    fuzz_trajectory) echo lib/sampling/controller.c lib/io/h5.c ;;
    fuzz_openloop) echo lib/store/openloop.c lib/io/h5.c ;;
    fuzz_policy) echo lib/store/policy.c lib/io/h5.c ;;
  esac
}
echo "| harness | inputs | source | lines | covered |"
echo "|---|---|---|---|---|"
for name in "${names[@]}"; do
  bin=build/fuzzcov/fuzzers/$name prof=build/fuzzcov/$name
  rm -f "$prof".*.profraw
  dirs=(tests/fuzz/corpus/$name)
  [ -d build/fuzz/corpus/$name ] && dirs+=(build/fuzz/corpus/$name)
  n=$(find "${dirs[@]}" -type f | wc -l)
  # one process per batch of inputs (a libhdf5 crash or hang ends only its batch)
  find "${dirs[@]}" -type f -print0 | xargs -0 -n 200 sh -c \
    'LLVM_PROFILE_FILE="'"$prof"'.%p.profraw" SOFTCON_FUZZ_GUARD=1 timeout 600 "$0" -runs=1 "$@" >/dev/null 2>&1; true' "$bin"
  llvm-profdata merge -sparse "$prof".*.profraw -o "$prof.profdata" 2>/dev/null || { echo "| $name | $n | no profile | | |"; continue; }
  for src in $(sources "$name"); do
    line=$(llvm-cov report "$bin" -instr-profile="$prof.profdata" "$src" 2>/dev/null | grep -E "^$src|^TOTAL" | head -1)
    # columns: regions, missed, cover, functions, missed, executed, lines, missed, cover, ...
    read -r _ _ _ _ _ _ _ lines missed cover _ <<< "$line"
    echo "| $name | $n | $src | $lines | $cover |"
  done
done

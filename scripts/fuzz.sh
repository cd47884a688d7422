#!/usr/bin/env bash
# Runs libFuzzer harnesses (make fuzz): each for SECONDS on its committed seed corpus
# (tests/fuzz/corpus/NAME, read-only) plus a working corpus in build/fuzz/corpus/NAME that
# grows between runs. Prints per harness: executions, exec/s, edge coverage (cov), features
# (ft), findings, and a table to paste into the README; exits 1 when a finding is open.
#
# Text harnesses (BVH, OBJ, YAML) run in libFuzzer's normal mode: any crash, leak, timeout,
# out-of-memory or UB report stops them and is a finding in softcon's code.
# HDF5 harnesses (a seed corpus of .h5 files) run in fork mode and go on after a finding,
# because libhdf5 1.10.8 itself crashes or loops on some damaged files (tests/fuzz/README.md).
# Every artifact is then triaged: the first stack frame outside the sanitizers and libFuzzer
# says whose it is; one inside libhdf5 must also replay cleanly the way the tools read files
# (SOFTCON_FUZZ_GUARD=1: the guarded read of lib/io/h5_guard.c returns an error), else, or when the
# frame is softcon's, it is an open finding. The stack of a crash or timeout is the one its
# fuzzing process reported (sanitizer log_path, one file per process in build/fuzz/reports/NAME,
# matched to the artifact by time, see report_of), so a crash that needs the files read before
# it (libhdf5 keeps memory and caches between files) is triaged too. Out-of-memory artifacts,
# and artifacts without a report, are replayed alone for their stack.
# HDF5 harnesses run with -timeout=FUZZ_H5_TIMEOUT (default 2 s; text harnesses: 10 s): the
# libhdf5 loops on damaged files (H5HG_read on a string attribute, H5C_protect) are frequent and
# each cost the whole limit, while a valid input reads in well under 0.1 s of CPU. Replays get
# 10 s (a report, symbolized on a loaded machine, can take longer than 2 s): a timeout artifact
# that then finishes was only slow and is counted as such, not as a finding.
# FUZZ_FORK=N runs N fuzzing processes in libFuzzer's fork mode (text harnesses stop at their
# first finding there too).
# Usage: scripts/fuzz.sh FUZZER_DIR SECONDS "EXTRA_LIBFUZZER_FLAGS" NAME...
#        scripts/fuzz.sh --triage FUZZER_DIR NAME ARTIFACT...   (triage again, e.g. after a fix)
set -uo pipefail
cd "$(dirname "$0")/.."
retriage=0
[ "${1:-}" = --triage ] && { retriage=1; shift; }
dir=$1
[ $retriage = 1 ] || { seconds=$2 flags=$3; shift 3; }
mkdir -p build/fuzz/corpus build/fuzz/artifacts build/fuzz/logs
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:quarantine_size_mb=8:max_malloc_fill_size=0:malloc_context_size=8
export LSAN_OPTIONS=suppressions=tests/fuzz/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
summary=()

# first stack frame of a report that is neither sanitizer, libFuzzer nor libc
first_frame() {
  grep -E '^ *#[0-9]+ 0x' "$1" | grep -vE 'sysdeps|__memset|__memcpy|__memmove|__sanitizer|__asan|__interceptor|__lsan|__ubsan|fuzzer::|libc\.so|ld-linux|compiler-rt|asan_|sanitizer_common|libclang_rt|in malloc|in calloc|in realloc|in free |in memcpy|in memmove|in memset|in strlen|in strn?dup|in strn?cmp|in strn?cpy|in memcmp|in strr?chr' | head -1
}

# the times and paths of the harness's sanitizer reports, which report_of reads
index_reports() {
  mkdir -p "$reports"
  find "$reports" -name 'report.*' -size +0 -printf '%T@ %p\n' > "$reports/index"
}

# the sanitizer report of the fuzzing process that wrote the artifact (log_path: one file per
# process, and a process stops at its first finding): the one last written closest in time to
# the artifact, within 2 s (a timeout's stack is symbolized after the artifact is written; one
# process at a time with -fork=1); from the index of the reports' times made after the run
report_of() {
  awk -v a="$(stat -c %.3Y "$1")" '{ d = a - $1; if (d < 0) d = -d; if (d <= 2 && (best == "" || d < bd)) { best = $2; bd = d } }
    END { print best }' "$reports/index"
}

triage() { # name bin artifact timeout -> prints a verdict, returns 1 if open
  local name=$1 bin=$2 art=$3 tmo=$4 log="build/fuzz/logs/$(basename "$3").log"
  local rc=0 frame="" kind report
  kind=$(sed -E 's/^(crash|timeout|oom|leak|slow-unit)-.*/\1/' <<< "$(basename "$art")")
  if [ ! -s "$art" ]; then
    # the harness returns at once on 0 bytes, so what stopped the job is not the input's: the RSS
    # limit crossed by what its earlier inputs left in the process (allocator caches; a leak is
    # LeakSanitizer's report of its own), or a sanitizer failing at the job's exit
    report=$(report_of "$art")
    echo "carried: $kind on the empty input, the state of the job's earlier inputs${report:+ ($(grep -m1 -E 'ERROR|fatal error|Live Heap' "$report" | sed -E 's/^==[0-9]+== ?//'))}"
    return 0
  fi
  # crashes and timeouts: the stack the fuzzing process reported (some libhdf5 crashes happen only
  # after the files read before; a timeout's stack is where it was looping). Out-of-memory: a
  # replay, because an RSS report lists only the live heap, whoever made the process grow.
  if [ "$kind" != oom ] && report=$(report_of "$art") && [ -n "$report" ]; then
    cp "$report" "$log"
    frame=$(first_frame "$log")
  fi
  if [ -z "$frame" ]; then
    # -malloc_limit_mb below the fuzzing run's -rss_limit_mb (2048): a huge allocation is reported with
    # its own stack (an RSS report lists only the live heap, often libFuzzer's own); -rss_limit_mb
    # above it, so that the RSS report does not interrupt that stack
    SOFTCON_FUZZ_GUARD=0 "$bin" -runs=1 -timeout=10 -rss_limit_mb=4096 -malloc_limit_mb=1024 "$art" > "$log" 2>&1 || rc=$?
    if [ $rc = 0 ] && [ "$kind" = timeout ]; then
      echo "slow: past the ${tmo} s limit, finished on replay in $(sed -nE 's/^Executed .* in ([0-9]+) ms/\1/p' "$log") ms"
      return 0
    fi
    frame=$(first_frame "$log")
  fi
  if [[ "$frame" == *libhdf5* ]]; then
    # the way the tools read files. The guard's limit only says how soon a looping read is stopped
    # (a crash or a loop in the child is an error either way, and the parent reads only after a
    # clean child); a valid input reads in well under 0.1 s, so 0.5 s (FUZZ_TRIAGE_GUARD) makes a
    # loop cost the triage half a second instead of the tools' 10
    if SOFTCON_FUZZ_GUARD=1 SOFTCON_FUZZ_GUARD_SECONDS="${FUZZ_TRIAGE_GUARD:-0.5}" "$bin" -runs=1 -timeout=60 -rss_limit_mb=2048 "$art" > "$log.guarded" 2>&1; then
      local where
      if [[ "$frame" == *" in "* ]]; then where=$(sed -E 's/.* in ([^ ]+) .*/\1/' <<< "$frame")
      else where=$(sed -E 's/.*\((.*libhdf5[^+]*)\+(0x[0-9a-f]+)\).*/libhdf5+\2/' <<< "$frame"); fi
      echo "libhdf5 (handled by the guard): $kind in $where"
      return 0
    fi
    echo "libhdf5, NOT handled by the guard: $frame (log $log.guarded)"
    return 1
  fi
  if [ -z "$frame" ]; then
    # what the replay did show: its exit code and first error line, or its last line
    if [ $rc = 0 ]; then frame="no stack: no report of it, and it did not happen again when replayed alone"
    else frame="no stack: replay exit $rc, $(grep -m1 -E 'ERROR|runtime error|violated|Killed' "$log" || tail -n1 "$log")"; fi
  fi
  echo "softcon: $frame (log $log)"
  return 1
}

if [ $retriage = 1 ]; then
  name=$2 bin="$dir/$2" reports="build/fuzz/reports/$2"
  shift 2
  index_reports
  for art in "$@"; do
    if verdict=$(triage "$name" "$bin" "$art" "${FUZZ_H5_TIMEOUT:-2}"); then echo "$(basename "$art"): $verdict"
    else echo "OPEN: $(basename "$art"): $verdict"; status=1; fi
  done
  exit $status
fi

for name in "$@"; do
  bin="$dir/$name"
  [ -x "$bin" ] || { echo "fuzz: no harness $bin" >&2; exit 2; }
  work="build/fuzz/corpus/$name" log="build/fuzz/logs/$name.log" arts="build/fuzz/artifacts/$name"
  mkdir -p "$work" "$arts"
  hdf5=0
  compgen -G "tests/fuzz/corpus/$name/*.h5" > /dev/null && hdf5=1
  mode=() forked=0 nfork=${FUZZ_FORK:-0} timeout=10
  if [ $hdf5 = 1 ]; then
    mode=(-fork=$(( nfork > 0 ? nfork : 1 )) -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1) forked=1
    timeout=${FUZZ_H5_TIMEOUT:-2}
  elif [ "$nfork" -gt 0 ]; then
    mode=(-fork="$nfork") forked=1
  fi
  echo "== $name: ${seconds}s$([ $forked = 1 ] && echo " (fork mode, ${mode[0]#-fork=} processes)")"
  before=$(ls "$arts" | wc -l)
  # -timeout: a hang counts as a finding; -rss_limit_mb: so does runaway memory
  # shellcheck disable=SC2086
  reports="build/fuzz/reports/$name"
  rm -rf "$reports" && mkdir -p "$reports"
  logpath=()
  # HDF5 harnesses: each fuzzing process's sanitizer report kept in a file of its own (fork mode
  # keeps only the ERROR line), the stacks the triage reads
  [ $hdf5 = 1 ] && logpath=(env "ASAN_OPTIONS=$ASAN_OPTIONS:log_path=$reports/report" "UBSAN_OPTIONS=$UBSAN_OPTIONS:log_path=$reports/report")
  "${logpath[@]}" "$bin" "${mode[@]}" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$arts/" $flags "$work" "tests/fuzz/corpus/$name" > "$log" 2>&1
  rc=$?
  if [ $forked = 1 ]; then
    last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
    execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<< "$last")
    t=$(sed -E 's/.* time: ([0-9]+)s.*/\1/' <<< "$last")
    rate=$([ -n "$t" ] && [ "$t" -gt 0 ] && echo $((execs / t)))
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<< "$last")
    ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<< "$last")
  else
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<< "$last")
    ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<< "$last")
  fi
  found="none"
  if [ "$rc" -ne 0 ] && [ $hdf5 = 0 ]; then
    status=1
    found="OPEN: $(grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|reader contract violated' "$log" || echo "exit $rc")"
    echo "   $found (log $log; artifacts $arts/)"
  elif [ $hdf5 = 1 ]; then
    index_reports
    handled=0 open=0 slow=0 carried=0
    declare -A kinds=()
    # the new artifacts, triaged FUZZ_TRIAGE_JOBS at a time (default: one per core), then counted in order
    new=$(ls -t "$arts" | head -n $(( $(ls "$arts" | wc -l) - before )))
    verdicts="$reports/verdicts"
    mkdir -p "$verdicts"
    for art in $new; do
      while [ "$(jobs -rp | wc -l)" -ge "${FUZZ_TRIAGE_JOBS:-$(nproc)}" ]; do wait -n; done
      { triage "$name" "$bin" "$arts/$art" "$timeout" > "$verdicts/$art"; echo $? > "$verdicts/$art.rc"; } &
    done
    wait
    for art in $new; do
      verdict=$(cat "$verdicts/$art")
      if [ "$(cat "$verdicts/$art.rc")" = 0 ]; then
        if [[ "$verdict" == slow:* ]]; then slow=$((slow + 1)); echo "   $art: $verdict"; continue; fi
        if [[ "$verdict" == carried:* ]]; then carried=$((carried + 1)); echo "   $art: $verdict"; continue; fi
        handled=$((handled + 1))
        k=${verdict#*: }
        kinds[$k]=$(( ${kinds[$k]:-0} + 1 ))
      else
        open=$((open + 1))
        echo "   OPEN: $art: $verdict"
      fi
    done
    if [ $open -gt 0 ]; then status=1; found="OPEN: $open"; fi
    if [ $handled -gt 0 ]; then
      list=""
      for k in "${!kinds[@]}"; do list+="${list:+, }$k x${kinds[$k]}"; done
      found="${found/none/}${found:+; }$handled in libhdf5, handled by the guard ($list)"
      found=${found#; }
    fi
    if [ $carried -gt 0 ]; then
      found="${found/none/}${found:+; }$carried on the empty input (the state of the job's earlier inputs, not the input's)"
      found=${found#; }
    fi
    if [ $slow -gt 0 ]; then
      found="${found/none/}${found:+; }$slow slow inputs past the ${timeout} s limit that finished on replay in 10 s (not hangs)"
      found=${found#; }
    fi
    unset kinds
    echo "   findings: $found"
  fi
  printf '   %s executions, %s exec/s, cov %s edges, ft %s\n' "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}"
  summary+=("| $name | ${execs:-?} | ${rate:-?} | ${cov:-?} | ${ft:-?} | $found |")
done
echo
echo "| harness | executions | exec/s | edges (cov) | features (ft) | findings |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${summary[@]}"
exit $status

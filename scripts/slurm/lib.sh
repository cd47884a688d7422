# Functions for driving Slurm jobs from scripts and tests (source it; bash). They talk to the
# cluster SLURM_CONF names (scripts/slurm/local-cluster.sh env) or to the site's default one.
# Each prints what it found on stdout and returns non-zero with a message on stderr when the
# job does not get there; nothing here cancels or requeues a job it was not asked to.
#
#   id=$(sc_slurm_submit --ntasks=2 job.sbatch ARGS...)    # sbatch --parsable
#   sc_slurm_wait_state "$id" RUNNING 60                    # wait for a state (| separated list)
#   sc_slurm_wait_grep FILE PATTERN 60                      # wait until a file shows progress
#   sc_slurm_requeue "$id"                                  # scontrol requeue: SIGTERM now, then held
#   sc_slurm_wait_gone "$id" 60                             # the previous run's steps have ended
#   sc_slurm_release "$id"                                  # BeginTime=now: the requeued job may start
#   sc_slurm_field "$id" Restarts                           # a field of scontrol show job
#   sc_slurm_finish "$id" 120                               # wait for the end; prints the final state
#   sc_slurm_build_probe OUTDIR                             # the MPI signal probe (tests/slurm)

SC_SLURM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

sc_slurm_submit() {
  local out
  out="$(sbatch --parsable "$@" 2>&1)" || { echo "sc_slurm_submit: sbatch $*: $out" >&2; return 1; }
  echo "${out%%;*}"
}

# One field of `scontrol show job` (JobState, Reason, Restarts, ExitCode, BeginTime, StdOut, ...).
sc_slurm_field() {
  scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}

sc_slurm_state() { sc_slurm_field "$1" JobState; }

# Wait until the job's state is one of STATES ("RUNNING" or "COMPLETED|FAILED"); prints it.
sc_slurm_wait_state() {
  local id="$1" states="$2" timeout="${3:-60}" t0=$SECONDS s=""
  while [ $((SECONDS - t0)) -le "$timeout" ]; do
    s="$(sc_slurm_state "$id")"
    if [ -n "$s" ] && [[ "|$states|" == *"|$s|"* ]]; then echo "$s"; return 0; fi
    sleep 0.2
  done
  echo "sc_slurm_wait_state: job $id is '${s:-unknown}' after ${timeout} s, not $states (reason: $(sc_slurm_field "$id" Reason))" >&2
  return 1
}

# Wait until FILE contains a line matching the extended regex PATTERN.
sc_slurm_wait_grep() {
  local file="$1" pattern="$2" timeout="${3:-60}" t0=$SECONDS
  while [ $((SECONDS - t0)) -le "$timeout" ]; do
    [ -f "$file" ] && grep -Eq -- "$pattern" "$file" && return 0
    sleep 0.2
  done
  echo "sc_slurm_wait_grep: no '$pattern' in $file after ${timeout} s" >&2
  return 1
}

# Requeue a running job (what preemption with PreemptMode=REQUEUE does): its processes get
# SIGTERM, SIGKILL KillWait later, and it goes back to PENDING with a begin time in the future.
sc_slurm_requeue() {
  local out
  out="$(scontrol requeue "$1" 2>&1)" || { echo "sc_slurm_requeue: job $1: $out" >&2; return 1; }
}

# Wait until the job's previous run has left the node (no slurmstepd of it): a requeued job
# released while its old step is still being torn down can fail to start (seen: FAILED 1:0).
sc_slurm_wait_gone() {
  local id="$1" timeout="${2:-60}" t0=$SECONDS
  while pgrep -f "slurmstepd: \[$id\." > /dev/null; do
    [ $((SECONDS - t0)) -le "$timeout" ] || { echo "sc_slurm_wait_gone: job $id still has a step on the node after ${timeout} s" >&2; return 1; }
    sleep 0.2
  done
}

# Let a requeued job start now: it waits for its begin time (requeue + CredExpire + 1 s, 121 s by
# default; Reason=BeginTime). Slurm 22.05 spells the update StartTime=now (BeginTime is refused).
sc_slurm_release() {
  local out
  out="$(scontrol update JobId="$1" StartTime=now 2>&1)" || { echo "sc_slurm_release: job $1: $out" >&2; return 1; }
}

# Wait for the job to end; prints "STATE EXITCODE" (e.g. "COMPLETED 0:0"); non-zero unless COMPLETED.
sc_slurm_finish() {
  local id="$1" s
  s="$(sc_slurm_wait_state "$id" "COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE" "${2:-300}")" || return 1
  echo "$s $(sc_slurm_field "$id" ExitCode)"
  [ "$s" = COMPLETED ]
}

# The job's process ids on this node (scontrol listpids: batch shell, mpiexec, srun, ranks, ...).
sc_slurm_pids() {
  scontrol listpids "$1" 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ { print $1 }'
}

# Build the MPI signal probe (tests/slurm/mpi_signals.c) into OUTDIR; prints its path.
sc_slurm_build_probe() {
  local out="$1/mpi_signals" log
  mkdir -p "$1" || return 1
  log="$(mpicc.mpich -O2 -Wall -Wextra -Werror -o "$out" "$SC_SLURM_ROOT/tests/slurm/mpi_signals.c" 2>&1)" ||
    { echo "sc_slurm_build_probe: mpicc.mpich failed: $log" >&2; return 1; }
  echo "$out"
}

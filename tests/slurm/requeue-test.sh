#!/usr/bin/env bash
# The Slurm test of the default suite (tests/test_slurm.c runs it, once per tool): a private
# one-node cluster (scripts/slurm/local-cluster.sh in WORKDIR), the real job script
# scripts/slurm/TOOL.sbatch submitted with --ntasks=2 (it runs `mpiexec.mpich -n 2 bin/TOOL
# --resume ...`), `scontrol requeue` once the tool's first checkpoint file exists (the run held
# by SIGSTOP until then, so no load on the machine can let it finish first), the requeued
# job released with `scontrol update JobId=N StartTime=now`, and checks that the job completes
# after the requeue (Restarts=1, COMPLETED 0:0), that the first run stopped with a checkpoint
# and exit 6 (sample-openloop: its path so far as the output, status interrupted), that the rerun
# resumed from it, and that the output is completed and the checkpoint gone. Comparing the output with an uninterrupted run's is the caller's part.
#   tests/slurm/requeue-test.sh WORKDIR TOOL ARGS...       # ARGS: the sbatch script's (the last is its output)
#   tests/slurm/requeue-test.sh WORKDIR check              # only: is Slurm there (0) or not (77)
# REQUEUE_LAYOUT: the job's sbatch layout options (default --ntasks=2; e.g. "--ntasks=1
# --cpus-per-task=2": one rank of two threads).
# TOOL is sample-openloop or learn-feedback; the tools are $SOFTCON_BIN's (default bin/).
# Prints one line "requeue-test: ..." with the job's final state and its timings.
# exit: 0 passed, 2 failed (the reason on stderr), 77 skipped (Slurm or root missing: says why)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/scripts/slurm/lib.sh"
[ $# -ge 2 ] || { echo "usage: tests/slurm/requeue-test.sh WORKDIR check | WORKDIR TOOL ARGS..." >&2; exit 1; }
work="$1" tool="$2"
shift 2
# The reason, then the job's log (its last 80 lines), then the reason again: a CI log that keeps
# only the end of the output still shows why.
fail() {
  echo "requeue-test: FAILED: $*" >&2
  if [ -n "${log:-}" ] && [ -s "$log" ]; then
    echo "--- $log (last 80 lines) ---" >&2
    tail -n 80 "$log" >&2
    echo "--- end of $log ---" >&2
    echo "requeue-test: FAILED: $*" >&2
  fi
  exit 2
}

for p in slurmctld slurmd munged sbatch scontrol mpiexec.mpich; do
  command -v "$p" >/dev/null || { echo "requeue-test: SKIPPED: $p is not installed (scripts/install-deps.sh --slurm)"; exit 77; }
done
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  sudo -n true 2>/dev/null || { echo "requeue-test: SKIPPED: the cluster's daemons need root (or passwordless sudo)"; exit 77; }
  as_root=(sudo -n)
fi
[ "$tool" = check ] && { echo "requeue-test: Slurm is installed"; exit 0; }
script="$root/scripts/slurm/$tool.sbatch"
[ -f "$script" ] && [ $# -ge 1 ] || { echo "requeue-test: no $script, or no arguments for it" >&2; exit 1; }
output="${!#}"
bin="${SOFTCON_BIN:-$root/bin}"
export SOFTCON_BIN="$(cd "$bin" && pwd)" || fail "no tools in $bin"
[ -x "$SOFTCON_BIN/$tool" ] || fail "no $SOFTCON_BIN/$tool (make all)"

mkdir -p "$work" || fail "cannot create $work"
export SOFTCON_SLURM_DIR="$work/cluster"
cluster() { "${as_root[@]}" env SOFTCON_SLURM_DIR="$SOFTCON_SLURM_DIR" "$root/scripts/slurm/local-cluster.sh" "$@"; }
id=
cleanup() {
  [ -n "$id" ] && scancel "$id" 2>/dev/null # a failed test leaves no job behind
  cluster stop >/dev/null 2>&1
}
trap cleanup EXIT
t0=$SECONDS
cluster start >"$work/cluster.log" 2>&1 || fail "local-cluster.sh start: $(cat "$work/cluster.log")"
eval "$("$root/scripts/slurm/local-cluster.sh" env)"
log="$work/job.out"
rm -f "$log" "$output" "$output".ckpt*
ms() { date +%s%3N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1000 }'; }

t_submit=$(ms)
read -r -a layout <<< "${REQUEUE_LAYOUT:---ntasks=2}"
id="$(sc_slurm_submit "${layout[@]}" --output="$log" "$script" "$@")" || fail "sbatch ${layout[*]} $script"
sc_slurm_wait_state "$id" RUNNING 60 >/dev/null || fail "job $id did not start"
# the tool's first checkpoint (sample-openloop: OUTPUT.ckpt after a segment; learn-feedback:
# OUTPUT.ckpt.samcon within its first iteration, OUTPUT.ckpt after it)
# (the checkpoint itself: not its lock file or a temporary, which exist from the start)
checkpoint_written() { [ -e "$output.ckpt" ] || [ -e "$output.ckpt.samcon" ]; }
t=$SECONDS
until checkpoint_written; do
  [ $((SECONDS - t)) -le 300 ] || fail "job $id wrote no checkpoint in 300 s"
  [ "$(sc_slurm_state "$id")" = RUNNING ] || fail "job $id is $(sc_slurm_state "$id") before its first checkpoint"
  sleep 0.1
done
t_ckpt=$(ms)
# Hold the run where it is (SIGSTOP to mpiexec.mpich and the ranks): however busy the machine,
# the job cannot finish before the requeue reaches it. Slurm's requeue sends SIGCONT with its
# SIGTERM, so the ranks go on only to stop at their next safe point.
held="$(pgrep -d ' ' -f -- "$SOFTCON_BIN/$tool .*$output")"
[ -n "$held" ] || fail "no process of job $id to hold after its first checkpoint"
kill -STOP $held 2>/dev/null || fail "SIGSTOP to the processes of job $id ($held)"
[ ! -e "$output" ] || fail "job $id finished before it could be requeued"

sc_slurm_requeue "$id" || { kill -CONT $held 2>/dev/null; fail "scontrol requeue $id"; }
sc_slurm_wait_state "$id" PENDING 90 >/dev/null || fail "job $id was not requeued"
t_pending=$(ms)
reason="$(sc_slurm_field "$id" Reason)" restarts="$(sc_slurm_field "$id" Restarts)"
[ "$reason" = BeginTime ] && [ "$restarts" = 1 ] || fail "requeued job $id: Reason=$reason Restarts=$restarts, expected BeginTime and 1"
sc_slurm_wait_gone "$id" 90 || fail "the first run of job $id did not end"
# the first run stopped at a checkpoint (exit 6, mpiexec.mpich's own status); sample-openloop left
# the path so far as its output (status interrupted), learn-feedback no output
checkpoint_written || fail "no checkpoint $output.ckpt or $output.ckpt.samcon after the requeue"
grep -q "stopped by a signal" "$log" || fail "the tool did not report stopping on the signal"
if [ "$tool" = sample-openloop ]; then
  h5dump -a /status "$output" 2>/dev/null | grep -q '"interrupted: ' || fail "the interrupted run's $output is not marked interrupted"
else
  [ ! -e "$output" ] || fail "the interrupted run wrote $output"
fi
first_rc="$(sed -n "s/^softcon-[a-z]*: $tool exited with \([0-9]*\) .*/\1/p" "$log" | head -1)"
[ "$first_rc" = 6 ] || fail "mpiexec.mpich exited ${first_rc:-?} after the requeue's SIGTERM, expected 6"
# slurmd revokes the credentials of a killed job up to the second of the kill: a job released
# within that second is killed again at launch ("Job credential revoked", FAILED 1:0)
sleep 2
sc_slurm_release "$id" || fail "release"
t_release=$(ms)
final="$(sc_slurm_finish "$id" 600)" || fail "job $id after the requeue: ${final:-no final state}"
t_done=$(ms)
restarts="$(sc_slurm_field "$id" Restarts)"
[ "$restarts" = 1 ] || fail "Restarts=$restarts after the run, expected 1"
grep -q "job $id (restart 1)" "$log" || fail "the batch script did not run again"
# grep without -q reads to the end: grep -q would quit at the match and, with pipefail, sed's
# SIGPIPE on a log longer than its first write (the ASan build's progress lines) would fail the
# pipeline at random
sed -n '/(restart 1)/,$p' "$log" | grep "resuming from the checkpoint" >/dev/null || fail "the rerun did not resume from the checkpoint"
h5dump -a /status "$output" 2>/dev/null | grep -q '"completed"' || fail "job $id completed without a completed $output"
! compgen -G "$output.ckpt*" >/dev/null || fail "the checkpoint of the completed job is still there: $(ls "$output".ckpt*)"
id_done=$id
id=
echo "requeue-test: $tool job $id_done (2 tasks, mpiexec.mpich -n 2): first checkpoint $(secs "$t_submit" "$t_ckpt") s after" \
  "sbatch, requeued then: the ranks stopped at a checkpoint (mpiexec.mpich exit ${first_rc:-?}), the job was PENDING (Reason=BeginTime, Restarts=1)" \
  "$(secs "$t_ckpt" "$t_pending") s later; released with StartTime=now, it resumed from the checkpoint and" \
  "completed $(secs "$t_release" "$t_done") s later: final $final, Restarts=$restarts; $((SECONDS - t0)) s with the cluster's start"

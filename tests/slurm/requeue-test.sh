#!/usr/bin/env bash
# The Slurm test of the default suite (tests/test_slurm.c runs it): a private one-node cluster
# (scripts/slurm/local-cluster.sh in WORKDIR), a 2-task job whose batch script runs
# `mpiexec.mpich -n 2` on the checkpointing MPI probe, `scontrol requeue` mid-run, the requeued
# job released with `scontrol update JobId=N StartTime=now`, and checks that it completes after
# the requeue, resuming from the checkpoint the ranks wrote on SIGTERM.
#   tests/slurm/requeue-test.sh WORKDIR
# exit: 0 passed, 2 failed (the reason on stderr), 77 skipped (Slurm or root missing: says why)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/scripts/slurm/lib.sh"
[ $# -eq 1 ] || { echo "usage: tests/slurm/requeue-test.sh WORKDIR" >&2; exit 1; }
work="$1"
fail() { echo "requeue-test: FAILED: $*" >&2; exit 2; }

for p in slurmctld slurmd munged sbatch scontrol mpicc.mpich mpiexec.mpich; do
  command -v "$p" >/dev/null || { echo "requeue-test: SKIPPED: $p is not installed (scripts/install-deps.sh --slurm)"; exit 77; }
done
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  sudo -n true 2>/dev/null || { echo "requeue-test: SKIPPED: the cluster's daemons need root (or passwordless sudo)"; exit 77; }
  as_root=(sudo -n)
fi

mkdir -p "$work" || fail "cannot create $work"
export SOFTCON_SLURM_DIR="$work/cluster"
cluster() { "${as_root[@]}" env SOFTCON_SLURM_DIR="$SOFTCON_SLURM_DIR" "$root/scripts/slurm/local-cluster.sh" "$@"; }
trap 'cluster stop >/dev/null 2>&1' EXIT
t0=$SECONDS
cluster start >"$work/cluster.log" 2>&1 || fail "local-cluster.sh start: $(cat "$work/cluster.log")"
eval "$("$root/scripts/slurm/local-cluster.sh" env)"

probe="$(sc_slurm_build_probe "$work")" || fail "cannot build the MPI probe"
run="$work/run"
mkdir -p "$run"
steps=40 # 8 s of work in 0.2 s steps
id="$(sc_slurm_submit --output="$run/job.out" "$root/tests/slurm/probe.sbatch" "$probe" "$run" "$steps")" || fail "sbatch"
sc_slurm_wait_state "$id" RUNNING 60 >/dev/null || fail "job $id did not start"
sc_slurm_wait_grep "$run/rank1.log" "step 5$" 60 || fail "job $id made no progress"

sc_slurm_requeue "$id" || fail "scontrol requeue $id"
sc_slurm_wait_state "$id" PENDING 90 >/dev/null || fail "job $id was not requeued"
reason="$(sc_slurm_field "$id" Reason)" restarts="$(sc_slurm_field "$id" Restarts)"
[ "$reason" = BeginTime ] && [ "$restarts" = 1 ] || fail "requeued job $id: Reason=$reason Restarts=$restarts, expected BeginTime and 1"
for r in 0 1; do
  grep -q "signal TERM" "$run/rank$r.log" || fail "rank $r got no SIGTERM: $(cat "$run/rank$r.log")"
done
checkpoint="$(sed -n 's/.*checkpointed at step \([0-9]*\),.*/\1/p' "$run/rank0.log" | head -1)"
[ -n "$checkpoint" ] && [ "$checkpoint" -ge 5 ] && [ "$checkpoint" -lt "$steps" ] || fail "no checkpoint on SIGTERM: $(cat "$run/rank0.log")"

sc_slurm_release "$id" || fail "release"
final="$(sc_slurm_finish "$id" 120)" || fail "job $id after the requeue: ${final:-no final state} ($(cat "$run/job.out"))"
restarts="$(sc_slurm_field "$id" Restarts)"
[ "$restarts" = 1 ] || fail "Restarts=$restarts after the run, expected 1"
for r in 0 1; do
  grep -q "start rank $r of 2 .* step $checkpoint of $steps" "$run/rank$r.log" || fail "rank $r did not resume at step $checkpoint: $(cat "$run/rank$r.log")"
  grep -q "done: $steps steps" "$run/rank$r.log" || fail "rank $r did not finish: $(cat "$run/rank$r.log")"
done
grep -q "start job $id restart 1 " "$run/batch.log" || fail "the batch script did not run again: $(cat "$run/batch.log")"
echo "requeue-test: job $id (2 tasks, mpiexec.mpich -n 2): requeued at step $checkpoint of $steps (both ranks got SIGTERM and" \
  "checkpointed), pending Reason=BeginTime, released with StartTime=now, resumed at step $checkpoint; final $final," \
  "Restarts=$restarts; $((SECONDS - t0)) s with the cluster's start"

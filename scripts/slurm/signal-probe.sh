#!/usr/bin/env bash
# What a Slurm job's processes receive when the job is requeued or signalled, measured on the
# cluster SLURM_CONF names (the local one: eval "$(scripts/slurm/local-cluster.sh env)"). The
# findings in docs/slurm.md come from this script; run it on a site's cluster to see its rules.
#
# A 2-task job (tests/slurm/probe.sbatch: a bash batch script running mpiexec.mpich -n 2 on the
# probe of tests/slurm/mpi_signals.c) is started for each experiment; strace, attached from
# outside the job to every process of it (scontrol listpids), records each signal with its
# sender, and when a process is killed by SIGKILL.
#   requeue      scontrol requeue; the probe checkpoints and exits 75 on SIGTERM
#   requeue-trapcont  the same, the batch shell trapping SIGCONT as well as SIGTERM
#   requeue-twice     the same, the batch shell forwarding SIGTERM to mpiexec.mpich and, when it
#                exits 75, requeueing its own job again (what a time-limit script does)
#   stubborn     scontrol requeue; the probe ignores SIGTERM (how long until SIGKILL)
#   usr1-all     scancel --signal=USR1 JOB  (every step's processes)
#   usr1-batch   scancel --batch --signal=USR1 JOB, the batch script forwarding it to mpiexec.mpich
#   usr1-full    scancel --full --signal=USR1 JOB  (the batch shell and every step)
#   timelimit    sbatch --time=1 --signal=B:USR1@40: the batch shell forwards the warning to
#                mpiexec.mpich, the probe checkpoints and exits 75, the script requeues the job
#
#   scripts/slurm/signal-probe.sh [OUTDIR] [EXPERIMENT ...]     (default: all four, results/slurm-probe)
# Needs strace, mpicc.mpich, and a cluster that runs jobs on this machine (strace attaches here).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
out="${1:-$root/results/slurm-probe}"
[ $# -gt 0 ] && shift
experiments=("$@")
[ ${#experiments[@]} -gt 0 ] || experiments=(requeue stubborn usr1-all usr1-batch usr1-full timelimit)
command -v strace >/dev/null || { echo "signal-probe: needs strace (apt-get install strace)" >&2; exit 5; }
[ -n "${SLURM_CONF:-}" ] || echo "signal-probe: note: SLURM_CONF is not set: using the default cluster" >&2
scontrol ping >/dev/null 2>&1 || { echo "signal-probe: no Slurm controller answers (scripts/slurm/local-cluster.sh start)" >&2; exit 5; }
mkdir -p "$out" || exit 3
probe="$(sc_slurm_build_probe "$out")" || exit 5
ms() { date +%s%3N; }

# strace lines -> "process: signal from sender" (pids named from the ps snapshot)
summarize() {
  local trace="$1" names="$2"
  awk -v names="$names" '
    BEGIN { while ((getline l < names) > 0) { split(l, a, " "); n = a[1]; sub(/^[0-9]+ /, "", l); who[n] = l } }
    / --- SIG/ {
      pid = $1; t = $2; sig = $4; sub(/^.*si_pid=/, "", $0); split($0, b, ","); from = b[1]
      printf "  %s  %-34s got %-8s from %s\n", t, who[pid] " (" pid ")", sig, (from in who ? who[from] : "pid") " (" from ")"
    }
    / \+\+\+ / {
      pid = $1; t = $2; $1 = $2 = ""; printf "  %s  %-34s %s\n", t, who[pid] " (" pid ")", $0
    }' "$trace"
}

run() {
  local name="$1" steps="$2" action="$3" extra=() env=()
  local d="$out/$name"
  rm -rf "$d" && mkdir -p "$d"
  [ "$name" = stubborn ] && extra=(--stubborn)
  [ "$name" = usr1-batch ] && env=(--export=ALL,PROBE_FORWARD=1)
  [ "$name" = requeue-trapcont ] && env=(--export=ALL,PROBE_TRAP_CONT=1)
  [ "$name" = requeue-twice ] && env=(--export=ALL,PROBE_FORWARD=1,PROBE_REQUEUE=1)
  [ "$name" = timelimit ] && env=(--export=ALL,PROBE_FORWARD=1,PROBE_REQUEUE=1 --time=1 --signal=B:USR1@40)
  local id
  id="$(sc_slurm_submit "${env[@]}" --output="$d/job.out" "$root/tests/slurm/probe.sbatch" "$probe" "$d" "$steps" "${extra[@]}")" || return 1
  sc_slurm_wait_state "$id" RUNNING 60 >/dev/null && sc_slurm_wait_grep "$d/rank0.log" "step 5$" 60 || return 1
  local pids
  pids="$(sc_slurm_pids "$id" | sort -n)"
  # names of the job's processes and of the slurmstepd that own them
  ps -eo pid=,args= | awk -v p=" $(echo $pids) " '{ if (index(p, " " $1 " ") || $2 ~ /^slurmstepd/) { a = $2; if ($2 ~ /^slurmstepd/) a = $2 " " $3; else { sub(".*/", "", a) } print $1, a } }' >"$d/names"
  for p in $pids; do echo "$p $(grep -E '^Sig(Ign|Cgt)' /proc/"$p"/status 2>/dev/null | tr -s '\t\n' '  ')"; done >"$d/sigmasks"
  strace -tt -e trace=none -e signal=all $(printf -- '-p %s ' $pids) -o "$d/strace.log" 2>/dev/null &
  local tracer=$!
  sleep 1
  local t0 t1
  t0=$(ms)
  case "$action" in
    requeue) sc_slurm_requeue "$id" ;;
    usr1-all) scancel --signal=USR1 "$id" ;;
    usr1-batch) scancel --batch --signal=USR1 "$id" ;;
    usr1-full) scancel --full --signal=USR1 "$id" ;;
    timelimit) ;; # Slurm sends the warning itself
  esac
  echo "== $name: job $id, $action at $(date -d @"$((t0 / 1000))" +%T)"
  # each time the job is requeued (by us, or by its own script after a time-limit warning):
  # report, and release it
  local s n=0
  while s="$(sc_slurm_wait_state "$id" "PENDING|COMPLETED|FAILED|CANCELLED|TIMEOUT" 300)" && [ "$s" = PENDING ]; do
    t1=$(ms)
    n=$((n + 1))
    [ "$action" = requeue ] && [ $n -eq 1 ] && echo "  back to PENDING $((t1 - t0)) ms after scontrol requeue"
    echo "  pending: Reason=$(sc_slurm_field "$id" Reason) Restarts=$(sc_slurm_field "$id" Restarts)" \
      "EligibleTime=$(sc_slurm_field "$id" EligibleTime) (now $(date +%FT%T))"
    sleep 1
    sc_slurm_release "$id" && echo "  scontrol update JobId=$id StartTime=now: released"
    sc_slurm_wait_state "$id" "RUNNING|COMPLETED|FAILED" 60 >/dev/null || break
  done
  if [ "$action" = timelimit ]; then
    awk '/start job/ { t = $1 } /signal USR1/ && t { printf "  the warning came %d ms after the run started (--time=1 --signal=B:USR1@40)\n", $1 - t; t = 0 }' "$d/batch.log"
  fi
  local fin
  fin="$(sc_slurm_finish "$id" 300)"
  echo "  final: $fin, Restarts=$(sc_slurm_field "$id" Restarts)"
  kill "$tracer" 2>/dev/null
  wait "$tracer" 2>/dev/null
  echo "  signal masks before: $(awk '{ printf "%s; ", $0 }' "$d/sigmasks")"
  echo "  what each process received (strace, attached from outside the job):"
  summarize "$d/strace.log" "$d/names"
  echo "  the batch shell's own log:"
  sed 's/^/    /' "$d/batch.log"
  echo "  the ranks' own logs:"
  grep -hv ' step [0-9]*$' "$d"/rank*.log | sort | sed 's/^/    /'
  echo "  job output (--open-mode=append keeps both runs):"
  sed 's/^/    /' "$d/job.out"
}

for e in "${experiments[@]}"; do
  case "$e" in
    requeue | requeue-trapcont | requeue-twice) run "$e" 40 requeue ;;
    stubborn) run "$e" 300 requeue ;;
    usr1-all | usr1-batch | usr1-full) run "$e" 40 "$e" ;;
    timelimit) run "$e" 200 timelimit ;;
    *) echo "signal-probe: unknown experiment $e" >&2; exit 1 ;;
  esac
done 2>&1 | tee "$out/report.txt"

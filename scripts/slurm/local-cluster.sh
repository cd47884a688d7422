#!/usr/bin/env bash
# A one-node Slurm on this machine, so the sbatch jobs run here as they run on a cluster:
# Debian's slurmctld + slurmd with their own munged, configured for this machine's CPUs and
# memory (slurmd -C), listening on 127.0.0.1 only. Config, munge key, state, spool, pid files
# and logs all live in one folder ($SOFTCON_SLURM_DIR, default results/slurm of this checkout);
# munge's socket lives in /tmp/softcon-munge-<hash of the folder> (munged wants every folder
# above its socket searchable by all, and a socket path is limited to 107 bytes); nothing is
# written to /etc. The ports are derived from the folder too, so clusters of different
# checkouts on one machine do not collide.
#
#   scripts/slurm/local-cluster.sh start    # idempotent: a running cluster is left as it is
#   scripts/slurm/local-cluster.sh status   # daemons, node and queue; exit 0 when up, 3 when down
#   scripts/slurm/local-cluster.sh stop     # idempotent; ends only the daemons it started (pid files)
#   eval "$(scripts/slurm/local-cluster.sh env)"   # SLURM_CONF for sbatch, squeue, scontrol, ...
#
# Plugins: proctrack/linuxproc and task/none (no cgroups: they work in containers),
# select/cons_tres with CR_CPU (one task per CPU), no accounting. KillWait is Slurm's default
# (30 s between SIGTERM and SIGKILL). Needs root (slurmd starts jobs as their user) and the
# packages of scripts/install-deps.sh --slurm.
# Exit codes: 0 ok, 1 usage, 3 not running (status) or cannot write the folder, 5 a program is
# missing or a daemon failed to start (the message quotes its log).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="${SOFTCON_SLURM_DIR:-$root/results/slurm}"
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
conf="$dir/slurm.conf"
die() { echo "local-cluster: error: $*" >&2; exit "${code:-5}"; }

pid_of() { cat "$1" 2>/dev/null; } # a daemon removes its pid file as it exits
pid_alive() { local p; p="$(pid_of "$1")" && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
munged_up() { pid_alive "$dir/munge/munged.pid"; }
ctld_up() { pid_alive "$dir/run/slurmctld.pid"; }
slurmd_up() { pid_alive "$dir/run/slurmd.pid"; }

usage() {
  echo "usage: scripts/slurm/local-cluster.sh start|stop|status|env   (folder: \$SOFTCON_SLURM_DIR, default results/slurm)" >&2
  exit 1
}

# Two ports in 20000..29999 and munge's socket folder, from the folder's path: one cluster per
# checkout.
hash="$(printf '%s' "$dir" | cksum | cut -d' ' -f1)"
sockdir="/tmp/softcon-munge-$hash"
ctld_port=$((20000 + (hash % 4999) * 2))
slurmd_port=$((ctld_port + 1))

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

show_log() {
  [ -f "$1" ] && { echo "--- last lines of $1:" >&2; tail -n 8 "$1" >&2; }
}

write_conf() {
  local node cpus_line
  node="$(hostname -s)"
  # "NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105"
  cpus_line="$(slurmd -C 2>/dev/null | grep -m1 '^NodeName=')" || die "slurmd -C cannot describe this machine"
  cpus_line="NodeName=$node ${cpus_line#NodeName=* }"
  cat >"$conf.tmp" <<EOF
# Written by scripts/slurm/local-cluster.sh for $dir: a one-node cluster on 127.0.0.1.
ClusterName=softcon
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sockdir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
JobRequeue=1
KillWait=30
$cpus_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$conf.tmp" "$conf"
}

start() {
  local p missing=()
  for p in slurmctld slurmd munged sbatch scontrol sinfo; do
    command -v "$p" >/dev/null || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] || die "not installed: ${missing[*]} (scripts/install-deps.sh --slurm)"
  [ "$(id -u)" -eq 0 ] || die "needs root: slurmd starts every job as its user (run through sudo)"
  if munged_up && ctld_up && slurmd_up; then
    echo "local-cluster: already running ($dir)"
    status >/dev/null && { status_line; return 0; }
    echo "local-cluster: ... but it does not answer; restarting it" >&2
    stop
  fi
  mkdir -p "$dir"/{munge,state,spool,run,log} || code=3 die "cannot create $dir"
  chmod 0700 "$dir/munge"
  mkdir -p -m 0711 "$sockdir" || code=3 die "cannot create $sockdir"
  [ -O "$sockdir" ] || die "$sockdir belongs to another user"
  chmod 0711 "$sockdir" # munged: the socket's folder searchable by everyone
  for p in "$ctld_port" "$slurmd_port"; do
    if port_busy "$p" && ! ctld_up && ! slurmd_up; then
      die "port $p on 127.0.0.1 is taken by another program (set SOFTCON_SLURM_DIR to another folder to move the ports)"
    fi
  done
  write_conf
  export SLURM_CONF="$conf"
  if [ ! -s "$dir/munge/munge.key" ]; then
    (umask 077 && dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null) || die "cannot write the munge key"
    chmod 0400 "$dir/munge/munge.key"
  fi
  if ! munged_up; then
    munged --key-file="$dir/munge/munge.key" --socket="$sockdir/munge.socket" --pid-file="$dir/munge/munged.pid" \
      --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" || { show_log "$dir/log/munged.log"; die "munged did not start"; }
  fi
  if ! ctld_up; then
    slurmctld || { show_log "$dir/log/slurmctld.log"; die "slurmctld did not start"; }
  fi
  if ! slurmd_up; then
    slurmd || { show_log "$dir/log/slurmd.log"; die "slurmd did not start"; }
  fi
  # wait for the controller, then for the node to register (a node left down by an earlier run
  # is resumed)
  local i state=""
  for i in $(seq 1 60); do
    state="$(sinfo -h -n "$(hostname -s)" -o %T 2>/dev/null | head -1)"
    case "$state" in
      idle|mixed|allocated|completing) break ;;
      down*|drain*) scontrol update NodeName="$(hostname -s)" State=RESUME >/dev/null 2>&1 ;;
    esac
    ctld_up || { show_log "$dir/log/slurmctld.log"; die "slurmctld exited"; }
    slurmd_up || { show_log "$dir/log/slurmd.log"; die "slurmd exited"; }
    sleep 0.5
  done
  case "$state" in
    idle|mixed|allocated|completing) ;;
    *) show_log "$dir/log/slurmctld.log"; show_log "$dir/log/slurmd.log"; die "the node did not come up within 30 s (state '${state:-none}')" ;;
  esac
  status_line
}

status_line() {
  export SLURM_CONF="$conf"
  echo "local-cluster: up: $(sinfo -h -o '%n %c CPUs, %m MB, partition %R, %T' | head -1); ports $(sed -n 's/^SlurmctldPort=//p' "$conf")/$(sed -n 's/^SlurmdPort=//p' "$conf")"
  echo "local-cluster: use it with: export SLURM_CONF=$conf"
}

status() {
  local up=1 name f
  for name in munged slurmctld slurmd; do
    case $name in munged) f="$dir/munge/munged.pid" ;; *) f="$dir/run/$name.pid" ;; esac
    if pid_alive "$f"; then echo "$name: running, pid $(pid_of "$f")"; else echo "$name: not running"; up=0; fi
  done
  [ $up -eq 1 ] || return 3
  export SLURM_CONF="$conf"
  scontrol ping 2>&1 | sed 's/^/scontrol ping: /'
  sinfo -N -o '%N %T %c CPUs %m MB' 2>&1 | sed 's/^/sinfo: /'
  squeue -o '%i %j %T %M %R' 2>&1 | sed 's/^/squeue: /'
  scontrol ping >/dev/null 2>&1 || return 3
}

stop() {
  local i f pids=()
  if [ -f "$conf" ] && ctld_up; then
    SLURM_CONF="$conf" scontrol shutdown >/dev/null 2>&1 # ends slurmctld and slurmd cleanly
  fi
  for f in "$dir/run/slurmd.pid" "$dir/run/slurmctld.pid" "$dir/munge/munged.pid"; do
    pid_alive "$f" && pids+=("$(pid_of "$f")")
  done
  for i in $(seq 1 40); do
    local alive=()
    for f in "${pids[@]}"; do kill -0 "$f" 2>/dev/null && alive+=("$f"); done
    [ ${#alive[@]} -eq 0 ] && break
    [ "$i" -eq 10 ] && kill -TERM "${alive[@]}" 2>/dev/null # munged, or a daemon that ignored shutdown
    sleep 0.25
  done
  for f in "${pids[@]}"; do kill -0 "$f" 2>/dev/null && { echo "local-cluster: pid $f did not stop; killing it" >&2; kill -KILL "$f"; }; done
  rm -f "$dir/run/slurmd.pid" "$dir/run/slurmctld.pid" "$dir/munge/munged.pid"
  rm -rf "$sockdir"
  echo "local-cluster: stopped ($dir)"
}

[ $# -eq 1 ] || usage
case "$1" in
  start) start ;;
  stop) stop ;;
  status) if status; then exit 0; else echo "local-cluster: not running ($dir)"; exit 3; fi ;;
  env) echo "export SLURM_CONF=$conf" ;;
  *) usage ;;
esac

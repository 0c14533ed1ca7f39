#!/bin/sh
# scripts/slurm-local.sh — a real one-node Slurm on this machine, for tests of
# qkv's Slurm job-array sweeps. No systemd, no accounting database: munged,
# slurmctld and slurmd are started by hand in the background, and everything
# they write (config, key, state, spool, logs, pid files) lives in one
# directory of their own, $QKV_SLURM_DIR (default /tmp/qkv-slurm). Nothing
# under /etc is used or changed (apt-get may add /etc/munge/munge.key; unused).
#
#   scripts/slurm-local.sh start    install packages if missing (root), write the
#                                   config, start the daemons, wait until the
#                                   node is idle; returns at once when running
#   scripts/slurm-local.sh stop     cancel all jobs, stop the daemons (pid files)
#   scripts/slurm-local.sh status   say whether it runs (pids, sinfo); exit 3 if not
#   scripts/slurm-local.sh env      print the line a caller evaluates:
#                                   eval "$(scripts/slurm-local.sh env)"
#
# Clients (sbatch, squeue, scontrol, sinfo, scancel) find the cluster through
# SLURM_CONF only; always `eval "$(scripts/slurm-local.sh env)"` first.
# A cold `start` begins with an empty queue (slurmctld -c); job ids go on
# from the last run's (they start at 1 only in a new $QKV_SLURM_DIR).
# No accounting, so no sacct: ask `scontrol show job ID` (finished jobs stay
# visible for MinJobAge seconds) or poll `squeue -h -j ID` until it is empty.
#
# Notes for tests (measured on 2 busy cores):
# - a job starts ~0.5 s after sbatch; the next tasks of a throttled array
#   (%N) or a dependent job ~1 s after the previous ones end.
# - `scontrol requeue JOBID_TASK` sends the task SIGTERM (SIGKILL KillWait s
#   later) and runs it again ~11-15 s later (see cred_expire), with the same
#   task id and job id and SLURM_RESTART_COUNT=1 (unset on the first run);
#   --open-mode=append keeps both runs' output. Killing the script (SIGKILL,
#   scancel --batch --signal=TERM) makes the task FAILED, not requeued; a
#   script may requeue itself (scontrol requeue) from its TERM trap.
# - pass settings through the environment (sbatch's default --export=ALL) or
#   arguments: any other --export makes slurmd run the user's login shell
#   (su -) first, 6-10 s here.
#
# Environment:
#   QKV_SLURM_DIR      where everything lives (default /tmp/qkv-slurm; must be on
#                      a filesystem that allows exec, since job scripts are
#                      copied into the spool and run from there)
#   QKV_SLURM_PORT     slurmctld port; slurmd uses the next one (default 16817,
#                      not Slurm's 6817, so a system Slurm on this host is left alone)
#   QKV_SLURM_TIMEOUT  seconds `start` waits for the node to be idle (default 60)
#   QKV_SLURM_KILLWAIT seconds between SIGTERM and SIGKILL when a job is
#                      cancelled, requeued or out of time (default 10)
set -eu

PROGS="munged:munge mungekey:munge slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client"
DIR=${QKV_SLURM_DIR:-/tmp/qkv-slurm}
case $DIR in /*) ;; *) DIR=$(pwd)/$DIR ;; esac   # Slurm wants absolute paths
PORT=${QKV_SLURM_PORT:-16817}
TIMEOUT=${QKV_SLURM_TIMEOUT:-60}
KILLWAIT=${QKV_SLURM_KILLWAIT:-10}
CONF=$DIR/slurm.conf
MUNGE_SOCKET=$DIR/munge/munge.socket
NODE=$(hostname -s)
PATH=$PATH:/usr/sbin:/sbin
SLURM_CONF=$CONF
export SLURM_CONF PATH

say() { echo "slurm-local: $*" >&2; }
die() { say "$*"; exit 1; }

# pid of a running daemon from its pid file, checked against its name so a
# recycled pid is never taken for (or killed as) ours; empty when not running.
# (Shell builtins only: a fork costs tens of ms on a loaded machine.)
pid_of() { # name pidfile
    p="" comm=""
    { read -r p <"$2"; } 2>/dev/null || return 0
    case $p in ''|*[!0-9]*) return 0 ;; esac
    { read -r comm <"/proc/$p/comm"; } 2>/dev/null || return 0
    [ "$comm" = "$1" ] && is_alive "$p" && echo "$p"
    return 0
}
# running and not a zombie (a dead daemon may stay a zombie for a while)
is_alive() { # pid
    st=""
    { read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
    st=${st##*) }      # /proc/PID/stat: "pid (comm) state ..."
    case ${st%% *} in Z|X|'') return 1 ;; esac
}
munged_pid()    { pid_of munged    "$DIR/run/munged.pid"; }
slurmctld_pid() { pid_of slurmctld "$DIR/run/slurmctld.pid"; }
slurmd_pid()    { pid_of slurmd    "$DIR/run/slurmd.pid"; }

node_state() { sinfo -h -n "$NODE" -o %T 2>/dev/null || true; }   # one partition: one line

log_tails() {
    for f in munged slurmctld slurmd; do
        [ -f "$DIR/log/$f.log" ] || continue
        echo "----- tail of $DIR/log/$f.log" >&2
        tail -n 15 "$DIR/log/$f.log" >&2
    done
}

install_packages() {
    # program -> Debian package (checking programs is much faster than dpkg-query)
    missing=""
    for pair in $PROGS; do
        command -v "${pair%%:*}" >/dev/null 2>&1 && continue
        case "$missing " in *" ${pair#*:} "*) ;; *) missing="$missing ${pair#*:}" ;; esac
    done
    [ -z "$missing" ] && return 0
    cmd="apt-get install -y --no-install-recommends$missing"
    if [ "$(id -u)" -ne 0 ]; then
        say "missing packages:$missing"
        say "install them with: sudo apt-get update && sudo $cmd"
        exit 1
    fi
    say "installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >&2
}

write_conf() {
    # This machine as slurmd sees it (CPUs, sockets, cores, threads, RealMemory);
    # the node gets all of it. Drop "UpTime=...", keep the NodeName=... line.
    hw=$(slurmd -C | sed -n 's/^\(NodeName=.*\)$/\1/p')
    [ -n "$hw" ] || die "slurmd -C printed no NodeName line"
    cat >"$CONF.new" <<EOF
# Written by scripts/slurm-local.sh start; rewritten on every cold start.
ClusterName=qkv
# One host is controller and compute node; 127.0.0.1 so no DNS is needed.
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
# Daemons run as root (no slurm user to set up); jobs run as their submitter.
SlurmUser=root
SlurmdUser=root
# Our own munged (own key and socket). cred_expire is also how long a requeued
# job must wait before it may start again: 120 s by default, 10 here.
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET,cred_expire=10
# State, spool, pid files and logs in our directory (writable, exec allowed).
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No systemd/cgroup delegation in a container, so no cgroup plugins (and no
# cgroup.conf): a job's processes are its process group; no CPU binding.
# (proctrack/pgid rather than linuxproc: linuxproc follows the process tree,
# so a background child whose job script has exited, e.g. from a TERM trap,
# is reparented to init and left running; pgid kills it. A job process that
# makes its own process group (setsid) would escape either.)
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# No slurmdbd: no accounting (so no sacct) and no job completion log.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
# Batch jobs may be requeued (scontrol requeue, node failure) unless the job
# says --no-requeue.
JobRequeue=1
# A node that was down (e.g. slurmd restarted) comes back when slurmd registers.
ReturnToService=2
# Seconds from SIGTERM to SIGKILL for a cancelled/requeued/timed-out job.
KillWait=$KILLWAIT
# Finished jobs stay visible to scontrol show job for 5 minutes.
MinJobAge=300
# Default FIFO+backfill scheduler. A job that becomes startable without an
# event (a requeued job once its begin time passes, the next tasks of a
# throttled array) waits for the main loop's periodic pass: every second here,
# not every 60 s. Measured: 20 trivial tasks at %2 finish in 11 s (29 s
# without this), requeue to rerun ~12-15 s (~27 s without).
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
# Consumable CPUs: every CPU is allocated on its own, so two 1-CPU array
# tasks run at once on 2 CPUs (select/linear would give each a whole node).
# Memory is not a consumable resource: a job is not limited to a share of
# it, and --mem up to RealMemory is accepted.
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# The node: this whole machine, reachable on 127.0.0.1.
$hw NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=qkv Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
    mv "$CONF.new" "$CONF"
}

start_munged() {
    [ -n "$(munged_pid)" ] && return 0
    if [ ! -s "$DIR/munge/munge.key" ]; then
        mungekey --create --keyfile="$DIR/munge/munge.key" 2>/dev/null ||
            dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 2>/dev/null
    fi
    chmod 0400 "$DIR/munge/munge.key"
    munged --socket="$MUNGE_SOCKET" --key-file="$DIR/munge/munge.key" \
        --pid-file="$DIR/run/munged.pid" --log-file="$DIR/log/munged.log" \
        --seed-file="$DIR/munge/munged.seed" 9>&- ||
        { log_tails; die "munged did not start"; }
}

# true when all three daemons run and the node takes jobs
up() {
    [ -n "$(munged_pid)" ] && [ -n "$(slurmctld_pid)" ] && [ -n "$(slurmd_pid)" ] || return 1
    case $(node_state) in
        idle*|mixed*|allocated*|completing*) return 0 ;;
    esac
    return 1
}

# take $DIR/lock: one start/stop at a time (tests may call start concurrently)
lock() {
    exec 9>"$DIR/lock"
    if command -v flock >/dev/null 2>&1; then
        flock -w "$TIMEOUT" 9 || die "$DIR/lock still held after ${TIMEOUT}s"
    fi
}

start() {
    install_packages
    # already up: nothing to do (this needs no root; anyone may submit jobs)
    if up; then say "already running, SLURM_CONF=$CONF"; return 0; fi
    [ "$(id -u)" -eq 0 ] || die "start needs root (slurmd runs jobs as their submitter)"
    mkdir -p "$DIR"
    lock
    if up; then say "already running, SLURM_CONF=$CONF"; return 0; fi

    if [ -z "$(munged_pid)" ] || [ -z "$(slurmctld_pid)" ] || [ -z "$(slurmd_pid)" ]; then
        # cold start (or a partial one: stop what is left, start afresh)
        stop_daemons
        mkdir -p "$DIR/munge" "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/run"
        chmod 0700 "$DIR/state"
        chmod 0755 "$DIR" "$DIR/munge" "$DIR/spool"   # munged: socket dir must be o+x
        write_conf
        start_munged
        # -c: forget jobs and node state of an earlier run
        # (9>&-: the daemons must not inherit, and so hold, the lock)
        slurmctld -c -f "$CONF" 9>&- || { log_tails; die "slurmctld did not start"; }
        slurmd -f "$CONF" 9>&- || { log_tails; die "slurmd did not start"; }
    fi

    # wait for slurmd to register and the node to be idle
    t=0 resumed=""
    until up; do
        st=$(node_state)
        case $st in
            drain*|down) # slurmd answers but the node was set down/drained
                if [ -z "$resumed" ]; then
                    scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true
                    resumed=1
                fi ;;
        esac
        dead=""
        if [ "$t" -ge 10 ]; then   # after 2 s every daemon has its pid file
            [ -n "$(munged_pid)" ] || dead="$dead munged"
            [ -n "$(slurmctld_pid)" ] || dead="$dead slurmctld"
            [ -n "$(slurmd_pid)" ] || dead="$dead slurmd"
        fi
        if [ -n "$dead" ] || [ "$t" -ge "$((TIMEOUT * 5))" ]; then
            if [ -n "$dead" ]; then say "exited:$dead (see the log tails below)"
            else say "node $NODE not idle after ${TIMEOUT}s (state: ${st:-no answer from slurmctld})"
            fi
            status >&2 || true
            sinfo -R >&2 2>/dev/null || true
            log_tails
            exit 1
        fi
        sleep 0.2
        t=$((t + 1))
    done
    say "running: node $NODE $(node_state), SLURM_CONF=$CONF"
}

# TERM the given pids, wait until they are gone; SIGKILL what is left after 10 s.
kill_wait() { # pid...
    [ $# -gt 0 ] || return 0
    kill "$@" 2>/dev/null || true
    i=0
    while :; do
        alive=""
        for p in "$@"; do is_alive "$p" && alive="$alive $p"; done
        [ -z "$alive" ] && return 0
        # shellcheck disable=SC2086
        [ "$i" -eq 50 ] && kill -9 $alive 2>/dev/null
        [ "$i" -ge 100 ] && { say "still running:$alive"; return 1; }
        sleep 0.2
        i=$((i + 1))
    done
}

# All descendants of a pid, children first listed after their parent.
descendants() { # pid
    for c in $(pgrep -P "$1" 2>/dev/null || true); do echo "$c"; descendants "$c"; done
}

# Job steps run under slurmstepd processes, which outlive slurmd (e.g. when
# slurmd was killed with -9). Ours have our directory open (cwd, log file).
# Kill them and the job processes under them.
kill_stepds() {
    for p in $(pgrep -x slurmstepd 2>/dev/null || true); do
        case $(readlink "/proc/$p/cwd" /proc/"$p"/fd/* 2>/dev/null) in
            *"$DIR/"*)
                # shellcheck disable=SC2046
                set -- "$p" $(descendants "$p")
                say "killing leftover job processes: $*"
                kill -9 "$@" 2>/dev/null || true ;;
        esac
    done
}

stop_daemons() {
    if [ -n "$(slurmctld_pid)" ] && [ -n "$(slurmd_pid)" ] &&
       [ -n "$(squeue -h -o %A 2>/dev/null | head -n 1)" ]; then
        # cancel every job (all users), give them KillWait to end
        # (again every second: a job that requeues itself on SIGTERM is back)
        i=0
        while [ -n "$(squeue -h -o %A 2>/dev/null | head -n 1)" ] && [ "$i" -lt $(((KILLWAIT + 10) * 5)) ]; do
            [ $((i % 5)) -eq 0 ] && { scancel --partition=qkv 2>/dev/null || true; }
            sleep 0.2
            i=$((i + 1))
        done
    fi
    # shellcheck disable=SC2046
    kill_wait $(slurmd_pid) $(slurmctld_pid) $(munged_pid)
    kill_stepds
    return 0
}

stop() {
    [ -d "$DIR" ] || { say "not running (no $DIR)"; return 0; }
    lock
    stop_daemons
    say "stopped"
}

status() {
    m=$(munged_pid 2>/dev/null) c=$(slurmctld_pid 2>/dev/null) d=$(slurmd_pid 2>/dev/null)
    echo "munged:${m:-not running} slurmctld:${c:-not running} slurmd:${d:-not running} SLURM_CONF=$CONF"
    if [ -n "$m" ] && [ -n "$c" ] && [ -n "$d" ] && sinfo 2>/dev/null; then
        return 0
    fi
    echo "not running"
    return 3
}

case ${1:-} in
    start)  start ;;
    stop)   stop ;;
    status) status ;;
    env)    echo "export SLURM_CONF=$CONF" ;;
    *)      echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac

# A real Slurm on the two test hosts of lib.sh (sourced after it, once cluster_up has made them):
# one munged (its own socket and key copy), slurmctld on host A, and one slurmd per host, each
# in its host's network namespace under its own host name, every path in a private folder. The
# client commands (srun, sbatch, salloc, sinfo, scontrol) run inside host A through slurm_in.
# Everything is stopped by cluster_down's trap (slurm_down first).
#
#   slurm_up [STATES]    start munge and the daemons; wait until sinfo's node states are STATES
#                        (default "idle 2": both nodes idle; sorted "%t %D" lines joined by
#                        commas, as "drain 1,idle 1") (SKIP, 77, when a tool is missing; a
#                        failure when a daemon does not start)
#   SL_HEALTH=PROGRAM    set before slurm_up: slurm.conf's HealthCheckProgram, run by each
#                        slurmd at its start and every 2 s after
#   slurm_in CMD...      CMD inside host A (its namespace and host name), SLURM_CONF set
#   slurm_down           stop the daemons (also run on exit)
#
# Facts this rests on (docs/slurm.md, "What was tested"): the namespace is entered with nsenter
# --net, not `ip netns exec`, which remounts /sys and hides the cgroup tree slurmd reads; PMIx's
# client folder is per node (both slurmd would make the same spmix_appdir_* under one base), and
# mpi.conf's PMIxCliTmpDirBase does not expand %n, so each slurmd has a configuration folder of
# its own (the same slurm.conf, its own mpi.conf).
SL_DIR=
sl_pids=

# sl_ns HOST CMD...: CMD in the namespace of HOST (a or b) under its host name
sl_ns() {
    case $1 in
        a) sl_n=$CL_NS_A sl_h=$CL_HOST_A ;;
        b) sl_n=$CL_NS_B sl_h=$CL_HOST_B ;;
    esac
    shift
    nsenter --net="/run/netns/$sl_n" unshare -u sh -c 'hostname "$0" && exec "$@"' "$sl_h" "$@"
}

slurm_in() { SLURM_CONF=$SL_DIR/etc-a/slurm.conf sl_ns a "$@"; }

# sl_skip REASON: SKIP (77) with the daemons started so far stopped (a tool missing); sl_fail
# REASON: the same, a failure (the tools are here and a daemon did not start)
sl_skip() { slurm_down; cl_skip "$@"; }
sl_fail() { echo "FAIL: $*" >&2; slurm_down; cluster_down; exit 1; }

slurm_up() {
    for tool in munged slurmctld slurmd srun sbatch salloc sinfo scontrol nsenter runuser; do
        command -v "$tool" >/dev/null 2>&1 ||
            sl_skip "'$tool' is not installed (harness/scripts/setup-debian.sh installs slurm-wlm and munge)"
    done
    [ -r /etc/munge/munge.key ] || sl_skip "no /etc/munge/munge.key (the munge package makes it)"
    SL_DIR=$CL_DIR/slurm
    trap 'slurm_down; cluster_down' EXIT
    trap 'slurm_down; cluster_down; exit 130' INT
    trap 'slurm_down; cluster_down; exit 143' TERM
    # the munge user reaches its folder through CL_DIR (made 0700 by mktemp)
    chmod 711 "$CL_DIR"
    mkdir -p "$SL_DIR/munge" "$SL_DIR/ctld" "$SL_DIR/spool/$CL_HOST_A" "$SL_DIR/spool/$CL_HOST_B" \
        "$SL_DIR/etc-a" "$SL_DIR/etc-b" "$SL_DIR/pmix-a" "$SL_DIR/pmix-b"
    chmod 711 "$SL_DIR"
    cp /etc/munge/munge.key "$SL_DIR/munge/key"
    chown -R munge:munge "$SL_DIR/munge"
    chmod 700 "$SL_DIR/munge"
    runuser -u munge -- munged --force --socket="$SL_DIR/munge/sock" --key-file="$SL_DIR/munge/key" \
        --pid-file="$SL_DIR/munge/pid" --log-file="$SL_DIR/munge/log" \
        --seed-file="$SL_DIR/munge/seed" 2>"$SL_DIR/munged.err" ||
        sl_fail "munged does not start: $(cat "$SL_DIR/munged.err" "$SL_DIR/munge/log" 2>/dev/null | tail -n 2)"
    cat >"$SL_DIR/etc-a/slurm.conf" <<EOC
# slurm.conf of the cluster test $cl_id (tests/cluster/slurm_lib.sh)
ClusterName=fb$cl_id
SlurmctldHost=$CL_HOST_A($CL_IP_A)
AuthType=auth/munge
AuthInfo=socket=$SL_DIR/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$SL_DIR/ctld
SlurmdSpoolDir=$SL_DIR/spool/%n
SlurmctldPidFile=$SL_DIR/slurmctld.pid
SlurmdPidFile=$SL_DIR/slurmd.%n.pid
SlurmctldLogFile=$SL_DIR/slurmctld.log
SlurmdLogFile=$SL_DIR/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
ReturnToService=2
SlurmdParameters=config_overrides
GresTypes=gpu
InactiveLimit=0
KillWait=2
$( [ -n "${SL_HEALTH:-}" ] && printf 'HealthCheckProgram=%s\nHealthCheckInterval=2\nHealthCheckNodeState=ANY\n' "$SL_HEALTH")
NodeName=$CL_HOST_A NodeAddr=$CL_IP_A CPUs=32 Gres=gpu:4 State=UNKNOWN
NodeName=$CL_HOST_B NodeAddr=$CL_IP_B CPUs=32 Gres=gpu:4 State=UNKNOWN
PartitionName=fb Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOC
    for h in a b; do
        cp "$SL_DIR/etc-a/slurm.conf" "$SL_DIR/etc-$h/slurm.conf" 2>/dev/null
        echo "PMIxCliTmpDirBase=$SL_DIR/pmix-$h" >"$SL_DIR/etc-$h/mpi.conf"
        # four "GPUs" per node for --gpus-per-node: files standing in for the device nodes
        mkdir -p "$SL_DIR/dev-$h"
        touch "$SL_DIR/dev-$h/gpu0" "$SL_DIR/dev-$h/gpu1" "$SL_DIR/dev-$h/gpu2" "$SL_DIR/dev-$h/gpu3"
        echo "Name=gpu File=$SL_DIR/dev-$h/gpu[0-3]" >"$SL_DIR/etc-$h/gres.conf"
    done
    sl_ns a slurmctld -f "$SL_DIR/etc-a/slurm.conf" 2>"$SL_DIR/slurmctld.err" ||
        sl_fail "slurmctld does not start: $(tail -n 3 "$SL_DIR/slurmctld.err" "$SL_DIR/slurmctld.log" 2>/dev/null)"
    sl_ns a slurmd -f "$SL_DIR/etc-a/slurm.conf" -N "$CL_HOST_A" 2>"$SL_DIR/slurmd-a.err" ||
        sl_fail "slurmd on $CL_HOST_A does not start: $(tail -n 3 "$SL_DIR/slurmd-a.err")"
    sl_ns b slurmd -f "$SL_DIR/etc-b/slurm.conf" -N "$CL_HOST_B" 2>"$SL_DIR/slurmd-b.err" ||
        sl_fail "slurmd on $CL_HOST_B does not start: $(tail -n 3 "$SL_DIR/slurmd-b.err")"
    for _ in $(seq 1 100); do
        [ "$(slurm_in sinfo -h -o '%t %D' 2>/dev/null | sort | paste -sd, -)" = "${1:-idle 2}" ] && return 0
        sleep 0.2
    done
    sl_fail "the 2 nodes are not '${1:-idle 2}' after 20 s: $(slurm_in sinfo -R 2>&1 | tail -n 3) $(tail -n 5 "$SL_DIR"/slurmctld.log)"
}

# The daemons go before their folder does (cluster_down removes it): munged runs outside the
# namespaces, where cluster_down's kill does not reach.
slurm_down() {
    [ -n "$SL_DIR" ] || return 0
    sl_gone=
    for f in "$SL_DIR"/slurmd.*.pid "$SL_DIR/slurmctld.pid" "$SL_DIR/munge/pid"; do
        pid=$(cat "$f" 2>/dev/null) && kill -TERM "$pid" 2>/dev/null && sl_gone="$sl_gone $pid"
    done
    for pid in $sl_gone; do
        for _ in $(seq 1 25); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$pid" 2>/dev/null
    done
    SL_DIR=
    return 0
}

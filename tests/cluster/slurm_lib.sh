# A real Slurm on the test hosts of lib.sh (two) or multi.sh (N), sourced after them once
# cluster_up or multi_up has made the hosts: one munged (its own socket and key copy),
# slurmctld on the first host, and one slurmd per host, each in its host's network namespace
# under its own host name, every path in a private folder. The client commands (srun, sbatch,
# salloc, sinfo, scontrol) run inside the first host through slurm_in. The daemons are stopped
# on exit (or a signal) before the hosts go; a test killed with SIGKILL leaves them in its
# namespaces, which the next cluster test reaps (lib.sh, multi.sh).
#
#   slurm_up [STATES]    start munge and the daemons; wait until sinfo's node states are STATES;
#                        stop unless scontrol shows the PMIx fences as rings (below)
#                        (default "idle N": every node idle; sorted "%t %D" lines joined by
#                        commas, as "drain 1,idle 1") (SKIP, 77, when a tool is missing; a
#                        failure when a daemon does not start)
#   SL_PROLOG=PROGRAM    set before slurm_up: slurm.conf's Prolog, run by slurmd before each job
#   SL_HEALTH=PROGRAM    set before slurm_up: slurm.conf's HealthCheckProgram, run by each
#                        slurmd at its start and every 2 s after
#   SL_BIND=1            set before slurm_up: TaskPlugin=task/affinity (srun --cpu-bind binds
#                        each task) and each node declared with this machine's CPUs; without
#                        it, task/none and 32 CPUs a node (docs/slurm.md's batch script asks
#                        for --cpus-per-task=8)
#   slurm_missing        why slurm_up would SKIP here (empty when it would not)
#   slurm_in CMD...      CMD inside the first host (its namespace and host name), SLURM_CONF set
#   reason_of, state_of  a node's drain reason (whole) and state, from sinfo
#   wait_state NODE S    until the node's state is S (20 s at most; 1 when it never is)
#   health_nodes TREE    each host's sysfs a copy of TREE, and node.ini, health's profile
#   health_wrapper F L O the program slurmd runs: health with options O, logged to L-HOST.log
#   slurm_down           stop the daemons (also run on exit)
#
# Facts this rests on (docs/slurm.md, "What was tested"): the namespace is entered with nsenter
# --net, not `ip netns exec`, which remounts /sys and hides the cgroup tree slurmd reads; PMIx's
# client folder is per node (two slurmd would make the same spmix_appdir_* under one base), and
# mpi.conf's PMIxCliTmpDirBase does not expand %n, so each slurmd has a configuration folder of
# its own (the same slurm.conf, its own mpi.conf and gres.conf). mpi.conf also sets
# PMIxCollFence=ring: with this Slurm's default (mixed: a ring for the modex, a tree for Open
# MPI's barrier at the end of MPI_Init) a rank still waiting for the modex was sent a peer's
# first message (so, we infer, the peer was through the barrier already) and died of a
# segmentation fault in MPI_Init; 7 of 200 launches, none with rings (docs/slurm.md, "A rank
# killed in MPI_Init under srun").
SL_DIR=
SL_NODES= # "namespace host address" lines, the controller's first
SL_BASE=  # the hosts' private folder
SL_DOWN=  # what removes the hosts: cluster_down or multi_down

# sl_hosts: SL_NODES, SL_BASE and SL_DOWN from the hosts made: multi.sh's N, or lib.sh's two
sl_hosts() {
    SL_NODES=
    if [ "${MC_N:-0}" -gt 0 ]; then
        SL_BASE=$MC_DIR SL_DOWN=multi_down
        sl_i=0
        while [ "$sl_i" -lt "$MC_N" ]; do
            SL_NODES="$SL_NODES$(multi_ns $sl_i) $(multi_host $sl_i) $(multi_ip $sl_i)
"
            sl_i=$((sl_i + 1))
        done
    else
        SL_BASE=$CL_DIR SL_DOWN=cluster_down
        SL_NODES="$CL_NS_A $CL_HOST_A $CL_IP_A
$CL_NS_B $CL_HOST_B $CL_IP_B
"
    fi
    SL_FIRST=$(echo "$SL_NODES" | awk 'NR == 1 { print $2 }')
    SL_COUNT=$(echo "$SL_NODES" | awk 'NF == 3 { n++ } END { print n }')
}

# sl_ns HOST CMD...: CMD in the namespace of HOST (its host name) under that name
sl_ns() {
    sl_n=$(echo "$SL_NODES" | awk -v h="$1" '$2 == h { print $1 }')
    sl_h=$1
    shift
    nsenter --net="/run/netns/$sl_n" unshare -u sh -c 'hostname "$0" && exec "$@"' "$sl_h" "$@"
}

slurm_in() { SLURM_CONF=$SL_DIR/etc-$SL_FIRST/slurm.conf sl_ns "$SL_FIRST" "$@"; }
# reason_of NODE: the node's reason as sinfo -R prints it whole; state_of NODE: its state
reason_of() { slurm_in sinfo -R -h -N -o '%N|%E' | awk -F'|' -v n="$1" '$1 == n { print $2 }'; }
state_of() { slurm_in sinfo -h -N -n "$1" -o '%t'; }
# wait_state NODE STATE: until sinfo says STATE, read every 0.2 s for up to 20 s (a node passes
# through `comp` after a job ends, and a health check or prolog acts on its own clock)
wait_state() {
    for _ in $(seq 1 100); do
        [ "$(state_of "$1")" = "$2" ] && return 0
        sleep 0.2
    done
    return 1
}
# health_nodes TREE: each of the two hosts a sysfs of its own ($CL_DIR/sysfs-HOST, a copy of TREE,
# for FB_SYSFS_ROOT) and $CL_DIR/node.ini, the profile health checks them against: 1 GPU and 1
# ACTIVE InfiniBand port at 100 Gb/s (slurm_health.sh, slurm_prolog.sh)
health_nodes() {
    for h in "$CL_HOST_A" "$CL_HOST_B"; do
        mkdir -p "$CL_DIR/sysfs-$h" && cp -a "$1/." "$CL_DIR/sysfs-$h/" || fail "cannot copy $1"
    done
    printf '[profile]\nname = test-node\ndescription = 1 GPU and 1 EDR port (tests/cluster)\n[node]\ngpus = 1\n[infiniband]\nports = 1\nrate_gbps = 100\n' >"$CL_DIR/node.ini"
}
# health_wrapper FILE LOG [OPTION...]: FILE, what slurm.conf's HealthCheckProgram or Prolog
# names (a path, no arguments; slurmd starts it with a bare environment, so PATH and SLURM_CONF
# are set in it, as a site's wrapper would): `fabricbench health` ($bin) against node.ini with
# the host's own sysfs and OPTIONs, its lines appended to $CL_DIR/LOG-HOST.log
health_wrapper() {
    f=$1 log=$2
    shift 2
    cat >"$f" <<EOH
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF=$CL_DIR/slurm/etc-$CL_HOST_A/slurm.conf
FB_SYSFS_ROOT=$CL_DIR/sysfs-\$(hostname) exec $bin health --profile $CL_DIR/node.ini $* >>$CL_DIR/$log-\$(hostname).log 2>&1
EOH
    chmod +x "$f"
}

# sl_skip REASON: SKIP (77) with the daemons started so far stopped (a tool missing); sl_fail
# REASON: the same, a failure (the tools are here and a daemon did not start)
sl_skip() { slurm_down; echo "SKIP: $*" >&2; $SL_DOWN; exit 77; }
sl_fail() { echo "FAIL: $*" >&2; slurm_down; $SL_DOWN; exit 1; }

# slurm_missing: prints why a Slurm cannot be started here (a tool or munge's key missing),
# nothing when it can
slurm_missing() {
    for tool in munged slurmctld slurmd srun sbatch salloc sinfo scontrol nsenter runuser; do
        command -v "$tool" >/dev/null 2>&1 || {
            echo "'$tool' is not installed (harness/scripts/setup-debian.sh installs slurm-wlm and munge)"
            return 0
        }
    done
    [ -r /etc/munge/munge.key ] || echo "no /etc/munge/munge.key (the munge package makes it)"
}

slurm_up() {
    sl_hosts
    sl_why=$(slurm_missing)
    [ -z "$sl_why" ] || sl_skip "$sl_why"
    SL_DIR=$SL_BASE/slurm
    trap 'slurm_down; $SL_DOWN' EXIT
    trap 'slurm_down; $SL_DOWN; exit 130' INT
    trap 'slurm_down; $SL_DOWN; exit 143' TERM
    trap 'slurm_down; $SL_DOWN; exit 129' HUP
    trap 'slurm_down; $SL_DOWN; exit 141' PIPE
    # the munge user reaches its folder through the hosts' folder (made 0700 by mktemp)
    chmod 711 "$SL_BASE"
    mkdir -p "$SL_DIR/munge" "$SL_DIR/ctld"
    chmod 711 "$SL_DIR"
    cp /etc/munge/munge.key "$SL_DIR/munge/key"
    chown -R munge:munge "$SL_DIR/munge"
    chmod 700 "$SL_DIR/munge"
    # munged inside the first host's namespace (its path socket reaches every host's), so the
    # hosts' clean-up, or the next test's reaping of a killed test's namespaces, stops it too
    sl_ns "$SL_FIRST" runuser -u munge -- munged --force --socket="$SL_DIR/munge/sock" --key-file="$SL_DIR/munge/key" \
        --pid-file="$SL_DIR/munge/pid" --log-file="$SL_DIR/munge/log" \
        --seed-file="$SL_DIR/munge/seed" 2>"$SL_DIR/munged.err" ||
        sl_fail "munged does not start: $(cat "$SL_DIR/munged.err" "$SL_DIR/munge/log" 2>/dev/null | tail -n 2)"
    # Each node: 32 CPUs and 4 "GPUs" declared (config_overrides lets a 2-CPU host say so), so
    # that docs/slurm.md's batch script (--cpus-per-task=8, --gpus-per-node=4) is granted.
    {
        cat <<EOC
# slurm.conf of the cluster test (tests/cluster/slurm_lib.sh)
ClusterName=fbtest
SlurmctldHost=$(echo "$SL_NODES" | awk 'NR == 1 { print $2 "(" $3 ")" }')
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
TaskPlugin=$([ -n "${SL_BIND:-}" ] && echo task/affinity || echo task/none)
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
ReturnToService=2
SlurmdParameters=config_overrides
GresTypes=gpu
InactiveLimit=0
KillWait=2
EOC
        [ -n "${SL_HEALTH:-}" ] &&
            printf 'HealthCheckProgram=%s\nHealthCheckInterval=2\nHealthCheckNodeState=ANY\n' "$SL_HEALTH"
        [ -n "${SL_PROLOG:-}" ] && printf 'Prolog=%s\n' "$SL_PROLOG"
        echo "$SL_NODES" | awk -v cpus="$([ -n "${SL_BIND:-}" ] && nproc || echo 32)" \
            'NF == 3 { print "NodeName=" $2 " NodeAddr=" $3 " CPUs=" cpus " Gres=gpu:4 State=UNKNOWN" }'
        echo "PartitionName=fb Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
    } >"$SL_DIR/slurm.conf"
    for h in $(echo "$SL_NODES" | awk 'NF == 3 { print $2 }'); do
        mkdir -p "$SL_DIR/spool/$h" "$SL_DIR/etc-$h" "$SL_DIR/pmix-$h" "$SL_DIR/dev-$h"
        cp "$SL_DIR/slurm.conf" "$SL_DIR/etc-$h/slurm.conf"
        printf 'PMIxCliTmpDirBase=%s\nPMIxCollFence=ring\n' "$SL_DIR/pmix-$h" >"$SL_DIR/etc-$h/mpi.conf"
        # four "GPUs" per node for --gpus-per-node: files standing in for the device nodes
        touch "$SL_DIR/dev-$h/gpu0" "$SL_DIR/dev-$h/gpu1" "$SL_DIR/dev-$h/gpu2" "$SL_DIR/dev-$h/gpu3"
        echo "Name=gpu File=$SL_DIR/dev-$h/gpu[0-3]" >"$SL_DIR/etc-$h/gres.conf"
    done
    sl_ns "$SL_FIRST" slurmctld -f "$SL_DIR/etc-$SL_FIRST/slurm.conf" 2>"$SL_DIR/slurmctld.err" ||
        sl_fail "slurmctld does not start: $(tail -n 3 "$SL_DIR/slurmctld.err" "$SL_DIR/slurmctld.log" 2>/dev/null)"
    for h in $(echo "$SL_NODES" | awk 'NF == 3 { print $2 }'); do
        sl_ns "$h" slurmd -f "$SL_DIR/etc-$h/slurm.conf" -N "$h" 2>"$SL_DIR/slurmd-$h.err" ||
            sl_fail "slurmd on $h does not start: $(tail -n 3 "$SL_DIR/slurmd-$h.err")"
    done
    sl_up=
    for _ in $(seq 1 100); do
        [ "$(slurm_in sinfo -h -o '%t %D' 2>/dev/null | sort | paste -sd, -)" = "${1:-idle $SL_COUNT}" ] && { sl_up=1; break; }
        sleep 0.2
    done
    [ -n "$sl_up" ] ||
        sl_fail "the $SL_COUNT nodes are not '${1:-idle $SL_COUNT}' after 20 s: $(slurm_in sinfo -R 2>&1 | tail -n 3) $(tail -n 5 "$SL_DIR"/slurmctld.log)"
    # the fences as rings (above), as the controller read its mpi.conf (every node's is the same
    # file but for PMIxCliTmpDirBase)
    slurm_in scontrol show config 2>&1 | grep -Eq '^PMIxCollFence += ring$' ||
        sl_fail "Slurm does not run its PMIx fences as rings: $(slurm_in scontrol show config 2>&1 | grep -E '^PMIxCollFence|error' | head -n 2)"
}

# The daemons go before their folder does (the hosts' clean-up removes it), each given time to
# end its work (slurmd its steps, munged its socket).
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

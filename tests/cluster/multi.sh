# N "hosts" on one Linux machine, for the cluster tests that need more than two (sourced, after
# ../lib.sh, by a script in this folder: it sources lib.sh beside it for its guard). Each host
# is a network namespace with its own host name (unshare -u), as in lib.sh; a Linux bridge that
# lives in a namespace of its own joins them: one veth from each host into the bridge's
# namespace, addresses on a private /24 (10.213.8, distinct from lib.sh's 10.213.7: both kinds
# of test may run side by side). mpirun runs inside host 0, so host 0's ranks are its
# children; every other host's ranks are started by an orted that Open MPI launches through an
# rsh agent script (agent.sh, written here), which enters that host's namespace, names it and,
# when the host is throttled, joins its CPU cgroup before exec'ing the orted. Everything is
# removed on exit, failed test or not. Hosts are numbered 0..N-1; with 1 rank per host, rank R
# runs on host R.
#
#   multi_up N                    make N hosts (2..99; exit 77 with the reason when it cannot)
#   multi_mpi PPN NP ARGS...      mpirun -np NP, PPN ranks per host (host 0's first), over TCP
#   multi_host I / multi_ip I     host I's name / address
#   multi_shape_host I RATE [BURST]  a tc token bucket of RATE (tc units: 400mbit) on host I's
#                                 link, both directions (host-side and bridge-side veth egress)
#   multi_shape_all RATE [BURST]  the same on every host
#   multi_shape_pair I J RATE     only the traffic between hosts I and J at RATE: htb on both
#                                 ends of I's and J's links, a default class at the host's own
#                                 rate (10gbit when unshaped) and a class at RATE chosen by a
#                                 u32 filter on the other host's address
#   multi_unshape                 remove all shaping
#   multi_throttle_host I PCT     host I's orted and ranks under a CPU quota of PCT % (5..) of
#                                 one CPU (cgroup v1 cpu controller, or v2 where it has cpu);
#                                 applies to the jobs started after it. A quota is a cap: on a
#                                 machine whose load gives each process less than PCT anyway it
#                                 changes nothing
#   multi_unthrottle              no quota on any host (for later jobs)
#   multi_pids I [NAME]           pids of the processes in host I (of the command NAME only)
#   multi_down                    remove everything (also run by the EXIT trap)
# Shaping is kept per host and rebuilt on every change, so the helpers combine in any order.

# lib.sh's guard (root, tools, the clean-up trap) and cl_clear_ns; its own two hosts are only
# made by cluster_up.
. "$(dirname "$0")/lib.sh"

# Names unique to this shell; interface names are at most 15 characters (fbm + a pid of at most
# 7 digits + h/b + 2 digits = 13 at most).
mc_id=${CLUSTER_ID:-$$}
MC_PREFIX=fbm${mc_id}
MC_NS_BR=${MC_PREFIX}br
MC_NET=10.213.8
MC_SUBNET=$MC_NET.0/24
MC_N=0
MC_DIR=
MC_CG_V=     # 1 or 2: the cgroup version a throttle uses; empty until the first throttle
MC_CG_ROOT=  # the cpu controller's mount point
MC_CG_HOME=  # this shell's cpu cgroup: where a host that is not throttled puts its orted
mc_made=

mc_skip() { echo "SKIP: $*" >&2; multi_down; exit 77; }

multi_ns() { echo "${MC_PREFIX}h$1"; }  # namespace of host I
mc_if_host() { echo "${MC_PREFIX}h$1"; } # host I's end of its veth (inside host I)
mc_if_br() { echo "${MC_PREFIX}b$1"; }   # the bridge's end of host I's veth
multi_host() { echo "fbhost${mc_id}n$1"; }
multi_ip() { echo "$MC_NET.$(($1 + 1))"; }

multi_up() {
    MC_N=$1
    case $MC_N in [2-9] | [1-9][0-9]) ;; *) echo "multi_up: 2 to 99 hosts, not '$1'" >&2; exit 2 ;; esac
    cl_guard multi_down mc_skip
    mc_reap_stale
    MC_DIR=$(mktemp -d "${TMPDIR:-/tmp}/fbmulti.XXXXXX") || mc_skip "no temporary folder"
    mc_made=1
    mc_err=$MC_DIR/err
    ip netns add "$MC_NS_BR" 2>"$mc_err" || mc_skip "cannot make a network namespace: $(cat "$mc_err")"
    { ip -n "$MC_NS_BR" link add "${MC_PREFIX}br" type bridge &&
      ip -n "$MC_NS_BR" link set lo up && ip -n "$MC_NS_BR" link set "${MC_PREFIX}br" up; } \
        2>"$mc_err" || mc_skip "cannot make a bridge: $(cat "$mc_err")"
    : >"$MC_DIR/hostfile"
    mc_i=0
    while [ "$mc_i" -lt "$MC_N" ]; do
        mc_ns=$(multi_ns $mc_i) mc_hif=$(mc_if_host $mc_i) mc_bif=$(mc_if_br $mc_i)
        ip netns add "$mc_ns" 2>"$mc_err" || mc_skip "cannot make a network namespace: $(cat "$mc_err")"
        ip link add "$mc_hif" type veth peer name "$mc_bif" 2>"$mc_err" ||
            mc_skip "cannot make a veth pair: $(cat "$mc_err")"
        { ip link set "$mc_hif" netns "$mc_ns" && ip link set "$mc_bif" netns "$MC_NS_BR" &&
          ip -n "$MC_NS_BR" link set "$mc_bif" master "${MC_PREFIX}br" &&
          ip -n "$MC_NS_BR" link set "$mc_bif" up &&
          ip -n "$mc_ns" addr add "$(multi_ip $mc_i)/24" dev "$mc_hif" &&
          ip -n "$mc_ns" link set lo up && ip -n "$mc_ns" link set "$mc_hif" up; } \
            2>"$mc_err" || mc_skip "cannot set up host $mc_i's veth: $(cat "$mc_err")"
        printf '%s slots=64\n' "$(multi_ip $mc_i)" >>"$MC_DIR/hostfile"
        mc_i=$((mc_i + 1))
    done
    unshare -u true 2>"$mc_err" || mc_skip "cannot give a process its own host name: $(cat "$mc_err")"
    mc_write_agent
    mc_wait_links || mc_skip "the hosts' links do not come up"
}

# The rsh agent: Open MPI runs "agent.sh HOST orted ARGS..." as it would run ssh, and, like ssh,
# the remote side is a shell reading the joined words. Before it enters the host, the agent puts
# itself into the host's CPU cgroup when the file cg.<host> names one, and otherwise into this
# shell's own cgroup (mpirun may run inside host 0's cgroup; its other children must leave it).
# The agent is mpirun's child, inside host 0's `ip netns exec`, whose /sys is a sysfs of that
# namespace without the cgroup mounts: it reaches them through this shell's root
# (/proc/<this shell>/root), which is the machine's mount namespace.
mc_write_agent() {
    {
        echo '#!/bin/sh'
        echo "# rsh agent of the N-host cluster test $mc_id: \"ssh\" into a namespace of this machine."
        echo 'host=$1; shift'
        echo 'case "$host" in'
        mc_i=0
        while [ "$mc_i" -lt "$MC_N" ]; do
            echo "    $(multi_ip $mc_i) | $(multi_host $mc_i)) ns=$(multi_ns $mc_i) name=$(multi_host $mc_i) ;;"
            mc_i=$((mc_i + 1))
        done
        echo '    *) echo "agent.sh: unknown host '"'"'$host'"'"'" >&2; exit 255 ;;'
        echo 'esac'
        echo "cg=$MC_DIR/cg.\$name"
        echo "[ -f \"\$cg\" ] || cg=$MC_DIR/cg.home"
        echo "[ ! -f \"\$cg\" ] || echo \$\$ >\"/proc/$$/root\$(cat \"\$cg\")/cgroup.procs\" || exit 255"
        echo 'exec ip netns exec "$ns" unshare -u sh -c "hostname $name && $*"'
    } >"$MC_DIR/agent.sh"
    chmod +x "$MC_DIR/agent.sh"
}

# Every host's veth is up on both ends and its address no longer tentative (DAD done).
mc_wait_links() { # (10 s at most: cl_wait_link in lib.sh says why)
    for _ in $(seq 1 50); do
        mc_ok=1 mc_i=0
        while [ "$mc_i" -lt "$MC_N" ]; do
            mc_ns=$(multi_ns $mc_i) mc_hif=$(mc_if_host $mc_i) mc_bif=$(mc_if_br $mc_i)
            { ip -n "$mc_ns" -br addr show "$mc_hif" 2>/dev/null | grep -q UP &&
              ip -n "$MC_NS_BR" -br link show "$mc_bif" 2>/dev/null | grep -q UP &&
              ! ip -n "$mc_ns" addr show "$mc_hif" | grep -q tentative; } || { mc_ok=0; break; }
            mc_i=$((mc_i + 1))
        done
        [ "$mc_ok" = 1 ] && return 0
        sleep 0.2
    done
    return 1
}

# multi_mpi PPN NP ARGS...: mpirun inside host 0 (in host 0's cgroup when it is throttled), NP
# ranks, PPN per host in host order. The ranks are not bound: every host sees the same CPUs. A
# cgroup is joined before `ip netns exec`, which mounts a sysfs of its own over /sys.
multi_mpi() {
    mc_ppn=$1 mc_np=$2; shift 2
    mc_cg0=
    [ -f "$MC_DIR/cg.$(multi_host 0)" ] && mc_cg0=$(cat "$MC_DIR/cg.$(multi_host 0)")
    sh -c '[ -z "$0" ] || echo $$ >"$0/cgroup.procs" && exec "$@"' "$mc_cg0" \
        ip netns exec "$(multi_ns 0)" unshare -u sh -c 'hostname "$0" && exec "$@"' "$(multi_host 0)" \
        "${MPIEXEC:-mpirun}" --hostfile "$MC_DIR/hostfile" --map-by "ppr:$mc_ppn:node" -np "$mc_np" \
        --bind-to none --mca plm_rsh_agent "$MC_DIR/agent.sh" \
        --mca btl tcp,vader,self --mca btl_tcp_if_include "$MC_SUBNET" \
        --mca oob_tcp_if_include "$MC_SUBNET" "$@"
}

# --- shaping: state in $MC_DIR (rate.I: the host's rate and burst; pairs.I: "J RATE" lines),
# rebuilt onto both ends of a host's link by mc_apply I ---
mc_host_ok() {
    case $1 in '' | *[!0-9]*) echo "multi: no host '$1'" >&2; return 1 ;; esac
    [ "$1" -lt "$MC_N" ] || { echo "multi: no host $1 (hosts 0..$((MC_N - 1)))" >&2; return 1; }
}
mc_tc_host() { mc_h=$1; shift; ip netns exec "$(multi_ns "$mc_h")" tc "$@"; }
mc_tc_br() { ip netns exec "$MC_NS_BR" tc "$@"; }

mc_apply() {
    mc_i=$1 mc_hif=$(mc_if_host "$1") mc_bif=$(mc_if_br "$1")
    set -- $(cat "$MC_DIR/rate.$mc_i" 2>/dev/null)
    mc_rate=${1:-} mc_burst=${2:-1mb}
    mc_tc_host "$mc_i" qdisc del dev "$mc_hif" root 2>/dev/null
    mc_tc_br qdisc del dev "$mc_bif" root 2>/dev/null
    if [ ! -s "$MC_DIR/pairs.$mc_i" ]; then
        [ -n "$mc_rate" ] || return 0
        # A bucket of 1 MiB by default, as lib.sh's: on a busy machine the qdisc is serviced
        # late and in bursts, and a small bucket caps the rate below the one asked for.
        mc_tc_host "$mc_i" qdisc add dev "$mc_hif" root tbf rate "$mc_rate" burst "$mc_burst" latency 100ms &&
            mc_tc_br qdisc add dev "$mc_bif" root tbf rate "$mc_rate" burst "$mc_burst" latency 100ms
        return
    fi
    # htb: class 1:1 the host's own rate (the default), 1:(10+n) the n-th slow pair. On the
    # host's side the filter matches the peer as destination, on the bridge's side as source.
    # quantum: htb's default (rate / 10) is above its own limit at these rates.
    for mc_side in host br; do
        if [ $mc_side = host ]; then
            mc_tcx="mc_tc_host $mc_i" mc_dev=$mc_hif mc_dir=dst
        else
            mc_tcx=mc_tc_br mc_dev=$mc_bif mc_dir=src
        fi
        $mc_tcx qdisc add dev "$mc_dev" root handle 1: htb default 1 &&
            $mc_tcx class add dev "$mc_dev" parent 1: classid 1:1 htb rate "${mc_rate:-10gbit}" \
                burst "$mc_burst" cburst "$mc_burst" quantum 60000 || return 1
        mc_n=10
        while read -r mc_peer mc_prate; do
            mc_n=$((mc_n + 1))
            $mc_tcx class add dev "$mc_dev" parent 1: classid "1:$mc_n" htb rate "$mc_prate" ceil "$mc_prate" \
                burst "$mc_burst" cburst "$mc_burst" quantum 60000 &&
                $mc_tcx filter add dev "$mc_dev" parent 1: protocol ip prio 1 u32 \
                    match ip $mc_dir "$(multi_ip "$mc_peer")/32" flowid "1:$mc_n" || return 1
        done <"$MC_DIR/pairs.$mc_i"
    done
}

multi_shape_host() {
    mc_host_ok "$1" || return 1
    echo "$2 ${3:-1mb}" >"$MC_DIR/rate.$1"
    mc_apply "$1"
}
multi_shape_all() {
    mc_j=0
    while [ "$mc_j" -lt "$MC_N" ]; do multi_shape_host $mc_j "$@" || return 1; mc_j=$((mc_j + 1)); done
}
multi_shape_pair() {
    mc_host_ok "$1" && mc_host_ok "$2" || return 1
    [ "$1" != "$2" ] || { echo "multi_shape_pair: a pair needs two hosts, not $1 twice" >&2; return 1; }
    echo "$2 $3" >>"$MC_DIR/pairs.$1"
    echo "$1 $3" >>"$MC_DIR/pairs.$2"
    mc_apply "$1" && mc_apply "$2"
}
multi_unshape() {
    rm -f "$MC_DIR"/rate.* "$MC_DIR"/pairs.*
    mc_j=0
    while [ "$mc_j" -lt "$MC_N" ]; do mc_apply $mc_j; mc_j=$((mc_j + 1)); done
}

# --- CPU quota ---
# mc_cg_find: the cpu controller, v1 (a "cpu" hierarchy) or v2 (a cgroup2 mount whose root lists
# cpu); sets MC_CG_V, MC_CG_ROOT and MC_CG_HOME (this shell's cgroup there).
mc_cg_find() {
    [ -n "$MC_CG_V" ] && return 0
    mc_v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { print $2; exit }' /proc/mounts)
    if [ -n "$mc_v1" ] && [ -w "$mc_v1/cgroup.procs" ]; then
        MC_CG_V=1 MC_CG_ROOT=$mc_v1
        mc_rel=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { print $3; exit }' /proc/self/cgroup)
    else
        for mc_m in $(awk '$3 == "cgroup2" { print $2 }' /proc/mounts); do
            grep -qw cpu "$mc_m/cgroup.controllers" 2>/dev/null || continue
            MC_CG_V=2 MC_CG_ROOT=$mc_m
            mc_rel=$(awk -F: '$1 == "0" { print $3; exit }' /proc/self/cgroup)
            break
        done
    fi
    [ -n "$MC_CG_V" ] || { echo "multi: no cgroup cpu controller (v1 or v2) to write" >&2; return 1; }
    MC_CG_HOME=$MC_CG_ROOT${mc_rel%/}
    [ -d "$MC_CG_HOME" ] || MC_CG_HOME=$MC_CG_ROOT
    echo "$MC_CG_HOME" >"$MC_DIR/cg.home"
}

multi_throttle_host() {
    mc_host_ok "$1" || return 1
    case $2 in '' | *[!0-9]* | [0-4])
        echo "multi_throttle_host: a quota in % of one CPU (5..), not '$2'" >&2; return 1 ;;
    esac
    mc_cg_find || return 1
    mc_cg=$MC_CG_ROOT/$MC_PREFIX.h$1
    mkdir -p "$mc_cg" || return 1
    # A period of 20 ms: a rank's compute is cut into slices finer than its timed trials, and
    # 5% is the kernel's least quota (1 ms).
    if [ "$MC_CG_V" = 1 ]; then
        echo 20000 >"$mc_cg/cpu.cfs_period_us" && echo $(($2 * 200)) >"$mc_cg/cpu.cfs_quota_us" || return 1
    else
        grep -qw cpu "$MC_CG_ROOT/cgroup.subtree_control" 2>/dev/null ||
            echo +cpu >"$MC_CG_ROOT/cgroup.subtree_control" || return 1
        echo "$(($2 * 200)) 20000" >"$mc_cg/cpu.max" || return 1
    fi
    echo "$mc_cg" >"$MC_DIR/cg.$(multi_host "$1")"
}
multi_unthrottle() { rm -f "$MC_DIR"/cg.fbhost*; }

multi_pids() {
    mc_host_ok "$1" || return 1
    for mc_pid in $(ip netns pids "$(multi_ns "$1")" 2>/dev/null); do
        [ -z "${2:-}" ] || [ "$(cat "/proc/$mc_pid/comm" 2>/dev/null)" = "$2" ] && echo "$mc_pid"
    done | sort -n
}

# --- clean-up ---
# mc_rm_cgroups ID: the CPU cgroups of the test shell ID (empty by now: their processes are gone).
mc_rm_cgroups() {
    for mc_root in $(awk '($3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/) || $3 == "cgroup2" { print $2 }' /proc/mounts); do
        for mc_cg in "$mc_root/fbm$1".h*; do
            [ -d "$mc_cg" ] || continue
            for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$mc_cg" 2>/dev/null && break; sleep 0.2; done
        done
    done
}

# Namespaces and cgroups of an earlier test whose shell is gone (killed with SIGKILL, as CTest
# does on a timeout, so its trap never ran). A live shell's are left alone.
mc_reap_stale() {
    for mc_owner in $(ip netns list 2>/dev/null | awk '{ print $1 }' |
                      sed -n 's/^fbm\([0-9]*\)\(br\|h[0-9]*\)$/\1/p' | sort -u); do
        [ "$mc_owner" = "$mc_id" ] && continue
        kill -0 "$mc_owner" 2>/dev/null && continue
        cl_clear_ns $(ip netns list | awk '{ print $1 }' | grep -E "^fbm${mc_owner}(br|h[0-9]+)$")
        mc_rm_cgroups "$mc_owner"
        echo "removed the N-host cluster of test $mc_owner, which was killed" >&2
    done
    return 0
}

multi_down() {
    [ -n "$mc_made" ] || return 0
    mc_made=
    # Processes first: a namespace lives on while a process is inside it. The veths go with
    # their namespaces; one left in the root namespace (a failed move) does not.
    set --
    mc_i=0
    while [ "$mc_i" -lt "$MC_N" ]; do set -- "$@" "$(multi_ns $mc_i)"; mc_i=$((mc_i + 1)); done
    cl_clear_ns "$@" "$MC_NS_BR"
    mc_i=0
    while [ "$mc_i" -lt "$MC_N" ]; do ip link del "$(mc_if_host $mc_i)" 2>/dev/null; mc_i=$((mc_i + 1)); done
    mc_rm_cgroups "$mc_id"
    [ -n "$MC_DIR" ] && rm -rf "$MC_DIR"
    return 0
}

# Two "hosts" on one Linux machine, for the cluster tests (sourced, after ../lib.sh).
# Each host is a network namespace with its own host name (unshare -u); a veth pair joins them on
# a private /24. mpirun runs inside host A, so A's ranks are its children; host B's ranks are
# started by an orted that Open MPI launches through an rsh agent script (agent.sh, written
# here), which enters B's namespace and names it before exec'ing the orted. The hostfile names
# the hosts by their addresses, so no /etc/hosts entry is needed. MPI runs over TCP on the veth
# (vader inside a host). Everything is removed on exit, failed test or not.
#
#   cluster_up                 make the two hosts (exit 77 with the reason when it cannot)
#   cluster_mpi PPN NP ARGS... mpirun -np NP, PPN ranks per host, over the veth
#   cluster_shape RATE [BURST] tc tbf RATE (tc units: 800mbit), bucket BURST (default 1mb), both ends
#   cluster_unshape            remove the shaping
#   cluster_netem_why          prints why netem cannot be used here; returns 0 when it can
#   cluster_delay MS           netem delay of MS milliseconds on both ends (when netem exists)
#   cluster_down               remove everything (also run by the EXIT trap)
# Fault helpers (for the fault tests):
#   cluster_link_down [a|b] / cluster_link_up [a|b]   take a veth end down or up (default a)
#   cluster_pids a|b [NAME]    pids of the processes in a host (of the command NAME only)
#   cluster_kill_rank a|b [SIGNAL] [NAME]  kill one rank (lowest pid of NAME, default
#                              fabricbench) on a host; prints its pid
#   cluster_slow_start SECONDS host B's orted waits SECONDS before it starts (A's ranks are
#                              mpirun's children, so only B can be slowed this way)
#   cluster_run_bounded SECONDS CMD...  runs CMD, killed after SECONDS; exit 124 when it was

# Names unique to this shell, so concurrent tests (and a test run twice) never collide. Interface
# names are at most 15 characters.
cl_id=${CLUSTER_ID:-$$}
CL_NS_A=fbc${cl_id}a CL_NS_B=fbc${cl_id}b
CL_IF_A=fbc${cl_id}a CL_IF_B=fbc${cl_id}b
CL_HOST_A=fbhost${cl_id}a CL_HOST_B=fbhost${cl_id}b
CL_NET=10.213.7
CL_IP_A=$CL_NET.1 CL_IP_B=$CL_NET.2
CL_SUBNET=$CL_NET.0/24
# CL_SPLIT_CPUS=1 gives each host its own half of this machine's CPUs (taskset), as two real
# hosts would have; by default both hosts share all CPUs: on a small machine that others also
# use, a host held to one CPU cannot keep up with the rates the tests impose.
cl_ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
CL_CPUS_A=0-$((cl_ncpu - 1)) CL_CPUS_B=0-$((cl_ncpu - 1))
if [ "${CL_SPLIT_CPUS:-0}" = 1 ] && [ "$cl_ncpu" -gt 1 ]; then
    CL_CPUS_A=0-$((cl_ncpu / 2 - 1)) CL_CPUS_B=$((cl_ncpu / 2))-$((cl_ncpu - 1))
fi
CL_DIR=
cl_made=

cl_skip() { echo "SKIP: $*" >&2; cluster_down; exit 77; }

# cl_guard DOWN SKIP: root and the tools are here (else SKIP with the reason), and DOWN runs on
# exit and on a signal, which then exits with the signal's code. multi.sh uses it too.
cl_guard() {
    [ "$(id -u)" = 0 ] || $2 "network namespaces need root (running as uid $(id -u))"
    for tool in ip tc unshare timeout taskset; do
        command -v "$tool" >/dev/null 2>&1 || $2 "'$tool' is not installed"
    done
    trap "$1" EXIT
    trap "$1; exit 130" INT
    trap "$1; exit 143" TERM
    trap "$1; exit 129" HUP
    trap "$1; exit 141" PIPE
}

cluster_up() {
    cl_guard cluster_down cl_skip
    cl_reap_stale
    CL_DIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcluster.XXXXXX") || cl_skip "no temporary folder"
    cl_made=1
    ip netns add "$CL_NS_A" 2>"$CL_DIR/err" || cl_skip "cannot make a network namespace: $(cat "$CL_DIR/err")"
    ip netns add "$CL_NS_B" 2>"$CL_DIR/err" || cl_skip "cannot make a network namespace: $(cat "$CL_DIR/err")"
    ip link add "$CL_IF_A" type veth peer name "$CL_IF_B" 2>"$CL_DIR/err" ||
        cl_skip "cannot make a veth pair: $(cat "$CL_DIR/err")"
    { ip link set "$CL_IF_A" netns "$CL_NS_A" && ip link set "$CL_IF_B" netns "$CL_NS_B" &&
      ip -n "$CL_NS_A" addr add "$CL_IP_A/24" dev "$CL_IF_A" &&
      ip -n "$CL_NS_B" addr add "$CL_IP_B/24" dev "$CL_IF_B" &&
      ip -n "$CL_NS_A" link set lo up && ip -n "$CL_NS_B" link set lo up &&
      ip -n "$CL_NS_A" link set "$CL_IF_A" up && ip -n "$CL_NS_B" link set "$CL_IF_B" up; } \
        2>"$CL_DIR/err" || cl_skip "cannot set up the veth: $(cat "$CL_DIR/err")"
    unshare -u true 2>"$CL_DIR/err" || cl_skip "cannot give a process its own host name: $(cat "$CL_DIR/err")"
    # The rsh agent: Open MPI runs "agent.sh HOST orted ARGS..." as it would run ssh, and, like
    # ssh, the remote side is a shell reading the joined words. A slow start is a file naming
    # the seconds to wait.
    cat >"$CL_DIR/agent.sh" <<EOF
#!/bin/sh
# rsh agent of the cluster test $cl_id: "ssh" into a namespace of this machine.
host=\$1; shift
case "\$host" in
    $CL_IP_B|$CL_HOST_B) ns=$CL_NS_B name=$CL_HOST_B cpus=$CL_CPUS_B ;;
    $CL_IP_A|$CL_HOST_A) ns=$CL_NS_A name=$CL_HOST_A cpus=$CL_CPUS_A ;;
    *) echo "agent.sh: unknown host '\$host'" >&2; exit 255 ;;
esac
[ -f "$CL_DIR/slow.\$name" ] && sleep "\$(cat "$CL_DIR/slow.\$name")"
exec taskset -c "\$cpus" ip netns exec "\$ns" unshare -u sh -c "hostname \$name && \$*"
EOF
    chmod +x "$CL_DIR/agent.sh"
    printf '%s slots=64\n%s slots=64\n' "$CL_IP_A" "$CL_IP_B" >"$CL_DIR/hostfile"
    # Both ends answer before any test relies on them.
    cl_wait_link || cl_skip "the veth does not carry traffic"
}

# Both veth ends are up and host A's address is no longer tentative (DAD done). IPv6 duplicate
# address detection holds the link-local address tentative for 1.3-2 s after the link comes up
# (2026-12-03, docs/cluster-tests.md), more on a busy machine: a wait of 2 s made cluster_nodes,
# _matrix and _latency skip ("the veth does not carry traffic"); 10 s is the bound. (Turning DAD off
# instead broke the link-down test's second launch: Open MPI then found no way back to mpirun.)
cl_wait_link() {
    for _ in $(seq 1 50); do
        ip -n "$CL_NS_A" -br addr show "$CL_IF_A" 2>/dev/null | grep -q "UP" &&
            ip -n "$CL_NS_B" -br addr show "$CL_IF_B" 2>/dev/null | grep -q "UP" &&
            ! ip -n "$CL_NS_A" addr show "$CL_IF_A" | grep -q tentative && return 0
        sleep 0.2
    done
    return 1
}

# cluster_mpi PPN NP ARGS...: mpirun inside host A, NP ranks, PPN per host (A's first). The
# ranks are not bound: Open MPI would bind the first rank of each host to the same core, since
# every host sees the same CPUs.
cluster_mpi() {
    ppn=$1 np=$2; shift 2
    taskset -c "$CL_CPUS_A" ip netns exec "$CL_NS_A" unshare -u sh -c 'hostname "$0" && exec "$@"' "$CL_HOST_A" \
        "${MPIEXEC:-mpirun}" --hostfile "$CL_DIR/hostfile" --map-by "ppr:$ppn:node" -np "$np" --bind-to none \
        --mca plm_rsh_agent "$CL_DIR/agent.sh" \
        --mca btl tcp,vader,self --mca btl_tcp_if_include "$CL_SUBNET" \
        --mca oob_tcp_if_include "$CL_SUBNET" "$@"
}

cl_tc() { ip netns exec "$1" tc "$@"; }

# cluster_shape RATE [BURST]: a token bucket of RATE (tc units: 800mbit = 800e6 bit/s) on both
# veth ends, holding BURST bytes (tc units, default 1mb = 1 MiB). On a busy machine the qdisc
# is serviced late and in bursts; a bucket smaller than rate x that delay caps the rate below
# RATE. Queued bytes wait at most 100 ms before they are dropped (TCP backs off long before).
cluster_shape() {
    for end in "$CL_NS_A:$CL_IF_A" "$CL_NS_B:$CL_IF_B"; do
        ip netns exec "${end%%:*}" tc qdisc replace dev "${end#*:}" root tbf rate "$1" \
            burst "${2:-1mb}" latency 100ms || return 1
    done
}
cluster_unshape() {
    ip netns exec "$CL_NS_A" tc qdisc del dev "$CL_IF_A" root 2>/dev/null
    ip netns exec "$CL_NS_B" tc qdisc del dev "$CL_IF_B" root 2>/dev/null
    return 0
}

# Whether netem (delay, loss) can be used: a trial qdisc on host A's loopback.
cluster_netem_why() {
    if ip netns exec "$CL_NS_A" tc qdisc add dev lo root netem delay 1ms 2>"$CL_DIR/netem.err"; then
        ip netns exec "$CL_NS_A" tc qdisc del dev lo root 2>/dev/null
        return 0
    fi
    echo "this kernel has no netem qdisc (sch_netem): tc says '$(head -n 1 "$CL_DIR/netem.err")'"
    return 1
}
cluster_delay() {
    for end in "$CL_NS_A:$CL_IF_A" "$CL_NS_B:$CL_IF_B"; do
        ip netns exec "${end%%:*}" tc qdisc replace dev "${end#*:}" root netem delay "${1}ms" ||
            return 1
    done
}

cl_end() { # a|b -> "namespace interface"
    case $1 in
        a | A) echo "$CL_NS_A $CL_IF_A" ;;
        b | B) echo "$CL_NS_B $CL_IF_B" ;;
        *) echo "cluster: no host '$1' (use a or b)" >&2; return 1 ;;
    esac
}
cluster_link_down() { set -- $(cl_end "${1:-a}") && ip -n "$1" link set "$2" down; }
cluster_link_up() { set -- $(cl_end "${1:-a}") && ip -n "$1" link set "$2" up; }
cluster_pids() {
    set -- $(cl_end "$1") "${2:-}" || return 1
    for pid in $(ip netns pids "$1" 2>/dev/null); do
        [ -z "$3" ] || [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$3" ] && echo "$pid"
    done | sort -n
}
cluster_kill_rank() {
    pid=$(cluster_pids "$1" "${3:-fabricbench}" | head -n 1)
    [ -n "$pid" ] || { echo "cluster: no ${3:-fabricbench} process on host $1" >&2; return 1; }
    kill -s "${2:-KILL}" "$pid" && echo "$pid"
}
cluster_slow_start() { echo "$1" >"$CL_DIR/slow.$CL_HOST_B"; }
cluster_run_bounded() { secs=$1; shift; timeout -k 5 "$secs" "$@"; }

# Namespaces of an earlier test whose shell is gone (killed with SIGKILL, as CTest does on a
# timeout, so its trap never ran): their processes and the namespaces go. A live shell's are
# left alone.
cl_reap_stale() {
    for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E '^fbc[0-9]+[ab]$'); do
        owner=${ns#fbc}
        owner=${owner%?}
        [ "$owner" = "$cl_id" ] && continue
        kill -0 "$owner" 2>/dev/null && continue
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
        sleep 0.2
        ip netns del "$ns" 2>/dev/null && echo "removed namespace $ns of a test that was killed" >&2
    done
    return 0
}

# cl_clear_ns NS...: kills every process inside the namespaces, waits until they are gone and
# deletes them (a namespace lives on while a process is inside it). multi.sh uses it too.
cl_clear_ns() {
    for ns in "$@"; do
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
    done
    for ns in "$@"; do
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
            sleep 0.2
        done
        ip netns del "$ns" 2>/dev/null
    done
}

cluster_down() {
    [ -n "$cl_made" ] || return 0
    cl_made=
    cl_clear_ns "$CL_NS_A" "$CL_NS_B"
    # The veth goes with its namespace; one left in the root namespace (a failed move) does not.
    ip link del "$CL_IF_A" 2>/dev/null
    [ -n "$CL_DIR" ] && rm -rf "$CL_DIR"
    return 0
}

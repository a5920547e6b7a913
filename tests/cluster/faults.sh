#!/bin/sh
# Faults between two "hosts" (lib.sh). usage: faults.sh MODE FABRICBENCH
#
# helpers    the fault helpers the fault tests use do what they say: a slow start delays host
#            B's ranks by the seconds asked; killing one rank by host kills a fabricbench of
#            that host only, the job then ends (Open MPI aborts it) and nothing is left in
#            either namespace; a link taken down carries no traffic and comes back up.
# link_down  the link between the hosts drops mid-run: at --mpi-thread serialized with
#            --timeout 8 the run ends by itself within the timeout and a grace, names the phase
#            and the ranks that had not arrived, exits non-zero, leaves no fabricbench process
#            on either host, and env.json says `timeout` (docs/timeouts.md). Without the
#            watchdog it hangs: the outer 40 s bound then fails it. Then at the default level of
#            a p2p run (single), where Open MPI ends the job itself: non-zero, bounded, a line
#            naming the lost peer, nothing left.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
mode=$1 bin=$2
cluster_up
w=$CL_DIR

# start_long_run NAME: a p2p run that lasts a while (4 MiB messages at 10 Mbit/s take 3.5 s
# each), in the background; waits until host B's rank runs. Sets run_pid.
start_long_run() {
    name=$1; shift
    cluster_shape 10mbit 16kb || { fail "tc tbf could not be set"; finish; }
    cluster_mpi 1 2 "$bin" run p2p --sizes 4M --matrix-bytes 4M --warmup 1 --trials 20 --quiet \
        "$@" --out "$w/$name" >"$w/$name.txt" 2>&1 &
    run_pid=$!
    for _ in $(seq 1 100); do
        [ -n "$(cluster_pids b fabricbench)" ] && [ -n "$(cluster_pids a fabricbench)" ] && break
        sleep 0.2
    done
    [ -n "$(cluster_pids b fabricbench)" ] || { fail "no fabricbench rank started on host B: $(tail -n 5 "$w/$name.txt")"; return 1; }
    sleep 2 # into the transfers
}
# wait_bounded PID SECONDS: waits for a background job; sets rc (124 when it had to be killed)
# and took (seconds).
wait_bounded() {
    t0=$(date +%s)
    while kill -0 "$1" 2>/dev/null && [ $(($(date +%s) - t0)) -lt "$2" ]; do sleep 0.2; done
    if kill -0 "$1" 2>/dev/null; then
        kill -TERM "$1" 2>/dev/null
        wait "$1" 2>/dev/null
        rc=124
    else
        wait "$1"
        rc=$?
    fi
    took=$(($(date +%s) - t0))
}
leftovers() { echo $(($(cluster_pids a fabricbench | wc -l) + $(cluster_pids b fabricbench | wc -l))); }

case $mode in
helpers)
    # slow start: B's orted waits 4 s; the job takes at least that much longer than without
    t0=$(date +%s)
    cluster_mpi 1 2 true || fail "a plain job across the hosts failed"
    plain=$(($(date +%s) - t0))
    cluster_slow_start 4
    t0=$(date +%s)
    cluster_mpi 1 2 true || fail "a slow-started job failed"
    slow=$(($(date +%s) - t0))
    cluster_slow_start 0
    [ $((slow - plain)) -ge 3 ] || fail "slow start of 4 s: the job took $slow s against $plain s without"
    echo "slow start: $plain s plain, $slow s with host B 4 s late"

    # kill one rank on host B: that process dies, the job ends, nothing is left
    start_long_run kill && {
        on_a=" $(cluster_pids a fabricbench | tr '\n' ' ') " on_b=" $(cluster_pids b fabricbench | tr '\n' ' ') "
        victim=$(cluster_kill_rank b KILL) || fail "cluster_kill_rank found no rank on host B"
        case $on_b in *" $victim "*) ;; *) fail "killed pid $victim was not host B's rank ($on_b)" ;; esac
        case $on_a in *" $victim "*) fail "killed pid $victim was host A's rank" ;; esac
        wait_bounded "$run_pid" 60
        echo "killed rank on host B (pid $victim): the job ended after $took s with exit $rc"
        [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "after a rank was killed the job exited $rc (124: hung)"
        sleep 1
        [ "$(leftovers)" = 0 ] || fail "$(leftovers) fabricbench process(es) left after the job ended"
    }

    # link down and up
    cluster_unshape
    cluster_link_down a || fail "cluster_link_down failed"
    ip -n "$CL_NS_A" link show "$CL_IF_A" | grep -q 'state DOWN' || fail "the veth end of host A is not down"
    cluster_mpi 1 2 true >/dev/null 2>&1 &
    wait_bounded $! 10
    [ "$rc" != 0 ] || fail "a job across the hosts succeeded with the link down"
    echo "link down: a job across the hosts ended with $rc after $took s (124: killed while hanging)"
    cluster_link_up a || fail "cluster_link_up failed"
    cl_wait_link || fail "the veth did not come back up"
    cluster_mpi 1 2 true || fail "a job after the link came back failed"
    ;;
link_down)
    limit=8
    # Our ranks end by themselves at the timeout; mpirun then tells host B's daemon to clean up,
    # over the dead link, and waits for TCP to give up on it: 15 minutes with Linux's default
    # retransmissions (tcp_retries2 = 15). A cluster's launcher or batch system has the same
    # wait; here each host's namespace gives up after 3 retries (about 3 s).
    for ns in "$CL_NS_A" "$CL_NS_B"; do ip netns exec "$ns" sysctl -qw net.ipv4.tcp_retries2=3; done
    start_long_run down --timeout "$limit" --mpi-thread serialized || finish
    cluster_link_down a
    echo "link of host A down at $(date +%T) with both ranks running (--timeout $limit)"
    wait_bounded "$run_pid" 40
    sleep 2 # the ranks' own watchdogs end them; mpirun may return first
    left=$(leftovers)
    echo "the run ended after $took s with exit $rc; $left fabricbench process(es) left"
    sed -n '1,12p' "$w/down.txt"
    case $rc in
    124) fail "with the link down the run hung past $took s despite --timeout $limit" ;;
    0) fail "the run lost its link and still exited 0" ;;
    *) [ "$took" -le $((limit + 20)) ] || fail "the run took $took s to end, over --timeout $limit + 20 s"
       [ "$left" = 0 ] || fail "$left fabricbench process(es) left after the run ended"
       grep -q "timed out\|timeout" "$w/down.txt" || fail "no line says the run timed out"
       grep -Eq "rank [01]" "$w/down.txt" || fail "no line names a rank"
       # rank 0 names the rank behind the dead link with its host (the rank-to-host map), not
       # only "another host": host B's own lines cannot come over that link
       grep -Eq "^\[0 $CL_HOST_A\] error: timeout: .*rank 1 on $CL_HOST_B did not arrive at '" "$w/down.txt" ||
           fail "rank 0's line does not name rank 1 on $CL_HOST_B"
       grep -Eq '"run_status":[[:space:]]*"timeout"' "$w/down/env.json" ||
           fail "env.json's run_status is not timeout: $(grep run_status "$w/down/env.json")" ;;
    esac

    # The same at MPI_THREAD_SINGLE (a p2p run's level by default): Open MPI's ob1 ends the job
    # itself when the peer becomes unreachable, before our timeout. It must still end, non-zero,
    # within the same bound, with a line naming the lost peer, and leave nothing running (host
    # B's rank is ended by its own watchdog); env.json is left "running" (nobody marked it:
    # ob1 leaves with _exit), which accept and report read as "never marked its end".
    cluster_link_up a || fail "cluster_link_up failed"
    cl_wait_link || fail "the veth did not come back up"
    start_long_run single --timeout "$limit" || finish
    grep -Eq '"thread_level":[[:space:]]*"single"' "$w/single/env.json" ||
        fail "a p2p run did not ask for MPI_THREAD_SINGLE: $(grep thread_level "$w/single/env.json")"
    cluster_link_down a
    wait_bounded "$run_pid" 40
    t0=$(date +%s)
    while [ "$(leftovers)" != 0 ] && [ $((took + $(date +%s) - t0)) -le $((limit + 20)) ]; do
        sleep 0.5
    done
    left=$(leftovers) all=$((took + $(date +%s) - t0))
    echo "at MPI_THREAD_SINGLE: the run ended after $took s with exit $rc; no process after $all s ($left left)"
    sed -n '5,12p' "$w/single.txt"
    case $rc in
    124) fail "at MPI_THREAD_SINGLE the run hung past $took s" ;;
    0) fail "at MPI_THREAD_SINGLE the run lost its link and still exited 0" ;;
    esac
    [ "$left" = 0 ] || fail "at MPI_THREAD_SINGLE $left fabricbench process(es) left $all s after the link went down"
    grep -Eq "Unable to connect to the peer|Network is unreachable|did not arrive" "$w/single.txt" ||
        fail "at MPI_THREAD_SINGLE no line names the lost peer"
    grep -Eq '"run_status":[[:space:]]*"(running|timeout)"' "$w/single/env.json" ||
        fail "at MPI_THREAD_SINGLE env.json's run_status: $(grep run_status "$w/single/env.json")"
    ;;
*) echo "usage: faults.sh helpers|link_down FABRICBENCH" >&2; exit 2 ;;
esac
finish

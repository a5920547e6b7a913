#!/bin/sh
# Faults on 2 host ranks, one case per CTest entry (docs/timeouts.md):
#   hang        rank 1 hangs in allreduce's trial 2 (FB_TEST_HANG): exit 3 within --timeout + a
#               few seconds, the message names rank 1, its host, the benchmark, point and phase
#   kill        rank 1 killed with SIGKILL during allreduce: the job ends, mpirun names rank 1
#   slow_start  rank 1 starts 60 s late (FB_TEST_SLOW_START): MPI start timeout, exit 3
#   sigint      SIGINT to mpirun during allreduce: the run is marked interrupted
#   sigterm     SIGTERM to mpirun, then SIGTERM to the ranks themselves (a batch system): exit 4
#   sigstop     rank 1 frozen with SIGSTOP during allreduce: exit 3 within --timeout + a few
#               seconds, rank 0 names rank 1 and its host as frozen, never "all had arrived"
#   fault_rank1 an allocation fails on rank 1 only (FB_FAULT=alloc:1@1): the run fails (exit 1)
#               and rank 0's line and env.json name rank 1, its host and "out of memory"
# Every case: h2d's points (the benchmark before the fault) are all in results.csv and it
# reads back (compare), the run is marked incomplete, and no process of the run is left. Every
# launch is wrapped in `timeout`, so a broken watchdog fails the case instead of hanging CI.
. "$(dirname "$0")/../lib.sh"
bin=$1
case=$2
work=$(mktemp -d)
host=$(hostname)
run=$work/run
trap 'rm -rf "$work"' EXIT
# h2d first (3 sizes: 36 points on 2 ranks), then allreduce on both ranks only
args="h2d allreduce --backend host --max-bytes 64K --trials 2 --warmup 1 --trial-ms 1 --ranks 2 --out $run"
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# start NAME [env...]: mpirun -np 2 in the background under `timeout`; $launcher is the pid of
# `timeout`, $mpirun_pid the launcher's child once it exists
start() {
    # shellcheck disable=SC2086
    env "$@" timeout -k 5 "$limit" "${MPIEXEC:-mpirun}" --oversubscribe -np 2 "$bin" run $args \
        $extra >"$work/out" 2>"$work/err" &
    launcher=$!
    mpirun_pid=
    for _ in $(seq 50); do
        mpirun_pid=$(pgrep -P "$launcher" | head -n 1)
        [ -n "$mpirun_pid" ] && break
        sleep 0.1
    done
}
# wait_for TEXT SECONDS: until stderr holds TEXT; prints the time it appeared
wait_for() {
    i=0
    while ! grep -q -- "$1" "$work/err" 2>/dev/null; do
        i=$((i + 1))
        if [ "$i" -gt $(($2 * 10)) ]; then return 1; fi
        sleep 0.1
    done
    now
}
# rank_pid N: the pid of rank N (a child of mpirun whose environment says so)
rank_pid() {
    for p in $(pgrep -P "$mpirun_pid"); do
        if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
            echo "$p"
            return
        fi
    done
}
finish_run() { wait "$launcher"; rc=$?; t_end=$(now); }
# signal_rank1_in_allreduce SIG: starts the run and sends SIG to rank 1 once allreduce runs;
# sets $victim (rank 1's pid) and $t_sig
signal_rank1_in_allreduce() {
    start
    wait_for "allreduce out_of_place" 60 >/dev/null || fail "allreduce never started"
    victim=$(rank_pid 1)
    [ -n "$victim" ] || { fail "rank 1 not found"; kill "$launcher"; }
    t_sig=$(now)
    kill -"$1" "$victim"
}
# nothing of this run may be left: every process with the run's folder in its arguments
check_nothing_left() {
    sleep 1
    left=$(pgrep -f -- "$run" | grep -v "^$$\$")
    if [ -n "$left" ]; then
        fail "processes left behind: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ',')")"
        # shellcheck disable=SC2086
        kill -9 $left 2>/dev/null
    fi
}
# h2d, the benchmark before the fault, is whole in results.csv, which reads back
check_results() {
    [ -f "$run/results.csv" ] || { fail "no results.csv"; return; }
    [ ! -e "$run/results.csv.tmp" ] || fail "a temporary results.csv was left"
    n=$(csv_awk 'v("bench") == "h2d" && v("metric") == "time" && (v("src") == "" || v("ranks") == 1) { n++ } END { print n + 0 }' "$run/results.csv")
    [ "$n" = 36 ] || fail "results.csv holds $n of h2d's 36 points"
    "$bin" compare --out "$work/cmp" "$run" "$run" >"$work/cmp.out" 2>"$work/cmp.err"
    crc=$?
    [ "$crc" = 0 ] || fail "compare cannot read the stopped run back (exit $crc): $(cat "$work/cmp.err")"
    grep -q "is incomplete" "$work/cmp.err" || fail "compare does not say the run is incomplete"
}
# check_state STATE: env.json's run_status
check_state() {
    grep -Eq "\"run_status\":[[:space:]]*\"$1\"" "$run/env.json" ||
        fail "env.json run_status is not '$1': $(grep run_status "$run/env.json")"
}
show() { echo "--- stderr:" >&2; grep -v '^\[ *[0-9]*/[0-9]*\]' "$work/err" | tail -n 30 >&2; }

case $case in
hang)
    limit=60 extra="--timeout 5"
    start FB_TEST_HANG="1:allreduce:trial 2"
    t_hang=$(wait_for "FB_TEST_HANG: rank 1 hangs" 40) || fail "the hang never started"
    finish_run
    show
    [ "$rc" = 3 ] || fail "exit code $rc, expected 3 (timeout)"
    [ -n "$t_hang" ] && {
        took=$(elapsed "$t_hang" "$t_end")
        echo "hang detected and the job ended $took s after the hang began (--timeout 5)"
        awk -v t="$took" 'BEGIN { exit !(t >= 5 && t <= 11) }' || fail "ended $took s after the hang, expected 5..11"
    }
    grep -q "\[0 $host\] error: timeout: allreduce out_of_place 8 bytes on 2 rank(s), phase 'trial 2/2', did not end within --timeout 5 s; rank 1 on $host did not arrive at 'trial 2/2' (working in 'trial 2/2'" "$work/err" ||
        fail "rank 0's message does not name the benchmark, point, phase and rank 1 on $host"
    named=$(sed -n "s/^\[0 $host\] error: timeout: .*did not end within --timeout 5 s; \(.*\); rank 0 on $host is .*/\1/p" "$work/err")
    case "$named" in *"rank 0 on"*) fail "rank 0, which waited, is named as not arrived: $named" ;; esac
    grep -q "marked 'timeout' in env.json" "$work/err" || fail "no word of the run's mark"
    # docs/timeouts.md quotes this run: each rank's lines, its host named vm
    for r in 0 1; do
        # which watchdog fires first is a race: when rank 1's did, rank 0's line adds "(rank 1
        # on <host> ran out of time first)", which the page explains beside the example
        grep "^\[$r $host\]" "$work/err" | sed "s/^\[$r $host\]/[$r vm]/; s/ on $host / on vm /g;
            s/ (rank 1 on vm ran out of time first)//" >"$work/err$r"
        doc_example docs/timeouts.md hang "$work/err$r" "^[[]$r "
    done
    check_state timeout
    grep -q '"detail":.*rank 1 on .* did not arrive at' "$run/env.json" || fail "env.json run_stop lacks the culprit"
    [ ! -e "$run/.lock" ] || fail "the run lock is left after the timeout: $(cat "$run/.lock")"
    check_results
    # accept refuses it
    "$bin" accept --profile "$(dirname "$0")/../../profiles/host-ci.ini" "$run" >"$work/acc.out" 2>&1
    arc=$?
    [ "$arc" = 1 ] || fail "accept of a timed-out run exited $arc, expected 1"
    grep -q "run_complete" "$work/acc.out" || fail "accept does not show run_complete"
    # a point on one rank slower than --timeout: its rank is named as working in it, not as
    # waiting at a collective that does not complete (a one-rank collective is its own work)
    # (16 MiB copies, 100,000 a trial: minutes; the set-up, which a loaded machine once stretched
    # past a 1 s --timeout, gets 3 s)
    timeout -k 5 60 "${MPIEXEC:-mpirun}" --oversubscribe -np 2 "$bin" run allreduce --backend host \
        --sizes 16M --iters 100000 --trials 1 --warmup 0 --ranks 1 --timeout 3 --quiet \
        --out "$work/one" >"$work/one.out" 2>"$work/one.err"
    rc=$?
    [ "$rc" = 3 ] || fail "a one-rank point past --timeout exited $rc, expected 3: $(tail -n 3 "$work/one.err")"
    grep -q "error: timeout: allreduce out_of_place 16777216 bytes on 1 rank(s), phase 'trial 1/1', did not end within --timeout 3 s; rank 0 on $host did not arrive at 'trial 1/1' (working in 'trial 1/1'" "$work/one.err" ||
        fail "the one-rank point's timeout does not name rank 0 as working: $(grep 'error: timeout' "$work/one.err")"
    ;;
kill)
    limit=120 extra="--trials 5 --trial-ms 10"
    signal_rank1_in_allreduce KILL
    finish_run
    show
    took=$(elapsed "$t_sig" "$t_end")
    echo "rank 1 killed: the job ended $took s later, exit code $rc"
    [ "$rc" != 0 ] || fail "a job with a killed rank exited 0"
    awk -v t="$took" 'BEGIN { exit !(t <= 10) }' || fail "ended $took s after the kill"
    grep -Eq "process rank 1 with PID [0-9]+ on node $host exited on signal 9" "$work/err" ||
        fail "no message names rank 1 on $host as killed"
    if grep -q '"run_status":[[:space:]]*"complete"' "$run/env.json"; then fail "run marked complete"; fi
    check_results
    ;;
slow_start)
    limit=60 extra="--timeout 3"
    t0=$(now)
    start FB_TEST_SLOW_START=1:60
    finish_run
    show
    took=$(elapsed "$t0" "$t_end")
    echo "slow start: the job ended $took s after launch (--timeout 3), exit code $rc"
    [ "$rc" = 3 ] || fail "exit code $rc, expected 3 (timeout)"
    awk -v t="$took" 'BEGIN { exit !(t <= 9) }' || fail "ended $took s after launch, expected <= 9"
    grep -q "\[1 $host\] error: timeout: MPI start: rank 1 (host $host) had not reached MPI_Init after 3 s" "$work/err" ||
        fail "the late rank 1 is not named"
    grep -q "\[0 $host\] error: timeout: MPI start: MPI_Init has not returned after 3 s on rank 0" "$work/err" ||
        fail "rank 0 does not say MPI_Init had not returned"
    [ ! -e "$run" ] || fail "a run folder was made before MPI started"
    ;;
sigint | sigterm)
    limit=120 extra="--trials 5 --trial-ms 10 --timeout 30"
    sig=INT
    [ "$case" = sigterm ] && sig=TERM
    start
    wait_for "allreduce out_of_place" 60 >/dev/null || fail "allreduce never started"
    t_sig=$(now)
    kill -"$sig" "$mpirun_pid"
    finish_run
    show
    took=$(elapsed "$t_sig" "$t_end")
    echo "SIG$sig to mpirun: the job ended $took s later, exit code $rc"
    # Open MPI's mpirun answers its own signal with exit code 1 whatever the ranks do
    [ "$rc" != 0 ] || fail "an interrupted run exited 0"
    awk -v t="$took" 'BEGIN { exit !(t <= 5) }' || fail "ended $took s after SIG$sig"
    check_state interrupted
    check_results
    check_nothing_left
    if [ "$case" = sigterm ]; then
        # the ranks themselves get SIGTERM (a batch system, srun): they stop at their next check
        rm -rf "$run"
        start
        wait_for "allreduce out_of_place" 60 >/dev/null || fail "allreduce never started (2)"
        t_sig=$(now)
        # shellcheck disable=SC2046
        kill -TERM $(pgrep -P "$mpirun_pid")
        finish_run
        show
        took=$(elapsed "$t_sig" "$t_end")
        echo "SIGTERM to the ranks: the job ended $took s later, exit code $rc"
        [ "$rc" = 4 ] || fail "exit code $rc, expected 4 (interrupted)"
        awk -v t="$took" 'BEGIN { exit !(t <= 5) }' || fail "ended $took s after SIGTERM"
        grep -q "allreduce interrupted: interrupted (SIGINT or SIGTERM); results of earlier points are kept" "$work/err" ||
            fail "the run did not stop at its next check"
        check_state interrupted
        check_results
    fi
    ;;
sigstop)
    limit=90 extra="--trials 5 --trial-ms 10 --timeout 5"
    signal_rank1_in_allreduce STOP
    finish_run
    kill -CONT "$victim" 2>/dev/null
    show
    took=$(elapsed "$t_sig" "$t_end")
    echo "rank 1 frozen: the job ended $took s later, exit code $rc (--timeout 5)"
    [ "$rc" = 3 ] || fail "exit code $rc, expected 3 (timeout)"
    awk -v t="$took" 'BEGIN { exit !(t <= 12) }' || fail "ended $took s after SIGSTOP, expected <= 12"
    grep -Eq "\[0 $host\] error: timeout: .*rank 1 on $host did not arrive at '[^']+' \(frozen: no sign of life for [0-9]+ s" "$work/err" ||
        fail "rank 0's message does not name rank 1 on $host as frozen"
    if grep -q "had arrived" "$work/err"; then fail "a line says every rank had arrived"; fi
    named=$(sed -n "s/^\[0 $host\] error: timeout: .*did not end within --timeout 5 s; \(.*\); rank 0 on $host is .*/\1/p" "$work/err")
    case "$named" in *"rank 0 on"*) fail "rank 0, which waited, is named: $named" ;; esac
    check_state timeout
    grep -q '"detail":.*rank 1 on .* did not arrive at' "$run/env.json" || fail "env.json run_stop lacks rank 1"
    [ ! -e "$run/.lock" ] || fail "the run lock is left after the timeout: $(cat "$run/.lock")"
    check_results
    ;;
fault_rank1)
    limit=60 extra=
    start FB_FAULT=alloc:1@1
    finish_run
    show
    [ "$rc" = 1 ] || fail "exit code $rc, expected 1 (a failure)"
    grep -q "\[1 $host\] warning: fault injection: failing allocation #1" "$work/err" ||
        fail "the fault was not injected on rank 1"
    grep -q "\[0 $host\] error: h2d stopped: rank 1 on $host: out of memory; results of earlier points are kept" "$work/err" ||
        fail "rank 0 does not name rank 1 on $host and its status"
    check_state failed
    grep -q "\"detail\":.*\"h2d: rank 1 on $host: out of memory\"" "$run/env.json" ||
        fail "env.json run_stop does not name rank 1: $(grep detail "$run/env.json")"
    ;;
*)
    echo "unknown case '$case'" >&2
    exit 2
    ;;
esac
check_nothing_left
finish

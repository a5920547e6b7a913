#!/bin/sh
# Fault injection under the sanitizers (FB_FAULT, harness/device/backend_fault.h): runs a short job on
# 2 ranks again and again, each time failing one allocation, copy, stream creation, event
# creation or IPC open of the host backend, and checks that every run ends cleanly: a nonzero exit with
# fabricbench's one-line error (rank 0's last line says what stopped and why), no hang (a
# timeout), no crash, and no report from AddressSanitizer, UBSan or LeakSanitizer (which halt
# on their first; Open MPI's own allocations are untracked, so a leak reported is ours). That is
# every error path behind those calls freeing what it took.
#   fault.sh BIN [ci|full] [PART]
# PART (default all) runs one share of the plan, so CTest can run the shares side by side:
# p2p_alloc (p2p at every N of its allocations), p2p (its copies, streams and events, the faults
# on one rank, and the malformed FB_FAULT), quick (the quick benchmarks, densenet_allreduce and
# compute), step or coll (the five collectives). Each share must inject at least one fault.
# Counts come first (FB_FAULT=count). In CI: p2p, the benchmark with the most calls of every kind
# (IPC shared memory, three transports, matrices), is failed at every N of its allocations and at 6
# points spread over its copies, streams and events and 4 over its IPC opens (a pair that cannot map
# is waived: exit 0, warned, nothing leaked), plus three faults on one rank alone; the quick
# benchmarks together (h2d allreduce pipeline memfit) at 8 points over their allocations and 4 over
# each other kind; densenet_allreduce and compute, long runs, at their first calls; the five
# collectives timed both ways (batched trials, iterations one by one, synced trials) with one rank
# alone failing at each of its allocations, copies and stream creations and 16 of its events, where
# a rank that stopped would leave the other in a collective call (issue 30). `full` fails every N of
# every kind of the first two sets and the collectives.
# Every run with a fault injected must end with every rank exiting 1 and rank 0 naming the
# injected error (out of memory for an allocation, the backend's error for the rest) and, for a
# fault on one rank, that rank. Each rank runs under rank_status.sh, which records its exit
# status and tells mpirun 0: mpirun aborts no job, so it signals no rank in its sanitizer's exit
# checks and spends no second waiting between its signals, and a rank that does not stop on its
# own is a hang.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
bin=$1 mode=${2:-ci} part=${3:-all} here=$(dirname "$0")
case $mode in ci | full) ;; *) echo "fault.sh: mode is ci or full, not '$mode'" >&2; exit 2 ;; esac
case $part in all | p2p_alloc | p2p | quick | step | coll) ;;
    *) echo "fault.sh: part is all, p2p_alloc, p2p, quick, step or coll, not '$part'" >&2; exit 2 ;; esac
# share NAME: whether this run does that share of the plan
share() { [ "$part" = all ] || [ "$part" = "$1" ]; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
opts="--backend host --sizes 4K --matrix-bytes 4K --latency-bytes 8 --fusion 4M --ranks 2
 --iters 2 --trials 2 --warmup 1 --threads 1 --batch 1 --rate 100 --resolution 32
 --memory-budget 64M --quiet"
runs=0 injected=0

# count SET: writes "alloc copy stream event ipc", the most over the ranks of a clean run of SET,
# into $work/counts.
count() {
    echo "0 0 0 0 0" >"$work/counts"
    # shellcheck disable=SC2086
    FB_FAULT=count mpi 2 "$bin" run $1 $opts --out "$work/count" >"$work/count.out" 2>"$work/count.err"
    rc=$?
    rm -rf "$work/count"
    if [ "$rc" != 0 ] || [ -n "$(sanitizer_reports "$work/count.err")" ]; then
        cat "$work/count.err" >&2
        fail "$1: the counting run is not clean (exit $rc)"
        return
    fi
    sed -n 's/.*made \([0-9]*\) allocations, \([0-9]*\) copies, \([0-9]*\) stream creations, \([0-9]*\) event creations, \([0-9]*\) IPC opens.*/\1 \2 \3 \4 \5/p' \
        "$work/count.err" | awk '{ for (i = 1; i <= 5; i++) if ($i > m[i]) m[i] = $i }
                                 END { print m[1] + 0, m[2] + 0, m[3] + 0, m[4] + 0, m[5] + 0 }' >"$work/counts"
    # a count line that no longer parses would sweep nothing and pass
    [ "$(awk '{ print $1 }' "$work/counts")" -gt 0 ] || fail "$1: no allocation counted: $(grep 'fault injection counts' "$work/count.err" | head -n 1)"
}

# launch WHAT PLAN NP ARGS...: fabricbench ARGS on NP ranks with FB_FAULT=PLAN, into $work/f;
# sets rc and what (WHAT, for messages). Each rank runs under rank_status.sh, so every rank ends
# on its own (mpirun kills none) and rc is their common exit status, or "mixed (...)" naming
# each rank's where they differ. Fails the test and returns 1 on a hang (no end within 120 s)
# or a sanitizer report.
launch() {
    what=$1 plan=$2 np=$3
    shift 3
    runs=$((runs + 1))
    rm -rf "$work/f" "$work/status"
    mkdir "$work/status"
    FB_FAULT=$plan timeout 120 "${MPIEXEC:-mpirun}" --oversubscribe -np "$np" \
        sh "$here/rank_status.sh" "$work/status" "$bin" "$@" \
        --out "$work/f" >"$work/f.out" 2>"$work/f.err"
    rc=$?
    if [ "$rc" = 124 ]; then fail "$what: no end within 120 s (a hang)"; return 1; fi
    if [ "$rc" = 0 ]; then
        rc=$(for r in $(seq 0 $((np - 1))); do
                 printf '%s %s\n' "$r" "$(cat "$work/status/rank.$r" 2>/dev/null || echo none)"
             done | awk '{ s[NR] = $2; all = all sep "rank " $1 ": " $2; sep = ", " }
                         END { for (i = 2; i <= NR; i++) if (s[i] != s[1]) { print "mixed (" all ")"; exit }
                               print s[1] }')
    fi
    if [ -n "$(sanitizer_reports "$work/f.err")" ]; then
        fail "$what: exit $rc with sanitizer reports:"; sed -n '1,60p' "$work/f.err" >&2; return 1
    fi
}

# job SET PLAN: one run of SET with FB_FAULT=PLAN (launch).
job() {
    # shellcheck disable=SC2086
    launch "FB_FAULT=$2 on '$1'" "$2" 2 run $1 $opts
}

# fault SET PLAN: one run of SET with FB_FAULT=PLAN, checked: exit 1 with rank 0's error last.
fault() {
    job "$1" "$2" || return
    if ! grep -q 'warning: fault injection: failing' "$work/f.err"; then
        # N beyond this job's calls: nothing failed, and the run must simply succeed
        [ "$rc" = 0 ] || { fail "$what: nothing injected, yet exit $rc"; cat "$work/f.err" >&2; }
        return
    fi
    injected=$((injected + 1))
    [ "$rc" != 0 ] || fail "$what: the fault was injected but the run exited 0"
    [ "$rc" = 1 ] || fail "$what: exit $rc, expected 1 (a device error)"
    # fabricbench's own lines carry a "[rank host]" prefix; rank 0 ends with the error, the
    # injected one (not a timeout or a transport's), and on one rank alone names that rank.
    # (No rank is signalled: each ends on its own under rank_status.sh, so a SIGTERM warning
    # is not mpirun's clean-up but a fault of ours, and counts.)
    last=$(grep '^\[0 ' "$work/f.err" | tail -n 1)
    case $2 in alloc:*) named="out of memory" ;; *) named="device backend error" ;; esac
    case $2 in *@*) named="rank ${2#*@} on [^:]*: $named" ;; esac
    case $last in
        *"] error: "*)
            printf '%s\n' "$last" | grep -q "$named" ||
                { fail "$what: rank 0's error does not name the injected fault ('$named'): '$last'"; cat "$work/f.err" >&2; } ;;
        *) fail "$what: rank 0's last line is not an error: '$last'"; cat "$work/f.err" >&2 ;;
    esac
    echo "$what: exit $rc, $last"
}

# waived PLAN: one run of p2p with an IPC open failed (FB_FAULT=ipc:N), checked: a pair that cannot
# map its partner's memory is waived, not an error (tests/mpi/p2p_waived.sh), so the run ends
# well (exit 0, no `error:` line), warns of the waived pair, and leaks nothing.
waived() {
    job p2p "$1" || return
    [ "$rc" = 0 ] || { fail "$what: exit $rc, expected 0 (the pair waived)"; cat "$work/f.err" >&2; return; }
    grep -q "error:" "$work/f.err" && fail "$what: an error line in a run that went on: $(grep 'error:' "$work/f.err")"
    grep -q 'warning: fault injection: failing' "$work/f.err" || return 0
    injected=$((injected + 1))
    grep -q "warning: p2p: rank [01] cannot map rank [01]'s [a-z]* memory, so this pair's [A-Za-z]* point is waived" \
        "$work/f.err" || fail "$what: no warning naming the waived pair: $(cat "$work/f.err")"
    echo "$what: exit 0, the pair waived"
}

# every N from 1 to MAX of KIND (a sample of `points` spread evenly when points > 0)
sweep() { # SET KIND MAX [POINTS]
    s=$1 kind=$2 max=$3 points=${4:-0}
    [ "$max" -gt 0 ] || return 0
    if [ "$points" -gt 0 ] && [ "$max" -gt "$points" ] && [ "$mode" != full ]; then
        ns=$(awk -v m="$max" -v p="$points" 'BEGIN { for (i = 0; i < p; i++) printf "%d ", 1 + int(i * (m - 1) / (p - 1)) }')
    else
        ns=$(seq 1 "$max")
    fi
    for n in $ns; do
        if [ "$kind" = ipc ]; then waived "$kind:$n"; else fault "$s" "$kind:$n"; fi
    done
}

# docs/sanitizers.md quotes this test's counts (issue 32: a figure in a doc is one a test compares
# with the tool's): doc_counts ROW A C S E [I] checks its table's row for ROW, and at the end
# the share's number of jobs is checked against the sentence that lists them (CI mode).
doc=$here/../../docs/sanitizers.md
[ -r "$doc" ] || fail "cannot read $doc, whose counts this test checks"
doc_counts() {
    row=$1
    shift
    want="| \`$row\` | $(printf '%s' "$*" | sed 's/ / | /g') |"
    grep -qF -- "$want" "$doc" ||
        fail "docs/sanitizers.md: its table has no row '$want' (these are the counts of a run now)"
}

if share p2p; then
# A malformed FB_FAULT is bad input: one error line (not one per rank), exit 2, nothing written.
FB_FAULT=alloc:0 mpi 2 "$bin" run p2p $opts --out "$work/bad" >"$work/bad.out" 2>"$work/bad.err"
rc=$?
[ "$rc" = 2 ] || fail "FB_FAULT=alloc:0: exit $rc, expected 2"
[ "$(grep -c 'error: ' "$work/bad.err")" = 1 ] || fail "FB_FAULT=alloc:0: not one error line: $(cat "$work/bad.err")"
grep -q "FB_FAULT='alloc:0': N must be a whole number from 1" "$work/bad.err" || fail "FB_FAULT=alloc:0: $(cat "$work/bad.err")"
[ ! -e "$work/bad" ] || fail "FB_FAULT=alloc:0: the run folder was written"

fi
if share p2p || share p2p_alloc; then
count p2p
set -- $(cat "$work/counts")
echo "p2p: $1 allocations, $2 copies, $3 streams, $4 events, $5 IPC opens (the most over the ranks)"
doc_counts p2p "$@"
[ "$5" -gt 0 ] || fail "p2p: no IPC open counted (its device-memory pairs map each other's buffers)"
if share p2p_alloc; then sweep p2p alloc "$1"; fi
if share p2p; then
sweep p2p copy "$2" 6; sweep p2p stream "$3" 6; sweep p2p event "$4" 6; sweep p2p ipc "$5" 4
# one rank alone failing while the other goes on to its next collective: the ranks must agree
fault p2p "alloc:$(($1 / 2 + 1))@1"; fault p2p "copy:3@1"; fault p2p "event:2@0"
fi
fi

# The quick set and step decode the imagenet set (500x375 JPEG): the calls failed are the same
# kinds, and a run costs much less CPU than 1024x1024 PNG under the sanitizers. The PNG decode runs
# under them in sanitize_host_suite_np2.
if share quick; then
quick="h2d allreduce pipeline memfit --dataset imagenet"
count "$quick"
set -- $(cat "$work/counts")
echo "$quick: $1 allocations, $2 copies, $3 streams, $4 events"
doc_counts "h2d allreduce pipeline memfit" "$1" "$2" "$3" "$4"
sweep "$quick" alloc "$1" 8; sweep "$quick" copy "$2" 4; sweep "$quick" stream "$3" 4
sweep "$quick" event "$4" 4

# (densenet_allreduce makes no copy on host: a copy fault would only run it to the end)
for plan in alloc:1 alloc:2 stream:1 event:1; do fault densenet_allreduce "$plan"; done
for plan in alloc:1 alloc:2 copy:1 stream:1 event:1; do fault compute "$plan"; done
fi

if share coll; then
# The collectives, each iteration a collective call: rank 1 alone fails while rank 0 goes on,
# in the warm-up, the batched trials, the per-iteration timing (its events made first) and the
# synced trials; the ranks must stop together and name rank 1's error (issue 30: FB_FAULT=
# event:10@1 once ended in the --timeout, blaming the transport). The --timeout bounds a hang
# well inside job's 120 s.
coll="all_gather alltoall reduce_scatter broadcast reduce --timing both --timeout 30"
count "$coll"
set -- $(cat "$work/counts")
echo "$coll: $1 allocations, $2 copies, $3 streams, $4 events"
doc_counts "all_gather alltoall reduce_scatter broadcast reduce --timing both" "$1" "$2" "$3" "$4"
# every allocation, copy and stream creation; the events (most of them the per-iteration
# timing's) at 16 points spread over them, every one in `full`
[ "$1" -gt 0 ] && [ "$4" -gt 0 ] || fail "coll: no allocation or event counted"
for n in $(seq 1 "$1"); do fault "$coll" "alloc:$n@1"; done
for n in $(seq 1 "$2"); do fault "$coll" "copy:$n@1"; done
for n in $(seq 1 "$3"); do fault "$coll" "stream:$n@1"; done
if [ "$mode" = full ] || [ "$4" -le 16 ]; then ns=$(seq 1 "$4")
else ns=$(awk -v m="$4" 'BEGIN { for (i = 0; i < 16; i++) printf "%d ", 1 + int(i * (m - 1) / 15) }'); fi
for n in $ns; do fault "$coll" "event:$n@1"; done
fault "$coll" "event:10@1"

# locate and soak name the failed rank as run does (one path, fb_world_stop_reason): rank 0's
# last line and env.json's run_stop, after rank 1's third allocation fails
for cmd in locate soak; do
    case $cmd in
        locate) # 3 pretend nodes of one rank each
            export FB_TEST_RANKS_PER_NODE=1
            launch "locate, FB_FAULT=alloc:3@1" alloc:3@1 3 locate --backend host --bytes 64K \
                --trials 3 --tolerance 75 --quiet
            ok=$?
            unset FB_TEST_RANKS_PER_NODE ;;
        soak) launch "soak, FB_FAULT=alloc:3@1" alloc:3@1 2 soak --duration 5 --interval 1 \
                  --backend host --sizes 64K --trials 3 --warmup 1 --tolerance 1e9 --quiet
            ok=$? ;;
    esac
    [ "$ok" = 0 ] || continue
    grep -q 'warning: fault injection: failing' "$work/f.err" || { fail "$what: nothing injected"; continue; }
    injected=$((injected + 1))
    [ "$rc" = 1 ] || fail "$what: exit $rc, expected 1"
    last=$(grep '^\[0 ' "$work/f.err" | tail -n 1)
    printf '%s\n' "$last" | grep -q "] error: $cmd stopped.*: rank 1 on [^:]*: out of memory" ||
        { fail "$what: rank 0's last line does not name rank 1's fault: '$last'"; cat "$work/f.err" >&2; }
    grep -q '"detail":.*rank 1 on [^:]*: out of memory' "$work/f/env.json" ||
        fail "$what: env.json's run_stop does not name rank 1: $(grep -A3 run_stop "$work/f/env.json")"
    echo "$cmd, FB_FAULT=alloc:3@1: exit $rc, $last"
done
fi

if share step; then
# step: the pipeline's ring, the stand-in, the bucket engine and its thread, the timeline
step="step --dataset imagenet"
count "$step"
set -- $(cat "$work/counts")
echo "$step: $1 allocations, $2 copies, $3 streams, $4 events"
doc_counts step "$1" "$2" "$3" "$4"
sweep "$step" alloc "$1" 6; sweep "$step" copy "$2" 3; sweep "$step" stream "$3" 3
sweep "$step" event "$4" 3
fi
echo "$part: $runs fault runs, $injected with a fault injected, each ending cleanly unless said above"
[ "$injected" -gt 0 ] || fail "no fault was ever injected"
# the sentence "That is N jobs, all with a fault injected (p2p_alloc N, p2p N, ...)": this
# share's count, and N the sum of the five
jobs=$(tr '\n' ' ' <"$doc" | sed -n 's/.*That is \([0-9]*\) jobs, all with a fault injected (\([^)]*\)).*/\1: \2/p')
[ -n "$jobs" ] || fail "docs/sanitizers.md: no sentence 'That is N jobs, all with a fault injected (...)'"
if [ "$mode" = ci ] && [ "$part" != all ]; then
    printf '%s\n' "$jobs" | grep -Eq "[:,] $part $runs(,|$)" ||
        fail "docs/sanitizers.md says '$jobs'; share $part made $runs jobs"
fi
printf '%s\n' "$jobs" | awk -F': ' '{ n = split($2, p, ", "); for (i = 1; i <= n; i++) { split(p[i], w, " "); t += w[2] }
                                     if (t != $1 + 0) { print "the shares sum to " t; exit 1 } }' >"$work/sum" ||
    fail "docs/sanitizers.md: 'That is N jobs' is not the sum of its shares: $(cat "$work/sum")"
finish

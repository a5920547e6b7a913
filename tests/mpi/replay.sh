#!/bin/sh
# replay --mix at 2 ranks on the host backend: each shipped mix (scaled down) overlapped and in
# sequence, verified (wrong = 0), with its rows: time per step, the step's exposed time, and each
# op's time and exposed time at the sizes the mix and --scale give; an NCCL Inspector file as
# the mix; the per-op rows the slowest rank's (one rank slowed, FB_TEST_REPLAY_SLOW); and bad
# mixes refused before anything is written (exit 2, file:line); at --mpi-thread single the
# sequence instead of the overlap, said once.
# Arguments: the fabricbench binary, profiles/mixes, tests/data/mix.
. "$(dirname "$0")/../lib.sh"
bin=$1 mixes=$2 data=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# replay MIX SCALE NOPS OP0_BYTES [ARGS...]: one run, and its rows checked
replay() {
    mix=$1 scale=$2 nops=$3 op0=$4; shift 4
    out=run-$(basename "$mix")
    mpi 2 "$bin" run replay --mix "$mix" --scale "$scale" --overlap both --compute-us 20 \
        --trials 2 --warmup 1 --trial-ms 2 --out "$out" "$@" >"$out.txt" 2>&1 ||
        { fail "replay $mix exited $?: $(tail -5 "$out.txt")"; return; }
    csv=$out/results.csv
    for c in overlap sequence; do
        n=$(csv_awk '$0 != "" && v("bench") == "replay" && v("case") == c &&
                            v("metric") == "time" && v("wrong") == 0 && v("samples") == 2 &&
                            v("ranks") == 2 { n++ } END { print n + 0 }' c=$c "$csv")
        [ "$n" = 1 ] || fail "$mix $c: $n verified time rows, expected 1"
        n=$(csv_awk 'v("case") == c && v("metric") == "comm_exposed_us" { n++ }
                            END { print n + 0 }' c=$c "$csv")
        [ "$n" = 1 ] || fail "$mix $c: $n comm_exposed_us rows, expected 1"
        for m in op_time op_exposed; do
            n=$(csv_awk 'index(v("case"), c ":") == 1 && v("metric") == m &&
                         v("median") >= 0 { n++ } END { print n + 0 }' c=$c m=$m "$csv")
            [ "$n" = "$nops" ] || fail "$mix $c: $n $m rows, expected $nops"
        done
        b=$(csv_awk 'v("case") ~ "^" c ":0:" && v("metric") == "op_time" {
                             print v("bytes") }' c=$c "$csv")
        [ "$b" = "$op0" ] || fail "$mix $c: the first op moves '$b' bytes, expected $op0"
        # an op is exposed at least as long as it runs (it starts after its data is ready)
        bad=$(csv_awk 'index(v("case"), c ":") == 1 && v("metric") == "op_time" {
                                   t[v("case")] = v("median") }
                               index(v("case"), c ":") == 1 && v("metric") == "op_exposed" {
                                   e[v("case")] = v("median") }
                               END { for (k in t) if (e[k] + 1e-6 < t[k]) print k }' c=$c "$csv")
        [ -z "$bad" ] || fail "$mix $c: exposed shorter than the op itself: $bad"
    done
}

# DenseNet-121 under Horovod's fusion: 7 all-reduces; bucket0 is 987598 floats, 5% of it
replay "$mixes/densenet121-horovod.mix" 0.05 7 197516
# GPT-2 FSDP: 13 units x 3; the root unit's 39385344 halves / 1000 = 39385, two pieces of 19693
replay "$mixes/gpt2-124m-fsdp.mix" 0.001 39 78772
# Mixtral MoE: 32 layers x 4 all-to-alls of 64 MiB; / 4096: 8192 halves in two blocks of 4096
replay "$mixes/mixtral-8x7b-moe.mix" 0.000244140625 128 16384
# NCCL Inspector's output (tests/data/mix): 4 collectives of one communicator and rank, float16
replay "$data/inspector-v4.jsonl" 0.25 4 1048576 --dtype float16

# every collective and type of the parser's test mix under host-strict (CUDA's stream rules
# enforced: a missing wait between the compute and communication streams fails); 4M: 10 floats
replay "$data/good.mix" 0.00001 6 40 --backend host-strict

# the per-op rows are every rank's, the slowest's: rank 1 alone made 20 ms slower in each op
# (FB_TEST_REPLAY_SLOW, test only, a wait inside the op's span); 40 ms of compute between the
# ops, so rank 0 never waits for rank 1 in the next op and its own figures stay short
printf 'allreduce 4K float32 a\nallgather 8K float32 b\n' >slow.mix
FB_TEST_REPLAY_SLOW=rank:1 mpi 2 -x FB_TEST_REPLAY_SLOW "$bin" run replay --mix slow.mix \
    --overlap on --compute-us 40000 --trials 3 --warmup 1 --iters 1 --out run-slow \
    >slow.txt 2>&1 || fail "replay with rank 1 slowed exited $?: $(tail -5 slow.txt)"
for m in op_time op_exposed; do
    got=$(csv_awk 'v("metric") == m { printf "%s=%s ", v("case"), v("median") }' m=$m \
          run-slow/results.csv)
    n=$(csv_awk 'v("metric") == m && v("median") >= 20000 { n++ } END { print n + 0 }' m=$m \
        run-slow/results.csv)
    [ "$n" = 2 ] || fail "rank 1 slowed by 20 ms per op: $m rows $got (expected both >= 20000 us)"
done

# at MPI_THREAD_SINGLE there is no communication thread: the overlap case becomes the sequence,
# said once in a warning, as step does (it printed errors and ended with 0 rows and exit 0)
mpi 2 "$bin" run replay --mix slow.mix --mpi-thread single --compute-us 20 --trials 2 \
    --warmup 1 --trial-ms 2 --out run-single >single.txt 2>&1 ||
    fail "replay at --mpi-thread single exited $?: $(tail -5 single.txt)"
grep -q 'error' single.txt && fail "replay at --mpi-thread single printed an error: $(grep error single.txt)"
[ "$(grep -c 'warning: replay: overlap off: .*below MPI_THREAD_SERIALIZED' single.txt)" = 1 ] ||
    fail "replay at --mpi-thread single does not say once that the overlap is off: $(cat single.txt)"
n=$(csv_awk 'v("case") == "sequence" && v("metric") == "time" && v("wrong") == 0 { n++ }
             v("case") == "overlap" { o++ } END { print n + 0, o + 0 }' run-single/results.csv)
[ "$n" = "1 0" ] || fail "replay at --mpi-thread single: sequence/overlap time rows '$n', expected '1 0'"

# bad mixes: one line naming the file and line, exit 2, nothing written
printf 'allreduce 4M float32\nallreduse 4M float32\n' >bad.mix
expect_bad "bad.mix:2: unknown collective 'allreduse'" run replay --mix bad.mix
expect_bad "cannot open 'nosuch.mix'" run replay --mix nosuch.mix
expect_bad "benchmark 'replay' needs --mix FILE" run replay
printf 'allreduce 2G float32\nallgather 4G float32 big\n' >huge.mix
expect_bad "bad value for --scale: 1e+06 makes op 'big' of --mix huge.mix:2 4.29e+15 bytes; replay runs ops of at most 2^50 bytes" \
    run replay --mix huge.mix --scale 1000000
# an op over the limit with no --scale is the file's, named by its line (not "--scale")
printf 'allreduce 4M float32\nbroadcast 2097152G float32 giant\n' >giant.mix
expect_bad "--mix giant.mix:2: op 'giant' (broadcast) is 2251799813685248 bytes; replay runs ops of at most 2^50 bytes" \
    run replay --mix giant.mix
[ ! -e results ] || fail "a bad mix wrote results/"

# results.csv never passes what its readers accept (issue 30), here a cap of FB_TEST_RESULTS_MAX_BYTES:
# a mix whose rows alone, each at its shortest, pass it is refused before anything runs; one
# under that floor whose rows still pass it stops at the write, the rows before kept, readable
awk 'BEGIN { for (i = 0; i < 50; i++) printf "allreduce 4K float32 op%d\n", i }' >many.mix
FB_TEST_RESULTS_MAX_BYTES=5000 mpi 2 "$bin" run replay --mix many.mix --overlap both --trials 2 \
    --warmup 1 --trial-ms 2 --quiet --out floor >floor.out 2>floor.err
rc=$?
[ "$rc" = 2 ] || fail "a mix over the cap's floor: exit $rc, expected 2: $(tail -3 floor.err)"
grep -q "replay: --mix many.mix: 50 ops in both modes write at least [0-9]* bytes of rows (2 per op and mode), over the 5000 bytes" floor.err ||
    fail "a mix over the cap's floor: $(cat floor.err)"
[ ! -e floor/results.csv ] || fail "a mix over the cap's floor wrote results.csv"
least=$(sed -n 's/.*write at least \([0-9]*\) bytes.*/\1/p' floor.err | head -n 1)
# at 1.3 x the floor the plan passes, and the rows, longer than their floor, do not
cap=$((least * 13 / 10))
FB_TEST_RESULTS_MAX_BYTES=$cap mpi 2 "$bin" run replay --mix many.mix --overlap both --trials 2 \
    --warmup 1 --trial-ms 2 --quiet --out cap >cap.out 2>cap.err
rc=$?
[ "$rc" = 2 ] || fail "rows past the cap: exit $rc, expected 2: $(tail -3 cap.err)"
grep -q "results.csv' would hold [0-9]* bytes ([0-9]* rows), over the $cap bytes fabricbench's readers accept: not written" cap.err ||
    fail "rows past the cap: $(cat cap.err)"
size=$(wc -c <cap/results.csv 2>/dev/null || echo missing)
[ "$size" != missing ] && [ "$size" -le "$cap" ] || fail "rows past the cap: results.csv is $size bytes, the cap $cap"
"$bin" report --no-plots cap >cap-report.out 2>cap-report.err || fail "report refused the capped run: $(cat cap-report.err)"
finish

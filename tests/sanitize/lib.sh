# Helpers for the sanitizer and valgrind tests; sourced after tests/lib.sh.
# sanitizer_reports FILE: prints the lines of FILE that report a sanitizer, valgrind or signal
# error (nothing when clean). ASan and LSan print "ERROR: <Tool>Sanitizer", UBSan "runtime
# error:", valgrind "== ... ERROR SUMMARY: N errors" with N > 0; a crash reaches mpirun as a
# signal. Open MPI's notice about a nonzero exit code is not a report.
sanitizer_reports() {
    grep -E 'ERROR: [A-Za-z]+Sanitizer|[A-Za-z]+Sanitizer has encountered a fatal error|runtime error:|SUMMARY: [A-Za-z]+Sanitizer|ERROR SUMMARY: [1-9]|exited on signal|Segmentation fault|Aborted|MPI_ABORT' "$1"
}
# The benchmark options that keep a run of every benchmark on 2 ranks short under the
# sanitizers: tiny sweeps, 2 iterations of 2 trials without calibration, the
# whole job only (--ranks), small images, a small memfit budget.
FB_SHORT_OPTIONS="--backend host --min-bytes 8 --max-bytes 64K --matrix-bytes 64K --latency-bytes 8
 --fusion off,4M --ranks 2 --iters 2 --trials 2 --warmup 1 --threads 2 --batch 2 --rate 100
 --resolution 32 --memory-budget 64M --quiet"
FB_ALL_BENCHES="h2d allreduce p2p densenet_allreduce pipeline compute memfit step all_gather
reduce_scatter alltoall broadcast reduce"
# suite_checks RUN_DIR: every benchmark of $FB_ALL_BENCHES has rows in RUN_DIR/results.csv,
# none with wrong elements, and env.json marks the run complete (fail() for each that is not).
suite_checks() {
    for b in $FB_ALL_BENCHES; do
        n=$(csv_awk 'v("bench") == b { n++ } END { print n + 0 }' b="$b" "$1/results.csv")
        [ "$n" -gt 0 ] || fail "$b has no rows in results.csv"
    done
    bad=$(csv_awk 'v("wrong") != "" && v("wrong") != "0" { print v("bench") " " v("case") " wrong=" v("wrong") }' "$1/results.csv")
    [ -z "$bad" ] || fail "rows with wrong elements: $bad"
    grep -Eq '"run_status":[[:space:]]*"complete"' "$1/env.json" || fail "env.json not marked complete"
}

#!/bin/sh
# A pair whose memory cannot be mapped (two GPUs without peer access; here FB_FAULT=ipc:1@1
# makes rank 1's first IPC open fail the same way) waives that pair's IPC point and the run goes
# on: exit 0, rank 1 warns naming the pair and the reason, rank 0 says the point is waived, no
# `error:` line anywhere (a run that ends well printed one, issue 29), the waived point has no
# rows while the same matrix over MPI has its rows, nothing wrong, the run complete.
. "$(dirname "$0")/../lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
FB_FAULT=ipc:1@1 mpi 2 -x FB_FAULT "$bin" run p2p --backend host --sizes 4K --matrix-bytes 4K \
    --latency-bytes 8 --trials 2 --warmup 1 --quiet --out "$work/run" >"$work/out" 2>"$work/err"
rc=$?
[ "$rc" = 0 ] || fail "the run exited $rc: $(tail -n 5 "$work/err")"
grep -q "error:" "$work/err" "$work/out" && fail "an error line in a run that went on: $(grep -h 'error:' "$work/err" "$work/out")"
grep -q "^\[1 [^]]*\] warning: p2p: rank 1 cannot map rank 0's device memory, so this pair's IPC point is waived: FB_FAULT: " "$work/err" ||
    fail "rank 1 did not warn with the pair and the reason: $(cat "$work/err")"
grep -q "^\[0 [^]]*\] warning: p2p matrix_uni 4096 bytes waived" "$work/err" ||
    fail "rank 0 did not say which point was waived: $(cat "$work/err")"
csv=$work/run/results.csv
# rank 1 writes into rank 0's memory: the point 1 -> 0 over ipc is the one waived, 0 -> 1 stays
n=$(csv_awk 'v("case") == "matrix_uni" && v("transport") == "ipc" && v("src") == 1 && v("dst") == 0 { n++ } END { print n + 0 }' "$csv")
[ "$n" = 0 ] || fail "$n rows of the waived point (matrix_uni 1 -> 0 over ipc)"
for pt in ipc:0:1 mpi:0:1 mpi:1:0; do
    n=$(csv_awk 'v("case") == "matrix_uni" && v("transport") ":" v("src") ":" v("dst") == pt { n++ } END { print n + 0 }' pt="$pt" "$csv")
    [ "$n" -gt 0 ] || fail "no matrix_uni rows for $pt (transport:src:dst)"
done
bad=$(csv_awk 'v("wrong") != "" && v("wrong") != "0" { n++ } END { print n + 0 }' "$csv")
[ "$bad" = 0 ] || fail "$bad rows with wrong elements"
grep -Eq '"run_status":[[:space:]]*"complete"' "$work/run/env.json" || fail "env.json not marked complete"
finish

#!/bin/sh
# The sampled p2p matrix on 8 ranks in 4 pretend nodes of 2 (FB_TEST_RANKS_PER_NODE, test only):
# results.csv holds exactly the sampled cells - every pair inside each node, the ring (local rank
# r of node i to local rank r of node i+1), 16 random cross-node pairs - and no row for the
# others; IPC only inside nodes; the plan stated on the terminal and in matrix_plan rows; the
# all-at-once shifts 1 (neighbours), 2 (ring) and 4 (bisection). Then --matrix all on the same
# job measures every pair.
. "$(dirname "$0")/../lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args="p2p --backend host --min-bytes 4K --max-bytes 8K --matrix-bytes 8K --latency-bytes 8
      --trials 2 --warmup 1 --iters 2 --quiet"

FB_TEST_RANKS_PER_NODE=2 mpi 8 -x FB_TEST_RANKS_PER_NODE "$bin" run $args --matrix sampled \
    --out "$work/s" >"$work/stdout" 2>"$work/stderr"
rc=$?
[ "$rc" = 0 ] || { cat "$work/stderr" >&2; fail "sampled run exited $rc"; finish; }
grep -q "pretend nodes of 2" "$work/stderr" || fail "the test-only node override is not announced"
# nothing here calls MPI from a second thread: auto asks for single (Open MPI locks above it)
grep -Eq '"thread_level":[[:space:]]*"single"' "$work/s/env.json" ||
    fail "p2p ran at MPI thread level $(grep thread_level "$work/s/env.json"), not single"
! grep -q "MPI ran at thread level" "$work/stdout" || fail "a run at single says it ran above it"
grep -q "# p2p over mpi: 32 of 56 one-way pairs measured (a sample" "$work/stdout" ||
    fail "the sample is not stated: $(grep 'pairs measured' "$work/stdout")"
doc_example docs/scale.md sampled-line "$work/stdout"

csv_awk '
v("bench") == "p2p" {
    c = v("case"); m = v("metric"); tr = v("transport"); s = v("src"); d = v("dst")
    where = "row " NR " (" c " " tr " " s ">" d " " m ")"
    if (c == "matrix_plan") { plan[tr "," m] = v("median") + 0; next }
    if (s != "" && d != "" && c ~ /^matrix_/) {
        cross = int(s / 2) != int(d / 2)
        if (cross && v("link") != "network") bad(where, "a cross-node pair with link " v("link"))
        if (v("nodes") != 1 + cross) bad(where, "nodes " v("nodes"))
    }
    if (c == "matrix_uni" && m == "bandwidth") {
        if (uni[tr "," s "," d]++) bad(where, "measured twice")
        if (v("median") + 0 <= 0 || v("wrong") != "0") bad(where, "median " v("median") " wrong " v("wrong"))
    }
    if (c == "matrix_bidir" && m == "bandwidth_total") bidir[tr "," s "," d]++
    if (c == "matrix_latency" && m == "latency") lat[tr "," s "," d]++
    if (c ~ /^all_pairs\+/ && m == "bandwidth_total") shifts[tr "," c]++
}
function bad(where, what) { print "FAIL: " where ": " what > "/dev/stderr"; errors++ }
END {
    n = 0; for (k in uni) if (k ~ /^mpi,/) n++
    for (a = 0; a < 8; a++) for (b = 0; b < 8; b++) {
        if (a == b) continue
        inside = int(a / 2) == int(b / 2)
        ring = b == (a + 2) % 8
        k = "mpi," a "," b
        if (inside || ring) {
            if (uni[k] != 1) bad(k, "matrix_uni: " uni[k] " rows, expected 1")
            lo = a < b ? a : b; hi = a < b ? b : a
            if (bidir["mpi," lo "," hi] != 1) bad(k, "matrix_bidir: no row for " lo "<>" hi)
            if (lat["mpi," lo "," hi] != 1) bad(k, "matrix_latency: no row for " lo "<>" hi)
        } else if (k in uni) random++
        for (i = 0; i < 2; i++) {
            tr = i ? "ipc-staged" : "ipc"
            if (inside && uni[tr "," a "," b] != 1) bad(tr " " a ">" b, "missing inside a node")
            if (!inside && uni[tr "," a "," b]) bad(tr " " a ">" b, "IPC across pretend nodes")
        }
    }
    # 56 ordered pairs: 8 inside nodes, 8 on the ring, 16 random of the other 40, 24 empty
    if (random != 16) bad("mpi", random " random cross-node pairs, expected 16")
    if (n != 32) bad("mpi", n " one-way cells, expected 32")
    if (plan["mpi,pairs_measured"] != 32 || plan["mpi,pairs_possible"] != 56) bad("mpi", "matrix_plan " plan["mpi,pairs_measured"] " of " plan["mpi,pairs_possible"])
    if (plan["ipc,pairs_measured"] != 8 || plan["ipc,pairs_possible"] != 8) bad("ipc", "matrix_plan " plan["ipc,pairs_measured"] " of " plan["ipc,pairs_possible"])
    for (sh = 1; sh <= 7; sh++) {
        want = sh == 1 || sh == 2 || sh == 4
        if (shifts["mpi,all_pairs+" sh] != want) bad("mpi all_pairs+" sh, shifts["mpi,all_pairs+" sh] " total rows, expected " want)
    }
    exit errors ? 1 : 0
}' "$work/s/results.csv" || fail "sampled results.csv content"

# The random pairs are the same in another launch (seeded, the same on every rank).
FB_TEST_RANKS_PER_NODE=2 mpi 8 -x FB_TEST_RANKS_PER_NODE "$bin" run $args --matrix sampled \
    --out "$work/s2" >/dev/null 2>"$work/stderr2" || fail "second sampled run failed"
pairs() { csv_awk 'v("case") == "matrix_uni" && v("metric") == "bandwidth" && v("transport") == "mpi" { print v("src") ">" v("dst") }' "$1" | sort; }
[ "$(pairs "$work/s/results.csv")" = "$(pairs "$work/s2/results.csv")" ] || fail "the sampled pairs differ between two launches"

# --matrix all on 4 ranks in 2 pretend nodes: every one of the 12 ordered pairs.
FB_TEST_RANKS_PER_NODE=2 mpi 4 -x FB_TEST_RANKS_PER_NODE "$bin" run $args --matrix all \
    --out "$work/a" >"$work/stdout_all" 2>"$work/stderr_all" || fail "--matrix all run failed"
n=$(pairs "$work/a/results.csv" | wc -l)
[ "$n" = 12 ] || fail "--matrix all measured $n one-way pairs over mpi, expected 12"
grep -q "# p2p over mpi: 12 of 12 one-way pairs measured$" "$work/stdout_all" || fail "--matrix all not stated"
finish

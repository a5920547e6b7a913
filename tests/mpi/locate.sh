#!/bin/sh
# `fabricbench locate` on pretend nodes of one rank (FB_TEST_RANKS_PER_NODE=1, test only), host
# backend (issue 16, docs/locate.md). Argument 2 picks the case:
#   clean   5 nodes, no fault: exit 0, suspects.csv header only, the all-clear line, the files
#           of a run folder, locate.md's round count as planned (5 rounds with a bye for 5
#           nodes), results.csv holding every round and each lead rank's figure in it.
#   node    4 nodes, node 2's transfers between nodes slowed (FB_TEST_LOCATE_SLOW=node:2): exit
#           1, one node suspect, node 2, no other suspect.
#   link    5 nodes, the link 1-3 slowed: exit 1, one link suspect between n1 and n3, no node.
#   rank    4 nodes, rank 1's loop slowed: exit 1, rank 1 named a straggler, no other suspect.
#   bad     bad options exit 2 with one line naming the option, nothing written.
. "$(dirname "$0")/../lib.sh"
bin=$1
what=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
header='kind,node,peer,bench,metric,measured,typical,ratio,evidence'
# small and quick: 256 KiB messages, 3 trials. --tolerance 75: pretend nodes are processes of one
# machine shared with other work; a pair's best trial moved up to 4x between rounds there (the
# test-only slowdown is 10x or more), and polling ranks yield the processor when idle
args="--backend host --bytes 256K --trials 3 --tolerance 75 --quiet"

# locate NODES [VAR=VALUE]: runs locate on NODES pretend nodes into $work/out.
locate() {
    n=$1; shift
    env FB_TEST_RANKS_PER_NODE=1 OMPI_MCA_mpi_yield_when_idle=1 "$@" "${MPIEXEC:-mpirun}" --oversubscribe -np "$n" \
        -x FB_TEST_RANKS_PER_NODE -x FB_TEST_LOCATE_SLOW \
        "$bin" locate $args --out "$work/out" >"$work/stdout" 2>"$work/stderr"
    rc=$?
}
host=$(hostname)

case $what in
clean)
    locate 5 FB_TEST_LOCATE_SLOW=
    [ "$rc" = 0 ] || fail "exit $rc, expected 0: $(cat "$work/stdout" "$work/stderr" | tail -20)"
    grep -qx "locate: no suspect among 5 node(s)" "$work/stdout" ||
        fail "no all-clear line: $(cat "$work/stdout")"
    grep -q "SUSPECT" "$work/stdout" && fail "a suspect on a clean job: $(grep SUSPECT "$work/stdout")"
    [ "$(cat "$work/out/suspects.csv")" = "$header" ] ||
        fail "suspects.csv is not the header alone: $(cat "$work/out/suspects.csv")"
    for f in results.csv env.json locate.md locate-heat.dat locate-heat.gp drain.txt; do
        [ -s "$work/out/$f" ] || fail "no $f in the run folder"
    done
    # no suspect: drain.txt holds its comments alone
    [ -z "$(grep -v '^#' "$work/out/drain.txt")" ] || fail "drain.txt of a clean run: $(cat "$work/out/drain.txt")"
    if command -v gnuplot >/dev/null; then
        for f in locate-heat.png locate-heat.svg; do
            [ -s "$work/out/$f" ] || fail "gnuplot is here but no $f"
        done
        grep -q "^locate: $work/out/suspects.csv, drain.txt, locate.md, results.csv, env.json, locate-heat.png, locate-heat.svg" \
            "$work/stdout" || fail "the last line does not name the heat map drawn: $(tail -1 "$work/stdout")"
        grep -q '^Files: suspects.csv, drain.txt, results.csv, env.json, locate-heat.png, locate-heat.svg' "$work/out/locate.md" ||
            fail "locate.md does not name the heat map drawn: $(grep '^Files' "$work/out/locate.md")"
    fi
    grep -Eq '"run_status":[[:space:]]*"complete"' "$work/out/env.json" || fail "env.json not marked complete"
    grep -q '^| 2: tournament, twice | 5 |' "$work/out/locate.md" ||
        fail "locate.md lacks the 5 rounds planned for 5 nodes: $(grep tournament "$work/out/locate.md")"
    grep -q '^rounds: 5 of the tournament.s 5;' "$work/out/locate.md" ||
        fail "locate.md's round count: $(grep '^rounds' "$work/out/locate.md")"
    # every round in results.csv: 4 lead ranks measured in each (one bye of 5)
    csv_awk '
v("bench") == "locate_pairs" && v("metric") == "bandwidth" && v("src") != "" {
    n[v("case")]++
    if (v("median") + 0 <= 0 || v("wrong") != "0") { print "bad row " NR > "/dev/stderr"; bad++ }
}
END {
    for (r = 1; r <= 5; r++) if (n["round" r] != 4 || n["again" r] != 4) { print "round" r ": " n["round" r] " and " n["again" r] " ranks" > "/dev/stderr"; bad++ }
    exit bad > 0
}' "$work/out/results.csv" || fail "results.csv does not hold each round with 4 ranks"
    ;;
node)
    locate 4 FB_TEST_LOCATE_SLOW=node:2
    [ "$rc" = 1 ] || fail "exit $rc, expected 1: $(tail -20 "$work/stderr")"
    grep -q "^SUSPECT node $host/n2: " "$work/stdout" ||
        fail "node 2 not named: $(cat "$work/stdout")"
    [ "$(grep -c '^SUSPECT' "$work/stdout")" = 1 ] ||
        fail "not exactly one suspect: $(grep SUSPECT "$work/stdout")"
    [ "$(sed 1d "$work/out/suspects.csv" | cut -d, -f1-3)" = "node,$host/n2," ] ||
        fail "suspects.csv: $(cat "$work/out/suspects.csv")"
    ;;
link)
    locate 5 FB_TEST_LOCATE_SLOW=link:1-3
    [ "$rc" = 1 ] || fail "exit $rc, expected 1: $(tail -20 "$work/stderr")"
    grep -q "^SUSPECT link $host/n1-$host/n3: " "$work/stdout" ||
        fail "the link 1-3 not named: $(cat "$work/stdout")"
    [ "$(grep -c '^SUSPECT' "$work/stdout")" = 1 ] ||
        fail "not exactly one suspect: $(grep SUSPECT "$work/stdout")"
    [ "$(sed 1d "$work/out/suspects.csv" | cut -d, -f1-3)" = "link,$host/n1,$host/n3" ] ||
        fail "suspects.csv: $(cat "$work/out/suspects.csv")"
    ;;
rank)
    locate 4 FB_TEST_LOCATE_SLOW=rank:1
    [ "$rc" = 1 ] || fail "exit $rc, expected 1: $(tail -20 "$work/stderr")"
    grep -q "^SUSPECT rank 1 ($host/n1): straggler" "$work/stdout" ||
        fail "rank 1 not named a straggler: $(cat "$work/stdout")"
    [ "$(grep -c '^SUSPECT' "$work/stdout")" = 1 ] ||
        fail "not exactly one suspect: $(grep SUSPECT "$work/stdout")"
    sed 1d "$work/out/suspects.csv" | grep -q "^rank,$host/n1,,locate_arrive,time,.*rank=1;" ||
        fail "suspects.csv: $(cat "$work/out/suspects.csv")"
    ;;
bad)
    cd "$work" || exit 1
    expect_bad "--tolerance" locate --tolerance 0
    expect_bad "--tolerance" locate --tolerance abc
    expect_bad "--trials" locate --trials 1
    expect_bad "--bytes" locate --bytes 12Q
    # (issue 30: --bytes 0 printed an uninitialised buffer as its reason)
    expect_bad "bad value for --bytes: '0' is 0 bytes; give 64 bytes to 2147483647 bytes" locate --bytes 0
    expect_bad "bad value for --bytes: '63' is 63 bytes; give 64 bytes" locate --bytes 63
    expect_bad "--backend" locate --backend gpu
    expect_bad "--coll" locate --coll tcp
    expect_bad "unknown option '--frobnicate'" locate --frobnicate
    expect_bad "unexpected argument 'p2p'" locate p2p
    [ ! -e results ] || fail "bad options left a results folder"
    # one node: no tournament and no heat map, and nothing names a file it did not write (issue
    # 30: the last line and locate.md named locate-heat.png)
    "$bin" locate --backend host --bytes 256K --trials 3 --quiet --out one >out.txt 2>err.txt ||
        fail "locate on one node exited $?: $(tail -3 err.txt)"
    grep -qx "locate: one/suspects.csv, drain.txt, locate.md, results.csv, env.json" out.txt ||
        fail "locate on one node: the last line names other files: $(tail -1 out.txt)"
    grep -qx 'Files: suspects.csv, drain.txt, results.csv, env.json.' one/locate.md ||
        fail "locate on one node: locate.md names other files: $(grep '^Files' one/locate.md)"
    for f in one/locate-heat.dat one/locate-heat.png; do [ ! -e "$f" ] || fail "one node: $f written"; done
    "$bin" locate --help >out.txt 2>&1 || fail "locate --help exited non-zero"
    grep -q -- "--tolerance PCT" out.txt || fail "--help lacks --tolerance"
    ;;
*) fail "unknown case '$what'" ;;
esac
finish

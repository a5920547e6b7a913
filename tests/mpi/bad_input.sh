#!/bin/sh
# Bad input: one line naming the problem on stderr, exit code 2, nothing written - also under
# mpirun with two ranks (one line, not one per rank).
. "$(dirname "$0")/../lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
touch afile

expect_usage() { # NP EXPECTED_TEXT ARGS...
    np=$1 text=$2; shift 2
    if [ "$np" = 0 ]; then "$bin" "$@" >out.txt 2>err.txt; else mpi "$np" "$bin" "$@" >out.txt 2>err.txt; fi
    rc=$?
    [ "$rc" = 2 ] || fail "'$*' (np $np) exited $rc, expected 2"
    # mpirun adds its own lines about the exit code; ours are the ones saying "error:"
    lines=$(grep -c 'error: ' err.txt)
    [ "$lines" = 1 ] || fail "'$*' (np $np) printed $lines error lines, expected 1: $(cat err.txt)"
    grep -q -- "$text" err.txt || fail "'$*' (np $np) error lacks '$text': $(cat err.txt)"
    [ ! -e results ] || fail "'$*' (np $np) wrote results/"
    [ ! -s out.txt ] || fail "'$*' (np $np) printed on stdout: $(cat out.txt)"
}

expect_usage 0 "unknown command 'frobnicate'" frobnicate
expect_usage 0 "unknown option '--bogus'" run --bogus
expect_usage 0 "bad value for --max-bytes: size '12Q' has an unknown suffix" run --max-bytes 12Q
expect_usage 0 "size '-4' is negative" run --min-bytes -4
expect_usage 0 "'-3' is out of range" run --trials -3
expect_usage 0 "unknown benchmark 'nosuch'" run nosuch
expect_usage 2 "bad value for --max-bytes" run --max-bytes 12Q
# duplicates are refused (each would be measured twice under one key), naming the duplicate
expect_usage 2 "run: benchmark 'h2d' is named twice" run h2d h2d
expect_usage 0 "bad value for --sizes: size '1K' (1024 bytes) is given twice" run --sizes 1K,1K
expect_usage 0 "bad value for --sizes: size '1024' (1024 bytes) is given twice" run --sizes 1K,1024
expect_usage 0 "bad value for --pairs: pair '0:1' is given twice" run p2p --pairs 0:1,0:1
expect_usage 2 "bad value for --ranks: rank count '2' is given twice" run --ranks 2,2
expect_usage 2 "unknown option '--bogus'" run --bogus
# an --out that cannot be created: under a file, and a folder without write permission
expect_usage 2 "cannot create results folder 'afile/run'" run --out afile/run
mkdir held && echo x >held/results.csv 2>/dev/null
expect_usage 1 "already holds a run" run --out held
[ "$(cat held/results.csv)" = x ] || fail "an existing run was overwritten"
rm -rf held
expect_usage 0 "unknown backend\|not one of the choices" run --backend gpu
# rank lists are checked against the job before anything is written
expect_usage 2 "run: bad value for --ranks: 8 ranks asked for, but the job has 2" run --ranks 1,8
# soak takes run's options and says its own name (it said "run:")
expect_usage 2 "error: soak: bad value for --ranks: 5 ranks asked for, but the job has 2" \
    soak --duration 8 --interval 2 --ranks 5 --backend host
expect_usage 2 "bad value for --pairs: 0:5 names a rank the job does not have" run p2p --pairs 0:5
expect_usage 0 "bad value for --pairs: '1' is not a pair A:B" run --pairs 1
expect_usage 0 "bad value for --fusion" run --fusion 4M,,8M
expect_usage 0 "bad value for --dtype" run --dtype bfloat16
expect_usage 0 "bad value for --timeout" run --timeout -1
expect_usage 0 "bad value for --timeout" run --timeout 5x
expect_usage 2 "bad value for --timeout" doctor --timeout soon
finish

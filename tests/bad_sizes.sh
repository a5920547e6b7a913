#!/bin/sh
# Sizes that no allocation can satisfy are bad input before anything is made (issue 15): for
# every benchmark that takes sizes (h2d, p2p, allreduce) and every size option (--sizes,
# --min-bytes, --max-bytes), 2^64 - 1 (whose page rounding wrapped to a tiny buffer and a heap
# overflow), 2^64 - 4096, 2^63 and its neighbours, a size over the machine's memory, 16E and a
# suffix product past 2^64 each exit 2 with one line naming the option, write nothing on
# stdout, and create no run folder (so no env.json is left `running`).
. "$(dirname "$0")/lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

mem_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
over=$(( mem_kib / 1024 / 1024 + 2 ))G  # the machine's whole GiB plus two: more than it has

# check TEXT ARGS...: `run ARGS` exits 2 with one line holding TEXT and makes no run folder.
check() {
    text=$1; shift
    rm -rf out
    expect_error "$text" "$bin" run "$@" --backend host --trials 1 --warmup 0 --iters 1 --quiet \
        --out out
    [ ! -e out ] || fail "'$*' created its run folder ($(ls out))"
}

for bench in h2d p2p allreduce; do
    for size in 18446744073709551615 18446744073709551614 18446744073709547520 \
                18446744073709547521 9223372036854775808 9223372036854775807 \
                9223372036854775809 "$over"; do
        check "bad value for --sizes: size '$size' is more than this machine's memory" \
            "$bench" --sizes "4K,$size"
    done
    check "bad value for --sizes: size '18446744073709551616' is too large" "$bench" \
        --sizes 18446744073709551616
    check "bad value for --sizes: size '16E' has an unknown suffix" "$bench" --sizes 16E
    check "bad value for --sizes: size '17179869184G' is too large" "$bench" --sizes 17179869184G
    check "bad value for --sizes: size '8589934592G' is more than this machine's memory" "$bench" \
        --sizes 8589934592G
    check "bad value for --max-bytes: size '18446744073709551615' is more than this machine's memory" \
        "$bench" --max-bytes 18446744073709551615
    check "bad value for --min-bytes: size '9223372036854775808' is more than this machine's memory" \
        "$bench" --min-bytes 9223372036854775808
done
# a size the machine has is still accepted (a real, tiny run)
rm -rf out
"$bin" run h2d --backend host --sizes 4K,1M --trials 1 --warmup 0 --iters 1 --quiet --out out \
    >out.txt 2>err.txt || fail "h2d --sizes 4K,1M failed: $(tail -c 300 err.txt)"
grep -q '"run_status":[[:space:]]*"complete"' out/env.json || fail "the good run is not complete"
finish

#!/bin/sh
# Under an address-space limit (ulimit -v) every command ends (issue 30): OpenBLAS, which starts
# a thread per CPU as it loads and joins them in exit(), made even `--version` wait forever when
# a worker could not map its buffer. It is now loaded by the host compute alone, on one thread
# under a limit that leaves its pool too little room. Each command runs under a limit that lets it start and must end on its own:
# killed by the timeout (137) is the failure. The main build only: AddressSanitizer reserves
# more address space than any such limit.
#   address_limit.sh FABRICBENCH
. "$(dirname "$0")/lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# limited KB SECONDS ARGS...: exit code of fabricbench ARGS under ulimit -v KB, killed after
# SECONDS
limited() {
    kb=$1 secs=$2; shift 2
    (ulimit -v "$kb" && exec timeout -s KILL "$secs" "$bin" "$@") >out.txt 2>err.txt
}
limited 100000 20 --version
rc=$?
[ "$rc" = 0 ] || fail "--version under ulimit -v 100000: exit $rc (137: it never ended): $(tail -c 300 err.txt)"
grep -q "fabricbench" out.txt || fail "--version under the limit printed no version: $(head -c 300 out.txt)"
limited 100000 20 list
rc=$?
[ "$rc" = 0 ] || fail "list under ulimit -v 100000: exit $rc: $(tail -c 300 err.txt)"
limited 100000 20 nccl-log nosuch.log
rc=$?
[ "$rc" = 2 ] || fail "nccl-log of a missing file under ulimit -v 100000: exit $rc, expected 2: $(tail -c 300 err.txt)"
# The host compute under a limit that leaves its pool too little room (256 MiB a thread, a
# thread per CPU): OpenBLAS on one thread, said so, the figures written; under a roomy limit (1
# GiB more than its threads take), its threads as usual, nothing said
limited 600000 120 run compute --backend host --trials 2 --warmup 1 --batch 1 --resolution 32 \
    --quiet --out tight
rc=$?
[ "$rc" = 0 ] || fail "compute under ulimit -v 600000: exit $rc: $(tail -c 300 err.txt)"
grep -q "OpenBLAS on one thread, not [0-9]*: the address-space limit (ulimit -v) leaves too little room" err.txt ||
    fail "compute under a tight limit did not say OpenBLAS runs on one thread: $(tail -c 300 err.txt)"
[ "$(grep -c '^tight,compute,step_ours,' tight/results.csv 2>/dev/null)" = 3 ] ||
    fail "compute under ulimit -v 600000 wrote no step_ours rows"
roomy=$(($(nproc) * 262144 + 1048576))
limited "$roomy" 120 run compute --backend host --trials 2 --warmup 1 --batch 1 --resolution 32 \
    --quiet --out roomy
rc=$?
[ "$rc" = 0 ] || fail "compute under ulimit -v $roomy: exit $rc: $(tail -c 300 err.txt)"
grep -q "OpenBLAS on one thread" err.txt && fail "a roomy limit ($roomy KB) put OpenBLAS on one thread"
[ "$(grep -c '^roomy,compute,step_ours,' roomy/results.csv 2>/dev/null)" = 3 ] ||
    fail "compute under ulimit -v $roomy wrote no step_ours rows"
limited 300000 120 run compute --backend host --trials 2 --warmup 1 --batch 1 --resolution 32 \
    --quiet --out small
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "compute under ulimit -v 300000: exit $rc (137: it never ended): $(tail -c 300 err.txt)"
finish

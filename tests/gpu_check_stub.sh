#!/bin/sh
# gpu-check.sh's own logic in seconds, with a stub in place of fabricbench (FB_BIN): a missing
# GPU test fails the check (it used to skip and exit 0), pipeline runs once, memfit's batch_max
# is the batch of the step that confirms it, and a step that outlives the budget is stopped by
# `timeout` and the steps after it are not run, all said in steps.tsv and summary.md.
. "$(dirname "$0")/lib.sh"
script=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/b/bench"
# The stub logs its arguments; `run ... memfit` and `run ... step` write the rows the check
# reads; FB_STUB_SLEEP makes `run h2d ...` hang.
cat >"$work/b/bench/fabricbench" <<'EOF'
#!/bin/sh
echo "$*" >>"$FB_STUB_LOG"
[ "$1" = --version ] && { echo "fabricbench stub"; exit 0; }
[ "$1 $2" = "run h2d" ] && [ -n "${FB_STUB_SLEEP-}" ] && sleep "$FB_STUB_SLEEP"
out=; prev=
for a in "$@"; do [ "$prev" = --out ] && out=$a; prev=$a; done
h=run_id,bench,case,backend,src,batch,metric,median
case " $* " in
    *" memfit "*) mkdir -p "$out" && printf '%s\nr,memfit,fp32_momentum_r64,host,,,batch_max,7\n' \
        "$h" >"$out/results.csv" ;;
    *" step "*) [ -n "${FB_STUB_NO_STEP-}" ] && exit 0
        mkdir -p "$out" && printf '%s\nr,step,step,host,,7,images_per_s,3.5\n' \
        "$h" >"$out/results.csv" ;;
esac
exit 0
EOF
chmod +x "$work/b/bench/fabricbench"
export FB_BIN=$work/b/bench/fabricbench FB_BACKEND=host MPIRUN=/nonexistent/mpirun

# 1. No GPU tests beside the binary: exit 1, each named, the rest run to the end.
FB_STUB_LOG=$work/log1 OUT=$work/out1 sh "$script" >"$work/out1.txt" 2>"$work/err1.txt"
rc=$?
[ "$rc" = 1 ] || fail "missing GPU tests: exit $rc, expected 1"
for t in gpu/test_conv_gemm gpu/test_pool_kernels test_conv_engine_cuda; do
    name=${t#gpu/}
    grep -q "^$name	-	0	missing: $work/b/tests/$t (build with CUDA)$" "$work/out1/steps.tsv" ||
        fail "$name is not missing in steps.tsv: $(cat "$work/out1/steps.tsv")"
    grep -q "gpu-check: $name is missing: $work/b/tests/$t" "$work/err1.txt" ||
        fail "$name missing is not said on stderr: $(cat "$work/err1.txt")"
    grep -qF "| self-check $name | FAILED: missing: $work/b/tests/$t" "$work/out1/summary.md" ||
        fail "summary.md does not fail $name"
done
[ "$(grep -c ' pipeline ' "$work/log1")" = 1 ] ||
    fail "pipeline ran other than once: $(cat "$work/log1")"
grep -q '^run step .*--batch 7 ' "$work/log1" || fail "the step did not run at memfit's batch 7"
# issue 18's steps: the five other collectives, replay of a shipped mix that exists, a soak
grep -q '^run all_gather reduce_scatter alltoall broadcast reduce --backend host ' "$work/log1" ||
    fail "the collectives did not run: $(cat "$work/log1")"
mix=$(sed -n 's/^run replay --mix \([^ ]*\) .*/\1/p' "$work/log1")
[ -n "$mix" ] && [ -f "$mix" ] || fail "replay's mix '$mix' is not a file: $(cat "$work/log1")"
grep -q '^soak --duration 20 --interval 5 --tolerance 10 --backend host ' "$work/log1" ||
    fail "the soak did not run (at the soak's own tolerance, 10%): $(cat "$work/log1")"
# FB_CHECK_SOAK_TOLERANCE: a whole number of percent, or exit 2 before anything is written
FB_CHECK_SOAK_TOLERANCE=1e9 OUT=$work/out-tol sh "$script" >/dev/null 2>"$work/tol.err"
rc=$?
[ "$rc" = 2 ] && grep -q "FB_CHECK_SOAK_TOLERANCE must be a whole number of percent, not '1e9'" \
    "$work/tol.err" && [ ! -e "$work/out-tol" ] ||
    fail "FB_CHECK_SOAK_TOLERANCE=1e9: exit $rc, $(cat "$work/tol.err"), out written: $(ls "$work/out-tol" 2>&1)"
# FB_CHECK_SOAK_S: the soak's duration in four intervals; out of range, exit 2 and nothing written
FB_CHECK_SOAK_S=8 FB_STUB_LOG=$work/log-soak OUT=$work/out-soak8 sh "$script" >/dev/null 2>&1
grep -q '^soak --duration 8 --interval 2 --tolerance 10 --backend host ' "$work/log-soak" ||
    fail "FB_CHECK_SOAK_S=8: $(grep '^soak' "$work/log-soak")"
for bad in 3 08 12x 10000; do
    FB_CHECK_SOAK_S=$bad OUT=$work/out-soak sh "$script" >/dev/null 2>"$work/soak.err"
    rc=$?
    [ "$rc" = 2 ] && grep -q "FB_CHECK_SOAK_S must be a whole number of seconds from 4 to 9999, not '$bad'" \
        "$work/soak.err" && [ ! -e "$work/out-soak" ] ||
        fail "FB_CHECK_SOAK_S=$bad: exit $rc, $(cat "$work/soak.err"), out written: $(ls "$work/out-soak" 2>&1)"
done
for s in collectives replay soak; do
    grep -q "^$s	0	" "$work/out1/steps.tsv" || fail "$s is not in steps.tsv: $(cat "$work/out1/steps.tsv")"
done
# On a GPU the collectives are asked for as NCCL (a missing libnccl fails the step instead of
# passing on MPI, issue 29); on host they are left to auto
grep -- '--coll nccl' "$work/log1" && fail "the host check asked for NCCL"
FB_BACKEND=cuda FB_STUB_LOG=$work/log-cuda OUT=$work/out-cuda sh "$script" >/dev/null 2>&1
for s in 'run h2d allreduce densenet_allreduce' 'run all_gather' 'run replay' 'soak'; do
    grep "^$s " "$work/log-cuda" | grep -q -- '--backend cuda --coll nccl ' ||
        fail "'$s' on cuda does not ask for NCCL: $(grep "^$s " "$work/log-cuda")"
done
want='| memfit batch | batch_max 7 (fp32_momentum_r64) |'
grep -qF "$want a step at batch 7 fits: 3.5 images/s |" "$work/out1/summary.md" ||
    fail "memfit's batch is not confirmed in summary.md"
grep -q '^p2p	-	0	not run: two processes need mpirun$' "$work/out1/steps.tsv" ||
    fail "p2p without mpirun is not said"

# A second check into the same OUT reads nothing of the first: a step that now writes no rows
# fails it, as it fails a check into a new folder (it used to read the first check's rows).
FB_STUB_NO_STEP=1 FB_STUB_LOG=$work/log-again OUT=$work/out1 sh "$script" >/dev/null 2>"$work/again.err"
rc=$?
[ "$rc" = 1 ] && grep -q "the step at memfit's batch 7 measured nothing" "$work/again.err" ||
    fail "a second check into the same OUT passed on the first one's rows: exit $rc, $(cat "$work/again.err")"
grep -qF "a step at batch 7 fits: 3.5 images/s" "$work/out1/summary.md" &&
    fail "the second check's summary.md shows the first check's step"
# a relative OUT named like an awk assignment is read as a folder
(cd "$work" && FB_STUB_LOG=$work/log-eq OUT=node=gpu01 sh "$script" </dev/null >/dev/null 2>&1)
grep -qF "$want a step at batch 7 fits: 3.5 images/s |" "$work/node=gpu01/summary.md" ||
    fail "OUT=node=gpu01: memfit's batch is not confirmed: $(cat "$work/node=gpu01/summary.md" 2>&1 | head -n 5)"
# the check takes no arguments: --help prints its usage, anything else is refused before any step
(cd "$work" && sh "$script" --help >help.out 2>&1)
rc=$?
[ "$rc" = 0 ] && grep -q '^usage: ' "$work/help.out" && [ ! -e "$work/gpu-check" ] ||
    fail "gpu-check --help: exit $rc, $(cat "$work/help.out"), ./gpu-check: $(ls "$work/gpu-check" 2>&1)"
(cd "$work" && sh "$script" --bogus >bogus.out 2>&1)
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$work/bogus.out")" = 1 ] && grep -q "takes no arguments, not '--bogus'" "$work/bogus.out" &&
    [ ! -e "$work/gpu-check" ] || fail "gpu-check --bogus: exit $rc, $(cat "$work/bogus.out")"
for bad in "FB_CHECK_BUDGET_S=8m" "MPIRUN=$work/s p/mpirun"; do
    env "$bad" OUT=$work/out-bad sh "$script" >/dev/null 2>"$work/bad.err"
    rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <"$work/bad.err")" = 1 ] && [ ! -e "$work/out-bad" ] ||
        fail "$bad: exit $rc, $(cat "$work/bad.err"), out written: $(ls "$work/out-bad" 2>&1)"
done

# 2. A run that hangs: stopped at the budget (3 s), every later step not run, exit 1, quickly.
start=$(date +%s)
FB_STUB_LOG=$work/log2 FB_STUB_SLEEP=60 FB_CHECK_BUDGET_S=3 OUT=$work/out2 sh "$script" \
    >"$work/out2.txt" 2>&1
rc=$? took=$(($(date +%s) - start))
[ "$rc" = 1 ] || fail "a hung run: exit $rc, expected 1"
[ "$took" -lt 30 ] || fail "the check took ${took}s with a 3 s budget"
grep -q '^run	124	[0-9]*	timed out after [0-9]s$' "$work/out2/steps.tsv" ||
    fail "the hung run is not timed out: $(cat "$work/out2/steps.tsv")"
grep -q '^train-fp16	-	0	not run: the 3s budget is spent$' "$work/out2/steps.tsv" ||
    fail "a step after the budget ran: $(cat "$work/out2/steps.tsv")"
[ -s "$work/out2/summary.md" ] || fail "no summary.md after a timeout"
# 3. The probes before the steps hang (a wedged driver's nvidia-smi, a python3 that never
# returns): each is cut at what is left of the budget (3 s), and the check still ends quickly
# with its steps not run. Without the probes' limits it waits the stubs' 60 s, each.
mkdir -p "$work/hang"
for p in nvidia-smi python3; do
    printf '#!/bin/sh\nexec sleep 60\n' >"$work/hang/$p"
    chmod +x "$work/hang/$p"
done
start=$(date +%s)
env -u FB_NCCL_LIBRARY PATH="$work/hang:$PATH" FB_STUB_LOG="$work/log3" FB_CHECK_BUDGET_S=3 \
    OUT="$work/out3" sh "$script" \
    >"$work/out3.txt" 2>&1
rc=$? took=$(($(date +%s) - start))
[ "$rc" = 1 ] || fail "hung probes: exit $rc, expected 1 (the steps not run)"
[ "$took" -lt 20 ] || fail "hung probes: the check took ${took}s with a 3 s budget"
grep -q '^versions	-	0	not run: the 3s budget is spent$' "$work/out3/steps.tsv" ||
    fail "hung probes: a step ran past the budget: $(cat "$work/out3/steps.tsv")"
# 4. On a GPU backend, torch's import is a probe too: one that hangs is cut at what is left of
# the budget (8 s, the steps before it failing at once here), its three steps are recorded as not
# run, and the check fails; with the budget spent first (3 s, by a run that hangs) they are not
# run either.
rm -f "$work/hang/nvidia-smi"
for b in 8 3; do
    start=$(date +%s)
    sleep=
    [ "$b" = 3 ] && sleep=60
    PATH="$work/hang:$PATH" FB_STUB_LOG="$work/log4" FB_CHECK_BUDGET_S=$b FB_BACKEND=cuda \
        FB_STUB_SLEEP=$sleep OUT="$work/out4-$b" sh "$script" >"$work/out4.txt" 2>&1
    rc=$? took=$(($(date +%s) - start))
    [ "$rc" = 1 ] || fail "torch probe, budget $b: exit $rc, expected 1"
    [ "$took" -lt 25 ] || fail "torch probe, budget $b: the check took ${took}s"
    case $b in 8) why="importing torch took past [1-8]s" ;; *) why="the 3s budget is spent" ;; esac
    for s in torch-copy torch-fp16 torch-bf16; do
        grep -q "^$s	-	0	not run: $why\$" "$work/out4-$b/steps.tsv" ||
            fail "torch probe, budget $b: $s is not 'not run: $why': $(cat "$work/out4-$b/steps.tsv")"
    done
done
finish

#!/bin/sh
# Runs the parser fuzzers of tests/fuzz for a fixed budget each and fails on any crash, sanitizer
# report, hang or memory blow-up (docs/fuzzing.md). Builds the fuzz tree first (clang with
# libFuzzer, -DFB_FUZZ=ON); exits 77 (skipped) with the reason when this machine cannot.
# usage: run.sh SOURCE_DIR FUZZ_BUILD_DIR [FABRICBENCH]
# environment: FB_FUZZ_STEP (all: build, then every fuzzer, the default; build: the build and
# the registry check only, as CTest's fixture fuzz_build; run: the fuzzers only, into a tree
# built before, as CTest's fuzz_NAME; merge: what the last runs found, minimized into the kept
# corpus tests/data/fuzz/NAME), FB_FUZZ_SECONDS (per fuzzer, default 4), FB_FUZZ_ONLY (one
# fuzzer's name), FB_FUZZ_JOBS (build jobs, default nproc). The fuzzers are the harnesses
# tests/fuzz/fuzz_NAME.c, whatever their number. Every run starts from the seeds
# (tests/fuzz/corpus/NAME) and the kept corpus, so what a run covers does not depend on its
# seconds: they are spent past it.
. "$(dirname "$0")/../lib.sh"
src=$1 fuzzdir=$2 bin=${3:-}
seconds=${FB_FUZZ_SECONDS:-4}
step=${FB_FUZZ_STEP:-all}
case $step in all | build | run | merge) ;; *) echo "run.sh: FB_FUZZ_STEP is all, build, run or merge, not '$step'" >&2; exit 2 ;; esac
fuzzers=$(cd "$src/tests/fuzz" && ls fuzz_*.c | sed 's/^fuzz_\(.*\)\.c$/\1/' | tr '\n' ' ')
if [ -n "${FB_FUZZ_ONLY:-}" ]; then
    case " $fuzzers " in *" $FB_FUZZ_ONLY "*) ;; *) echo "run.sh: no fuzzer '$FB_FUZZ_ONLY' (there are: $fuzzers)" >&2; exit 2 ;; esac
    fuzzers=$FB_FUZZ_ONLY
fi
cc=${FB_FUZZ_CC:-clang}

skip() { echo "SKIP: $*"; exit 77; }
command -v "$cc" >/dev/null 2>&1 || skip "no $cc on PATH: the fuzzers need clang with libFuzzer (apt-get install clang)"
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$probe/p.c"
"$cc" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >"$probe/cc.log" 2>&1 ||
    skip "$cc cannot link -fsanitize=fuzzer,address,undefined (libFuzzer missing?): $(head -n 3 "$probe/cc.log")"

# The fuzz tree: configured once, then rebuilt incrementally (the parsers' sources may change).
if [ "$step" != run ]; then
if [ ! -f "$fuzzdir/CMakeCache.txt" ]; then
    # Ninja where it is installed, as harness/scripts/build.sh builds
    command -v ninja >/dev/null 2>&1 && export CMAKE_GENERATOR="${CMAKE_GENERATOR:-Ninja}"
    cmake -S "$src" -B "$fuzzdir" -DFB_FUZZ=ON -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        >"$fuzzdir.configure.log" 2>&1 || { cat "$fuzzdir.configure.log"; fail "configuring the fuzz tree"; finish; }
fi
cmake --build "$fuzzdir" -j "${FB_FUZZ_JOBS:-$(nproc)}" >"$fuzzdir.build.log" 2>&1 ||
    { tail -n 40 "$fuzzdir.build.log"; fail "building the fuzz tree"; finish; }

# The command-line fuzzer's registry stub must know the benchmarks the real one has.
if [ -n "$bin" ] && [ -x "$bin" ]; then
    real=$("$bin" list 2>/dev/null | sed -n '/^benchmarks:/,/^[a-z]/{s/^  \([a-z0-9_]*\) .*/\1/p}' | sort | tr '\n' ' ')
    stub=$(sed -n '/names\[\] = {/,/};/p' "$src/tests/fuzz/stub_registry.c" | grep -o '"[a-z0-9_]*"' | tr -d '"' | sort | tr '\n' ' ')
    [ "$real" = "$stub" ] || fail "tests/fuzz/stub_registry.c names '$stub', fabricbench list names '$real'"
fi
fi
[ "$step" = build ] && { echo "fuzz tree built: $fuzzdir (fuzzers: $fuzzers)"; finish; }

kept=$src/tests/data/fuzz
work=$fuzzdir/runs
# merge: each fuzzer's last scratch folder into the kept corpus, minimized by libFuzzer (-merge=1
# keeps an input only when it adds coverage to what the folder holds), the seeds' copies left
# out (they are read from tests/fuzz/corpus every run).
if [ "$step" = merge ]; then
    for f in $fuzzers; do
        exe=$fuzzdir/tests/fuzz/fb_fuzz_$f
        [ -x "$exe" ] && [ -d "$work/$f" ] || { fail "$f: no fuzzer or no scratch folder $work/$f to merge"; continue; }
        mkdir -p "$kept/$f"
        "$exe" -merge=1 "$kept/$f" "$work/$f" >"$work/$f.merge.log" 2>&1 ||
            { tail -n 5 "$work/$f.merge.log"; fail "$f: merging into $kept/$f"; continue; }
        for seed in "$src/tests/fuzz/corpus/$f"/*; do
            rm -f "$kept/$f/$(sha1sum <"$seed" | cut -c1-40)"
        done
        echo "$f: $(ls "$kept/$f" | wc -l) inputs kept in $kept/$f"
    done
    finish
fi

# ASan keeps freed memory in a 256 MB quarantine by default, which the RSS limit would count;
# 64 MB leaves the limit to measure the parsers.
export ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=64}"
# Each fuzzer's scratch folder and failed inputs are its own: fuzzers run side by side.
mkdir -p "$work"
stats=$fuzzdir/fuzz-stats.txt
[ -n "${FB_FUZZ_ONLY:-}" ] && stats=$fuzzdir/fuzz-stats-$FB_FUZZ_ONLY.txt
printf '%-10s %10s %8s %9s %6s %8s %11s %11s  %s\n' fuzzer execs seconds execs/s new rss_mb \
    cov/ft_start cov/ft_end verdict >"$stats"
total=0
for f in $fuzzers; do
    exe=$fuzzdir/tests/fuzz/fb_fuzz_$f
    case $f in nccl_*) dict=nccl ;; *) dict=$f ;; esac
    [ -x "$exe" ] || { fail "$exe was not built"; continue; }
    rm -rf "$work/$f" "$work/$f"-*
    mkdir -p "$work/$f"
    log=$work/$f.log
    # New inputs go to the scratch folder; the seeds (tests/fuzz/corpus, regression inputs
    # included) and the kept corpus (tests/data/fuzz) are read first, every run.
    # -error_exitcode=1: libFuzzer's default of 77 would read as "skipped" to CTest.
    "$exe" -max_total_time="$seconds" -rss_limit_mb=512 -malloc_limit_mb=512 -timeout=5 \
        -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
        -dict="$src/tests/fuzz/dict/$dict.dict" -artifact_prefix="$work/$f-" \
        "$work/$f" "$src/tests/fuzz/corpus/$f" "$kept/$f" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -n 1)
    new=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -n 1)
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
    verdict=ok
    if [ "$rc" != 0 ] || grep -q 'ERROR: \(libFuzzer\|AddressSanitizer\|LeakSanitizer\|UndefinedBehaviorSanitizer\)\|fuzz check failed\|runtime error:' "$log"; then
        verdict=FAILED
        fail "fuzzer $f (exit $rc): $(grep -m1 'ERROR:\|fuzz check failed\|runtime error:' "$log")"
        echo "---- $f: the end of its log ($log) ----"
        tail -n 40 "$log"
        for a in "$work/$f"-*; do
            [ -e "$a" ] && echo "input that failed: $a (add it to tests/fuzz/corpus/$f/ once fixed)"
        done
    fi
    # coverage once the corpus was read, and at the end
    cov0=$(sed -n 's/.*INITED cov: \([0-9]*\) ft: \([0-9]*\).*/\1\/\2/p' "$log" | tail -n 1)
    cov1=$(sed -n 's/.*DONE   cov: \([0-9]*\) ft: \([0-9]*\).*/\1\/\2/p' "$log" | tail -n 1)
    rate=0
    [ -n "$secs" ] && [ "$secs" -gt 0 ] && rate=$((${execs:-0} / secs))
    total=$((total + ${execs:-0}))
    printf '%-10s %10s %8s %9s %6s %8s %11s %11s  %s\n' "$f" "${execs:-?}" "${secs:-?}" "$rate" \
        "${new:-?}" "${rss:-?}" "${cov0:-?}" "${cov1:-?}" "$verdict" >>"$stats"
done
echo "fuzz budget ${seconds}s per fuzzer, limits: rss 512 MB, malloc 512 MB, 5 s per input"
cat "$stats"
echo "total executions: $total (table in $stats)"
finish

#!/bin/sh
# The README's second command: installs what is missing (setup-debian.sh --tests: the test tools
# too), builds, and runs every test (CTest) in one parallel schedule, the sanitizer build's suite
# included (docs/testing.md). .ci/run calls this.
#   sh harness/scripts/test.sh            everything, builds included (measured 2026-12-06/07 on 2-core VMs:
#                                         470-506 s on the newer kind, 787-1,042 s on the older)
#   sh harness/scripts/test.sh quick      the inner loop: ctest -L quick
#   sh harness/scripts/test.sh ARGS...    ARGS go to ctest (e.g. -L unit, -R cluster_)
# The sanitizer build (build-asan, or $FB_ASAN_BUILD_DIR; docs/sanitizers.md) is host only,
# with AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer: it is configured here and
# built by the test sanitizer_build while other tests run; its unit tests, every benchmark under
# mpirun -np 2 and fault injection then run as asan.NAME. FB_SANITIZE_TESTS=0 leaves it out.
# FB_TEST_JOBS sets ctest's -j (default: 12 x the CPUs, where the tests' PROCESSORS count eighths
# of a CPU measured with their polling, so 1.5x the machine; with RUN_SERIAL and RESOURCE_LOCK
# they keep what a test measures from being crowded).
# The JUnit report is build/junit.xml; the ten slowest tests are printed at the end.
set -eu
top=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd)
build=${FB_BUILD_DIR:-$top/build}
asan=${FB_ASAN_BUILD_DIR:-$top/build-asan}
[ "${1:-}" = quick ] && { shift; set -- -L quick "$@"; }
sh "$top/harness/scripts/setup-debian.sh" --tests
tree=
if [ "${FB_SANITIZE_TESTS:-1}" != 0 ]; then
    tree=$asan
    # configured beside the main build (a few seconds of one CPU); built later, as a test
    FB_CONFIGURE_ONLY=1 FB_BUILD_DIR=$asan sh "$top/harness/scripts/build.sh" -DFB_WITH_CUDA=OFF \
        -DFB_SANITIZE=ON >/dev/null &
    configuring=$!
fi
sh "$top/harness/scripts/build.sh" -DFB_SANITIZER_TREE="$tree"
[ -z "$tree" ] || wait "$configuring" || { echo "configuring $asan failed" >&2; exit 1; }
# Open MPI refuses to run as root unless told; CI and the GPU machines run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
jobs=${FB_TEST_JOBS:-$(($(nproc) * 12))}
junit=$build/junit.xml
rm -f "$junit"
rc=0
t0=$(date +%s)
ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 900 --output-junit "$junit" \
    "$@" || rc=$?
echo "ctest: $(($(date +%s) - t0)) s at -j $jobs; JUnit report: $junit"
if [ -s "$junit" ]; then
    echo "the ten slowest tests (seconds):"
    sed -n 's/.*<testcase name="\([^"]*\)".* time="\([0-9.]*\)".*/\2 \1/p' "$junit" |
        sort -rn | head -n 10 | awk '{ printf "  %8.1f  %s\n", $1, $2 }'
fi
exit "$rc"

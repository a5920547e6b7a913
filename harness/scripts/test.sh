#!/bin/sh
# The README's second command: installs what is missing, builds, and runs every test (CTest).
# .ci/run calls this. Extra arguments go to ctest (e.g. -L unit).
# Then the sanitizer build (build-asan, or $FB_ASAN_BUILD_DIR; docs/sanitizers.md): host only,
# AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer, running the unit tests, every
# benchmark under mpirun -np 2, and fault injection. FB_SANITIZE_TESTS=0 leaves it out.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
sh "$top/harness/scripts/setup-debian.sh"
sh "$top/harness/scripts/build.sh"
# Open MPI refuses to run as root unless told; CI and the GPU machines run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rc=0
(cd "${FB_BUILD_DIR:-$top/build}" && ctest --output-on-failure --timeout 900 "$@") || rc=$?
if [ "${FB_SANITIZE_TESTS:-1}" != 0 ]; then
    asan=${FB_ASAN_BUILD_DIR:-$top/build-asan}
    FB_BUILD_DIR=$asan sh "$top/harness/scripts/build.sh" -DFB_WITH_CUDA=OFF -DFB_SANITIZE=ON
    # schema_documents_columns is a longer run of every benchmark than sanitize_host_suite_np2
    # (calibrated trials) that checks documentation, not memory: the main suite runs it.
    # compare_host asks two timed runs of one configuration to agree within their noise, which
    # ASan's allocator makes 20% wider: the main suite runs it (test_compare and the results
    # fuzzer cover compare's code under the sanitizers). packaging checks the .deb's Depends
    # against the libraries the binary links, which under the sanitizers include libasan.
    (cd "$asan" && ctest --output-on-failure --timeout 900 -L 'unit|sanitize|fault' \
        -E '^(schema_documents_columns|compare_host|packaging)$') || rc=$?
fi
exit "$rc"

#!/bin/sh
# Configures and builds fabricbench into build/ (or $FB_BUILD_DIR). Extra arguments go to cmake.
# FB_CONFIGURE_ONLY=1 configures and stops (test.sh configures the sanitizer tree this way; the
# test sanitizer_build builds it).
set -eu
top=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd)
build=${FB_BUILD_DIR:-$top/build}
[ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null 2>&1 && PATH=$PATH:/usr/local/cuda/bin
# Ninja for a new tree (an existing one keeps its generator): the same build in 13% less CPU than
# make's recursion (64 s and 126 CPU-s against 74 s and 145 on 2 cores, docs/testing.md)
command -v ninja >/dev/null 2>&1 && export CMAKE_GENERATOR="${CMAKE_GENERATOR:-Ninja}"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log" >&2; exit 1; }
grep -A6 'fabricbench configuration' "$build.configure.log" | sed 's/^-- //'
[ "${FB_CONFIGURE_ONLY:-0}" = 1 ] && { echo "configured $build"; exit 0; }
cmake --build "$build" -j "$(nproc)" >"$build.build.log" 2>&1 ||
    { tail -n 40 "$build.build.log" >&2; exit 1; }
echo "built $build/bench/fabricbench"

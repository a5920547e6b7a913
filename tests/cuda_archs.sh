#!/bin/sh
# The CUDA architectures the build used are the ones its cache keeps, so a second configure (the
# README's test command after its build command) builds the same: CMake used to cache nvcc's own
# default (sm_75 for CUDA 13) under a normal variable holding ours, and the second configure built
# sm_75, where every bf16 tensor-core kernel is a trap.
. "$(dirname "$0")/lib.sh"
cache=$1 used=$2 # used: the list with commas
[ -n "$used" ] || { echo "built without CUDA: nothing to check" >&2; exit 77; }
cached=$(sed -n "s/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p" "$cache" | tr ";" ",")
[ -n "$cached" ] || fail "no CMAKE_CUDA_ARCHITECTURES in $cache"
[ "$cached" = "$used" ] ||
    fail "the cache keeps CMAKE_CUDA_ARCHITECTURES '$cached' but this build used '$used'"
finish

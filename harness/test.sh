#!/bin/sh
# The README's second command: installs what is missing, builds, and runs every test (CTest).
# .ci/run calls this. Extra arguments go to ctest (e.g. -L unit).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
sh "$top/harness/setup-debian.sh"
sh "$top/harness/build.sh"
# Open MPI refuses to run as root unless told; CI and the GPU machines run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "${FB_BUILD_DIR:-$top/build}"
ctest --output-on-failure --timeout 900 "$@"

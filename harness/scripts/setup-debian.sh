#!/bin/sh
# Installs what fabricbench needs from Debian's packages, and only what is missing.
# The CUDA toolkit and NCCL are not Debian packages: when nvcc is on PATH (or CUDACXX is set)
# the build finds them, otherwise it builds the host backend alone.
set -eu
# usage: setup-debian.sh [--tests]
# What building and running fabricbench takes (quickstart.sh, the README's first command);
# help2man writes the installed man page.
packages="build-essential cmake ninja-build pkg-config binutils openmpi-bin libopenmpi-dev libhwloc-dev
libibverbs-dev libcjson-dev libinih-dev gnuplot-nox libpng-dev libjpeg62-turbo-dev libopenblas-dev
help2man"
# --tests (test.sh, the README's second command) adds what only the tests use: clang and
# libclang-rt-14-dev (libFuzzer) for the fuzz tests, iproute2 (ip, tc) for the two-host cluster
# tests, slurm-wlm and munge for the Slurm tests (their own daemons, started and stopped by
# tests/cluster/slurm_lib.sh), prometheus for its promtool and python3-prometheus-client for its
# OpenMetrics parser (locate's metrics file is checked with both), valgrind for the leak test
# (the sanitizers' runtimes come with gcc).
case "${1:-}" in
--tests) packages="$packages clang libclang-rt-14-dev iproute2 valgrind slurm-wlm munge prometheus
python3-prometheus-client" ;;
"") ;;
*) echo "usage: setup-debian.sh [--tests]" >&2; exit 2 ;;
esac
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    [ "$(id -u)" = 0 ] || { echo "run as root (or install:$missing)" >&2; exit 1; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # The services these packages bring (prometheus, munge, slurmctld, slurmd) are not started:
    # the tests start daemons of their own. policy-rc.d (invoke-rc.d's and
    # deb-systemd-invoke's rule) says so for this install alone, unless the machine has its own.
    policy=
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\n# fabricbench setup-debian.sh: no service starts while it installs\nexit 101\n' >"$policy"
        chmod 755 "$policy"
        trap 'rm -f "$policy"' EXIT
        # (dash runs no EXIT trap when a signal ends it: exit on one, so the file goes too)
        trap 'exit 130' INT TERM
    fi
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
    [ -z "$policy" ] || rm -f "$policy"
fi

#!/bin/sh
# The binary links the CUDA runtime statically and never libcuda, so it starts on a machine
# without an NVIDIA driver (like this one) and says that it sees no GPU. On a machine with a
# driver the same checks run with the driver hidden: as root, in a private mount namespace where
# every libcuda.so* the loader could find is /dev/null (skipped, 77, where that cannot be made).
. "$(dirname "$0")/lib.sh"
bin=$1 have_cuda=$2 have_nccl=$3 nccl_lib=$4 # nccl_lib: a libnccl to load, "" when none found
fake_cuda=${5:-} # tests/fake_cuda's libcuda.so.1, a stand-in driver: an old one is named so
# copied before any hiding (a hidden file reads as /dev/null), to a folder the loader does not
# search unless told
if [ -n "$fake_cuda" ] && [ -z "${FB_FAKE_CUDA_COPY:-}" ]; then
    FB_FAKE_CUDA_COPY=$(mktemp -d)
    cp "$fake_cuda" "$FB_FAKE_CUDA_COPY/libcuda.so.1" || fail "cannot copy $fake_cuda"
    export FB_FAKE_CUDA_COPY
fi
# out.txt and err.txt in a folder of this run's own: two of these tests run side by side
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
work=$(mktemp -d)
trap 'rm -rf "$work" ${FB_FAKE_CUDA_COPY:+"$FB_FAKE_CUDA_COPY"}' EXIT
cd "$work" || exit 1
# libcuda_files: every libcuda.so* file the dynamic loader could open (its cache, the default
# folders, LD_LIBRARY_PATH), links resolved
libcuda_files() {
    { ldconfig -p 2>/dev/null | awk '$1 ~ /^libcuda\.so/ { print $NF }'
      for d in $(echo "${LD_LIBRARY_PATH:-}" | tr ':' ' ') /lib /usr/lib /lib64 /usr/lib64 \
          /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/local/cuda/compat; do
          ls "$d"/libcuda.so* 2>/dev/null
      done; } | while read -r f; do readlink -f "$f"; echo "$f"; done | sort -u
}
# FB_REQUIRE_HIDDEN=1 (the test with a stand-in driver on the loader's path): a driver must be
# found, and hidden
drivers=
[ -n "${FB_DRIVER_HIDDEN:-}" ] || drivers=$(libcuda_files)
if [ -n "${FB_REQUIRE_HIDDEN:-}" ] && [ -z "${FB_DRIVER_HIDDEN:-}" ] && [ -z "$drivers" ]; then
    fail "FB_REQUIRE_HIDDEN: no libcuda.so* found to hide (LD_LIBRARY_PATH '${LD_LIBRARY_PATH:-}')"
    finish
fi
if [ -n "$drivers" ]; then
    if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
        echo "a GPU driver is present and cannot be hidden here (root and unshare -m needed)" >&2
        exit 77
    fi
    list=$work/drivers
    echo "$drivers" >"$list"
    echo "hiding the driver: $(tr '\n' ' ' <"$list")"
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare -m sh -c 'while read -r f; do [ -f "$f" ] && mount --bind /dev/null "$f"; done <"$1"
        shift; FB_DRIVER_HIDDEN=1 exec sh "$@"' sh "$list" "$self" "$@"
    exit $?
fi
needed=$(readelf -d "$bin" | awk '/NEEDED/ { gsub(/[][]/, "", $5); print $5 }')
[ -n "$needed" ] || fail "readelf found no NEEDED entries in $bin"
echo "$needed" | grep -q '^libcuda\.so' && fail "links libcuda: $needed"
echo "$needed" | grep -q '^libcudart\.so' && fail "links the CUDA runtime dynamically: $needed"
echo "$needed" | grep -q '^libmpi\.so' || fail "does not link MPI: $needed"
# NCCL is loaded at run time (harness/coll/nccl_lib.c), never linked: the binary starts without
# it, and FB_NCCL_LIBRARY picks which one.
echo "$needed" | grep -q '^libnccl\.so' && fail "links libnccl: $needed"
if [ "$have_nccl" = ON ]; then
    FB_NCCL_LIBRARY=/nonexistent/libnccl.so.2 "$bin" list >out.txt 2>&1 ||
        fail "list failed without NCCL: $(cat out.txt)"
    grep -q "nccl  built, not usable: cannot load NCCL '/nonexistent/libnccl.so.2': .*(set FB_NCCL_LIBRARY)" out.txt ||
        fail "list does not say NCCL is missing: $(cat out.txt)"
    # doctor agrees with list: built, not loaded (it once said "not built")
    FB_NCCL_LIBRARY=/nonexistent/libnccl.so.2 mpi 1 "$bin" doctor >out.txt 2>&1
    grep -Eq '^CUDA +driver .*; NCCL not loaded; hwloc ' out.txt ||
        fail "doctor does not say NCCL was built and not loaded: $(grep -E '^CUDA|NCCL' out.txt)"
    # asking for NCCL without it: one line naming the library, exit 2, nothing measured
    out=$(mktemp -u)
    FB_NCCL_LIBRARY=/nonexistent/libnccl.so.2 mpi 1 "$bin" run allreduce --backend host \
        --coll nccl --out "$out" >out.txt 2>err.txt
    rc=$?
    [ "$rc" = 2 ] || fail "--coll nccl without NCCL exited $rc, expected 2: $(cat err.txt)"
    grep -q "collectives 'nccl' cannot run here: cannot load NCCL '/nonexistent/libnccl.so.2'" err.txt ||
        fail "--coll nccl without NCCL does not say why: $(cat err.txt)"
    [ ! -e "$out/results.csv" ] || fail "--coll nccl without NCCL wrote results"
    if [ -n "$nccl_lib" ]; then
        FB_NCCL_LIBRARY=$nccl_lib "$bin" list >out.txt 2>&1 || fail "list failed: $(cat out.txt)"
        grep -Eq "nccl  built, NCCL 2\.[0-9]+\.[0-9]+ loaded from $nccl_lib\$" out.txt ||
            fail "list does not name the NCCL loaded from $nccl_lib: $(cat out.txt)"
        # env.json records the library a run loaded and its version, with --coll mpi too
        FB_NCCL_LIBRARY=$nccl_lib mpi 1 "$bin" run allreduce --backend host --coll mpi \
            --max-bytes 8 --trials 1 --warmup 0 --trial-ms 1 --quiet --out "$out" >out.txt 2>err.txt ||
            fail "run --coll mpi failed: $(cat err.txt)"
        tr -d ' \t\n' <"$out/env.json" | grep -Eq "\"nccl\":\{\"version_code\":2[0-9]{4},\"version\":\"2\.[0-9]+\.[0-9]+\",\"library\":\"$nccl_lib\"\}" ||
            fail "env.json does not record NCCL loaded from $nccl_lib: $(grep -A4 '"nccl"' "$out/env.json")"
        # docs/nccl-versions.md quotes the object on one line, loaded from /opt/nccl-2.28.9
        sed -n '/^[[:space:]]*"nccl":/,/}/p' "$out/env.json" | tr -s ' \t\n' '   ' |
            sed -e 's/^ //' -e 's/ *$//' -e 's/},$/}/' -e 's/{ */{ /' -e "s|$nccl_lib|/opt/nccl-2.28.9/lib/libnccl.so.2|" >nccl.json
        echo >>nccl.json
        doc_example docs/nccl-versions.md env-nccl nccl.json
        rm -rf "$out"
    fi
fi
if [ "$have_cuda" != ON ]; then
    echo "built without CUDA: only the NEEDED checks apply" >&2
    [ "$fails" -eq 0 ] && exit 77
    finish
fi
nm "$bin" | grep -q 'cudaGetDeviceCount' || fail "the CUDA runtime is not linked in statically"
"$bin" --version >out.txt 2>&1 || fail "--version failed without a driver: $(cat out.txt)"
grep -q "cuda  built, CUDA runtime 1[0-9]\.[0-9]* (static); 0 GPU(s) visible: no NVIDIA driver found" out.txt ||
    fail "--version does not report the missing driver: $(cat out.txt)"
# auto picks host and says why; asking for cuda is refused with the reason, exit 1
mpi 1 "$bin" run --backend cuda --out "$(mktemp -u)" >out.txt 2>err.txt
rc=$?
[ "$rc" = 1 ] || fail "run --backend cuda exited $rc without a GPU, expected 1"
grep -q "backend 'cuda' asked for, but no NVIDIA driver found" err.txt || fail "no reason given: $(cat err.txt)"
# A driver too old for the runtime is not "no driver" (issue 29): the stand-in driver
# (tests/fake_cuda, a copy the hiding above did not cover) says CUDA 12.2
if [ -n "$fake_cuda" ]; then
    old=$FB_FAKE_CUDA_COPY
    FAKE_CUDA_DRIVER_VERSION=12020 LD_LIBRARY_PATH=$old "$bin" --version >out.txt 2>&1 ||
        fail "--version failed with an old driver: $(cat out.txt)"
    grep -q "0 GPU(s) visible: the NVIDIA driver supports CUDA 12\.2, older than this build's CUDA 1[0-9]\.[0-9]* runtime: update the driver (cudaErrorInsufficientDriver)" out.txt ||
        fail "--version does not say the driver is too old: $(grep 'cuda  ' out.txt)"
    FAKE_CUDA_DRIVER_VERSION=12020 LD_LIBRARY_PATH=$old mpi 1 "$bin" run --backend cuda \
        --out "$(mktemp -u)" >out.txt 2>err.txt
    grep -q "backend 'cuda' asked for, but the NVIDIA driver supports CUDA 12\.2, older than" err.txt ||
        fail "run --backend cuda with an old driver does not say so: $(cat err.txt)"
fi
rm -f out.txt err.txt
finish

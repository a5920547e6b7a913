#!/bin/sh
# The binary links the CUDA runtime statically and never libcuda, so it starts on a machine
# without an NVIDIA driver (like this one) and says that it sees no GPU.
. "$(dirname "$0")/lib.sh"
bin=$1 have_cuda=$2 have_nccl=$3
needed=$(readelf -d "$bin" | awk '/NEEDED/ { gsub(/[][]/, "", $5); print $5 }')
[ -n "$needed" ] || fail "readelf found no NEEDED entries in $bin"
echo "$needed" | grep -q '^libcuda\.so' && fail "links libcuda: $needed"
echo "$needed" | grep -q '^libcudart\.so' && fail "links the CUDA runtime dynamically: $needed"
echo "$needed" | grep -q '^libmpi\.so' || fail "does not link MPI: $needed"
if [ "$have_nccl" = ON ]; then
    echo "$needed" | grep -q '^libnccl\.so' || fail "built with NCCL but libnccl is not NEEDED"
fi
if [ "$have_cuda" != ON ]; then
    echo "built without CUDA: only the NEEDED checks apply" >&2
    [ "$fails" -eq 0 ] && exit 77
    finish
fi
nm "$bin" | grep -q 'cudaGetDeviceCount' || fail "the CUDA runtime is not linked in statically"
if nvidia-smi >/dev/null 2>&1; then
    echo "a GPU driver is present: the no-driver start cannot be checked here" >&2
    [ "$fails" -eq 0 ] && exit 77
    finish
fi
"$bin" --version >out.txt 2>&1 || fail "--version failed without a driver: $(cat out.txt)"
grep -q "cuda  built, CUDA runtime 1[0-9]\.[0-9]* (static); 0 GPU(s) visible: no NVIDIA driver found" out.txt ||
    fail "--version does not report the missing driver: $(cat out.txt)"
# auto picks host and says why; asking for cuda is refused with the reason, exit 1
mpi 1 "$bin" run --backend cuda --out "$(mktemp -u)" >out.txt 2>err.txt
rc=$?
[ "$rc" = 1 ] || fail "run --backend cuda exited $rc without a GPU, expected 1"
grep -q "backend 'cuda' asked for, but no NVIDIA driver found" err.txt || fail "no reason given: $(cat err.txt)"
rm -f out.txt err.txt
finish

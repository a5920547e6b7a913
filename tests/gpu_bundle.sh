#!/bin/sh
# The bare-GPU-host bundle is complete: gpu-bundle.sh packs this build under 64 MiB, then, in a
# private mount namespace where the system's Open MPI, PMIx, hwloc, inih, OpenBLAS, cJSON, libpng
# and libjpeg are /dev/null, FB_BACKEND=host sh DIR/gpu-check.sh runs to the end. Built without
# CUDA, the check must fail naming the missing GPU tests, and every other step must pass.
# Root only (a mount namespace); skipped (77) with the reason elsewhere.
. "$(dirname "$0")/lib.sh"
top=$1 build=$2 have_cuda=$3
[ "$(id -u)" = 0 ] || { echo "needs root for a private mount namespace" >&2; exit 77; }
unshare -m true 2>/dev/null || { echo "unshare -m is refused here" >&2; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Bad use: exit 2 with the reason, nothing written.
sh "$top/harness/scripts/gpu-bundle.sh" 2>"$work/usage.txt"
rc=$?
[ "$rc" = 2 ] && grep -q "usage: sh harness/scripts/gpu-bundle.sh DIR" "$work/usage.txt" ||
    fail "no DIR: exit $rc, $(cat "$work/usage.txt")"
FB_BUILD=$work/nowhere sh "$top/harness/scripts/gpu-bundle.sh" "$work/b0" 2>"$work/usage.txt"
rc=$?
[ "$rc" = 2 ] && grep -q "no binary at '$work/nowhere/bench/fabricbench'" "$work/usage.txt" ||
    fail "no build: exit $rc, $(cat "$work/usage.txt")"
[ ! -e "$work/b0" ] || fail "a failed bundle left '$work/b0' behind"
# Fast compression here: the bundle's contents are what is tested, not xz's best ratio.
XZ_OPT=-0 FB_BUILD=$build sh "$top/harness/scripts/gpu-bundle.sh" "$work/bundle" \
    >"$work/bundle.txt" 2>&1
rc=$?
cat "$work/bundle.txt"
[ "$rc" = 0 ] || { fail "gpu-bundle.sh exited $rc"; finish; }
size=$(du -sb "$work/bundle" | cut -f1)
[ "$size" -lt $((64 * 1024 * 1024)) ] || fail "the bundle is $size bytes, over 64 MiB"
grep -q "^gpu-bundle: $work/bundle: [0-9.]* MiB (limit 64 MiB" "$work/bundle.txt" ||
    fail "gpu-bundle.sh did not print the bundle's size"
[ -f "$work/bundle/gpu-check.sh" ] && [ -f "$work/bundle/fabricbench-bundle.tar.xz" ] ||
    fail "the bundle lacks gpu-check.sh or its archive: $(ls "$work/bundle")"
if [ "$have_cuda" != ON ]; then
    grep -q "warning: '.*tests/gpu/test_conv_gemm' is not built" "$work/bundle.txt" ||
        fail "gpu-bundle.sh did not warn that the GPU tests are not built"
fi
# A second bundle into the same folder is refused (exit 2): nothing is overwritten.
FB_BUILD=$build sh "$top/harness/scripts/gpu-bundle.sh" "$work/bundle" 2>"$work/again.txt"
rc=$?
[ "$rc" = 2 ] || fail "a bundle into a folder in use exited $rc, expected 2"
grep -q "exists and is not empty" "$work/again.txt" ||
    fail "no reason given: $(cat "$work/again.txt")"

# What the GPU host lacks, hidden: each library file bound over by /dev/null; Open MPI's, PMIx's
# and hwloc's plugin folders and help files covered by empty folders; mpirun's program likewise.
lib=/usr/lib/x86_64-linux-gnu
for pat in 'libmpi*' 'libopen-*' 'libpmix*' 'libhwloc*' 'libinih*' 'libopenblas*' 'libcjson*' \
    'libpng*' 'libjpeg*' 'libevent*' 'libgfortran*'; do
    find "$lib" -name "$pat" \( -type f -o -type l \) -name '*.so*' -exec readlink -f {} \;
done | sort -u >"$work/hide.txt"
grep -q libopenblas "$work/hide.txt" && grep -q libmpi "$work/hide.txt" ||
    fail "the system's libraries to hide were not found: $(cat "$work/hide.txt")"
mkdir -p "$work/tmp" "$work/empty"
cat >"$work/hidden.sh" <<EOF
set -e
while read -r f; do mount --bind /dev/null "\$f"; done <"$work/hide.txt"
for d in $lib/openmpi $lib/pmix2 $lib/hwloc /usr/share/openmpi /usr/share/pmix \
    /etc/openmpi; do
    if [ -d "\$d" ]; then mount --bind "$work/empty" "\$d"; fi
done
if [ -e /usr/bin/orterun ]; then mount --bind /dev/null /usr/bin/orterun; fi
# the proof that the hiding works: the build's own binary no longer starts
if "$build/bench/fabricbench" --version >/dev/null 2>&1; then echo "HIDING FAILED"; exit 9; fi
set +e
# The soak's figure is a CPU's copy shared with the other tests: one run's interval read degraded
# against a baseline taken under other load, and at a limit of 4x its baseline a clean-copy run
# still read one degraded (2026-12-07: this test runs early, beside the two builds). This test is
# about the bundle running every step, not about the soak's rule (soak_health and
# cluster_soak_rate judge that), so its tolerance is 10000% (as in cluster_slurm's soak), not
# the 10% a GPU gets, and the soak lasts 4 s (intervals of 1 s), not 20: the step is run and
# judged the same way.
FB_CHECK_SOAK_S=4 FB_CHECK_SOAK_TOLERANCE=10000 FB_BACKEND=host OUT="$work/out" TMPDIR="$work/tmp" sh "$work/bundle/gpu-check.sh" \
    >"$work/check.txt" 2>"$work/check.err"
echo "check exit \$?"
EOF
unshare -m sh "$work/hidden.sh" >"$work/ns.txt" 2>&1
cat "$work/ns.txt"
grep -q "HIDING FAILED" "$work/ns.txt" && fail "the system's libraries were not hidden"
rc=$(sed -n 's/^check exit //p' "$work/ns.txt")
steps=$work/out/steps.tsv
[ -s "$steps" ] || { fail "no steps.tsv: $(cat "$work/check.err")"; finish; }
cat "$steps"
# Every step ran to its end and passed; without CUDA the GPU tests are missing and the check fails.
for s in versions doctor run p2p pipeline train-fp16 train-bf16 memfit fit; do
    awk -F'\t' -v s="$s" '$1 == s && $4 == "ok" { ok = 1 } END { exit !ok }' "$steps" ||
        fail "step $s did not pass: $(grep "^$s	" "$steps"):" \
            "$(tail -n 5 "$work/out/$s.txt" 2>/dev/null)"
done
if [ "$have_cuda" = ON ]; then
    [ "$rc" = 0 ] || fail "the check exited $rc, expected 0: $(cat "$work/check.err")" \
        "$(awk -F'\t' '$4 != "ok" && $2 != 77 { print $1 }' "$steps" | while read -r s; do
               echo "--- $s.txt:"; tail -n 5 "$work/out/$s.txt" 2>/dev/null; done)"
else
    [ "$rc" = 1 ] || fail "the check exited $rc without the GPU tests, expected 1"
    for t in test_conv_gemm test_pool_kernels; do
        grep -q "^$t	-	0	missing: .*tests/gpu/$t (build with CUDA)" "$steps" ||
            fail "$t is not reported missing in steps.tsv"
        grep -q "gpu-check: $t is missing" "$work/check.err" ||
            fail "$t missing is not said on stderr"
    done
fi
grep -q "^fabricbench " "$work/out/versions.txt" ||
    fail "versions.txt: $(cat "$work/out/versions.txt")"
grep -q '^[^,]*,h2d,pinned_h2d,host,' "$work/out/run-results.csv" ||
    fail "no h2d rows in run-results.csv"
grep -qF '| not measured: host backend |' "$work/out/summary.md" ||
    fail "summary.md lacks the GPU rows 'not measured: host backend'"
grep -q '^| memfit batch | batch_max [0-9]* .*| a step at batch [0-9]* fits' \
    "$work/out/summary.md" ||
    fail "memfit's batch is not confirmed in summary.md"
# (Open MPI keeps its session folders in TMPDIR too: only the bundle's own folder counts.)
left=$(ls "$work/tmp" | grep '^fb-gpu-check\.')
[ -z "$left" ] || fail "the unpacked bundle was left behind: $left"
finish

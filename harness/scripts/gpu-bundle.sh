#!/bin/sh
# Packs fabricbench for a bare GPU host (docs/gpu-check.md): the built binary and GPU tests, a
# relocatable Open MPI from this Debian machine's packages, every shared library they need but
# the C library, the NVIDIA driver and NCCL, and the check's scripts, stripped into one archive
# DIR/fabricbench-bundle.tar.xz beside DIR/gpu-check.sh, which unpacks and runs it.
# Usage: sh harness/scripts/gpu-bundle.sh DIR   (FB_BUILD: the build folder, default build/;
# XZ_OPT: xz's options, default -6). Fails when DIR would pass 64 MiB.
set -eu
top=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd)
build=${FB_BUILD:-$top/build}
limit_bytes=$((64 * 1024 * 1024))
# Open MPI's runtime: programs, libraries, plugins (MCA components), help files.
ompi_pkgs="libopenmpi3 openmpi-bin openmpi-common libpmix2"
die() { echo "gpu-bundle: $*" >&2; exit "${rc:-1}"; }
[ $# = 1 ] && [ -n "$1" ] || { rc=2 die "usage: sh harness/scripts/gpu-bundle.sh DIR"; }
case $1 in -*) rc=2 die "usage: sh harness/scripts/gpu-bundle.sh DIR (a folder, not '$1'; ./$1 for one so named)" ;; esac
dir=$1
if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
    rc=2 die "DIR '$dir' exists and is not empty: remove it or name another"
fi
bin=$build/bench/fabricbench
[ -x "$bin" ] || { rc=2 die "no binary at '$bin': build first (FB_BUILD names the folder)"; }
for tool in ldd ldconfig strip tar xz dpkg-query; do
    command -v $tool >/dev/null 2>&1 || die "'$tool' is needed to make the bundle"
done
stage=$(mktemp -d "${TMPDIR:-/tmp}/fb-bundle.XXXXXX")
trap 'rm -rf "$stage"' EXIT
trap 'exit 130' INT TERM
root=$stage/fabricbench-bundle
# hwloc-plugins/ stays empty: the bundle's hwloc loads no plugins (HWLOC_PLUGINS_PATH).
mkdir -p "$root/build/bench" "$root/build/tests/gpu" "$root/lib" "$root/ompi/etc" \
    "$root/harness/scripts" "$root/hwloc-plugins"

# The programs, laid out as in a build folder so gpu-check.sh finds them as it does at home.
cp "$bin" "$root/build/bench/"
for t in tests/gpu/test_conv_gemm tests/gpu/test_pool_kernels tests/test_conv_engine_cuda; do
    if [ -x "$build/$t" ]; then
        cp "$build/$t" "$root/build/$t"
    else
        echo "gpu-bundle: warning: '$build/$t' is not built (configure with CUDA):" \
            "the bundle's gpu-check.sh will fail" >&2
    fi
done
# replay's shipped mixes, where gpu-check.sh looks for them in a checkout.
mkdir -p "$root/profiles/mixes"
cp "$top"/profiles/mixes/*.mix "$root/profiles/mixes/"
# gpu-check.sh itself sits beside the archive, not in it.
for s in gpu-summary.sh torch_densenet_step.py torch_copy.py; do
    cp "$top/harness/scripts/$s" "$root/harness/scripts/"
done

# Open MPI from the installed packages, under ompi/ with their paths (OPAL_PREFIX=ompi/usr).
# Documentation, headers and static libraries stay behind, and links to absolute paths
# (alternatives), which would point into the GPU host's own tree.
for pkg in $ompi_pkgs; do
    dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' ||
        die "package '$pkg' is not installed (harness/scripts/setup-debian.sh installs it)"
done
# shellcheck disable=SC2086
dpkg-query -L $ompi_pkgs | grep -v -e '^/usr/share/doc/' -e '^/usr/share/man/' \
    -e '^/usr/share/lintian/' -e '/include/' -e '\.a$' -e '\.la$' -e '\.pc$' |
    sort -u >"$stage/pkg-files"
mkdir -p "$root/ompi"
tar -C / --no-recursion -cf - -T "$stage/pkg-files" 2>"$stage/tar.err" |
    tar -C "$root/ompi" -xf - ||
    die "cannot copy Open MPI's files: $(cat "$stage/tar.err")"
find "$root/ompi" -type l -lname '/*' -exec rm -f {} +
cp /etc/openmpi/openmpi-mca-params.conf "$root/ompi/etc/" ||
    die "cannot copy /etc/openmpi/openmpi-mca-params.conf"

# Libraries the binary loads at run time (dlopen), which no ldd names: OpenBLAS, loaded by the
# host compute (harness/train/conv_engine_host.c). Their own libraries come with the scan below.
for soname in libopenblas.so.0; do
    path=$(ldconfig -p | awk -v s="$soname" '$1 == s && /x86-64/ { print $NF; exit }')
    [ -n "$path" ] || die "'$soname' is not installed (harness/scripts/setup-debian.sh installs it)"
    cp "$(readlink -f "$path")" "$root/lib/$soname"
done

# Every ELF file's shared libraries, as ldd resolves them here (one ldd for all of them). Left
# out: the C library (the host's own), the NVIDIA driver and NCCL (the host's); any other
# library ldd does not find fails the bundle.
find "$root" -type f \( -name '*.so*' -o -perm -u+x \) -print | sort >"$stage/candidates"
# (one path a line, passed whole: a TMPDIR with a space in it splits nothing)
tr '\n' '\0' <"$stage/candidates" | xargs -0 ldd 2>/dev/null | awk -v root="$root/" '
    /^[^ \t].*:$/ { file = substr($0, 1, length($0) - 1)
                     if (index(file, root) == 1) file = substr(file, length(root) + 1); next }
    /not a dynamic executable/ { next }
    { elf[file] = 1 }
    $1 ~ /^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so)/ { next }
    $1 ~ /^(libutil\.so|libresolv\.so|libcuda\.so|libnvidia|libnccl\.so)/ { next }
    $2 == "=>" && $3 == "not" { print "missing", $1, file; next }
    $2 == "=>" { print "lib", $1, $3 }
    END { for (f in elf) print "elf", f }' | sort -u >"$stage/deps"
grep '^missing ' "$stage/deps" | while read -r _ lib file; do
    echo "gpu-bundle: '$file' needs '$lib', which ldd does not find here" >&2
done
grep -q '^missing ' "$stage/deps" && die "libraries missing: nothing written to '$dir'"
# ldd read nothing (its errors are hidden above): a bundle without its libraries would pass
grep -q '^lib ' "$stage/deps" || die "ldd named no library of the binary's: nothing written to '$dir'"
grep '^lib ' "$stage/deps" | while read -r _ soname path; do
    real=$(readlink -f "$path")
    # Already carried inside the Open MPI tree: loaded from there (LD_LIBRARY_PATH).
    [ -e "$root/ompi$real" ] && continue
    [ -e "$root/lib/$soname" ] || cp "$real" "$root/lib/$soname"
done

# Smaller: no symbols or debug information (the kernels' fat binaries stay).
{ sed -n 's/^elf //p' "$stage/deps"; (cd "$root" && ls lib/*); } | sort -u >"$stage/elf"
(cd "$root" && xargs chmod u+w <"$stage/elf" && xargs strip --strip-unneeded <"$stage/elf") ||
    die "strip failed"
(cd "$root" && find . -type f | sort | xargs ls -l | awk '{ print $5, $9 }') >"$root/MANIFEST.txt"
git -C "$top" rev-parse HEAD >"$root/COMMIT.txt" 2>/dev/null || echo unknown >"$root/COMMIT.txt"

# The archive and the script that opens it, written beside each other, then moved into place.
out=$stage/out
mkdir -p "$out"
raw=$(du -sb "$root" | cut -f1)
XZ_OPT=${XZ_OPT:--6} tar -C "$stage" -cJf "$out/fabricbench-bundle.tar.xz" fabricbench-bundle ||
    die "tar with xz failed"
cp "$top/harness/scripts/gpu-check.sh" "$out/gpu-check.sh"
cp "$root/MANIFEST.txt" "$out/MANIFEST.txt"
size=$(du -sb "$out" | cut -f1)
to_mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
mib=$(to_mib "$size")
if [ "$size" -gt "$limit_bytes" ]; then
    die "the bundle would be $mib MiB, over the 64 MiB limit: nothing written to '$dir'"
fi
mkdir -p "$dir"
cp "$out"/* "$dir/"
echo "gpu-bundle: $dir: $mib MiB (limit 64 MiB; $(to_mib "$raw") MiB unpacked)"

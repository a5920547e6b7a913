#!/bin/sh
# Installed like HPC software: `cmake --install` into an empty prefix puts every file in its
# Filesystem Hierarchy place and the installed binary finds its profiles by name; the Debian
# package unpacked into an empty root runs from there and depends on a Debian package for every
# library it links; the Spack recipe and the Lmod example agree with CMakeLists.txt.
# Usage: packaging.sh SOURCE_DIR BUILD_DIR
. "$(dirname "$0")/lib.sh"
src=$1 build=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# --- the Spack recipe and the modulefile against CMakeLists.txt -------------------------------
recipe=$src/packaging/spack/package.py lmod=$src/packaging/lmod/fabricbench.lua
version=$(sed -n 's/^project(fabricbench VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
cmake_min=$(sed -n 's/^cmake_minimum_required(VERSION \([0-9.]*\)).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project VERSION in CMakeLists.txt"
grep -q "version(\"$version\"" "$recipe" || fail "package.py has no version(\"$version\")"
grep -q "Version: $version\")" "$lmod" || fail "fabricbench.lua's whatis Version is not $version"
grep -q "depends_on(\"cmake@$cmake_min:\"" "$recipe" ||
    fail "package.py's cmake dependency is not cmake@$cmake_min: (cmake_minimum_required)"
options=$(sed -n 's/^set(\(FB_WITH_[A-Z]*\) AUTO CACHE STRING.*/\1/p' "$src/CMakeLists.txt")
[ -n "$options" ] || fail "no FB_WITH_* options found in CMakeLists.txt"
for opt in $options; do
    grep -q "self.define(\"$opt\"" "$recipe" || fail "package.py does not set $opt"
    v=$(echo "$opt" | sed 's/FB_WITH_//' | tr 'A-Z' 'a-z')
    if [ "$v" = cuda ]; then
        grep -q "CudaPackage" "$recipe" || fail "package.py has no +cuda (CudaPackage)"
    else
        grep -q "variant(\"$v\"" "$recipe" || fail "package.py has no variant $v for $opt"
    fi
done
for v in $(sed -n 's/^ *variant("\([a-z_]*\)".*/\1/p' "$recipe"); do
    V=$(echo "$v" | tr 'a-z' 'A-Z')
    echo "$options" | grep -qx "FB_WITH_$V" || fail "package.py variant $v has no FB_WITH_$V"
done

# --- cmake --install into an empty prefix -----------------------------------------------------
P=$tmp/prefix
cmake --install "$build" --prefix "$P" >"$tmp/install.log" 2>&1 || fail "cmake --install failed"
for f in bin/fabricbench share/fabricbench/profiles/c4140-m.ini share/fabricbench/profiles/host-ci.ini \
         share/doc/fabricbench/README.md share/doc/fabricbench/results/SCHEMA.md \
         share/doc/fabricbench/docs/accept.md share/man/man1/fabricbench.1 \
         libexec/fabricbench/gpu-check.sh libexec/fabricbench/gpu-summary.sh; do
    [ -f "$P/$f" ] || fail "install: $f missing"
done
# Links between the installed pages hold: every relative link of README.md and docs/ to a .md
# file of the docs (README, docs/, results/SCHEMA.md) names a file that is there.
doc=$P/share/doc/fabricbench
for page in "$doc/README.md" "$doc"/docs/*.md "$doc"/docs/*/*.md; do
    [ -f "$page" ] || continue
    for target in $(grep -o '](\([^)#:]*\.md\)' "$page" | sed 's/^](//'); do
        dest=$(cd "$(dirname "$page")" && realpath -m "$target")
        case $dest in "$doc"/*) ;; *) continue ;; esac # a link out of the docs (source files)
        case $dest in "$doc"/README.md | "$doc"/docs/* | "$doc"/results/*) ;; *) continue ;; esac
        [ -f "$dest" ] || fail "installed ${page#"$doc"/}: the link to $target is broken"
    done
done
grep -q '^\.TH FABRICBENCH "1"' "$P/share/man/man1/fabricbench.1" || fail "man page has no .TH"
grep -q 'accept' "$P/share/man/man1/fabricbench.1" || fail "man page lacks the commands"
# A profile by name: found beside the installed binary; the run folder is then the complaint.
out=$("$P/bin/fabricbench" accept --profile c4140-m "$tmp/no-run" 2>&1); rc=$?
[ "$rc" = 2 ] && echo "$out" | grep -q "run folder '$tmp/no-run'" ||
    fail "installed accept --profile c4140-m: rc=$rc: $out"
out=$("$P/bin/fabricbench" accept --profile no-such "$tmp/no-run" 2>&1); rc=$?
[ "$rc" = 2 ] && echo "$out" | grep -q "no profile named 'no-such' in $P/bin/../share/fabricbench/profiles" &&
    echo "$out" | grep -q "c4140-m" || fail "accept --profile no-such: rc=$rc: $out"
mkdir "$tmp/site"; cp "$src/profiles/host-ci.ini" "$tmp/site/site-node.ini"
out=$(FB_PROFILE_PATH=/nonexistent:$tmp/site "$P/bin/fabricbench" accept --profile site-node \
      "$tmp/no-run" 2>&1); rc=$?
[ "$rc" = 2 ] && echo "$out" | grep -q "run folder" || fail "FB_PROFILE_PATH lookup: rc=$rc: $out"
out=$("$P/bin/fabricbench" accept --profile '../x' "$tmp/no-run" 2>&1)
echo "$out" | grep -q "profile" || fail "a path-like name was not treated as a path: $out"

# --- cpack -G DEB, unpacked into an empty root ------------------------------------------------
if ! command -v dpkg-deb >/dev/null; then
    fail "dpkg-deb is missing (Debian's dpkg)"; finish
fi
(cd "$tmp" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/pkg") >"$tmp/cpack.log" 2>&1 ||
    { cat "$tmp/cpack.log" >&2; fail "cpack -G DEB failed"; finish; }
deb=$(ls "$tmp/pkg"/fabricbench_"$version"_amd64.deb 2>/dev/null)
[ -n "$deb" ] || { fail "no fabricbench_${version}_amd64.deb in $(ls "$tmp/pkg")"; finish; }
root=$tmp/root; mkdir "$root"; dpkg-deb -x "$deb" "$root"
"$root/usr/bin/fabricbench" --version | grep -q "^fabricbench $version" ||
    fail "the unpacked binary does not print its version"
out=$("$root/usr/bin/fabricbench" accept --profile hgx-h200-8 "$tmp/no-run" 2>&1)
echo "$out" | grep -q "run folder" || fail "unpacked accept --profile hgx-h200-8: $out"
depends=$(dpkg-deb -f "$deb" Depends)
# Every library the binary links comes from a Debian package the .deb depends on.
for lib in $(readelf -d "$root/usr/bin/fabricbench" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p'); do
    # ldd prints "name => path (address)", or "path (address)" for the dynamic loader
    path=$(ldd "$root/usr/bin/fabricbench" |
        awk -v l="$lib" '$1 == l { print $3 } $2 != "=>" && $1 ~ ("/" l "$") { print $1 }')
    [ -n "$path" ] && [ "$path" != "not" ] || { fail "$lib: not found by ldd"; continue; }
    real=$(readlink -f "$path")
    pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$real" 2>/dev/null)
    pkg=$(echo "$pkg" | head -n 1 | cut -d: -f1)
    [ -n "$pkg" ] || { fail "$lib ($path) belongs to no Debian package"; continue; }
    echo "$depends" | tr ',|' '\n\n' | sed 's/^ *//; s/ .*//' | grep -qx "$pkg" ||
        fail "$lib comes from $pkg, which Depends ($depends) lacks"
done
finish

#!/bin/sh
# The tree tests itself: no file of the repository reads or cites a folder beside it (the
# development machine's shared reference folder), so a clone in an empty folder has everything
# its tests and profiles need. Usage: self_contained.sh SOURCE_DIR
. "$(dirname "$0")/lib.sh"
src=$1
# The patterns are built from pieces so that this file does not match itself.
beside="\.\./sha""red"
abs="/work/sha""red"
hits=$(cd "$src" && grep -rIlE -e "$beside" -e "$abs" \
    --exclude-dir='.git' --exclude-dir='build*' --exclude-dir='bundle' . 2>/dev/null)
[ -z "$hits" ] || fail "files that point outside the repository: $(echo $hits)"
# The check must be able to fail: a planted reference is found.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf 'see %s/FACTS.md\n' "../sha""red/reference" >"$tmp/planted.md"
grep -rIlE -e "$beside" "$tmp" >/dev/null || fail "the pattern misses a planted reference"
finish

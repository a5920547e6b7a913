#!/bin/sh
# The docs' example outputs are the tool's (issue 32): every fenced block of README.md and docs/
# that is not a command block (```sh, ```bash, ```yaml, ```gnuplot) and holds a digit is marked on
# the line above it, either `<!-- example: NAME -->` (`figures` after NAME: a measured run, digits
# stand for any number) and checked by a test (tests/lib.sh doc_example, called with that page and
# NAME), or `<!-- not output: WHY -->` (a synopsis, a diagram, an input file). A marked example no
# test checks, or a test's call naming no marked block, fails here. Then the examples whose output
# is the same on every machine (accept on a recorded run folder) are run and compared.
#   docs_examples.sh REPO BIN
. "$(dirname "$0")/lib.sh"
top=$1 bin=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$top" || exit 1
pages=$(ls README.md docs/*.md docs/*/*.md)

# 1. every output-like block is marked
# shellcheck disable=SC2086
awk 'FNR == 1 { inb = 0; prev = "" }
     /^```/ {
         if (!inb) { lang = substr($0, 4); start = FNR; mark = prev; body = "" }
         else if (lang !~ /^(sh|bash|yaml|gnuplot)$/ && body ~ /[0-9]/ &&
                  mark !~ /^<!-- (example: [a-z0-9-]+( figures)?|not output: .+) -->$/)
             print FILENAME ":" start ": a block with figures and no marker on the line above " \
                   "(<!-- example: NAME --> or <!-- not output: WHY -->)"
         inb = !inb; prev = $0; next }
     inb { body = body "\n" $0 }
     { prev = $0 }' $pages >"$work/why"

# 2. each example is checked by a test, and each test's call names an example
# shellcheck disable=SC2086
grep -Ho '^<!-- example: [a-z0-9-]*' $pages | sed 's/:<!-- example: / /' | sort -u >"$work/marked"
grep -rhoE 'doc_example +[A-Za-z0-9_./-]+\.md +[a-z0-9-]+' tests --include='*.sh' |
    awk '{ print $2, $3 }' | sort -u >"$work/called"
[ -s "$work/marked" ] || echo "no example is marked in the docs" >>"$work/why"
comm -23 "$work/marked" "$work/called" |
    awk '{ print $1 ": example " $2 " is checked by no test (doc_example " $1 " " $2 " OUT)" }' \
        >>"$work/why"
comm -13 "$work/marked" "$work/called" |
    awk '{ print "a test checks example " $2 " of " $1 ", which marks no such block" }' >>"$work/why"
while IFS= read -r line; do fail "$line"; done <"$work/why"
echo "$(wc -l <"$work/marked") marked examples, $(wc -l <"$work/called") checked by tests"

# 3. docs/accept.md's output: accept on a recorded run (tests/data/report/run, two host ranks)
# copied to /tmp/r as the page says; here to a folder of our own, its name put back
mkdir "$work/r"
cp tests/data/report/run/results.csv tests/data/report/run/env.json "$work/r/"
"$bin" accept --profile profiles/host-ci.ini --junit "$work/r/accept.xml" "$work/r" \
    >"$work/accept.raw" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "accept on tests/data/report/run: exit $rc: $(cat "$work/accept.raw")"
sed "s|$work/r|/tmp/r|g" "$work/accept.raw" >"$work/accept.txt"
doc_example docs/accept.md accept-host-ci "$work/accept.txt"
# ... and a malformed profile (tests/data/docs/site.ini: line 12 names no key of [compute])
cp tests/data/docs/site.ini "$work/"
(cd "$work" && "$bin" accept --profile site.ini "$work/r" >bad.txt 2>&1; echo "rc $?" >>bad.txt)
[ "$(tail -n 1 "$work/bad.txt")" = "rc 2" ] ||
    fail "accept with tests/data/docs/site.ini: $(cat "$work/bad.txt")"
sed -e "s|$work/r|/tmp/r|g" -e 's/^rc \(.*\)/\1/' "$work/bad.txt" >"$work/bad.out"
doc_example docs/accept.md accept-bad-profile "$work/bad.out"
finish

#!/bin/sh
# Runs one test of the sanitizer build's tree from the main tree's CTest, so that both suites
# share one schedule (tests/sanitize/CMakeLists.sanitize.cmake writes the list; docs/testing.md).
# The inner CTest applies the test's own command, environment (the sanitizers' options) and
# timeout. Its verdict passes through unchanged: passed is 0, skipped is 77 (never a pass),
# anything else, a test missing from the tree included, is a failure.
# usage: in_tree.sh CTEST TREE NAME
ctest=$1 tree=$2 name=$3
[ -f "$tree/CTestTestfile.cmake" ] || { echo "no sanitizer tree at '$tree' (sanitizer_build did not run?)" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$ctest" --test-dir "$tree" -R "^$name\$" --output-on-failure --no-tests=error </dev/null >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" = 0 ] || exit 1
# exactly one test ran, and it passed or was skipped
grep -Eq "^ *1/1 Test +#[0-9]+: $name \.+ *\*\*\*Skipped" "$out" && exit 77
grep -Eq "^ *1/1 Test +#[0-9]+: $name \.+ +Passed" "$out" && exit 0
echo "in_tree.sh: no 'Passed' or 'Skipped' line for $name in the inner CTest's output" >&2
exit 1

#!/bin/sh
# README.md's common tasks run as written: the first ```sh block under "## Common tasks" runs,
# unchanged, in an empty folder where build/bench/fabricbench is this build's binary (what a
# clean clone has after the quick start's build), without the suite's Open MPI variables (as
# root, the block sets the two Open MPI asks for), and what README says each task prints is what
# it printed: accept's per-check lines and summary with a JUnit file, compare's verdict line
# naming three runs a side and its compare.csv, trend's trend.csv, soak's verdict and soak.csv,
# each task's exit code among those README gives it.
#   readme_tasks.sh README.md FABRICBENCH
. "$(dirname "$0")/lib.sh"
readme=$1 bin=$2
[ -r "$readme" ] && [ -x "$bin" ] || { echo "usage: readme_tasks.sh README.md FABRICBENCH" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk '/^## Common tasks/ { on = 1; next } on && /^## / { exit }
     on && /^```sh$/ { inblock = 1; next } inblock && /^```$/ { exit } inblock' "$readme" >"$work/tasks.sh"
[ -s "$work/tasks.sh" ] || { fail "no sh block under '## Common tasks' in $readme"; finish; }
grep -q '^fb=build/bench/fabricbench$' "$work/tasks.sh" || fail "the block does not name build/bench/fabricbench"
mkdir -p "$work/clone/build/bench"
ln -s "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" "$work/clone/build/bench/fabricbench"
# without what the suite's environment adds (FB_TEST_ENV): the block must bring what it needs,
# root's Open MPI variables included. OMPI_MCA_mpi_yield_when_idle=1 stays: no task needs it or
# is judged on a figure, and without it the waiting rank of every job spins a whole CPU that the
# tests beside this one need (in a whole run on 2026-12-04: 72 CPU-s in 69 s of wall time; with
# it, about 30).
(cd "$work/clone" && unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
    OMPI_MCA_rmaps_base_oversubscribe && sh "$work/tasks.sh") \
    >"$work/out.txt" 2>&1
rc=$?
cat "$work/out.txt"
[ "$rc" = 0 ] || fail "the block exited $rc (its last command: soak's echo)"
r=$work/clone/results

# accept: one line per check, the summary, JUnit; exit 0 or 1
grep -Eq '^accept: exit [01]$' "$work/out.txt" || fail "accept: $(grep '^accept: exit' "$work/out.txt")"
grep -Eq '^[a-z_0-9.]+ +(PASS|FAIL|SKIP) ' "$work/out.txt" || fail "accept printed no check line"
grep -Eq '^summary: [0-9]+ PASS, [0-9]+ FAIL, [0-9]+ SKIP of [0-9]+ checks' "$work/out.txt" ||
    fail "accept's summary is not as README says: $(grep '^summary' "$work/out.txt")"
grep -q '<testcase ' "$r/node1-junit.xml" 2>/dev/null || fail "no JUnit test case in results/node1-junit.xml"
n=$(csv_awk 'v("bench") == "h2d" || v("bench") == "allreduce" { n++ } END { print n + 0 }' "$r/node1/results.csv")
[ "$n" -gt 0 ] || fail "results/node1/results.csv has no h2d or allreduce row"

# compare: three runs a side named by their folders, a verdict, compare.csv; exit 0 or 1
grep -Eq '^compare: exit [01]$' "$work/out.txt" || fail "compare: $(grep '^compare: exit' "$work/out.txt")"
grep -Eq '^compare: 3 runs: results/ab/a/r1, results/ab/a/r2, results/ab/a/r3 \(base\) vs 3 runs: results/ab/b/r1, results/ab/b/r2, results/ab/b/r3 \(new\): (no regression|REGRESSION)' \
    "$work/out.txt" || fail "compare's verdict line is not as README says: $(grep '^compare: [0-9]' "$work/out.txt")"
grep -q 'runs per side a 5% change needs' "$work/out.txt" || fail "compare did not say how many runs a change needs"
grep -Eq '^ +ranks\[0\]\.bound +true +-> +false$' "$work/out.txt" ||
    fail "compare did not name the binding difference README says it shows"
[ "$(wc -l <"$r/ab/compare/compare.csv" 2>/dev/null || echo 0)" -gt 1 ] || fail "no rows in compare.csv"

# trend: exit 0 or 1, trend.csv with the four runs
grep -Eq '^trend: exit [01]$' "$work/out.txt" || fail "trend: $(grep '^trend: exit' "$work/out.txt")"
runs=$(csv_awk '{ print v("run") }' "$r/trend/trend.csv" 2>/dev/null | sort -u | tr '\n' ' ')
[ "$runs" = "1 2 3 4 " ] || fail "trend.csv's runs: '$runs', expected 1 2 3 4"

# soak: a verdict line and a row per interval; exit 0 or 1
grep -Eq '^soak: exit [01]$' "$work/out.txt" || fail "soak: $(grep '^soak: exit' "$work/out.txt")"
grep -Eq '^(\[0 [^]]*\] )?soak: (healthy|degraded:)' "$work/out.txt" ||
    fail "soak printed neither 'soak: healthy' nor 'soak: degraded:'"
[ "$(wc -l <"$r/soak/soak.csv" 2>/dev/null || echo 0)" -gt 2 ] || fail "soak.csv has no interval rows"
finish

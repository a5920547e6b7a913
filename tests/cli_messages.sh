#!/bin/sh
# The command line's small lies (issue 15): words after --version and --help, a folder given as
# a profile, doctor's --json path checked before the work, and numbers that are not finite in a
# run folder given to accept, compare and report: each is exit 2 with one error line naming the
# problem and where, and nothing printed on stdout. Also doctor's and expect's --help (exit 0,
# usage) and bad options (exit 2) answered before MPI starts, and hwloc's plugins kept out.
# usage: cli_messages.sh FABRICBENCH
. "$(dirname "$0")/lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# ---- commands that take no operands ----
expect_bad "--version: unexpected argument 'extra'" --version extra
expect_bad "version: unexpected argument 'x'" version x
expect_bad "--help: unexpected argument 'run'" --help run
"$bin" --version >out.txt 2>err.txt || fail "--version alone failed: $(cat err.txt)"
grep -q '^fabricbench ' out.txt || fail "--version alone: $(cat out.txt)"

# ---- doctor's and expect's --help and bad options end before MPI starts: with an MPI that
# cannot start (no such pml) they still answer; started, doctor fails ----
for c in doctor expect; do
    OMPI_MCA_pml=nosuch "$bin" $c --help >out.txt 2>err.txt ||
        fail "$c --help with an MPI that cannot start: exit $?: $(head -c 300 err.txt)"
    grep -q "^usage: mpirun -np N fabricbench $c" out.txt || fail "$c --help: $(head -n 2 out.txt)"
    OMPI_MCA_pml=nosuch "$bin" $c --bogus >out.txt 2>err.txt
    rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q "$c: unknown option '--bogus'" err.txt ||
        fail "$c --bogus with an MPI that cannot start: exit $rc: $(head -c 300 err.txt)"
    [ ! -s out.txt ] || fail "$c --bogus printed on stdout: $(head -c 200 out.txt)"
done
# the checks above can tell: started, MPI refuses that pml (its words vary: under load Open MPI
# may lose its help text and print only an ORTE_ERROR_LOG line)
OMPI_MCA_pml=nosuch timeout 60 "$bin" doctor >out.txt 2>err.txt &&
    fail "doctor with an MPI that cannot start passed: the check above cannot tell"

# ---- hwloc's OpenCL and GL plugins are never loaded (fb_topo_plugins_prepare): not by a
# singleton's MPI_Init either, which makes the process's first topology before doctor does ----
LD_DEBUG=files timeout 120 "$bin" doctor >/dev/null 2>ld.txt
pci=$(sed -n 's|.*file=\(/[^ ]*\)/hwloc_pci\.so .*dynamically loaded.*|\1|p' ld.txt | head -n 1)
if [ -n "$pci" ] && [ -e "$pci/hwloc_opencl.so" ]; then
    for plugin in hwloc_opencl hwloc_gl; do
        ! grep -q "file=[^ ]*/$plugin\.so .*dynamically loaded" ld.txt ||
            fail "doctor (a singleton) loaded $plugin.so: $(grep -m 1 "$plugin" ld.txt)"
    done
else
    echo "SKIP plugins: no hwloc_opencl.so beside a loaded hwloc_pci.so here, nothing to keep out"
fi

# ---- a long option given a value it does not take is named as given, not by getopt's letter
# ('--drain=1' was "unknown option '-d'") ----
expect_bad "health: option '--drain' takes no value" health --drain=1
expect_bad "trend: option '--no-plots' takes no value" trend --no-plots=1 x
expect_bad "run: unknown option '--bogus'" run --bogus=3

# ---- a value quoted in a message reaches the terminal without its control bytes (fb_error) ----
esc=$(printf 'x\033[2Jy')
for args in "$esc" "run --dtype $esc" "mix --$esc"; do
    # shellcheck disable=SC2086
    "$bin" $args >out.txt 2>err.txt
    LC_ALL=C grep -q "$(printf '\033')" err.txt && fail "'$args': raw ESC in: $(cat -v err.txt)"
    grep -qF 'x\x1b[2Jy' err.txt || fail "'$args': the value is not shown escaped: $(cat -v err.txt)"
done

# ---- a hand-made run folder: one h2d row, env.json of a complete run ----
header=run_id,bench,case,backend,transport,link,nodes,ranks,src,dst,batch,bytes,count,dtype
header=$header,redop,iters,metric,unit,samples,median,p05,p95,min,max,mean,stddev,wrong
row() { echo "r,h2d,pinned_h2d,host,memcpy,,1,1,0,,,1048576,,,,10,bandwidth,GB/s,5,$1,1,3,1,3,2,0.5,0"; }
# mkrun DIR MEDIAN VISIBLE_GPUS (the number starts at env.json's line 4, column 41)
mkrun() {
    mkdir -p "$1"
    { echo "$header"; row "$2"; } >"$1/results.csv"
    printf '{\n  "run_status": "complete",\n  "backend": {"name": "host"},\n' >"$1/env.json"
    printf '  "ranks": [{"rank": 0, "visible_gpus": %s}]\n}\n' "$3" >>"$1/env.json"
}
mkrun good 2 0
mkrun inf inf 0
mkrun big 2 1e999
printf '[h2d]\nmin_pinned_gbps_per_gpu_all = 1\n' >p.ini
"$bin" accept --profile p.ini good >out.txt 2>err.txt ||
    fail "accept of the good folder: $(cat err.txt)"
grep -q '^h2d_pinned_all  *PASS' out.txt || fail "accept of the good folder: $(cat out.txt)"

# a median of inf was a PASS at +inf%
expect_bad "inf/results.csv:2: column 'median': 'inf' is not a number" accept --profile p.ini inf
expect_bad "inf/results.csv:2: column 'median': 'inf' is not a number" compare good inf
expect_bad "inf/results.csv:2: column 'median': 'inf' is not a number" report inf
expect_bad "big/env.json:4:41: '1e999' is not a finite number" accept --profile p.ini big
# compare takes no verdict from env.json: an unreadable one is a note, never an 'inf' shown
"$bin" compare good big >out.txt 2>err.txt || fail "compare good big: exit $?: $(cat err.txt)"
grep -qF "No fingerprint difference: big/env.json:4:41: '1e999' is not a finite number" out.txt ||
    fail "compare good big: the note does not name the number: $(head -n 3 out.txt)"
md=compare-good-vs-big/compare.md
[ -s $md ] || fail "compare good big wrote no $md"
! grep -qw 'inf' $md || fail "compare.md shows inf: $(grep -w inf $md)"
expect_bad "big/env.json:4:41: '1e999' is not a finite number" report big
ls -d compare-*-vs-inf compare-inf-vs-* >/dev/null 2>&1 && fail "compare wrote a report for bad input"
[ ! -e inf/summary.md ] && [ ! -e big/summary.md ] || fail "report wrote summary.md for bad input"
# the threshold is read by the same strict parser
expect_bad "bad value for --threshold: '0x10'" compare --threshold 0x10 good good

# ---- a folder is not a profile (it read as an empty one: "asks for no check") ----
mkdir profiles.d
expect_bad "accept: not a profile file: 'profiles.d' is a directory" accept --profile profiles.d good

# ---- a run is its folder, whatever the name: trend and compare count each once (issue 30:
# trend counted one folder named twice as two runs) ----
mkrun good2 2 0
mkrun good3 2 0
ln -s good goodlink
expect_bad "trend: 'good' and './good' are one run (the same results.csv); each run counts once" \
    trend good good2 good3 ./good
expect_bad "trend: 'good' and 'goodlink/results.csv' are one run" trend good good2 good3 goodlink/results.csv
expect_bad "compare: base side: 'good' and 'good/' are one run" compare good good/ -- good2
expect_bad "compare: new side: 'good2' and 'good2/results.csv' are one run" compare good -- good2 good2/results.csv
[ ! -e trend ] && [ ! -e compare-good-vs-good2 ] ||
    fail "a refused trend or compare wrote a folder: $(ls -d trend compare-good-vs-good2 2>&1)"

# ---- doctor's --json: refused before the fingerprint, not after it with exit 1 ----
expect_bad "doctor: bad value for --json: empty path" doctor --json ''
expect_bad "doctor: cannot use --json 'profiles.d': it exists and is a folder" doctor --json profiles.d
expect_bad "doctor: bad value for --json: folder 'nosuch' does not exist" doctor --json nosuch/fp.json
# ---- accept's --junit: a folder that is not there is bad input before the verdicts, not an
# error after them (new-user pass, issue 32: the table printed, then exit 2) ----
expect_bad "accept: bad value for --junit: folder 'nosuch' does not exist" accept --junit nosuch/j.xml good
expect_bad "accept: bad value for --junit: folder 'good/results.csv' is not a folder" accept --junit good/results.csv/j.xml good
[ ! -e nosuch ] || fail "a refused accept --junit made its folder"

# ---- the run's last line names the results.csv it wrote, and none when it wrote none ----
# (issue 32: a run stopped before its first point named a "results.csv (0 rows)" that was not there)
FB_FAULT=alloc:1 "$bin" run h2d --backend host --sizes 4K --trials 2 --quiet --out stopped >out.txt 2>err.txt
rc=$?
[ "$rc" = 1 ] || fail "a run whose first allocation fails: exit $rc, expected 1: $(cat err.txt)"
[ ! -e stopped/results.csv ] || fail "the stopped run wrote a results.csv"
grep -q "^results: stopped: no results.csv (the run stopped before its first benchmark ended), env.json, fabricbench.log$" out.txt ||
    fail "the stopped run's results line: $(grep '^results' out.txt)"
grep -q "results.csv ([0-9]* rows)" out.txt && fail "the stopped run names a results.csv: $(grep '^results' out.txt)"
"$bin" run h2d --backend host --sizes 4K --trials 2 --quiet --out whole >out.txt 2>err.txt ||
    fail "a short h2d run failed: $(cat err.txt)"
n=$(($(wc -l <whole/results.csv) - 1))
grep -q "^results: whole/results.csv ($n rows), env.json, fabricbench.log$" out.txt ||
    fail "the run's results line does not name its $n rows: $(grep '^results' out.txt)"
# measuring nothing is an error with its reason (issue 30: allreduce at --sizes 1, below one
# float32, exited 0 as complete with no row)
"$bin" run allreduce --backend host --sizes 1 --trials 2 --quiet --out none >out.txt 2>err.txt
rc=$?
[ "$rc" = 2 ] || fail "a run with nothing to measure: exit $rc, expected 2: $(cat err.txt)"
grep -q "run: nothing to measure: with these options allreduce plans no point" err.txt ||
    fail "a run with nothing to measure: $(cat err.txt)"
grep -q "^results: none: no results.csv (nothing to measure), env.json, fabricbench.log$" out.txt ||
    fail "a run with nothing to measure, its results line: $(grep '^results' out.txt)"
grep -Eq '"run_status":[[:space:]]*"failed"' none/env.json ||
    fail "a run with nothing to measure is not marked failed: $(grep run_status none/env.json)"
finish

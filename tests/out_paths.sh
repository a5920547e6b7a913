#!/bin/sh
# Issue 15's crafted inputs against the offline commands' outputs (docs/run-folder.md, "Outputs
# of report, compare, accept and sweep"), on the report fixture (no MPI, seconds):
# 1. a results.csv whose run_id is "x\nsystem(""touch pwned"")\n#": neither `report` nor
#    `compare` creates `pwned` (the readers may refuse the file: exit 2, one line naming
#    results.csv:LINE; or the writers escape it: every gnuplot script holds no line of the run id);
# 2. `report` on a sweep whose launches.csv names run_dir ../../victim, an absolute path, or a
#    link inside the sweep: exit 2, one line naming launches.csv:LINE, nothing written outside;
# 3. `compare`'s default folder is named for the two run folders, never from a run_id
#    (x/../../../../somewhere/else), one folder in the current one (never in a run); a link
#    planted under that name is refused; --out '' and a link as
#    --out: exit 2, one line;
# 4. `accept --junit` through a link or '': exit 2 before any work, the link's target unchanged;
#    `accept --junit` and `doctor --json` naming a FIFO, a character device (as root) or a file
#    of a run's record: exit 2, one line, the entry unchanged;
# 5. `sweep --out LINK`: exit 2 before anything is launched or written (no launch.txt).
. "$(dirname "$0")/lib.sh"
bin=$1
fixture=$2
work=$(mktemp -d)
trap '[ -n "$KEEP" ] || rm -rf "$work"' EXIT; echo "work: $work"
cd "$work" || exit 1
# one_line STATUS WANT LOG WHAT: exit status WANT, and LOG one line holding WHAT
one_line() {
    [ "$1" = "$2" ] || fail "$4: exit $1, expected $2: $(cat "$3")"
    [ "$(wc -l <"$3")" = 1 ] || fail "$4: not one line: $(cat "$3")"
    grep -qF -- "$4" "$3" || fail "'$4' not in: $(cat "$3")"
}
# nothing_pwned: no file called pwned anywhere the commands could have run it
nothing_pwned() {
    found=$(find "$work" -name pwned)
    [ -z "$found" ] || fail "$1: gnuplot ran the run id: $found"
}

# ---- 1. a run id that is gnuplot code ----
mkdir evil base
cp "$fixture"/* evil/
cp "$fixture"/* base/
# the issue's field, CSV-quoted: "x<LF>system(""touch pwned"")<LF>#"
awk -F, 'NR == 1 { print; next }
         { sub(/^[^,]*/, "\"x\nsystem(\"\"touch pwned\"\")\n#\""); print }' \
    "$fixture/results.csv" >evil/results.csv
export PATH="$PATH" # gnuplot, when installed, is on it: the scripts are really run
"$bin" report evil >report1.log 2>&1; st=$?
nothing_pwned report
if [ "$st" = 2 ]; then
    one_line "$st" 2 report1.log "results.csv:2"
else
    [ "$st" = 0 ] || fail "report on the crafted run id: exit $st: $(cat report1.log)"
    for gp in evil/plots/*.gp; do
        grep -q '^system' "$gp" && fail "$gp: a line of the run id is a command"
    done
    [ -n "$(ls evil/plots/*.gp 2>/dev/null)" ] || fail "report wrote no gnuplot script"
    grep -q '^system\|^#"' evil/summary.md && fail "summary.md: the run id broke out of its line"
fi
"$bin" compare base evil >compare1.log 2>&1; st=$?
nothing_pwned compare
if [ "$st" = 2 ]; then
    grep -qF "results.csv:2" compare1.log ||
        fail "compare refused without results.csv:2: $(cat compare1.log)"
else
    [ "$st" -le 1 ] || fail "compare on the crafted run id: exit $st: $(cat compare1.log)"
    for gp in compare-*-vs-*/*.gp; do
        [ -f "$gp" ] || continue
        grep -q '^system' "$gp" && fail "$gp: a line of the run id is a command"
    done
    grep -q '^system' compare-*-vs-*/compare.md 2>/dev/null &&
        fail "compare.md: the run id broke out"
fi

# ---- 2. report follows launches.csv's run_dir ----
mkdir -p victim sweep/a/b
cp "$fixture"/* victim/
for dir in ../../victim /abs/path a/../../victim link; do
    rm -rf sweep/link && ln -s "$work/victim" sweep/link
    printf 'variant,command,exit_status,run_dir\nv1,mpirun x,0,%s\n' "$dir" >sweep/launches.csv
    "$bin" report --no-plots sweep >report2.log 2>&1; st=$?
    one_line "$st" 2 report2.log "launches.csv:2: run_dir"
    if [ -e victim/summary.md ]; then
        fail "report wrote summary.md through run_dir $dir"
        rm -f victim/summary.md
    fi
    [ -e sweep/summary.md ] && fail "report wrote the sweep's summary.md for run_dir $dir"
done
# a run_dir inside the sweep is still read
rm -rf sweep/link; mkdir sweep/v1 && cp "$fixture"/* sweep/v1/
printf 'variant,command,exit_status,run_dir\nv1,mpirun x,0,v1\n' >sweep/launches.csv
"$bin" report --no-plots sweep >report3.log 2>&1 ||
    fail "report on a sweep inside its folder: $(cat report3.log)"
[ -s sweep/v1/summary.md ] || fail "report wrote no summary.md in the sweep's own folder"

# ---- 3. compare's output folder ----
mkdir climb
cp "$fixture"/* climb/
awk -F, 'NR == 1 { print; next } { sub(/^[^,]*/, "x/../../../../somewhere/else"); print }' \
    "$fixture/results.csv" >climb/results.csv
mkdir -p new1 && cp "$fixture"/* new1/
"$bin" compare climb new1 >compare2.log 2>&1; st=$?
[ "$st" -le 1 ] || fail "compare with a climbing run id: exit $st: $(cat compare2.log)"
[ -s "compare-climb-vs-new1/compare.md" ] ||
    fail "compare's default folder is not one folder here: $(ls)"
found=$(find "$work" -name somewhere)
[ -z "$found" ] || fail "compare wrote outside the current folder: $found"
ls new1 climb | grep -q compare && fail "compare wrote into a run folder"
mkdir elsewhere
rm -r compare-climb-vs-new1 && ln -s "$work/elsewhere" compare-climb-vs-new1
awk -F, 'NR == 1 { print; next } { sub(/^[^,]*/, "x/../../../../somewhere/else2"); print }' \
    "$fixture/results.csv" >climb/results.csv
"$bin" compare climb new1 >compare3.log 2>&1; st=$?
one_line "$st" 2 compare3.log "is a symbolic link"
[ -z "$(ls elsewhere)" ] || fail "compare wrote through a link: $(ls elsewhere)"
"$bin" compare --out '' base new1 >compare4.log 2>&1; st=$?
one_line "$st" 2 compare4.log "bad value for --out: empty path"
ln -s "$work/elsewhere" outlink
"$bin" compare --out outlink base new1 >compare5.log 2>&1; st=$?
one_line "$st" 2 compare5.log "cannot use --out 'outlink': it is a symbolic link"
[ -z "$(ls elsewhere)" ] || fail "compare wrote through --out's link: $(ls elsewhere)"

# ---- 4. accept --junit ----
echo keep >target.xml
ln -s "$work/target.xml" junit.xml
"$bin" accept --profile "$(dirname "$0")/../profiles/host-ci.ini" --junit junit.xml base \
    >accept1.log 2>&1; st=$?
one_line "$st" 2 accept1.log "cannot use --junit 'junit.xml': it is a symbolic link"
[ "$(cat target.xml)" = keep ] || fail "accept wrote through --junit's link"
"$bin" accept --profile "$(dirname "$0")/../profiles/host-ci.ini" --junit '' base \
    >accept2.log 2>&1; st=$?
one_line "$st" 2 accept2.log "bad value for --junit: empty path"
# an output that exists and is not a regular file is refused, never replaced by one (as root,
# --junit /dev/null would replace the system's); so is a file of a run's record (issue 30)
mkfifo fifo.xml
"$bin" accept --profile "$(dirname "$0")/../profiles/host-ci.ini" --junit fifo.xml base \
    >accept3.log 2>&1; st=$?
one_line "$st" 2 accept3.log "cannot use --junit 'fifo.xml': it exists and is not a regular file (a FIFO)"
[ -p fifo.xml ] || fail "accept replaced the FIFO named by --junit"
if [ "$(id -u)" = 0 ] && mknod chardev c 1 3 2>/dev/null; then
    "$bin" accept --profile "$(dirname "$0")/../profiles/host-ci.ini" --junit chardev base \
        >accept4.log 2>&1; st=$?
    one_line "$st" 2 accept4.log "cannot use --junit 'chardev': it exists and is not a regular file (a character device)"
    [ -c chardev ] || fail "accept replaced the character device named by --junit"
    "$bin" doctor --backend host --json chardev >doctor1.log 2>&1; st=$?
    one_line "$st" 2 doctor1.log "doctor: cannot use --json 'chardev': it exists and is not a regular file (a character device)"
    [ -c chardev ] || fail "doctor replaced the character device named by --json"
fi
"$bin" doctor --backend host --json fifo.xml >doctor2.log 2>&1; st=$?
one_line "$st" 2 doctor2.log "doctor: cannot use --json 'fifo.xml': it exists and is not a regular file (a FIFO)"
cp base/results.csv before.csv
for f in results.csv env.json fabricbench.log; do
    [ -f "base/$f" ] || continue
    cp "base/$f" "keep.$f"
    "$bin" accept --profile "$(dirname "$0")/../profiles/host-ci.ini" --junit "base/$f" base \
        >accept5.log 2>&1; st=$?
    one_line "$st" 2 accept5.log "cannot use --junit 'base/$f': it is the record of the run in 'base' ($f), which --junit does not write"
    cmp -s "base/$f" "keep.$f" || fail "accept --junit base/$f wrote over the run's $f"
done
# a run stopped before its first benchmark ended has no results.csv: its env.json is a record too
mkdir stopped && cp base/env.json stopped/ && cp stopped/env.json keep.stopped
"$bin" accept --profile "$(dirname "$0")/../profiles/host-ci.ini" --junit stopped/env.json base \
    >accept6.log 2>&1; st=$?
one_line "$st" 2 accept6.log "cannot use --junit 'stopped/env.json': it is the record of the run in 'stopped' (env.json)"
cmp -s stopped/env.json keep.stopped || fail "accept --junit wrote over a stopped run's env.json"
"$bin" doctor --backend host --json base/env.json >doctor3.log 2>&1; st=$?
one_line "$st" 2 doctor3.log "doctor: cannot use --json 'base/env.json': it is the record of the run in 'base' (env.json)"

# ---- 5. sweep --out LINK ----
mkdir sweeptarget
ln -s "$work/sweeptarget" sweeplink
"$bin" sweep --np 1 --out sweeplink --timeout 20 -- h2d --sizes 4K --trials 1 >sweep1.log 2>&1
st=$?
[ "$st" = 2 ] || fail "sweep --out LINK: exit $st, expected 2: $(tail -3 sweep1.log)"
grep -qF "cannot use --out 'sweeplink': it is a symbolic link" sweep1.log ||
    fail "sweep --out LINK: no message naming the link: $(tail -3 sweep1.log)"
[ -z "$(ls sweeptarget)" ] || fail "sweep wrote through --out's link: $(ls sweeptarget)"

# ---- 6. control characters at the door (issue 30): what a run writes, its readers accept ----
# a newline, an ESC or a C1 control (UTF-8's C2 9B, a CSI) in --out: refused, nothing made
for name in "$(printf 'r\nx')" "$(printf 'r\033[31mx')" "$(printf 'r\302\233x')"; do
    "$bin" run h2d --backend host --out "$name" >ctl.log 2>&1; st=$?
    one_line "$st" 2 ctl.log "holds a control character; name a folder without one"
    grep -q "$(printf '\033\|\302\233')" ctl.log && fail "the message echoed a raw control: $(od -c ctl.log | head -3)"
    [ ! -e "$name" ] && [ ! -e r ] || fail "a refused --out made a folder: $(ls)"
done
# accented letters are no control: café is a folder like any
"$bin" run h2d --backend host --sizes 4K --trials 2 --warmup 0 --iters 1 --quiet \
    --out "$(printf 'caf\303\251')" >ctl.log 2>&1 || fail "--out café refused: $(cat ctl.log)"
# control characters in the environment env.json records are escaped there, and the run's own
# readers take the folder
NCCL_FB_TEST_CTL="$(printf 'a\nb\033[31m')" FB_TEST_C1="$(printf 'x\302\233y')" "$bin" run h2d \
    --backend host --sizes 4K --trials 2 --warmup 0 --iters 1 --quiet --out ctlenv >ctl.log 2>&1 ||
    fail "a run with control characters in its environment failed: $(cat ctl.log)"
grep -qF '"NCCL_FB_TEST_CTL":	"a\\x0ab\\x1b[31m"' ctlenv/env.json ||
    fail "env.json does not hold NCCL_FB_TEST_CTL escaped: $(grep NCCL_FB_TEST_CTL ctlenv/env.json)"
grep -qF '"FB_TEST_C1":	"x\\xc2\\x9by"' ctlenv/env.json ||
    fail "env.json does not hold FB_TEST_C1 escaped: $(grep FB_TEST_C1 ctlenv/env.json)"
"$bin" report ctlenv >ctl.log 2>&1 || fail "report refused a run's own env.json: $(cat ctl.log)"
"$bin" accept --profile "$(dirname "$0")/../profiles/host-ci.ini" ctlenv >ctl.log 2>&1
st=$?
[ "$st" = 0 ] || [ "$st" = 1 ] || fail "accept refused a run's own env.json (exit $st): $(tail -2 ctl.log)"
finish

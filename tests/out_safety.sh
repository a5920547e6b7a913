#!/bin/sh
# `run --out DIR` writes only inside DIR, never through a link, and never over an earlier run
# without --force (docs/run-folder.md): a run checked file by file against what was there.
. "$(dirname "$0")/lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

run() { "$bin" run h2d --backend host --sizes 4K --trials 2 --warmup 0 --iters 1 --quiet "$@" >out.txt 2>err.txt; }
# refused TEXT ARGS...: exit 2 with TEXT in the one error line
refused() {
    text=$1; shift
    run "$@"
    rc=$?
    [ "$rc" = 2 ] || fail "run $* exited $rc, expected 2: $(cat err.txt)"
    grep -q -- "$text" err.txt || fail "run $*: error lacks '$text': $(cat err.txt)"
}
same() { [ "$(cat "$1")" = "$2" ] || fail "$1 changed: '$(cat "$1")', expected '$2'"; }

echo "keep me" >victim

# 1. A new folder, parents included: every file the run wrote is inside it.
touch marker
sleep 1
run --out a/b/run1 || fail "run --out a/b/run1 failed: $(cat err.txt)"
for f in results.csv env.json fabricbench.log; do
    [ -f "a/b/run1/$f" ] || fail "a/b/run1/$f missing"
done
outside=$(find . -newer marker -type f ! -path './a/b/run1/*' ! -name out.txt ! -name err.txt)
[ -z "$outside" ] || fail "the run wrote outside its folder: $outside"
[ -z "$(find a -name '*.tmp')" ] || fail "temporary files left: $(find a -name '*.tmp')"

# 2. An --out that is a link is refused, whatever it points to, even with --force.
mkdir target
ln -s target linked
refused "is a symbolic link (to 'target')" --out linked
refused "is a symbolic link" --out linked/ --force
ln -s nowhere dangling
refused "is a symbolic link (to 'nowhere')" --out dangling
[ -z "$(ls -A target)" ] || fail "a run wrote through the link: $(ls -A target)"
[ ! -e nowhere ] || fail "a run created the dangling link's target"
# a link above the folder is the user's layout: followed
run --out linked/run2 || fail "run --out linked/run2 failed: $(cat err.txt)"
[ -f target/run2/results.csv ] || fail "no target/run2/results.csv"

# 3. Any file of an earlier run stops a run without --force, and is left as it was.
for f in results.csv env.json fabricbench.log nccl-rank1.log; do
    mkdir "held-$f"
    echo earlier >"held-$f/$f"
    refused "already holds a run ($f)" --out "held-$f"
    same "held-$f/$f" earlier
    [ "$(ls -A "held-$f")" = "$f" ] || fail "a refused run wrote into held-$f: $(ls -A "held-$f")"
done
mkdir held-link && ln -s ../victim held-link/fabricbench.log
refused "already holds a run (fabricbench.log)" --out held-link
same victim "keep me"
# ... and is replaced with --force
run --out held-env.json --force || fail "run --force into held-env.json failed: $(cat err.txt)"
grep -q '"run_status"' held-env.json/env.json || fail "--force did not write a new env.json"
[ -f held-env.json/results.csv ] || fail "--force did not write results.csv"

# 4. Links inside the folder are never written through: neither run files (with --force)
#    nor the temporary names the atomic writes use (no --force needed: not a run's files).
mkdir planted
for f in results.csv.tmp env.json.tmp; do ln -s ../victim "planted/$f"; done
run --out planted || fail "run --out planted failed: $(cat err.txt)"
same victim "keep me"
run --out held-link --force || fail "run --out held-link --force failed: $(cat err.txt)"
same victim "keep me"
[ -f held-link/fabricbench.log ] && [ ! -L held-link/fabricbench.log ] ||
    fail "held-link/fabricbench.log is not a new plain file"
mkdir hard && ln victim hard/results.csv.tmp && ln victim hard/fabricbench.log
run --out hard --force || fail "run --out hard --force failed: $(cat err.txt)"
same victim "keep me"

# 5. The pictures: gnuplot never writes through a link planted where a plot goes, under its
#    temporary name or its own (issue 30: `report` turned VICTIM into a PNG), and a `plots` that
#    is a link is refused before anything is written through it.
command -v gnuplot >/dev/null || fail "gnuplot is missing: the planted-plot checks need it (setup-debian.sh installs it)"
"$bin" report a/b/run1 >out.txt 2>err.txt || fail "report a/b/run1 failed: $(cat err.txt)"
pngs=$(cd a/b/run1/plots && ls ./*.png 2>/dev/null | sed 's|^\./||')
[ -n "$pngs" ] || fail "report drew no picture in a/b/run1/plots"
for p in $pngs; do
    ln -sf ../../../../victim "a/b/run1/plots/.${p%.png}.tmp.png"
    ln -sf ../../../../victim "a/b/run1/plots/.${p%.png}.tmp.svg"
    rm -f "a/b/run1/plots/$p" && ln -s ../../../../victim "a/b/run1/plots/$p"
done
"$bin" report a/b/run1 >out.txt 2>err.txt || fail "report over planted links failed: $(cat err.txt)"
same victim "keep me"
for p in $pngs; do
    [ -f "a/b/run1/plots/$p" ] && [ ! -L "a/b/run1/plots/$p" ] || fail "plots/$p is not a new plain file"
done
[ -z "$(find a/b/run1/plots -name '.gnuplot.*')" ] || fail "gnuplot's private folder was left behind"
mkdir elsewhere
rm -rf a/b/run1/plots && ln -s ../../../elsewhere a/b/run1/plots
"$bin" report a/b/run1 >out.txt 2>err.txt
rc=$?
[ "$rc" != 0 ] || fail "report through a plots link exited 0"
grep -q "plots' is a link, not a folder: no plot is written through it" err.txt ||
    fail "report through a plots link: $(cat err.txt)"
[ -z "$(ls -A elsewhere)" ] || fail "report wrote through the plots link: $(ls -A elsewhere)"
# a plots that is a file is named as one (it read "is not a folder, not a folder")
rm -f a/b/run1/plots && : >a/b/run1/plots
"$bin" report a/b/run1 >out.txt 2>err.txt
rc=$?
[ "$rc" != 0 ] || fail "report with a plots file exited 0"
grep -q "plots' is a file, not a folder: no plot is written through it" err.txt ||
    fail "report with a plots file: $(cat err.txt)"
finish

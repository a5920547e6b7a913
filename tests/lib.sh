# Helpers for the shell tests: failures are counted and printed with what was expected.
# Sourced; $MPIEXEC comes from CTest's environment.
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
finish() {
    if [ "$fails" -ne 0 ]; then echo "$fails check(s) failed" >&2; exit 1; fi
    echo "all checks passed"; exit 0
}
# expect_bad TEXT ARGS...: "$bin" ARGS exits 2 with exactly one "error:" line, containing TEXT,
# and prints nothing on stdout (out.txt and err.txt in the current folder keep what it printed).
expect_bad() {
    text=$1; shift
    "$bin" "$@" >out.txt 2>err.txt
    rc=$?
    [ "$rc" = 2 ] || fail "'$*' exited $rc, expected 2: $(cat err.txt)"
    lines=$(grep -c 'error: ' err.txt)
    [ "$lines" = 1 ] || fail "'$*' printed $lines error lines, expected 1: $(cat err.txt)"
    grep -qF -- "$text" err.txt || fail "'$*': error lacks '$text': $(cat err.txt)"
    [ ! -s out.txt ] || fail "'$*' printed on stdout: $(head -c 300 out.txt)"
}
# json_field FILE A.B.C: a JSON file's field by its dotted path ("" when absent or unreadable)
json_field() { python3 -c 'import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    d = {}
for k in sys.argv[2].split("."): d = d.get(k, "") if isinstance(d, dict) else ""
print(d)' "$@"; }
mpi() { np=$1; shift; "${MPIEXEC:-mpirun}" --oversubscribe -np "$np" "$@"; }
# csv_col FILE NAME: the 1-based index of a column in a CSV header.
csv_col() { head -n 1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1; }
# csv_awk PROGRAM [VAR=VALUE...] FILE: awk over results.csv with columns by name: v("metric")
# is the field of the current row, and the header row is skipped. VAR=VALUE operands are set
# before the file is read (not in BEGIN).
csv_awk() {
    prog=$1; shift
    awk -F, "NR == 1 { for (i = 1; i <= NF; i++) col[\$i] = i; next }
function v(name) { if (!(name in col)) { print \"csv_awk: no column \" name \" in \" FILENAME > \"/dev/stderr\"; exit 3 } return \$(col[name]) }
$prog" "$@"
}
# expect_error TEXT CMD...: CMD exits 2 within 60 s, prints exactly one line on stderr, holding
# TEXT, and nothing on stdout (left in out.txt and err.txt).
expect_error() {
    text=$1; shift
    timeout 60 "$@" >out.txt 2>err.txt
    rc=$?
    [ "$rc" = 2 ] || fail "'$*' exited $rc, expected 2: $(tail -c 300 err.txt)"
    lines=$(wc -l <err.txt)
    [ "$lines" = 1 ] || fail "'$*' printed $lines lines on stderr, expected 1: $(tail -c 300 err.txt)"
    grep -qF -- "$text" err.txt || fail "'$*': error lacks '$text': $(tail -c 300 err.txt)"
    [ ! -s out.txt ] || fail "'$*' printed on stdout: $(head -c 300 out.txt)"
}

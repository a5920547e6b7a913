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
# doc_example PAGE NAME OUT [SELECT]: the block that follows `<!-- example: NAME -->` in PAGE (a
# path under the repository) is what the tool printed into OUT. Its lines (those matching the
# extended regex SELECT when given, for a block that shows lines of several runs; awk reads its
# backslashes as escapes, so write `[[]` for a bracket) must be lines of OUT, consecutive and in
# order, where a line `...` (indented or not) stands for any number of lines and a line starting
# `$ ` (the command, with the lines it continues by a backslash) is not output. A marker
# `<!-- example: NAME figures -->` quotes a run measured when the page was written: each number
# in the page's lines (digits, or digits, a point and digits; with a size's K, M or G) stands for
# any number (or size), and each run of spaces for any (columns align to the figures' widths).
# docs_examples.sh checks that every block of the docs that quotes figures is marked, and that
# every marked example is checked by a test.
# (the repository: the first folder above the test script with docs/README.md, found when this
# file is sourced, before a test changes folder)
_fb_repo=$(cd "$(dirname "$0")" 2>/dev/null && pwd)
while [ -n "$_fb_repo" ] && [ "$_fb_repo" != / ] && [ ! -f "$_fb_repo/docs/README.md" ]; do
    _fb_repo=$(dirname "$_fb_repo")
done
[ "$_fb_repo" != / ] || _fb_repo=
doc_example() {
    _page=$_fb_repo/$1
    [ -n "$_fb_repo" ] || { fail "doc_example: the repository was not found above $0"; return; }
    [ -r "$3" ] || { fail "doc_example $1 $2: no output to compare ($3 cannot be read)"; return; }
    _why=$(awk -v name="$2" -v sel="${4:-}" -v page="$1" '
        function rx(s, figs,   out, c, i) {
            out = ""
            for (i = 1; i <= length(s); i++) {
                c = substr(s, i, 1)
                if (figs && c ~ /[0-9]/) {
                    while (substr(s, i + 1, 1) ~ /[0-9]/) i++
                    if (substr(s, i + 1, 2) ~ /^\.[0-9]$/) {
                        i++
                        while (substr(s, i + 1, 1) ~ /[0-9]/) i++
                    }
                    out = out "[0-9]+(\\.[0-9]+)?"
                    # the suffix of a size (4M, 1G) likewise: the sizes follow the machine
                    if (substr(s, i + 1, 1) ~ /[KMG]/ && substr(s, i + 2, 1) !~ /[A-Za-z]/) {
                        i++; out = out "[KMG]?"
                    }
                    continue
                }
                # and the alignment of columns, which follows the widths of the figures
                if (figs && c == " ") {
                    while (substr(s, i + 1, 1) == " ") i++
                    out = out " +"; continue
                }
                if (c ~ /[][\\^$.|?*+(){}]/) out = out "\\" c; else out = out c
            }
            return "^" out "$"
        }
        FNR == NR {
            if (!inb && $0 ~ "^<!-- example: " name "( figures)? -->$") {
                want = 1; figs = ($0 ~ / figures -->$/); next
            }
            if (want && /^```/) { inb = 1; want = 0; next }
            if (inb && /^```/) { inb = 0; done = 1; next }
            if (inb && !done) {
                if (cont || $0 ~ /^\$ /) { cont = ($0 ~ /\\$/); next }
                gap = ($0 ~ /^[ \t]*\.\.\.$/)
                if (sel != "" && !gap && $0 !~ sel) next
                n++; doc[n] = gap ? "..." : $0; pat[n] = gap ? "" : rx($0, figs)
            }
            next
        }
        { out[++m] = $0 }
        END {
            if (!done) { print page ": no block marked <!-- example: " name " -->"; exit }
            if (n == 0) { print page ": example " name " has no line to check"; exit }
            # greedy: each stretch between `...` lines at the first place it fits after the last
            i = 1; pos = 1
            while (i <= n) {
                if (doc[i] == "...") { i++; continue }
                j = i; while (j <= n && doc[j] != "...") j++
                found = 0
                for (s = pos; s + (j - i) - 1 <= m; s++) {
                    ok = 1
                    for (k = i; k < j; k++) if (out[s + k - i] !~ pat[k]) { ok = 0; break }
                    if (ok) { found = 1; pos = s + (j - i); break }
                }
                if (!found) {
                    # name the first line of the stretch the output lacks
                    for (k = i; k < j; k++) {
                        hit = 0
                        for (s = 1; s <= m; s++) if (out[s] ~ pat[k]) hit = 1
                        if (!hit) {
                            print page " example " name ": the tool printed no line like: " doc[k]
                            exit
                        }
                    }
                    print page " example " name ": these lines are not printed together, in this " \
                        "order: " doc[i] " ... " doc[j - 1]
                    exit
                }
                i = j
            }
        }' "$_page" "$3")
    [ -z "$_why" ] || fail "$_why"
}

#!/bin/sh
# Shows that each fuzz test fails when its parser is broken: puts one boundary bug (a read one
# byte past the end, or before the start) into a copy of the sources, rebuilds the fuzz tree,
# and expects tests/fuzz/run.sh to fail for that parser within the normal budget (4 s, the kept
# corpus of tests/data/fuzz read first, as in CI). Not part of CI (it rebuilds once per
# mutant); run by hand: sh tests/fuzz/mutants.sh [WORK_DIR].
# Nothing here touches the working tree: the bugs live only in WORK_DIR/src.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-/tmp/fb-fuzz-mutants}
seconds=${FB_FUZZ_SECONDS:-4}
rm -rf "$work"
mkdir -p "$work/src"
(cd "$top" && git ls-files -z | xargs -0 cp --parents -t "$work/src")
fb=$work/fuzz

# mutant NAME FUZZERS FILE PERL-SUBSTITUTION
mutant() {
    name=$1 fuzzers=$2 file=$work/src/$3 subst=$4
    cp "$file" "$file.orig"
    perl -0pi -e "$subst" "$file"
    if cmp -s "$file" "$file.orig"; then
        echo "MUTANT $name: the substitution did not apply to $3"; status=1
        mv "$file.orig" "$file"; touch "$file"; return
    fi
    for f in $fuzzers; do
        start=$(date +%s)
        FB_FUZZ_ONLY=$f FB_FUZZ_SECONDS=$seconds sh "$work/src/tests/fuzz/run.sh" "$work/src" "$fb" \
            >"$work/$name-$f.txt" 2>&1
        rc=$? took=$(($(date +%s) - start))
        why=$(grep -m1 -o 'ERROR: AddressSanitizer: [a-z-]*\|fuzz check failed.*\|runtime error.*' \
              "$fb/runs/$f.log" 2>/dev/null)
        if [ "$rc" = 1 ]; then
            # the first frame in the mutated file after the report (not libFuzzer's NEW_FUNC lines)
            where=$(sed -n '/ERROR: \|runtime error/,$p' "$fb/runs/$f.log" |
                    grep -m1 -o "in [a-z_]* [^ ]*$(basename "$file"):[0-9]*")
            echo "MUTANT $name: fuzz $f FAILED as it should, in ${took}s (build included): $why $where"
        else
            echo "MUTANT $name: fuzz $f exited $rc: NOT caught (see $work/$name-$f.txt)"; status=1
        fi
    done
    mv "$file.orig" "$file"
    touch "$file" # newer than the mutant's objects, so the next build compiles it again
}

status=0
# units.c: looking for "KiB", a read of p[2] past the end of "4K"
mutant units-kib "units cli" harness/core/units.c \
    's/case .K.: mult = 1ull << 10; p\+\+; break;/case '"'"'K'"'"': mult = 1ull << 10; p += p[2] == '"'"'B'"'"' ? 3 : 1; break;/'
# profile.c: the in-memory reader takes the line end even when the text ended without one
mutant profile-take "profile" harness/analysis/profile.c \
    's/size_t take = len \+ \(ps->text\[len\] == .\\n.\);/size_t take = len + 1;/'
# csv_reader.c (results.csv's reader): "\r\n" looked for one byte too far
mutant results-crlf "results" harness/files/csv_reader.c \
    's/if \(p->pos \+ 1 < p->len && p->buf\[p->pos\] == .\\r./if (p->pos < p->len \&\& p->buf[p->pos] == '"'"'\\r'"'"'/'
# nccl_line.c: the byte before "NCCL version" read when the line starts with it
mutant nccl-version "nccl_line" harness/nccllog/nccl_line.c \
    's/if \(p != line && !strchr\(" :\]>", p\[-1\]\)\)/if (!strchr(" :]>", p[-1]))/'
# mix.c: the writer rounds compute_us to 3 digits, so a mix written back reads differently
mutant mix-format "mix" harness/mix/mix.c 's/" compute_us=%\.17g"/" compute_us=%.3g"/'
# nccl_report.c: the merge compares with the entry before the first
mutant nccl-merge "nccl_log" harness/nccllog/nccl_report.c \
    's/if \(out && conn_cmp\(&r->conns\[out - 1\], c\) == 0\)/if (conn_cmp(\&r->conns[out - 1], c) == 0)/'
# and the unchanged sources pass
FB_FUZZ_SECONDS=$seconds sh "$work/src/tests/fuzz/run.sh" "$work/src" "$fb" >"$work/clean.txt" 2>&1 &&
    echo "unchanged sources: every fuzzer passes" || { echo "unchanged sources FAILED: $work/clean.txt"; status=1; }
exit $status

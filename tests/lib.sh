# Helpers for the shell tests: failures are counted and printed with what was expected.
# Sourced; $MPIEXEC comes from CTest's environment.
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
finish() {
    if [ "$fails" -ne 0 ]; then echo "$fails check(s) failed" >&2; exit 1; fi
    echo "all checks passed"; exit 0
}
mpi() { np=$1; shift; "${MPIEXEC:-mpirun}" --oversubscribe -np "$np" "$@"; }
# csv_col FILE NAME: the 1-based index of a column in a CSV header.
csv_col() { head -n 1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1; }

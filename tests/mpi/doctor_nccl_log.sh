#!/bin/sh
# doctor --nccl-log: NCCL's log judged as checks after the job's own; a FAIL verdict fails
# doctor, a log that cannot be read is bad input (2), a folder without logs is a SKIP.
. "$(dirname "$0")/../lib.sh"
bin=$1 data=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mpi 2 "$bin" doctor --nccl-log "$data/socket_despite_ib.log" >"$work/sock.txt" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "doctor on a sockets-despite-IB log exited $rc, expected 1"
grep -Eq '^PASS +nccl_log +NCCL 2.12.12; 8 connections; intra-node P2P 4; inter-node Socket 4' "$work/sock.txt" ||
    fail "no nccl_log summary: $(cat "$work/sock.txt")"
grep -Eq '^FAIL +nccl_inter +4 of 4 inter-node connections through TCP sockets' "$work/sock.txt" ||
    fail "no FAIL for sockets despite IB: $(cat "$work/sock.txt")"

# a run folder holding rank logs
mkdir "$work/run" && cp "$data/ib_gdr_2node.log" "$work/run/nccl-rank0.log"
mpi 2 "$bin" doctor --nccl-log "$work/run" >"$work/gdr.txt" 2>&1
grep -Eq '^PASS +nccl_gdr ' "$work/gdr.txt" || fail "no PASS for GPUDirect RDMA: $(cat "$work/gdr.txt")"
grep -Eq '^(WARN|FAIL) +nccl_' "$work/gdr.txt" && fail "a healthy log was judged badly: $(cat "$work/gdr.txt")"

mkdir "$work/empty"
mpi 2 "$bin" doctor --nccl-log "$work/empty" >"$work/none.txt" 2>&1
grep -Eq '^SKIP +nccl_log +no nccl-rank\*.log in' "$work/none.txt" || fail "a folder without logs is not a SKIP: $(cat "$work/none.txt")"

mpi 2 "$bin" doctor --nccl-log "$data/malformed.log" >"$work/bad.txt" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "doctor on a malformed log exited $rc, expected 2"
[ "$(grep -c 'error: doctor: --nccl-log: .*malformed.log:4: unknown transport' "$work/bad.txt")" = 1 ] ||
    fail "not one error line naming malformed.log:4: $(cat "$work/bad.txt")"
# refused before the work, like a bad --json: no check printed, no --json written
grep -Eq '^(PASS|WARN|FAIL|SKIP) ' "$work/bad.txt" && fail "a malformed log was refused only after the checks: $(cat "$work/bad.txt")"
mpi 2 "$bin" doctor --json "$work/d.json" --nccl-log "$work/nosuch.log" >"$work/nosuch.txt" 2>&1
rc=$?
[ "$rc" = 2 ] && [ ! -e "$work/d.json" ] && ! grep -Eq '^(PASS|WARN|FAIL|SKIP) ' "$work/nosuch.txt" ||
    fail "doctor with a missing --nccl-log: exit $rc, json: $(ls "$work/d.json" 2>&1), $(head -n 3 "$work/nosuch.txt")"
finish

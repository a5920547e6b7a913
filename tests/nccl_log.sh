#!/bin/sh
# `fabricbench nccl-log` on whole logs: its exit codes (0 no FAIL, 1 a verdict FAILs, 2 bad
# input), its table and verdicts, the InfiniBand faults of NCCL 2.26-2.30 (port error,
# failover, recovery) as FAILs, and bad input - malformed, NUL bytes, empty, missing, a
# folder - answered by one error line naming the file (and line), never a crash.
. "$(dirname "$0")/lib.sh"
bin=$1 data=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() { # EXPECTED_RC ARGS...
    want=$1; shift
    "$bin" nccl-log "$@" >"$work/out" 2>"$work/err"
    rc=$?
    [ "$rc" = "$want" ] || fail "nccl-log $* exited $rc, expected $want: $(cat "$work/err")"
}
has() { grep -q -- "$2" "$work/$1" || fail "$1 of the last run lacks '$2': $(cat "$work/$1")"; }
bad() { # TEXT ARGS...: exit 2, one error line with TEXT, nothing on stdout
    text=$1; shift
    run 2 "$@"
    [ "$(grep -c 'error: ' "$work/err")" = 1 ] || fail "nccl-log $*: not one error line: $(cat "$work/err")"
    has err "$text"
    [ ! -s "$work/out" ] || fail "nccl-log $* printed on stdout: $(cat "$work/out")"
}

run 0 "$data/ib_gdr_2node.log"
has out "^# version: 2.19.3"
has out "^        0      1      2 IB+GDR  inter NET/IB/0/GDRDMA"
has out "intra-node: P2P 4; inter-node: IB+GDR 4"
has out "^PASS nccl_gdr"
[ "$(grep -c '^PASS ' "$work/out")" = 5 ] || fail "ib_gdr_2node: not 5 PASS: $(cat "$work/out")"
has out "^PASS nccl_faults: no InfiniBand port error, fatal event or failed device in the log"
run 0 "$data/shm_single.log"
has out "^WARN nccl_intra: all 8 intra-node connections through shared memory"
run 1 "$data/socket_despite_ib.log"
has out "^FAIL nccl_inter: 4 of 4 inter-node connections through TCP sockets although"
# several files make one report: the FAIL of one is the FAIL of all
run 1 --brief "$data/ib_gdr_2node.log" "$data/socket_despite_ib.log"
has out "# NCCL log: 2 file(s)"
grep -q "^  *0 " "$work/out" && fail "--brief printed the table of connections"
run 0 --json "$data/ring_23.log"
has out '"version":	"2.3.7"'
has out '"check":	"nccl_gdr"'
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/out" 2>/dev/null ||
    { command -v python3 >/dev/null && fail "--json is not JSON: $(cat "$work/out")"; }

# NCCL 2.26-2.30: a port error (2.26's timestamped WARN line), 2.29's failover from a device
# marked as failed, 2.30's recovery: each a FAIL naming the device, and the first fault's time
run 1 "$data/port_error_226.log"
has out "# NCCL log: 1 file(s), 16 lines, 10 of them NCCL's, 1 NCCL WARN"
has out "^# network event: port error, 1 line(s): mlx5_0:1$"
has out "^FAIL nccl_faults: InfiniBand faults during the run: 1 port error(s) (mlx5_0:1) (a port went down: check ibstat and the cable); first: \[2026-03-04 10:11:12\] NET/IB : mlx5_0:1 Got async error event: port error$"
has out "^PASS nccl_inter: 2 inter-node connections"
run 1 "$data/failover_229.log"
has out "^# network: IB; InfiniBand found"
has out "^# DMA-BUF: available on GPU device(s) 0$"
has out "^# network event: device failed, 1 line(s): device 0$"
has out "^# network event: failover, 1 line(s): device 0$"
has out "^FAIL nccl_faults: InfiniBand faults during the run: 1 port error(s) (mlx5_0:1), 1 device(s) marked as failed (device 0), 1 failover(s) of a connection to another device (device 0) (NCCL failed over to its other ports: the run went on with less bandwidth); first: \[2026-03-04 10:20:00\]"
has out "^PASS nccl_gdr: GPUDirect RDMA on all 4 InfiniBand connections (DMA-BUF available)$"
run 1 --json "$data/recovery_230.log"
has out '"network":	"IB"'
has out '"first_fault":	"\[2026-03-04 11:00:00\] NET/IB : mlx5_0:1 Got non-fatal async event: port error(10)"'
has out '"recovered":	{'
has out '"check":	"nccl_faults"'
python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); assert d["events"]["device failed"] == {"lines": 1, "devices": "device 0"}, d["events"]' "$work/out" ||
    { command -v python3 >/dev/null && fail "--json events of recovery_230.log: $(cat "$work/out")"; }

bad "malformed.log:4: unknown transport 'WARP/0'" "$data/malformed.log"
printf 'h:1:1 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\nabc\000def\n' >"$work/nul.log"
bad "nul.log:2: a NUL byte: not a text log" "$work/nul.log"
: >"$work/empty.log"
bad "no NCCL line in '$work/empty.log'" "$work/empty.log"
bad "cannot open '$work/missing.log': No such file or directory" "$work/missing.log"
bad "$work: not a regular file" "$work"
bad "no log file given"
bad "unknown option '--bogus'" --bogus "$data/shm_single.log"
# a missing file among good ones is still bad input
bad "missing.log'" "$data/shm_single.log" "$work/missing.log"
# an empty file among logs with NCCL lines is merely empty
run 0 "$work/empty.log" "$data/shm_single.log"
# docs/nccl-log.md's two examples are these logs' output
run 0 "$data/ib_gdr_2node.log"
doc_example docs/nccl-log.md ib-gdr-2node "$work/out"
run 1 --brief "$data/failover_229.log"
doc_example docs/nccl-log.md failover "$work/out"
# a log's own bytes reach neither the terminal nor --json raw: an escape sequence in a
# transport, a NIC and a WARN's text, a byte that is not UTF-8, shown as \xNN
printf 'h1:1:1 [0] NCCL INFO NCCL version 2.21.5\nh1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\033]0;pwn\007\nh1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5\033[31m_0:1/IB ; OOB eth0\nh1:1:3 [0] misc/ibvwrap.cc:1 NCCL WARN port error \033[2J\377 on mlx5_0:1\n' \
    >"$work/ctl.log"
for opt in "" --json; do
    "$bin" nccl-log $opt "$work/ctl.log" >"$work/out" 2>&1
    LC_ALL=C grep -q "$(printf '[\033\007\377]')" "$work/out" &&
        fail "nccl-log $opt wrote a log's control or non-UTF-8 bytes raw: $(cat -v "$work/out")"
    [ -n "$opt" ] || grep -qF 'P2P/CUMEM\x1b]0;pwn\x07' "$work/out" ||
        fail "nccl-log: the transport is not shown escaped: $(cat -v "$work/out")"
done
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/out" 2>/dev/null ||
    { command -v python3 >/dev/null && fail "--json of ctl.log is not JSON: $(cat -v "$work/out")"; }
finish

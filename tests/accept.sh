# accept end to end on the host backend: a real 2-rank run accepted against a profile whose
# floors sit well below it (exit 0, all PASS/SKIP); the same run with one figure lowered below
# its floor fails on exactly that check (exit 1); the JUnit XML parses and counts right; a
# malformed profile, a malformed results.csv and a missing run folder are exit 2 naming the file.
# usage: accept.sh FABRICBENCH
. "$(dirname "$0")/lib.sh"
fb=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

mpi 2 "$fb" run --backend host --out "$t/run" h2d allreduce --sizes 1M,27872824 --trials 5 \
    >"$t/run.log" 2>&1 || { cat "$t/run.log" >&2; fail "the host run failed"; finish; }

# floors a tenth of what was measured, so noise cannot fail them
ar=$(csv_awk 'v("bench") == "allreduce" && v("case") == "out_of_place" && v("metric") == "busbw" && v("bytes") == 27872824 && v("ranks") == 2 { print v("median") }' "$t/run/results.csv")
h2d=$(csv_awk 'v("bench") == "h2d" && v("case") == "pinned_h2d" && v("metric") == "bandwidth" && v("ranks") == 2 && v("bytes") == 27872824 && v("src") != "" { m = (m == "" || v("median") < m) ? v("median") : m } END { print m }' "$t/run/results.csv")
[ -n "$ar" ] && [ -n "$h2d" ] || { fail "no allreduce/h2d rows to set floors from"; finish; }
cat >"$t/p.ini" <<EOF2
[profile]
name = test-host
[h2d]
min_pinned_gbps_per_gpu_all = $(awk -v x="$h2d" 'BEGIN { print x / 10 }')
[allreduce]
busbw_gbps.1048576.2 = 0.0001
busbw_gbps.27872824.2 = $(awk -v x="$ar" 'BEGIN { print x / 10 }')
busbw_gbps.27872824.4 = 1
[compute]
min_tflops = 0.001
[transports]
intra = p2p
[noise]
max_spread_pct = 100000
EOF2

"$fb" accept --profile "$t/p.ini" --junit "$t/good.xml" "$t/run" >"$t/good.out" 2>&1
rc=$?
[ "$rc" = 0 ] || { cat "$t/good.out" >&2; fail "a run that meets the profile: exit $rc, expected 0"; }
verdict() { awk -v n="$2" '$1 == n { print $2; exit }' "$1"; }
for c in h2d_pinned_all allreduce_busbw.1048576.2 allreduce_busbw.27872824.2 spread; do
    [ "$(verdict "$t/good.out" $c)" = PASS ] || fail "$c: $(verdict "$t/good.out" $c), expected PASS"
done
# not measured: 4 ranks, compute, NCCL logs on the host backend
for c in allreduce_busbw.27872824.4 compute_tflops transport_intra; do
    [ "$(verdict "$t/good.out" $c)" = SKIP ] || fail "$c: $(verdict "$t/good.out" $c), expected SKIP"
done
grep -q "summary: 5 PASS, 0 FAIL, 3 SKIP of 8 checks" "$t/good.out" || fail "summary of the good run: $(grep summary "$t/good.out")"

# the same run with the all-reduce busbw median at 27872824 on 2 ranks lowered below its floor
cp -r "$t/run" "$t/low"
csv_awk 'BEGIN { OFS = "," } { if (v("bench") == "allreduce" && v("case") == "out_of_place" && v("metric") == "busbw" && v("bytes") == 27872824 && v("ranks") == 2) $(col["median"]) = v("median") / 100; print }' \
    "$t/run/results.csv" >"$t/body"
{ head -n 1 "$t/run/results.csv"; cat "$t/body"; } >"$t/low/results.csv"
"$fb" accept --profile "$t/p.ini" --junit "$t/low.xml" "$t/low" >"$t/low.out" 2>&1
rc=$?
[ "$rc" = 1 ] || { cat "$t/low.out" >&2; fail "one figure below its floor: exit $rc, expected 1"; }
[ "$(verdict "$t/low.out" allreduce_busbw.27872824.2)" = FAIL ] || fail "the lowered check did not FAIL"
[ "$(grep -c ' FAIL ' "$t/low.out")" = 1 ] || fail "more than the lowered check failed: $(grep ' FAIL ' "$t/low.out")"
for c in h2d_pinned_all allreduce_busbw.1048576.2 allreduce_busbw.27872824.4 compute_tflops transport_intra; do
    [ "$(verdict "$t/low.out" $c)" = "$(verdict "$t/good.out" $c)" ] || fail "$c changed when only the 27872824 busbw was lowered"
done

# an incomplete run (a timeout, as env.json records it) is not accepted: run_complete FAILs
cp -r "$t/run" "$t/cut"
sed 's/"run_status":[[:space:]]*"complete"/"run_status": "timeout", "run_stop": {"state": "timeout", "detail": "allreduce did not end"}/' \
    "$t/run/env.json" >"$t/cut/env.json"
"$fb" accept --profile "$t/p.ini" "$t/cut" >"$t/cut.out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "an incomplete run: exit $rc, expected 1"
[ "$(verdict "$t/cut.out" run_complete)" = FAIL ] || fail "run_complete of a timed-out run: $(verdict "$t/cut.out" run_complete)"
grep -q "run_status 'timeout': allreduce did not end" "$t/cut.out" || fail "the refusal does not say why: $(grep run_complete "$t/cut.out")"
[ "$(verdict "$t/good.out" run_complete)" = PASS ] || fail "run_complete of the good run: $(verdict "$t/good.out" run_complete)"

# JUnit: well-formed, one testcase per check, the right failures and skips
python3 - "$t/good.xml" "$t/low.xml" <<'PY' || fail "JUnit XML"
import sys, xml.etree.ElementTree as E
for path, fails in ((sys.argv[1], 0), (sys.argv[2], 1)):
    s = E.parse(path).getroot().find("testsuite")
    cases = s.findall("testcase")
    assert s.get("name") == "test-host", s.get("name")
    assert len(cases) == 8 == int(s.get("tests")), (path, len(cases))
    assert cases[0].get("name") == "run_complete", cases[0].get("name")
    f = [c.get("name") for c in cases if c.find("failure") is not None]
    k = [c.get("name") for c in cases if c.find("skipped") is not None]
    assert len(f) == fails == int(s.get("failures")), (path, f)
    assert len(k) == 3 == int(s.get("skipped")), (path, k)
    if fails:
        assert f == ["allreduce_busbw.27872824.2"], f
PY

# the required transports, judged on NCCL's own logs kept in a run folder: a 2-node log with
# P2P inside nodes and InfiniBand with GPUDirect RDMA between them passes intra, inter and
# gdrdma = required; one where NCCL fell back to sockets although it found InfiniBand fails
# transport_inter (and gdrdma), nothing else
logs=$(dirname "$0")/data/nccl
cat >"$t/tp.ini" <<EOF2
[profile]
name = test-transports
[transports]
intra = p2p
inter = ib
gdrdma = required
EOF2
cp -r "$t/run" "$t/ib" && cp "$logs/ib_gdr_2node.log" "$t/ib/nccl-rank0.log"
"$fb" accept --profile "$t/tp.ini" "$t/ib" >"$t/ib.out" 2>&1
rc=$?
[ "$rc" = 0 ] || { cat "$t/ib.out" >&2; fail "IB+GDR log against intra=p2p inter=ib gdr=required: exit $rc"; }
for c in transport_intra transport_inter gdrdma; do
    [ "$(verdict "$t/ib.out" $c)" = PASS ] || fail "IB log: $c is $(verdict "$t/ib.out" $c), expected PASS"
done
cp -r "$t/run" "$t/sock" && cp "$logs/socket_despite_ib.log" "$t/sock/nccl-rank0.log"
"$fb" accept --profile "$t/tp.ini" "$t/sock" >"$t/sock.out" 2>&1
rc=$?
[ "$rc" = 1 ] || { cat "$t/sock.out" >&2; fail "sockets despite IB: exit $rc, expected 1"; }
[ "$(verdict "$t/sock.out" transport_inter)" = FAIL ] || fail "sockets despite IB: transport_inter is $(verdict "$t/sock.out" transport_inter)"
cp "$logs/malformed.log" "$t/sock/nccl-rank0.log"
"$fb" accept --profile "$t/tp.ini" "$t/sock" >"$t/mal.out" 2>&1
[ $? = 2 ] || fail "a malformed NCCL log in the run: expected exit 2: $(cat "$t/mal.out")"
grep -q "nccl-rank0.log:[0-9]" "$t/mal.out" || fail "the malformed log is not named with its line: $(cat "$t/mal.out")"

# bad input: exit 2 naming the file and line
printf '[allreduce]\nbusbw_gbps.27872824.2 = 1\nbogus_key = 3\n' >"$t/bad.ini"
"$fb" accept --profile "$t/bad.ini" "$t/run" >"$t/bad.out" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "malformed profile: exit $rc, expected 2"
grep -q "bad.ini:3: unknown key 'bogus_key'" "$t/bad.out" || fail "malformed profile message: $(cat "$t/bad.out")"
"$fb" accept --profile "$t/p.ini" "$t/nonexistent" >"$t/miss.out" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "missing run folder: exit $rc, expected 2"
grep -q "nonexistent" "$t/miss.out" || fail "missing run folder message: $(cat "$t/miss.out")"
cp -r "$t/run" "$t/broken"
sed -i '3s/,5,/,five,/' "$t/broken/results.csv"
"$fb" accept --profile "$t/p.ini" "$t/broken" >"$t/broken.out" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "malformed results.csv: exit $rc, expected 2"
grep -q "results.csv:3:" "$t/broken.out" || fail "malformed CSV message: $(cat "$t/broken.out")"
printf '{"ranks": [\n  oops\n' >"$t/broken/env.json"
cp "$t/run/results.csv" "$t/broken/results.csv"
"$fb" accept --profile "$t/p.ini" "$t/broken" >"$t/env.out" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "malformed env.json: exit $rc, expected 2"
grep -q "env.json:2:" "$t/env.out" || fail "malformed env.json message: $(cat "$t/env.out")"
"$fb" accept --profile "$t/p.ini" >/dev/null 2>&1
[ $? = 2 ] || fail "no run folder given: expected exit 2"
# [noise] max_cpu_wait_pct: the largest cpu_wait of every timed row, at most the limit. The run's
# rows with their waits set by hand (one at 0.300, the rest at 0.020): PASS at 50 %, FAIL at 10 %
# naming that row; a run without the column is a SKIP that says so.
cp -r "$t/run" "$t/waited"
csv_awk 'BEGIN { OFS = "," } NR == 2 { $(col["cpu_wait"]) = "0.300"; print; next }
    { if (v("cpu_wait") != "") $(col["cpu_wait"]) = "0.020"; print }' "$t/run/results.csv" >"$t/waited/body"
{ head -n 1 "$t/run/results.csv"; cat "$t/waited/body"; } >"$t/waited/results.csv" && rm "$t/waited/body"
for lim in 50 10; do
    printf '[profile]\nname = quiet\n[noise]\nmax_cpu_wait_pct = %s\n' $lim >"$t/q$lim.ini"
    "$fb" accept --profile "$t/q$lim.ini" "$t/waited" >"$t/q$lim.out" 2>&1
    echo "rc=$?" >>"$t/q$lim.out"
done
grep -q "^cpu_wait *PASS *30 % *<= 50 %" "$t/q50.out" && grep -q "^rc=0" "$t/q50.out" ||
    fail "cpu_wait under 50 %: $(cat "$t/q50.out")"
grep -q "^cpu_wait *FAIL *30 % *<= 10 %.*results.csv:2 (a rank of " "$t/q10.out" &&
    grep -q "a rank waited for a CPU 30 % of a point's time > 10 %: other work shared the node's CPUs" "$t/q10.out" &&
    grep -q "^rc=1" "$t/q10.out" || fail "cpu_wait over 10 %: $(cat "$t/q10.out")"
cut -d, -f1-29 "$t/run/results.csv" >"$t/waited/results.csv"
"$fb" accept --profile "$t/q10.ini" "$t/waited" >"$t/qold.out" 2>&1
grep -q "^cpu_wait *SKIP" "$t/qold.out" && grep -q "results.csv has no cpu_wait" "$t/qold.out" ||
    fail "cpu_wait on a run without the column: $(cat "$t/qold.out")"
printf '[profile]\nname = q\n[noise]\nmax_cpu_wait_pct = 101\n' >"$t/q101.ini"
"$fb" accept --profile "$t/q101.ini" "$t/run" >"$t/q101.out" 2>&1
[ $? = 2 ] && grep -q "q101.ini:4: .*max_cpu_wait_pct = '101': a percentage of a point's time, 0 to 100" "$t/q101.out" ||
    fail "max_cpu_wait_pct = 101: $(cat "$t/q101.out")"

# a name that is no shipped profile: the message names where it looked, and points at a
# NAME.ini in the current folder by its path (accept.md)
(cd "$t" && cp p.ini mysite.ini && "$fb" accept --profile mysite run) >"$t/name.out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "no profile named 'mysite' in .*share/fabricbench/profiles (profiles there: .*host-ci.*), nor a file or folder 'mysite' here; for the file here, give its path: './mysite.ini'" "$t/name.out" ||
    fail "an unknown profile name beside NAME.ini: exit $rc: $(cat "$t/name.out")"
# the shipped host profile accepts this run too (the README's example)
"$fb" accept --profile "$(dirname "$0")/../profiles/host-ci.ini" "$t/run" >"$t/ci.out" 2>&1 ||
    { cat "$t/ci.out" >&2; fail "profiles/host-ci.ini does not accept a host run"; }
finish

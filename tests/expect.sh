#!/bin/sh
# `fabricbench expect` and the model's figures in a run, on the machines described in
# tests/data/machines (FB_SYSFS_ROOT), 2 ranks on this host (docs/expected.md):
#  - expect prints each NIC with its payload rate, marks the one traffic between nodes takes
#    (the ACTIVE EDR port over the 10 GbE one), each GPU's PCIe link and copy figure, and what
#    could not be read; on the C4140 K tree, the four GPUs' share of the one x16 link above
#    their switch when they copy at once;
#  - a site file (FB_EXPECT_EFFICIENCY) changes the figures; a bad one is one line naming
#    file:line and exit 2, for expect and for run, and run then creates no run folder;
#  - a run whose ranks share one host gets no expected figure between its "nodes"
#    (FB_TEST_RANKS_PER_NODE=1 pretends two nodes on one host), and accept without a profile
#    then says, in a SKIP, that nothing had one;
#  - compare between two machines says whether a change is what their hardware says;
#  - bad options exit 2 with one line.
# (Figures between real hosts: tests/cluster/fabric.sh bandwidth.)
# usage: expect.sh FABRICBENCH MACHINES
. "$(dirname "$0")/lib.sh"
bin=$1 machines=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

FB_SYSFS_ROOT=$machines/c4140-m mpi 2 "$bin" expect --backend host >m.txt 2>m.err ||
    fail "expect exited $?: $(tail -n 3 m.err)"
grep -q "NIC IB 100 Gb/s mlx5_0/1 .*ACTIVE: payload 12 GB/s per direction  <- between nodes$" m.txt ||
    fail "expect does not take the EDR port at 12 GB/s: $(grep NIC m.txt)"
grep -q "NIC eth 10 Gb/s eno1 .*MTU 1500, up: payload 1.177 GB/s per direction$" m.txt ||
    fail "expect does not show the 10 GbE port at 1.177 GB/s: $(grep NIC m.txt)"
[ "$(grep -c '^  GPU PCIe Gen3 x16 (GPU 0000:1[acde]:00.0): host-device copies 12.45 GB/s$' m.txt)" = 4 ] ||
    fail "expect does not show the four Gen3 x16 GPUs at 12.45 GB/s: $(grep GPU m.txt)"
grep -q "ib0" m.txt && fail "expect lists IPoIB's ib0 as a NIC of its own"
grep -q "^efficiencies: ib 0.96 pcie_copy 0.79 nvlink 0.958 (defaults)$" m.txt ||
    fail "expect's efficiencies line: $(grep efficiencies m.txt)"
# what the model does not cover is said, not left to guess
grep -q "^not modelled (their rows have no expected figure): NVLink and a GPU's peak (NVML is not read yet), " m.txt ||
    fail "expect does not say what it does not model: $(tail -n 2 m.txt)"

# C4140 K: four GPUs behind one switch on one Gen3 x16 link from root port 0000:00:03.0
FB_SYSFS_ROOT=$machines/c4140-k mpi 2 "$bin" expect --backend host >k.txt 2>&1 || fail "expect on c4140-k exited $?"
[ "$(grep -c '^  GPU PCIe Gen3 x16 (GPU 0000:0[3-6]:00.0): host-device copies 12.45 GB/s alone; 3.111 GB/s each with the 4 GPUs behind root port 0000:00:03.0 at once (PCIe Gen3 x16 uplink 0000:00:03.0 / 4 GPUs)$' k.txt)" = 4 ] ||
    fail "expect does not show the K's four GPUs sharing one x16 link: $(grep GPU k.txt)"

# a site file: InfiniBand at half its rate
printf '# site\nib = 0.5\n' >site.eff
FB_EXPECT_EFFICIENCY=$PWD/site.eff FB_SYSFS_ROOT=$machines/c4140-m mpi 2 "$bin" expect --backend host >s.txt 2>&1 ||
    fail "expect with a site file exited $?"
grep -q "mlx5_0/1 .*payload 6.25 GB/s" s.txt || fail "the site file's ib = 0.5 did not apply: $(grep NIC s.txt)"
grep -q "(site file: \$FB_EXPECT_EFFICIENCY)" s.txt || fail "expect does not say the site file applies"
printf 'ib = 0.5\nnvlnk = 0.9\n' >bad.eff
FB_EXPECT_EFFICIENCY=$PWD/bad.eff mpi 2 "$bin" expect --backend host >b.txt 2>b.err
rc=$?
[ "$rc" = 2 ] || fail "expect with a bad site file exited $rc, expected 2"
[ "$(grep -c 'error: ' b.err)" = 1 ] && grep -q "FB_EXPECT_EFFICIENCY: $PWD/bad.eff:2: unknown efficiency 'nvlnk'" b.err ||
    fail "expect's bad site file line: $(cat b.err)"
FB_EXPECT_EFFICIENCY=$PWD/bad.eff mpi 2 "$bin" run h2d --backend host --sizes 1M --trials 3 --quiet --out run_bad >r.txt 2>r.err
rc=$?
[ "$rc" = 2 ] || fail "run with a bad site file exited $rc, expected 2"
[ "$(grep -c 'error: ' r.err)" = 1 ] && grep -q "bad.eff:2: unknown efficiency" r.err || fail "run's bad site file line: $(cat r.err)"
[ ! -e run_bad ] || fail "run with a bad site file left a run folder"

# two pretend nodes on one host: no NIC between them, so no expected figure
FB_TEST_RANKS_PER_NODE=1 FB_SYSFS_ROOT=$machines/c4140-m mpi 2 "$bin" run p2p --backend host --sizes 1M \
    --matrix-bytes 64K --latency-bytes 8 --trials 3 --quiet --out one_host >o.txt 2>&1 ||
    fail "run on pretend nodes exited $?: $(tail -n 3 o.txt)"
[ "$(csv_awk 'v("expected") != "" { n++ } END { print n + 0 }' one_host/results.csv)" = 0 ] ||
    fail "rows between two ranks of one host got an expected figure"
[ "$(csv_awk 'v("link") == "network" && v("metric") == "bandwidth" { n++ } END { print n + 0 }' one_host/results.csv)" -gt 0 ] ||
    fail "the pretend nodes' rows are not labelled network (the case this checks is not there)"
"$bin" accept one_host >a.txt 2>&1
rc=$?
[ "$rc" = 0 ] || fail "accept without a profile exited $rc: $(tail -n 3 a.txt)"
grep -q "^expected  *SKIP" a.txt && grep -q "no row of results.csv has an expected figure" a.txt ||
    fail "accept without a profile does not say that no row had an expected figure: $(cat a.txt)"

# compare between two machines says whether a change is what their hardware says: a link
# described at 3.2 Gb/s against one at 800 Mb/s, measured a quarter as fast, is "as the hardware
# says"; measured the same, "worse than" (hand-made rows with the model's columns)
h="run_id,bench,case,backend,transport,link,nodes,ranks,src,dst,batch,bytes,count,dtype,redop,iters,metric,unit,samples,median,p05,p95,min,max,mean,stddev,wrong,expected,bound"
mkdir fast slow same
printf '%s\nfast,p2p,sweep_uni,host,mpi,network,2,2,0,1,,67108864,,,,2,bandwidth,GB/s,5,0.376,0.375,0.377,0.37,0.38,0.376,0.001,0,0.3766,eth 3.2 Gb/s fbv0\n' "$h" >fast/results.csv
printf '%s\nslow,p2p,sweep_uni,host,mpi,network,2,2,0,1,,67108864,,,,2,bandwidth,GB/s,5,0.094,0.0939,0.0941,0.093,0.095,0.094,0.0001,0,0.0941482,eth 800 Mb/s fbv0\n' "$h" >slow/results.csv
printf '%s\nsame,p2p,sweep_uni,host,mpi,network,2,2,0,1,,67108864,,,,2,bandwidth,GB/s,5,0.376,0.375,0.377,0.37,0.38,0.376,0.001,0,0.0941482,eth 800 Mb/s fbv0\n' "$h" >same/results.csv
"$bin" compare --machines --out cmp1 fast slow >c1.txt 2>&1 || fail "compare fast slow exited $?: $(tail -n 3 c1.txt)"
grep -q "expected -75.0% (eth 3.2 Gb/s fbv0 vs eth 800 Mb/s fbv0): as the hardware says |$" cmp1/compare.md ||
    fail "compare.md does not say the change is as the hardware says: $(grep sweep_uni cmp1/compare.md)"
"$bin" compare --machines --out cmp2 fast same >c2.txt 2>&1 || fail "compare fast same exited $?: $(tail -n 3 c2.txt)"
grep -q "expected -75.0% (eth 3.2 Gb/s fbv0 vs eth 800 Mb/s fbv0): better than the hardware says |$" cmp2/compare.md ||
    fail "compare.md does not say the second machine does better than its hardware says: $(grep sweep_uni cmp2/compare.md)"

# accept judges each series at its largest size alone: at 1 MiB the pair reads 50% of its
# expected figure, at 4 MiB 95%; one check, a PASS at 4 MiB
mkdir sizes
{ echo "$h"
  echo "sizes,p2p,sweep_uni,host,mpi,network,2,2,0,1,,1048576,,,,2,bandwidth,GB/s,5,0.0471,0.047,0.048,0.046,0.049,0.0471,0.001,0,0.0941482,eth 800 Mb/s fbv0"
  echo "sizes,p2p,sweep_uni,host,mpi,network,2,2,0,1,,4194304,,,,2,bandwidth,GB/s,5,0.0894,0.089,0.09,0.088,0.091,0.0894,0.001,0,0.0941482,eth 800 Mb/s fbv0"
} >sizes/results.csv
"$bin" accept sizes >sz.txt 2>&1
rc=$?
[ "$rc" = 0 ] || fail "accept of a series passing at its largest size exited $rc: $(grep expected sz.txt)"
[ "$(grep -c '^expected\.' sz.txt)" = 1 ] && grep -q '^expected\.p2p\.sweep_uni\.0>1 *PASS *0.0894 GB/s (95% of expected)' sz.txt ||
    fail "accept does not judge the series once, at 4 MiB: $(grep '^expected' sz.txt)"

mpi 2 "$bin" expect --bogus >x.txt 2>x.err
rc=$?
[ "$rc" = 2 ] && [ "$(grep -c 'error: ' x.err)" = 1 ] && grep -q "expect: unknown option '--bogus'" x.err ||
    fail "expect --bogus: exit $rc, $(cat x.err)"
finish

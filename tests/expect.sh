#!/bin/sh
# `fabricbench expect` and the model's figures in a run, on the machines described in
# tests/data/machines (FB_SYSFS_ROOT), 2 ranks on this host (docs/expected.md):
#  - expect prints each NIC with its payload rate, marks the one traffic between nodes takes
#    (the ACTIVE EDR port over the 10 GbE one), each GPU's PCIe link and copy figure, and what
#    could not be read; on the C4140 K tree, the four GPUs' share of the one x16 link above
#    their switch when they copy at once;
#  - a site file (FB_EXPECT_EFFICIENCY) changes the figures; a bad one is one line naming
#    file:line and exit 2, for expect and for run, and run then creates no run folder;
#  - a node whose NIC has no rate leaves the path to it and the ring unknown;
#  - a run whose ranks share one host gets no expected figure between its "nodes"
#    (FB_TEST_RANKS_PER_NODE=1 pretends two nodes on one host), and accept without a profile
#    then says, in a SKIP, that nothing had one;
#  - compare between two machines says whether a change is what their hardware says;
#  - GPU pairs and the NCCL ring: PCIe by socket without NVML, NVLink from a facts file
#    (FB_NVML_FACTS) in its place, a bad facts file refused (one too large beside the node's own
#    GPUs too); a run's IPC rows get their pair's
#    figure (FB_TEST_GPU_BUSES stands ranks on described GPUs);
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
grep -q "^efficiencies: ib 0.96 pcie_copy 0.79 nvlink 0.958 nvlink_ring 0.822 (defaults)$" m.txt ||
    fail "expect's efficiencies line: $(grep efficiencies m.txt)"
# what the model does not cover is said, not left to guess
grep -q "^not modelled (their rows have no expected figure): GPU copies across NUMA nodes " m.txt ||
    fail "expect does not say what it does not model: $(tail -n 2 m.txt)"

# the host backend's copies: a memcpy calibration per rank, past the last-level cache (none, said,
# where the cache is not known or the buffers would take too much of the node's memory: a run's
# env.json below says whether hwloc knew it)
no_cal=$(sed -n 's/.*no memcpy calibration (\(.*\)): the host backend.*/\1/p' m.err)
if [ -n "$no_cal" ]; then
    echo "this machine: no calibration, as said: $no_cal"
else
    [ "$(grep -Ec '^  rank [01] on .*: [0-9.]+ alone, [0-9.]+ with all 2 rank\(s\) at once \(memcpy calibration [0-9]+ MiB best of 5\)$' m.txt)" = 2 ] ||
        fail "expect does not list both ranks' memcpy calibration: $(grep -A3 'host backend copies' m.txt)"
fi
# where each NIC sits: the M's EDR HCA on NUMA node 0 (near GPUs 1a and 1c); GPUDirect RDMA's
# module; the K's HCA behind the GPUs' switch
[ "$(grep -c '^    near NICs: IB 100 Gb/s mlx5_0/1 (on its NUMA node)$' m.txt)" = 2 ] &&
    [ "$(grep -c '^    near NICs: none behind its switch or on its NUMA node$' m.txt)" = 2 ] ||
    fail "expect's NICs near the M's GPUs: $(grep 'near NICs' m.txt)"
grep -q "^  GPUDirect RDMA: nvidia_peermem loaded (NICs reach GPU memory)$" m.txt || fail "expect's GPUDirect RDMA: $(grep GPUDirect m.txt)"
# without NVML (none here, nor a facts file): GPU pairs over PCIe, 1a and 1c on NUMA node 0,
# 1d on node 1; NVML's absence is said
grep -q "^    0000:1a:00.0 <-> 0000:1c:00.0: 12.45, bound PCIe Gen3 x16 root complex$" m.txt ||
    fail "expect's PCIe pair inside a socket: $(grep '<->' m.txt)"
grep -q "^    0000:1a:00.0 <-> 0000:1d:00.0: not determined (across NUMA nodes: the inter-socket link's rate is not in sysfs)$" m.txt ||
    fail "expect's pair across sockets: $(grep '<->' m.txt)"
grep -q "^  NCCL collectives over its 4 GPUs: not determined" m.txt || fail "expect's ring without NVLink: $(grep NCCL m.txt)"
# (no NVML here: said once; on a machine with NVML these described GPUs are unknown to it)
grep -Eq "not determined: .*(GPU names and NVLinks: no NVML|GPU 0000:1a:00.0: not known to NVML)" m.txt ||
    fail "expect does not say what NVML did not give: $(grep 'not determined:' m.txt)"
# with a facts file in NVML's place: NV2 between every pair of V100s
FB_NVML_FACTS=$machines/c4140-m/nvml.txt FB_SYSFS_ROOT=$machines/c4140-m mpi 2 "$bin" expect --backend host >n.txt 2>&1 ||
    fail "expect with FB_NVML_FACTS exited $?: $(tail -n 3 n.txt)"
doc_example docs/expected.md expect-c4140-m n.txt
[ "$(grep -c '^    0000:1[acde]:00.0 <-> 0000:1[cde]:00.0: 47.9, bound NVLink2 x2$' n.txt)" = 6 ] ||
    fail "expect's NVLink pairs: $(grep '<->' n.txt)"
grep -q "^    Tesla V100-SXM2-32GB, NVLink2: 2 to 0000:1c:00.0 2 to 0000:1d:00.0 2 to 0000:1e:00.0$" n.txt ||
    fail "expect's NVLinks of GPU 1a: $(grep NVLink2: n.txt)"
[ "$(grep -c '^    datasheet peaks: fp32 15.7, fp16 and bf16 125 TFLOP/s (compute.s whole-step rows show their share; not judged)$' n.txt)" = 4 ] ||
    fail "expect's V100-SXM2 peaks: $(grep peaks n.txt)"
grep -q "^  NCCL collectives over its 4 GPUs: busbw 123.3 GB/s, bound NVLink2 x6 (GPU 0000:1a:00.0)$" n.txt ||
    fail "expect's NVLink ring: $(grep NCCL n.txt)"
grep -q "no NVML" n.txt && fail "expect asked NVML though a facts file was given"
# the job's own ring: two ranks on GPUs 1a and 1d (FB_TEST_GPU_BUSES), two NVLinks between them
FB_TEST_GPU_BUSES=0000:1a:00.0,0000:1d:00.0 FB_NVML_FACTS=$machines/c4140-m/nvml.txt FB_SYSFS_ROOT=$machines/c4140-m \
    mpi 2 "$bin" expect --backend host >g.txt 2>&1 || fail "expect on described GPUs exited $?: $(tail -n 3 g.txt)"
grep -q "^NCCL collectives over all 2 ranks: busbw 41.1 GB/s, bound NVLink2 x2 (GPU 0000:1a:00.0) (the ring's slowest hop, each node's GPUs and NICs)$" g.txt ||
    fail "expect's ring over the job's ranks: $(grep 'NCCL collectives over all' g.txt)"
grep -q "NCCL collectives over all" n.txt && fail "expect gave the job's ring to ranks with no GPU"
# a bad facts file: one line naming file:line, exit 2, for expect and run (no run folder)
printf 'gpu 0000:1a:00.0 V100\nnvlink 0000:1a:00.0 0000:1c:00.0 40\n' >bad.nvml
FB_NVML_FACTS=$PWD/bad.nvml mpi 2 "$bin" expect --backend host >bn.txt 2>bn.err
rc=$?
[ "$rc" = 2 ] && [ "$(grep -c 'error: ' bn.err)" = 1 ] && [ ! -s bn.txt ] &&
    grep -q "FB_NVML_FACTS: $PWD/bad.nvml:2: a link count from 1 to 18 is needed" bn.err ||
    fail "expect with a bad facts file: exit $rc, $(cat bn.err)"
# a facts file whose GPUs fit alone but not beside the node's own (sysfs's four GPUs of the K
# and 13 more): refused before anything runs, not dropped when the run loads it
for i in $(seq 32 44); do printf 'gpu 0000:%02x:00.0 Tesla V100-SXM2-32GB\n' "$i"; done >many.nvml
printf 'gpu 0000:03:00.0 Tesla V100-SXM2-32GB\nnvlink 0000:03:00.0 0000:04:00.0 2\n' >>many.nvml
FB_NVML_FACTS=$PWD/many.nvml FB_SYSFS_ROOT=$machines/c4140-k mpi 2 "$bin" expect --backend host >mn.txt 2>mn.err
rc=$?
[ "$rc" = 2 ] && [ "$(grep -c 'error: ' mn.err)" = 1 ] &&
    grep -q "FB_NVML_FACTS: $PWD/many.nvml:13: more GPUs than the model holds (16)" mn.err ||
    fail "expect with a facts file too large beside sysfs's GPUs: exit $rc, $(cat mn.err)"
# a description named but not there: one line and exit 2, for expect and run (no run folder),
# not a machine with nothing in it
FB_SYSFS_ROOT=$PWD/nosuch mpi 2 "$bin" expect --backend host >ns.txt 2>ns.err
rc=$?
[ "$rc" = 2 ] && [ "$(grep -c 'error: ' ns.err)" = 1 ] &&
    grep -q "FB_SYSFS_ROOT: cannot open '$PWD/nosuch'" ns.err || fail "expect with no sysfs tree: exit $rc, $(cat ns.err)"
FB_SYSFS_ROOT=$PWD/nosuch mpi 2 "$bin" run h2d --backend host --sizes 1M --trials 3 --quiet --out run_nosys >ns.txt 2>ns.err
rc=$?
[ "$rc" = 2 ] && [ ! -e run_nosys ] && [ "$(grep -c 'error: ' ns.err)" = 1 ] ||
    fail "run with no sysfs tree: exit $rc, $(cat ns.err)"
# the tree missing on one node alone (rank 1's): every rank stops, rank 0 says rank 1's line
# once, naming it (not rank 1 gone and rank 0 waiting for it)
timeout 60 "${MPIEXEC:-mpirun}" --oversubscribe -np 1 -x FB_SYSFS_ROOT="$machines/eth-10g" "$bin" expect \
    --backend host : -np 1 -x FB_SYSFS_ROOT="$PWD/nosuch" "$bin" expect --backend host >ns.txt 2>ns.err
rc=$?
[ "$rc" = 2 ] && [ "$(grep -c 'error: ' ns.err)" = 1 ] &&
    grep -q "error: rank 1 on [^:]*: FB_SYSFS_ROOT: cannot open '$PWD/nosuch'" ns.err ||
    fail "expect with no sysfs tree on rank 1 alone: exit $rc, $(cat ns.err)"
# one node's NIC without a rate: the path between the two nodes and the ring over them are not
# determined (a path is as fast as its slowest hop), not the other node's figure
cp -R "$machines/eth-10g" norate && echo -1 >norate/class/net/eno1/speed
FB_TEST_RANKS_PER_NODE=1 "${MPIEXEC:-mpirun}" --oversubscribe -np 1 -x FB_SYSFS_ROOT="$machines/eth-10g" \
    "$bin" expect --backend host : -np 1 -x FB_SYSFS_ROOT="$PWD/norate" "$bin" expect --backend host \
    >nr.txt 2>&1 || fail "expect over a node without a NIC rate exited $?: $(tail -n 3 nr.txt)"
grep -q "<-> .*: not determined (no NIC with a rate on one side)$" nr.txt &&
    grep -q "^all-reduce busbw, one rank a node: not determined (a node's NIC has no rate)$" nr.txt ||
    fail "a node without a NIC rate still gave a figure between the nodes: $(grep -e '<->' -e 'one rank a node' nr.txt)"
FB_NVML_FACTS=$PWD/bad.nvml mpi 2 "$bin" run h2d --backend host --sizes 1M --trials 3 --quiet --out run_badnv >r.txt 2>r.err
rc=$?
[ "$rc" = 2 ] && [ ! -e run_badnv ] && grep -q "bad.nvml:2: a link count" r.err ||
    fail "run with a bad facts file: exit $rc, $(cat r.err)"
# a run's IPC rows between two ranks' GPUs (the test hook FB_TEST_GPU_BUSES stands the two
# ranks on GPUs 1a and 1d of the description): NVLink with the facts; nothing across the
# sockets without them; MPI's and staged rows never
FB_TEST_GPU_BUSES=0000:1a:00.0,0000:1d:00.0 FB_NVML_FACTS=$machines/c4140-m/nvml.txt FB_SYSFS_ROOT=$machines/c4140-m \
    mpi 2 "$bin" run p2p --backend host --sizes 1M --matrix-bytes 1M --latency-bytes 8 --trials 3 --quiet --out pairs >p.txt 2>&1 ||
    fail "run p2p with described GPUs exited $?: $(tail -n 3 p.txt)"
[ "$(csv_awk 'v("transport") == "ipc" && v("case") ~ /_uni$/ && v("metric") == "bandwidth" && v("expected") == "47.9" && v("bound") == "NVLink2 x2" { n++ } END { print n + 0 }' pairs/results.csv)" = 3 ] ||
    fail "p2p's IPC one-way rows do not get the NVLink pair's 47.9 GB/s: $(csv_awk 'v("expected") != "" { print v("case"), v("transport"), v("expected"), v("bound") }' pairs/results.csv)"
[ "$(csv_awk 'v("bench") == "p2p" && v("transport") != "ipc" && v("expected") != "" { n++ } END { print n + 0 }' pairs/results.csv)" = 0 ] ||
    fail "p2p rows over MPI or staged copies got an expected figure"
# expect read the cache as run does: "not known" only where the run's hwloc knew none either
llc=$(json_field pairs/env.json host.llc_bytes)
case $no_cal in
*"not known"*) [ "${llc:-0}" = 0 ] || fail "expect says the last-level cache is not known; run's env.json has $llc bytes" ;;
esac
# a run whose h2d copies nothing as large as the rows the calibration judges runs none, and
# says why (its copies would be for nothing)
if [ "${llc:-0}" != 0 ]; then
    mpi 2 "$bin" run h2d --backend host --max-bytes 1M --trials 3 --out small >sm.txt 2>&1 ||
        fail "run h2d --max-bytes 1M exited $?: $(tail -n 3 sm.txt)"
    grep -q "expected figures: no memcpy calibration (h2d copies 1M at most; its host rows are judged from [0-9]*[MG], twice" sm.txt &&
        ! grep -q "memcpy calibrated" sm.txt ||
        fail "a run of small h2d copies calibrated, or did not say why not: $(grep -i calibrat sm.txt)"
fi
[ "$(csv_awk 'v("transport") == "ipc" && v("case") == "matrix_bidir" && v("metric") == "bandwidth_total" && v("expected") == "95.8" && v("bound") == "NVLink2 x2 both ways" { n++ } END { print n + 0 }' pairs/results.csv)" = 1 ] ||
    fail "p2p's IPC both-ways total does not get twice the pair's figure: $(csv_awk 'v("case") == "matrix_bidir" { print v("transport"), v("metric"), v("expected"), v("bound") }' pairs/results.csv)"
# two GPUs described on PCIe Gen1 x1 links (0.1975 GB/s between them): any memcpy reaches that,
# and the matrix says every pair did
for g in 0000:01:00.0 0000:02:00.0; do
    d=slow_sysfs/bus/pci/devices/$g
    mkdir -p "$d"
    echo 0x10de >"$d/vendor"; echo 0x030200 >"$d/class"; echo 0 >"$d/numa_node"
    echo "2.5 GT/s PCIe" >"$d/current_link_speed"; echo 1 >"$d/current_link_width"
done
FB_TEST_GPU_BUSES=0000:01:00.0,0000:02:00.0 FB_SYSFS_ROOT=$PWD/slow_sysfs \
    mpi 2 "$bin" run p2p --backend host --sizes 1M --matrix-bytes 1M --latency-bytes 8 --trials 3 --quiet --out slow >sl.txt 2>&1 ||
    fail "run p2p on slow described links exited $?: $(tail -n 3 sl.txt)"
grep -q "^# every pair with an expected figure (2) reached 80% of it or more$" sl.txt ||
    fail "the IPC matrix does not say its pairs reached their expected figure: $(grep -A6 'matrix_uni over ipc' sl.txt)"
[ "$(csv_awk 'v("case") == "matrix_uni" && v("transport") == "ipc" && v("bound") == "PCIe Gen1 x1 root complex" { n++ } END { print n + 0 }' slow/results.csv)" = 2 ] ||
    fail "the Gen1 x1 pair's bound: $(csv_awk 'v("expected") != "" { print v("case"), v("transport"), v("expected"), v("bound") }' slow/results.csv)"
# described with 18 links between them (431 GB/s), the memcpy falls short: the matrix marks the
# pair against its own link, not against the median pair
printf 'gpu 0000:1a:00.0 Tesla V100-SXM2-32GB\ngpu 0000:1d:00.0 Tesla V100-SXM2-32GB\nnvlink 0000:1a:00.0 0000:1d:00.0 18\n' >wide.nvml
FB_TEST_GPU_BUSES=0000:1a:00.0,0000:1d:00.0 FB_NVML_FACTS=$PWD/wide.nvml FB_SYSFS_ROOT=$machines/c4140-m \
    mpi 2 "$bin" run p2p --backend host --sizes 1M --matrix-bytes 1M --latency-bytes 8 --trials 3 --quiet --out wide >w.txt 2>&1 ||
    fail "run p2p with 18 described links exited $?: $(tail -n 3 w.txt)"
[ "$(grep -c '^# short of its own link: [01]>[01] .* of the 431.1 GB/s NVLink2 x18 allows  <--$' w.txt)" = 2 ] ||
    fail "the IPC matrix does not mark both pairs short of their 18 links: $(grep -A8 'matrix_uni over ipc' w.txt)"
FB_TEST_GPU_BUSES=0000:1a:00.0,0000:1d:00.0 FB_SYSFS_ROOT=$machines/c4140-m \
    mpi 2 "$bin" run p2p --backend host --sizes 1M --matrix-bytes 1M --latency-bytes 8 --trials 3 --quiet --out pairs2 >p2.txt 2>&1 ||
    fail "run p2p with described GPUs, no facts, exited $?: $(tail -n 3 p2.txt)"
[ "$(csv_awk 'v("bench") == "p2p" && v("expected") != "" { n++ } END { print n + 0 }' pairs2/results.csv)" = 0 ] ||
    fail "a pair across NUMA nodes got an expected figure"

# C4140 K: four GPUs behind one switch on one Gen3 x16 link from root port 0000:00:03.0
FB_SYSFS_ROOT=$machines/c4140-k mpi 2 "$bin" expect --backend host >k.txt 2>&1 || fail "expect on c4140-k exited $?"
[ "$(grep -c '^  GPU PCIe Gen3 x16 (GPU 0000:0[3-6]:00.0): host-device copies 12.45 GB/s alone; 3.111 GB/s each with the 4 GPUs behind root port 0000:00:03.0 at once (PCIe Gen3 x16 uplink 0000:00:03.0 / 4 GPUs)$' k.txt)" = 4 ] ||
    fail "expect does not show the K's four GPUs sharing one x16 link: $(grep GPU k.txt)"
[ "$(grep -c '^    near NICs: IB 100 Gb/s mlx5_0/1 (behind its PCIe switch)$' k.txt)" = 4 ] ||
    fail "expect's NIC behind the K's switch: $(grep 'near NICs' k.txt)"
grep -q "^  GPUDirect RDMA: no nvidia_peermem or nv_peer_mem module (NCCL stages GPU data through host memory between nodes)$" k.txt ||
    fail "expect's missing GPUDirect RDMA: $(grep GPUDirect k.txt)"

# the compute stand-in on a described V100-SXM2 (FB_TEST_GPU_BUSES; the host runs fp32): its
# whole-step rows show their share of the datasheet's 15.7 TFLOP/s, which accept and summary.md
# do not judge
FB_TEST_GPU_BUSES=0000:1a:00.0 FB_NVML_FACTS=$machines/c4140-m/nvml.txt FB_SYSFS_ROOT=$machines/c4140-m \
    mpi 1 "$bin" run compute --backend host --trials 2 --out peak >pk.txt 2>&1 || fail "run compute exited $?: $(tail -n 3 pk.txt)"
[ "$(csv_awk 'v("metric") == "tflops" && v("case") ~ /^step_/ && v("expected") == "15.7" && v("bound") == "peak V100-SXM2 fp32 15.7 TFLOP/s" { n++ } END { print n + 0 }' peak/results.csv)" = 3 ] ||
    fail "compute's whole-step rows do not get the V100-SXM2's fp32 peak: $(csv_awk 'v("metric") == "tflops" && v("case") ~ /^step_/ { print v("case"), v("transport"), v("expected"), v("bound") }' peak/results.csv)"
[ "$(csv_awk 'v("case") ~ /^(fwd|bwd)_/ && v("expected") != "" { n++ } END { print n + 0 }' peak/results.csv)" = 0 ] ||
    fail "compute's per-group rows got a peak"
grep -Eq '^  compute +step_ours .* tflops +[0-9.]+ TFLOP/s: [0-9]+% of 15.7 TFLOP/s \(peak V100-SXM2 fp32 15.7 TFLOP/s\)$' pk.txt ||
    fail "the headline does not show step_ours' share of the peak: $(grep 'step_ours' pk.txt | tail -n 2)"
"$bin" accept peak >pa.txt 2>&1
rc=$?
[ "$rc" = 0 ] && ! grep -q '^expected\.compute' pa.txt && grep -q "^expected  *SKIP" pa.txt &&
    grep -q "a GPU's datasheet peak is shown, not judged" pa.txt ||
    fail "accept judged a datasheet peak (exit $rc): $(grep -E '^expected' pa.txt)"

# h2d on the K's two first GPUs at once (FB_TEST_GPU_BUSES): each gets half the shared x16
# uplink, their total the whole link
FB_TEST_GPU_BUSES=0000:03:00.0,0000:04:00.0 FB_SYSFS_ROOT=$machines/c4140-k mpi 2 "$bin" run h2d --backend host \
    --sizes 1M --trials 3 --quiet --out k_h2d >kh.txt 2>&1 || fail "run h2d on the K's GPUs exited $?: $(tail -n 3 kh.txt)"
[ "$(csv_awk 'v("case") == "pinned_h2d" && v("ranks") == 2 && v("metric") == "bandwidth" && v("expected") + 0 > 6.222 && v("expected") + 0 < 6.223 && v("bound") == "PCIe Gen3 x16 uplink 0000:00:03.0 / 2 GPUs" { n++ } END { print n + 0 }' k_h2d/results.csv)" = 2 ] ||
    fail "h2d's two ranks at once do not get half the K's uplink each: $(csv_awk 'v("expected") != "" { print v("case"), v("ranks"), v("metric"), v("expected"), v("bound") }' k_h2d/results.csv)"
[ "$(csv_awk 'v("case") == "pinned_h2d" && v("metric") == "bandwidth_total" && v("expected") + 0 > 12.445 && v("expected") + 0 < 12.446 && v("bound") == "PCIe Gen3 x16 uplink 0000:00:03.0 / 2 GPUs" { n++ } END { print n + 0 }' k_h2d/results.csv)" = 1 ] ||
    fail "h2d's all-at-once total does not get the K's whole uplink: $(csv_awk 'v("metric") == "bandwidth_total" { print v("case"), v("expected"), v("bound") }' k_h2d/results.csv)"

# gen4-hdr: GPU 07 trained at x8 of its x16 (the bound says so), GPU 0f idle at 2.5 GT/s (its
# Gen4 max is the figure, and expect says why the speed reads low now)
FB_SYSFS_ROOT=$machines/gen4-hdr mpi 1 "$bin" expect --backend host >g.txt 2>&1 || fail "expect on gen4-hdr exited $?"
grep -q "^  GPU PCIe Gen4 x16 (GPU 0000:07:00.0 now x8): host-device copies 24.89 GB/s$" g.txt &&
    grep -q "^  GPU PCIe Gen4 x16 (GPU 0000:0f:00.0): host-device copies 24.89 GB/s$" g.txt &&
    grep -q "^    its link runs at 2.5 GT/s now: an idle GPU lowers its speed" g.txt ||
    fail "expect's links below their max: $(grep -A1 '^  GPU' g.txt)"
# a link sysfs gives is known, at full speed or not (every GPU of both machines read it)
grep -q "PCIe link not known" m.txt g.txt && fail "expect calls a GPU's link not known: $(grep -h 'not known' m.txt g.txt)"
# ... and one it does not give is not (a GPU with no link files)
mkdir -p nolink/bus/pci/devices/0000:3b:00.0
echo 0x030200 >nolink/bus/pci/devices/0000:3b:00.0/class
echo 0x10de >nolink/bus/pci/devices/0000:3b:00.0/vendor
FB_SYSFS_ROOT=$PWD/nolink mpi 1 "$bin" expect --backend host >nl.txt 2>&1 || fail "expect on a GPU without link files exited $?"
grep -q "^  GPU 0000:3b:00.0: PCIe link not known$" nl.txt || fail "expect on a GPU without link files: $(grep GPU nl.txt)"

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

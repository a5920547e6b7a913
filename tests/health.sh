#!/bin/sh
# `fabricbench health` on copies of tests/data/sysfs (FB_SYSFS_ROOT): the healthy line and exit
# 0; a finding's line and exit 1; --drain hands scontrol exactly one update (a stand-in scontrol
# on PATH records its arguments), and none when healthy; a profile's figures, overridden by an
# option; bad input exits 2 with one line. (The real slurmd: tests/cluster/slurm_health.sh.)
# usage: health.sh FABRICBENCH SYSFS_TREE
. "$(dirname "$0")/lib.sh"
bin=$1 tree=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
cp -a "$tree" sys
export FB_SYSFS_ROOT=$work/sys
mkdir bin
# `scontrol show node -o` answers from show.txt (a node in service when there is none, as
# Slurm 22.05 prints it); every other call is recorded
cat >bin/scontrol <<EOF2
#!/bin/sh
if [ "\$1" = show ]; then
    cat "$work/show.txt" 2>/dev/null ||
        echo "NodeName=n1 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 State=IDLE ThreadsPerCore=1 Partitions=debug"
    exit 0
fi
for a in "\$@"; do printf '%s\n' "\$a"; done >>"$work/scontrol.args"
echo call >>"$work/scontrol.calls"
EOF2
chmod +x bin/scontrol
PATH=$work/bin:$PATH

out=$("$bin" health --node n1 --gpus 1 --ib-ports 1 --ib-rate 100 --drain)
rc=$?
[ "$rc" = 0 ] || fail "a healthy node: exit $rc"
[ "$out" = "health n1: OK: 1 NVIDIA GPU(s), 1 of 1 InfiniBand port(s) ACTIVE (slowest 100 Gb/s), 2 PCIe link(s) at their maximum" ] ||
    fail "a healthy node: '$out'"
[ ! -e scontrol.calls ] || fail "a healthy node called scontrol"
echo "$out" >doc.txt

echo "56 Gb/sec (4X FDR)" >sys/class/infiniband/mlx5_0/ports/1/rate
out=$("$bin" health --node n1 --gpus 2 --ib-rate 100 --drain)
rc=$?
[ "$rc" = 1 ] || fail "a node with findings: exit $rc"
reason="1 NVIDIA GPU(s) on the PCI bus, expected 2; InfiniBand mlx5_0/1 at 56 Gb/s, expected at least 100"
[ "$out" = "health n1: FAIL: $reason" ] || fail "a node with findings: '$out'"
[ "$(wc -l <scontrol.calls 2>/dev/null)" = 1 ] || fail "--drain: scontrol called $(wc -l <scontrol.calls 2>/dev/null) times, expected once"
printf 'update\nNodeName=n1\nState=DRAIN\nReason=fabricbench health: %s\n' "$reason" >want.args
cmp -s want.args scontrol.args || fail "--drain's scontrol arguments: $(cat scontrol.args)"
# without --drain: the line, no scontrol
"$bin" health --node n1 --ib-rate 100 >/dev/null
[ $? = 1 ] && [ "$(wc -l <scontrol.calls)" = 1 ] || fail "without --drain scontrol was called"
# a node drained by an administrator keeps its reason: no update, a line on stderr, exit 1;
# one drained by health before is drained again with the new reason
echo "NodeName=n1 Arch=x86_64 State=IDLE+DRAIN ThreadsPerCore=1 Reason=swap DIMM B2 [root@2026-12-05T06:01:02]" >show.txt
"$bin" health --node n1 --ib-rate 100 --drain >/dev/null 2>err.txt
[ $? = 1 ] && [ "$(wc -l <scontrol.calls)" = 1 ] || fail "an administrator's drain was overwritten: $(cat scontrol.args)"
[ "$(cat err.txt)" = "fabricbench: error: health: n1 is already IDLE+DRAIN for another reason ('swap DIMM B2'): left as it is" ] ||
    fail "an administrator's drain: stderr '$(cat err.txt)'"
echo "NodeName=n1 State=DOWN+DRAIN Reason=fabricbench health: 0 NVIDIA GPU(s) [slurm@2026-12-05T06:01:02]" >show.txt
"$bin" health --node n1 --ib-rate 100 --drain >/dev/null 2>err.txt
[ $? = 1 ] && [ "$(wc -l <scontrol.calls)" = 2 ] || fail "health's own drain was not renewed: $(cat err.txt)"
rm show.txt
# a scontrol that fails: still exit 1, the failure said on stderr
printf '#!/bin/sh\nexit 3\n' >bin/scontrol
"$bin" health --node n1 --ib-rate 100 --drain >/dev/null 2>err.txt
[ $? = 1 ] || fail "a failed drain: exit not 1"
grep -q "health: could not drain n1: scontrol update exited 3" err.txt || fail "a failed drain: $(cat err.txt)"

# a profile's figures (gpus 4, 1 port at 100), --gpus overriding one of them
printf '[profile]\nname = t\n[node]\ngpus = 4\n[infiniband]\nports = 1\nrate_gbps = 100\n' >p.ini
out=$("$bin" health --node n1 --profile "$work/p.ini")
[ "$out" = "health n1: FAIL: 1 NVIDIA GPU(s) on the PCI bus, expected 4; InfiniBand mlx5_0/1 at 56 Gb/s, expected at least 100" ] ||
    fail "--profile: '$out'"
# docs/slurm.md quotes the healthy line and this one
echo "$out" >>doc.txt
doc_example docs/slurm.md health-lines doc.txt
out=$("$bin" health --node n1 --profile "$work/p.ini" --gpus 1 --ib-rate 50)
[ $? = 0 ] && [ "${out#health n1: OK: }" != "$out" ] || fail "--profile overridden: '$out'"
# a FIFO where a port's state should be (a tree given by FB_SYSFS_ROOT) is no reading, never
# waited on: health ends, that port not ACTIVE
cp -a sys fifo
rm fifo/class/infiniband/mlx5_0/ports/1/state
mkfifo fifo/class/infiniband/mlx5_0/ports/1/state
out=$(FB_SYSFS_ROOT=$work/fifo timeout 30 "$bin" health --node n1 --ib-ports 1)
rc=$?
[ "$rc" = 1 ] && [ "$out" = "health n1: FAIL: 0 InfiniBand port(s) ACTIVE, expected at least 1" ] ||
    fail "a FIFO for a port's state: exit $rc (124: it waited), '$out'"
rm -rf fifo
# a device name of 39 bytes (the kernel allows 63): its two ports stay two readings, the slow
# ACTIVE one found (cut to 40 bytes, both were one name and the DOWN port's state hid it)
long=mlx5_abcdefghijklmnopqrstuvwxyz01234567
cp -a sys longname
mv longname/class/infiniband/mlx5_0 "longname/class/infiniband/$long"
ports=longname/class/infiniband/$long/ports
cp -a "$ports/1" "$ports/2"
echo "1: DOWN" >"$ports/1/state"
echo "100 Gb/sec" >"$ports/1/rate"
echo "4: ACTIVE" >"$ports/2/state"
echo "10 Gb/sec" >"$ports/2/rate"
out=$(FB_SYSFS_ROOT=$work/longname "$bin" health --node n1 --ib-rate 100 --ib-ports 1)
[ $? = 1 ] && [ "$out" = "health n1: FAIL: InfiniBand $long/2 at 10 Gb/s, expected at least 100" ] ||
    fail "two ports of a long device name: '$out'"
rm -rf longname
# absurd readings are no readings: a negative rate, a width past x32 (never shown as figures)
cp -a sys absurd
echo "-5 Gb/sec" >absurd/class/infiniband/mlx5_0/ports/1/rate
for f in $(find absurd/bus/pci/devices/ -name current_link_width | head -n 1); do echo 1e308 >"$f"; done
out=$(FB_SYSFS_ROOT=$work/absurd "$bin" health --node n1 --ib-ports 1 --ib-rate 100)
case $out in *-5*|*e+308*|*1000000000*) fail "absurd readings shown as figures: '$out'" ;; esac
[ "$out" = "health n1: OK: 1 NVIDIA GPU(s), 1 of 1 InfiniBand port(s) ACTIVE, 1 PCIe link(s) at their maximum" ] ||
    fail "absurd readings: '$out'"
rm -rf absurd
# SLURMD_NODENAME names the node when --node is not given
out=$(SLURMD_NODENAME=gpu07 "$bin" health)
[ "${out#health gpu07: }" != "$out" ] || fail "SLURMD_NODENAME: '$out'"

# a root that is no sysfs tree: bad input, never a node of 0 GPUs drained
FB_SYSFS_ROOT=$work/none expect_error "health: cannot read $work/none/bus/pci/devices (not a sysfs tree?)" \
    "$bin" health --node n1 --gpus 4 --drain
[ "$(wc -l <scontrol.calls)" = 2 ] || fail "a root without sysfs called scontrol"
expect_error "health: bad value for --gpus" "$bin" health --gpus x
expect_error "health: bad value for --ib-rate" "$bin" health --ib-rate 0
expect_error "health: unexpected argument 'extra'" "$bin" health extra
expect_error "health: node name 'a b' is not a Slurm node name" "$bin" health --node 'a b'
expect_error "health: node name 'x\\x1b[2J' is not a Slurm node name" "$bin" health --node "$(printf 'x\033[2J')"
expect_error "health: unknown option '--bogus'" "$bin" health --bogus
expect_error "no-such-profile" "$bin" health --profile no-such-profile
finish

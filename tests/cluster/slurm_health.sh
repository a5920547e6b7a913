#!/bin/sh
# `fabricbench health` as Slurm's HealthCheckProgram, run by a real slurmd (slurm_lib.sh) on each
# of the two hosts, every sysfs read from a tree of its own ($FB_SYSFS_ROOT, copies of
# tests/data/sysfs) against a profile of 1 GPU and 1 ACTIVE InfiniBand port at 100 Gb/s:
#   - host B's port reads 56 Gb/s (FDR): B ends DRAIN with health's line as its reason in
#     `sinfo -R`, host A stays idle;
#   - B's rate mended and B resumed, then its GPU taken off the bus: B drains again, with the GPU
#     count as its reason (the check every 2 s, HealthCheckInterval);
#   - an administrator drains B with a reason of their own: the next checks leave it;
#   - B mended again and resumed: it stays idle through two more checks.
# usage: slurm_health.sh FABRICBENCH SYSFS_TREE
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm_lib.sh"
bin=$1 tree=$2
cluster_up
w=$CL_DIR
health_nodes "$tree"
health_wrapper "$w/health.sh" health --drain
b=$w/sysfs-$CL_HOST_B
echo "56 Gb/sec (4X FDR)" >"$b/class/infiniband/mlx5_0/ports/1/rate"
SL_HEALTH=$w/health.sh slurm_up "drain 1,idle 1"

# wait_state (slurm_lib.sh) waits up to 20 s: 10 health checks
# two_more_checks VERDICT: within 10 s, host B's log gains two more lines of VERDICT (OK, FAIL)
two_more_checks() {
    n=$(grep -c "^health $CL_HOST_B: $1" "$w/health-$CL_HOST_B.log")
    for _ in $(seq 1 50); do
        [ "$(grep -c "^health $CL_HOST_B: $1" "$w/health-$CL_HOST_B.log")" -ge $((n + 2)) ] && return 0
        sleep 0.2
    done
    return 1
}

[ "$(state_of "$CL_HOST_A")" = idle ] || fail "host A is '$(state_of "$CL_HOST_A")', expected idle: $(cat "$w/health-$CL_HOST_A.log")"
[ "$(state_of "$CL_HOST_B")" = drain ] || fail "host B is '$(state_of "$CL_HOST_B")', expected drain"
r=$(reason_of "$CL_HOST_B")
[ "$r" = "fabricbench health: InfiniBand mlx5_0/1 at 56 Gb/s, expected at least 100" ] ||
    fail "host B's drain reason is '$r'"
[ -z "$(reason_of "$CL_HOST_A")" ] || fail "host A has a reason: $(reason_of "$CL_HOST_A")"
grep -q "^health $CL_HOST_A: OK: 1 NVIDIA GPU(s), 1 of 1 InfiniBand port(s) ACTIVE (slowest 100 Gb/s)" \
    "$w/health-$CL_HOST_A.log" || fail "host A's check did not say OK: $(tail -n 2 "$w/health-$CL_HOST_A.log")"

# mended, resumed; then the GPU gone from the bus
echo "100 Gb/sec (4X EDR)" >"$b/class/infiniband/mlx5_0/ports/1/rate"
slurm_in scontrol update NodeName="$CL_HOST_B" State=RESUME || fail "scontrol resume failed"
wait_state "$CL_HOST_B" idle || fail "host B did not come back idle: $(state_of "$CL_HOST_B")"
rm -rf "$b/bus/pci/devices/0000:3b:00.0"
wait_state "$CL_HOST_B" drain || fail "host B without its GPU is still '$(state_of "$CL_HOST_B")'"
r=$(reason_of "$CL_HOST_B")
[ "$r" = "fabricbench health: 0 NVIDIA GPU(s) on the PCI bus, expected 1" ] ||
    fail "host B's drain reason without its GPU is '$r'"

# an administrator's reason replaces health's: the next two checks still fail, and leave it
slurm_in scontrol update NodeName="$CL_HOST_B" State=DRAIN Reason="swap DIMM B2" || fail "scontrol drain failed"
two_more_checks FAIL ||
    fail "no two checks on host B after the administrator's drain: $(tail -n 3 "$w/health-$CL_HOST_B.log")"
r=$(reason_of "$CL_HOST_B")
[ "$r" = "swap DIMM B2" ] || fail "health overwrote the administrator's reason: '$r'"
grep -q "health: $CL_HOST_B is already [A-Z+]*DRAIN[A-Z+]* for another reason ('swap DIMM B2'): left as it is" \
    "$w/health-$CL_HOST_B.log" || fail "health did not say it left the drain: $(tail -n 3 "$w/health-$CL_HOST_B.log")"

# mended again: resumed, it stays idle through the next checks
cp -a "$tree/bus/pci/devices/0000:3b:00.0" "$b/bus/pci/devices/"
slurm_in scontrol update NodeName="$CL_HOST_B" State=RESUME || fail "scontrol resume failed"
wait_state "$CL_HOST_B" idle || fail "host B did not come back idle: $(state_of "$CL_HOST_B")"
two_more_checks OK ||
    fail "no two healthy checks on host B after it was mended: $(tail -n 3 "$w/health-$CL_HOST_B.log")"
[ "$(state_of "$CL_HOST_B")" = idle ] || fail "healthy host B is '$(state_of "$CL_HOST_B")'"
finish

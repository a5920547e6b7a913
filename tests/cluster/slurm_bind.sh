#!/bin/sh
# Binding under a real Slurm that binds (slurm_lib.sh with SL_BIND: TaskPlugin=task/affinity,
# each node declared with this machine's CPUs), 2 tasks on each of the two hosts:
#   - `srun --cpu-bind=cores doctor`: every rank bound to one CPU of its own on its node (the two
#     of a node different), doctor's binding check PASS, no fix line in mpirun's words;
#   - `srun --cpu-bind=none doctor`: the ranks unbound, the binding check WARN, its fix in srun's
#     words (`--cpu-bind=`), never mpirun's `--map-by`/`--bind-to`.
#   - `sweep` inside an allocation (salloc, 2 tasks a node): `--binding core` launches `srun
#     --distribution=block:block --cpu-bind=cores` (Slurm's own default deals a node's tasks
#     round robin over its sockets) and the run's ranks are each bound to a CPU of their own;
#     `--binding socket` launches `--distribution=block:block --cpu-bind=socket`, which this
#     Slurm takes, and the run completes.
# usage: slurm_bind.sh FABRICBENCH
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm_lib.sh"
bin=$1
cluster_up
w=$CL_DIR
SL_BIND=1 slurm_up

# doctor BIND NAME: doctor under srun, 2 tasks a node, --cpu-bind=BIND, into $w/NAME.{txt,json}
doctor() {
    slurm_in timeout 120 srun -N2 --ntasks-per-node=2 --mpi=pmix --cpu-bind="$1" \
        "$bin" doctor --backend host --json "$w/$2.json" >"$w/$2.txt" 2>&1
    rc=$?
}
# ranks NAME: "host cpus bound" per rank from doctor's JSON
ranks() {
    python3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["ranks"]:
    print(r["host"], r["cpus"], r["bound"])' "$w/$1.json"
}

doctor cores bound
[ "$rc" = 0 ] || fail "srun --cpu-bind=cores doctor exited $rc: $(tail -n 5 "$w/bound.txt")"
grep -q "cluster configuration lacks support for cpu binding" "$w/bound.txt" &&
    fail "this Slurm does not bind: $(grep lacks "$w/bound.txt")"
ranks bound >"$w/bound.ranks" || fail "doctor's JSON: $(head -c 300 "$w/bound.json")"
cat "$w/bound.ranks"
[ "$(wc -l <"$w/bound.ranks")" = 4 ] || fail "not 4 ranks in doctor's JSON"
[ "$(awk '$3 != "True" || $2 !~ /^[0-9]+$/' "$w/bound.ranks")" = "" ] ||
    fail "a rank not bound to one CPU under --cpu-bind=cores: $(cat "$w/bound.ranks")"
[ "$(sort -u "$w/bound.ranks" | awk '{ print $1, $2 }' | sort -u | wc -l)" = 4 ] ||
    fail "two ranks of a node share a CPU: $(cat "$w/bound.ranks")"
grep -Eq '^PASS +binding +every rank is bound to CPUs of its own' "$w/bound.txt" ||
    fail "doctor's binding check under --cpu-bind=cores: $(grep -A1 binding "$w/bound.txt")"
grep -Eq -- '--map-by|--bind-to' "$w/bound.txt" && fail "doctor advises mpirun's options under srun: $(grep -E -- '--map-by|--bind-to' "$w/bound.txt")"

doctor none unbound
[ "$rc" = 0 ] || fail "srun --cpu-bind=none doctor exited $rc: $(tail -n 5 "$w/unbound.txt")"
ranks unbound >"$w/unbound.ranks" || fail "doctor's JSON: $(head -c 300 "$w/unbound.json")"
cat "$w/unbound.ranks"
[ "$(awk '$3 != "False"' "$w/unbound.ranks")" = "" ] ||
    fail "a rank bound under --cpu-bind=none: $(cat "$w/unbound.ranks")"
grep -A1 -E '^WARN +binding' "$w/unbound.txt" >"$w/unbound.fix"
grep -q 'fix: .*srun .*--cpu-bind=' "$w/unbound.fix" ||
    fail "doctor's binding fix under srun: $(cat "$w/unbound.fix") $(grep binding "$w/unbound.txt")"
grep -Eq -- '--map-by|--bind-to' "$w/unbound.txt" && fail "doctor advises mpirun's options under srun: $(grep -E -- '--map-by|--bind-to' "$w/unbound.txt")"
cat "$w/unbound.fix"

small="--backend host --sizes 64K --warmup 1 --trials 3 --quiet"
for b in core socket; do
    slurm_in salloc -N2 --ntasks-per-node=2 "$bin" sweep --np 4 --binding $b --no-report --out "$w/sweep-$b" -- \
        run allreduce $small >"$w/sweep-$b.txt" 2>&1 || fail "sweep --binding $b inside salloc exited $?: $(tail -n 5 "$w/sweep-$b.txt")"
    grep '^run: ' "$w/sweep-$b/launch.txt"
    want=$([ $b = core ] && echo cores || echo socket)
    grep -q "^run: srun --ntasks 4 --distribution=block:block --cpu-bind=$want " "$w/sweep-$b/launch.txt" ||
        fail "sweep --binding $b's launch: $(grep '^run:' "$w/sweep-$b/launch.txt")"
    grep -q '^status: ok$' "$w/sweep-$b/launch.txt" || fail "sweep --binding $b's launch did not end ok: $(tail -n 5 "$w/sweep-$b.txt")"
    grep -q "lacks support for cpu binding" "$w/sweep-$b.txt" && fail "this Slurm did not bind the sweep's ranks"
done
cp "$w/sweep-core/env.json" "$w/sweep.json"
ranks sweep >"$w/sweep.ranks" || fail "the sweep's env.json: $(head -c 300 "$w/sweep.json")"
cat "$w/sweep.ranks"
[ "$(wc -l <"$w/sweep.ranks")" = 4 ] && [ "$(awk '$3 != "True" || $2 !~ /^[0-9]+$/' "$w/sweep.ranks")" = "" ] &&
    [ "$(awk '{ print $1, $2 }' "$w/sweep.ranks" | sort -u | wc -l)" = 4 ] ||
    fail "the sweep's ranks are not each bound to a CPU of their own: $(cat "$w/sweep.ranks")"
finish

#!/bin/sh
# `fabricbench sweep` on 2 host ranks: a sweep over --binding both x NCCL_P2P_DISABLE=0,1
# (launches.csv rows, exact commands, each variant's results.csv covering every planned point,
# the setting seen by the ranks in env.json), one variant writing directly into --out, a dry
# run (commands, nothing written), bad input (exit 2, nothing written), a launch that fails
# (exit 1, the others still run, recorded) and --timeout (stopped in time, nothing left).
. "$(dirname "$0")/lib.sh"
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
doc=$(cd "$(dirname "$0")/.." && pwd)/docs/sweep.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
runargs="h2d --backend host --max-bytes 64K --trials 2 --warmup 1 --trial-ms 1"
# csv_field FILE ROW-VARIANT COLUMN: a field of launches.csv (commands hold no commas here)
csv_field() { csv_awk 'v("variant") == want { print v(field) }' want="$2" field="$3" "$1"; }
# points of a results.csv: a point's own time row (all ranks: src empty; one rank alone)
points() { csv_awk 'v("metric") == "time" && (v("src") == "" || v("ranks") == 1) { print v("case") "," v("ranks") "," v("src") "," v("bytes") }' "$1" | sort; }

# --- every option of `sweep --help` is in docs/sweep.md's table
"$bin" sweep --help >help.txt || fail "sweep --help failed"
opts=$(sed -n 's/^  \(--[a-z][a-z-]*\).*/\1/p' help.txt)
[ "$(echo "$opts" | wc -w)" -ge 12 ] || fail "sweep --help lists only: $opts"
for opt in $opts; do
    grep -q -- "^| \`$opt" "$doc" || fail "option $opt is not documented in docs/sweep.md"
done

# --- the reference: a plain run of the same arguments, and its plan as progress counted it
# shellcheck disable=SC2086
mpi 2 "$bin" run $runargs --out plain >plain.out 2>plain.err || { cat plain.err >&2; fail "plain run failed"; finish; }
points plain/results.csv >plain.points
planned=$(grep -E '^\[ *[0-9]+/[0-9]+\]' plain.err | tail -n 1 | sed 's/^\[ *[0-9]*\/\([0-9]*\)\].*/\1/')
# 3 sizes x 4 variants x (2 ranks alone + all at once)
[ "$(wc -l <plain.points)" = 36 ] || fail "plain run has $(wc -l <plain.points) points, expected 36"
[ "$planned" = 36 ] || fail "plain run planned '$planned' points, expected 36"
grep -E '^\[ *[0-9]+/[0-9]+\]' plain.err >plain.progress
doc_example docs/sweep.md progress-line plain.progress '34/36'

# --- the sweep: 2 bindings x 2 values = 4 launches
t0=$(date +%s)
# shellcheck disable=SC2086
"$bin" sweep --np 2 --binding both --vary NCCL_P2P_DISABLE=0,1 --mpirun-arg --oversubscribe \
    --out sweep --no-report -- run $runargs >sweep.out 2>sweep.err
rc=$?
t1=$(date +%s)
[ "$rc" = 0 ] || { cat sweep.err >&2; fail "sweep exited $rc"; }
csv=sweep/launches.csv
[ -f "$csv" ] || { fail "no launches.csv"; finish; }
[ ! -e "$csv.tmp" ] || fail "a temporary launches.csv was left behind"
[ "$(head -n 1 "$csv")" = "variant,launcher,binding,NCCL_P2P_DISABLE,status,exit_status,wall_s,doctor_exit_status,run_dir,command" ] ||
    fail "launches.csv header: $(head -n 1 "$csv")"
[ "$(($(wc -l <"$csv") - 1))" = 4 ] || fail "launches.csv has $(($(wc -l <"$csv") - 1)) rows, expected 4"
total_wall=0
for b in socket none; do
    for p in 0 1; do
        name="bind-${b}_NCCL_P2P_DISABLE-$p"
        dir="sweep/$name"
        [ "$(csv_field "$csv" "$name" exit_status)" = 0 ] || fail "$name: exit status '$(csv_field "$csv" "$name" exit_status)'"
        [ "$(csv_field "$csv" "$name" status)" = ok ] || fail "$name: status '$(csv_field "$csv" "$name" status)'"
        [ "$(csv_field "$csv" "$name" binding)" = "$b" ] || fail "$name: binding column"
        [ "$(csv_field "$csv" "$name" NCCL_P2P_DISABLE)" = "$p" ] || fail "$name: NCCL_P2P_DISABLE column"
        [ "$(csv_field "$csv" "$name" run_dir)" = "$name" ] || fail "$name: run_dir column"
        [ "$(csv_field "$csv" "$name" doctor_exit_status)" != "" ] || fail "$name: doctor did not run"
        cmd=$(csv_field "$csv" "$name" command)
        case "$cmd" in *"mpirun -np 2 "*) ;; *) fail "$name: command is not mpirun -np 2: $cmd" ;; esac
        case "$cmd" in *" -x NCCL_P2P_DISABLE=$p "*) ;; *) fail "$name: command lacks -x NCCL_P2P_DISABLE=$p: $cmd" ;; esac
        case "$cmd" in *"NCCL_P2P_DISABLE=$((1 - p))"*) fail "$name: command has the other value: $cmd" ;; esac
        case "$cmd" in *" --oversubscribe "*) ;; *) fail "$name: --mpirun-arg not passed: $cmd" ;; esac
        case "$cmd" in *"$bin run --out sweep/$name $runargs") ;; *) fail "$name: command does not end with the run: $cmd" ;; esac
        if [ "$b" = none ]; then
            case "$cmd" in *" --bind-to none "*) ;; *) fail "$name: command lacks --bind-to none: $cmd" ;; esac
        else
            case "$cmd" in *" --map-by "*" --bind-to socket "*) ;; *) fail "$name: command lacks socket binding: $cmd" ;; esac
        fi
        # the exact command was printed before it ran
        grep -qxF "$cmd" sweep.out || fail "$name: the recorded command was not printed"
        grep -qF "doctor --json sweep/$name/doctor.json" sweep.out || fail "$name: doctor's command not printed"
        # a complete run folder: every point of the plan, the setting seen by the ranks
        [ -s "$dir/doctor.json" ] || fail "$name: no doctor.json"
        [ -f "$dir/results.csv" ] || { fail "$name: no results.csv"; continue; }
        points "$dir/results.csv" >"$name.points"
        cmp -s plain.points "$name.points" || fail "$name: points differ from the plain run: $(diff plain.points "$name.points" | head -5)"
        grep -Eq "\"NCCL_P2P_DISABLE\":[[:space:]]*\"$p\"" "$dir/env.json" || fail "$name: env.json does not record NCCL_P2P_DISABLE=$p"
        grep -Eq '"run_status":[[:space:]]*"complete"' "$dir/env.json" || fail "$name: env.json not complete"
        grep -q "^status: ok" "$dir/launch.txt" || fail "$name: launch.txt lacks its status"
        grep -qxF "run: $cmd" "$dir/launch.txt" || fail "$name: launch.txt lacks the command"
        w=$(csv_field "$csv" "$name" wall_s)
        total_wall=$(awk -v a="$total_wall" -v b="$w" 'BEGIN { print a + b }')
        awk -v w="$w" 'BEGIN { exit !(w > 0.1 && w < 300) }' || fail "$name: wall_s $w"
    done
done
# docs/sweep.md quotes the variants in launch order and the last launch's launch.txt
csv_awk '{ print v("variant") }' "$csv" >variants.txt
doc_example docs/sweep.md variants variants.txt
sed -e "s|$bin|/opt/fb/fabricbench|g" -e 's| sweep/| RUN/|g' sweep/bind-none_NCCL_P2P_DISABLE-1/launch.txt >launch4.txt
# (as root the commands set Open MPI's root variables, as the page's do; not as root, the rest)
if [ "$(id -u)" = 0 ]; then doc_example docs/sweep.md launch-txt launch4.txt
else doc_example docs/sweep.md launch-txt launch4.txt '^(#|doctor_exit|status|exit|wall)'; fi
# the runs' wall seconds fit in the sweep's own time
awk -v t="$total_wall" -v s="$((t1 - t0 + 1))" 'BEGIN { exit !(t <= s) }' || fail "wall_s add up to $total_wall s, the sweep took $((t1 - t0)) s"
# one progress line per launch, 1..4
[ "$(grep -c '^launch \[[1-4]/4\] bind-' sweep.err)" = 4 ] || fail "launch progress lines: $(grep '^launch' sweep.err)"
grep -q '^launch \[4/4\] bind-none_NCCL_P2P_DISABLE-1 | [0-9]*:[0-9][0-9] elapsed, ~[0-9]*:[0-9][0-9] left$' sweep.err || fail "last launch line: $(grep '^launch \[4' sweep.err)"
grep -q "report.* not available\|report sweep" sweep.out && fail "--no-report still reported"
grep -q "^sweep folder: sweep" sweep.out || fail "the sweep does not say where its folder is"

# reusing the folder needs --force; refused before anything starts
# shellcheck disable=SC2086
"$bin" sweep --np 2 --binding both --vary NCCL_P2P_DISABLE=0,1 --out sweep -- run $runargs >again.out 2>again.err
[ "$?" = 2 ] || fail "a second sweep into the same folder was not refused"
grep -q "already holds a sweep" again.err || fail "refusal does not say why: $(cat again.err)"

# --- one variant: everything directly in --out
# shellcheck disable=SC2086
"$bin" sweep --np 2 --no-doctor --no-report --mpirun-arg --oversubscribe --out single -- $runargs >single.out 2>single.err ||
    fail "single sweep failed: $(tail -n 3 single.err)"
[ -f single/results.csv ] || fail "one variant: no results.csv directly in --out"
[ ! -e single/launches.csv ] || fail "one variant: a launches.csv"
[ ! -e single/doctor.json ] || fail "--no-doctor still ran doctor"
grep -q "^status: ok" single/launch.txt || fail "one variant: launch.txt"
points single/results.csv | cmp -s plain.points - || fail "one variant: points differ from the plain run"

# --- dry run: the commands, nothing written
mkdir dry && cd dry || exit 1
# shellcheck disable=SC2086
"$bin" sweep --np 2 --binding both --vary NCCL_P2P_DISABLE=0,1 --dry-run -- $runargs >../dry.out 2>../dry.err
[ "$?" = 0 ] || fail "dry run exited non-zero: $(cat ../dry.err)"
[ "$(grep -c "mpirun -np 2 .*fabricbench doctor --json results/.*/doctor.json" ../dry.out)" = 4 ] || fail "dry run: doctor commands: $(cat ../dry.out)"
[ "$(grep -c "mpirun -np 2 .*fabricbench run --out results/.* $runargs\$" ../dry.out)" = 4 ] || fail "dry run: run commands: $(cat ../dry.out)"
[ "$(grep -c -- "-x NCCL_P2P_DISABLE=1 " ../dry.out)" = 4 ] || fail "dry run: -x NCCL_P2P_DISABLE=1 not in 2 doctor + 2 run commands"
[ "$(grep -c -- "--bind-to none " ../dry.out)" = 4 ] || fail "dry run: --bind-to none not in 2 doctor + 2 run commands"
[ -z "$(ls -A)" ] || fail "dry run wrote: $(ls -A | tr '\n' ' ')"
cd .. || exit 1

# --- ranks that do not divide over the sockets (issue 28): never dealt round robin. On a
# described node of 2 sockets (FB_SYSFS_ROOT: 4 CPUs, packages 0 0 1 1), 3 ranks: mpirun binds
# nothing and each rank binds itself to its GPU's socket (doctor and run --self-bind), where
# --map-by socket put rank 1 on socket 1. Then --self-bind on this machine runs clean.
for c in 0 1 2 3; do
    mkdir -p "fsys/devices/system/cpu/cpu$c/topology"
    echo $((c / 2)) >"fsys/devices/system/cpu/cpu$c/topology/physical_package_id"
done
FB_SYSFS_ROOT=$work/fsys "$bin" sweep --np 3 --binding socket --dry-run -- $runargs >uneven.out 2>uneven.err ||
    fail "sweep --dry-run of 3 ranks on 2 sockets failed: $(cat uneven.err)"
grep -q -- "mpirun -np 3 --bind-to none .*fabricbench doctor --self-bind " uneven.out &&
    grep -q -- "mpirun -np 3 --bind-to none .*fabricbench run --self-bind " uneven.out ||
    fail "3 ranks on 2 sockets are not left to bind themselves: $(grep mpirun uneven.out)"
grep -q -- "--map-by socket" uneven.out && fail "3 ranks on 2 sockets are dealt round robin: $(grep mpirun uneven.out)"
FB_SYSFS_ROOT=$work/fsys "$bin" sweep --np 4 --binding socket --dry-run -- $runargs >even.out 2>&1 &&
    grep -q -- "--map-by ppr:2:socket --bind-to socket .*fabricbench run --out" even.out ||
    fail "4 ranks on 2 sockets: $(grep mpirun even.out)"
# With no --binding: a node with GPUs binds each rank to its GPU's socket, a node without one
# each rank to a core of its own (socket-bound ranks would share the socket's cores: doctor WARNs)
FB_SYSFS_ROOT=$work/fsys CUDA_VISIBLE_DEVICES=0,1 "$bin" sweep --dry-run -- $runargs >gpus.out 2>&1 &&
    grep -q -- "mpirun -np 2 --map-by ppr:1:socket --bind-to socket .*fabricbench run --out" gpus.out ||
    fail "the default binding with 2 GPUs on 2 sockets: $(grep mpirun gpus.out)"
FB_SYSFS_ROOT=$work/fsys CUDA_VISIBLE_DEVICES= "$bin" sweep --dry-run -- $runargs >nogpu.out 2>&1 &&
    grep -q -- "mpirun -np 2 --map-by core --bind-to core .*fabricbench run --out" nogpu.out ||
    fail "the default binding without a GPU: $(grep mpirun nogpu.out)"
grep -q -- "--bind-to socket" nogpu.out && fail "a node without GPUs is bound by socket by default: $(grep mpirun nogpu.out)"
"$bin" run --self-bind --out selfbind $runargs >selfbind.out 2>selfbind.err ||
    fail "run --self-bind failed: $(tail -n 3 selfbind.err)"
grep -q "warning: --self-bind" selfbind.err && fail "run --self-bind warned: $(grep warning selfbind.err)"

# --- bad input: one line, exit 2, nothing written
mkdir bad && cd bad || exit 1
expect_bad() { # TEXT ARGS...
    text=$1; shift
    "$bin" sweep "$@" >out.txt 2>err.txt
    rc=$?
    [ "$rc" = 2 ] || fail "sweep $* exited $rc, expected 2"
    [ "$(grep -c 'error: ' err.txt)" = 1 ] || fail "sweep $*: $(grep -c 'error: ' err.txt) error lines"
    grep -q -- "$text" err.txt || fail "sweep $*: error lacks '$text': $(cat err.txt)"
    [ ! -s out.txt ] || fail "sweep $*: printed on stdout"
    rm -f out.txt err.txt
    [ -z "$(ls -A)" ] || fail "sweep $* wrote: $(ls -A | tr '\n' ' ')"
}
expect_bad "'FOO' is not a launch setting" --vary FOO=1,2 --out x
expect_bad "'PATH' is not a launch setting" --vary PATH=/bin --out x
expect_bad "empty value" --vary NCCL_ALGO=Ring,,Tree --out x
expect_bad "NCCL_ALGO is varied twice" --vary NCCL_ALGO=Ring --vary NCCL_ALGO=Tree --out x
expect_bad "bad value for --binding" --binding sockets --out x
expect_bad "bad value for --launcher" --launcher pbs --out x
expect_bad "bad value for --np" --np 0 --out x
expect_bad "bad value for --timeout" --timeout 0 --out x
expect_bad "unknown option '--bogus'" --bogus --out x
expect_bad "bad run argument after --: bad value for --max-bytes" --out x -- h2d --max-bytes 12Q
expect_bad "unknown benchmark 'nosuch'" --out x -- nosuch
expect_bad "--out after --" -- h2d --out y
expect_bad "--ranks asks for 4 ranks, but --np is 2" --np 2 --out x -- allreduce --ranks 1,4
expect_bad "--pairs 0:5 names a rank the launches do not have (--np 2: ranks 0..1)" --np 2 --out x -- p2p --pairs 0:5
expect_bad "unexpected argument 'h2d'" --out x h2d
# a control character would reach the terminal in every launch line (and --dry-run's)
expect_bad 'a value of NCCL_ALGO holds a control character (\\x1b)' --vary "NCCL_ALGO=$(printf 'a\033[31m')" --out x
expect_bad "bad value for --mpirun-arg: it holds a control character" --mpirun-arg "$(printf 'x\033[2J')" --out x
expect_bad "bad value for --out: it holds a control character" --out "$(printf 'x\033[31m')"
cd .. || exit 1

# --- a launch that fails: the other still runs, exit 1, recorded (an MCA setting no MPI has)
# shellcheck disable=SC2086
"$bin" sweep --np 2 --no-doctor --no-report --vary OMPI_MCA_pml=ob1,nosuchpml --mpirun-arg --oversubscribe \
    --timeout 120 --out failing -- $runargs >failing.out 2>failing.err
[ "$?" = 1 ] || fail "a failed launch did not make the sweep exit 1"
csv=failing/launches.csv
[ "$(($(wc -l <"$csv") - 1))" = 2 ] || fail "failing: launches.csv has $(($(wc -l <"$csv") - 1)) rows, expected 2"
[ "$(csv_field "$csv" OMPI_MCA_pml-ob1 status)" = ok ] || fail "failing: the good launch is not ok"
[ "$(csv_field "$csv" OMPI_MCA_pml-ob1 exit_status)" = 0 ] || fail "failing: the good launch's exit status"
[ "$(csv_field "$csv" OMPI_MCA_pml-nosuchpml status)" = failed ] || fail "failing: the bad launch is '$(csv_field "$csv" OMPI_MCA_pml-nosuchpml status)'"
es=$(csv_field "$csv" OMPI_MCA_pml-nosuchpml exit_status)
if [ -z "$es" ] || [ "$es" = 0 ]; then fail "failing: the bad launch's exit status is '$es'"; fi
[ -f failing/OMPI_MCA_pml-ob1/results.csv ] || fail "failing: the good launch has no results"
grep -q "OMPI_MCA_pml-nosuchpml: run failed (exit status $es); going on" failing.err || fail "failing: not reported on stderr"

# --- --timeout: a run far longer than the limit is stopped, with every rank
t0=$(date +%s)
"$bin" sweep --np 2 --no-doctor --no-report --timeout 3 --mpirun-arg --oversubscribe --out slow -- \
    h2d --backend host --sizes 64M --iters 100000 --trials 1000 --warmup 0 >slow.out 2>slow.err
rc=$?
t1=$(date +%s)
[ "$rc" = 1 ] || fail "timeout: sweep exited $rc, expected 1"
# 3 s, mpirun's own stop (it forwards SIGTERM to its ranks), and the clock's rounding
[ $((t1 - t0)) -le 9 ] || fail "timeout: the sweep took $((t1 - t0)) s for --timeout 3"
grep -q "^status: timeout" slow/launch.txt || fail "timeout: launch.txt: $(cat slow/launch.txt)"
grep -q "^exit_status: 124" slow/launch.txt || fail "timeout: exit status not recorded as 124"
grep -q "ran past --timeout 3s" slow.err || fail "timeout: not reported"
sleep 1
left=$(ps -eo pid=,args= | grep -F "$work/slow" | grep -v grep | grep -v "ps -eo")
if [ -n "$left" ]; then
    fail "timeout: processes left behind: $left"
    for pid in $(echo "$left" | awk '{ print $1 }'); do kill -9 "$pid" 2>/dev/null; done
fi

# --- kill -9 of the sweep itself: it can clean up nothing, yet its launch (mpirun and both
# ranks) dies with it, and launches.csv already holds the launch it was in, as `started`
"$bin" sweep --np 2 --no-doctor --no-report --vary NCCL_P2P_DISABLE=0,1 --mpirun-arg --oversubscribe \
    --out "$work/killed" -- h2d --backend host --sizes 64M --iters 100000 --trials 1000 --warmup 0 \
    >killed.out 2>killed.err &
sweep_pid=$!
# the launch's ranks running (their --out names the variant's folder): up to 30 s to start
i=0
while [ "$i" -lt 300 ] && [ "$(ps -eo args= | grep -F "$work/killed/NCCL_P2P_DISABLE-0" | grep -c fabricbench)" -lt 3 ]; do
    sleep 0.1; i=$((i + 1))
done
[ "$i" -lt 300 ] || fail "kill -9: the launch never showed mpirun and two ranks: $(cat killed.err)"
kill -9 "$sweep_pid"
wait "$sweep_pid" 2>/dev/null
# mpirun gets SIGTERM at once and stops its ranks; give it 10 s
i=0
while [ "$i" -lt 100 ] && ps -eo args= | grep -F "$work/killed" | grep -q fabricbench; do
    sleep 0.1; i=$((i + 1))
done
left=$(ps -eo pid=,args= | grep -F "$work/killed" | grep fabricbench | grep -v grep)
if [ -n "$left" ]; then
    fail "kill -9: the launch outlived the sweep by 10 s: $left"
    for pid in $(echo "$left" | awk '{ print $1 }'); do kill -9 "$pid" 2>/dev/null; done
fi
[ "$(csv_field killed/launches.csv NCCL_P2P_DISABLE-0 status)" = started ] ||
    fail "kill -9: launches.csv has no 'started' row for the launch in progress: $(cat killed/launches.csv 2>&1)"
[ "$(grep -c . killed/launches.csv)" = 2 ] || fail "kill -9: launches.csv holds other rows: $(cat killed/launches.csv)"
# and report reads a sweep that ended so (the launch without results said, not an error)
"$bin" report killed >killed-report.out 2>killed-report.err ||
    fail "kill -9: report refused the sweep: $(cat killed-report.err)"
finish

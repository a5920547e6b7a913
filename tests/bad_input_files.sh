#!/bin/sh
# Malformed input files: `compare`, `accept` and `nccl-log` name the file, the line and what was
# wrong in one line, exit 2, and write nothing; `run` does the same for malformed options (the
# option stands for the line). The inputs are small hand-made cousins of what the fuzzers found
# interesting (tests/fuzz/corpus).
. "$(dirname "$0")/lib.sh"
bin=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# A real run to start from (one rank, tiny).
"$bin" run h2d --backend host --sizes 4K --trials 2 --warmup 0 --iters 1 --quiet --out good \
    >run.txt 2>&1 || { cat run.txt; fail "the run to start from failed"; finish; }
[ -s good/results.csv ] || { fail "no good/results.csv"; finish; }
nrows=$(wc -l <good/results.csv)

# mkrun NAME: a copy of the good run whose results.csv the caller then spoils.
mkrun() { rm -rf "$1"; cp -r good "$1"; }

# ---- results.csv, given to compare and to accept ----
mkrun cell; sed -i '3s/^\([^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*\),1,/\1,x,/' cell/results.csv
mkrun header; sed -i '1s/,median,/,medain,/' header/results.csv
mkrun fields; sed -i '2s/,[^,]*$//' fields/results.csv
mkrun quote; printf 'r,h2d,"never closed' >>quote/results.csv
mkrun nul; printf 'r,h2d,x\000y\n' >>nul/results.csv
mkrun range; sed -i '2s/^\([^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*\),1,/\1,-4,/' range/results.csv
mkrun num; sed -i '2s/,GB\/s,\([0-9]*\),[^,]*,/,GB\/s,\1,0x10,/; 2s/,us,\([0-9]*\),[^,]*,/,us,\1,0x10,/' num/results.csv
mkrun empty; : >empty/results.csv
expect_bad "cell/results.csv:3: column 'nodes': 'x' is not an integer" compare good cell
expect_bad "header/results.csv:1: header column 20 is 'medain', expected 'median'" compare header good
expect_bad "fields/results.csv:2: 29 fields, expected 30" compare good fields
expect_bad "quote/results.csv:$((nrows + 1)): quoted field not closed" compare good quote
expect_bad "nul/results.csv:$((nrows + 1)): NUL byte" compare good nul
expect_bad "range/results.csv:2: column 'ranks': -4 is out of range" compare good range
expect_bad "num/results.csv:2: column 'median': '0x10' is not a number" compare good num
expect_bad "empty/results.csv:1: the file is empty" compare good empty
expect_bad "cannot open 'missing'" compare good missing
for d in cell header fields quote nul range num empty; do
    [ ! -e "$d/compare-vs-good" ] && [ ! -e "good/compare-vs-$d" ] || fail "compare wrote a report for bad input '$d'"
done
profile=$src/profiles/host-ci.ini
expect_bad "cell/results.csv:3: column 'nodes': 'x' is not an integer" accept --profile "$profile" cell
expect_bad "quote/results.csv:$((nrows + 1)): quoted field not closed" accept --profile "$profile" quote
expect_bad "fields/results.csv:2: 29 fields" accept --profile "$profile" fields

# ---- profiles and the run folder's other files, given to accept ----
printf '[node]\ngpus = 1\n[h2d]\nmin_pinned_gbps = 3\n' >key.ini
printf '# a profile\n[node]\ngpus = many\n' >value.ini
printf '[node]\ngpus = 1\n[nodes]\n' >section.ini
printf '[node]\ngpus = 1\ngpus = 2\n' >twice.ini
printf '[node]\ngpus\n' >syntax.ini
printf '[profile]\nname = x\n' >nothing.ini
expect_bad "key.ini:4: unknown key 'min_pinned_gbps' in [h2d]" accept --profile key.ini good
expect_bad "value.ini:3: gpus = 'many': expected a whole number" accept --profile value.ini good
expect_bad "section.ini:3: unknown section [nodes]" accept --profile section.ini good
expect_bad "twice.ini:3: 'gpus' given twice in [node]" accept --profile twice.ini good
expect_bad "syntax.ini:2: not a [section] header nor 'key = value'" accept --profile syntax.ini good
expect_bad "nothing.ini: the profile asks for no check" accept --profile nothing.ini good
expect_bad "cannot open profile 'nosuch.ini'" accept --profile nosuch.ini good
mkrun env; printf '{"host": \n' >env/env.json
expect_bad "env/env.json:1: not a JSON object" accept --profile "$profile" env
mkrun envtail; printf '{"host": "a"}\n{"x": 1}\n' >envtail/env.json
expect_bad "envtail/env.json:2: not a JSON object (text after its end)" accept --profile "$profile" envtail
[ ! -e good/accept.xml ] || fail "accept wrote JUnit for bad input"

# ---- NCCL logs, given to nccl-log ----
expect_bad "malformed.log:4: unknown transport 'WARP/0'" nccl-log "$src/tests/data/nccl/malformed.log"
printf 'h:1:1 [0] NCCL INFO NCCL version 2.21.5\nh:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\nh:1:1 [0] NCCL INFO Channel 01 : 0 -> x via P2P/IPC\n' >ranks.log
printf 'h:1:1 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via NET/IB\n' >nic.log
printf 'h:1:1 [0] NCCL INFO NCCL version 2.21.5\nh:1:1 [0] NCCL \000INFO x\n' >nul.log
printf 'just a program printing\n' >nonccl.log
expect_bad "ranks.log:3: a transport line whose ranks cannot be read" nccl-log ranks.log
expect_bad "nic.log:1: network transport 'NET/IB' lacks its NIC index" nccl-log nic.log
expect_bad "nul.log:2: a NUL byte" nccl-log nul.log
expect_bad "no NCCL line in 'nonccl.log'" nccl-log nonccl.log
expect_bad "cannot open 'nosuch.log'" nccl-log nosuch.log
# the second of two files is the bad one, and is the one named
expect_bad "ranks.log:3:" nccl-log "$src/tests/data/nccl/ring_23.log" ranks.log

# ---- run options (the option is the "line"; nothing is written) ----
expect_bad "bad value for --sizes: empty item in '1,,2'" run --sizes 1,,2
expect_bad "bad value for --out: empty path" run --out ''
expect_bad "bad value for --pairs: '99999999999999999999' is out of range" run --pairs 99999999999999999999:1
expect_bad "bad value for --rate: 'nan' is not a number" run --rate nan
expect_bad "bad value for --max-bytes: size '16777216T' has an unknown suffix" run --max-bytes 16777216T
expect_bad "bad value for --min-bytes: size '99999999999G' is too large" run --min-bytes 99999999999G
expect_bad "unknown option '-x'" run -xyz
expect_bad "option '--trials' needs a value" run --trials
[ ! -e results ] || fail "a bad run option wrote results/"
finish

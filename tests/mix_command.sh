#!/bin/sh
# `fabricbench mix` (issue 18): the shipped mixes made again from their models, byte for byte
# (GPT-2 small's FSDP units and DenseNet-121's tensors listed in tests/data/mix, Mixtral's
# shape); a mix written with --out read back and replayed by `run replay --mix` at 2 ranks on
# the host backend, its ops as the layer list gave them; every bad input refused with one line
# naming the option or FILE:LINE, exit 2, nothing written.
# Arguments: the fabricbench binary, profiles/mixes, tests/data/mix.
. "$(dirname "$0")/lib.sh"
bin=$1 mixes=$2 data=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# header FILE: the shipped file's comment lines before its column line, without their '# '
header() { sed -n '/^# coll /q; s/^# \{0,1\}//p' "$1"; }

# same NAME ARGS...: `fabricbench mix ARGS` with the shipped file's comment is NAME.mix, on
# stdout and through --out
same() {
    name=$1; shift
    "$bin" mix "$@" --comment "$(header "$mixes/$name.mix")" >"$name.mix" 2>err.txt ||
        fail "mix $* exited $?: $(cat err.txt)"
    cmp -s "$name.mix" "$mixes/$name.mix" ||
        fail "mix $*: differs from $name.mix: $(diff "$name.mix" "$mixes/$name.mix" | head -5)"
    "$bin" mix "$@" --comment "$(header "$mixes/$name.mix")" --out "out-$name.mix" \
        >out.txt 2>err.txt || fail "mix $* --out exited $?: $(cat err.txt)"
    cmp -s "out-$name.mix" "$mixes/$name.mix" || fail "mix $* --out: differs from $name.mix"
    [ ! -s out.txt ] || fail "mix $* --out printed on stdout: $(head -3 out.txt)"
    [ ! -e "out-$name.mix.tmp" ] || fail "mix $* --out left its temporary behind"
}
same gpt2-124m-fsdp fsdp --layers "$data/gpt2-124m.layers"
same densenet121-horovod horovod --layers "$data/densenet121-14.layers" --fusion 4M --dtype float32
same mixtral-8x7b-moe moe --moe-layers 32 --tokens 4096 --hidden 4096 --topk 2

# the default comment says what made the file; defaults: fsdp float16, horovod 128M float32
"$bin" mix fsdp --layers "$data/gpt2-124m.layers" >gpt2.mix || fail "mix fsdp exited $?"
head -2 gpt2.mix >top.txt
grep -qx "# fsdp step of 39 ops, 746638848 bytes in all" top.txt ||
    fail "mix fsdp's first comment line: $(head -1 top.txt)"
grep -qx "# made by: fabricbench mix fsdp --layers $data/gpt2-124m.layers" top.txt ||
    fail "mix fsdp's second comment line: $(sed -n 2p top.txt)"
"$bin" mix horovod --layers "$data/densenet121-14.layers" >hvd.mix || fail "mix horovod exited $?"
[ "$(grep -c '^allreduce  *27872824 float32  bucket0$' hvd.mix)" = 1 ] ||
    fail "mix horovod at 128M: not one bucket of 27872824 bytes: $(grep -v '^#' hvd.mix)"
"$bin" mix horovod --layers "$data/densenet121-14.layers" --fusion off >off.mix ||
    fail "mix horovod --fusion off exited $?"
[ "$(grep -vc '^#' off.mix)" = 364 ] || fail "mix horovod --fusion off: $(grep -vc '^#' off.mix) ops"
# the last layer's gradient first: the classifier's bias (14 floats)
[ "$(grep -v '^#' off.mix | head -1)" = "allreduce                56 float32  bucket0" ] ||
    fail "mix horovod --fusion off: first op '$(grep -v '^#' off.mix | head -1)'"

# ddp: PyTorch DDP's buckets of the same tensors, last layer first, a bucket closed once it
# reaches its limit (1 MiB for the first, 25 MiB after), computed here independently
ddp_want() { # ELEMENT_BYTES FIRST_LIMIT LIMIT < layers: one bucket's bytes a line
    grep -v '^ *#' | awk -v es="$1" -v f="$2" -v c="$3" 'NF { el[n++] = $1 }
        END { b = 0; k = 0
              for (i = n - 1; i >= 0; i--) {
                  b += es * el[i]
                  if (b >= (k == 0 ? f : c) || i == 0) { printf "%d\n", b; b = 0; k++ } } }'
}
ddp_got() { # the ops' bytes of a mix, a line each
    awk '!/^#/ { v = $2; m = 1; if (v ~ /GiB$/) m = 2 ^ 30; else if (v ~ /MiB$/) m = 2 ^ 20
                 else if (v ~ /KiB$/) m = 1024; sub(/[KMG]iB$/, "", v); printf "%d\n", v * m }' "$1"
}
"$bin" mix ddp --layers "$data/densenet121-14.layers" >ddp.mix 2>err.txt ||
    fail "mix ddp exited $?: $(cat err.txt)"
ddp_want 4 1048576 26214400 <"$data/densenet121-14.layers" >want-ddp.txt
ddp_got ddp.mix >got-ddp.txt
cmp -s got-ddp.txt want-ddp.txt ||
    fail "mix ddp: buckets $(tr '\n' ' ' <got-ddp.txt), expected $(tr '\n' ' ' <want-ddp.txt)"
[ "$(awk '{ s += $1 } END { print s }' got-ddp.txt)" = 27872824 ] ||
    fail "mix ddp: the buckets do not add up to DenseNet-121's 27872824 gradient bytes"
nb=$(wc -l <got-ddp.txt | tr -d ' ')
[ "$nb" -ge 3 ] || fail "mix ddp: $nb buckets, expected 3 or more"
grep -qx "# ddp step of $nb ops, 27872824 bytes in all" ddp.mix ||
    fail "mix ddp's first comment line: $(head -1 ddp.mix)"
awk '!/^#/ { if ($1 != "allreduce" || $3 != "float32" || $4 != "bucket" (k + 0)) { print; exit 1 }
             k++ }' ddp.mix ||
    fail "mix ddp: an op is not 'allreduce SIZE float32 bucketN': $(grep -v '^#' ddp.mix | head -3)"
"$bin" mix ddp --layers "$data/densenet121-14.layers" --first-bucket 64K --bucket-cap 4M \
    --dtype float16 >ddp16.mix || fail "mix ddp --bucket-cap 4M exited $?"
ddp_want 2 65536 4194304 <"$data/densenet121-14.layers" >want16.txt
ddp_got ddp16.mix >got16.txt
cmp -s got16.txt want16.txt ||
    fail "mix ddp float16 64K/4M: buckets $(tr '\n' ' ' <got16.txt), expected $(tr '\n' ' ' <want16.txt)"
[ "$(wc -l <got16.txt)" -gt "$nb" ] || fail "mix ddp at 4M: no more buckets than at 25M"
# --bucket-cap alone: DDP(bucket_cap_mb=4) makes the first bucket's limit 4 MiB too
"$bin" mix ddp --layers "$data/densenet121-14.layers" --bucket-cap 4M >ddp4.mix ||
    fail "mix ddp --bucket-cap 4M alone exited $?"
ddp_want 4 4194304 4194304 <"$data/densenet121-14.layers" >want4.txt
ddp_got ddp4.mix >got4.txt
cmp -s got4.txt want4.txt ||
    fail "mix ddp --bucket-cap 4M: buckets $(tr '\n' ' ' <got4.txt), expected $(tr '\n' ' ' <want4.txt)"
[ "$(head -n 1 got4.txt)" -ge 4194304 ] || fail "mix ddp --bucket-cap 4M: first bucket $(head -n 1 got4.txt) bytes"

# a small model of our own, written with --out, read back and replayed at 2 ranks
printf '# a test model\n4096 embed\n\n1000  # no name\r\n2048 head.w   # the head\n' >tiny.layers
"$bin" mix fsdp --layers tiny.layers --dtype float32 --out tiny.mix >out.txt 2>err.txt ||
    fail "mix fsdp tiny exited $?: $(cat err.txt)"
cat >want.txt <<'W'
allgather             16KiB float32  fwd.embed
allgather              4000 float32  fwd.unit1
allgather              8KiB float32  fwd.head.w
allgather              8KiB float32  bwd.head.w
reduce_scatter         8KiB float32  grad.head.w
allgather              4000 float32  bwd.unit1
reduce_scatter         4000 float32  grad.unit1
allgather             16KiB float32  bwd.embed
reduce_scatter        16KiB float32  grad.embed
W
grep -v '^#' tiny.mix | cmp -s - want.txt || fail "tiny.mix's ops: $(grep -v '^#' tiny.mix)"
mpi 2 "$bin" run replay --mix tiny.mix --overlap on --trials 2 --warmup 1 --trial-ms 2 \
    --out run >run.txt 2>&1 || fail "replay of tiny.mix exited $?: $(tail -5 run.txt)"
n=$(csv_awk 'v("bench") == "replay" && v("case") == "overlap" && v("metric") == "time" &&
             v("wrong") == 0 && v("ranks") == 2 { n++ } END { print n + 0 }' run/results.csv)
[ "$n" = 1 ] || fail "replay of tiny.mix: $n verified time rows, expected 1"
got=$(csv_awk 'v("metric") == "op_time" { printf "%s=%s ", v("case"), v("bytes") }' run/results.csv)
want="overlap:0:allgather:fwd.embed=16384 overlap:1:allgather:fwd.unit1=4000 \
overlap:2:allgather:fwd.head.w=8192 overlap:3:allgather:bwd.head.w=8192 \
overlap:4:reduce_scatter:grad.head.w=8192 overlap:5:allgather:bwd.unit1=4000 \
overlap:6:reduce_scatter:grad.unit1=4000 overlap:7:allgather:bwd.embed=16384 \
overlap:8:reduce_scatter:grad.embed=16384 "
[ "$got" = "$want" ] || fail "replay of tiny.mix: op rows '$got', expected '$want'"

# bad input: one line naming the option or FILE:LINE, exit 2, nothing written
printf '4096 a\n12x b\n' >nan.layers
expect_bad "mix: nan.layers:2: '12x' is not a count of elements (decimal digits, e.g. 7087872)" \
    mix fsdp --layers nan.layers --out w.mix
printf '# zero\n\n0 a\n' >zero.layers
expect_bad "mix: zero.layers:3: a layer of 0 elements (a layer holds at least 1)" \
    mix fsdp --layers zero.layers --out w.mix
printf '100\n-5 neg\n' >neg.layers
expect_bad "mix: neg.layers:2: count '-5' is negative (a layer holds at least 1 element)" \
    mix horovod --layers neg.layers --out w.mix
printf '1.5\n' >frac.layers
expect_bad "mix: frac.layers:1: '1.5' is not a count of elements" mix fsdp --layers frac.layers
printf '# nothing\n\n   # still nothing\n' >empty.layers
expect_bad "mix: empty.layers:3: no layers in the list (one line per layer: COUNT [NAME])" \
    mix fsdp --layers empty.layers --out w.mix
: >void.layers
expect_bad "mix: void.layers:1: no layers in the list" mix fsdp --layers void.layers
# 1e18 bytes a mix op holds at most: 250000000000000000 floats fit, one more does not
printf '250000000000000000\n250000000000000001\n' >huge.layers
expect_bad "mix: huge.layers:2: 250000000000000001 elements of float32 are more than a mix op may hold (1e18 bytes)" \
    mix fsdp --layers huge.layers --dtype float32 --out w.mix
printf '99999999999999999999999999\n' >wide.layers
expect_bad "mix: wide.layers:1: 99999999999999999999999999 elements of float16 are more than" \
    mix fsdp --layers wide.layers
printf '10 a b\n' >fields.layers
expect_bad "mix: fields.layers:1: a field too many: 'b' (COUNT [NAME])" mix fsdp --layers fields.layers
printf '10 a$b\n' >name.layers
expect_bad "mix: name.layers:1: name 'a\$b' has a character other than letters, digits and _ . - / : [ ]" \
    mix fsdp --layers name.layers
printf '10 abcdefghijabcdefghijabcdefghijabcdefghijK\n' >long.layers
expect_bad "mix: long.layers:1: name 'abcdefghijabcdefghijabcdefghijabcdefghij...' is longer than 40 bytes" \
    mix fsdp --layers long.layers
printf '10 a\n1\0002 b\n' >nul.layers
expect_bad "mix: nul.layers:2: a NUL byte in the line" mix fsdp --layers nul.layers
expect_bad "mix: cannot open 'nosuch.layers': No such file or directory" \
    mix fsdp --layers nosuch.layers --out w.mix
expect_bad "mix: unknown mix 'zero3' (fsdp, horovod, ddp, moe)" mix zero3 --layers tiny.layers
expect_bad "mix: which mix? fsdp, horovod, ddp or moe" mix --layers tiny.layers
expect_bad "mix: fsdp needs --layers FILE" mix fsdp
expect_bad "mix: bad value for --dtype: 'bfloat16' (float32, float64, int32, float16, int8)" \
    mix fsdp --layers tiny.layers --dtype bfloat16
expect_bad "mix: bad value for --fusion:" mix horovod --layers tiny.layers --fusion 4Q
expect_bad "mix: bad value for --fusion: '0' is not 1 byte to 1e18 bytes ('off': no fusion)" \
    mix horovod --layers tiny.layers --fusion 0
expect_bad "mix: --fusion applies to horovod only" mix fsdp --layers tiny.layers --fusion 4M
expect_bad "mix: --fusion applies to horovod only" mix ddp --layers tiny.layers --fusion 4M
expect_bad "mix: --first-bucket and --bucket-cap apply to ddp only" \
    mix horovod --layers tiny.layers --bucket-cap 4M
expect_bad "mix: bad value for --bucket-cap: '0' is not 1 byte to 1e18 bytes" \
    mix ddp --layers tiny.layers --bucket-cap 0
expect_bad "mix: bad value for --first-bucket:" mix ddp --layers tiny.layers --first-bucket 1Q
expect_bad "mix: ddp needs --layers FILE" mix ddp
# each layer fits a mix op (6e17 and 5e17 bytes); the first bucket, under its 1e18 limit after
# the first, passes 1e18 with the second
printf '150000000000000000 a\n125000000000000000 b\n' >big.layers
expect_bad "mix: big.layers: a DDP bucket would hold more than a mix op may (1e18 bytes): a smaller --first-bucket or --bucket-cap" \
    mix ddp --layers big.layers --first-bucket 1000000000000000000 --out w.mix
expect_bad "mix: --moe-layers, --tokens, --hidden and --topk apply to moe only" \
    mix fsdp --layers tiny.layers --topk 2
expect_bad "mix: --layers is for fsdp, horovod and ddp; moe takes --moe-layers N" \
    mix moe --layers tiny.layers
expect_bad "mix: bad value for --tokens:" mix moe --tokens 0
expect_bad "mix: bad value for --moe-layers:" mix moe --moe-layers 1000000000 --out w.mix
# a file replay would refuse (a line of 64 KiB or more) is not written
expect_bad "mix: the mix would be" mix fsdp --layers tiny.layers --out w.mix \
    --comment "$(head -c 70000 /dev/zero | tr '\0' x)"
expect_bad "mix: --tokens x --topk x --hidden elements of float16 are more than a mix op may hold (1e18 bytes)" \
    mix moe --tokens 1000000000 --hidden 1000000000 --topk 1000
expect_bad "mix: unexpected argument 'moe'" mix fsdp moe --layers tiny.layers
expect_bad "mix: unknown option '--ranks'" mix fsdp --layers tiny.layers --ranks 8
[ ! -e w.mix ] && [ ! -e w.mix.tmp ] || fail "a refused mix wrote w.mix"
# an --out that cannot be written: exit 1, nothing left behind
"$bin" mix fsdp --layers tiny.layers --out nodir/w.mix >out.txt 2>err.txt
rc=$?
[ "$rc" = 2 ] || fail "mix --out nodir/w.mix exited $rc, expected 2"
grep -q "bad value for --out: folder 'nodir' does not exist" err.txt ||
    fail "mix --out nodir/w.mix: error lacks the folder: $(cat err.txt)"
# --out is renamed over: a link, a FIFO or a folder is refused before the work (exit 2), left as
# it was (as root, --out /dev/null replaced the system's /dev/null with the mix)
echo keep >target.mix
ln -s target.mix link.mix
mkfifo fifo.mix
mkdir dir.mix
for o in link.mix fifo.mix dir.mix; do
    "$bin" mix fsdp --layers tiny.layers --out "$o" >out.txt 2>err.txt
    rc=$?
    [ "$rc" = 2 ] || fail "mix --out $o exited $rc, expected 2"
    grep -q "error: mix: cannot use --out '$o': " err.txt || fail "mix --out $o: $(cat err.txt)"
done
[ -L link.mix ] && [ "$(cat target.mix)" = keep ] || fail "mix --out link.mix changed the link"
[ -p fifo.mix ] || fail "mix --out fifo.mix replaced the FIFO"
# --comment holds lines, not control characters; the default comment's command line is escaped
"$bin" mix fsdp --layers tiny.layers --comment "$(printf 'a\033[2Jb')" >out.txt 2>err.txt
rc=$?
[ "$rc" = 2 ] || fail "mix --comment with an ESC exited $rc, expected 2"
grep -q "error: mix: bad value for --comment: control character .x1b at byte 2" err.txt ||
    fail "mix --comment with an ESC: $(cat -v err.txt)"
"$bin" mix fsdp --layers tiny.layers --out "e$(printf '\033')x.mix" >out.txt 2>err.txt ||
    fail "mix --out with an ESC in its name: $(cat -v err.txt)"
LC_ALL=C grep -q "$(printf '\033')" "e$(printf '\033')x.mix" &&
    fail "the default comment copied a raw ESC: $(cat -v "e$(printf '\033')x.mix" | head -3)"
grep -qF 'made by: fabricbench mix fsdp --layers tiny.layers --out e\x1bx.mix' "e$(printf '\033')x.mix" ||
    fail "the default comment lacks the escaped command: $(head -3 "e$(printf '\033')x.mix")"
finish

/* The mix readers (harness/mix): the text format, good and bad (each message with its file and
 * line), its writer read back, and NCCL Inspector's JSON (tests/data/mix). Argument: the folder
 * tests/data/mix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mix.h"
#include "mix_gen.h"
#include "test.h"

static void check_good_file(const char *dir)
{
    char path[1024], err[512] = "";
    struct fb_mix m;

    snprintf(path, sizeof path, "%s/good.mix", dir);
    CHECK(fb_mix_read(path, FB_DTYPE_FLOAT32, &m, err, sizeof err) == FB_OK);
    CHECK_STR(err, "");
    CHECK(m.nops == 6);
    if (m.nops != 6)
        return;
    CHECK(m.ops[0].coll == FB_MIX_ALLREDUCE && m.ops[0].bytes == 4u << 20 &&
          m.ops[0].dtype == FB_DTYPE_FLOAT32);
    CHECK_STR(m.ops[0].name, "bucket0");
    CHECK(m.ops[1].coll == FB_MIX_ALLGATHER && m.ops[1].bytes == 3u << 19 &&
          m.ops[1].dtype == FB_DTYPE_FLOAT16);
    CHECK_STR(m.ops[1].name, "fwd.h0");
    CHECK_NEAR(m.ops[1].compute_us, 12.5, 0);
    CHECK(m.ops[2].coll == FB_MIX_REDUCE_SCATTER && m.ops[2].bytes == 3072);
    CHECK(m.ops[3].coll == FB_MIX_ALLTOALL && m.ops[3].bytes == 2048 &&
          m.ops[3].dtype == FB_DTYPE_INT8);
    CHECK_STR(m.ops[3].name, "");
    CHECK(m.ops[4].coll == FB_MIX_BROADCAST && m.ops[4].bytes == 1u << 30 &&
          m.ops[4].dtype == FB_DTYPE_FLOAT64);
    CHECK_STR(m.ops[4].name, "root:bcast");
    CHECK(m.ops[5].coll == FB_MIX_REDUCE && m.ops[5].bytes == 8 &&
          m.ops[5].dtype == FB_DTYPE_INT32);
    CHECK(fb_mix_total_bytes(&m) == (4u << 20) + (3u << 19) + 3072 + 2048 + (1u << 30) + 8);
    CHECK(fb_mix_largest(&m) == &m.ops[4] && fb_mix_largest(&m)->bytes == 1u << 30);
    fb_mix_free(&m);
}

/* Each bad text gives FB_ERR_USAGE and exactly this message. */
static void check_bad(const char *text, const char *expect)
{
    char err[512] = "";
    struct fb_mix m = {0};
    fb_status st = fb_mix_parse(text, strlen(text), "bad.mix", &m, err, sizeof err);

    CHECK(st == FB_ERR_USAGE);
    CHECK_STR(err, expect);
    CHECK(m.nops == 0 && m.ops == NULL);
}

/* Sizes with a fraction or an exponent that are whole numbers of bytes, read exactly. */
static void check_exact_sizes(void)
{
    static const struct {
        const char *size;
        size_t bytes;
    } cases[] = {
        {"1.5K", 1536},
        {"0.25K", 256},
        {"1.5e3", 1500},
        {"4.0000", 4},
        {"0.0009765625M", 1024},          /* 2^-10 MiB */
        {"1e18", 1000000000000000000ull},
        {"0.931322574615478515625G", 1000000000},          /* 1e9 / 2^30 GiB, 21 digits */
        {"1.000000000931322574615478515625G", 1073741825}, /* 2^30 + 1 bytes */
        {"931322574.6154785156G", 0},                      /* not whole: refused */
        {"999999999999999999", 999999999999999999ull},
        {"976562500000000K", 1000000000000000000ull},      /* 1e18 exactly */
        {"976562500000000.0000000001K", 0},                /* not whole */
        {"1.00000000000000000e17", 100000000000000000ull},
        {"150e-1", 15},
        {"0.0150e3", 15},
        {"12345678901234567.8e1", 123456789012345678ull},
        {"0.5G", 536870912},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[96], err[512] = "";
        struct fb_mix m = {0};
        snprintf(text, sizeof text, "allgather %s int8\n", cases[i].size);
        fb_status st = fb_mix_parse(text, strlen(text), "x.mix", &m, err, sizeof err);
        if (cases[i].bytes == 0) {
            CHECK(st == FB_ERR_USAGE);
            continue;
        }
        CHECK(st == FB_OK);
        CHECK(m.nops == 1 && m.ops[0].bytes == cases[i].bytes);
        if (st != FB_OK || m.ops[0].bytes != cases[i].bytes)
            fprintf(stderr, "  size %s: %s, %zu bytes\n", cases[i].size, err,
                    m.nops ? m.ops[0].bytes : 0);
        fb_mix_free(&m);
    }
}

static void check_bad_texts(void)
{
    check_bad("allreduce 4M float32\nallreduse 4M float32\n",
              "bad.mix:2: unknown collective 'allreduse' (allreduce, allgather, reduce_scatter, "
              "alltoall, broadcast, reduce)");
    check_bad("# c\n\nallgather 4MB float32\n",
              "bad.mix:3: size '4MB' has an unknown unit (B, K, KiB, M, MiB, G, GiB: binary; "
              "KB, MB and GB are refused as ambiguous)");
    check_bad("allgather four float32\n",
              "bad.mix:1: size 'four' is not a number with a unit (4096, 64K, 1.5MiB)");
    check_bad("allgather 0 float32\n", "bad.mix:1: size '0' is out of range (1 byte to 1e18 bytes)");
    /* one byte past the limit, which a double rounds down onto it */
    check_bad("allgather 1000000000000000001 int8\n",
              "bad.mix:1: size '1000000000000000001' is out of range (1 byte to 1e18 bytes)");
    check_bad("allgather 1.5 float32\n", "bad.mix:1: size '1.5' is not a whole number of bytes");
    /* a fraction a double rounds away: 2^40 plus 1e-7 reads as 2^40 in a double */
    check_bad("allgather 1099511627776.0000001 int8\n",
              "bad.mix:1: size '1099511627776.0000001' is not a whole number of bytes");
    /* 931322574.6154785 x 2^30 is 999999999999999983.22784, 1e18 in doubles */
    check_bad("allgather 931322574.6154785G int8\n",
              "bad.mix:1: size '931322574.6154785G' is not a whole number of bytes");
    check_bad("allgather 1.0000000000000000001K int8\n",
              "bad.mix:1: size '1.0000000000000000001K' is not a whole number of bytes");
    check_bad("allgather 150e-2 int8\n", "bad.mix:1: size '150e-2' is not a whole number of bytes");
    /* past 1e18 by 64 bytes, which a double rounds onto it */
    check_bad("allgather 1000000000000000064.0 int8\n",
              "bad.mix:1: size '1000000000000000064.0' is out of range (1 byte to 1e18 bytes)");
    check_bad("allgather 123456789.0123456789G int8\n",
              "bad.mix:1: size '123456789.0123456789G' is not a whole number of bytes");
    check_bad("allgather 1e-30K int8\n", "bad.mix:1: size '1e-30K' is out of range (1 byte to "
              "1e18 bytes)");
    check_bad("allgather 1.0000000000000001e18 int8\n",
              "bad.mix:1: size '1.0000000000000001e18' is out of range (1 byte to 1e18 bytes)");
    check_bad("allreduce 4K float32 compute_us=1 compute_us=2\n",
              "bad.mix:1: compute_us given twice ('compute_us=2' after the first)");
    check_bad("allgather 1..5K float32\n",
              "bad.mix:1: size '1..5K': '1..5' is not a number (decimal only: no hex, inf or "
              "nan)");
    check_bad("allreduce 6 float32\n",
              "bad.mix:1: 6 bytes is not a whole number of float32 elements (4 bytes each)");
    check_bad("allreduce 4K bfloat16\n",
              "bad.mix:1: unknown type 'bfloat16' (float32, float64, int32, float16, int8)");
    check_bad("allreduce 4K\n",
              "bad.mix:1: 2 fields, expected COLL SIZE DTYPE [NAME] [compute_us=US]");
    check_bad("allreduce 4K float32 a b\n",
              "bad.mix:1: a field too many: 'b' (COLL SIZE DTYPE [NAME] [compute_us=US])");
    check_bad("allreduce 4K float32 a compute_us=1 x y\n",
              "bad.mix:1: a field too many: 'x y' (COLL SIZE DTYPE [NAME] [compute_us=US])");
    check_bad("allreduce 4K float32 a compute_us=-1\n",
              "bad.mix:1: 'compute_us=-1': compute_us must be a number of microseconds from 0 "
              "to 1e9");
    check_bad("allreduce 4K float32 a$b\n",
              "bad.mix:1: name 'a$b' has a character other than letters, digits and _ . - / : "
              "[ ]");
    check_bad("allreduce 4K float32 "
              "n123456789012345678901234567890123456789012345678\n",
              "bad.mix:1: name 'n123456789012345678901234567890123456789...' is longer than 47 "
              "bytes");
    check_bad("# nothing\n\n", "bad.mix:2: no ops in the mix (one line per collective: COLL "
              "SIZE DTYPE [NAME])");
    check_bad("", "bad.mix:1: no ops in the mix (one line per collective: COLL SIZE DTYPE "
              "[NAME])");
    {
        static const char nul[] = "allreduce 4K float32\nall\0reduce 4K float32\n";
        char err[256] = "";
        struct fb_mix m;
        CHECK(fb_mix_parse(nul, sizeof nul - 1, "bad.mix", &m, err, sizeof err) == FB_ERR_USAGE);
        CHECK_STR(err, "bad.mix:2: a NUL byte in the line");
    }
}

/* The writer's text parses back to the same ops. */
static void check_round_trip(void)
{
    struct fb_mix a = {0}, b;
    struct fb_mix_op ops[] = {
        {.coll = FB_MIX_ALLREDUCE, .bytes = 3u << 20, .dtype = FB_DTYPE_FLOAT32, .name = "b0"},
        {.coll = FB_MIX_ALLTOALL, .bytes = 1000, .dtype = FB_DTYPE_FLOAT16, .compute_us = 2.25},
        {.coll = FB_MIX_REDUCE, .bytes = 2u << 30, .dtype = FB_DTYPE_FLOAT64, .name = "r"},
        {.coll = FB_MIX_BROADCAST, .bytes = 5120, .dtype = FB_DTYPE_INT8, .name = "x"},
        /* above 2^53: read back exactly, not through a double */
        {.coll = FB_MIX_ALLGATHER, .bytes = 999999999999999998ull, .dtype = FB_DTYPE_INT8},
    };
    char *text = NULL, err[256] = "";

    for (size_t i = 0; i < 5; i++)
        CHECK(fb_mix_add(&a, &ops[i]) == FB_OK);
    CHECK(fb_mix_format(&a, "line one\n\nline three", &text) == FB_OK);
    CHECK_HAS(text, "# line one\n#\n# line three\n");
    CHECK_HAS(text, "allreduce              3MiB float32  b0\n");
    CHECK_HAS(text, "alltoall               1000 float16  compute_us=2.25\n");
    CHECK_HAS(text, "reduce                 2GiB float64  r\n");
    CHECK_HAS(text, "broadcast              5KiB int8     x\n");
    CHECK(fb_mix_parse(text, strlen(text), "rt.mix", &b, err, sizeof err) == FB_OK);
    CHECK(b.nops == 5);
    for (size_t i = 0; i < b.nops && i < 5; i++) {
        CHECK(b.ops[i].coll == ops[i].coll && b.ops[i].bytes == ops[i].bytes &&
              b.ops[i].dtype == ops[i].dtype && b.ops[i].compute_us == ops[i].compute_us);
        CHECK_STR(b.ops[i].name, ops[i].name);
    }
    free(text);
    fb_mix_free(&a);
    fb_mix_free(&b);
}

static void check_inspector(const char *dir)
{
    char path[1024], err[512] = "";
    struct fb_mix m;

    snprintf(path, sizeof path, "%s/inspector-v4.jsonl", dir);
    CHECK(fb_mix_read(path, FB_DTYPE_FLOAT16, &m, err, sizeof err) == FB_OK);
    CHECK_STR(err, "");
    /* comm 0x7f8c..., rank 0 only, in coll_sn order, SendRecv skipped */
    CHECK(m.nops == 4);
    if (m.nops == 4) {
        CHECK(m.ops[0].coll == FB_MIX_ALLREDUCE && m.ops[0].bytes == 4194304);
        CHECK_STR(m.ops[0].name, "sn1");
        /* an all-gather's record is one rank's piece: 4 ranks gather 4 MiB */
        CHECK(m.ops[1].coll == FB_MIX_ALLGATHER && m.ops[1].bytes == 4194304);
        CHECK_STR(m.ops[1].name, "sn2");
        CHECK(m.ops[2].coll == FB_MIX_REDUCE_SCATTER && m.ops[2].bytes == 1048576);
        CHECK_STR(m.ops[2].name, "sn4");
        CHECK(m.ops[3].coll == FB_MIX_BROADCAST && m.ops[3].bytes == 4096);
        for (size_t i = 0; i < 4; i++)
            CHECK(m.ops[i].dtype == FB_DTYPE_FLOAT16);
    }
    fb_mix_free(&m);
}

/* NCCL 2.30's records: 'comm_name' in the header, and point-to-point operations as
 * "p2p_perf" records (plugins/profiler/inspector/inspector_json.cc at v2.30.7-1), left out
 * without deciding the communicator or rank replayed; nor does a Send collective record */
static void check_inspector_230(void)
{
    static const char text[] =
        "{\"header\":{\"id\":\"0x8\",\"rank\":0,\"n_ranks\":2},\"coll_perf\":{\"coll\":"
        "\"Send\",\"coll_sn\":1,\"coll_msg_size_bytes\":64}}\n"
        "{\"header\":{\"id\":\"0x9\",\"comm_name\":\"unknown\",\"rank\":1,\"n_ranks\":2,"
        "\"nnodes\":1},\"metadata\":{\"inspector_output_format_version\":\"v4.0\"},"
        "\"p2p_perf\":{\"p2p\":\"Send\",\"p2p_sn\":1,\"p2p_peer\":0,"
        "\"p2p_msg_size_bytes\":1024,\"p2p_exec_time_us\":5,\"p2p_timing_source\":"
        "\"kernel_gpu\",\"p2p_algobw_gbs\":0.2,\"p2p_busbw_gbs\":0.2}}\n"
        "{\"header\":{\"id\":\"0x1\",\"comm_name\":\"unknown\",\"rank\":0,\"n_ranks\":2,"
        "\"nnodes\":1},\"metadata\":{\"inspector_output_format_version\":\"v4.0\"},"
        "\"coll_perf\":{\"coll\":\"ReduceScatter\",\"coll_sn\":3,"
        "\"coll_msg_size_bytes\":4096,\"coll_exec_time_us\":9,\"coll_timing_source\":"
        "\"kernel_gpu\",\"coll_algobw_gbs\":0.9,\"coll_busbw_gbs\":0.45}}\n";
    char err[512] = "";
    struct fb_mix m;

    CHECK(fb_mix_inspector_parse(text, strlen(text), "ins.json", FB_DTYPE_FLOAT32, &m, err,
                                 sizeof err) == FB_OK);
    CHECK_STR(err, "");
    CHECK(m.nops == 1);
    if (m.nops == 1) {
        CHECK(m.ops[0].coll == FB_MIX_REDUCE_SCATTER && m.ops[0].bytes == 8192);
        CHECK_STR(m.ops[0].name, "sn3");
    }
    fb_mix_free(&m);
}

/* A backslash escaped before "u0000" is a backslash, not a NUL: the id "0x\\u0000" is read. */
static void check_inspector_backslash(void)
{
    static const char text[] =
        "{\"header\":{\"id\":\"0x\\\\u0000\",\"rank\":0,\"n_ranks\":2},"
        "\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":1,\"coll_msg_size_bytes\":64}}\n";
    char err[512] = "";
    struct fb_mix m;

    CHECK(fb_mix_inspector_parse(text, strlen(text), "ins.json", FB_DTYPE_FLOAT32, &m, err,
                                 sizeof err) == FB_OK);
    CHECK_STR(err, "");
    CHECK(m.nops == 1 && m.ops[0].bytes == 64);
    fb_mix_free(&m);
}

/* The len bytes of text (a NUL among them too) are refused with exactly this message. */
static void check_inspector_bad_n(const char *text, size_t len, const char *expect)
{
    char err[512] = "";
    struct fb_mix m;

    CHECK(fb_mix_inspector_parse(text, len, "ins.json", FB_DTYPE_FLOAT32, &m, err,
                                 sizeof err) == FB_ERR_USAGE);
    CHECK_STR(err, expect);
}

static void check_inspector_bad(const char *text, const char *expect)
{
    check_inspector_bad_n(text, strlen(text), expect);
}

static void check_inspector_bad_texts(void)
{
    static const char ok[] = "{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":2},"
                             "\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":1,"
                             "\"coll_msg_size_bytes\":64}}\n";
    char text[1024];

    snprintf(text, sizeof text, "%s\n{\"header\": 1", ok);
    check_inspector_bad(text, "ins.json:3: not a JSON object (NCCL Inspector writes one per "
                              "collective)");
    /* a p2p_perf record's header is checked as a collective's */
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":\"x\",\"n_ranks\":2},"
                        "\"p2p_perf\":{\"p2p\":\"Send\"}}",
                        "ins.json:1: 'rank' in 'header' is not a number (a whole number from 0 "
                        "to 1e9)");
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":2},"
                        "\"p2p_perf\":{\"p2p\":\"Send\",\"p2p_sn\":1}}\n",
                        "ins.json:2: no collectives in the NCCL Inspector output");
    snprintf(text, sizeof text, "%s{\"p2p_perf\":{}}\n", ok);
    check_inspector_bad(text, "ins.json:2: not an NCCL Inspector record (no 'header' and "
                              "'coll_perf' objects)");
    snprintf(text, sizeof text, "%s{\"a\":1}\n", ok);
    check_inspector_bad(text, "ins.json:2: not an NCCL Inspector record (no 'header' and "
                              "'coll_perf' objects)");
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":2},\"coll_perf\":"
                        "{\"coll\":\"AllToAll\",\"coll_sn\":1,\"coll_msg_size_bytes\":64}}",
                        "ins.json:1: unknown collective 'AllToAll' in 'coll' (AllReduce, "
                        "AllGather, ReduceScatter, Broadcast, Reduce; Send, Recv and SendRecv "
                        "are skipped)");
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":2},\"coll_perf\":"
                        "{\"coll\":\"AllReduce\",\"coll_sn\":1,\"coll_msg_size_bytes\":6}}",
                        "ins.json:1: coll_sn 1: 6 bytes is not a whole number (above 0) of "
                        "float32 elements");
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":2},\"coll_perf\":"
                        "{\"coll\":\"AllReduce\",\"coll_sn\":1.5,\"coll_msg_size_bytes\":8}}",
                        "ins.json:1: 'coll_sn' in 'coll_perf' is 1.5: not a whole number from 0 "
                        "to 2^53 - 1");
    /* each number is named with what it holds */
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":2},\"coll_perf\":"
                        "{\"coll\":\"AllReduce\",\"coll_sn\":1,\"coll_msg_size_bytes\":2e18}}",
                        "ins.json:1: 'coll_msg_size_bytes' in 'coll_perf' is 2e+18: not a whole "
                        "number from 0 to 2^53 - 1");
    /* 2^53 + 1 would be read as 2^53: refused; 0.1 shown as written */
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":2},\"coll_perf\":"
                        "{\"coll\":\"AllReduce\",\"coll_sn\":1,"
                        "\"coll_msg_size_bytes\":9007199254740993}}",
                        "ins.json:1: 'coll_msg_size_bytes' in 'coll_perf' is 9007199254740992: "
                        "not a whole number from 0 to 2^53 - 1");
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0.1,\"n_ranks\":2},\"coll_perf\":"
                        "{\"coll\":\"AllReduce\",\"coll_sn\":1,\"coll_msg_size_bytes\":8}}",
                        "ins.json:1: 'rank' in 'header' is 0.1: not a whole number from 0 to 1e9");
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":2},\"coll_perf\":"
                        "{\"coll\":\"AllReduce\",\"coll_sn\":1}}",
                        "ins.json:1: 'coll_perf' has no 'coll_msg_size_bytes' (a whole number from "
                        "0 to 2^53 - 1)");
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":-1,\"n_ranks\":2},\"coll_perf\":"
                        "{\"coll\":\"AllReduce\",\"coll_sn\":1,\"coll_msg_size_bytes\":8}}",
                        "ins.json:1: 'rank' in 'header' is -1: not a whole number from 0 to 1e9");
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":0},\"coll_perf\":"
                        "{\"coll\":\"AllReduce\",\"coll_sn\":1,\"coll_msg_size_bytes\":8}}",
                        "ins.json:1: 'n_ranks' in 'header' is 0 (1 or more)");
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":2},\"coll_perf\":"
                        "{\"coll\":7,\"coll_sn\":1,\"coll_msg_size_bytes\":8}}",
                        "ins.json:1: 'coll_perf' needs 'coll' (a string)");
    /* a NUL escape would end the C string: "AllReduce\u0000x" read as AllReduce */
    snprintf(text, sizeof text, "%s{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":2},"
             "\"coll_perf\":{\"coll\":\"AllReduce\\u0000x\",\"coll_sn\":2,"
             "\"coll_msg_size_bytes\":64}}\n", ok);
    check_inspector_bad(text, "ins.json:2: a NUL byte (raw or \\u0000) in a record, which no "
                              "NCCL Inspector field holds");
    /* a raw NUL in the id: "0x1<NUL>zz" read as "0x1", another communicator's records merged */
    {
        static const char raw[] = "{\"header\":{\"id\":\"0x1\0zz\",\"rank\":0,\"n_ranks\":2},"
                                  "\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":1,"
                                  "\"coll_msg_size_bytes\":64}}\n";
        check_inspector_bad_n(raw, sizeof raw - 1, "ins.json:1: a NUL byte (raw or \\u0000) in "
                                                   "a record, which no NCCL Inspector field holds");
    }
    /* 2^40 bytes times 16777217 ranks wraps a size_t to 2^40: refused, not replayed wrong */
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":16777217},"
                        "\"coll_perf\":{\"coll\":\"AllGather\",\"coll_sn\":1,"
                        "\"coll_msg_size_bytes\":1099511627776}}",
                        "ins.json:1: coll_sn 1: 1099511627776 bytes times 16777217 ranks is more "
                        "than 1e18 bytes");
    /* 555247084952804 x 1801 = 1000000000000000004 bytes: just above 1e18, which the check in
     * doubles let through (the product rounds to 1e18) */
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":1801},"
                        "\"coll_perf\":{\"coll\":\"AllGather\",\"coll_sn\":1,"
                        "\"coll_msg_size_bytes\":555247084952804}}",
                        "ins.json:1: coll_sn 1: 555247084952804 bytes times 1801 ranks is more "
                        "than 1e18 bytes");
    /* the communicator chosen by the first record: an id of 1 to 127 bytes (a longer one was
     * cut, matched none of its records and read as "no collectives") */
    {
        char text[600], id[200];
        memset(id, 'x', 128);
        id[128] = '\0';
        snprintf(text, sizeof text, "{\"header\":{\"id\":\"%s\",\"rank\":0,\"n_ranks\":2},"
                 "\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":1,"
                 "\"coll_msg_size_bytes\":8}}", id);
        check_inspector_bad(text, "ins.json:1: the communicator's 'id' in 'header' is too long "
                                  "(1 to 127 bytes)");
    }
    check_inspector_bad("{\"header\":{\"id\":\"\",\"rank\":0,\"n_ranks\":2},\"coll_perf\":"
                        "{\"coll\":\"AllReduce\",\"coll_sn\":1,\"coll_msg_size_bytes\":8}}",
                        "ins.json:1: the communicator's 'id' in 'header' is empty (1 to 127 "
                        "bytes)");
    /* a collective's name with a line break (JSON's \n) is quoted escaped: one line */
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":2},\"coll_perf\":"
                        "{\"coll\":\"All\\nReduce\",\"coll_sn\":1,\"coll_msg_size_bytes\":8}}",
                        "ins.json:1: unknown collective 'All\\x0aReduce' in 'coll' (AllReduce, "
                        "AllGather, ReduceScatter, Broadcast, Reduce; Send, Recv and SendRecv "
                        "are skipped)");
    check_inspector_bad("{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":2},\"coll_perf\":"
                        "{\"coll\":\"Send\",\"coll_sn\":1,\"coll_msg_size_bytes\":8}}\n\n",
                        "ins.json:3: no collectives in the NCCL Inspector output");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_mix tests/data/mix\n");
        return 2;
    }
    check_good_file(argv[1]);
    check_exact_sizes();
    check_bad_texts();
    check_round_trip();
    check_inspector(argv[1]);
    check_inspector_backslash();
    check_inspector_bad_texts();
    check_inspector_230();
    TEST_DONE();
}

/* accept's JUnit XML: escaping, and counts that match the checks. A run folder written here
 * judged whole: numbers that are not finite and env.json fields of the wrong type are bad
 * input (issue 15), a SKIP names only what its check set, and every node's GPUs and InfiniBand
 * ports are judged from env.json's per-node block, the failing host named (issue 18). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accept.h"
#include "test.h"

#define HEADER                                                                                 \
    "run_id,bench,case,backend,transport,link,nodes,ranks,src,dst,batch,bytes,count,dtype,redop," \
    "iters,metric,unit,samples,median,p05,p95,min,max,mean,stddev,wrong\n"
/* the same with the expected-figure model's columns (cpu_wait added by the caller) */
#define HEADER_EXPECTED                                                                        \
    "run_id,bench,case,backend,transport,link,nodes,ranks,src,dst,batch,bytes,count,dtype,redop," \
    "iters,metric,unit,samples,median,p05,p95,min,max,mean,stddev,wrong,expected,bound"
/* an h2d row of rank 0 of 1, median MEDIAN GB/s */
#define H2D(median)                                                                             \
    "r,h2d,pinned_h2d,host,memcpy,,1,1,0,,,1048576,,,,10,bandwidth,GB/s,5," median              \
    ",1,3,1,3,2,0.5,0\n"
#define ENV(status, gpus)                                                                     \
    "{\n  \"run_status\": " status ",\n  \"backend\": {\"name\": \"host\"},\n"                  \
    "  \"ranks\": [{\"rank\": 0, \"node\": 0, \"visible_gpus\": " gpus "}]\n}\n"

/* env.json of a run on two nodes with the per-node block: node 2 (host "nodeb") has GPUS_B
 * GPUs and its port mlx5_0:1 in STATE_B at RATE_B Gb/s */
#define PORT(state, rate)                                                                     \
    "{\"device\": \"mlx5_0\", \"port\": 1, \"state\": \"" state "\", \"rate_gbps\": " rate "}"
#define ENV2(gpus_b, state_b, rate_b)                                                         \
    "{\"run_status\": \"complete\", \"backend\": {\"name\": \"host\"},\n"                 \
    " \"ranks\": [{\"rank\": 0, \"node\": 0, \"visible_gpus\": 4},\n"                      \
    "           {\"rank\": 1, \"node\": 1, \"visible_gpus\": 4}],\n"                      \
    " \"infiniband\": [" PORT("ACTIVE", "100") "],\n"                                         \
    " \"hosts\": [{\"node\": 0, \"host\": \"nodea\", \"ranks\": 1, \"gpus\": 4,\n"          \
    "            \"infiniband\": [" PORT("ACTIVE", "100") "]},\n"                           \
    "           {\"node\": 1, \"host\": \"nodeb\", \"ranks\": 1, \"gpus\": " gpus_b ",\n"  \
    "            \"infiniband\": [" PORT(state_b, rate_b) "]}]}\n"

static char dir[64];

static void put(const char *name, const char *text)
{
    char path[128];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static const struct fb_accept_check *find(const struct fb_accept *a, const char *name)
{
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->checks[i].name, name) == 0)
            return &a->checks[i];
    return NULL;
}

/* fb_accept_run over dir with results.csv csv and env.json env against profile ini. */
static fb_status judge(const char *ini, const char *csv, const char *env, struct fb_accept *a,
                       char *err, size_t errlen)
{
    struct fb_profile p;
    char perr[512] = "";

    CHECK(fb_profile_parse(ini, "t.ini", &p, perr, sizeof perr) == FB_OK);
    CHECK_STR(perr, "");
    put("results.csv", csv);
    put("env.json", env);
    err[0] = '\0';
    return fb_accept_run(&p, dir, a, err, errlen);
}

/* bad input: FB_ERR_USAGE, nothing judged, every fragment in the one message */
static void refused(const char *ini, const char *csv, const char *env, const char *want1,
                    const char *want2)
{
    struct fb_accept a;
    char err[1024];
    fb_status st = judge(ini, csv, env, &a, err, sizeof err);

    CHECK(st == FB_ERR_USAGE);
    if (st != FB_ERR_USAGE)
        fprintf(stderr, "  expected a refusal with '%s'; got %zu checks\n", want1, a.n);
    CHECK(a.n == 0 && a.checks == NULL);
    CHECK_HAS(err, want1);
    CHECK_HAS(err, want2);
    CHECK(!strchr(err, '\n'));
    fb_accept_release(&a);
}

static void run_folder(void)
{
    static const char h2d_ini[] = "[h2d]\nmin_pinned_gbps_per_gpu_all = 1\n";
    static const char gpus_ini[] = "[node]\ngpus = 1\n";
    struct fb_accept a;
    const struct fb_accept_check *k;
    char err[1024], want[160];

    snprintf(dir, sizeof dir, "/tmp/fb_test_accept.XXXXXX");
    CHECK(mkdtemp(dir) != NULL);

    /* the good folder first, so the refusals below are the input's doing */
    CHECK(judge(h2d_ini, HEADER H2D("2"), ENV("\"complete\"", "1"), &a, err, sizeof err) ==
          FB_OK);
    CHECK_STR(err, "");
    k = find(&a, "h2d_pinned_all");
    CHECK(k && k->verdict == FB_PASS && k->margin_pct == 100);
    k = find(&a, "run_complete");
    CHECK(k && k->verdict == FB_PASS);
    fb_accept_release(&a);
    CHECK(judge(gpus_ini, HEADER, ENV("\"complete\"", "1"), &a, err, sizeof err) == FB_OK);
    k = find(&a, "gpu_count");
    CHECK(k && k->verdict == FB_PASS);
    fb_accept_release(&a);

    /* a median of inf passed (+inf%), nan and an overflow read as numbers */
    snprintf(want, sizeof want, "%s/results.csv:2: column 'median': 'inf' is not a number", dir);
    refused(h2d_ini, HEADER H2D("inf"), ENV("\"complete\"", "1"), want, "decimal only");
    refused(h2d_ini, HEADER H2D("2") H2D("nan"), ENV("\"complete\"", "1"),
            "results.csv:3: column 'median': 'nan' is not a number", "");
    refused(h2d_ini, HEADER H2D("1e999"), ENV("\"complete\"", "1"),
            "results.csv:2: column 'median': '1e999' is not a finite number", "overflows");
    /* in env.json too, with its line and column: cJSON reads 1e999 as inf */
    snprintf(want, sizeof want, "%s/env.json:4:52: '1e999' is not a finite number", dir);
    refused(gpus_ini, HEADER, ENV("\"complete\"", "1e999"), want, "");

    /* env.json's fields must have their type: a number for run_status was a SKIP, accepted */
    snprintf(want, sizeof want, "%s/env.json: field 'run_status' is a number", dir);
    refused(h2d_ini, HEADER H2D("2"), ENV("1", "1"), want, "expected a string");
    refused(gpus_ini, HEADER, ENV("\"complete\"", "\"1\""),
            "field 'ranks[0].visible_gpus' is a string ('1'), expected an integer", "");
    refused(gpus_ini, HEADER, ENV("\"complete\"", "1.5"),
            "field 'ranks[0].visible_gpus' is a number, expected an integer", "");
    refused(gpus_ini, HEADER, ENV("\"complete\"", "1}, 7, {\"rank\": 1"),
            "field 'ranks[1]' is a number, expected an object", "");
    refused(gpus_ini, HEADER, ENV("{\"state\": \"complete\"}", "1"),
            "field 'run_status' is an object, expected a string", "");
    refused(gpus_ini, HEADER,
            "{\"run_status\": \"complete\", \"backend\": {\"name\": 3}}\n",
            "field 'backend.name' is a number, expected a string", "");
    refused(gpus_ini, HEADER,
            "{\"run_status\": \"complete\", \"gpus\": [{\"name\": null}]}\n",
            "field 'gpus[0].name' is null, expected a string", "");
    refused(gpus_ini, HEADER,
            "{\"run_status\": \"complete\", \"infiniband\": 0}\n",
            "field 'infiniband' is a number, expected an array or a string", "");
    refused(gpus_ini, HEADER,
            "{\"run_status\": \"complete\", \"infiniband\": [{\"rate_gbps\": \"100\"}]}\n",
            "field 'infiniband[0].rate_gbps' is a string ('100'), expected a number", "");
    refused(gpus_ini, HEADER,
            "{\"ranks\": [{\"gpu\": {\"index\": \"0\"}}]}\n",
            "field 'ranks[0].gpu.index' is a string ('0'), expected an integer", "");
    refused(gpus_ini, HEADER,
            "{\"ranks\": [{\"binding\": {\"verdict\": true}}]}\n",
            "field 'ranks[0].binding.verdict' is a boolean, expected a string", "");
    refused(gpus_ini, HEADER,
            "{\"run_status\": \"timeout\", \"run_stop\": {\"detail\": 5}}\n",
            "field 'run_stop.detail' is a number, expected a string", "");

    /* every node judged (env.json's "hosts"), the failing host named; rank 0's host good */
    {
        static const char node_ini[] = "[node]\ngpus = 4\n[infiniband]\nports = 1\n"
                                       "rate_gbps = 100\n";
        CHECK(judge(node_ini, HEADER, ENV2("4", "ACTIVE", "100"), &a, err, sizeof err) == FB_OK);
        k = find(&a, "infiniband");
        CHECK(k && k->verdict == FB_PASS);
        if (k)
            CHECK_HAS(k->from, "every node's ports, 2 node(s)");
        k = find(&a, "gpu_count");
        CHECK(k && k->verdict == FB_PASS);
        fb_accept_release(&a);
        /* node 2's port down */
        CHECK(judge(node_ini, HEADER, ENV2("4", "DOWN", "100"), &a, err, sizeof err) == FB_OK);
        k = find(&a, "infiniband");
        CHECK(k && k->verdict == FB_FAIL);
        if (k) {
            CHECK_STR(k->measured, "0 of 1");
            CHECK_STR(k->why, "1 of 2 node(s) with fewer than 1 port(s) ACTIVE at >= 100 Gb/s: "
                              "nodeb 0 of 1 up (mlx5_0:1 DOWN 100 Gb/s)");
        }
        k = find(&a, "gpu_count");
        CHECK(k && k->verdict == FB_PASS);
        fb_accept_release(&a);
        /* node 2's port at a lower rate */
        CHECK(judge(node_ini, HEADER, ENV2("4", "ACTIVE", "50"), &a, err, sizeof err) == FB_OK);
        k = find(&a, "infiniband");
        CHECK(k && k->verdict == FB_FAIL);
        if (k)
            CHECK_HAS(k->why, "nodeb 0 of 1 up (mlx5_0:1 ACTIVE 50 Gb/s)");
        fb_accept_release(&a);
        /* a node with more ports than env.json keeps (its count, infiniband_ports, above the
         * ports listed): short among those kept is not judged (SKIP, health judges them all),
         * unless the ports not kept could not make up the rest */
        {
            static const char many_ini[] = "[infiniband]\nports = 2\nrate_gbps = 100\n";
            static const char env[] =
                "{\"run_status\": \"complete\", \"backend\": {\"name\": \"host\"},\n"
                " \"hosts\": [{\"node\": 0, \"host\": \"big\", \"ranks\": 1, \"gpus\": 4,\n"
                "  \"infiniband_ports\": 20, \"infiniband\": [" PORT("ACTIVE", "100") "]}]}\n";
            static const char env_few[] =
                "{\"run_status\": \"complete\", \"backend\": {\"name\": \"host\"},\n"
                " \"hosts\": [{\"node\": 0, \"host\": \"small\", \"ranks\": 1, \"gpus\": 4,\n"
                "  \"infiniband_ports\": 1, \"infiniband\": [" PORT("ACTIVE", "100") "]}]}\n";
            CHECK(judge(many_ini, HEADER, env, &a, err, sizeof err) == FB_OK);
            k = find(&a, "infiniband");
            CHECK(k && k->verdict == FB_SKIP);
            if (k)
                CHECK_HAS(k->why, "1 of 1 node(s) short of 2 port(s) among the ports env.json "
                                  "keeps, with more it does not (big 1 of its 20 kept)");
            fb_accept_release(&a);
            CHECK(judge(many_ini, HEADER, env_few, &a, err, sizeof err) == FB_OK);
            k = find(&a, "infiniband");
            CHECK(k && k->verdict == FB_FAIL);
            fb_accept_release(&a);
        }
        /* node 2 with fewer GPUs, although every rank sees 4 */
        CHECK(judge(node_ini, HEADER, ENV2("3", "ACTIVE", "100"), &a, err, sizeof err) == FB_OK);
        k = find(&a, "gpu_count");
        CHECK(k && k->verdict == FB_FAIL);
        if (k) {
            CHECK_STR(k->measured, "3");
            CHECK_STR(k->why, "1 of 2 node(s) without 4 GPU(s): nodeb has 3");
        }
        CHECK(find(&a, "infiniband") && find(&a, "infiniband")->verdict == FB_PASS);
        fb_accept_release(&a);
        /* an env.json without the block is judged as before, on rank 0's host, with a note */
        CHECK(judge(node_ini, HEADER, ENV("\"complete\"", "4"), &a, err, sizeof err) == FB_OK);
        k = find(&a, "gpu_count");
        CHECK(k && k->verdict == FB_PASS);
        if (k)
            CHECK_HAS(k->from, "no per-node block: an older env.json");
        fb_accept_release(&a);
        /* the block's fields have their types too */
        refused(node_ini, HEADER, "{\"hosts\": [{\"host\": \"a\", \"gpus\": \"4\"}]}\n",
                "field 'hosts[0].gpus' is a string ('4'), expected an integer", "");
        refused(node_ini, HEADER,
                "{\"hosts\": [{\"infiniband\": [{\"state\": \"ACTIVE\", \"rate_gbps\": "
                "\"100\"}]}]}\n",
                "field 'hosts[0].infiniband[0].rate_gbps' is a string ('100'), expected a number",
                "");
    }

    /* a SKIP names only what its check set: no h2d row, so no rank count and no size */
    CHECK(judge(h2d_ini, HEADER, ENV("\"complete\"", "1"), &a, err, sizeof err) == FB_OK);
    k = find(&a, "h2d_pinned_all");
    CHECK(k && k->verdict == FB_SKIP);
    if (k)
        CHECK_STR(k->why, "not measured: results.csv has no h2d pinned_h2d per-rank bandwidth");
    fb_accept_release(&a);
    /* the size the profile names is set, so it is said */
    CHECK(judge("[h2d]\nmin_pinned_gbps_per_gpu_all = 1\nbytes = 4096\n", HEADER H2D("2"),
                ENV("\"complete\"", "1"), &a, err, sizeof err) == FB_OK);
    k = find(&a, "h2d_pinned_all");
    CHECK(k && k->verdict == FB_SKIP);
    if (k)
        CHECK_STR(k->why, "not measured: results.csv has no h2d pinned_h2d per-rank bandwidth, "
                          "1 rank(s) at once, 4096 bytes");
    fb_accept_release(&a);
    /* a figure just under its expected share reads as under it, not rounded up to the share
     * ("80% ... (below 80%)"): 0.7996 of expected against 0.8, and 0.7 against 0.8 */
    for (int i = 0; i < 2; i++) {
        static const char *const median[] = {"0.07996", "0.07"}, *const pct[] = {"79.96", "70"};
        char csv[1024], want[256];
        snprintf(csv, sizeof csv,
                 "%s,cpu_wait\nr,p2p,sweep_uni,host,mpi,network,2,2,0,1,,1048576,,,,10,"
                 "bandwidth,GB/s,5,%s,0.07,0.08,0.07,0.08,0.075,0.001,0,0.1,eth 800 Mb/s v0,0\n",
                 HEADER_EXPECTED, median[i]);
        CHECK(judge("[expected]\nmin_share = 0.8\n", csv, ENV("\"complete\"", "1"), &a, err,
                    sizeof err) == FB_OK);
        CHECK_STR(err, "");
        k = a.n ? &a.checks[a.n - 1] : NULL;
        CHECK(k && k->verdict == FB_FAIL);
        snprintf(want, sizeof want, "%s GB/s is %s%% of the 0.1 GB/s that eth 800 Mb/s v0 allows "
                 "(below 80%%)", median[i], pct[i]);
        if (k)
            CHECK_STR(k->why, want);
        fb_accept_release(&a);
    }

    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0);
    }
}

static void junit(void)
{
    struct fb_accept_check k[3] = {
        {.name = "a<b", .verdict = FB_PASS, .measured = "1 GB/s", .expected = ">= 0.5 GB/s"},
        {.name = "fail", .verdict = FB_FAIL, .why = "x & \"y\" < 'z'\x01"},
        {.name = "skip", .verdict = FB_SKIP, .why = "not measured"},
    };
    struct fb_accept a = {k, 3, 3};
    struct fb_profile p;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    fb_profile_init(&p);
    snprintf(p.name, sizeof p.name, "n&m");
    for (int i = 0; i < 3; i++)
        k[i].margin_pct = NAN;
    CHECK(fb_accept_count(&a, FB_FAIL) == 1 && fb_accept_count(&a, FB_SKIP) == 1);
    CHECK(f && fb_accept_junit_write(f, &a, &p, "run<1>") == 0);
    fclose(f);
    CHECK_HAS(buf, "<testsuite name=\"n&amp;m\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\">");
    CHECK_HAS(buf, "name=\"a&lt;b\"");
    CHECK_HAS(buf, "<failure message=\"x &amp; &quot;y&quot; &lt; &apos;z&apos;\\x01\"/>");
    CHECK_HAS(buf, "<skipped message=\"not measured\"/>");
    CHECK_HAS(buf, "value=\"run&lt;1&gt;\"");
    CHECK(!strchr(buf, '\x01'));
    free(buf);
}

int main(void)
{
    junit();
    run_folder();
    TEST_DONE();
}

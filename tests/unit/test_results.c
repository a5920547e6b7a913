/* results.csv: exact output for known rows (quoting, empty cells for "does not apply"), the
 * run folder rules (--out refused when it holds a run, unless forced), and atomic rewrites. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results.h"
#include "test.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = calloc(1, 65536);
    if (f && buf)
        fread(buf, 1, 65535, f);
    if (f)
        fclose(f);
    return buf;
}

int main(void)
{
    struct fb_row row;
    struct fb_results r;
    char *text = NULL, dir[256], path[512];
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    const char *expected =
        "run_id,bench,case,backend,transport,link,nodes,ranks,src,dst,batch,bytes,count,dtype,redop,"
        "iters,metric,unit,samples,median,p05,p95,min,max,mean,stddev,wrong,expected,bound,"
        "cpu_wait\n"
        "r1,allreduce,out_of_place,host,mpi,,1,2,,,,1024,256,float32,sum,100,busbw,GB/s,3,"
        "1.5,1.1,1.9,1,2,1.5,0.5,0,,,0.012\n"
        "r1,h2d,\"odd,\"\"name\",host,memcpy,cross-socket,1,1,0,1,,4096,,,,7,bandwidth,GB/s,1,2,2,2,2,2,2,2,,"
        "12.44,PCIe Gen3 x16 (GPU 0000:3b:00.0),\n";

    memset(&row, 0, sizeof row);
    strcpy(row.bench, "allreduce");
    strcpy(row.kase, "out_of_place");
    strcpy(row.backend, "host");
    strcpy(row.transport, "mpi");
    row.nodes = 1;
    row.ranks = 2;
    row.src = row.dst = -1;
    row.batch = -1;
    row.bytes = 1024;
    row.count = 256;
    strcpy(row.dtype, "float32");
    strcpy(row.redop, "sum");
    row.iters = 100;
    strcpy(row.metric, "busbw");
    strcpy(row.unit, "GB/s");
    row.st = (struct fb_stats){3, 1.5, 1.1, 1.9, 1, 2, 1.5, 0.5};
    row.wrong = 0;
    row.cpu_wait = 0.0123; /* written to 3 places; rows[1] has none (an empty cell) */
    row.cpu_wait_known = true;

    struct fb_row rows[2] = {row, row};
    rows[1].cpu_wait_known = false;
    strcpy(rows[1].bench, "h2d");
    strcpy(rows[1].kase, "odd,\"name");
    strcpy(rows[1].transport, "memcpy");
    rows[1].ranks = 1;
    rows[1].src = 0;
    rows[1].dst = 1;
    strcpy(rows[1].link, "cross-socket");
    rows[1].bytes = 4096;
    rows[1].count = -1;
    rows[1].dtype[0] = rows[1].redop[0] = '\0';
    rows[1].iters = 7;
    strcpy(rows[1].metric, "bandwidth");
    rows[1].st = (struct fb_stats){1, 2, 2, 2, 2, 2, 2, 2};
    rows[1].wrong = -1;
    rows[1].expected = 12.44; /* the model's figure and what bounds it (docs/expected.md) */
    strcpy(rows[1].bound, "PCIe Gen3 x16 (GPU 0000:3b:00.0)");

    CHECK(mem && fb_results_write_csv(mem, "r1", rows, 2) == 0);
    fclose(mem);
    if (strcmp(text, expected) != 0) {
        fprintf(stderr, "CSV differs:\n--- got\n%s--- expected\n%s", text, expected);
        fb_test_failures++;
    }
    free(text);
    CHECK(fb_results_ncolumns == 30 && fb_results_model_ncolumns == 29 &&
          fb_results_legacy_ncolumns == 27);

    /* The run folder. */
    snprintf(dir, sizeof dir, "/tmp/fb-test-results-%d/a/b", (int)getpid());
    CHECK(fb_results_prepare(&r, dir, "unused", "host", false) == FB_OK);
    CHECK(strcmp(r.run_id, "b") == 0);
    CHECK(fb_results_add(&r, &row) == FB_OK);
    CHECK(fb_results_flush(&r) == FB_OK);
    snprintf(path, sizeof path, "%s/results.csv.tmp", dir);
    CHECK(access(path, F_OK) != 0); /* no temporary left behind */
    snprintf(path, sizeof path, "%s/results.csv", dir);
    text = slurp(path);
    CHECK(text && strncmp(text, "run_id,bench", 12) == 0 && strstr(text, "\nb,allreduce,") != NULL);
    free(text);
    /* A flush that would pass the readers' cap (here 600 bytes) writes nothing and keeps the
     * last file written, whole (issue 30: a valid mix wrote a results.csv over the 1 GiB that
     * every reader refuses). */
    {
        size_t size = 0, flushed = 0, lines = 0;
        FILE *f;
        r.max_bytes = 600;
        for (int i = 0; i < 20 && fb_results_flush(&r) == FB_OK; i++) {
            flushed = r.nrows;
            CHECK(fb_results_add(&r, &row) == FB_OK);
        }
        CHECK(flushed >= 1 && r.nrows == flushed + 1);
        if ((f = fopen(path, "rb"))) {
            fseek(f, 0, SEEK_END);
            size = (size_t)ftell(f);
            fclose(f);
        }
        CHECK(size > 0 && size <= 600);
        text = slurp(path);
        for (const char *t = text; t && *t; t++)
            lines += *t == '\n';
        CHECK(lines == flushed + 1); /* its header and every row it had */
        free(text);
        snprintf(path, sizeof path, "%s/results.csv.tmp", dir);
        CHECK(access(path, F_OK) != 0);
        r.max_bytes = 0;
    }
    fb_results_release(&r);

    /* A folder that holds a run is not overwritten unless forced. */
    CHECK(fb_results_prepare(&r, dir, "unused", "host", false) == FB_ERR_USAGE);
    CHECK(fb_results_prepare(&r, dir, "unused", "host", true) == FB_OK);
    fb_results_release(&r);

    /* A path through a file cannot be made. */
    snprintf(path, sizeof path, "%s/results.csv/sub", dir);
    CHECK(fb_results_prepare(&r, path, "unused", "host", false) == FB_ERR_USAGE);

    /* Without --out: a fresh, unique folder under the root. */
    snprintf(path, sizeof path, "/tmp/fb-test-results-%d/root", (int)getpid());
    CHECK(fb_results_prepare(&r, NULL, path, "nodeA", false) == FB_OK);
    CHECK(strstr(r.run_id, "-nodeA") != NULL);
    CHECK(strncmp(r.dir, path, strlen(path)) == 0);
    {
        struct fb_results r2;
        CHECK(fb_results_prepare(&r2, NULL, path, "nodeA", false) == FB_OK);
        CHECK(strcmp(r2.dir, r.dir) != 0);
    }
    snprintf(path, sizeof path, "rm -rf /tmp/fb-test-results-%d", (int)getpid());
    CHECK(system(path) == 0);
    TEST_DONE();
}

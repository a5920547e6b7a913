/* `report` is O(n log n) in the rows of results.csv (issue 15: the headline and the telemetry
 * table were O(n^2), 100 MB did not finish in 300 s). A run folder of n and of 8n rows shaped
 * like a large run's (docs/scale/report-rows.sh --generate) is read, its plots' data computed
 * and summary.md written, in this process (no start-up cost in the figure); the median of 3 of
 * each is timed. O(n log n) makes the ratio about 8 * log(8n)/log(n), about 10; O(n^2) makes it
 * 64. The test fails above 20: a ratio of sizes, not a wall-clock limit, so a loaded machine
 * slows both sizes alike. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "report.h"
#include "test.h"

enum { N = 8000, TRIES = 3 };

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median of TRIES reports of dir, in seconds; negative when one fails. */
static double time_report(const char *dir)
{
    double t[TRIES];

    for (int k = 0; k < TRIES; k++) {
        struct fb_report_run r;
        double t0 = fb_clock_now_s();
        int rc;

        memset(&r, 0, sizeof r);
        rc = fb_report_run_load(&r, dir, "report");
        if (rc == 0)
            rc = fb_report_write_summary(&r, true, true);
        t[k] = fb_clock_now_s() - t0;
        fb_report_run_release(&r);
        if (rc != 0)
            return -1;
    }
    qsort(t, TRIES, sizeof t[0], cmp_double);
    return t[TRIES / 2];
}

int main(int argc, char **argv)
{
    char dir[64], cmd[512], small[128], large[128];
    double ts, tl;

    if (argc != 2) {
        fprintf(stderr, "usage: test_report_scale REPORT_ROWS_SH\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "/tmp/fb_test_report_scale.XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(small, sizeof small, "%s/small", dir);
    snprintf(large, sizeof large, "%s/large", dir);
    snprintf(cmd, sizeof cmd, "sh '%s' --generate '%s' %d && sh '%s' --generate '%s' %d", argv[1],
             small, N, argv[1], large, 8 * N);
    CHECK(system(cmd) == 0);
    ts = time_report(small);
    tl = time_report(large);
    CHECK(ts > 0 && tl > 0);
    printf("report of %d rows: %.4f s, of %d rows: %.4f s, ratio %.1f (O(n log n): about 10, "
           "O(n^2): 64; fails above 20)\n",
           N, ts, 8 * N, tl, ts > 0 ? tl / ts : 0);
    CHECK(ts > 0 && tl / ts <= 20);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_DONE();
}

/* The runner's cross-rank reduction: each trial lasts as long as its slowest taking-part rank;
 * idle ranks do not count; --timing synced's mean, min and max over ranks and which cases it
 * times; FB_TEST_SLOW_RANK's parser; GB/s is 1e9 B/s; h2d's size past the last-level
 * cache; and a dry run's floor of one case (run_plan.c), by the runner's schedule. */
#include "runner.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "options.h"
#include "run_plan.h"
#include "expect_job.h"
#include "sweep.h"
#include "test.h"

int main(void)
{
    /* 3 ranks x 4 trials: the slowest rank differs from trial to trial */
    const double all[] = {1.0, 5.0, 2.0, 9.0,   /* rank 0 */
                          3.0, 1.0, 2.5, 1.0,   /* rank 1 */
                          7.0, 2.0, 0.5, 99.0}; /* rank 2 (idle in the second case) */
    const int every[] = {1, 1, 1}, first_two[] = {1, 1, 0}, only_one[] = {0, 1, 0};
    double out[4];

    CHECK(fb_runner_slowest(all, every, 3, 4, out) == 3);
    CHECK(out[0] == 7.0 && out[1] == 5.0 && out[2] == 2.5 && out[3] == 99.0);
    CHECK(fb_runner_slowest(all, first_two, 3, 4, out) == 2);
    CHECK(out[0] == 3.0 && out[1] == 5.0 && out[2] == 2.5 && out[3] == 9.0);
    CHECK(fb_runner_slowest(all, only_one, 3, 4, out) == 1);
    CHECK(out[0] == 3.0 && out[1] == 1.0 && out[2] == 2.5 && out[3] == 1.0);

    /* --timing synced: OSU's Avg, Min and Max over the flagged ranks, trial by trial */
    double mean[4], min[4], max[4];
    CHECK(fb_runner_over_ranks(all, every, 3, 4, mean, min, max) == 3);
    CHECK_NEAR(mean[0], 11.0 / 3, 1e-12);
    CHECK(min[0] == 1.0 && max[0] == 7.0 && min[3] == 1.0 && max[3] == 99.0);
    CHECK(fb_runner_over_ranks(all, first_two, 3, 4, mean, min, max) == 2);
    CHECK(mean[0] == 2.0 && mean[1] == 3.0 && mean[2] == 2.25 && mean[3] == 5.0);
    CHECK(min[1] == 1.0 && max[1] == 5.0 && min[2] == 2.0 && max[2] == 2.5);
    CHECK(fb_runner_over_ranks(all, only_one, 3, 4, mean, min, max) == 1);
    CHECK(mean[2] == 2.5 && min[2] == 2.5 && max[2] == 2.5);
    {
        const int none[] = {0, 0, 0};
        CHECK(fb_runner_over_ranks(all, none, 3, 4, mean, min, max) == 0);
        CHECK(mean[0] == 0.0 && min[0] == 0.0 && max[0] == 0.0);
    }

    /* which cases each --timing times how */
    {
        struct fb_options o;
        struct fb_case coll = {.report = FB_REPORT_COLLECTIVE};
        struct fb_case bw = {.report = FB_REPORT_BANDWIDTH};
        fb_options_defaults(&o);
        CHECK(strcmp(o.timing, "batch") == 0);
        CHECK(fb_runner_batched(&o, &coll) && !fb_runner_synced(&o, &coll));
        strcpy(o.timing, "synced");
        CHECK(!fb_runner_batched(&o, &coll) && fb_runner_synced(&o, &coll));
        CHECK(fb_runner_batched(&o, &bw) && !fb_runner_synced(&o, &bw));
        strcpy(o.timing, "both");
        CHECK(fb_runner_batched(&o, &coll) && fb_runner_synced(&o, &coll));
        CHECK(fb_runner_batched(&o, &bw) && !fb_runner_synced(&o, &bw));
    }

    /* FB_TEST_SLOW_RANK=R:US, the test-only delay */
    {
        int rank;
        double us;
        char why[160] = "";
        CHECK(fb_runner_test_slow(NULL, &rank, &us, why, sizeof why) == FB_OK && rank == -1);
        CHECK(fb_runner_test_slow("", &rank, &us, why, sizeof why) == FB_OK && rank == -1);
        CHECK(fb_runner_test_slow("1:4000", &rank, &us, why, sizeof why) == FB_OK);
        CHECK(rank == 1 && us == 4000.0);
        CHECK(fb_runner_test_slow("1:0", &rank, &us, why, sizeof why) == FB_ERR_USAGE);
        CHECK(rank == -1 && strstr(why, "FB_TEST_SLOW_RANK='1:0': expected R:US") != NULL);
        CHECK(fb_runner_test_slow("-1:5", &rank, &us, why, sizeof why) == FB_ERR_USAGE);
        CHECK(fb_runner_test_slow("1:5x", &rank, &us, why, sizeof why) == FB_ERR_USAGE);
        CHECK(fb_runner_test_slow("1:nan", &rank, &us, why, sizeof why) == FB_ERR_USAGE);
        CHECK(fb_runner_test_slow("1", &rank, &us, why, sizeof why) == FB_ERR_USAGE);
    }

    CHECK_NEAR(fb_gbps(1e9, 1e6), 1.0, 1e-12);     /* 1e9 bytes in one second */
    CHECK_NEAR(fb_gbps(27872824, 8465.57), 3.2925, 1e-4);
    CHECK(fb_gbps(100, 0.0) == 0.0);

    /* --beyond-llc: the next power of two at least twice the last-level cache */
    /* the memcpy calibration judges rows from the same size, never below its own 64 MiB */
    CHECK(fb_expect_job_copy_from(16u << 20) == 64u << 20);
    CHECK(fb_expect_job_copy_from(33u << 20) == 128u << 20);
    CHECK(fb_expect_job_copy_from(532676608) == 1u << 30);
    CHECK(fb_expect_job_copy_from(0) == 0);
    /* a dry run's floor follows the runner's schedule (runner_measure.c) */
    {
        struct fb_options o;
        struct fb_case c = {.report = FB_REPORT_THROUGHPUT};
        const struct fb_plan_device h200 = {989, 4800}, none = {0, 0};
        double f;

        fb_options_defaults(&o);
        /* 1 us an iteration (4.8 MB at 4800 GB/s): warm-up 5 us; calibration's rounds of 1, 4,
         * 16, 64, 256, 1024 iterations, the 1024 (a fifth of the 5 ms trial) once more: 2389 us;
         * then 10 trials of 5000 iterations */
        c.bytes = 4800000;
        f = fb_run_plan_case_floor(&o, &c, &h200);
        CHECK(fabs(f - (5 + 2389 + 10 * 5000) * 1e-6) < 1e-9);
        /* as a collective, 200 of its iterations timed one by one besides */
        c.report = FB_REPORT_COLLECTIVE;
        CHECK(fabs(fb_run_plan_case_floor(&o, &c, &h200) - f - 200e-6) < 1e-9);
        c.report = FB_REPORT_THROUGHPUT;
        /* a pipeline consumer of 0.5 s a round, at least 8 rounds a trial: warm-up 1, the
         * first calibration round (8) already a whole trial, 2 trials of 8: 25 rounds */
        c = (struct fb_case){.report = FB_REPORT_THROUGHPUT, .busy_us = 5e5, .min_iters = 8};
        o.warmup = 1;
        o.trials = 2;
        CHECK(fabs(fb_run_plan_case_floor(&o, &c, &none) - 25 * 0.5) < 1e-9);
        /* --iters fixes the count: no calibration; a step's FLOPs at the peak */
        c = (struct fb_case){.report = FB_REPORT_THROUGHPUT, .work_flops = 989e12, .bytes = 1,
                             .bytes_label = true};
        o.iters = 1;
        CHECK(fabs(fb_run_plan_case_floor(&o, &c, &h200) - 3.0) < 1e-9);
        /* nothing known of an iteration: a fifth of a trial to calibrate, a trial each */
        o.iters = 0;
        c = (struct fb_case){.report = FB_REPORT_THROUGHPUT};
        CHECK(fabs(fb_run_plan_case_floor(&o, &c, &h200) - (0.001 + 2 * 0.005)) < 1e-12);
    }
    TEST_DONE();
}

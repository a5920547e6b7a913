/* compare's rule on known values: a 10% drop with tight trials is a REGRESSION, a 3% drop is
 * not, a 10% drop with trials spread +-20% is noise; both directions of "better"; one-sample
 * rows judged by the threshold alone; unknown metrics never flagged; the join's keys; and the
 * fingerprint difference, versions first. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "test.h"

/* A row whose trials spread +-spread (fraction) around median. */
static struct fb_row row(const char *metric, double median, double spread, size_t samples)
{
    struct fb_row r;

    memset(&r, 0, sizeof r);
    strcpy(r.bench, "h2d");
    strcpy(r.kase, "pinned_h2d");
    strcpy(r.backend, "cuda");
    strcpy(r.transport, "cudaMemcpyAsync");
    strcpy(r.metric, metric);
    r.nodes = r.ranks = 1;
    r.src = 0;
    r.dst = r.batch = -1;
    r.count = r.wrong = -1;
    r.bytes = 1 << 26;
    r.st.samples = samples;
    r.st.median = r.st.mean = median;
    r.st.p05 = r.st.min = median * (1 - spread);
    r.st.p95 = r.st.max = median * (1 + spread);
    return r;
}

static enum fb_cmp_verdict judge(struct fb_row b, struct fb_row c, double thr, double *ratio)
{
    bool only;
    return fb_compare_judge(&b, &c, thr, ratio, &only);
}

int main(void)
{
    double r;
    bool only;

    /* A busy machine: the two sides' waits for a CPU differ by more than FB_CPU_WAIT_BUSY (5
     * points); where one side's is unknown, the other's above it. */
    {
        struct fb_row b = row("bandwidth", 20, 0.01, 10), c = row("bandwidth", 10, 0.01, 10);
        CHECK(!fb_compare_busy(&b, &c)); /* neither known */
        c.cpu_wait_known = true;
        c.cpu_wait = 0.05;               /* base unknown: not above */
        CHECK(!fb_compare_busy(&b, &c));
        c.cpu_wait = 0.051;
        CHECK(fb_compare_busy(&b, &c));
        CHECK(fb_compare_busy(&c, &b));  /* either side */
        b.cpu_wait_known = true;         /* both known: their difference decides */
        b.cpu_wait = 0.0;
        CHECK(fb_compare_busy(&b, &c));  /* 0.051 apart */
        b.cpu_wait = 0.45, c.cpu_wait = 0.50;
        CHECK(!fb_compare_busy(&b, &c)); /* as busy as each other: a like-for-like comparison */
        c.cpu_wait = 0.51;
        CHECK(fb_compare_busy(&b, &c));
        c.cpu_wait_known = false;        /* a value without the mark is not known */
        CHECK(fb_compare_busy(&b, &c));  /* base's 0.45 alone */
    }

    /* Directions. */
    CHECK(fb_compare_direction("bandwidth") == FB_CMP_HIGHER);
    CHECK(fb_compare_direction("busbw") == FB_CMP_HIGHER);
    CHECK(fb_compare_direction("images_per_s") == FB_CMP_HIGHER);
    CHECK(fb_compare_direction("batch_max") == FB_CMP_HIGHER);
    CHECK(fb_compare_direction("time") == FB_CMP_LOWER);
    CHECK(fb_compare_direction("latency") == FB_CMP_LOWER);
    CHECK(fb_compare_direction("time_synced_avg") == FB_CMP_LOWER); /* --timing synced */
    CHECK(fb_compare_direction("time_synced_max") == FB_CMP_LOWER);
    CHECK(fb_compare_direction("stall_fraction") == FB_CMP_LOWER);
    CHECK(fb_compare_direction("overhead_vs_flat") == FB_CMP_LOWER);
    CHECK(fb_compare_direction("bytes_fixed") == FB_CMP_UNKNOWN);

    /* Higher is better: a 10% drop with +-1% trials is a regression, ratio 0.9. */
    CHECK(judge(row("bandwidth", 20, 0.01, 10), row("bandwidth", 18, 0.01, 10), 0.05, &r) ==
          FB_CMP_REGRESSION);
    CHECK_NEAR(r, 0.9, 1e-12);
    /* A 3% drop, however tight: within the threshold. */
    CHECK(judge(row("bandwidth", 20, 0.001, 10), row("bandwidth", 19.4, 0.001, 10), 0.05, &r) ==
          FB_CMP_SAME);
    /* A 10% drop with trials spread +-20%: the bands overlap, noise. */
    CHECK(judge(row("bandwidth", 20, 0.20, 10), row("bandwidth", 18, 0.20, 10), 0.05, &r) ==
          FB_CMP_NOISE);
    /* A 10% rise is an improvement, not a regression. */
    CHECK(judge(row("bandwidth", 20, 0.01, 10), row("bandwidth", 22, 0.01, 10), 0.05, &r) ==
          FB_CMP_IMPROVED);
    /* Lower is better: time up 10% is a regression, down 10% an improvement. */
    CHECK(judge(row("time", 100, 0.01, 10), row("time", 110, 0.01, 10), 0.05, &r) ==
          FB_CMP_REGRESSION);
    CHECK(judge(row("time", 100, 0.01, 10), row("time", 90, 0.01, 10), 0.05, &r) ==
          FB_CMP_IMPROVED);
    /* The band edge: new p95 equal to base p05 overlaps (noise); just below separates. */
    {
        struct fb_row b = row("bandwidth", 20, 0.02, 10), c = row("bandwidth", 18, 0.02, 10);
        c.st.p95 = b.st.p05;
        CHECK(judge(b, c, 0.05, &r) == FB_CMP_NOISE);
        c.st.p95 = b.st.p05 * 0.999;
        CHECK(judge(b, c, 0.05, &r) == FB_CMP_REGRESSION);
    }
    /* A settable threshold: a 10% drop under a 15% threshold is the same. */
    CHECK(judge(row("bandwidth", 20, 0.01, 10), row("bandwidth", 18, 0.01, 10), 0.15, &r) ==
          FB_CMP_SAME);
    /* One sample found exactly (memfit): the threshold alone decides. */
    {
        struct fb_row b = row("batch_max", 40, 0, 1), c = row("batch_max", 36, 0, 1);
        CHECK(fb_compare_judge(&b, &c, 0.05, &r, &only) == FB_CMP_REGRESSION && only);
        c = row("batch_max", 39, 0, 1);
        CHECK(fb_compare_judge(&b, &c, 0.05, &r, &only) == FB_CMP_SAME);
    }
    /* One sample derived from other rows' medians or one timing: reported, never flagged. */
    CHECK(judge(row("efficiency", 60, 0, 1), row("efficiency", 40, 0, 1), 0.05, &r) ==
          FB_CMP_NOISE);
    CHECK(judge(row("grad_ready", 100, 0, 1), row("grad_ready", 200, 0, 1), 0.05, &r) ==
          FB_CMP_NOISE);
    /* A stall fraction moves by points: 0.02 -> 0.03 is the same (ratio 1.5), 0.02 -> 0.12
     * with separate bands a regression. */
    CHECK(judge(row("stall_fraction", 0.02, 0.01, 10), row("stall_fraction", 0.03, 0.01, 10),
                0.05, &r) == FB_CMP_SAME);
    CHECK_NEAR(r, 1.5, 1e-9);
    CHECK(judge(row("stall_fraction", 0.02, 0.01, 10), row("stall_fraction", 0.12, 0.01, 10),
                0.05, &r) == FB_CMP_REGRESSION);
    /* Unknown direction: reported as changed, never flagged. */
    CHECK(judge(row("bytes_fixed", 100, 0, 1), row("bytes_fixed", 200, 0, 1), 0.05, &r) ==
          FB_CMP_CHANGED);
    /* Zeros and non-finite medians. */
    CHECK(judge(row("busbw", 0, 0, 10), row("busbw", 0, 0, 10), 0.05, &r) == FB_CMP_SAME);
    CHECK(judge(row("busbw", 0, 0, 10), row("busbw", 3, 0, 10), 0.05, &r) == FB_CMP_NA);
    CHECK(judge(row("busbw", NAN, 0, 10), row("busbw", 3, 0, 10), 0.05, &r) == FB_CMP_NA);
    CHECK(isnan(r));
    /* finite medians whose ratio no double holds: no ratio, not inf in compare.csv */
    CHECK(judge(row("busbw", 1e-320, 0, 10), row("busbw", 1e308, 0, 10), 0.05, &r) == FB_CMP_NA);
    CHECK(isnan(r));
    CHECK(judge(row("busbw", 1e308, 0, 10), row("busbw", 1e-320, 0, 10), 0.05, &r) == FB_CMP_NA);
    CHECK(isnan(r));
    CHECK_STR(fb_compare_verdict_str(FB_CMP_REGRESSION, false), "REGRESSION");
    CHECK_STR(fb_compare_verdict_str(FB_CMP_REGRESSION, true), "worse");

    /* The join: keys with src/transport apart, duplicates in order, rows on one side listed. */
    {
        struct fb_read_row brows[4], crows[4];
        struct fb_read_results b = {.rows = brows, .nrows = 4}, c = {.rows = crows, .nrows = 4};
        struct fb_comparison cmp;

        memset(brows, 0, sizeof brows);
        memset(crows, 0, sizeof crows);
        brows[0].row = row("bandwidth", 20, 0.01, 10);
        brows[1].row = row("bandwidth", 20, 0.01, 10);
        brows[1].row.src = 1; /* another rank's share: its own key */
        brows[2].row = row("bandwidth", 20, 0.01, 10);
        strcpy(brows[2].row.transport, "nccl");
        brows[3].row = row("time", 5, 0.01, 10);
        strcpy(brows[3].row.kase, "gone");
        crows[0].row = row("bandwidth", 20, 0.01, 10);
        strcpy(crows[0].row.transport, "nccl");
        crows[1].row = row("bandwidth", 18, 0.01, 10); /* src 1 drops 10% */
        crows[1].row.src = 1;
        crows[2].row = row("bandwidth", 20.1, 0.01, 10);
        crows[3].row = row("time", 5, 0.01, 10);
        strcpy(crows[3].row.kase, "new_case");
        CHECK(fb_compare_join(&b, &c, 0.05, &cmp) == FB_OK);
        CHECK(cmp.n == 5);
        if (cmp.n == 5) {
            CHECK(cmp.e[0].base == &brows[0] && cmp.e[0].cur == &crows[2]);
            CHECK(cmp.e[0].verdict == FB_CMP_SAME);
            CHECK(cmp.e[1].cur == &crows[1] && cmp.e[1].verdict == FB_CMP_REGRESSION);
            CHECK(cmp.e[2].cur == &crows[0] && cmp.e[2].verdict == FB_CMP_SAME);
            CHECK(cmp.e[3].base == &brows[3] && !cmp.e[3].cur &&
                  cmp.e[3].verdict == FB_CMP_ONLY_BASE);
            CHECK(cmp.e[4].cur == &crows[3] && !cmp.e[4].base &&
                  cmp.e[4].verdict == FB_CMP_ONLY_NEW);
        }
        CHECK(cmp.count[FB_CMP_REGRESSION] == 1 && cmp.count[FB_CMP_SAME] == 2);
        fb_compare_release(&cmp);
    }

    /* A key repeated: base's k-th row of it meets cur's k-th (file order), one each; a cur
     * row left over is only in the new run. (The join takes them in O(k), not O(k^2).) */
    {
        struct fb_read_row brows[3], crows[4];
        struct fb_read_results b = {.rows = brows, .nrows = 3}, c = {.rows = crows, .nrows = 4};
        struct fb_comparison cmp;

        memset(brows, 0, sizeof brows);
        memset(crows, 0, sizeof crows);
        for (size_t i = 0; i < 3; i++)
            brows[i].row = row("bandwidth", 10 + (double)i, 0.01, 10);
        for (size_t i = 0; i < 4; i++)
            crows[i].row = row("bandwidth", 10 + (double)i, 0.01, 10);
        CHECK(fb_compare_join(&b, &c, 0.05, &cmp) == FB_OK);
        CHECK(cmp.n == 4);
        if (cmp.n == 4) {
            for (size_t i = 0; i < 3; i++)
                CHECK(cmp.e[i].base == &brows[i] && cmp.e[i].cur == &crows[i] &&
                      cmp.e[i].verdict == FB_CMP_SAME);
            CHECK(!cmp.e[3].base && cmp.e[3].cur == &crows[3] &&
                  cmp.e[3].verdict == FB_CMP_ONLY_NEW);
        }
        fb_compare_release(&cmp);
    }

    /* Several runs a side. Pooling: each key's k-th row in each run meets the k-th in the
     * others; the pooled row is the first run's (its line), in that run's order, with the
     * statistics of the runs' medians; a row only some runs have counts only those. */
    {
        struct fb_read_row r0[3], r1[3], r2[2];
        struct fb_read_results runs[3] = {{.rows = r0, .nrows = 3}, {.rows = r1, .nrows = 3},
                                          {.rows = r2, .nrows = 2}};
        struct fb_read_results pool;

        memset(r0, 0, sizeof r0);
        memset(r1, 0, sizeof r1);
        memset(r2, 0, sizeof r2);
        r0[0].row = row("time", 10, 0.01, 10);
        r0[1].row = row("time", 20, 0.01, 10); /* the same key again: its second occurrence */
        r0[2].row = row("bandwidth", 5, 0.01, 10);
        for (size_t i = 0; i < 3; i++)
            r0[i].line = 2 + i;
        r1[0].row = row("bandwidth", 7, 0.01, 10); /* another order in run 1 */
        r1[1].row = row("time", 12, 0.01, 10);
        r1[2].row = row("time", 22, 0.01, 10);
        r2[0].row = row("time", 14, 0.01, 10);
        r2[1].row = row("time", NAN, 0.01, 10); /* a non-finite median is left out */
        r2[0].line = 99;
        CHECK(fb_compare_pool(runs, 3, &pool) == FB_OK);
        CHECK(pool.nrows == 3);
        if (pool.nrows == 3) {
            CHECK(pool.rows[0].line == 2 && pool.rows[1].line == 3 && pool.rows[2].line == 4);
            CHECK(pool.rows[0].row.st.samples == 3 && pool.rows[0].row.st.median == 12);
            CHECK(pool.rows[0].row.st.min == 10 && pool.rows[0].row.st.max == 14);
            CHECK(fabs(pool.rows[0].row.st.stddev - 2) < 1e-12);
            CHECK(pool.rows[1].row.st.samples == 2 && pool.rows[1].row.st.median == 21);
            CHECK(strcmp(pool.rows[2].row.metric, "bandwidth") == 0);
            CHECK(pool.rows[2].row.st.samples == 2 && pool.rows[2].row.st.median == 6);
        }
        fb_results_read_release(&pool);
        /* a row in a later run only: placed after the first run's rows, its line kept */
        r2[1].row = row("latency", 3, 0.01, 10);
        r2[1].line = 7;
        CHECK(fb_compare_pool(runs, 3, &pool) == FB_OK);
        CHECK(pool.nrows == 4 && pool.nrows == 4 && pool.rows[3].line == 7 &&
              pool.rows[3].row.st.samples == 1 && pool.rows[3].row.st.median == 3);
        fb_results_read_release(&pool);
    }

    /* A timing in steps of a clock's tick whose runs agree to the tick on each side: pooled,
     * its spread is at least the step's rounding (step / sqrt(12)), so one tick apart over three
     * runs a side is noise (t = 0.01 / 0.00236 = 4.24 < 4.604), two ticks a regression (8.5);
     * found figures (one sample per run) keep no floor: 12 against 8 stays a regression. */
    {
        struct fb_read_row a[3][1], b[3][1];
        struct fb_read_results ra[3], rb[3], pa, pb;
        const double base[] = {0.04, 0.05, 0.05, 0.06, 0.07}; /* min p05 median p95 max */
        double ticks[] = {1, 2};

        for (size_t t = 0; t < 2; t++) {
            for (size_t k = 0; k < 3; k++) {
                memset(&a[k][0], 0, sizeof a[k][0]);
                a[k][0].row = row("time_iter", 0.05, 0, 10);
                a[k][0].row.st.min = base[0], a[k][0].row.st.p05 = base[1];
                a[k][0].row.st.p95 = base[3], a[k][0].row.st.max = base[4];
                b[k][0] = a[k][0];
                b[k][0].row.st.median = b[k][0].row.st.mean = 0.05 + 0.01 * ticks[t];
                b[k][0].row.st.min += 0.01 * ticks[t], b[k][0].row.st.p05 += 0.01 * ticks[t];
                b[k][0].row.st.p95 += 0.01 * ticks[t], b[k][0].row.st.max += 0.01 * ticks[t];
                ra[k] = (struct fb_read_results){.rows = a[k], .nrows = 1};
                rb[k] = (struct fb_read_results){.rows = b[k], .nrows = 1};
            }
            CHECK(fb_compare_pool(ra, 3, &pa) == FB_OK && fb_compare_pool(rb, 3, &pb) == FB_OK);
            if (pa.nrows == 1 && pb.nrows == 1) {
                CHECK(fabs(pa.rows[0].row.st.stddev - 0.01 / sqrt(12.0)) < 1e-9);
                CHECK(fb_compare_judge_runs(&pa.rows[0].row, &pb.rows[0].row, 0.05, &r) ==
                      (t == 0 ? FB_CMP_NOISE : FB_CMP_REGRESSION));
            }
            fb_results_read_release(&pa);
            fb_results_read_release(&pb);
        }
        for (size_t k = 0; k < 3; k++) {
            memset(&a[k][0], 0, sizeof a[k][0]);
            a[k][0].row = row("batch_max", 12, 0, 1);
            b[k][0] = a[k][0];
            b[k][0].row = row("batch_max", 8, 0, 1);
            ra[k] = (struct fb_read_results){.rows = a[k], .nrows = 1};
            rb[k] = (struct fb_read_results){.rows = b[k], .nrows = 1};
        }
        CHECK(fb_compare_pool(ra, 3, &pa) == FB_OK && fb_compare_pool(rb, 3, &pb) == FB_OK);
        if (pa.nrows == 1 && pb.nrows == 1) {
            CHECK(pa.rows[0].row.st.stddev == 0);
            CHECK(fb_compare_judge_runs(&pa.rows[0].row, &pb.rows[0].row, 0.05, &r) ==
                  FB_CMP_REGRESSION);
        }
        fb_results_read_release(&pa);
        fb_results_read_release(&pb);
    }

    /* The run rule on runs' medians: st.samples runs, st.mean and st.stddev theirs. */
    {
        struct fb_row b = row("bandwidth", 100, 0.01, 3), c = row("bandwidth", 90, 0.01, 3);
        /* 3 runs each, spread 1: t = 10 / sqrt(2/3) = 12.2 > t(4) = 4.604: flagged */
        b.st.stddev = c.st.stddev = 1;
        CHECK(fb_compare_judge_runs(&b, &c, 0.05, &r) == FB_CMP_REGRESSION && fabs(r - 0.9) < 1e-12);
        CHECK(fb_compare_judge_runs(&c, &b, 0.05, &r) == FB_CMP_IMPROVED);
        /* spread 4: t = 10 / 3.27 = 3.06 < 4.604: noise, though the bands of min/max would
         * have been apart (a run-to-run spread the trials cannot see) */
        b.st.stddev = c.st.stddev = 4;
        CHECK(fb_compare_judge_runs(&b, &c, 0.05, &r) == FB_CMP_NOISE);
        /* within the threshold: same, whatever the spread */
        c.st.median = c.st.mean = 97;
        b.st.stddev = c.st.stddev = 0.01;
        CHECK(fb_compare_judge_runs(&b, &c, 0.05, &r) == FB_CMP_SAME);
        /* one run on NEW: BASE's spread stands for both, 2 degrees of freedom (t 9.925):
         * 10 / (1 x sqrt(1/3 + 1)) = 8.66 is not enough, 20 is */
        c = row("bandwidth", 90, 0.01, 1);
        b.st.stddev = 1;
        CHECK(fb_compare_judge_runs(&b, &c, 0.05, &r) == FB_CMP_NOISE);
        c.st.median = c.st.mean = 80;
        CHECK(fb_compare_judge_runs(&b, &c, 0.05, &r) == FB_CMP_REGRESSION);
        /* one run on each side: never flagged */
        b = row("bandwidth", 100, 0.01, 1);
        CHECK(fb_compare_judge_runs(&b, &c, 0.05, &r) == FB_CMP_NOISE);
        /* no spread at all (found figures): beyond the threshold is a change */
        b = row("batch_max", 100, 0, 3);
        c = row("batch_max", 90, 0, 3);
        CHECK(fb_compare_judge_runs(&b, &c, 0.05, &r) == FB_CMP_REGRESSION);
        /* a fraction of time moves by points */
        b = row("stall_fraction", 0.02, 0, 3);
        c = row("stall_fraction", 0.03, 0, 3);
        CHECK(fb_compare_judge_runs(&b, &c, 0.05, &r) == FB_CMP_SAME);
        c.st.median = c.st.mean = 0.12;
        CHECK(fb_compare_judge_runs(&b, &c, 0.05, &r) == FB_CMP_REGRESSION);
        /* no better way: changed */
        b = row("bytes_fixed", 100, 0, 3);
        c = row("bytes_fixed", 200, 0, 3);
        CHECK(fb_compare_judge_runs(&b, &c, 0.05, &r) == FB_CMP_CHANGED);
    }

    /* Student's t at 0.995 and the runs a change needs. */
    CHECK(fabs(fb_compare_t995(1) - 63.657) < 1e-9);
    CHECK(fabs(fb_compare_t995(4.9) - 4.604) < 1e-9); /* rounded down */
    CHECK(fabs(fb_compare_t995(30) - 2.750) < 1e-9);
    CHECK(fabs(fb_compare_t995(40) - 2.704) < 1e-9);
    CHECK(fabs(fb_compare_t995(120) - 2.617) < 1e-9);
    CHECK(fb_compare_t995(50) < 2.704 && fb_compare_t995(50) > 2.660);
    CHECK(fabs(fb_compare_t995(1e9) - 2.576) < 1e-3);
    CHECK(fb_compare_t995(0.5) == fb_compare_t995(1));
    /* spread 1%, change 5%: n = 2 gives (9.925 + 1.061) x 0.01 x 1 = 0.11 > 0.05; n = 3
     * (df 4): (4.604 + 0.941) x 0.01 x 0.816 = 0.045 <= 0.05 */
    CHECK(fb_compare_runs_needed(0.01, 0.05) == 3);
    CHECK(fb_compare_runs_needed(0, 0.05) == 2);
    /* spread equal to the change: about 2 x (2.576 + 0.842)^2 = 23.4, a little more for t */
    CHECK(fb_compare_runs_needed(0.05, 0.05) >= 24 && fb_compare_runs_needed(0.05, 0.05) <= 27);
    CHECK(fb_compare_runs_needed(10, 0.05) == -1);
    CHECK(fb_compare_runs_needed(NAN, 0.05) == -1 && fb_compare_runs_needed(0.01, 0) == -1);

    /* The join over pooled rows is judged by runs, and the spread per benchmark says so. */
    {
        struct fb_read_row brows[2], crows[2];
        struct fb_read_results b = {.rows = brows, .nrows = 2}, c = {.rows = crows, .nrows = 2};
        struct fb_comparison cmp;
        struct fb_cmp_spread sp[4];

        memset(brows, 0, sizeof brows);
        memset(crows, 0, sizeof crows);
        brows[0].row = row("bandwidth", 100, 0.01, 4);
        crows[0].row = row("bandwidth", 80, 0.01, 4);
        brows[1].row = row("time", 10, 0.01, 4);
        crows[1].row = row("time", 10.1, 0.01, 4);
        brows[0].row.st.stddev = crows[0].row.st.stddev = 2;     /* 2% */
        brows[1].row.st.stddev = crows[1].row.st.stddev = 0.4;   /* 4% */
        CHECK(fb_compare_join_runs(&b, &c, 0.05, &cmp) == FB_OK);
        CHECK(cmp.n == 2 && cmp.e[0].runs && cmp.e[0].verdict == FB_CMP_REGRESSION &&
              cmp.e[1].verdict == FB_CMP_SAME);
        CHECK(fb_compare_spread(&cmp, 0.05, sp, 4) == 1);
        CHECK_STR(sp[0].bench, "h2d");
        /* each row: both sides' relative variances averaged; the median of the two rows */
        double cv0 = sqrt((0.02 * 0.02 + 0.025 * 0.025) / 2);
        double cv1 = sqrt((0.04 * 0.04 + (0.4 / 10.1) * (0.4 / 10.1)) / 2);
        CHECK(sp[0].rows == 2 && fabs(sp[0].cv - (cv0 + cv1) / 2) < 1e-12);
        CHECK(fabs(sp[0].cv_p90 - (cv0 + 0.9 * (cv1 - cv0))) < 1e-12); /* interpolated */
        CHECK(sp[0].runs_needed == fb_compare_runs_needed(sp[0].cv, 0.05));
        fb_compare_release(&cmp);
        CHECK(fb_compare_join(&b, &c, 0.05, &cmp) == FB_OK);
        CHECK(!cmp.e[0].runs && fb_compare_spread(&cmp, 0.05, sp, 4) == 0);
        fb_compare_release(&cmp);
    }

    /* Fingerprints: versions before environment before host; equal leaves left out. */
    {
        char dir[] = "/tmp/fb_test_compare.XXXXXX", bp[64], cp[64], err[256];
        struct fb_fp_diff *d = NULL;
        size_t n = 0;
        FILE *f;

        if (mkdtemp(dir)) {
            snprintf(bp, sizeof bp, "%s/b.json", dir);
            snprintf(cp, sizeof cp, "%s/c.json", dir);
            f = fopen(bp, "w");
            if (f) {
                fputs("{\"host\":{\"name\":\"k1\"},\"cuda\":{\"driver_version\":\"535.104\"},"
                      "\"nccl\":{\"version\":\"2.18.3\"},\"environment\":{\"NCCL_ALGO\":\"Ring\"},"
                      "\"ranks\":[{\"cpus\":\"0-9\"}],\"same\":1}", f);
                fclose(f);
            }
            f = fopen(cp, "w");
            if (f) {
                fputs("{\"host\":{\"name\":\"m1\"},\"cuda\":{\"driver_version\":\"550.54\"},"
                      "\"nccl\":{\"version\":\"2.18.3\"},\"environment\":{},"
                      "\"ranks\":[{\"cpus\":\"0-19\"}],\"same\":1}", f);
                fclose(f);
            }
            CHECK(fb_compare_fingerprints(bp, cp, &d, &n, err, sizeof err) == FB_OK);
            CHECK(n == 4);
            if (n == 4) {
                CHECK_STR(d[0].path, "cuda.driver_version");
                CHECK_STR(d[0].base, "535.104");
                CHECK_STR(d[0].cur, "550.54");
                CHECK_STR(d[1].path, "ranks[0].cpus");
                CHECK_STR(d[2].path, "environment.NCCL_ALGO");
                CHECK_STR(d[2].cur, "(absent)");
                CHECK_STR(d[3].path, "host.name");
            }
            free(d);
            f = fopen(cp, "w");
            if (f) {
                fputs("{not json", f);
                fclose(f);
            }
            CHECK(fb_compare_fingerprints(bp, cp, &d, &n, err, sizeof err) == FB_ERR_USAGE);
            CHECK_HAS(err, "c.json");
            remove(bp);
            remove(cp);
            remove(dir);
        }
    }
    TEST_DONE();
}

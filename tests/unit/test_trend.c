/* trend's step rule (harness/analysis/trend.c): a flat noisy series has no step, a step is found
 * at its run and only there, two steps both, a step smaller than the runs' noise or than the
 * threshold none; direction decides "worse"; missing points are skipped; series are built per
 * key; the volatile fingerprint list. */
#include <stdlib.h>

#include "fp_volatile.h"
#include "test.h"
#include "trend.h"

/* A deterministic noise in [-1, 1]. */
static double noise(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((double)((*s >> 8) & 0xffff) / 32767.5) - 1.0;
}

/* n points at level[i] * (1 + amp * noise), each with a trial band of +-band (relative). */
static void fill(struct fb_trend_point *pt, size_t n, const double *level, double amp,
                 double band, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        double m = level[i] * (1 + amp * noise(&seed));
        pt[i] = (struct fb_trend_point){true, m, m * (1 - band), m * (1 + band), 10};
    }
}

static size_t steps_of(const struct fb_trend_point *pt, size_t n, enum fb_cmp_dir dir,
                       double thr, struct fb_trend_step *first)
{
    struct fb_trend_step *s = NULL;
    size_t ns = 0;
    CHECK(fb_trend_steps(pt, n, dir, thr, &s, &ns) == FB_OK);
    if (ns && first)
        *first = s[0];
    free(s);
    return ns;
}

int main(void)
{
    struct fb_trend_point pt[16];
    double lv[16];
    struct fb_trend_step st;

    /* Flat series with 3% run-to-run noise and 2% bands: no step, over many seeds. */
    for (size_t i = 0; i < 16; i++)
        lv[i] = 10;
    size_t false_alarms = 0;
    for (unsigned seed = 1; seed <= 200; seed++) {
        fill(pt, 12, lv, 0.03, 0.02, seed);
        false_alarms += steps_of(pt, 12, FB_CMP_HIGHER, 0.05, NULL) != 0;
    }
    CHECK(false_alarms == 0);

    /* A drop to 60% from run 5 on (index 4) of 8: one step, at index 4, worse. */
    for (size_t i = 0; i < 8; i++)
        lv[i] = i < 4 ? 10 : 6;
    for (unsigned seed = 1; seed <= 50; seed++) {
        fill(pt, 8, lv, 0.03, 0.02, seed);
        memset(&st, 0, sizeof st);
        CHECK(steps_of(pt, 8, FB_CMP_HIGHER, 0.05, &st) == 1);
        CHECK(st.at == 4);
        CHECK(st.worse);
        CHECK_NEAR(st.ratio, 0.6, 0.06);
    }
    /* The same drop of a time (lower is better) is an improvement. */
    fill(pt, 8, lv, 0.03, 0.02, 7);
    CHECK(steps_of(pt, 8, FB_CMP_LOWER, 0.05, &st) == 1 && !st.worse);

    /* Two steps: down at index 4, back up at index 8 of 12: both, and the latest is not worse. */
    for (size_t i = 0; i < 12; i++)
        lv[i] = (i >= 4 && i < 8) ? 6 : 10;
    fill(pt, 12, lv, 0.02, 0.02, 3);
    {
        struct fb_trend_step *s = NULL;
        size_t ns = 0;
        CHECK(fb_trend_steps(pt, 12, FB_CMP_HIGHER, 0.05, &s, &ns) == FB_OK);
        CHECK(ns == 2);
        if (ns == 2) {
            CHECK(s[0].at == 4 && s[0].worse);
            CHECK(s[1].at == 8 && !s[1].worse);
        }
        struct fb_trend_series ser = {.steps = s, .nsteps = ns};
        CHECK(!fb_trend_latest_degraded(&ser));
        free(s);
    }

    /* A 4% step is under the 5% threshold; with a 3% threshold it counts. */
    for (size_t i = 0; i < 8; i++)
        lv[i] = i < 4 ? 10 : 9.6;
    fill(pt, 8, lv, 0.002, 0.002, 5);
    CHECK(steps_of(pt, 8, FB_CMP_HIGHER, 0.05, NULL) == 0);
    CHECK(steps_of(pt, 8, FB_CMP_HIGHER, 0.03, NULL) == 1);

    /* A 20% step inside runs whose trial bands are +-30% wide is noise, not a step. */
    for (size_t i = 0; i < 8; i++)
        lv[i] = i < 4 ? 10 : 8;
    fill(pt, 8, lv, 0.01, 0.30, 9);
    CHECK(steps_of(pt, 8, FB_CMP_HIGHER, 0.05, NULL) == 0);

    /* A step needs two runs on its new side: a last run alone is not one. */
    for (size_t i = 0; i < 6; i++)
        lv[i] = i < 5 ? 10 : 5;
    fill(pt, 6, lv, 0.01, 0.01, 2);
    CHECK(steps_of(pt, 6, FB_CMP_HIGHER, 0.05, NULL) == 0);

    /* A missing run is skipped; the step is still found where the level changed. */
    for (size_t i = 0; i < 9; i++)
        lv[i] = i < 5 ? 10 : 6;
    fill(pt, 9, lv, 0.02, 0.02, 4);
    pt[3].present = false;
    CHECK(steps_of(pt, 9, FB_CMP_HIGHER, 0.05, &st) == 1 && st.at == 5);

    /* Series per key: two runs' rows, one key each plus one shared. */
    struct fb_row a[2], b[1];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    strcpy(a[0].bench, "h2d"), strcpy(a[0].metric, "bandwidth"), a[0].bytes = 1 << 20;
    a[0].st.median = 10;
    a[1] = a[0], strcpy(a[1].kase, "other"), a[1].st.median = 3;
    b[0] = a[0], b[0].st.median = 11;
    const struct fb_row *rows[4] = {a, b, a, b};
    size_t nrows[4] = {2, 1, 2, 1}, ns = 0;
    struct fb_trend_series *ser = NULL;
    CHECK(fb_trend_build(rows, nrows, 4, 0.05, &ser, &ns) == FB_OK);
    CHECK(ns == 2);
    if (ns == 2) {
        CHECK(ser[0].pt[1].present && ser[0].pt[1].median == 11);
        CHECK(!ser[1].pt[1].present && ser[1].pt[2].present);
        CHECK(ser[0].dir == FB_CMP_HIGHER);
    }
    fb_trend_release(ser, ns);

    /* The volatile list: session folders and daemon URIs out, versions in. */
    CHECK(fb_fp_volatile("environment.OMPI_FILE_LOCATION"));
    CHECK(fb_fp_volatile("environment.PMIX_SERVER_URI41"));
    CHECK(fb_fp_volatile("max_rank_peak_rss_bytes"));
    CHECK(!fb_fp_volatile("cuda.driver_version"));
    CHECK(!fb_fp_volatile("environment.NCCL_ALGO"));
    TEST_DONE();
}

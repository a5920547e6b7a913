/* Statistics against values worked out by hand (numpy's default percentile rule). */
#include "stats.h"
#include "test.h"

int main(void)
{
    const double one[] = {42.0};
    const double ten[] = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5}; /* 1..10 shuffled */
    const double even[] = {4, 1, 3, 2};
    double copy[10];
    struct fb_stats s;

    CHECK(fb_stats_compute(one, 1, &s) == 0);
    CHECK(s.samples == 1 && s.median == 42 && s.p05 == 42 && s.p95 == 42 && s.stddev == 0);

    for (int i = 0; i < 10; i++)
        copy[i] = ten[i];
    CHECK(fb_stats_compute(ten, 10, &s) == 0);
    CHECK(s.samples == 10);
    CHECK_NEAR(s.median, 5.5, 1e-12);
    CHECK_NEAR(s.p05, 1.45, 1e-12);  /* 1 + 0.05 * 9 * (2 - 1) */
    CHECK_NEAR(s.p95, 9.55, 1e-12);
    CHECK_NEAR(s.min, 1, 0);
    CHECK_NEAR(s.max, 10, 0);
    CHECK_NEAR(s.mean, 5.5, 1e-12);
    CHECK_NEAR(s.stddev, 3.0276503540974917, 1e-12); /* sample stddev of 1..10 */
    for (int i = 0; i < 10; i++)
        CHECK(copy[i] == ten[i]); /* input left untouched */

    CHECK(fb_stats_compute(even, 4, &s) == 0);
    CHECK_NEAR(s.median, 2.5, 1e-12);
    CHECK(fb_stats_compute(even, 0, &s) == -1);

    /* median and MAD: an outlier moves neither; the input is left untouched */
    {
        const double v[5] = {4, 100, 1, 3, 2};
        double med = -1, mad = -1;
        CHECK(fb_stats_median_mad(v, 5, &med, &mad) == 0);
        CHECK_NEAR(med, 3, 0);
        CHECK_NEAR(mad, 1, 0); /* |deviations| 0 1 1 2 97 */
        CHECK(v[1] == 100 && v[0] == 4);
        CHECK(fb_stats_median_mad(v, 0, &med, &mad) == -1 && med == 0 && mad == 0);
    }
    TEST_DONE();
}

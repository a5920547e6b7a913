/* soak's rule for a degraded figure, against values worked out by hand. */
#include "soak_rule.h"
#include "test.h"

int main(void)
{
    struct fb_soak_rule r = fb_soak_rule_defaults();
    /* median 100; |x - 100| = 0 0 1 1 2 3 -> MAD 1 -> 1.4826 */
    const double base[] = {100, 101, 99, 102, 100, 97};
    const double flat[] = {50, 50, 50};
    double med, mad;

    CHECK(r.baseline == 3);
    CHECK_NEAR(r.tolerance, 0.10, 0);
    CHECK_NEAR(r.mads, 5.0, 0);
    CHECK(fb_soak_baseline(base, 6, &med, &mad) == FB_OK);
    CHECK_NEAR(med, 100, 1e-12);
    CHECK_NEAR(mad, 1.4826, 1e-12);
    /* 10% of 100 beats 5 x 1.4826: the limit is 110 */
    CHECK_NEAR(fb_soak_limit_us(&r, med, mad), 110, 1e-9);
    /* noisy baseline: 5 MADs beat the tolerance */
    CHECK_NEAR(fb_soak_limit_us(&r, 100, 4.0), 120, 1e-9);
    /* no noise at all: the tolerance alone */
    CHECK(fb_soak_baseline(flat, 3, &med, &mad) == FB_OK);
    CHECK_NEAR(mad, 0, 0);
    CHECK_NEAR(fb_soak_limit_us(&r, med, mad), 55, 1e-9);
    CHECK(fb_soak_baseline(flat, 0, &med, &mad) == FB_ERR_USAGE);
    /* only a collective in place on one rank moves nothing */
    CHECK(fb_soak_moves_nothing(true, 1, "in_place"));
    CHECK(!fb_soak_moves_nothing(true, 2, "in_place"));
    CHECK(!fb_soak_moves_nothing(true, 1, "out_of_place"));
    CHECK(!fb_soak_moves_nothing(false, 1, "in_place"));
    TEST_DONE();
}

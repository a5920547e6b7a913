/* The runner's cross-rank reduction: each trial lasts as long as its slowest taking-part rank;
 * idle ranks do not count; GB/s is 1e9 B/s; and h2d's size past the last-level cache. */
#include "runner.h"

#include <stdint.h>

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

    CHECK_NEAR(fb_gbps(1e9, 1e6), 1.0, 1e-12);     /* 1e9 bytes in one second */
    CHECK_NEAR(fb_gbps(27872824, 8465.57), 3.2925, 1e-4);
    CHECK(fb_gbps(100, 0.0) == 0.0);

    /* --beyond-llc: the next power of two at least twice the last-level cache */
    CHECK(fb_sweep_beyond_llc(32u << 20) == 64u << 20);
    CHECK(fb_sweep_beyond_llc(20u << 20) == 64u << 20);   /* Xeon E5-2650 (tests/data/topology) */
    CHECK(fb_sweep_beyond_llc(33u << 20) == 128u << 20);  /* DGX-2's Xeon 8174 */
    CHECK(fb_sweep_beyond_llc(532676608) == 1u << 30);    /* an EPYC guest's whole-socket L3 */
    CHECK(fb_sweep_beyond_llc(0) == 0);                   /* unknown: nothing added */
    CHECK(fb_sweep_beyond_llc(SIZE_MAX / 4) == 0);        /* past what can be allocated */
    TEST_DONE();
}

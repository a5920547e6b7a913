/* The data pattern: a copy checks against the sender's pattern, a sum of n ranks against the
 * closed form, and a single wrong element anywhere is counted. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "test.h"

int main(void)
{
    enum { N = 4099, RANKS = 5 };
    float *acc = calloc(N, sizeof *acc), *mine = calloc(N, sizeof *mine);
    int32_t *ints = calloc(N, sizeof *ints);
    int64_t offsets = 0;
    struct fb_pattern sum;

    /* values stay small integers, so sums are exact */
    for (size_t i = 0; i < 100000; i++)
        CHECK(fb_pattern_base(7, i) >= -8 && fb_pattern_base(7, i) <= 8);
    CHECK(fb_pattern_base(1, 10) != fb_pattern_base(1, 11) || fb_pattern_base(1, 11) != fb_pattern_base(1, 12));

    for (int r = 0; r < RANKS; r++) {
        struct fb_pattern p = {.seed = 3, .scale = 1, .offset = fb_pattern_rank_offset(r)};
        fb_pattern_fill_host(mine, N, FB_DTYPE_FLOAT32, p);
        CHECK(fb_pattern_check_host(mine, N, FB_DTYPE_FLOAT32, p) == 0);
        for (size_t i = 0; i < N; i++)
            acc[i] += mine[i];
        offsets += fb_pattern_rank_offset(r);
    }
    sum = (struct fb_pattern){.seed = 3, .scale = RANKS, .offset = offsets};
    CHECK(fb_pattern_check_host(acc, N, FB_DTYPE_FLOAT32, sum) == 0);
    /* A different rank's data, a stale seed and a single flipped element are all caught. */
    CHECK(fb_pattern_check_host(mine, N, FB_DTYPE_FLOAT32,
                                (struct fb_pattern){.seed = 3, .scale = 1, .offset = fb_pattern_rank_offset(0)}) > N / 2);
    CHECK(fb_pattern_check_host(acc, N, FB_DTYPE_FLOAT32,
                                (struct fb_pattern){.seed = 4, .scale = RANKS, .offset = offsets}) > N / 2);
    acc[N - 1] += 1.0f;
    CHECK(fb_pattern_check_host(acc, N, FB_DTYPE_FLOAT32, sum) == 1);

    fb_pattern_fill_host(ints, N, FB_DTYPE_INT32, sum);
    CHECK(fb_pattern_check_host(ints, N, FB_DTYPE_INT32, sum) == 0);
    ints[0] = -77;
    CHECK(fb_pattern_check_host(ints, N, FB_DTYPE_INT32, sum) == 1);

    {
        double *dbl = calloc(N, sizeof *dbl);
        fb_pattern_fill_host(dbl, N, FB_DTYPE_FLOAT64, sum);
        CHECK(fb_pattern_check_host(dbl, N, FB_DTYPE_FLOAT64, sum) == 0);
        free(dbl);
    }
    free(acc);
    free(mine);
    free(ints);
    TEST_DONE();
}

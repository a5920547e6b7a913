/* The data pattern: a copy checks against the sender's pattern, a sum of n ranks against the
 * closed form, and a single wrong element anywhere is counted. Also the float16 conversions
 * (harness/core/half.h) that the float16 fill and check rest on. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "half.h"
#include "test.h"

static int is_nan_half(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); }

static double dist(double a, double b) { return a > b ? a - b : b - a; }

/* Whether h is the half nearest to the finite float f, ties to the even pattern, judged only
 * by its neighbours' values: an independent statement of round-to-nearest-even. */
static int is_nearest_half(float f, uint16_t h)
{
    uint16_t mag = h & 0x7fffu;
    double d = dist(fb_half_to_float(h), f);

    if (is_nan_half(h) || ((h & 0x8000u) != 0) != (f < 0 || (f == 0 && signbit(f))))
        return 0;
    if (mag == 0x7c00u) /* infinity: only from 65520 up (the tie above 65504 goes up, as even) */
        return fabs(f) >= 65520.0;
    if (mag < 0x7bffu) { /* the next larger half in magnitude */
        double up = dist(fb_half_to_float((uint16_t)(h + 1)), f);
        if (up < d || (up == d && (h & 1u)))
            return 0;
    } else if (fabs(f) >= 65520.0) {
        return 0;
    }
    if (mag > 0) { /* the next smaller half in magnitude */
        double down = dist(fb_half_to_float((uint16_t)(h - 1)), f);
        if (down < d || (down == d && (h & 1u)))
            return 0;
    }
    return 1;
}

static void test_half_conversions(void)
{
    float nan_f = nanf(""), inf_f = (float)INFINITY;
    size_t not_nearest = 0, bad_roundtrip = 0;

    /* Every integer up to 2048 in magnitude is exact, so pattern sums are. */
    for (int i = -2048; i <= 2048; i++) {
        bad_roundtrip += fb_half_to_float(fb_half_from_float((float)i)) != (float)i;
        not_nearest += !is_nearest_half((float)i, fb_half_from_float((float)i));
    }
    CHECK(bad_roundtrip == 0);

    /* Known patterns. */
    CHECK(fb_half_from_float(1.0f) == 0x3c00);
    CHECK(fb_half_from_float(-2.0f) == 0xc000);
    CHECK(fb_half_from_float(65504.0f) == 0x7bff);
    CHECK(fb_half_from_float(0.5f) == 0x3800);
    CHECK(fb_half_from_float(0.0f) == 0x0000);
    CHECK(fb_half_from_float(-0.0f) == 0x8000);
    CHECK(fb_half_from_float(2048.0f) == 0x6800);
    CHECK(fb_half_to_float(0x3c00) == 1.0f);
    CHECK(fb_half_to_float(0xc000) == -2.0f);
    CHECK(fb_half_to_float(0x7bff) == 65504.0f);
    CHECK(fb_half_to_float(0x3555) == 0x1.554p-2f); /* 1/3 rounded: 0.333251953125 */
    /* Subnormals: the smallest is 2^-24 ~ 5.96e-8, the largest 1023 2^-24, then 2^-14. */
    CHECK(fb_half_to_float(0x0001) == 0x1p-24f);
    CHECK_NEAR(fb_half_to_float(0x0001), 5.96e-8, 0.01e-8);
    CHECK(fb_half_to_float(0x8001) == -0x1p-24f);
    CHECK(fb_half_to_float(0x03ff) == 1023 * 0x1p-24f);
    CHECK(fb_half_to_float(0x0400) == 0x1p-14f);
    CHECK(fb_half_from_float(0x1p-24f) == 0x0001);
    CHECK(fb_half_from_float(1023 * 0x1p-24f) == 0x03ff);
    CHECK(fb_half_from_float(1023.5f * 0x1p-24f) == 0x0400); /* tie, up to the even normal */
    CHECK(fb_half_from_float(0x1p-25f) == 0x0000);           /* tie between 0 and 2^-24: 0 */
    CHECK(fb_half_from_float(0x1.000002p-25f) == 0x0001);    /* just above the tie */
    CHECK(fb_half_from_float(-0x1.000002p-25f) == 0x8001);
    CHECK(fb_half_from_float(1.5f * 0x1p-24f) == 0x0002);    /* ties to even */
    CHECK(fb_half_from_float(2.5f * 0x1p-24f) == 0x0002);
    CHECK(fb_half_from_float(0x1p-26f) == 0x0000);
    CHECK(fb_half_from_float(0x1p-149f) == 0x0000); /* a float subnormal */
    /* Rounding above 2048, where halves step by 2: ties go to the even mantissa. */
    CHECK(fb_half_from_float(2049.0f) == 0x6800 && fb_half_to_float(0x6800) == 2048.0f);
    CHECK(fb_half_from_float(2050.0f) == 0x6801);
    CHECK(fb_half_from_float(2051.0f) == 0x6802 && fb_half_to_float(0x6802) == 2052.0f);
    CHECK(fb_half_from_float(-2051.0f) == 0xe802);
    CHECK(fb_half_from_float(2049.01f) == 0x6801);
    CHECK(fb_half_from_float(1.0f + 0x1p-11f) == 0x3c00); /* tie at 1: stays 1 */
    CHECK(fb_half_from_float(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01);
    /* Overflow, infinity and NaN. */
    CHECK(fb_half_from_float(65519.0f) == 0x7bff);
    CHECK(fb_half_from_float(65520.0f) == 0x7c00);
    CHECK(fb_half_from_float(-65520.0f) == 0xfc00);
    CHECK(fb_half_from_float(1e10f) == 0x7c00);
    CHECK(fb_half_from_float(inf_f) == 0x7c00);
    CHECK(fb_half_from_float(-inf_f) == 0xfc00);
    CHECK(is_nan_half(fb_half_from_float(nan_f)));
    CHECK(is_nan_half(fb_half_from_float(-nan_f)));
    {
        /* A NaN whose payload lies only in the low bits must not turn into infinity. */
        uint32_t bits = 0x7f800001u;
        float low_nan;
        memcpy(&low_nan, &bits, sizeof low_nan);
        CHECK(is_nan_half(fb_half_from_float(low_nan)));
    }
    CHECK(fb_half_to_float(0x7c00) == inf_f && fb_half_to_float(0xfc00) == -inf_f);
    CHECK(isnan(fb_half_to_float(0x7e00)) && isnan(fb_half_to_float(0x7c01)));

    /* Every half survives the trip through float, bit for bit (NaNs stay NaN). */
    bad_roundtrip = 0;
    for (uint32_t h = 0; h <= 0xffffu; h++) {
        uint16_t back = fb_half_from_float(fb_half_to_float((uint16_t)h));
        bad_roundtrip += is_nan_half((uint16_t)h) ? !is_nan_half(back) : back != h;
    }
    CHECK(bad_roundtrip == 0);

    /* Floats across the whole range, stepped through their bit patterns, round to nearest even;
     * the steps (odd) hit ties, subnormals and values past 65504 too. */
    for (uint64_t bits = 0; bits < 0x7f800000u; bits += 1021) {
        uint32_t b32 = (uint32_t)bits;
        float f;
        memcpy(&f, &b32, sizeof f);
        not_nearest += !is_nearest_half(f, fb_half_from_float(f));
        not_nearest += !is_nearest_half(-f, fb_half_from_float(-f));
    }
    /* and every float whose value is a midpoint between two halves, or one step either side */
    for (uint32_t h = 0; h < 0x7bffu; h++) {
        float lo = fb_half_to_float((uint16_t)h), hi = fb_half_to_float((uint16_t)(h + 1));
        float mid = lo + (hi - lo) / 2; /* exact: halves have 11 significant bits */
        not_nearest += !is_nearest_half(mid, fb_half_from_float(mid));
        not_nearest += !is_nearest_half(nextafterf(mid, 0), fb_half_from_float(nextafterf(mid, 0)));
        not_nearest += !is_nearest_half(nextafterf(mid, inf_f),
                                        fb_half_from_float(nextafterf(mid, inf_f)));
    }
    CHECK(not_nearest == 0);
}

/* float16 buffers: the sum of ranks' halves, added in half the way the MPI sum and NCCL do,
 * checks against the closed form up to 186 ranks; a flipped bit and a stale seed are caught,
 * and the fill writes 2 bytes per element, no more. */
static void test_half_pattern(void)
{
    enum { N = 4099, RANKS = 5, MAX_RANKS = 186 };
    uint16_t *acc = calloc(N + 8, sizeof *acc), *mine = calloc(N + 8, sizeof *mine);
    int64_t offsets = 0;
    struct fb_pattern sum;
    size_t guard_hit = 0;

    CHECK(fb_dtype_size(FB_DTYPE_FLOAT16) == 2);
    for (size_t i = N; i < N + 8; i++)
        mine[i] = 0xabcd;
    for (int r = 0; r < MAX_RANKS; r++) {
        struct fb_pattern p = {.seed = 3, .scale = 1, .offset = fb_pattern_rank_offset(r)};
        fb_pattern_fill_host(mine, N, FB_DTYPE_FLOAT16, p);
        if (r < 2)
            CHECK(fb_pattern_check_host(mine, N, FB_DTYPE_FLOAT16, p) == 0);
        for (size_t i = 0; i < N; i++)
            acc[i] = fb_half_from_float(fb_half_to_float(acc[i]) + fb_half_to_float(mine[i]));
        offsets += fb_pattern_rank_offset(r);
        if (r + 1 == RANKS) {
            sum = (struct fb_pattern){.seed = 3, .scale = RANKS, .offset = offsets};
            CHECK(fb_pattern_check_host(acc, N, FB_DTYPE_FLOAT16, sum) == 0);
            /* the same values as float32 would give */
            CHECK(fb_half_to_float(acc[17]) == (float)fb_pattern_expect(sum, 17));
        }
    }
    for (size_t i = N; i < N + 8; i++)
        guard_hit += mine[i] != 0xabcd;
    CHECK(guard_hit == 0);
    sum = (struct fb_pattern){.seed = 3, .scale = MAX_RANKS, .offset = offsets};
    CHECK(fb_pattern_check_host(acc, N, FB_DTYPE_FLOAT16, sum) == 0);
    /* The last rank's data, a stale seed and a single flipped bit are all caught. */
    CHECK(fb_pattern_check_host(mine, N, FB_DTYPE_FLOAT16, sum) > N / 2);
    CHECK(fb_pattern_check_host(acc, N, FB_DTYPE_FLOAT16,
                                (struct fb_pattern){.seed = 4, .scale = MAX_RANKS,
                                                    .offset = offsets}) > N / 2);
    acc[N / 2] ^= 0x0001; /* the lowest mantissa bit: the smallest change a half can show */
    CHECK(fb_pattern_check_host(acc, N, FB_DTYPE_FLOAT16, sum) == 1);
    acc[N / 2] ^= 0x0001;
    acc[N - 1] = 0x7e00; /* a NaN is wrong */
    CHECK(fb_pattern_check_host(acc, N, FB_DTYPE_FLOAT16, sum) == 1);
    free(acc);
    free(mine);
}


/* The host fill and check (harness/device/pattern_host.c) write and accept exactly
 * fb_pattern_expect's values, cast to each type, for the patterns run in 32-bit lanes and for
 * those too wide for them; across a run's end at index 2^32 (where the high bits change); with
 * each element of a vector's worth and the tail counted when wrong. */
static bool typed_equal(int64_t a, int64_t b, enum fb_dtype t)
{
    switch (t) {
    case FB_DTYPE_FLOAT32: return (float)a == (float)b;
    case FB_DTYPE_FLOAT64: return (double)a == (double)b;
    case FB_DTYPE_INT32: return (int32_t)a == (int32_t)b;
    default: return (int8_t)a == (int8_t)b;
    }
}

/* How many of index first + i's values (as type t) differ from index first + 1 + i's. */
static size_t shifted_wrong(struct fb_pattern p, size_t first, size_t n, enum fb_dtype t)
{
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += !typed_equal(fb_pattern_expect(p, first + i), fb_pattern_expect(p, first + 1 + i), t);
    return wrong;
}

static void test_fill_matches_expect(void)
{
    enum { N = 1037 }; /* not a multiple of any vector width */
    static const struct fb_pattern pats[] = {
        {.seed = 11, .scale = 1, .offset = -3},
        {.seed = 0, .scale = 0, .offset = -77},                    /* a poison */
        {.seed = 5, .scale = 186, .offset = 40},                   /* a sum of ranks */
        {.seed = 9, .scale = 1 << 27, .offset = (1 << 30) - 1},    /* the widest for 32 bits */
        {.seed = 9, .scale = (1 << 27) + 1, .offset = (1 << 30) - 1}, /* too wide: the int64 path */
        {.seed = 2, .scale = 3, .offset = (int64_t)1 << 40},       /* too wide: the int64 path */
    };
    static const size_t firsts[] = {0, ((size_t)1 << 32) - 500, ((size_t)3 << 32) + 7};
    static const enum fb_dtype types[] = {FB_DTYPE_FLOAT32, FB_DTYPE_FLOAT64, FB_DTYPE_INT32,
                                          FB_DTYPE_INT8};
    double *buf = calloc(N + 1, sizeof *buf);
    size_t differ = 0, miscounted = 0;

    for (size_t pi = 0; pi < sizeof pats / sizeof pats[0]; pi++)
        for (size_t fi = 0; fi < sizeof firsts / sizeof firsts[0]; fi++)
            for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
                struct fb_pattern p = pats[pi];
                size_t first = firsts[fi], sz = fb_dtype_size(types[ti]);
                unsigned char *b = (unsigned char *)buf, guard = 0x5a;
                b[N * sz] = guard;
                fb_pattern_fill_host_from(buf, first, N, types[ti], p);
                differ += b[N * sz] != guard;
                for (size_t i = 0; i < N; i++) {
                    int64_t e = fb_pattern_expect(p, first + i);
                    switch (types[ti]) {
                    case FB_DTYPE_FLOAT32: differ += ((float *)buf)[i] != (float)e; break;
                    case FB_DTYPE_FLOAT64: differ += buf[i] != (double)e; break;
                    case FB_DTYPE_INT32: differ += ((int32_t *)buf)[i] != (int32_t)e; break;
                    default: differ += ((int8_t *)buf)[i] != (int8_t)e; break;
                    }
                }
                miscounted += fb_pattern_check_host_from(buf, first, N, types[ti], p) != 0;
                /* the first, one inside the first vectors, and the last elements */
                b[0] ^= 0x40;
                b[5 * sz] ^= 0x40;
                b[(N - 1) * sz] ^= 0x40;
                miscounted += fb_pattern_check_host_from(buf, first, N, types[ti], p) != 3;
                b[0] ^= 0x40;
                b[5 * sz] ^= 0x40;
                b[(N - 1) * sz] ^= 0x40;
                /* the window is the pattern's: checked one place later, exactly the values
                 * that differ from their neighbour's are wrong */
                miscounted += fb_pattern_check_host_from(buf, first + 1, N, types[ti], p) !=
                              shifted_wrong(p, first, N, types[ti]);
            }
    CHECK(differ == 0);
    CHECK(miscounted == 0);
    /* the plain forms are the window at 0 */
    {
        struct fb_pattern p = pats[0];
        fb_pattern_fill_host(buf, N, FB_DTYPE_FLOAT32, p);
        CHECK(fb_pattern_check_host_from(buf, 0, N, FB_DTYPE_FLOAT32, p) == 0);
        CHECK(((float *)buf)[N - 1] == (float)fb_pattern_expect(p, N - 1));
    }
    free(buf);
}

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
    test_half_conversions();
    test_half_pattern();
    test_fill_matches_expect();
    {
        /* int8: p2p's byte-by-byte check; one flipped byte anywhere, the last one too. */
        int8_t bytes[13];
        struct fb_pattern p = {.seed = 104, .scale = 1, .offset = 0};
        fb_pattern_fill_host(bytes, 13, FB_DTYPE_INT8, p);
        CHECK(fb_pattern_check_host(bytes, 13, FB_DTYPE_INT8, p) == 0);
        CHECK(fb_pattern_check_host(bytes, 13, FB_DTYPE_INT8,
                                    (struct fb_pattern){.seed = 105, .scale = 1, .offset = 0}) > 3);
        bytes[12] ^= 1;
        CHECK(fb_pattern_check_host(bytes, 13, FB_DTYPE_INT8, p) == 1);
        CHECK(fb_dtype_size(FB_DTYPE_INT8) == 1);
    }
    free(acc);
    free(mine);
    free(ints);
    TEST_DONE();
}

/* core/half.c: the array conversions (F16C where the CPU has it) give the one-element forms'
 * results bit for bit: every one of the 65,536 halves to float, and to half about 16.7 million
 * floats spread over every exponent (every 256th bit pattern, plus the edges: rounding ties,
 * the largest half, the subnormal range, infinities, NaNs); unaligned buffers and a tail
 * shorter than 8. CTest runs it again with FB_HALF_NO_F16C=1 (test_half_portable): the
 * portable path of the array forms. No MPI. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "test.h"

enum { BLOCK = 4099 }; /* not a multiple of 8: every block ends in a scalar tail */

static uint32_t bits_of(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

static float float_of(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* Every half through fb_half_to_float_n against fb_half_to_float; returns the mismatches. */
static long all_halves(void)
{
    static uint16_t h[65536 + 1];
    static float got[65536 + 1];
    long bad = 0;

    for (uint32_t i = 0; i < 65536; i++)
        h[i + 1] = (uint16_t)i;
    fb_half_to_float_n(got + 1, h + 1, 65536); /* +1: neither buffer aligned to 32 bytes */
    for (uint32_t i = 0; i < 65536; i++)
        if (bits_of(got[i + 1]) != bits_of(fb_half_to_float((uint16_t)i)) && bad++ < 5)
            fprintf(stderr, "half 0x%04x: 0x%08x, expected 0x%08x\n", (unsigned)i,
                    (unsigned)bits_of(got[i + 1]), (unsigned)bits_of(fb_half_to_float((uint16_t)i)));
    return bad;
}

/* Floats through fb_half_from_float_n against fb_half_from_float, BLOCK at a time. */
static long some_floats(void)
{
    static float f[BLOCK + 1];
    static uint16_t got[BLOCK + 1];
    static const uint32_t edges[] = {
        0x00000000u, 0x80000000u, 0x00000001u, 0x007fffffu, /* zeros, float subnormals */
        0x33000000u, 0x33000001u, 0x32ffffffu,              /* 2^-25: the tie to zero */
        0x33800000u, 0x387fe000u, 0x387ff000u, 0x38800000u, /* half subnormals, the top one */
        0x3f800000u, 0x3f801000u, 0x3f802000u, 0x3f803000u, /* ties at 1: even, odd */
        0x477fe000u, 0x477fefffu, 0x477ff000u, 0x47800000u, /* 65504, just below 65520, 65520 */
        0x7f7fffffu, 0x7f800000u, 0xff800000u,              /* largest float, infinities */
        0x7fc00000u, 0x7f800001u, 0xffbfffffu, 0x7fffe000u, /* quiet and signalling NaNs */
    };
    long bad = 0;
    size_t n = 0;

    /* every 256th bit pattern, its low byte varied (k % 251) so the rounding bits are not all 0 */
    for (uint32_t k = 0; k < (1u << 24); k++) {
        f[1 + n++] = float_of((k << 8) | (k % 251));
        if (n < BLOCK && k + 1 < (1u << 24))
            continue;
        fb_half_from_float_n(got + 1, f + 1, n);
        for (size_t i = 0; i < n; i++)
            if (got[1 + i] != fb_half_from_float(f[1 + i]) && bad++ < 5)
                fprintf(stderr, "float 0x%08x: 0x%04x, expected 0x%04x\n",
                        (unsigned)bits_of(f[1 + i]), got[1 + i], fb_half_from_float(f[1 + i]));
        n = 0;
    }
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
        uint16_t one;
        float in = float_of(edges[i]);
        fb_half_from_float_n(&one, &in, 1);
        if (one != fb_half_from_float(in) && bad++ < 10)
            fprintf(stderr, "edge 0x%08x: 0x%04x, expected 0x%04x\n", (unsigned)edges[i], one,
                    fb_half_from_float(in));
    }
    return bad;
}

int main(void)
{
    /* known values, so a wrong reference cannot agree with itself */
    CHECK(fb_half_from_float(1.0f) == 0x3c00);
    CHECK(fb_half_from_float(65504.0f) == 0x7bff);
    CHECK(fb_half_from_float(65520.0f) == 0x7c00);
    CHECK(fb_half_from_float(0x1p-24f) == 0x0001);
    CHECK(bits_of(fb_half_to_float(0x7c01)) == 0x7fc02000u); /* a signalling NaN made quiet */
    fprintf(stderr, "F16C: %s\n", fb_half_has_f16c() ? "used" : "not on this CPU");
    CHECK(all_halves() == 0);
    CHECK(some_floats() == 0);
    TEST_DONE();
}

/* IEEE binary16 on the host: float <-> half conversions done on the bit patterns. */
#include "half.h"

#include <stdlib.h>
#include <string.h>

uint16_t fb_half_from_float(float f)
{
    uint32_t x, mant, q, rest, halfway;
    uint16_t sign;
    int32_t exp;
    int shift;

    memcpy(&x, &f, sizeof x);
    sign = (uint16_t)((x >> 16) & 0x8000u);
    mant = x & 0x7fffffu;
    exp = (int32_t)((x >> 23) & 0xffu);
    if (exp == 0xff) /* infinity, or NaN: keep the top payload bits and force it quiet */
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x0200u | (mant >> 13) : 0));
    exp -= 127 - 15; /* rebias: the half exponent field this value would have */
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) {
        /* Subnormal half: the value is (1.mant) 2^(exp - 15) = q 2^-24 with the implicit bit
         * shifted down. Below 2^-25 (exp < -10) even the rounding cannot reach 2^-24. */
        if (exp < -10)
            return sign;
        mant |= 0x800000u;
        shift = 14 - exp; /* 14..24 */
    } else {
        shift = 13;
    }
    q = mant >> shift;
    rest = mant & ((1u << shift) - 1);
    halfway = 1u << (shift - 1);
    if (exp > 0)
        q |= (uint32_t)exp << 10;
    /* Round to nearest, ties to even. A carry out of the mantissa bumps the exponent, which is
     * right: the largest subnormal rounds up to the smallest normal, 65520 up to infinity. */
    if (rest > halfway || (rest == halfway && (q & 1u)))
        q++;
    return (uint16_t)(sign | q);
}

float fb_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    uint32_t x;
    float f;

    if (exp == 0x1f) { /* infinity, or NaN: made quiet, payload kept (as F16C does) */
        x = sign | 0x7f800000u | (mant << 13) | (mant ? 0x400000u : 0);
    } else if (exp == 0) {
        /* Zero or subnormal: mant 2^-24, exact in float. */
        f = (float)mant * 0x1p-24f;
        return sign ? -f : f;
    } else {
        x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    memcpy(&f, &x, sizeof f);
    return f;
}

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define FB_HALF_X86 1

/* vcvtps2ph rounds to nearest even (imm 0: the rounding control in the instruction, not
 * MXCSR's), makes a signalling NaN quiet keeping its top payload bits, overflows to infinity and
 * rounds float subnormals to zero, as fb_half_from_float does; vcvtph2ps is exact. MXCSR's DAZ
 * is off (C's default), so float subnormals are read as they are. */
__attribute__((target("avx,f16c"))) static void from_f16c(uint16_t *dst, const float *src,
                                                          size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), 0));
    for (; i < n; i++)
        dst[i] = fb_half_from_float(src[i]);
}

__attribute__((target("avx,f16c"))) static void to_f16c(float *dst, const uint16_t *src, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i,
                         _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(src + i))));
    for (; i < n; i++)
        dst[i] = fb_half_to_float(src[i]);
}
#endif

int fb_half_has_f16c(void)
{
#ifdef FB_HALF_X86
    static int has = -1;
    if (has < 0) {
        __builtin_cpu_init();
        has = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx") &&
              !getenv("FB_HALF_NO_F16C");
    }
    return has;
#else
    return 0;
#endif
}

void fb_half_from_float_n(uint16_t *dst, const float *src, size_t n)
{
#ifdef FB_HALF_X86
    if (fb_half_has_f16c()) {
        from_f16c(dst, src, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++)
        dst[i] = fb_half_from_float(src[i]);
}

void fb_half_to_float_n(float *dst, const uint16_t *src, size_t n)
{
#ifdef FB_HALF_X86
    if (fb_half_has_f16c()) {
        to_f16c(dst, src, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++)
        dst[i] = fb_half_to_float(src[i]);
}

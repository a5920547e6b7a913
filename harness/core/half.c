/* IEEE binary16 on the host: float <-> half conversions done on the bit patterns. */
#include "half.h"

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

    if (exp == 0x1f) {
        x = sign | 0x7f800000u | (mant << 13);
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

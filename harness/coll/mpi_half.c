/* IEEE binary16 on the host: float <-> half conversions done on the bit patterns, and the MPI
 * datatype and sum operation for halves, created once and freed before MPI_Finalize. */
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

static MPI_Datatype half_type = MPI_DATATYPE_NULL;
static MPI_Op half_sum = MPI_OP_NULL;

/* MPI_User_function: inout[i] = in[i] + inout[i]. Buffers may hold any type's bytes, so each
 * element is copied in and out rather than read through a uint16_t pointer. */
static void half_sum_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const unsigned char *a = in;
    unsigned char *b = inout;
    uint16_t x, y;

    (void)type;
    for (int i = 0; i < *len; i++) {
        memcpy(&x, a + 2 * (size_t)i, 2);
        memcpy(&y, b + 2 * (size_t)i, 2);
        y = fb_half_from_float(fb_half_to_float(x) + fb_half_to_float(y));
        memcpy(b + 2 * (size_t)i, &y, 2);
    }
}

MPI_Datatype fb_mpi_half_type(void)
{
    MPI_Datatype t;

    if (half_type != MPI_DATATYPE_NULL)
        return half_type;
    if (MPI_Type_contiguous(2, MPI_BYTE, &t) != MPI_SUCCESS)
        return MPI_DATATYPE_NULL;
    if (MPI_Type_commit(&t) != MPI_SUCCESS) {
        MPI_Type_free(&t);
        return MPI_DATATYPE_NULL;
    }
    MPI_Type_set_name(t, "fb_float16"); /* only for MPI's own messages; failure is harmless */
    half_type = t;
    return half_type;
}

MPI_Op fb_mpi_half_sum(void)
{
    MPI_Op op;

    if (half_sum != MPI_OP_NULL)
        return half_sum;
    if (MPI_Op_create(half_sum_fn, 1, &op) != MPI_SUCCESS)
        return MPI_OP_NULL;
    half_sum = op;
    return half_sum;
}

void fb_mpi_half_free(void)
{
    int finalized = 0;

    MPI_Finalized(&finalized);
    /* After MPI_Finalize the handles cannot be freed; forget them so a stale one is not reused. */
    if (!finalized) {
        if (half_sum != MPI_OP_NULL)
            MPI_Op_free(&half_sum);
        if (half_type != MPI_DATATYPE_NULL)
            MPI_Type_free(&half_type);
    }
    half_sum = MPI_OP_NULL;
    half_type = MPI_DATATYPE_NULL;
}

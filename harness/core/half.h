/* IEEE binary16 ("float16", FB_DTYPE_FLOAT16) on the host: portable C11 conversions to and from
 * float. A half is handled as its 16-bit pattern in a uint16_t; no compiler half type
 * (_Float16, __fp16) is needed. MPI's datatype and sum for halves are coll's (mpi_half.h). */
#ifndef FB_HALF_H
#define FB_HALF_H

#include <stdint.h>

/* Rounds a float to the nearest half, ties to even. Values at or above 65520 in magnitude
 * become infinity, values at most 2^-25 become a signed zero, values between that and 2^-14
 * round to subnormals (steps of 2^-24); infinities keep their sign and a NaN stays a quiet
 * NaN. Pure. */
uint16_t fb_half_from_float(float f);

/* The float holding the value of half `h`, exactly (every half is a float). Pure. */
float fb_half_to_float(uint16_t h);

#endif

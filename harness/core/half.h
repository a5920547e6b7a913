/* IEEE binary16 ("float16", FB_DTYPE_FLOAT16) on the host: portable C11 conversions to and from
 * float. A half is handled as its 16-bit pattern in a uint16_t; no compiler half type
 * (_Float16, __fp16) is needed; arrays convert through F16C where the CPU has it. MPI's datatype and sum for halves are coll's (mpi_half.h). */
#ifndef FB_HALF_H
#define FB_HALF_H

#include <stddef.h>
#include <stdint.h>

/* Rounds a float to the nearest half, ties to even. Values at or above 65520 in magnitude
 * become infinity, values at most 2^-25 become a signed zero, values between that and 2^-14
 * round to subnormals (steps of 2^-24); infinities keep their sign and a NaN stays a quiet
 * NaN. Pure. */
uint16_t fb_half_from_float(float f);

/* The float holding the value of half `h`, exactly (every half is a float; a NaN comes out
 * quiet, its payload kept). Pure. */
float fb_half_to_float(uint16_t h);

/* n at once, each as the one-element form gives it, bit for bit: with the CPU's F16C
 * instructions where it has them (x86-64, checked at run time), 8 values an instruction, else
 * the functions above. Buffers need no alignment and must not overlap. */
void fb_half_from_float_n(uint16_t *dst, const float *src, size_t n);
void fb_half_to_float_n(float *dst, const uint16_t *src, size_t n);

/* Whether the _n forms use F16C here (FB_HALF_NO_F16C in the environment says no: the tests
 * compare both paths). */
int fb_half_has_f16c(void);

#endif

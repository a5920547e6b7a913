/* IEEE binary16 ("float16", FB_DTYPE_FLOAT16) on the host: portable C11 conversions to and from
 * float, and the MPI datatype and sum operation that MPI itself lacks (MPI has no fp16 type, and
 * Open MPI 4.1 no fp16 sum). A half is handled as its 16-bit pattern in a uint16_t; no
 * compiler half type (_Float16, __fp16) is needed. */
#ifndef FB_HALF_H
#define FB_HALF_H

#include <mpi.h>
#include <stdint.h>

/* Rounds a float to the nearest half, ties to even. Values at or above 65520 in magnitude
 * become infinity, values at most 2^-25 become a signed zero, values between that and 2^-14
 * round to subnormals (steps of 2^-24); infinities keep their sign and a NaN stays a quiet
 * NaN. Pure. */
uint16_t fb_half_from_float(float f);

/* The float holding the value of half `h`, exactly (every half is a float). Pure. */
float fb_half_to_float(uint16_t h);

/* The MPI datatype of one half: 2 contiguous bytes (MPI_Type_contiguous(2, MPI_BYTE)),
 * committed. Created at the first call and kept until fb_mpi_half_free(); later calls return
 * the same handle. Use it with fb_mpi_half_sum() only: MPI_SUM is not defined on it. Needs MPI
 * initialised; not thread-safe (call it from the thread that calls MPI). Local, not
 * collective, but every rank of a reduction must pass it. MPI_DATATYPE_NULL if MPI failed. */
MPI_Datatype fb_mpi_half_type(void);

/* The commutative element-wise sum of halves, for fb_mpi_half_type() buffers: each pair is
 * added in float and rounded back to the nearest half (so sums of integers are exact while
 * they stay within +-2048). Created at the first call like fb_mpi_half_type(), with the same
 * conditions. MPI_OP_NULL if MPI failed. The function runs on the host: it must not be given
 * device pointers (stage GPU buffers, or rely on an MPI that stages them for user ops). */
MPI_Op fb_mpi_half_sum(void);

/* Frees the datatype and operation if they were created; safe to call when they never were,
 * and more than once. Call before MPI_Finalize (after it, the handles are only forgotten). */
void fb_mpi_half_free(void);

#endif

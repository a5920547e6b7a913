/* The MPI datatype and sum operation for halves (FB_DTYPE_FLOAT16) that MPI itself lacks: MPI
 * has no fp16 type, and Open MPI 4.1 no fp16 sum. A half travels as its 2-byte pattern and is
 * added in float (half.h's conversions). */
#ifndef FB_MPI_HALF_H
#define FB_MPI_HALF_H

#include <mpi.h>

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

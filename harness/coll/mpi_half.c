/* The MPI datatype and sum operation for IEEE binary16 halves (MPI has none), created once and
 * freed before MPI_Finalize. The element conversions are core's (half.h). */
#include "mpi_half.h"

#include <string.h>

#include "half.h"

static MPI_Datatype half_type = MPI_DATATYPE_NULL;
static MPI_Op half_sum = MPI_OP_NULL;

/* MPI_User_function: inout[i] = in[i] + inout[i], each sum rounded to a half. Buffers may hold
 * any type's bytes, so blocks are copied in and out rather than read through a uint16_t
 * pointer; each block converts at once (F16C where the CPU has it). */
static void half_sum_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    enum { BLOCK = 512 };
    const unsigned char *a = in;
    unsigned char *b = inout;
    uint16_t x[BLOCK], y[BLOCK];
    float fx[BLOCK], fy[BLOCK];

    (void)type;
    for (size_t at = 0, n; at < (size_t)*len; at += n) {
        n = (size_t)*len - at < BLOCK ? (size_t)*len - at : BLOCK;
        memcpy(x, a + 2 * at, 2 * n);
        memcpy(y, b + 2 * at, 2 * n);
        fb_half_to_float_n(fx, x, n);
        fb_half_to_float_n(fy, y, n);
        for (size_t i = 0; i < n; i++)
            fy[i] += fx[i];
        fb_half_from_float_n(y, fy, n);
        memcpy(b + 2 * at, y, 2 * n);
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

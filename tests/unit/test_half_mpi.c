/* The MPI float16 datatype and sum (harness/coll/mpi_half.h) on one rank: MPI_Reduce_local adds
 * halves element-wise with rounding to nearest even, the handles are made once, and freeing them is
 * safe before they exist, twice, and followed by a fresh creation. */
#include <mpi.h>
#include <stdint.h>

#include "mpi_half.h"
#include "test.h"

enum { COUNT = 9 };

/* Sums in[i] + inout[i] with the MPI operation and checks each result pattern. */
static void check_sums(MPI_Datatype type, MPI_Op op)
{
    /* a + b = want, as half bit patterns */
    static const uint16_t a[COUNT] = {0x3c00, 0x6800, 0x6800, 0x7bff, 0x3800, 0x0001, 0x3c00,
                                      0x6801, 0x7c00};
    static const uint16_t b[COUNT] = {0x4000, 0xe800, 0x3c00, 0x7bff, 0x3400, 0x0001, 0xc200,
                                      0x3c00, 0x3c00};
    static const uint16_t want[COUNT] = {
        0x4200, /* 1 + 2 = 3 */
        0x0000, /* 2048 + -2048 = 0 */
        0x6800, /* 2048 + 1 = 2049, a tie: stays 2048 (even) */
        0x7c00, /* 65504 + 65504 overflows to infinity */
        0x3a00, /* 0.5 + 0.25 = 0.75 */
        0x0002, /* smallest subnormal twice */
        0xc000, /* 1 + -3 = -2 */
        0x6802, /* 2050 + 1 = 2051, a tie: up to 2052 (even) */
        0x7c00, /* infinity + 1 */
    };
    uint16_t inout[COUNT];
    int rc;

    for (int i = 0; i < COUNT; i++)
        inout[i] = b[i];
    rc = MPI_Reduce_local(a, inout, COUNT, type, op);
    CHECK(rc == MPI_SUCCESS);
    for (int i = 0; i < COUNT; i++) {
        if (inout[i] != want[i])
            fprintf(stderr, "element %d: 0x%04x + 0x%04x gave 0x%04x, expected 0x%04x\n", i,
                    (unsigned)a[i], (unsigned)b[i], (unsigned)inout[i], (unsigned)want[i]);
        CHECK(inout[i] == want[i]);
    }
}

int main(int argc, char **argv)
{
    MPI_Datatype type;
    MPI_Op op;
    int size = 0, commutative = 0;
    uint16_t one = 0x3c00, got = 0;

    fb_mpi_half_free(); /* before MPI_Init and before creation: a no-op */
    MPI_Init(&argc, &argv);
    fb_mpi_half_free();

    type = fb_mpi_half_type();
    op = fb_mpi_half_sum();
    CHECK(type != MPI_DATATYPE_NULL && op != MPI_OP_NULL);
    CHECK(fb_mpi_half_type() == type && fb_mpi_half_sum() == op); /* made once */
    MPI_Type_size(type, &size);
    CHECK(size == 2);
    MPI_Op_commutative(op, &commutative);
    CHECK(commutative);
    check_sums(type, op);

    /* A real collective accepts the pair (one rank: the result is the input). */
    CHECK(MPI_Allreduce(&one, &got, 1, type, op, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(got == 0x3c00);

    fb_mpi_half_free();
    fb_mpi_half_free();
    type = fb_mpi_half_type();
    op = fb_mpi_half_sum();
    CHECK(type != MPI_DATATYPE_NULL && op != MPI_OP_NULL);
    check_sums(type, op);
    fb_mpi_half_free();

    MPI_Finalize();
    fb_mpi_half_free(); /* after MPI_Finalize with nothing left: still a no-op */
    TEST_DONE();
}

/* Independent reference: rank 0 sends BYTES to rank 1 with plain MPI_Send/MPI_Recv, timed with
 * MPI_Wtime. Prints on rank 0 the median microseconds per message (slowest rank) over
 * `trials` trials. usage: mpirun -np 2 ref_mpi_sendrecv BYTES [TRIALS] */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS (ref_mem.h) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_mem.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void one(char *buf, int bytes, int rank)
{
    if (rank == 0)
        MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    int bytes, trials, rank, size, reps;
    char *buf;
    double us[1000];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bytes = argc > 1 ? atoi(argv[1]) : 0;
    trials = argc > 2 ? atoi(argv[2]) : 10;
    if (bytes <= 0 || trials < 1 || trials > 1000 || size != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 ref_mpi_sendrecv BYTES [TRIALS<=1000]\n");
        MPI_Finalize();
        return 2;
    }
    /* Page-aligned, as any benchmark's buffers should be: alignment changes copy speed; made
     * as fabricbench's device buffers are (ref_mem.h). */
    buf = ref_buffer((size_t)bytes);
    memset(buf, rank + 1, (size_t)bytes);
    for (int w = 0; w < 3; w++)
        one(buf, bytes, rank);
    {
        double t0, once, slowest;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        one(buf, bytes, rank);
        once = MPI_Wtime() - t0;
        MPI_Allreduce(&once, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        reps = slowest > 0 ? (int)(0.005 / slowest) + 1 : 1000;
    }
    for (int t = 0; t < trials; t++) {
        double t0, mine, slowest;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int k = 0; k < reps; k++)
            one(buf, bytes, rank);
        mine = (MPI_Wtime() - t0) / reps * 1e6;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        us[t] = slowest;
    }
    if (rank == 0) {
        qsort(us, (size_t)trials, sizeof us[0], cmp);
        printf("%.3f\n", us[trials / 2]);
    }
    ref_buffer_free(buf, (size_t)bytes);
    MPI_Finalize();
    return 0;
}

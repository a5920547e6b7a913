/* Independent reference: a plain MPI_Allreduce loop on floats, timed with MPI_Wtime. Prints on
 * rank 0 the median microseconds per all-reduce (slowest rank) over `trials` trials.
 * usage: mpirun -np N ref_mpi_allreduce BYTES [TRIALS] */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS (ref_mem.h) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "ref_mem.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t bytes, count;
    int trials, rank, reps;
    float *send, *recv;
    double us[1000];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;
    trials = argc > 2 ? atoi(argv[2]) : 10;
    count = bytes / sizeof(float);
    if (count == 0 || trials < 1 || trials > 1000) {
        if (rank == 0)
            fprintf(stderr, "usage: ref_mpi_allreduce BYTES [TRIALS<=1000]\n");
        MPI_Finalize();
        return 2;
    }
    /* Page-aligned, as any benchmark's buffers should be: alignment changes copy speed. */
    send = ref_buffer(count * sizeof *send); /* as fabricbench's device buffers (ref_mem.h) */
    recv = ref_buffer(count * sizeof *recv);
    for (size_t i = 0; i < count; i++)
        send[i] = (float)(i % 7), recv[i] = 0.0f;
    for (int w = 0; w < 3; w++)
        MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    /* Iterations per trial: enough for about 5 ms, from one timed call on the slowest rank. */
    {
        double t0 = MPI_Wtime(), one, slowest;
        MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        one = MPI_Wtime() - t0;
        MPI_Allreduce(&one, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        reps = slowest > 0 ? (int)(0.005 / slowest) + 1 : 1000;
    }
    for (int t = 0; t < trials; t++) {
        double t0, mine, slowest;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int k = 0; k < reps; k++)
            MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        mine = (MPI_Wtime() - t0) / reps * 1e6;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        us[t] = slowest;
    }
    if (rank == 0) {
        qsort(us, (size_t)trials, sizeof us[0], cmp);
        printf("%.3f\n", us[trials / 2]);
    }
    ref_buffer_free(send, count * sizeof *send);
    ref_buffer_free(recv, count * sizeof *recv);
    MPI_Finalize();
    return 0;
}

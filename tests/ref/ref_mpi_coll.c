/* Independent reference: one collective timed OSU's way in the smallest program that can do it,
 * to tell fabricbench's cost from Open MPI's: before each iteration a barrier, outside the time,
 * then the call alone between two MPI_Wtime reads, on every rank, float32, out of place (bcast:
 * one buffer), buffers of posix_memalign'ed pages set once. Prints, in microseconds, the mean
 * over ranks of each rank's mean iteration (OSU's "Avg Latency", fabricbench's time_synced_avg)
 * and the mean over ranks of the median of each rank's means of `chunk` iterations (what
 * fabricbench's median of time_synced_avg is with --iters CHUNK: a VM's hiccups move it less).
 * BYTES is fabricbench's size: the gathered or scattered buffer, or the broadcast one.
 * usage: mpirun -np N ref_mpi_coll allgather|reduce_scatter|alltoall|bcast BYTES [ITERS [CHUNK]] */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rank, n, iters, chunk, nchunks, *counts, warmup = 20;
    size_t bytes, count;
    void *sbuf = NULL, *rbuf = NULL;
    double *t, *means, sum = 0.0, mine[2], all[2];
    const char *what;
    char *end;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 3 || (strcmp(argv[1], "allgather") && strcmp(argv[1], "reduce_scatter") &&
                     strcmp(argv[1], "alltoall") && strcmp(argv[1], "bcast"))) {
        if (rank == 0)
            fprintf(stderr, "usage: ref_mpi_coll allgather|reduce_scatter|alltoall|bcast BYTES "
                            "[ITERS [CHUNK]]\n");
        MPI_Finalize();
        return 2;
    }
    what = argv[1];
    bytes = strtoul(argv[2], &end, 10);
    iters = argc > 3 ? atoi(argv[3]) : 5000;
    chunk = argc > 4 ? atoi(argv[4]) : 50;
    count = bytes / 4 / (size_t)n; /* each rank's block, in floats */
    if (*end || !isdigit((unsigned char)argv[2][0]) || count == 0 || count > INT_MAX / (size_t)n ||
        iters < 1 || chunk < 1 || chunk > iters) {
        if (rank == 0)
            fprintf(stderr, "ref_mpi_coll: BYTES (decimal digits) must hold a float per rank, "
                            "1 <= CHUNK <= ITERS\n");
        MPI_Finalize();
        return 2;
    }
    counts = malloc((size_t)n * sizeof *counts);
    t = malloc((size_t)iters * sizeof *t);
    nchunks = iters / chunk;
    means = malloc((size_t)nchunks * sizeof *means);
    if (!counts || !t || !means || posix_memalign(&sbuf, 4096, bytes) ||
        posix_memalign(&rbuf, 4096, bytes)) {
        fprintf(stderr, "ref_mpi_coll: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 1, bytes);
    memset(rbuf, 0, bytes);
    for (int i = 0; i < n; i++)
        counts[i] = (int)count;

    for (int i = -warmup; i < iters; i++) {
        double t0, t1;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (what[0] == 'a' && what[3] == 'g') /* allgather */
            MPI_Allgather(sbuf, (int)count, MPI_FLOAT, rbuf, (int)count, MPI_FLOAT,
                          MPI_COMM_WORLD);
        else if (what[0] == 'r')
            MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        else if (what[0] == 'a')
            MPI_Alltoall(sbuf, (int)count, MPI_FLOAT, rbuf, (int)count, MPI_FLOAT,
                         MPI_COMM_WORLD);
        else
            MPI_Bcast(rbuf, (int)(count * (size_t)n), MPI_FLOAT, 0, MPI_COMM_WORLD);
        t1 = MPI_Wtime();
        if (i >= 0)
            t[i] = (t1 - t0) * 1e6;
    }
    for (int i = 0; i < iters; i++)
        sum += t[i];
    for (int c = 0; c < nchunks; c++) {
        double s = 0.0;
        for (int k = 0; k < chunk; k++)
            s += t[c * chunk + k];
        means[c] = s / chunk;
    }
    qsort(means, (size_t)nchunks, sizeof *means, cmp);
    mine[0] = sum / iters;
    mine[1] = means[nchunks / 2];
    MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s %zu bytes, %d ranks, %d iterations: mean %.3f us, median of %d-iteration "
               "means %.3f us\n", what, bytes, n, iters, all[0] / n, chunk, all[1] / n);
    free(counts);
    free(t);
    free(means);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}

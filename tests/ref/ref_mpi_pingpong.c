/* Independent reference: one-way latency between ranks 0 and 1 as half the round trip of a
 * BYTES-byte ping-pong (rank 0 sends, rank 1 answers), plain MPI_Send/MPI_Recv timed with
 * MPI_Wtime on rank 0. Prints the median, the 5th percentile and the smallest microseconds over
 * `trials` trials of `reps` round trips each (a large gap between them says the machine was
 * busy: the low percentile is the network's, the median the scheduler's).
 * usage: mpirun -np 2 ref_mpi_pingpong BYTES [TRIALS [REPS]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void round_trip(char *buf, int bytes, int rank)
{
    if (rank == 0) {
        MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int bytes, trials, reps, rank, size;
    char *buf;
    double us[1000];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bytes = argc > 1 ? atoi(argv[1]) : 0;
    trials = argc > 2 ? atoi(argv[2]) : 10;
    reps = argc > 3 ? atoi(argv[3]) : 100;
    if (bytes <= 0 || trials < 1 || trials > 1000 || reps < 1 || size != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 ref_mpi_pingpong BYTES [TRIALS<=1000 [REPS]]\n");
        MPI_Finalize();
        return 2;
    }
    buf = malloc((size_t)bytes);
    memset(buf, rank + 1, (size_t)bytes);
    for (int w = 0; w < 10; w++)
        round_trip(buf, bytes, rank);
    for (int t = 0; t < trials; t++) {
        double t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int k = 0; k < reps; k++)
            round_trip(buf, bytes, rank);
        us[t] = (MPI_Wtime() - t0) / reps / 2 * 1e6;
    }
    if (rank == 0) {
        qsort(us, (size_t)trials, sizeof us[0], cmp);
        printf("%.3f %.3f %.3f\n", us[trials / 2], us[trials * 5 / 100], us[0]);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}

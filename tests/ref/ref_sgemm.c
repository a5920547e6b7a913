/* Independent reference: OpenBLAS sgemm GFLOP/s on one row-major M x N x K product (2 FLOP per
 * multiply-accumulate), timed alone with CLOCK_MONOTONIC, one thread per CPU of this process's
 * affinity (as compute's host engine sets it). Prints the median of `trials` trials.
 * usage: ref_sgemm M N K [TRIALS] */
#define _GNU_SOURCE
#include <cblas.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int m, n, k, trials = argc > 4 ? atoi(argv[4]) : 9;
    float *a, *b, *c;
    double t[64];
    cpu_set_t set;

    if (argc < 4 || trials < 1 || trials > 64) {
        fprintf(stderr, "usage: ref_sgemm M N K [TRIALS<=64]\n");
        return 2;
    }
    m = atoi(argv[1]);
    n = atoi(argv[2]);
    k = atoi(argv[3]);
    a = malloc((size_t)m * k * sizeof *a);
    b = malloc((size_t)k * n * sizeof *b);
    c = malloc((size_t)m * n * sizeof *c);
    if (!a || !b || !c)
        return 1;
    for (size_t i = 0; i < (size_t)m * k; i++)
        a[i] = (float)(i % 7) * 0.125f;
    for (size_t i = 0; i < (size_t)k * n; i++)
        b[i] = (float)(i % 5) * 0.25f;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        openblas_set_num_threads(CPU_COUNT(&set));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
    for (int r = 0; r < trials; r++) {
        /* enough repetitions for about 50 ms, so the clock's resolution does not matter */
        int reps = 1;
        double t0 = now(), dt;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f,
                    c, n);
        dt = now() - t0;
        reps = dt > 0 ? (int)(0.05 / dt) + 1 : 100;
        t0 = now();
        for (int i = 0; i < reps; i++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n,
                        0.0f, c, n);
        t[r] = (now() - t0) / reps;
    }
    qsort(t, (size_t)trials, sizeof t[0], cmp);
    printf("%.3f\n", 2.0 * m * n * k / t[trials / 2] / 1e9);
    free(a);
    free(b);
    free(c);
    return 0;
}

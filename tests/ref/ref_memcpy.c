/* Independent reference: memcpy bandwidth between two page-touched buffers, timed alone with
 * CLOCK_MONOTONIC and nothing else. Prints the median GB/s (1e9 B/s) of `trials` trials.
 * usage: ref_memcpy BYTES [TRIALS] */
#define _DEFAULT_SOURCE /* POSIX 2008 and MAP_ANONYMOUS (ref_mem.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_mem.h"
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
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;
    int trials = argc > 2 ? atoi(argv[2]) : 10;
    char *src, *dst;
    double gbps[1000];
    int ok;

    if (bytes == 0 || trials < 1 || trials > 1000) {
        fprintf(stderr, "usage: ref_memcpy BYTES [TRIALS<=1000]\n");
        return 2;
    }
    src = ref_buffer(bytes); /* as fabricbench's pinned and device buffers (ref_mem.h) */
    dst = ref_buffer(bytes);
    if (!src || !dst)
        return 1;
    memset(src, 1, bytes);
    memset(dst, 2, bytes);
    for (int w = 0; w < 3; w++)
        memcpy(dst, src, bytes);
    for (int t = 0; t < trials; t++) {
        int reps = 0;
        double t0 = now(), t1;
        do {
            memcpy(dst, src, bytes);
            reps++;
            t1 = now();
        } while (t1 - t0 < 0.005);
        gbps[t] = (double)bytes * reps / (t1 - t0) / 1e9;
    }
    qsort(gbps, (size_t)trials, sizeof gbps[0], cmp);
    printf("%.4f\n", gbps[trials / 2]);
    ok = dst[bytes - 1] == 1; /* the copies really happened */
    ref_buffer_free(src, bytes);
    ref_buffer_free(dst, bytes);
    return ok ? 0 : 1;
}

/* Medians, percentiles and moments of repeated trials. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double fb_stats_quantile_sorted(const double *sorted, size_t n, double q)
{
    double pos, frac;
    size_t lo;

    if (n == 0)
        return NAN;
    pos = q * (double)(n - 1);
    lo = (size_t)floor(pos);
    if (lo + 1 >= n)
        return sorted[n - 1];
    frac = pos - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

int fb_stats_compute(const double *samples, size_t n, struct fb_stats *out)
{
    double *sorted, sum = 0.0, sq = 0.0;

    memset(out, 0, sizeof *out);
    if (n == 0 || !(sorted = malloc(n * sizeof *sorted)))
        return -1;
    memcpy(sorted, samples, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);

    for (size_t i = 0; i < n; i++)
        sum += sorted[i];
    out->mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        sq += (sorted[i] - out->mean) * (sorted[i] - out->mean);
    out->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0.0;
    out->samples = n;
    out->min = sorted[0];
    out->max = sorted[n - 1];
    out->median = fb_stats_quantile_sorted(sorted, n, 0.5);
    out->p05 = fb_stats_quantile_sorted(sorted, n, 0.05);
    out->p95 = fb_stats_quantile_sorted(sorted, n, 0.95);
    free(sorted);
    return 0;
}

int fb_stats_median_mad(const double *samples, size_t n, double *median, double *mad)
{
    double *s;

    *median = *mad = 0.0;
    if (n == 0 || !(s = malloc(n * sizeof *s)))
        return -1;
    memcpy(s, samples, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    *median = fb_stats_quantile_sorted(s, n, 0.5);
    for (size_t i = 0; i < n; i++)
        s[i] = fabs(s[i] - *median);
    qsort(s, n, sizeof *s, cmp_double);
    *mad = fb_stats_quantile_sorted(s, n, 0.5);
    free(s);
    return 0;
}

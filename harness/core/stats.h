/* Summary statistics over repeated measurements. */
#ifndef FB_STATS_H
#define FB_STATS_H

#include <stddef.h>

struct fb_stats {
    size_t samples;
    double median, p05, p95, min, max, mean, stddev;
};

/* Summarises n samples (n >= 1; the array is not modified). Percentiles interpolate linearly
 * between order statistics (the "type 7" rule of R and numpy); stddev is the sample standard
 * deviation (n - 1 in the denominator, 0 for one sample). Returns 0, or -1 when n == 0 or out of
 * memory (then *out is zeroed). */
int fb_stats_compute(const double *samples, size_t n, struct fb_stats *out);

/* The q-quantile (0 <= q <= 1) of n sorted samples, interpolated as above. */
double fb_stats_quantile_sorted(const double *sorted, size_t n, double q);

/* The median of n samples and their median absolute deviation from it (raw: times 1.4826 it
 * estimates a normal spread's sigma), the array not modified. Returns 0, or -1 when n == 0 or out
 * of memory (then both are 0). */
int fb_stats_median_mad(const double *samples, size_t n, double *median, double *mad);

#endif

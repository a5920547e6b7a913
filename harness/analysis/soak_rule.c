/* soak's rule for a degraded figure (soak_rule.h): the baseline and the limit over it. */
#include "soak_rule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

struct fb_soak_rule fb_soak_rule_defaults(void)
{
    struct fb_soak_rule r = {.baseline = 3, .tolerance = 0.10, .mads = 5.0};
    return r;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

fb_status fb_soak_baseline(const double *samples, size_t n, double *median, double *mad)
{
    double *s;

    *median = *mad = 0.0;
    if (n == 0)
        return FB_ERR_USAGE;
    if (!(s = malloc(n * sizeof *s)))
        return FB_ERR_NOMEM;
    memcpy(s, samples, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    *median = fb_stats_quantile_sorted(s, n, 0.5);
    for (size_t i = 0; i < n; i++)
        s[i] = fabs(s[i] - *median);
    qsort(s, n, sizeof *s, cmp_double);
    *mad = 1.4826 * fb_stats_quantile_sorted(s, n, 0.5);
    free(s);
    return FB_OK;
}

double fb_soak_limit_us(const struct fb_soak_rule *rule, double median, double mad)
{
    double a = rule->tolerance * median, b = rule->mads * mad;
    return median + (a > b ? a : b);
}

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

bool fb_soak_moves_nothing(bool collective, int ranks, const char *kase)
{
    return collective && ranks == 1 && strcmp(kase, "in_place") == 0;
}

fb_status fb_soak_baseline(const double *samples, size_t n, double *median, double *mad)
{
    if (n == 0) {
        *median = *mad = 0.0;
        return FB_ERR_USAGE;
    }
    if (fb_stats_median_mad(samples, n, median, mad) != 0)
        return FB_ERR_NOMEM;
    *mad *= 1.4826; /* a normal spread's sigma */
    return FB_OK;
}

double fb_soak_limit_us(const struct fb_soak_rule *rule, double median, double mad)
{
    double a = rule->tolerance * median, b = rule->mads * mad;
    return median + (a > b ? a : b);
}

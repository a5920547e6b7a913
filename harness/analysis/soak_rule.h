/* The rule by which `soak` calls a point's figure degraded: a baseline from the first
 * intervals (the median and the median absolute deviation of their trials) and a limit the
 * later intervals' medians must stay under. Pure arithmetic, shared by soak and its tests;
 * docs/soak.md states the rule. */
#ifndef FB_SOAK_RULE_H
#define FB_SOAK_RULE_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

/* The rule's knobs. */
struct fb_soak_rule {
    int baseline;     /* intervals that make the baseline (the first ones) */
    double tolerance; /* a slow-down smaller than this fraction of the baseline is never one */
    double mads;      /* ... nor one within this many MADs (scaled to a standard deviation) */
};

/* Whether a point is timed but never judged: a collective in place on one rank, whose result
 * is its input, moves nothing; its time is the call's own overhead (tens of nanoseconds on the
 * host backend), which doubles with any hiccup and says nothing of a fabric or a GPU. */
bool fb_soak_moves_nothing(bool collective, int ranks, const char *kase);

/* The defaults: 3 baseline intervals, 10%, 5 MADs. */
struct fb_soak_rule fb_soak_rule_defaults(void);

/* The baseline of n time samples (microseconds per iteration, the slowest rank per trial):
 * their median and their median absolute deviation times 1.4826 (a standard deviation for
 * normal noise). FB_ERR_NOMEM; FB_ERR_USAGE when n is 0. */
fb_status fb_soak_baseline(const double *samples, size_t n, double *median, double *mad);

/* The time above which an interval's median is degraded: median + max(tolerance * median,
 * mads * mad). */
double fb_soak_limit_us(const struct fb_soak_rule *rule, double median, double mad);

#endif

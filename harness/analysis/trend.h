/* Regression tracking over many runs (`fabricbench trend`): each headline metric as a series in
 * run order, each point a run's median with its trial band, and the steps in a series found by
 * a rule that respects each run's noise (docs/trend.md states it). Pure: no files, no output. */
#ifndef FB_TREND_H
#define FB_TREND_H

#include <stdbool.h>
#include <stddef.h>

#include "compare.h"
#include "results.h"

#define FB_TREND_THRESHOLD_DEFAULT 0.05
/* A step needs this many runs on each side of it. */
#define FB_TREND_MIN_SEGMENT 2
/* Between-run noise: the medians on either side must differ by this many standard deviations
 * of the series' run-to-run noise (from successive differences) as well as by the threshold. */
#define FB_TREND_SPREAD_FACTOR 3.0

/* One run's figure: its median and trial band; present false when the run lacks the row. */
struct fb_trend_point {
    bool present;
    double median, p05, p95;
    size_t samples;
};

/* A step: the series' level changes at run `at` (the first run of the new level). */
struct fb_trend_step {
    size_t at;
    double before, after; /* the medians of the run medians on either side */
    double ratio;         /* after / before */
    double noise;         /* the spread the change had to beat, in the metric's unit */
    bool worse;           /* in the metric's worse direction */
};

struct fb_trend_series {
    struct fb_row key;    /* the row that names the series (bench, case, ..., metric, unit) */
    enum fb_cmp_dir dir;
    struct fb_trend_point *pt; /* one per run, in run order */
    struct fb_trend_step *steps;
    size_t nsteps;
};

/* Finds the steps of one series of n points (present ones only count), by binary segmentation:
 * the split of a segment whose two sides, each of FB_TREND_MIN_SEGMENT present points or more,
 * differ the most relative to the noise, kept when the difference of their medians exceeds
 * threshold * |before|, FB_TREND_SPREAD_FACTOR times the series' run-to-run standard deviation
 * (1.4826 * the median absolute difference of successive runs / sqrt 2, which steps barely
 * move), and the larger of the two sides' median half trial band ((p95 - p05) / 2); then each
 * side is split again. Last, each step's levels are taken from the segments between its
 * neighbours and re-checked. Steps come out in run order in *steps (malloc'ed; NULL when
 * none). FB_OK or FB_ERR_NOMEM. */
fb_status fb_trend_steps(const struct fb_trend_point *pt, size_t n, enum fb_cmp_dir dir,
                         double threshold, struct fb_trend_step **steps, size_t *nsteps);

/* Builds the series of nruns runs: rows[r] holds nrows[r] rows of run r (their headline rows:
 * fb_headline_select decides which). A series per distinct key (fb_compare_key_cmp), in the
 * order keys first appear; each gets its steps. *series is malloc'ed; release with
 * fb_trend_release. FB_OK or FB_ERR_NOMEM. */
fb_status fb_trend_build(const struct fb_row *const *rows, const size_t *nrows, size_t nruns,
                         double threshold, struct fb_trend_series **series, size_t *nseries);
void fb_trend_release(struct fb_trend_series *s, size_t n);

/* Whether the latest run sits past a step in the worse direction: the last step of the series
 * is worse and no later step brought it back. */
bool fb_trend_latest_degraded(const struct fb_trend_series *s);

#endif

/* Progress lines with an estimate of the time left: which point (or launch) starts, how many
 * are left in the whole run, the time elapsed and what remains. The estimate is a pure function
 * (fb_progress_eta) so it can be tested without a clock; the lines go to the terminal only
 * (stderr), never into the run's log or results. Used by the runner (one line per point, rank
 * 0) and by `fabricbench sweep` (one line per launch). */
#ifndef FB_PROGRESS_H
#define FB_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "status.h"

enum { FB_PROGRESS_MAX_GROUPS = 64 };

/* What is known about one group of points (a benchmark's, or the launches of a sweep). */
struct fb_progress_group {
    char name[24];
    long total;     /* planned points */
    long done;      /* finished (measured, waived or failed) */
    double seconds; /* wall time the finished ones took */
};

/* Seconds the points not yet finished will take: for each group, its unfinished points times
 * the mean time of its own finished points, or, for a group none of whose points has finished
 * yet, times the mean over every finished point of the run. Negative when nothing has finished
 * (no basis for an estimate). Pure. */
double fb_progress_eta(const struct fb_progress_group *g, size_t n);

/* Writes a duration as "m:ss", or "h:mm:ss" from an hour on; "?" when negative. Pure. */
void fb_progress_hms(double seconds, char *buf, size_t len);

/* Writes the whole line without a line end, e.g.
 * "[12/40] allreduce in_place 1M x2 ranks | 0:32 elapsed, ~1:10 left"; `label` is what the
 * point is, eta_s < 0 prints "~? left". The counter's width follows `total`. Pure. */
void fb_progress_line(long index, long total, const char *label, double elapsed_s,
                      double eta_s, char *buf, size_t len);

/* A run's progress: groups, the clock, and where lines go. */
struct fb_progress {
    struct fb_progress_group groups[FB_PROGRESS_MAX_GROUPS];
    size_t ngroups;
    long total, started;
    int current;          /* the group of the point under way; -1 when none */
    double start_s;       /* when the run began (monotonic seconds) */
    double point_start_s; /* when the point under way began */
    FILE *out;            /* NULL: count, but print nothing */
    const char *prefix;   /* before the counter ("" or "launch ") */
};

/* Starts the clock. `out` may be NULL (silent: quiet mode, or ranks other than 0). */
void fb_progress_init(struct fb_progress *p, FILE *out, const char *prefix);

/* Adds `points` planned points to the group `name` (created on first use). */
fb_status fb_progress_plan(struct fb_progress *p, const char *name, long points);

/* A point of group `name` begins: ends the one under way if any, and prints its line. A point
 * beyond the plan (a plan that grew) raises the total rather than print "13/12". p may be
 * NULL (nothing happens), as in fb_progress_end. */
void fb_progress_begin(struct fb_progress *p, const char *name, const char *label);

/* The point under way has ended (measured, waived or failed); its time counts. */
void fb_progress_end(struct fb_progress *p);

#endif

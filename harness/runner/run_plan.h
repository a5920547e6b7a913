/* The whole run's plan, counted up front for the progress lines: every benchmark's points on
 * every group of its scaling curve. Plans are cheap and identical on all ranks. */
#ifndef FB_RUN_PLAN_H
#define FB_RUN_PLAN_H

#include "bench.h"
#include "progress.h"
#include "runner.h"

/* Collective (a plan may agree on a figure across ranks, and the collectives communicator is
 * created here when a benchmark needs it, as fb_runner_run would). Adds each benchmark's
 * planned points to p as one group named after it; a benchmark with fewer ranks than it needs
 * counts none (the runner waives it). */
fb_status fb_run_plan_count(struct fb_runner *r, const struct fb_bench *const *list, size_t n,
                            struct fb_progress *p);

/* What a point is, for its progress line: "allreduce in_place 1M x2 ranks", "h2d pinned_h2d
 * 64K rank 1", "p2p matrix_uni 64M 0>1", "pipeline cpu_t2 b8 x2 ranks". Pure. */
void fb_run_plan_label(const char *bench, const struct fb_case *c, int ranks, char *buf,
                       size_t len);

/* Rank 0's hook in the runner (struct fb_runner's point_begin): point c of benchmark `bench`
 * begins on a group of `ranks` ranks. p may be NULL (no progress lines). */
void fb_run_plan_begin(struct fb_progress *p, const char *bench, const struct fb_case *c,
                       int ranks);

#endif

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

/* A dry run's described device: its peak (TFLOP/s) and its memory's bandwidth (GB/s). */
struct fb_plan_device {
    double tflops, gbps;
};

/* The least time one case can take, in seconds, by the runner's own schedule (runner_measure.c):
 * warm-up, calibration, trials and, for a collective, the iterations timed one by one, with
 * each iteration no faster than its known work (busy_us), its FLOPs (flops, work_flops) at the
 * device's peak, and its bytes at the device's memory bandwidth, and every trial at least
 * --trial-ms when calibrated (calibration's cap of 100,000 iterations aside: an iteration
 * under 50 ns at the default 5 ms). Setup (allocation, uploads, a dataset made) is not counted:
 * a floor, not an estimate. Pure. */
double fb_run_plan_case_floor(const struct fb_options *o, const struct fb_case *c,
                              const struct fb_plan_device *dev);

/* A dry run: each benchmark's points and floor (seconds) over every group of its scaling curve,
 * with its plans made by `be` (a described GPU: on_cpu false, host-strict's tables beneath).
 * Benchmarks that find figures rather than time (memfit) count 0 s. Collective. */
fb_status fb_run_plan_floor(struct fb_runner *r, const struct fb_backend *be,
                            const struct fb_bench *const *list, size_t n,
                            const struct fb_plan_device *dev, long *points, double *secs);

/* What a point is, for its progress line: "allreduce in_place 1M x2 ranks", "h2d pinned_h2d
 * 64K rank 1", "p2p matrix_uni 64M 0>1", "pipeline cpu_t2 b8 x2 ranks". Pure. */
void fb_run_plan_label(const char *bench, const struct fb_case *c, int ranks, char *buf,
                       size_t len);

/* Rank 0's hook in the runner (struct fb_runner's point_begin): point c of benchmark `bench`
 * begins on a group of `ranks` ranks. p may be NULL (no progress lines). */
void fb_run_plan_begin(struct fb_progress *p, const char *bench, const struct fb_case *c,
                       int ranks);

#endif

/* The one list of benchmarks. Adding a benchmark = one file with a `const struct fb_bench`
 * and one line in registry.c. */
#ifndef FB_REGISTRY_H
#define FB_REGISTRY_H

#include "bench.h"

extern const struct fb_bench fb_bench_h2d;
extern const struct fb_bench fb_bench_allreduce;
extern const struct fb_bench fb_bench_p2p;
extern const struct fb_bench fb_bench_densenet_allreduce;
extern const struct fb_bench fb_bench_pipeline;
extern const struct fb_bench fb_bench_memfit;
extern const struct fb_bench fb_bench_compute;
extern const struct fb_bench fb_bench_step;
extern const struct fb_bench fb_bench_replay;
/* bench/collectives.c: nccl-tests' other collectives (issue 18) */
extern const struct fb_bench fb_bench_all_gather;
extern const struct fb_bench fb_bench_reduce_scatter;
extern const struct fb_bench fb_bench_alltoall;
extern const struct fb_bench fb_bench_broadcast;
extern const struct fb_bench fb_bench_reduce;

/* Every benchmark, NULL-terminated, in the default run order. */
extern const struct fb_bench *const fb_benches[];

const struct fb_bench *fb_bench_find(const char *name);

/* The largest message h2d will copy under these options (its sweep, or --sizes, and
 * --beyond-llc's size for a job whose largest last-level cache is llc_bytes): run asks before
 * it calibrates memcpy, which only rows that large are judged by. SIZE_MAX when out of memory. */
size_t fb_h2d_largest_bytes(const struct fb_options *o, unsigned long long llc_bytes);

#endif

/* Size sweeps shared by the benchmarks: min, max and step from the options, or the benchmark's
 * defaults. */
#ifndef FB_SWEEP_H
#define FB_SWEEP_H

#include <stddef.h>

#include "options.h"
#include "status.h"

struct fb_sweep {
    size_t min_bytes, max_bytes;
    long factor;
};

/* The sweep for a benchmark: options override the defaults. Returns how many sizes there are
 * (min, min*factor, ... up to max), writing them into sizes when it is not NULL. */
size_t fb_sweep_sizes(const struct fb_options *o, struct fb_sweep defaults, size_t *sizes);

/* The size --beyond-llc adds to h2d's sweep: the smallest power of two at least 2 x llc_bytes,
 * so a copy's source and destination together are 4 caches and stream from memory (32 MiB L3:
 * 64 MiB; 20 MiB: 64 MiB). 0 when llc_bytes is 0 (unknown) or the size would pass
 * SIZE_MAX / 8. */
size_t fb_sweep_beyond_llc(unsigned long long llc_bytes);

#endif

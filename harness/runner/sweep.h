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

#endif

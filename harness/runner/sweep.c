/* Geometric size sweeps. */
#include "sweep.h"

#include <stdint.h>

size_t fb_sweep_sizes(const struct fb_options *o, struct fb_sweep d, size_t *sizes)
{
    size_t lo = o->min_bytes ? o->min_bytes : d.min_bytes;
    size_t hi = o->max_bytes ? o->max_bytes : d.max_bytes;
    size_t factor = (size_t)(o->factor ? o->factor : d.factor), n = 0;

    if (o->nsizes) {
        for (size_t i = 0; sizes && i < o->nsizes; i++)
            sizes[i] = o->sizes[i];
        return o->nsizes;
    }
    if (o->min_bytes && !o->max_bytes && lo > hi)
        hi = lo; /* "--min-bytes 1G" alone measures 1G rather than nothing */
    if (o->max_bytes && !o->min_bytes && hi < lo)
        lo = hi;
    for (size_t s = lo; s <= hi; s *= factor) {
        if (sizes)
            sizes[n] = s;
        n++;
        if (s > SIZE_MAX / factor)
            break;
    }
    return n;
}

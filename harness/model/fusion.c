/* The greedy fusion plan. */
#include "fusion.h"

#include <stdbool.h>
#include <stdlib.h>

fb_status fb_fusion_plan(const struct fb_densenet *d, size_t elem_bytes, size_t threshold,
                         struct fb_bucket **out, size_t *nbuckets)
{
    size_t *el = calloc(d->ntensors ? d->ntensors : 1, sizeof *el);
    fb_status st;

    *out = NULL;
    *nbuckets = 0;
    if (!el)
        return FB_ERR_NOMEM;
    for (size_t i = 0; i < d->ntensors; i++)
        el[i] = d->tensors[i].elements;
    st = fb_fusion_plan_sizes(el, d->ntensors, elem_bytes, threshold, out, nbuckets);
    free(el);
    return st;
}

fb_status fb_fusion_plan_sizes(const size_t *elements, size_t ntensors, size_t elem_bytes,
                               size_t threshold, struct fb_bucket **out, size_t *nbuckets)
{
    struct fb_bucket *b = calloc(ntensors ? ntensors : 1, sizeof *b);
    size_t n = 0;

    *out = NULL;
    *nbuckets = 0;
    if (!b)
        return FB_ERR_NOMEM;
    for (size_t i = 0; i < ntensors; i++) {
        size_t bytes = elements[i] * elem_bytes;
        struct fb_bucket *last = n ? &b[n - 1] : NULL;
        bool fits = last && threshold != FB_FUSION_OFF &&
                    (threshold == FB_FUSION_FLAT ||
                     (last->elements * elem_bytes + bytes <= threshold));
        if (fits) {
            last->count++;
            last->elements += elements[i];
        } else {
            b[n++] = (struct fb_bucket){i, 1, elements[i]};
        }
    }
    *out = b;
    *nbuckets = n;
    return FB_OK;
}

/* The shared image set and the ring's fill: one implementation for `pipeline` and `step`. */
#include "image_ring.h"

#include <stdlib.h>
#include <string.h>

enum { IMAGES = 8 };
static const uint32_t IMAGE_SEED = 1000;

/* Distinct encoded images, reused round-robin: enough that no image stays in a core's cache
 * between two decodes, few enough that start-up (encoding them) stays short. */
static struct fb_imageset *cached_set;

fb_status fb_image_set_get(const char *dataset, const struct fb_imageset **out)
{
    fb_status st = FB_OK;
    bool png = strcmp(dataset, "chestxray") == 0;

    if (!cached_set || (cached_set->format == FB_IMAGE_PNG) != png) {
        fb_imageset_free(cached_set);
        cached_set = NULL;
        st = fb_imageset_create(dataset, IMAGES, IMAGE_SEED, &cached_set);
    }
    *out = cached_set;
    return st;
}

/* A worker's batch, image by image, stopping at the gate between images: while nobody times
 * the ring, at most the image in hand per worker is finished off the clock. */
static fb_status ring_fill(void *arg, struct fb_pipeline *p, int worker, long n, void *dst)
{
    struct fb_image_ring *r = arg;
    size_t each = fb_batch_image_bytes(&r->spec);
    fb_status st;

    for (int i = 0; i < r->spec.batch; i++) {
        if (i > 0)
            fb_pipeline_gate_wait(p);
        if ((st = fb_imageset_image(r->set, &r->spec,
                                    (uint64_t)n * (uint64_t)r->spec.batch + (uint64_t)i,
                                    r->scratch[worker], (unsigned char *)dst + (size_t)i * each)) !=
            FB_OK)
            return st;
    }
    return FB_OK;
}

void fb_image_ring_stop(struct fb_image_ring *r)
{
    if (!r)
        return;
    fb_pipeline_stop(r->pipe);
    for (int i = 0; r->scratch && i < r->threads; i++)
        free(r->scratch[i]);
    free(r->scratch);
    free(r);
}

fb_status fb_image_ring_start(const struct fb_backend *be, enum fb_mem kind, const char *dataset,
                              const struct fb_batch_spec *spec, int threads, int depth,
                              struct fb_image_ring **out)
{
    struct fb_image_ring *r = calloc(1, sizeof *r);
    struct fb_pipeline_config cfg;
    fb_status st = FB_ERR_NOMEM;

    *out = NULL;
    if (!r)
        return st;
    r->spec = *spec;
    r->threads = threads;
    if ((st = fb_image_set_get(dataset, &r->set)) != FB_OK)
        goto fail;
    st = FB_ERR_NOMEM;
    if (!(r->scratch = calloc((size_t)threads, sizeof *r->scratch)))
        goto fail;
    for (int i = 0; i < threads; i++)
        if (!(r->scratch[i] = malloc(fb_imageset_decoded_bytes(r->set))))
            goto fail;
    cfg = (struct fb_pipeline_config){be, kind, fb_batch_bytes(spec), threads, depth, ring_fill, r};
    if ((st = fb_pipeline_start(&cfg, &r->pipe)) != FB_OK)
        goto fail;
    *out = r;
    return FB_OK;
fail:
    fb_image_ring_stop(r);
    return st;
}

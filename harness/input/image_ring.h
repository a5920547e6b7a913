/* A data loader of synthetic training images: the shared encoded set (made on first use, kept
 * for the process) and an fb_pipeline ring whose workers decode and augment its images into
 * batches, image by image, stopping at the ring's gate between images. The `pipeline`
 * benchmark measures it; the `step` benchmark feeds a training step from it. */
#ifndef FB_IMAGE_RING_H
#define FB_IMAGE_RING_H

#include "backend.h"
#include "imageset.h"
#include "input_pipeline.h"

/* The encoded set of `dataset` ("chestxray": PNG, "imagenet": JPEG), encoded once and kept
 * until the process ends or another dataset is asked for (encoding costs far more than
 * decoding, and would otherwise dominate start-up). Main thread only; not owned by the caller. */
fb_status fb_image_set_get(const char *dataset, const struct fb_imageset **out);

struct fb_image_ring {
    struct fb_pipeline *pipe;
    const struct fb_imageset *set;
    struct fb_batch_spec spec;
    int threads;
    unsigned char **scratch; /* per worker: one decoded image */
};

/* Starts `threads` workers building batch n of `spec` (images n * batch + i of the set) into a
 * ring of `depth` slots of `kind` memory (FB_MEM_PINNED or FB_MEM_PAGEABLE) on `be`. Take and
 * release batches through r->pipe (input_pipeline.h). *out is NULL on failure. */
fb_status fb_image_ring_start(const struct fb_backend *be, enum fb_mem kind, const char *dataset,
                              const struct fb_batch_spec *spec, int threads, int depth,
                              struct fb_image_ring **out);

/* Stops the workers and frees the ring. Accepts NULL. */
void fb_image_ring_stop(struct fb_image_ring *r);

#endif

/* A synthetic training set, encoded once: `count` distinct images like ChestX-ray14's (1024x1024
 * gray PNG) or ImageNet's (500x375 RGB JPEG), reused round-robin so start-up stays short while
 * every image still pays a real decode. Builds batches (decode, augment) and checks them
 * against the analytic images. */
#ifndef FB_IMAGESET_H
#define FB_IMAGESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "augment.h"
#include "image_codec.h"
#include "status.h"

struct fb_imageset {
    enum fb_image_format format;
    struct fb_image_info info; /* every image's shape */
    int count;
    uint32_t seed;             /* image k is fb_synth_pixel(seed + k, ...) */
    unsigned char **data;      /* count encoded images */
    size_t *len;
    size_t encoded_bytes;      /* all of them */
};

/* What a batch holds and how its images are transformed. */
struct fb_batch_spec {
    int batch;          /* images per batch */
    int res;            /* output side */
    bool wire_float;    /* float32 normalized (else uint8) */
    uint32_t aug_seed;  /* crop and flip seed */
};

/* Encodes the set: dataset "chestxray" or "imagenet". FB_ERR_USAGE for another name. */
fb_status fb_imageset_create(const char *dataset, int count, uint32_t seed,
                             struct fb_imageset **out);
void fb_imageset_free(struct fb_imageset *s); /* accepts NULL */

/* Bytes of one decoded image (the decode scratch a worker needs). */
size_t fb_imageset_decoded_bytes(const struct fb_imageset *s);

/* Bytes of one output image, and of a batch: 3 * res * res elements of uint8 or float32. */
size_t fb_batch_image_bytes(const struct fb_batch_spec *b);
size_t fb_batch_bytes(const struct fb_batch_spec *b);

/* Image number seq of the run is encoded image seq % count. */
int fb_imageset_index(const struct fb_imageset *s, uint64_t seq);

/* Builds image number seq of the run into dst (one output image), decoding into scratch. */
fb_status fb_imageset_image(const struct fb_imageset *s, const struct fb_batch_spec *b,
                            uint64_t seq, unsigned char *scratch, void *dst);

/* Builds batch n into dst: images n * batch + i, decoded into scratch (decoded_bytes) and
 * augmented. Returns the decoder's status (FB_ERR_IO for corrupt data). Thread-safe. */
fb_status fb_imageset_batch(const struct fb_imageset *s, const struct fb_batch_spec *b, long n,
                            unsigned char *scratch, void *dst);

/* Checks output image seq (img: 3 planes as the spec says) against the analytic source through
 * the reference transform. PNG is lossless: every value within 1 LSB (uint8), or within 1 LSB's
 * worth after normalization plus 1e-3 (float). JPEG is lossy: the mean absolute error in uint8
 * units must stay under FB_JPEG_MAE_BOUND. Returns true when the image is right; *err gets the
 * worst error (PNG) or the mean error (JPEG), in uint8 units. */
bool fb_imageset_check(const struct fb_imageset *s, const struct fb_batch_spec *b, uint64_t seq,
                       const void *img, double *err);

/* Mean absolute error that quality-90 JPEG stays under on these images, in uint8 levels: the
 * noise and the colour subsampling cost about 3 before the resize (test_image_codec prints it),
 * a wrong crop or flip far more. */
#define FB_JPEG_MAE_BOUND 5.0

#endif

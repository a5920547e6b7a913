/* The synthetic training set, its batches and their check. */
#include "imageset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void fb_imageset_free(struct fb_imageset *s)
{
    if (!s)
        return;
    for (int k = 0; s->data && k < s->count; k++)
        free(s->data[k]);
    free(s->data);
    free(s->len);
    free(s);
}

fb_status fb_imageset_create(const char *dataset, int count, uint32_t seed,
                             struct fb_imageset **out)
{
    struct fb_imageset *s;
    unsigned char *pixels = NULL;
    fb_status st = FB_ERR_NOMEM;

    *out = NULL;
    if (count < 1)
        return FB_ERR_USAGE;
    if (!(s = calloc(1, sizeof *s)))
        return FB_ERR_NOMEM;
    s->count = count;
    s->seed = seed;
    if (strcmp(dataset, "chestxray") == 0) {
        s->format = FB_IMAGE_PNG;
        s->info = (struct fb_image_info){1024, 1024, 1};
    } else if (strcmp(dataset, "imagenet") == 0) {
        /* the most common ImageNet shape: 500 x 375 landscape */
        s->format = FB_IMAGE_JPEG;
        s->info = (struct fb_image_info){500, 375, 3};
    } else {
        st = FB_ERR_USAGE;
        goto fail;
    }
    if (!(s->data = calloc((size_t)count, sizeof *s->data)) ||
        !(s->len = calloc((size_t)count, sizeof *s->len)) ||
        !(pixels = malloc(fb_imageset_decoded_bytes(s))))
        goto fail;
    for (int k = 0; k < count; k++) {
        fb_synth_image(seed + (uint32_t)k, &s->info, pixels);
        if ((st = fb_image_encode(s->format, &s->info, pixels, &s->data[k], &s->len[k])) != FB_OK)
            goto fail;
        s->encoded_bytes += s->len[k];
    }
    free(pixels);
    *out = s;
    return FB_OK;
fail:
    free(pixels);
    fb_imageset_free(s);
    return st;
}

size_t fb_imageset_decoded_bytes(const struct fb_imageset *s)
{
    return (size_t)s->info.width * (size_t)s->info.height * (size_t)s->info.channels;
}

size_t fb_batch_image_bytes(const struct fb_batch_spec *b)
{
    return 3 * (size_t)b->res * (size_t)b->res * (b->wire_float ? sizeof(float) : 1);
}

size_t fb_batch_bytes(const struct fb_batch_spec *b)
{
    return (size_t)b->batch * fb_batch_image_bytes(b);
}

int fb_imageset_index(const struct fb_imageset *s, uint64_t seq)
{
    return (int)(seq % (uint64_t)s->count);
}

fb_status fb_imageset_image(const struct fb_imageset *s, const struct fb_batch_spec *b,
                            uint64_t seq, unsigned char *scratch, void *dst)
{
    int k = fb_imageset_index(s, seq);
    struct fb_image_info info;
    struct fb_augment a;
    fb_status st;

    if ((st = fb_image_decode(s->data[k], s->len[k], scratch, fb_imageset_decoded_bytes(s),
                              &info)) != FB_OK)
        return st;
    fb_augment_plan(info.width, info.height, info.channels, b->res, b->aug_seed, seq, &a);
    if (b->wire_float)
        fb_augment_f32(&a, scratch, dst);
    else
        fb_augment_u8(&a, scratch, dst);
    return FB_OK;
}

fb_status fb_imageset_batch(const struct fb_imageset *s, const struct fb_batch_spec *b, long n,
                            unsigned char *scratch, void *dst)
{
    size_t each = fb_batch_image_bytes(b);
    fb_status st;

    for (int i = 0; i < b->batch; i++)
        if ((st = fb_imageset_image(s, b, (uint64_t)n * (uint64_t)b->batch + (uint64_t)i, scratch,
                                    (unsigned char *)dst + (size_t)i * each)) != FB_OK)
            return st;
    return FB_OK;
}

struct synth_src {
    uint32_t seed;
    struct fb_image_info info;
};

static unsigned char synth_at(const void *ctx, int x, int y, int c)
{
    const struct synth_src *src = ctx;
    return fb_synth_pixel(src->seed, src->info.width, src->info.height, src->info.channels, x, y,
                          c);
}

bool fb_imageset_check(const struct fb_imageset *s, const struct fb_batch_spec *b, uint64_t seq,
                       const void *img, double *err)
{
    struct synth_src src = {s->seed + (uint32_t)fb_imageset_index(s, seq), s->info};
    struct fb_augment a;
    size_t plane = (size_t)b->res * (size_t)b->res, n = 0, bad = 0;
    double worst = 0.0, sum = 0.0;
    const unsigned char *u8 = img;
    const float *f32 = img;

    fb_augment_plan(s->info.width, s->info.height, s->info.channels, b->res, b->aug_seed, seq, &a);
    for (int c = 0; c < 3; c++) {
        /* one level (the rounding to uint8), plus 1e-3 of a normalized float in uint8 units */
        double tol = 1.0 + (b->wire_float ? 1e-3 * 255.0 / fb_augment_inv_std[c] : 0.0);
        for (int y = 0; y < b->res; y++)
            for (int x = 0; x < b->res; x++) {
                size_t i = (size_t)c * plane + (size_t)y * (size_t)b->res + (size_t)x;
                double want = fb_augment_expect(&a, c, y, x, synth_at, &src), got;
                got = b->wire_float ? (f32[i] / fb_augment_inv_std[c] + fb_augment_mean[c]) * 255.0
                                    : (double)u8[i];
                double e = fabs(got - want);
                worst = e > worst ? e : worst;
                bad += !(e <= tol); /* NaN is wrong */
                sum += e;
                n++;
            }
    }
    if (s->format == FB_IMAGE_PNG) {
        *err = worst;
        return bad == 0;
    }
    *err = sum / (double)n;
    return *err <= FB_JPEG_MAE_BOUND;
}

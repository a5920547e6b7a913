/* The training-time transform of one decoded image, as torchvision's ImageNet recipe does it
 * (Resize(256), RandomCrop(224), RandomHorizontalFlip, ToTensor, Normalize), plus gray expanded
 * to 3 channels as CheXNet does: bilinear resize of the short side to resolution * 256 / 224,
 * a crop of resolution x resolution, a flip, and 3 planes (NCHW) out, as uint8 or as normalized
 * float32. The crop and flip come from (seed, sequence number), so anyone can recompute them. */
#ifndef FB_AUGMENT_H
#define FB_AUGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { FB_AUGMENT_MAX_RES = 4096, FB_AUGMENT_MAX_SPAN = 3 * 8192 };

/* ImageNet's per-channel mean and 1 / standard deviation (torchvision's Normalize). */
extern const float fb_augment_mean[3];
extern const float fb_augment_inv_std[3];

/* What happens to one image. */
struct fb_augment {
    int src_w, src_h, channels; /* the decoded image (channels 1 or 3, interleaved) */
    int res;                    /* the output side */
    int rw, rh;                 /* the resized image */
    int ox, oy;                 /* the crop's top-left corner in the resized image */
    bool flip;                  /* mirror left-right */
};

/* Plans the transform of image number `seq` of a run seeded `seed`: resized size from the
 * source size, crop offset and flip from a hash of (seed, seq). res in [1, FB_AUGMENT_MAX_RES]. */
void fb_augment_plan(int src_w, int src_h, int channels, int res, uint32_t seed, uint64_t seq,
                     struct fb_augment *a);

/* Applies it: src is the decoded image, dst 3 planes of res x res (3 * res * res bytes).
 * Only the resized pixels the crop keeps are computed (bilinear, 11-bit fixed-point weights,
 * rounded to nearest). */
void fb_augment_u8(const struct fb_augment *a, const unsigned char *src, unsigned char *dst);

/* The same, normalized: dst[c] = fb_augment_normalize(uint8 result, c) (3 * res * res floats). */
void fb_augment_f32(const struct fb_augment *a, const unsigned char *src, float *dst);

/* ToTensor then Normalize of one uint8 value of channel c, the formula the device uses too. */
static inline float fb_augment_normalize(unsigned char v, int c)
{
    return ((float)v * (1.0f / 255.0f) - fb_augment_mean[c]) * fb_augment_inv_std[c];
}

/* The straightforward reference: the exact (unrounded) value of output pixel (c, y, x), sampling
 * the source through pixel(ctx, x, y, c) in double precision, one output pixel at a time. */
double fb_augment_expect(const struct fb_augment *a, int c, int y, int x,
                         unsigned char (*pixel)(const void *ctx, int x, int y, int c),
                         const void *ctx);

#endif

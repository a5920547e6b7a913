/* Synthetic training images and their codecs: a deterministic analytic image (smooth shapes plus
 * hashed noise, so PNG compresses it about as much as a real chest X-ray), encoded and decoded in
 * memory with libpng (8-bit gray) and libjpeg-turbo (8-bit RGB). The pipeline benchmark pays a
 * real decode per image; its checks recompute any source pixel from fb_synth_pixel. */
#ifndef FB_IMAGE_CODEC_H
#define FB_IMAGE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

enum fb_image_format {
    FB_IMAGE_PNG,  /* 8-bit grayscale PNG (ChestX-ray14's format) */
    FB_IMAGE_JPEG, /* 8-bit RGB baseline JPEG, quality 90 (ImageNet's format) */
};

/* A decoded image's shape: pixels are row-major, channels interleaved (RGBRGB...). */
struct fb_image_info {
    int width, height;
    int channels; /* 1 (gray) or 3 (RGB) */
};

/* The synthetic image `seed` of size width x height with `channels` channels: the exact value of
 * pixel (x, y), channel c. Pure integer arithmetic, so every caller agrees bit for bit. */
unsigned char fb_synth_pixel(uint32_t seed, int width, int height, int channels, int x, int y,
                             int c);

/* Writes the whole synthetic image into pixels[height * width * channels] (interleaved). */
void fb_synth_image(uint32_t seed, const struct fb_image_info *info, unsigned char *pixels);

/* Encodes interleaved pixels (gray for PNG, RGB for JPEG; info->channels must match) into a
 * malloc'ed buffer *out of *len bytes, which the caller frees. FB_ERR_USAGE for a shape the
 * format does not take, FB_ERR_NOMEM, FB_ERR_IO when the library refuses. */
fb_status fb_image_encode(enum fb_image_format fmt, const struct fb_image_info *info,
                          const unsigned char *pixels, unsigned char **out, size_t *len);

/* Decodes PNG or JPEG data (told apart by their signatures) into the caller's pixels[cap]:
 * 8-bit, interleaved, gray stays gray and colour comes out RGB. Fills *info. FB_ERR_IO for data
 * that is not a well-formed image of either format (never a crash: library errors are caught),
 * FB_ERR_USAGE when cap is too small for the image. Thread-safe: no shared state. */
fb_status fb_image_decode(const unsigned char *data, size_t len, unsigned char *pixels,
                          size_t cap, struct fb_image_info *info);

#endif

/* Independent decode timing: the same encoded bytes as the pipeline benchmark's set (made by
 * fabricbench's encoder), decoded here through other entry points (libpng's simplified
 * png_image API; libjpeg's plain loop with its own setup) and timed with a plain loop, to show
 * that the benchmark's `decode` figure is the codec's own rate.
 * Usage: ref_decode chestxray|imagenet [seconds] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include <jpeglib.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "imageset.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int png_once(const unsigned char *data, size_t len, unsigned char *out)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&img, data, len))
        return -1;
    img.format = PNG_FORMAT_GRAY;
    if (!png_image_finish_read(&img, NULL, out, 0, NULL))
        return -1;
    return 0;
}

/* Well-formed input only (our own encoder's), so libjpeg's default error exit is enough. */
static int jpeg_once(const unsigned char *data, size_t len, unsigned char *out)
{
    struct jpeg_decompress_struct c;
    struct jpeg_error_mgr err;

    c.err = jpeg_std_error(&err);
    jpeg_create_decompress(&c);
    jpeg_mem_src(&c, data, (unsigned long)len);
    jpeg_read_header(&c, TRUE);
    jpeg_start_decompress(&c);
    while (c.output_scanline < c.output_height) {
        JSAMPROW row = out + (size_t)c.output_scanline * c.output_width * c.output_components;
        jpeg_read_scanlines(&c, &row, 1);
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dataset = argc > 1 ? argv[1] : "chestxray";
    double seconds = argc > 2 ? atof(argv[2]) : 2.0, t0, t;
    struct fb_imageset *s;
    unsigned char *out;
    long n = 0;

    if (fb_imageset_create(dataset, 8, 1000, &s) != FB_OK) {
        fprintf(stderr, "ref_decode: cannot make the '%s' set\n", dataset);
        return 2;
    }
    if (!(out = malloc(fb_imageset_decoded_bytes(s))))
        return 1;
    t0 = now_s();
    do {
        int k = (int)(n % s->count);
        if ((s->format == FB_IMAGE_PNG ? png_once(s->data[k], s->len[k], out)
                                       : jpeg_once(s->data[k], s->len[k], out)) != 0) {
            fprintf(stderr, "ref_decode: image %d did not decode\n", k);
            return 1;
        }
        n++;
        t = now_s() - t0;
    } while (t < seconds);
    printf("%s: %ld images in %.3f s: %.1f images/s on one thread (%.0f bytes encoded on "
           "average)\n", dataset, n, t, (double)n / t, (double)s->encoded_bytes / s->count);
    free(out);
    fb_imageset_free(s);
    return 0;
}

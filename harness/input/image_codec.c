/* The synthetic images and their PNG (libpng) and JPEG (libjpeg-turbo) codecs, in memory.
 * Both libraries report errors by longjmp; each entry point sets its jump target before the
 * first library call and frees what it took on both paths. Messages are kept off stderr: a
 * malformed image is an answer (FB_ERR_IO), not a diagnostic. */
#include "image_codec.h"

/* jpeglib.h needs FILE declared before it */
#include <stdio.h>

#include <jpeglib.h>
#include <png.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { JPEG_QUALITY = 90, NOISE_RGB = 49 };

/* A murmur-style finalizer over the seed, position and channel: the noise that keeps the
 * synthetic image from compressing better than a real radiograph. */
static uint32_t synth_hash(uint32_t seed, uint32_t x, uint32_t y, uint32_t c)
{
    uint32_t h = seed * 0x9e3779b9u ^ x * 0x85ebca6bu ^ y * 0xc2b2ae35u ^ c * 0x27d4eb2fu;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    h *= 0x297a2d39u;
    h ^= h >> 15;
    return h;
}

unsigned char fb_synth_pixel(uint32_t seed, int width, int height, int channels, int x, int y,
                             int c)
{
    /* Position in 1/1024ths of the image, so every size shows the same picture. */
    int u = (int)((int64_t)x * 1024 / width), v = (int)((int64_t)y * 1024 / height);
    int cx = 512 + (int)(seed % 97u) - 48, cy = 540 + (int)(seed / 97u % 61u) - 30;
    int64_t du = u - cx, dv = v - cy, r2 = du * du * 4 / 3 + dv * dv;
    int val, t;

    if (r2 < 400 * 400) {
        /* a body: brighter toward its middle, crossed by rib-like bands */
        val = 90 + (int)((400 * 400 - r2) / 1600);
        t = (v + (int)(seed % 31u)) % 64;
        val += (t < 32 ? t : 63 - t) - 16;
    } else {
        val = 30 + v / 32;
    }
    if (channels == 3)
        val += (c - 1) * (u - 512) / 16; /* a tint that differs per channel */
    if (channels == 1) {
        /* +-4 levels of noise: PNG keeps about half the raw bytes, as with ChestX-ray14 */
        val += (int)(synth_hash(seed, (uint32_t)x, (uint32_t)y, 0) % 9u) - 4;
    } else {
        /* photo-like texture for JPEG: strong luminance noise (the same in every channel, so
         * 4:2:0 chroma subsampling does not smear it) that keeps quality-90 files near the
         * size of real ImageNet ones, plus a little per channel */
        val += (int)(synth_hash(seed, (uint32_t)x, (uint32_t)y, 0) % NOISE_RGB) - NOISE_RGB / 2;
        val += (int)(synth_hash(seed, (uint32_t)x, (uint32_t)y, (uint32_t)c + 1) % 5u) - 2;
    }
    return (unsigned char)(val < 0 ? 0 : val > 255 ? 255 : val);
}

void fb_synth_image(uint32_t seed, const struct fb_image_info *info, unsigned char *pixels)
{
    size_t k = 0;

    for (int y = 0; y < info->height; y++)
        for (int x = 0; x < info->width; x++)
            for (int c = 0; c < info->channels; c++)
                pixels[k++] = fb_synth_pixel(seed, info->width, info->height, info->channels, x,
                                             y, c);
}

/* ---- PNG ---- */

struct mem_out {
    unsigned char *data;
    size_t len, cap;
};

struct mem_in {
    const unsigned char *data;
    size_t len, pos;
};

static void png_fail(png_structp png, png_const_charp msg)
{
    (void)msg;
    png_longjmp(png, 1);
}

static void png_quiet(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static void png_write_mem(png_structp png, png_bytep bytes, size_t n)
{
    struct mem_out *o = png_get_io_ptr(png);

    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 65536;
        unsigned char *grown;
        while (cap < o->len + n)
            cap *= 2;
        if (!(grown = realloc(o->data, cap)))
            png_error(png, "out of memory");
        o->data = grown;
        o->cap = cap;
    }
    memcpy(o->data + o->len, bytes, n);
    o->len += n;
}

static void png_flush_mem(png_structp png) { (void)png; }

static void png_read_mem(png_structp png, png_bytep out, size_t n)
{
    struct mem_in *in = png_get_io_ptr(png);

    if (n > in->len - in->pos)
        png_error(png, "truncated");
    memcpy(out, in->data + in->pos, n);
    in->pos += n;
}

static fb_status png_encode(const struct fb_image_info *info, const unsigned char *pixels,
                            unsigned char **out, size_t *len)
{
    png_structp png;
    png_infop pinfo = NULL;
    struct mem_out o = {NULL, 0, 0};
    size_t stride = (size_t)info->width * (size_t)info->channels;
    volatile fb_status st = FB_ERR_NOMEM;

    if (!(png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_fail, png_quiet)))
        return FB_ERR_NOMEM;
    if (!(pinfo = png_create_info_struct(png)))
        goto out;
    st = FB_ERR_IO;
    if (setjmp(png_jmpbuf(png)))
        goto out;
    png_set_write_fn(png, &o, png_write_mem, png_flush_mem);
    png_set_IHDR(png, pinfo, (png_uint_32)info->width, (png_uint_32)info->height, 8,
                 info->channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, pinfo);
    for (int y = 0; y < info->height; y++)
        png_write_row(png, pixels + (size_t)y * stride);
    png_write_end(png, NULL);
    st = FB_OK;
out:
    png_destroy_write_struct(&png, &pinfo);
    if (st == FB_OK) {
        *out = o.data;
        *len = o.len;
    } else {
        free(o.data);
    }
    return st;
}

static fb_status png_decode(const unsigned char *data, size_t len, unsigned char *pixels,
                            size_t cap, struct fb_image_info *info)
{
    png_structp png;
    png_infop pinfo = NULL;
    struct mem_in in = {data, len, 0};
    volatile fb_status st = FB_ERR_NOMEM;
    png_uint_32 w, h;
    int depth, color, interlace, passes;
    size_t stride;

    if (!(png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, png_fail, png_quiet)))
        return FB_ERR_NOMEM;
    if (!(pinfo = png_create_info_struct(png)))
        goto out;
    st = FB_ERR_IO;
    if (setjmp(png_jmpbuf(png)))
        goto out;
    png_set_read_fn(png, &in, png_read_mem);
    png_read_info(png, pinfo);
    png_get_IHDR(png, pinfo, &w, &h, &depth, &color, &interlace, NULL, NULL);
    /* Whatever the file holds, hand out 8-bit gray or 8-bit RGB. */
    png_set_strip_16(png);
    png_set_strip_alpha(png);
    png_set_packing(png);
    if (color == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    passes = png_set_interlace_handling(png);
    png_read_update_info(png, pinfo);
    info->width = (int)w;
    info->height = (int)h;
    info->channels = (int)png_get_channels(png, pinfo);
    stride = (size_t)w * (size_t)info->channels;
    if (info->channels != 1 && info->channels != 3) {
        st = FB_ERR_IO;
        goto out;
    }
    if (stride * h > cap) {
        st = FB_ERR_USAGE;
        goto out;
    }
    for (int p = 0; p < passes; p++)
        for (png_uint_32 y = 0; y < h; y++)
            png_read_row(png, pixels + (size_t)y * stride, NULL);
    png_read_end(png, NULL);
    st = FB_OK;
out:
    png_destroy_read_struct(&png, &pinfo, NULL);
    return st;
}

/* ---- JPEG ---- */

struct jpeg_fail {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
};

static void jpeg_fail_exit(j_common_ptr cinfo)
{
    struct jpeg_fail *f = (struct jpeg_fail *)cinfo->err;
    longjmp(f->jump, 1);
}

/* Warnings still count in mgr.num_warnings (a truncated file is one); they are not printed. */
static void jpeg_quiet(j_common_ptr cinfo) { (void)cinfo; }

static fb_status jpeg_encode(const struct fb_image_info *info, const unsigned char *pixels,
                             unsigned char **out, size_t *len)
{
    struct jpeg_compress_struct cinfo;
    struct jpeg_fail fail;
    unsigned char *buf = NULL;
    unsigned long size = 0;
    size_t stride = (size_t)info->width * (size_t)info->channels;
    volatile fb_status st = FB_ERR_IO;

    cinfo.err = jpeg_std_error(&fail.mgr);
    fail.mgr.error_exit = jpeg_fail_exit;
    fail.mgr.output_message = jpeg_quiet;
    if (setjmp(fail.jump))
        goto out;
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &buf, &size);
    cinfo.image_width = (JDIMENSION)info->width;
    cinfo.image_height = (JDIMENSION)info->height;
    cinfo.input_components = info->channels;
    cinfo.in_color_space = info->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, JPEG_QUALITY, TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * stride);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    st = FB_OK;
out:
    jpeg_destroy_compress(&cinfo);
    if (st != FB_OK) {
        free(buf);
        return st;
    }
    /* Hand out our own malloc'ed copy: the library's buffer is sized by its own growth. */
    if (!(*out = malloc(size))) {
        free(buf);
        return FB_ERR_NOMEM;
    }
    memcpy(*out, buf, size);
    *len = size;
    free(buf);
    return FB_OK;
}

static fb_status jpeg_decode(const unsigned char *data, size_t len, unsigned char *pixels,
                             size_t cap, struct fb_image_info *info)
{
    struct jpeg_decompress_struct cinfo;
    struct jpeg_fail fail;
    size_t stride;
    volatile fb_status st = FB_ERR_IO;

    cinfo.err = jpeg_std_error(&fail.mgr);
    fail.mgr.error_exit = jpeg_fail_exit;
    fail.mgr.output_message = jpeg_quiet;
    if (setjmp(fail.jump))
        goto out;
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)len);
    jpeg_read_header(&cinfo, TRUE);
    cinfo.out_color_space = cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&cinfo);
    info->width = (int)cinfo.output_width;
    info->height = (int)cinfo.output_height;
    info->channels = cinfo.output_components;
    stride = (size_t)info->width * (size_t)info->channels;
    if (stride * cinfo.output_height > cap) {
        st = FB_ERR_USAGE;
        goto out;
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = pixels + (size_t)cinfo.output_scanline * stride;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    /* libjpeg pads a truncated file with gray and only warns: that is corrupt data here. */
    st = fail.mgr.num_warnings ? FB_ERR_IO : FB_OK;
out:
    jpeg_destroy_decompress(&cinfo);
    return st;
}

fb_status fb_image_encode(enum fb_image_format fmt, const struct fb_image_info *info,
                          const unsigned char *pixels, unsigned char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (info->width <= 0 || info->height <= 0 || (info->channels != 1 && info->channels != 3))
        return FB_ERR_USAGE;
    return fmt == FB_IMAGE_PNG ? png_encode(info, pixels, out, len)
                               : jpeg_encode(info, pixels, out, len);
}

fb_status fb_image_decode(const unsigned char *data, size_t len, unsigned char *pixels,
                          size_t cap, struct fb_image_info *info)
{
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    memset(info, 0, sizeof *info);
    if (len >= 8 && memcmp(data, png_sig, 8) == 0)
        return png_decode(data, len, pixels, cap, info);
    if (len >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff)
        return jpeg_decode(data, len, pixels, cap, info);
    return FB_ERR_IO;
}

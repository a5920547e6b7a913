/* Resize, crop, flip and channel expansion of one image, and its straightforward reference.
 * The fast path computes only the res x res resized pixels the crop keeps (the usual fusion of
 * Resize and RandomCrop: the rest of the resized image would be thrown away), with column
 * tables computed once per image and fixed-point weights. */
#include "augment.h"

#include <math.h>
#include <string.h>

const float fb_augment_mean[3] = {0.485f, 0.456f, 0.406f};
const float fb_augment_inv_std[3] = {1.0f / 0.229f, 1.0f / 0.224f, 1.0f / 0.225f};

enum { WBITS = 11, W = 1 << WBITS };

static uint64_t splitmix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void fb_augment_plan(int src_w, int src_h, int channels, int res, uint32_t seed, uint64_t seq,
                     struct fb_augment *a)
{
    /* torchvision's Resize(int): the short side becomes `side`, the long one keeps the ratio
     * (truncated). 256 for 224, as in the ImageNet recipe. */
    int side = (int)((long)res * 256 / 224);
    uint64_t r = splitmix64(((uint64_t)seed << 32) ^ seq);

    memset(a, 0, sizeof *a);
    a->src_w = src_w;
    a->src_h = src_h;
    a->channels = channels;
    a->res = res;
    if (src_w <= src_h) {
        a->rw = side;
        a->rh = (int)((long)side * src_h / src_w);
    } else {
        a->rh = side;
        a->rw = (int)((long)side * src_w / src_h);
    }
    a->ox = (int)((r & 0xffffu) % (uint64_t)(a->rw - res + 1));
    a->oy = (int)(((r >> 16) & 0xffffu) % (uint64_t)(a->rh - res + 1));
    a->flip = (r >> 32) & 1u;
}

/* torchvision's bilinear without antialiasing (align_corners=False): output pixel d samples the
 * source at (d + 0.5) * in / out - 0.5, clamped at 0, between floor and the next pixel. */
static void sample_at(int d, int in, int out, int *i0, int *i1, double *frac)
{
    double s = ((double)d + 0.5) * (double)in / (double)out - 0.5;
    int i;

    if (s < 0.0)
        s = 0.0;
    i = (int)s;
    if (i > in - 1)
        i = in - 1;
    *i0 = i;
    *i1 = i + 1 < in ? i + 1 : in - 1;
    *frac = s - (double)i;
}

/* One output row of channel c (res bytes) from the source rows the crop's row y needs. */
static void augment_row(const struct fb_augment *a, const unsigned char *src, int y, int c,
                        const int *x0, const int *x1, const uint32_t *wx, unsigned char *out)
{
    int y0, y1;
    double fy;
    size_t stride = (size_t)a->src_w * (size_t)a->channels;
    const unsigned char *r0, *r1;
    uint32_t wy;

    sample_at(a->oy + y, a->src_h, a->rh, &y0, &y1, &fy);
    wy = (uint32_t)lround(fy * W);
    r0 = src + (size_t)y0 * stride + c;
    r1 = src + (size_t)y1 * stride + c;
    for (int x = 0; x < a->res; x++) {
        uint32_t top = r0[x0[x]] * (W - wx[x]) + r0[x1[x]] * wx[x];
        uint32_t bot = r1[x0[x]] * (W - wx[x]) + r1[x1[x]] * wx[x];
        out[x] = (unsigned char)((top * (W - wy) + bot * wy + (1u << (2 * WBITS - 1))) >>
                                 (2 * WBITS));
    }
}

/* One output row of every channel, separably: first the vertical mix of the two source rows,
 * over the span of columns the crop reads (contiguous bytes: the compiler vectorizes it), then
 * the horizontal mix of each output column from that row. Both weights are 11-bit fixed point
 * and the sum is rounded once, so the result is bit for bit the order-free bilinear value
 * sum(wy * wx * p) / 2^22 that augment_row computes. tmp holds the span's mixed values. */
/* The vertical mix of two source rows over n bytes. restrict: tmp never overlaps the rows,
 * which is what lets the compiler vectorize it. */
static void mix_rows(const unsigned char *restrict r0, const unsigned char *restrict r1,
                     uint32_t vy, uint32_t wy, int n, uint32_t *restrict tmp)
{
    /* 16-bit products summed into 32 bits: the shape of SSE2's pmaddwd, which x86-64's
     * baseline has (a 32-bit multiply needs SSE4.1) */
    int16_t v = (int16_t)vy, w = (int16_t)wy;
    for (int i = 0; i < n; i++)
        tmp[i] = (uint32_t)((int32_t)(int16_t)r0[i] * v + (int32_t)(int16_t)r1[i] * w);
}

static void augment_row_separable(const struct fb_augment *a, const unsigned char *src, int y,
                                  const int *x0, const int *x1, const uint32_t *wx, int lo,
                                  int hi, uint32_t *tmp, unsigned char *out, size_t plane)
{
    int y0, y1, ch = a->channels;
    double fy;
    size_t stride = (size_t)a->src_w * (size_t)ch;
    uint32_t wy, round = 1u << (2 * WBITS - 1);
    const uint32_t *t = tmp - lo;

    if (hi - lo + ch > FB_AUGMENT_MAX_SPAN) { /* a source wider than tmp: channel by channel */
        for (int c = 0; c < ch; c++)
            augment_row(a, src, y, c, x0, x1, wx, out + (size_t)c * plane);
        return;
    }
    sample_at(a->oy + y, a->src_h, a->rh, &y0, &y1, &fy);
    wy = (uint32_t)lround(fy * W);
    mix_rows(src + (size_t)y0 * stride + lo, src + (size_t)y1 * stride + lo, W - wy, wy, hi - lo,
             tmp);
    /* x1 is x0's right neighbour except where the last source column is clamped onto itself:
     * a copy of that pixel past the span makes "the next pixel" right everywhere */
    for (int c = 0; c < ch; c++)
        tmp[hi - lo + c] = tmp[hi - lo - ch + c];
    if (ch == 3) {
        unsigned char *o0 = out, *o1 = out + plane, *o2 = out + 2 * plane;
        for (int x = 0; x < a->res; x++) { /* one table read for the three channels */
            const uint32_t *p = t + x0[x];
            uint32_t w1 = wx[x], w0 = W - w1;
            o0[x] = (unsigned char)((p[0] * w0 + p[3] * w1 + round) >> (2 * WBITS));
            o1[x] = (unsigned char)((p[1] * w0 + p[4] * w1 + round) >> (2 * WBITS));
            o2[x] = (unsigned char)((p[2] * w0 + p[5] * w1 + round) >> (2 * WBITS));
        }
        return;
    }
    for (int x = 0; x < a->res; x++) {
        const uint32_t *p = t + x0[x];
        out[x] = (unsigned char)((p[0] * (W - wx[x]) + p[1] * wx[x] + round) >> (2 * WBITS));
    }
}

/* The bytes [lo, hi) of a source row that the crop's columns read (channel 0 offsets). */
static void column_span(const struct fb_augment *a, const int *x0, const int *x1, int *lo, int *hi)
{
    *lo = x0[0] < x0[a->res - 1] ? x0[0] : x0[a->res - 1];
    *hi = (x1[0] > x1[a->res - 1] ? x1[0] : x1[a->res - 1]) + a->channels;
}

/* Column tables: for output column x, the two source columns (as byte offsets of channel 0 in
 * an interleaved row) and the weight of the second. The flip is folded in here. */
static void column_tables(const struct fb_augment *a, int *x0, int *x1, uint32_t *wx)
{
    for (int x = 0; x < a->res; x++) {
        int rx = a->ox + (a->flip ? a->res - 1 - x : x), i0, i1;
        double fx;
        sample_at(rx, a->src_w, a->rw, &i0, &i1, &fx);
        x0[x] = i0 * a->channels;
        x1[x] = i1 * a->channels;
        wx[x] = (uint32_t)lround(fx * W);
    }
}

void fb_augment_u8(const struct fb_augment *a, const unsigned char *src, unsigned char *dst)
{
    int x0[FB_AUGMENT_MAX_RES], x1[FB_AUGMENT_MAX_RES];
    uint32_t wx[FB_AUGMENT_MAX_RES];
    size_t plane = (size_t)a->res * (size_t)a->res;

    uint32_t tmp[FB_AUGMENT_MAX_SPAN];
    int lo, hi;

    column_tables(a, x0, x1, wx);
    column_span(a, x0, x1, &lo, &hi);
    for (int y = 0; y < a->res; y++) {
        unsigned char *row = dst + (size_t)y * (size_t)a->res;
        augment_row_separable(a, src, y, x0, x1, wx, lo, hi, tmp, row, plane);
        /* gray: the same plane three times, as PIL's convert("RGB") makes it */
        for (int c = a->channels; c < 3; c++)
            memcpy(row + c * plane, row, (size_t)a->res);
    }
}

void fb_augment_f32(const struct fb_augment *a, const unsigned char *src, float *dst)
{
    int x0[FB_AUGMENT_MAX_RES], x1[FB_AUGMENT_MAX_RES];
    uint32_t wx[FB_AUGMENT_MAX_RES];
    unsigned char rows[3 * FB_AUGMENT_MAX_RES];
    float lut[3][256];
    size_t plane = (size_t)a->res * (size_t)a->res, res = (size_t)a->res;

    /* A uint8 value normalizes to one of 256 floats per channel: look them up, with the very
     * formula the device uses, instead of computing each. */
    for (int c = 0; c < 3; c++)
        for (int v = 0; v < 256; v++)
            lut[c][v] = fb_augment_normalize((unsigned char)v, c);
    uint32_t tmp[FB_AUGMENT_MAX_SPAN];
    int lo, hi;

    column_tables(a, x0, x1, wx);
    column_span(a, x0, x1, &lo, &hi);
    for (int y = 0; y < a->res; y++) {
        augment_row_separable(a, src, y, x0, x1, wx, lo, hi, tmp, rows, res);
        for (int c = 0; c < 3; c++) {
            const unsigned char *row = rows + (a->channels == 3 ? (size_t)c * res : 0);
            float *out = dst + c * plane + (size_t)y * res;
            for (size_t x = 0; x < res; x++)
                out[x] = lut[c][row[x]];
        }
    }
}

double fb_augment_expect(const struct fb_augment *a, int c, int y, int x,
                         unsigned char (*pixel)(const void *ctx, int x, int y, int c),
                         const void *ctx)
{
    int rx = a->ox + (a->flip ? a->res - 1 - x : x), ry = a->oy + y, i0, i1, j0, j1;
    int sc = a->channels == 1 ? 0 : c;
    double fx, fy;

    sample_at(rx, a->src_w, a->rw, &i0, &i1, &fx);
    sample_at(ry, a->src_h, a->rh, &j0, &j1, &fy);
    return (1.0 - fy) * ((1.0 - fx) * pixel(ctx, i0, j0, sc) + fx * pixel(ctx, i1, j0, sc)) +
           fy * ((1.0 - fx) * pixel(ctx, i0, j1, sc) + fx * pixel(ctx, i1, j1, sc));
}

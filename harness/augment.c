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

    column_tables(a, x0, x1, wx);
    for (int y = 0; y < a->res; y++) {
        unsigned char *row = dst + (size_t)y * (size_t)a->res;
        augment_row(a, src, y, 0, x0, x1, wx, row);
        for (int c = 1; c < 3; c++) {
            /* gray: the same plane three times, as PIL's convert("RGB") makes it */
            if (a->channels == 1)
                memcpy(row + c * plane, row, (size_t)a->res);
            else
                augment_row(a, src, y, c, x0, x1, wx, row + c * plane);
        }
    }
}

void fb_augment_f32(const struct fb_augment *a, const unsigned char *src, float *dst)
{
    int x0[FB_AUGMENT_MAX_RES], x1[FB_AUGMENT_MAX_RES];
    uint32_t wx[FB_AUGMENT_MAX_RES];
    unsigned char row[FB_AUGMENT_MAX_RES];
    size_t plane = (size_t)a->res * (size_t)a->res;

    column_tables(a, x0, x1, wx);
    for (int y = 0; y < a->res; y++)
        for (int c = 0; c < 3; c++) {
            float *out = dst + c * plane + (size_t)y * (size_t)a->res;
            if (c == 0 || a->channels == 3)
                augment_row(a, src, y, a->channels == 3 ? c : 0, x0, x1, wx, row);
            for (int x = 0; x < a->res; x++)
                out[x] = fb_augment_normalize(row[x], c);
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

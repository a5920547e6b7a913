/* The augmentation against values worked out by hand: a downscale by 2 (every output pixel the
 * mean of a 2x2 block), an upscale with edge clamping, the crop offset and flip, gray expanded to
 * 3 planes and RGB kept apart; then the fast path against the one-pixel-at-a-time reference on
 * full-size synthetic images, and the crop/flip plan's determinism and spread. */
#include <stdlib.h>
#include <string.h>

#include "augment.h"
#include "image_codec.h"
#include "test.h"

struct img {
    const unsigned char *p;
    int w, ch;
};

static unsigned char img_at(const void *ctx, int x, int y, int c)
{
    const struct img *m = ctx;
    return m->p[((size_t)y * (size_t)m->w + (size_t)x) * (size_t)m->ch + (size_t)c];
}

int main(void)
{
    unsigned char src[8 * 6], out[3 * 4 * 4], rgb[4 * 4 * 3];
    float outf[3 * 4 * 4];
    struct fb_augment a;

    /* 8x6 gray, p(x, y) = 10x + y. Resolution 3: the short side becomes 3 * 256 / 224 = 3,
     * so 8x6 -> 4x3, a factor 2 each way: output (dx, dy) samples the source at
     * (2dx + 0.5, 2dy + 0.5), the mean of a 2x2 block: 20dx + 2dy + 5.5, rounded up to
     * 20dx + 2dy + 6. */
    for (int y = 0; y < 6; y++)
        for (int x = 0; x < 8; x++)
            src[y * 8 + x] = (unsigned char)(10 * x + y);
    fb_augment_plan(8, 6, 1, 3, 1, 0, &a);
    CHECK(a.rw == 4 && a.rh == 3 && a.res == 3);
    CHECK(a.oy == 0 && (a.ox == 0 || a.ox == 1));
    /* crop at x = 1, flipped: output column x is resized column 1 + (2 - x) */
    a.ox = 1;
    a.flip = true;
    fb_augment_u8(&a, src, out);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 3; x++)
                CHECK(out[c * 9 + y * 3 + x] == 20 * (3 - x) + 2 * y + 6);
    CHECK(out[0] == 66 && out[8] == 30);
    a.flip = false;
    fb_augment_u8(&a, src, out);
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 3; x++)
            CHECK(out[9 + y * 3 + x] == 20 * (1 + x) + 2 * y + 6);
    /* floats are the uint8 result normalized: (v / 255 - mean) / std per channel */
    fb_augment_f32(&a, src, outf);
    CHECK_NEAR(outf[0], (26.0 / 255.0 - 0.485) / 0.229, 1e-5);
    CHECK_NEAR(outf[9 + 4], (48.0 / 255.0 - 0.456) / 0.224, 1e-5);
    CHECK_NEAR(outf[18 + 8], (70.0 / 255.0 - 0.406) / 0.225, 1e-5);

    /* 2x2 -> 4x4 (resolution 4, side 4): output d samples the source at d / 2 - 0.25, clamped
     * to [0, 1]: weights 0, .25, .75 and the last pixel. */
    {
        const unsigned char up[4] = {0, 100, 200, 40};
        fb_augment_plan(2, 2, 1, 4, 5, 3, &a);
        CHECK(a.rw == 4 && a.rh == 4 && a.ox == 0 && a.oy == 0);
        a.flip = false;
        fb_augment_u8(&a, up, out);
        CHECK(out[0] == 0);              /* clamped to the corner */
        CHECK(out[1] == 25);             /* 100 * .25 */
        CHECK(out[4 + 1] == 59);         /* .75 * 25 + .25 * (200 * .75 + 40 * .25) = 58.75 */
        CHECK(out[2 * 4 + 2] == 79);     /* .25 * 75 + .75 * 80 = 78.75 */
        CHECK(out[3 * 4 + 3] == 40);     /* clamped to the far corner */
        CHECK(out[3 * 4 + 0] == 200);
    }

    /* RGB 4x4 at resolution 4: no resize, channels stay apart, the flip mirrors each */
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++)
            for (int c = 0; c < 3; c++)
                rgb[(y * 4 + x) * 3 + c] = (unsigned char)(c * 50 + x + 10 * y);
    fb_augment_plan(4, 4, 3, 4, 5, 3, &a);
    a.flip = true;
    fb_augment_u8(&a, rgb, out);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++)
                CHECK(out[c * 16 + y * 4 + x] == c * 50 + (3 - x) + 10 * y);

    /* Full size: the fast path matches the reference within one level everywhere, for the
     * ChestX-ray shape (1024 gray -> 256) and the ImageNet shape (500x375 RGB -> 341x256). */
    {
        struct fb_image_info shapes[2] = {{1024, 1024, 1}, {500, 375, 3}};
        for (int k = 0; k < 2; k++) {
            struct fb_image_info *s = &shapes[k];
            size_t n = (size_t)s->width * s->height * s->channels;
            unsigned char *pix = malloc(n), *o = malloc(3 * 224 * 224);
            struct img m = {pix, s->width, s->channels};
            double worst = 0.0;
            if (!pix || !o) {
                CHECK(0);
                free(pix);
                free(o);
                continue;
            }
            fb_synth_image(3, s, pix);
            for (uint64_t seq = 0; seq < 4; seq++) {
                fb_augment_plan(s->width, s->height, s->channels, 224, 77, seq, &a);
                CHECK(a.rh == 256 && a.rw == (k == 0 ? 256 : 341));
                fb_augment_u8(&a, pix, o);
                for (int c = 0; c < 3; c++)
                    for (int y = 0; y < 224; y++)
                        for (int x = 0; x < 224; x++) {
                            double e = fabs(o[(c * 224 + y) * 224 + x] -
                                            fb_augment_expect(&a, c, y, x, img_at, &m));
                            worst = e > worst ? e : worst;
                        }
            }
            CHECK(worst <= 1.0);
            free(pix);
            free(o);
        }
    }

    /* The plan: the same (seed, seq) gives the same crop; over many images both flips and
     * many offsets occur, all inside the resized image. */
    {
        struct fb_augment b;
        int flips = 0, distinct = 0, seen[33] = {0};
        fb_augment_plan(1024, 1024, 1, 224, 9, 12345, &a);
        fb_augment_plan(1024, 1024, 1, 224, 9, 12345, &b);
        CHECK(memcmp(&a, &b, sizeof a) == 0);
        for (uint64_t seq = 0; seq < 200; seq++) {
            fb_augment_plan(1024, 1024, 1, 224, 9, seq, &a);
            CHECK(a.ox >= 0 && a.ox <= 32 && a.oy >= 0 && a.oy <= 32);
            flips += a.flip;
            if (a.ox >= 0 && a.ox <= 32 && !seen[a.ox]++)
                distinct++;
        }
        CHECK(flips > 60 && flips < 140);
        CHECK(distinct > 20);
    }
    TEST_DONE();
}

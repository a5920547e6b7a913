/* DenseNet-121's layer sequence with shapes; the architecture is the one harness/model/densenet.c
 * lists parameters for (growth 32, blocks 6/12/24/16, bottleneck 128, compression 0.5). */
#include "densenet_layers.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GROWTH = 32, BOTTLENECK = 4 * GROWTH, INIT_FEATURES = 64, MAX_LAYERS = 512 };
enum { G_STEM, G_BLOCK1, G_TRANSITION1 = 5, G_HEAD = 8 };
static const int block_layers[4] = {6, 12, 24, 16};

const char *const fb_layer_group_names[FB_LAYER_GROUPS] = {
    "stem", "block1", "block2", "block3", "block4", "transition1", "transition2", "transition3",
    "head"};

/* Output side of a window of size r, stride, padding over `in` pixels (floor, as PyTorch). */
static int out_side(int in, int r, int stride, int pad) { return (in + 2 * pad - r) / stride + 1; }

struct builder {
    struct fb_densenet_layers *d;
    int group;
    int h, w, c; /* the running activation */
};

static struct fb_layer *add(struct builder *b, enum fb_layer_kind kind, int k, int r, int stride,
                            int pad, const char *fmt, ...)
{
    struct fb_layer *l = &b->d->layers[b->d->nlayers++];
    va_list ap;

    l->kind = kind;
    va_start(ap, fmt);
    vsnprintf(l->name, sizeof l->name, fmt, ap);
    va_end(ap);
    l->group = b->group;
    l->n = b->d->batch;
    l->h = b->h;
    l->w = b->w;
    l->c = b->c;
    l->k = k;
    l->r = l->s = r;
    l->stride = stride;
    l->pad = pad;
    l->p = r ? out_side(b->h, r, stride, pad) : b->h;
    l->q = r ? out_side(b->w, r, stride, pad) : b->w;
    switch (kind) {
    case FB_LAYER_CONV: l->params = (size_t)k * r * r * b->c; break;
    case FB_LAYER_NORM: l->params = 2 * (size_t)b->c; break;
    case FB_LAYER_LINEAR: l->params = (size_t)k * b->c + (size_t)k; break;
    default: l->params = 0; break;
    }
    b->h = l->p;
    b->w = l->q;
    b->c = k;
    return l;
}

static void add_norm(struct builder *b, const char *name)
{
    add(b, FB_LAYER_NORM, b->c, 0, 1, 0, "%s", name);
}

static void add_dense_layer(struct builder *b, int block, int layer, int block_in)
{
    int in = block_in + layer * GROWTH;
    char p[64];

    snprintf(p, sizeof p, "features.denseblock%d.denselayer%d", block + 1, layer + 1);
    /* The plain implementation concatenates every earlier feature map into a new tensor
     * before each layer (torch.cat); the first layer of a block reads its input as is. */
    b->c = in;
    if (layer > 0)
        add(b, FB_LAYER_CONCAT, in, 0, 1, 0, "%s.cat", p);
    add(b, FB_LAYER_NORM, in, 0, 1, 0, "%s.norm1", p);
    add(b, FB_LAYER_CONV, BOTTLENECK, 1, 1, 0, "%s.conv1", p);
    add(b, FB_LAYER_NORM, BOTTLENECK, 0, 1, 0, "%s.norm2", p);
    add(b, FB_LAYER_CONV, GROWTH, 3, 1, 1, "%s.conv2", p);
}

fb_status fb_densenet_layers_build(int batch, int resolution, int classes,
                                   struct fb_densenet_layers *d)
{
    struct builder b = {.d = d};
    int channels = INIT_FEATURES;

    memset(d, 0, sizeof *d);
    if (batch < 1 || resolution < 32 || classes < 1)
        return FB_ERR_USAGE;
    if (!(d->layers = calloc(MAX_LAYERS, sizeof *d->layers)))
        return FB_ERR_NOMEM;
    d->batch = batch;
    d->resolution = resolution;
    d->classes = classes;
    b.h = b.w = resolution;
    b.c = 3;

    b.group = G_STEM;
    add(&b, FB_LAYER_CONV, INIT_FEATURES, 7, 2, 3, "features.conv0");
    add_norm(&b, "features.norm0");
    add(&b, FB_LAYER_MAXPOOL, INIT_FEATURES, 3, 2, 1, "features.pool0");
    for (int blk = 0; blk < 4; blk++) {
        int h = b.h, w = b.w;
        b.group = G_BLOCK1 + blk;
        for (int l = 0; l < block_layers[blk]; l++) {
            b.h = h; /* every layer of a block works at the block's resolution */
            b.w = w;
            add_dense_layer(&b, blk, l, channels);
        }
        channels += block_layers[blk] * GROWTH;
        /* The block's output: all its features concatenated. */
        b.c = channels;
        add(&b, FB_LAYER_CONCAT, channels, 0, 1, 0, "features.denseblock%d.cat", blk + 1);
        if (blk < 3) {
            b.group = G_TRANSITION1 + blk;
            add(&b, FB_LAYER_NORM, channels, 0, 1, 0, "features.transition%d.norm", blk + 1);
            add(&b, FB_LAYER_CONV, channels / 2, 1, 1, 0, "features.transition%d.conv", blk + 1);
            add(&b, FB_LAYER_AVGPOOL, channels / 2, 2, 2, 0, "features.transition%d.pool",
                blk + 1);
            channels /= 2;
        }
    }
    b.group = G_HEAD;
    add_norm(&b, "features.norm5");
    add(&b, FB_LAYER_GAP, channels, 0, 1, 0, "avgpool");
    d->layers[d->nlayers - 1].p = d->layers[d->nlayers - 1].q = 1;
    b.h = b.w = 1;
    add(&b, FB_LAYER_LINEAR, classes, 0, 1, 0, "classifier");
    return FB_OK;
}

void fb_densenet_layers_free(struct fb_densenet_layers *d)
{
    free(d->layers);
    memset(d, 0, sizeof *d);
}

double fb_layer_macs(const struct fb_layer *l)
{
    switch (l->kind) {
    case FB_LAYER_CONV:
        return (double)l->n * l->p * l->q * l->k * (double)l->r * l->s * l->c;
    case FB_LAYER_LINEAR:
        return (double)l->n * l->k * l->c;
    default:
        return 0.0;
    }
}

size_t fb_layer_out_elements(const struct fb_layer *l)
{
    return (size_t)l->n * (size_t)l->p * (size_t)l->q * (size_t)l->k;
}

size_t fb_layer_in_elements(const struct fb_layer *l)
{
    return (size_t)l->n * l->h * l->w * l->c;
}

bool fb_layer_is_gemm(const struct fb_layer *l)
{
    return l->kind == FB_LAYER_CONV || l->kind == FB_LAYER_LINEAR;
}

size_t fb_layer_weight_elements(const struct fb_layer *l)
{
    if (!fb_layer_is_gemm(l))
        return 0;
    return (size_t)l->k * (l->kind == FB_LAYER_CONV ? (size_t)l->r * l->s : 1) * (size_t)l->c;
}

double fb_densenet_forward_macs(const struct fb_densenet_layers *d)
{
    double macs = 0.0;
    for (size_t i = 0; i < d->nlayers; i++)
        macs += fb_layer_macs(&d->layers[i]);
    return macs;
}

double fb_densenet_step_macs(const struct fb_densenet_layers *d)
{
    double macs = 0.0;
    for (size_t i = 0; i < d->nlayers; i++) {
        double f = fb_layer_macs(&d->layers[i]);
        /* forward, weight gradient, and data gradient except for the input image's */
        macs += i == 0 ? 2.0 * f : 3.0 * f;
    }
    return macs;
}

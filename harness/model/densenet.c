/* DenseNet-121 from its definition: growth rate 32, blocks of 6, 12, 24 and 16 layers, 64
 * initial features, bottleneck width 4 x growth, compression 0.5, no convolution bias,
 * BatchNorm weight and bias, and a linear classifier. */
#include "densenet.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GROWTH = 32, BOTTLENECK = 4 * GROWTH, INIT_FEATURES = 64, MAX_TENSORS = 400 };
static const int block_layers[4] = {6, 12, 24, 16};

static void add(struct fb_densenet *d, int dims, const int *shape, const char *fmt, ...)
{
    struct fb_tensor *t = &d->tensors[d->ntensors++];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);
    va_end(ap);
    t->dims = dims;
    t->elements = 1;
    for (int i = 0; i < dims; i++) {
        t->shape[i] = shape[i];
        t->elements *= (size_t)shape[i];
    }
    d->parameters += t->elements;
}

static void add_norm(struct fb_densenet *d, int channels, const char *prefix)
{
    add(d, 1, &channels, "%s.weight", prefix);
    add(d, 1, &channels, "%s.bias", prefix);
}

static void add_conv(struct fb_densenet *d, int out, int in, int k, const char *name)
{
    const int shape[4] = {out, in, k, k};
    add(d, 4, shape, "%s.weight", name);
}

fb_status fb_densenet121(int classes, struct fb_densenet *d)
{
    char prefix[64];
    int channels = INIT_FEATURES;

    memset(d, 0, sizeof *d);
    if (classes < 1)
        return FB_ERR_USAGE;
    if (!(d->tensors = calloc(MAX_TENSORS, sizeof *d->tensors)))
        return FB_ERR_NOMEM;

    /* Forward (registration) order first; reversed below. */
    add_conv(d, INIT_FEATURES, 3, 7, "features.conv0");
    add_norm(d, INIT_FEATURES, "features.norm0");
    for (int b = 0; b < 4; b++) {
        for (int l = 0; l < block_layers[b]; l++) {
            int in = channels + l * GROWTH;
            snprintf(prefix, sizeof prefix, "features.denseblock%d.denselayer%d", b + 1, l + 1);
            char name[96];
            snprintf(name, sizeof name, "%s.norm1", prefix);
            add_norm(d, in, name);
            snprintf(name, sizeof name, "%s.conv1", prefix);
            add_conv(d, BOTTLENECK, in, 1, name);
            snprintf(name, sizeof name, "%s.norm2", prefix);
            add_norm(d, BOTTLENECK, name);
            snprintf(name, sizeof name, "%s.conv2", prefix);
            add_conv(d, GROWTH, BOTTLENECK, 3, name);
        }
        channels += block_layers[b] * GROWTH;
        if (b < 3) {
            char name[64];
            snprintf(name, sizeof name, "features.transition%d.norm", b + 1);
            add_norm(d, channels, name);
            snprintf(name, sizeof name, "features.transition%d.conv", b + 1);
            add_conv(d, channels / 2, channels, 1, name);
            channels /= 2;
        }
    }
    add_norm(d, channels, "features.norm5");
    {
        const int w[2] = {classes, channels};
        add(d, 2, w, "classifier.weight");
        add(d, 1, &classes, "classifier.bias");
    }

    /* Backward runs the layers in reverse, so gradients become ready in reverse order. */
    for (size_t i = 0, j = d->ntensors - 1; i < j; i++, j--) {
        struct fb_tensor t = d->tensors[i];
        d->tensors[i] = d->tensors[j];
        d->tensors[j] = t;
    }
    return FB_OK;
}

void fb_densenet_free(struct fb_densenet *d)
{
    free(d->tensors);
    memset(d, 0, sizeof *d);
}

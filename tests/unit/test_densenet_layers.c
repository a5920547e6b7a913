/* DenseNet-121's layer shapes against the public figures (docs/reference-figures.md,
 * "DenseNet-121"): 2.834 G multiply-accumulates per 224x224 image forward, 7,978,856 parameters
 * for 1000 classes, block outputs 56x56x256, 28x28x512, 14x14x1024, 7x7x1024; and the batch
 * scales the work linearly. */
#include <math.h>
#include <string.h>

#include "densenet_layers.h"
#include "test.h"

static const struct fb_layer *find(const struct fb_densenet_layers *d, const char *name)
{
    for (size_t i = 0; i < d->nlayers; i++)
        if (strcmp(d->layers[i].name, name) == 0)
            return &d->layers[i];
    return NULL;
}

static void check_out(const struct fb_densenet_layers *d, const char *name, int side, int ch)
{
    const struct fb_layer *l = find(d, name);
    CHECK(l && l->p == side && l->q == side && l->k == ch);
}

int main(void)
{
    struct fb_densenet_layers d, d8;
    size_t params = 0, convs = 0;
    const struct fb_layer *l;

    CHECK(fb_densenet_layers_build(1, 224, 1000, &d) == FB_OK);
    for (size_t i = 0; i < d.nlayers; i++) {
        params += d.layers[i].params;
        convs += d.layers[i].kind == FB_LAYER_CONV;
    }
    CHECK(params == 7978856);
    CHECK(convs == 120);
    /* 2.834 G MACs, as torchvision publishes it (to its 3 decimals) */
    CHECK(fabs(fb_densenet_forward_macs(&d) / 1e9 - 2.834) < 0.0005);
    check_out(&d, "features.denseblock1.cat", 56, 256);
    check_out(&d, "features.denseblock2.cat", 28, 512);
    check_out(&d, "features.denseblock3.cat", 14, 1024);
    check_out(&d, "features.denseblock4.cat", 7, 1024);
    check_out(&d, "features.conv0", 112, 64);
    check_out(&d, "features.pool0", 56, 64);
    /* the last layer of block 3 reads 256 + 23 * 32 = 992 channels through a 1x1 convolution */
    l = find(&d, "features.denseblock3.denselayer24.conv1");
    CHECK(l && l->c == 992 && l->k == 128 && l->r == 1 && l->h == 14);
    l = find(&d, "features.denseblock3.denselayer24.conv2");
    CHECK(l && l->c == 128 && l->k == 32 && l->r == 3 && l->pad == 1 && l->p == 14);
    CHECK(fb_layer_macs(l) == 14.0 * 14 * 32 * 3 * 3 * 128);
    l = &d.layers[d.nlayers - 1];
    CHECK(l->kind == FB_LAYER_LINEAR && l->c == 1024 && l->k == 1000 && l->params == 1025000);
    /* a training step: forward, weight gradients, and data gradients except the image's */
    CHECK(fabs(fb_densenet_step_macs(&d) - (3.0 * fb_densenet_forward_macs(&d) -
                                            fb_layer_macs(&d.layers[0]))) < 1.0);

    CHECK(fb_densenet_layers_build(8, 224, 1000, &d8) == FB_OK);
    CHECK(d8.nlayers == d.nlayers);
    CHECK(fabs(fb_densenet_forward_macs(&d8) - 8 * fb_densenet_forward_macs(&d)) < 1.0);
    fb_densenet_layers_free(&d8);
    fb_densenet_layers_free(&d);

    /* a small resolution keeps every block at least 1x1 */
    CHECK(fb_densenet_layers_build(2, 32, 14, &d) == FB_OK);
    check_out(&d, "features.denseblock4.cat", 1, 1024);
    fb_densenet_layers_free(&d);
    CHECK(fb_densenet_layers_build(1, 31, 14, &d) == FB_ERR_USAGE);
    CHECK(fb_densenet_layers_build(0, 224, 14, &d) == FB_ERR_USAGE);
    TEST_DONE();
}

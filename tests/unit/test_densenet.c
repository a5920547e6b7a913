/* DenseNet-121's parameter list against the public figures (docs/reference-figures.md,
 * "DenseNet-121"): 7,978,856 trainable parameters in 364 tensors for 1000 classes, 6,968,206 for
 * 14; the gradient order is the reverse of the forward pass. */
#include <string.h>

#include "densenet.h"
#include "test.h"

static size_t count_named(const struct fb_densenet *d, const char *part)
{
    size_t n = 0;
    for (size_t i = 0; i < d->ntensors; i++)
        n += strstr(d->tensors[i].name, part) != NULL;
    return n;
}

int main(void)
{
    struct fb_densenet d;
    size_t sum = 0;

    CHECK(fb_densenet121(1000, &d) == FB_OK);
    CHECK(d.ntensors == 364);
    CHECK(d.parameters == 7978856);
    for (size_t i = 0; i < d.ntensors; i++)
        sum += d.tensors[i].elements;
    CHECK(sum == d.parameters);
    CHECK(count_named(&d, "conv") == 120);         /* 120 convolution weights */
    CHECK(count_named(&d, "norm") == 2 * 121);     /* 121 BatchNorms x {weight, bias} */
    /* backward order: the classifier first, the stem convolution last */
    CHECK(strcmp(d.tensors[0].name, "classifier.bias") == 0 && d.tensors[0].elements == 1000);
    CHECK(strcmp(d.tensors[1].name, "classifier.weight") == 0 && d.tensors[1].elements == 1024000);
    CHECK(strcmp(d.tensors[2].name, "features.norm5.bias") == 0 && d.tensors[2].elements == 1024);
    CHECK(strcmp(d.tensors[4].name, "features.denseblock4.denselayer16.conv2.weight") == 0);
    CHECK(d.tensors[4].elements == 32 * 128 * 3 * 3);
    CHECK(strcmp(d.tensors[363].name, "features.conv0.weight") == 0);
    CHECK(d.tensors[363].elements == 64 * 3 * 7 * 7);
    /* the last layer of block 3 sees 256 + 23 * 32 = 992 input channels */
    for (size_t i = 0; i < d.ntensors; i++)
        if (strcmp(d.tensors[i].name, "features.denseblock3.denselayer24.conv1.weight") == 0)
            CHECK(d.tensors[i].shape[0] == 128 && d.tensors[i].shape[1] == 992);
    fb_densenet_free(&d);

    CHECK(fb_densenet121(14, &d) == FB_OK);
    CHECK(d.ntensors == 364);
    CHECK(d.parameters == 6968206);
    CHECK(d.parameters * 4 == 27872824); /* bytes of fp32 gradients per step */
    fb_densenet_free(&d);

    CHECK(fb_densenet121(0, &d) == FB_ERR_USAGE);
    TEST_DONE();
}

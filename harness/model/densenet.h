/* The trainable parameter tensors of DenseNet-121 (torchvision's densenet121), computed from
 * its architecture, in the order their gradients become ready in the backward pass (the reverse
 * of the forward pass, which is the order data-parallel frameworks bucket them in). */
#ifndef FB_DENSENET_H
#define FB_DENSENET_H

#include <stddef.h>

#include "status.h"

struct fb_tensor {
    char name[64];  /* torchvision's parameter name, e.g. "features.denseblock1.denselayer1.conv1.weight" */
    int dims;       /* 1, 2 or 4 */
    int shape[4];
    size_t elements;
};

struct fb_densenet {
    struct fb_tensor *tensors; /* backward (gradient-ready) order */
    size_t ntensors;
    size_t parameters;         /* sum of elements */
};

/* Builds the list for a classifier of `classes` outputs (>= 1). Free with fb_densenet_free. */
fb_status fb_densenet121(int classes, struct fb_densenet *out);
void fb_densenet_free(struct fb_densenet *d);

#endif

/* DenseNet-121's forward pass as a sequence of layers with their real shapes for a batch and an
 * input resolution: what the `compute` stand-in runs (forward in order, backward in reverse) and
 * what `memfit` sizes. Activations are NHWC; a convolution's weights are K x R x S x C. */
#ifndef FB_DENSENET_LAYERS_H
#define FB_DENSENET_LAYERS_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

enum fb_layer_kind {
    FB_LAYER_CONV,     /* no bias */
    FB_LAYER_NORM,     /* BatchNorm followed by ReLU (torchvision's norm/relu pairs) */
    FB_LAYER_CONCAT,   /* torch.cat of the block's features so far: a copy of c_out channels */
    FB_LAYER_MAXPOOL,  /* the stem's 3x3/2 max-pool, padding 1 */
    FB_LAYER_AVGPOOL,  /* a transition's 2x2/2 average pool */
    FB_LAYER_GAP,      /* the head's global average pool */
    FB_LAYER_LINEAR,   /* the classifier, with bias */
};

/* Where a layer sits, for per-group reports: "stem", "block1".."block4", "transition1".."3",
 * "head". */
enum { FB_LAYER_GROUPS = 9 };
extern const char *const fb_layer_group_names[FB_LAYER_GROUPS];

struct fb_layer {
    enum fb_layer_kind kind;
    char name[64];         /* torchvision's module name: "features.denseblock1.denselayer1.conv1" */
    int group;             /* index into fb_layer_group_names */
    int n;                 /* batch */
    int h, w, c;           /* input: height, width, channels */
    int k;                 /* output channels */
    int r, s, stride, pad; /* window (convolutions and pools) */
    int p, q;              /* output height and width */
    size_t params;         /* trainable parameters of the layer (weights, BatchNorm's two vectors) */
};

struct fb_densenet_layers {
    struct fb_layer *layers; /* forward order */
    size_t nlayers;
    int batch, resolution, classes;
};

/* The layers for `batch` images of resolution x resolution (>= 32, so the last block is at
 * least 1x1) and a classifier of `classes` outputs. Free with fb_densenet_layers_free. */
fb_status fb_densenet_layers_build(int batch, int resolution, int classes,
                                   struct fb_densenet_layers *out);
void fb_densenet_layers_free(struct fb_densenet_layers *d);

/* Multiply-accumulates of one layer's forward pass (convolutions and the classifier; 0 for
 * the memory-bound layers). The backward pass of a convolution costs twice that (data gradient
 * and weight gradient GEMMs of the same size); the first convolution needs no data gradient. */
double fb_layer_macs(const struct fb_layer *l);

/* Elements of the layer's output tensor (n * p * q * k). */
size_t fb_layer_out_elements(const struct fb_layer *l);

/* Elements of its input tensor (n * h * w * c). */
size_t fb_layer_in_elements(const struct fb_layer *l);

/* Whether it is a GEMM (a convolution or the classifier), and the elements of its GEMM weights
 * (k * r * s * c; the classifier's k * c, its bias aside); 0 for the other layers. */
bool fb_layer_is_gemm(const struct fb_layer *l);
size_t fb_layer_weight_elements(const struct fb_layer *l);

/* Sums over all layers: forward MACs, and a training step's MACs (forward + backward). */
double fb_densenet_forward_macs(const struct fb_densenet_layers *d);
double fb_densenet_step_macs(const struct fb_densenet_layers *d);

#endif

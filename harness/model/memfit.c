/* The memory model of a DenseNet-121 training step.
 *
 * Kept for backward (torchvision's densenet121, memory_efficient=False, ReLU in place): the
 * input batch and the output of every layer: each torch.cat of a block's features (the plain
 * implementation's quadratic cost), each BatchNorm (its in-place ReLU shares the tensor), each
 * convolution and pool whose consumer saves it (see kept()), plus max-pool's int64 indices. Weights: fp32 masters, and under
 * mixed precision the half copies autocast caches for the step. Backward's transient peak is
 * approximated as the gradient of the largest block's concatenated features (accumulated while
 * the block runs backward) plus two of the largest layer outputs (a layer's output gradient and
 * its input gradient live together). Allocator rounding, the CUDA context and library
 * workspaces are not modelled: the confirmation on the device measures them. */
#include "memfit.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { INDEX_BYTES = 8 }; /* max-pool's saved argmax, int64 */

/* Whether autograd keeps the layer's output. Not for the outputs only torch.cat (a dense
 * layer's new features) or an average pool (a transition's convolution) consume: neither saves
 * its input. The first layer of a block concatenates its single input into a copy, which the
 * layer list does not show; the pool output before the block stands in for it (same size). */
static bool kept(const struct fb_layer *l)
{
    if (l->kind != FB_LAYER_CONV)
        return true;
    return !strstr(l->name, ".conv2") && !strstr(l->name, "transition");
}

/* One image's saved activations, and the largest layer output and block concatenation. */
struct per_image {
    size_t saved, largest, largest_cat;
};

static fb_status walk(const struct fb_memfit_config *cfg, struct fb_densenet_layers *d,
                      size_t *params, struct per_image *pi)
{
    fb_status st = fb_densenet_layers_build(1, cfg->resolution, cfg->classes, d);

    if (st != FB_OK)
        return st;
    *params = 0;
    memset(pi, 0, sizeof *pi);
    pi->saved = (size_t)cfg->resolution * (size_t)cfg->resolution * 3 * (size_t)cfg->act_bytes;
    for (size_t i = 0; i < d->nlayers; i++) {
        const struct fb_layer *l = &d->layers[i];
        size_t out = fb_layer_out_elements(l) * (size_t)cfg->act_bytes;
        *params += l->params;
        if (kept(l))
            pi->saved += out;
        if (l->kind == FB_LAYER_MAXPOOL)
            pi->saved += fb_layer_out_elements(l) * INDEX_BYTES;
        if (out > pi->largest)
            pi->largest = out;
        if (l->kind == FB_LAYER_CONCAT && out > pi->largest_cat)
            pi->largest_cat = out;
    }
    return FB_OK;
}

static bool config_ok(const struct fb_memfit_config *cfg)
{
    return cfg->resolution >= 32 && cfg->classes >= 1 &&
           (cfg->act_bytes == 2 || cfg->act_bytes == 4) && cfg->opt_slots >= 0 &&
           cfg->opt_slots <= 2;
}

static void fixed_parts(const struct fb_memfit_config *cfg, size_t params,
                        struct fb_memfit_parts *p)
{
    p->weights = params * 4 + (cfg->act_bytes == 2 ? params * 2 : 0);
    p->grads = params * 4;
    p->optimizer = params * 4 * (size_t)cfg->opt_slots;
}

fb_status fb_memfit_estimate(const struct fb_memfit_config *cfg, int batch,
                             struct fb_memfit_parts *out)
{
    struct fb_densenet_layers d;
    struct per_image pi;
    size_t params;
    fb_status st;

    memset(out, 0, sizeof *out);
    if (!config_ok(cfg) || batch < 1)
        return FB_ERR_USAGE;
    if ((st = walk(cfg, &d, &params, &pi)) != FB_OK)
        return st;
    fixed_parts(cfg, params, out);
    out->activations = pi.saved * (size_t)batch;
    out->workspace = (pi.largest_cat + 2 * pi.largest) * (size_t)batch;
    out->total = out->weights + out->grads + out->optimizer + out->activations + out->workspace;
    fb_densenet_layers_free(&d);
    return FB_OK;
}

long fb_memfit_batch_for(const struct fb_memfit_config *cfg, size_t budget)
{
    struct fb_memfit_parts one, two;
    size_t fixed, per;

    if (fb_memfit_estimate(cfg, 1, &one) != FB_OK || fb_memfit_estimate(cfg, 2, &two) != FB_OK)
        return 0;
    per = two.total - one.total;
    fixed = one.total - per;
    return budget <= fixed || per == 0 ? 0 : (long)((budget - fixed) / per);
}

fb_status fb_memfit_buffers(const struct fb_memfit_config *cfg, int batch, size_t **sizes,
                            size_t *n)
{
    struct fb_densenet_layers d;
    struct per_image pi;
    size_t params, k = 0, *s;
    fb_status st;

    *sizes = NULL;
    *n = 0;
    if (!config_ok(cfg) || batch < 1)
        return FB_ERR_USAGE;
    if ((st = walk(cfg, &d, &params, &pi)) != FB_OK)
        return st;
    /* per layer: weights, grads, optimizer slots, half copy, output, indices; + input, workspace */
    if (!(s = calloc(d.nlayers * 7 + 2, sizeof *s))) {
        fb_densenet_layers_free(&d);
        return FB_ERR_NOMEM;
    }
    s[k++] = (size_t)cfg->resolution * (size_t)cfg->resolution * 3 * (size_t)cfg->act_bytes *
             (size_t)batch;
    for (size_t i = 0; i < d.nlayers; i++) {
        const struct fb_layer *l = &d.layers[i];
        if (l->params) {
            s[k++] = l->params * 4; /* master weights */
            s[k++] = l->params * 4; /* gradients */
            for (int j = 0; j < cfg->opt_slots; j++)
                s[k++] = l->params * 4;
            if (cfg->act_bytes == 2)
                s[k++] = l->params * 2;
        }
        if (kept(l))
            s[k++] = fb_layer_out_elements(l) * (size_t)cfg->act_bytes * (size_t)batch;
        if (l->kind == FB_LAYER_MAXPOOL)
            s[k++] = fb_layer_out_elements(l) * INDEX_BYTES * (size_t)batch;
    }
    s[k++] = (pi.largest_cat + 2 * pi.largest) * (size_t)batch;
    fb_densenet_layers_free(&d);
    *sizes = s;
    *n = k;
    return FB_OK;
}

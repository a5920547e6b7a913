/* The memory model of fabricbench's DenseNet-121 training step: the list of its device buffers.
 *
 * The step (harness/train) keeps every layer's output and the gradient by every layer's output
 * for the whole step, the weights in the compute precision with their fp32 gradients, and
 * BatchNorm's vectors; then the step's batch (as copied and normalized), the all-reduced
 * gradients, fp32 master weights and the optimizer's state. That is about twice what PyTorch's
 * autograd keeps for the same network (it frees an output's gradient as soon as it is used and
 * keeps only the outputs backward reads), so a PyTorch job fits a larger batch than memfit
 * confirms for this step; docs/benchmarks/memfit.md gives both. Allocator rounding, the CUDA
 * context and library workspaces are not modelled: the confirmation on the device measures
 * them. */
#include "memfit.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "densenet.h"
#include "log.h"

static const char *const role_names[FB_BUF_ROLES] = {
    "image", "bn_scratch", "tmp", "out", "grad", "w", "dw", "gamma", "beta", "dgamma", "dbeta",
    "mean_var", "wire", "input", "grad_send", "grad_recv", "master", "opt_state",
};

const char *fb_memfit_role_name(enum fb_memfit_role role)
{
    return (unsigned)role < FB_BUF_ROLES ? role_names[role] : "?";
}

/* "out of layer 12, 802816 bytes", "wire (the step's own), 150528 bytes" */
static void describe(char *buf, size_t len, enum fb_memfit_role role, long layer, size_t bytes)
{
    if (layer >= 0)
        snprintf(buf, len, "%s of layer %ld, %zu bytes", fb_memfit_role_name(role), layer, bytes);
    else
        snprintf(buf, len, "%s (the step's own), %zu bytes", fb_memfit_role_name(role), bytes);
}

fb_status fb_memfit_take(const struct fb_memfit_buf *plan, size_t n, size_t *at,
                         enum fb_memfit_role role, long layer, size_t bytes)
{
    const struct fb_memfit_buf *b = *at < n ? &plan[*at] : NULL;
    char listed[96] = "nothing more", needed[96];

    if (b && b->role == role && b->layer == layer && b->bytes == bytes) {
        (*at)++;
        return FB_OK;
    }
    if (b)
        describe(listed, sizeof listed, b->role, b->layer, b->bytes);
    describe(needed, sizeof needed, role, layer, bytes);
    fb_error("step: the memory model lists %s where the step needs %s (harness/model/memfit.c)",
             listed, needed);
    return FB_ERR_INTERNAL;
}

fb_status fb_memfit_took_all(const struct fb_memfit_buf *plan, size_t n, size_t at)
{
    char first[96];

    if (at >= n)
        return FB_OK;
    describe(first, sizeof first, plan[at].role, plan[at].layer, plan[at].bytes);
    fb_error("step: the memory model lists %zu buffer(s) the step never takes, the first %s "
             "(harness/model/memfit.c)", n - at, first);
    return FB_ERR_INTERNAL;
}

static bool config_ok(const struct fb_memfit_config *cfg)
{
    return cfg->resolution >= 32 && cfg->classes >= 1 &&
           (cfg->act_bytes == 2 || cfg->act_bytes == 4) && cfg->opt_slots >= 0 &&
           cfg->opt_slots <= 2 && (cfg->grad_bytes == 2 || cfg->grad_bytes == 4);
}

struct list {
    struct fb_memfit_buf *b;
    size_t n;
};

static void add(struct list *l, enum fb_memfit_role role, long layer, size_t bytes)
{
    l->b[l->n++] = (struct fb_memfit_buf){role, layer, bytes};
}

/* The network's buffers, as densenet_step.c's alloc_train takes them. */
static void network(const struct fb_memfit_config *cfg, const struct fb_densenet_layers *d,
                    struct list *out)
{
    const struct fb_layer *L = d->layers;
    size_t es = (size_t)cfg->act_bytes, maxc = 0, maxin = 0;

    for (size_t i = 0; i < d->nlayers; i++) {
        maxc = (size_t)L[i].c > maxc ? (size_t)L[i].c : maxc;
        maxin = fb_layer_in_elements(&L[i]) > maxin ? fb_layer_in_elements(&L[i]) : maxin;
    }
    add(out, FB_BUF_IMAGE, -1, fb_layer_in_elements(&L[0]) * es);
    add(out, FB_BUF_BN_SCRATCH, -1, 2 * maxc * sizeof(float));
    add(out, FB_BUF_TMP, -1, maxin * es);
    for (size_t i = 0; i < d->nlayers; i++) {
        const struct fb_layer *l = &L[i];
        size_t e = fb_layer_out_elements(l), c = (size_t)l->c;
        add(out, FB_BUF_OUT, (long)i, e * es);
        add(out, FB_BUF_GRAD, (long)i, e * es);
        if (fb_layer_is_gemm(l)) {
            size_t we = fb_layer_weight_elements(l);
            add(out, FB_BUF_W, (long)i, we * es);
            add(out, FB_BUF_DW, (long)i, we * sizeof(float));
        } else if (l->kind == FB_LAYER_NORM) {
            add(out, FB_BUF_GAMMA, (long)i, c * sizeof(float));
            add(out, FB_BUF_BETA, (long)i, c * sizeof(float));
            add(out, FB_BUF_DGAMMA, (long)i, c * sizeof(float));
            add(out, FB_BUF_DBETA, (long)i, c * sizeof(float));
            add(out, FB_BUF_MEAN_VAR, (long)i, 2 * c * sizeof(float));
        }
    }
}

/* The step's own, as train_step.c's alloc_buffers takes them. */
static void step_own(const struct fb_memfit_config *cfg, int batch, size_t params,
                     struct list *out)
{
    size_t wire = (size_t)batch * 3 * (size_t)cfg->resolution * (size_t)cfg->resolution;

    add(out, FB_BUF_WIRE, -1, wire);
    add(out, FB_BUF_INPUT, -1, wire * sizeof(float));
    add(out, FB_BUF_GRAD_SEND, -1, params * (size_t)cfg->grad_bytes);
    add(out, FB_BUF_GRAD_RECV, -1, params * (size_t)cfg->grad_bytes);
    add(out, FB_BUF_MASTER, -1, params * sizeof(float));
    for (int j = 0; j < cfg->opt_slots; j++)
        add(out, FB_BUF_OPT_STATE, -1, params * sizeof(float));
}

fb_status fb_memfit_plan(const struct fb_memfit_config *cfg, int batch, unsigned which,
                         struct fb_memfit_buf **out, size_t *n)
{
    struct fb_densenet_layers d;
    struct fb_densenet model;
    struct list l = {0};
    fb_status st;

    *out = NULL;
    *n = 0;
    if (!config_ok(cfg) || batch < 1 || !(which & FB_MEMFIT_ALL))
        return FB_ERR_USAGE;
    if ((st = fb_densenet_layers_build(batch, cfg->resolution, cfg->classes, &d)) != FB_OK)
        return st;
    if ((st = fb_densenet121(cfg->classes, &model)) != FB_OK) {
        fb_densenet_layers_free(&d);
        return st;
    }
    /* per layer at most 7 buffers; 3 of the network's own; the step's 5 and up to 2 slots */
    if (!(l.b = calloc(d.nlayers * 7 + 3 + 5 + 2, sizeof *l.b))) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    if (which & FB_MEMFIT_NET)
        network(cfg, &d, &l);
    if (which & FB_MEMFIT_STEP)
        step_own(cfg, batch, model.parameters, &l);
    *out = l.b;
    *n = l.n;
out:
    fb_densenet_free(&model);
    fb_densenet_layers_free(&d);
    return st;
}

fb_status fb_memfit_estimate(const struct fb_memfit_config *cfg, int batch,
                             struct fb_memfit_parts *out)
{
    struct fb_memfit_buf *b;
    size_t n;
    fb_status st;

    memset(out, 0, sizeof *out);
    if ((st = fb_memfit_plan(cfg, batch, FB_MEMFIT_ALL, &b, &n)) != FB_OK)
        return st;
    for (size_t i = 0; i < n; i++) {
        size_t *part;
        switch (b[i].role) {
        case FB_BUF_W: case FB_BUF_GAMMA: case FB_BUF_BETA: case FB_BUF_MEAN_VAR:
        case FB_BUF_MASTER:
            part = &out->weights;
            break;
        case FB_BUF_DW: case FB_BUF_DGAMMA: case FB_BUF_DBETA: case FB_BUF_GRAD_SEND:
        case FB_BUF_GRAD_RECV:
            part = &out->grads;
            break;
        case FB_BUF_OPT_STATE:
            part = &out->optimizer;
            break;
        case FB_BUF_IMAGE: case FB_BUF_OUT: case FB_BUF_WIRE: case FB_BUF_INPUT:
            part = &out->activations;
            break;
        default: /* grad, tmp, bn_scratch */
            part = &out->act_grads;
            break;
        }
        *part += b[i].bytes;
        out->total += b[i].bytes;
    }
    free(b);
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

/* A DenseNet-121 training step's compute: buffers for every layer's output and its gradient
 * (NHWC, as the plain PyTorch implementation keeps them for backward), the wiring of
 * torch.cat's inputs and of gradients that several layers add into, and the forward, backward
 * and reference sequences over an engine. */
#include "densenet_step.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "memfit.h"

enum { G_BLOCK1 = 1, G_BLOCK4 = 4 };

struct fb_densenet_step {
    const struct fb_densenet_layers *d;
    const struct fb_backend *be;
    const struct fb_conv_engine *eng;
    struct fb_conv_ctx *ctx;
    struct fb_stream *s;
    enum fb_conv_prec prec;
    size_t es;        /* bytes per activation element */
    unsigned what;
    size_t n;         /* layers */
    void *image;      /* the batch, n x R x R x 3 */
    void **out, **grad; /* per layer: its output and the gradient of the loss by it */
    void **w;         /* convolutions and the classifier: weights (prec) */
    float **dw;       /* their gradients (fp32) */
    float **gamma, **beta, **dgamma, **dbeta, **mean_var; /* BatchNorms, fp32 */
    float *bn_scratch;
    void *tmp;        /* a layer's input gradient before it is added to one already there */
    /* torch.cat: pieces[piece_at[i] .. piece_at[i] + npieces[i]) are the layers it joins */
    size_t *pieces, *piece_at, *npieces;
    bool *piece_acc;  /* per piece: add its gradient slice (a later reader already wrote one) */
    bool *acc;        /* per layer: add its input gradient rather than write it */
    struct fb_event *bwd_start, **ready; /* ready[i]: after layer i's parameter gradients */
    void *ra, *rb, *rc; /* the reference GEMMs' dense operands */
    struct fb_memfit_buf *plan; /* the memory model's buffers, taken in order (alloc_train) */
    size_t nplan, at;
    fb_grad_ready_fn on_ready; /* called after each ready event is enqueued */
    void *on_ready_arg;
};

void fb_densenet_step_on_ready(struct fb_densenet_step *st, fb_grad_ready_fn fn, void *arg)
{
    st->on_ready = fn;
    st->on_ready_arg = arg;
}

/* Layer i's gradients are enqueued and its ready event recorded: tell the hook. */
static fb_status ready(struct fb_densenet_step *st, size_t i)
{
    fb_status s = st->be->event_record(st->ready[i], st->s);
    if (s == FB_OK && st->on_ready)
        s = st->on_ready(st->on_ready_arg, i, st->ready[i]);
    return s;
}

struct fb_kconv fb_layer_kconv(const struct fb_layer *l)
{
    struct fb_kconv cv = {.n = l->n, .h = l->h, .w = l->w, .c = l->c, .k = l->k, .r = l->r,
                          .s = l->s, .stride = l->stride, .pad = l->pad, .p = l->p, .q = l->q};
    if (l->kind == FB_LAYER_GAP) {
        cv.r = l->h;
        cv.s = l->w;
        cv.stride = 1;
    } else if (l->kind == FB_LAYER_LINEAR) {
        cv.h = cv.w = cv.p = cv.q = cv.r = cv.s = cv.stride = 1;
        cv.pad = 0;
    }
    return cv;
}

static bool in_group(const struct fb_layer *l, int group)
{
    return group == FB_STEP_ALL_GROUPS || l->group == group;
}

double fb_densenet_run_macs(const struct fb_densenet_layers *d, int group, unsigned passes)
{
    double macs = 0.0;
    for (size_t i = 0; i < d->nlayers; i++) {
        double f = fb_layer_macs(&d->layers[i]);
        if (!in_group(&d->layers[i], group))
            continue;
        if (passes & FB_STEP_FWD)
            macs += f;
        if (passes & FB_STEP_BWD)
            macs += i == 0 ? f : 2.0 * f; /* the image needs no gradient */
    }
    return macs;
}

void fb_densenet_step_free(struct fb_densenet_step *st)
{
    const struct fb_backend *be;
    if (!st)
        return;
    be = st->be;
    for (size_t i = 0; i < st->n; i++) {
        if (st->out)
            be->free(FB_MEM_DEVICE, st->out[i]);
        if (st->grad)
            be->free(FB_MEM_DEVICE, st->grad[i]);
        if (st->w)
            be->free(FB_MEM_DEVICE, st->w[i]);
        if (st->dw)
            be->free(FB_MEM_DEVICE, st->dw[i]);
        if (st->gamma) {
            be->free(FB_MEM_DEVICE, st->gamma[i]);
            be->free(FB_MEM_DEVICE, st->beta[i]);
            be->free(FB_MEM_DEVICE, st->dgamma[i]);
            be->free(FB_MEM_DEVICE, st->dbeta[i]);
            be->free(FB_MEM_DEVICE, st->mean_var[i]);
        }
        if (st->ready)
            be->event_destroy(st->ready[i]);
    }
    be->event_destroy(st->bwd_start);
    be->free(FB_MEM_DEVICE, st->image);
    be->free(FB_MEM_DEVICE, st->bn_scratch);
    be->free(FB_MEM_DEVICE, st->tmp);
    be->free(FB_MEM_DEVICE, st->ra);
    be->free(FB_MEM_DEVICE, st->rb);
    be->free(FB_MEM_DEVICE, st->rc);
    free(st->out);
    free(st->grad);
    free(st->w);
    free(st->dw);
    free(st->gamma);
    free(st->beta);
    free(st->dgamma);
    free(st->dbeta);
    free(st->mean_var);
    free(st->ready);
    free(st->pieces);
    free(st->piece_at);
    free(st->npieces);
    free(st->piece_acc);
    free(st->acc);
    free(st->plan);
    free(st);
}

/* Who reads what: each concatenation's pieces (the block's input and the 3x3 convolutions'
 * outputs so far), and for every reader whether a later layer reads the same buffer, in which
 * case the backward pass meets that later reader first and this one must add its gradient. */
static fb_status wire(struct fb_densenet_step *st)
{
    const struct fb_layer *L = st->d->layers;
    size_t *list = NULL, nlist = 0, npieces = 0, *last = NULL;
    int group = -1;
    fb_status st_ = FB_ERR_NOMEM;

    if (!(list = malloc(st->n * sizeof *list)) || !(last = calloc(st->n, sizeof *last)) ||
        !(st->piece_at = calloc(st->n, sizeof *st->piece_at)) ||
        !(st->npieces = calloc(st->n, sizeof *st->npieces)) ||
        !(st->acc = calloc(st->n, sizeof *st->acc)))
        goto out;
    /* at most one piece per layer before it per concatenation: bounded by n * n / 2, but a
     * block has at most 25 pieces, so FB_CONV_CONCAT_MAX (32) per layer is plenty */
    if (!(st->pieces = malloc(st->n * FB_CONV_CONCAT_MAX * sizeof *st->pieces)) ||
        !(st->piece_acc = calloc(st->n * FB_CONV_CONCAT_MAX, sizeof *st->piece_acc)))
        goto out;
    for (size_t i = 0; i < st->n; i++) {
        int ch = 0;
        if (L[i].group != group && L[i].group >= G_BLOCK1 && L[i].group <= G_BLOCK4) {
            list[0] = i - 1; /* the block's input: what the layer before it wrote */
            nlist = 1;
        }
        group = L[i].group;
        if (L[i].kind == FB_LAYER_CONCAT) {
            if (nlist > FB_CONV_CONCAT_MAX) {
                st_ = FB_ERR_INTERNAL;
                goto out;
            }
            st->piece_at[i] = npieces;
            st->npieces[i] = nlist;
            for (size_t j = 0; j < nlist; j++) {
                st->pieces[npieces++] = list[j];
                ch += L[list[j]].k;
                last[list[j]] = i;
            }
            if (ch != L[i].c) { /* the layer list and this wiring disagree */
                st_ = FB_ERR_INTERNAL;
                goto out;
            }
        } else if (i > 0) {
            last[i - 1] = i;
        }
        if (L[i].kind == FB_LAYER_CONV && L[i].r == 3 && nlist > 0)
            list[nlist++] = i;
    }
    for (size_t i = 0; i < st->n; i++) {
        if (L[i].kind == FB_LAYER_CONCAT)
            for (size_t j = 0; j < st->npieces[i]; j++)
                st->piece_acc[st->piece_at[i] + j] = last[st->pieces[st->piece_at[i] + j]] != i;
        else if (i > 0)
            st->acc[i] = last[i - 1] != i;
    }
    st_ = FB_OK;
out:
    free(list);
    free(last);
    return st_;
}

/* Uniform values in [-scale, scale), packed to prec, copied into device buffer dst. */
static fb_status upload(struct fb_densenet_step *st, void *dst, size_t n, enum fb_conv_prec prec,
                        float scale, float offset, uint32_t seed, float *host, void *bits)
{
    uint32_t x = seed * 2654435761u + 12345u;
    fb_status s;

    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        host[i] = offset + scale * (float)((double)(x >> 8) / 8388608.0 - 1.0);
    }
    fb_conv_pack(prec, host, bits, n);
    if ((s = st->be->copy(dst, bits, n * fb_conv_prec_size(prec), FB_COPY_H2D, st->s)) != FB_OK)
        return s;
    /* the host buffers are reused by the next upload */
    return st->be->stream_sync(st->s);
}

static size_t zmax(size_t a, size_t b) { return a > b ? a : b; }

/* upload() of n uniform values in [-1, 1) in the step's precision, through host buffers of a
 * few MiB: the reference operands are im2col-sized (hundreds of MiB for the stem). */
static fb_status upload_big(struct fb_densenet_step *st, void *dst, size_t n, uint32_t seed)
{
    enum { CHUNK = 1 << 20 };
    float *host = malloc(CHUNK * sizeof *host);
    void *bits = malloc(CHUNK * 4);
    fb_status s = host && bits ? FB_OK : FB_ERR_NOMEM;

    for (size_t i = 0; i < n && s == FB_OK; i += CHUNK) {
        size_t k = n - i < CHUNK ? n - i : CHUNK;
        s = upload(st, (char *)dst + i * st->es, k, st->prec, 1.0f, 0.0f,
                   seed + (uint32_t)(i / CHUNK), host, bits);
    }
    free(host);
    free(bits);
    return s;
}

static fb_status alloc_ref(struct fb_densenet_step *st)
{
    size_t a = 0, b = 0, c = 0;
    fb_status s;

    for (size_t i = 0; i < st->n; i++) {
        const struct fb_layer *l = &st->d->layers[i];
        struct fb_kconv cv = fb_layer_kconv(l);
        size_t npq = (size_t)cv.n * cv.p * cv.q, nhw = (size_t)cv.n * cv.h * cv.w,
               rsc = (size_t)cv.r * cv.s * cv.c, krs = (size_t)cv.k * cv.r * cv.s;
        if (!fb_layer_is_gemm(l))
            continue;
        /* forward M=npq N=k K=rsc; dgrad M=nhw N=c K=krs; wgrad M=k N=rsc K=npq */
        a = zmax(a, zmax(npq * rsc, zmax(nhw * krs, (size_t)cv.k * npq)));
        b = zmax(b, zmax(rsc * cv.k, zmax(krs * cv.c, npq * rsc)));
        c = zmax(c, zmax(npq * cv.k, zmax(nhw * cv.c, (size_t)cv.k * rsc)));
    }
    /* C is fp32 for weight gradients: 4 bytes whatever prec */
    if ((s = st->be->alloc(FB_MEM_DEVICE, a * st->es, &st->ra)) != FB_OK ||
        (s = st->be->alloc(FB_MEM_DEVICE, b * st->es, &st->rb)) != FB_OK ||
        (s = st->be->alloc(FB_MEM_DEVICE, c * 4, &st->rc)) != FB_OK)
        return s;
    /* Random operands, as the step's own: a GPU multiplying zeros draws less power and holds
     * higher clocks, which made the ceiling a ceiling of idle silicon. Uniform in [-1, 1), so
     * sums over K stay far from fp16's range. */
    if ((s = upload_big(st, st->ra, a, 7001)) != FB_OK)
        return s;
    return upload_big(st, st->rb, b, 7002);
}

/* The next buffer of the memory model's plan (model/memfit.c), allocated: what the step needs
 * here (role, layer, bytes) must be that entry to the byte, or the model and the step have
 * drifted apart and memfit would confirm batches the step cannot hold. */
static fb_status take(struct fb_densenet_step *st, enum fb_memfit_role role, long layer,
                      size_t bytes, void **out)
{
    fb_status s = fb_memfit_take(st->plan, st->nplan, &st->at, role, layer, bytes);
    return s != FB_OK ? s : st->be->alloc(FB_MEM_DEVICE, bytes, out);
}

static fb_status alloc_train(struct fb_densenet_step *st)
{
    const struct fb_layer *L = st->d->layers;
    const struct fb_backend *be = st->be;
    const struct fb_memfit_config mc = {st->d->resolution, st->d->classes, (int)st->es, 0, 4};
    size_t big = 0, maxc = 0, maxin = 0, image, n = st->n;
    float *host = NULL;
    void *bits = NULL;
    fb_status s = FB_ERR_NOMEM;

    if (!(st->out = calloc(n, sizeof *st->out)) || !(st->grad = calloc(n, sizeof *st->grad)) ||
        !(st->w = calloc(n, sizeof *st->w)) || !(st->dw = calloc(n, sizeof *st->dw)) ||
        !(st->gamma = calloc(n, sizeof *st->gamma)) || !(st->beta = calloc(n, sizeof *st->beta)) ||
        !(st->dgamma = calloc(n, sizeof *st->dgamma)) ||
        !(st->dbeta = calloc(n, sizeof *st->dbeta)) ||
        !(st->mean_var = calloc(n, sizeof *st->mean_var)) ||
        !(st->ready = calloc(n, sizeof *st->ready)))
        goto out;
    if ((s = wire(st)) != FB_OK ||
        (s = fb_memfit_plan(&mc, st->d->batch, FB_MEMFIT_NET, &st->plan, &st->nplan)) != FB_OK)
        goto out;
    for (size_t i = 0; i < n; i++) {
        size_t e = fb_layer_out_elements(&L[i]);
        big = e > big ? e : big;
        maxin = fb_layer_in_elements(&L[i]) > maxin ? fb_layer_in_elements(&L[i]) : maxin;
        big = L[i].params > big ? L[i].params : big;
        maxc = (size_t)L[i].c > maxc ? (size_t)L[i].c : maxc;
    }
    big = maxin > big ? maxin : big;
    s = FB_ERR_NOMEM;
    if (!(host = malloc(big * sizeof *host)) || !(bits = malloc(big * 4)))
        goto out;
    image = fb_layer_in_elements(&L[0]);
    if ((s = take(st, FB_BUF_IMAGE, -1, image * st->es, &st->image)) != FB_OK ||
        (s = upload(st, st->image, image, st->prec, 1.0f, 0.0f, 1, host, bits)) != FB_OK ||
        (s = take(st, FB_BUF_BN_SCRATCH, -1, 2 * maxc * sizeof(float),
                  (void **)&st->bn_scratch)) != FB_OK ||
        /* tmp holds one layer's input gradient: the largest input */
        (s = take(st, FB_BUF_TMP, -1, maxin * st->es, &st->tmp)) != FB_OK ||
        (s = be->event_create(&st->bwd_start)) != FB_OK)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const struct fb_layer *l = &L[i];
        size_t e = fb_layer_out_elements(l), c = (size_t)l->c;
        long li = (long)i;
        if ((s = take(st, FB_BUF_OUT, li, e * st->es, &st->out[i])) != FB_OK ||
            (s = take(st, FB_BUF_GRAD, li, e * st->es, &st->grad[i])) != FB_OK)
            goto out;
        if (fb_layer_is_gemm(l)) {
            size_t we = fb_layer_weight_elements(l);
            /* variance 1/fan_in: activations keep their scale from layer to layer */
            float scale = sqrtf(3.0f * (float)l->k / (float)we);
            if ((s = take(st, FB_BUF_W, li, we * st->es, &st->w[i])) != FB_OK ||
                (s = take(st, FB_BUF_DW, li, we * sizeof(float), (void **)&st->dw[i])) != FB_OK ||
                (s = upload(st, st->w[i], we, st->prec, scale, 0.0f, 100 + (uint32_t)i, host,
                            bits)) != FB_OK ||
                (s = be->event_create(&st->ready[i])) != FB_OK)
                goto out;
        } else if (l->kind == FB_LAYER_NORM) {
            /* PyTorch's initial BatchNorm: weight 1, bias 0 */
            if ((s = take(st, FB_BUF_GAMMA, li, c * 4, (void **)&st->gamma[i])) != FB_OK ||
                (s = take(st, FB_BUF_BETA, li, c * 4, (void **)&st->beta[i])) != FB_OK ||
                (s = take(st, FB_BUF_DGAMMA, li, c * 4, (void **)&st->dgamma[i])) != FB_OK ||
                (s = take(st, FB_BUF_DBETA, li, c * 4, (void **)&st->dbeta[i])) != FB_OK ||
                (s = take(st, FB_BUF_MEAN_VAR, li, 2 * c * 4, (void **)&st->mean_var[i])) !=
                    FB_OK ||
                (s = upload(st, st->gamma[i], c, FB_CONV_FP32, 0.0f, 1.0f, 0, host, bits)) !=
                    FB_OK ||
                (s = upload(st, st->beta[i], c, FB_CONV_FP32, 0.0f, 0.0f, 0, host, bits)) !=
                    FB_OK ||
                (s = be->event_create(&st->ready[i])) != FB_OK)
                goto out;
        }
    }
    if ((s = fb_memfit_took_all(st->plan, st->nplan, st->at)) != FB_OK)
        goto out;
    /* The loss gradient by the logits: small, as a mean over the batch makes it. */
    s = upload(st, st->grad[n - 1], fb_layer_out_elements(&L[n - 1]), st->prec,
               1.0f / (float)L[n - 1].n, 0.0f, 7, host, bits);
out:
    free(host);
    free(bits);
    free(st->plan); /* taken: what the step holds is its buffers */
    st->plan = NULL;
    st->nplan = st->at = 0;
    return s;
}

fb_status fb_densenet_step_create(const struct fb_densenet_layers *d, const struct fb_backend *be,
                                  const struct fb_conv_engine *eng, struct fb_conv_ctx *ctx,
                                  enum fb_conv_prec prec, unsigned what, struct fb_stream *s,
                                  struct fb_densenet_step **out)
{
    struct fb_densenet_step *st = calloc(1, sizeof *st);
    fb_status rc = FB_ERR_NOMEM;

    *out = NULL;
    if (!st)
        return rc;
    *st = (struct fb_densenet_step){.d = d, .be = be, .eng = eng, .ctx = ctx, .s = s,
                                    .prec = prec, .es = fb_conv_prec_size(prec), .what = what,
                                    .n = d->nlayers};
    if ((what & FB_STEP_WITH_TRAIN) && (rc = alloc_train(st)) != FB_OK)
        goto fail;
    if ((what & FB_STEP_WITH_REF) && (rc = alloc_ref(st)) != FB_OK)
        goto fail;
    *out = st;
    return FB_OK;
fail:
    fb_densenet_step_free(st);
    return rc;
}

fb_status fb_densenet_step_use_stream(struct fb_densenet_step *st, struct fb_stream *s)
{
    const struct fb_backend *be = st->be;
    fb_status rc = FB_OK;

    st->s = s;
    if (!st->ready)
        return FB_OK;
    be->event_destroy(st->bwd_start);
    st->bwd_start = NULL;
    for (size_t i = 0; i < st->n; i++)
        if (st->ready[i]) {
            be->event_destroy(st->ready[i]);
            st->ready[i] = NULL;
            if (rc == FB_OK)
                rc = be->event_create(&st->ready[i]);
        }
    return rc == FB_OK ? be->event_create(&st->bwd_start) : rc;
}

/* Concatenation layer i in one engine call (one kernel on cuda): its pieces into its output,
 * or (split) its gradient back into the pieces' gradients. */
static fb_status concat(struct fb_densenet_step *st, size_t i, bool split, size_t rows)
{
    void *pieces[FB_CONV_CONCAT_MAX];
    size_t widths[FB_CONV_CONCAT_MAX], n = st->npieces[i];
    bool acc[FB_CONV_CONCAT_MAX];

    for (size_t j = 0; j < n; j++) {
        size_t p = st->pieces[st->piece_at[i] + j];
        pieces[j] = split ? st->grad[p] : st->out[p];
        widths[j] = (size_t)st->d->layers[p].k;
        acc[j] = split && st->piece_acc[st->piece_at[i] + j];
    }
    return st->eng->concat(st->ctx, split, split ? st->grad[i] : st->out[i],
                           (size_t)st->d->layers[i].c, pieces, widths, acc, n, rows, st->s);
}

static fb_status forward(struct fb_densenet_step *st, size_t i, bool convs_only)
{
    const struct fb_layer *l = &st->d->layers[i];
    struct fb_kconv cv = fb_layer_kconv(l);
    const void *x = i == 0 ? st->image : st->out[i - 1];
    size_t rows = (size_t)l->n * l->h * l->w;

    if (convs_only && !fb_layer_is_gemm(l))
        return FB_OK;
    switch (l->kind) {
    case FB_LAYER_CONV:
    case FB_LAYER_LINEAR:
        return st->eng->conv(st->ctx, &cv, FB_CONV_FWD, x, st->w[i], st->out[i], st->s);
    case FB_LAYER_NORM:
        return st->eng->bn_relu_fwd(st->ctx, x, st->out[i], rows, l->c, st->gamma[i],
                                    st->beta[i], st->mean_var[i], st->s);
    case FB_LAYER_CONCAT:
        return concat(st, i, false, rows);
    case FB_LAYER_MAXPOOL:
        return st->eng->pool_fwd(st->ctx, FB_POOL_MAX, &cv, x, st->out[i], st->s);
    default: /* average pools: a transition's, and the global one */
        return st->eng->pool_fwd(st->ctx, FB_POOL_AVG, &cv, x, st->out[i], st->s);
    }
}

static fb_status backward(struct fb_densenet_step *st, size_t i, bool convs_only)
{
    const struct fb_layer *l = &st->d->layers[i];
    struct fb_kconv cv = fb_layer_kconv(l);
    const void *x = i == 0 ? st->image : st->out[i - 1];
    /* the input's gradient: straight into place, or added to what a later reader wrote */
    void *dx = i == 0 ? NULL : st->acc[i] ? st->tmp : st->grad[i - 1];
    size_t rows = (size_t)l->n * l->h * l->w;
    fb_status s = FB_OK;

    if (convs_only && !fb_layer_is_gemm(l))
        return FB_OK;
    switch (l->kind) {
    case FB_LAYER_CONV:
    case FB_LAYER_LINEAR:
        if (dx && (s = st->eng->conv(st->ctx, &cv, FB_CONV_DGRAD, st->grad[i], st->w[i], dx,
                                     st->s)) != FB_OK)
            return s;
        if ((s = st->eng->conv(st->ctx, &cv, FB_CONV_WGRAD, x, st->grad[i], st->dw[i], st->s)) !=
                FB_OK ||
            (s = ready(st, i)) != FB_OK)
            return s;
        break;
    case FB_LAYER_NORM:
        if ((s = st->eng->bn_relu_bwd(st->ctx, x, st->out[i], st->grad[i], dx, rows, l->c,
                                      st->gamma[i], st->mean_var[i], st->dgamma[i], st->dbeta[i],
                                      st->bn_scratch, st->s)) != FB_OK ||
            (s = ready(st, i)) != FB_OK)
            return s;
        break;
    case FB_LAYER_CONCAT:
        /* torch.cat's gradient: each piece gets its slice of channels */
        return concat(st, i, true, rows);
    case FB_LAYER_MAXPOOL:
        s = st->eng->pool_bwd(st->ctx, FB_POOL_MAX, &cv, x, st->grad[i], dx, st->s);
        break;
    default:
        s = st->eng->pool_bwd(st->ctx, FB_POOL_AVG, &cv, x, st->grad[i], dx, st->s);
        break;
    }
    if (s == FB_OK && dx && st->acc[i])
        s = st->eng->copy2d(st->ctx, st->grad[i - 1], (size_t)l->c, st->tmp, (size_t)l->c, rows,
                            (size_t)l->c, true, st->s);
    return s;
}

/* The GEMMs of layer i through the vendor BLAS, with the shapes of conv_gemm.h's views. */
static fb_status reference(struct fb_densenet_step *st, size_t i, unsigned pass)
{
    const struct fb_layer *l = &st->d->layers[i];
    struct fb_kconv cv = fb_layer_kconv(l);
    int npq = cv.n * cv.p * cv.q, nhw = cv.n * cv.h * cv.w, rsc = cv.r * cv.s * cv.c,
        krs = cv.k * cv.r * cv.s;
    fb_status s;

    if (!fb_layer_is_gemm(l))
        return FB_OK;
    if (pass == FB_STEP_FWD)
        return st->eng->gemm_ref(st->ctx, npq, cv.k, rsc, st->ra, st->rb, st->rc, false, st->s);
    if (i > 0 && (s = st->eng->gemm_ref(st->ctx, nhw, cv.c, krs, st->ra, st->rb, st->rc, false,
                                        st->s)) != FB_OK)
        return s;
    return st->eng->gemm_ref(st->ctx, cv.k, rsc, npq, st->ra, st->rb, st->rc, true, st->s);
}

fb_status fb_densenet_step_run(struct fb_densenet_step *st, enum fb_step_mode mode, int group,
                               unsigned passes)
{
    const struct fb_layer *L = st->d->layers;
    bool convs_only = mode == FB_STEP_CONVS;
    fb_status s = FB_OK;

    if (mode == FB_STEP_REF ? !(st->what & FB_STEP_WITH_REF) : !(st->what & FB_STEP_WITH_TRAIN))
        return FB_ERR_USAGE;
    if (mode == FB_STEP_REF && st->eng->ref_missing(st->ctx))
        return FB_ERR_UNSUPPORTED;
    for (size_t i = 0; (passes & FB_STEP_FWD) && i < st->n && s == FB_OK; i++)
        if (in_group(&L[i], group))
            s = mode == FB_STEP_REF ? reference(st, i, FB_STEP_FWD) : forward(st, i, convs_only);
    if (s != FB_OK || !(passes & FB_STEP_BWD))
        return s;
    if (mode != FB_STEP_REF && (s = st->be->event_record(st->bwd_start, st->s)) != FB_OK)
        return s;
    for (size_t i = st->n; i-- > 0 && s == FB_OK;)
        if (in_group(&L[i], group))
            s = mode == FB_STEP_REF ? reference(st, i, FB_STEP_BWD) : backward(st, i, convs_only);
    return s;
}

size_t fb_densenet_step_grad_ready(const struct fb_densenet_step *st, struct fb_grad_ready *out,
                                   size_t cap)
{
    size_t k = 0;

    if (!(st->what & FB_STEP_WITH_TRAIN))
        return 0;
    for (size_t i = st->n; i-- > 0;) {
        const struct fb_layer *l = &st->d->layers[i];
        double us = 0.0;
        if (!st->ready[i])
            continue;
        if (k < cap) {
            if (st->be->event_elapsed_us(st->bwd_start, st->ready[i], &us) != FB_OK)
                us = NAN;
            out[k] = (struct fb_grad_ready){
                .layer = i, .tensors = l->kind == FB_LAYER_NORM ? 2 : 1,
                .params = l->kind == FB_LAYER_LINEAR ? (size_t)l->k * l->c : l->params, .us = us};
        }
        k++;
    }
    return k;
}

static fb_status count_nonfinite(struct fb_densenet_step *st, const void *buf, size_t n,
                                 enum fb_conv_prec prec, size_t *bad)
{
    size_t es = fb_conv_prec_size(prec);
    void *bits = malloc(n * es);
    float *v = malloc(n * sizeof *v);
    fb_status s = FB_ERR_NOMEM;

    if (!bits || !v)
        goto out;
    if ((s = st->be->copy(bits, buf, n * es, FB_COPY_D2H, st->s)) != FB_OK ||
        (s = st->be->stream_sync(st->s)) != FB_OK)
        goto out;
    fb_conv_unpack(prec, bits, v, n);
    for (size_t i = 0; i < n; i++)
        *bad += !isfinite(v[i]);
out:
    free(bits);
    free(v);
    return s;
}

fb_status fb_densenet_step_nonfinite(struct fb_densenet_step *st, int group, unsigned passes,
                                     size_t *bad)
{
    const struct fb_layer *L = st->d->layers;
    size_t last = 0, first_gemm = st->n;
    fb_status s = FB_OK;

    *bad = 0;
    if (!(st->what & FB_STEP_WITH_TRAIN))
        return FB_ERR_USAGE;
    for (size_t i = 0; i < st->n; i++)
        if (in_group(&L[i], group)) {
            last = i;
            if (fb_layer_is_gemm(&L[i]) && first_gemm == st->n)
                first_gemm = i;
        }
    if (passes & FB_STEP_FWD)
        s = count_nonfinite(st, st->out[last], fb_layer_out_elements(&L[last]), st->prec, bad);
    if (s == FB_OK && (passes & FB_STEP_BWD) && first_gemm < st->n) {
        const struct fb_layer *l = &L[first_gemm];
        size_t we = fb_layer_weight_elements(l);
        s = count_nonfinite(st, st->dw[first_gemm], we, FB_CONV_FP32, bad);
    }
    return s;
}

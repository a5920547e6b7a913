/* The generators of the shipped mixes (mix_gen.h) and the shipped files' exact text. */
#include "mix_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "densenet.h"
#include "fusion.h"
#include "mix_layers.h"
#include "units.h"

fb_status fb_mix_densenet_horovod(int classes, enum fb_dtype dtype, size_t threshold,
                                  struct fb_mix *out)
{
    struct fb_densenet d = {0};
    size_t *el = NULL;
    fb_status st;

    *out = (struct fb_mix){0};
    if ((st = fb_densenet121(classes, &d)) != FB_OK)
        return st;
    if (!(el = calloc(d.ntensors ? d.ntensors : 1, sizeof *el))) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    /* the model lists its tensors in gradient-ready order already */
    for (size_t i = 0; i < d.ntensors; i++)
        el[i] = d.tensors[i].elements;
    st = fb_mix_horovod(el, d.ntensors, dtype, threshold, out);
out:
    free(el);
    fb_densenet_free(&d);
    return st;
}

fb_status fb_mix_horovod(const size_t *elements, size_t n, enum fb_dtype dtype,
                         size_t threshold, struct fb_mix *out)
{
    struct fb_bucket *b = NULL;
    size_t nb = 0;
    fb_status st;

    *out = (struct fb_mix){0};
    for (size_t i = 0; i < n; i++)
        if (elements[i] == 0)
            return FB_ERR_USAGE;
    if ((st = fb_fusion_plan_sizes(elements, n, fb_dtype_size(dtype), threshold, &b, &nb)) !=
        FB_OK)
        return st;
    for (size_t i = 0; i < nb && st == FB_OK; i++) {
        struct fb_mix_op op = {.coll = FB_MIX_ALLREDUCE, .dtype = dtype,
                               .bytes = b[i].elements * fb_dtype_size(dtype)};
        snprintf(op.name, sizeof op.name, "bucket%zu", i);
        st = fb_mix_add(out, &op);
    }
    free(b);
    if (st != FB_OK)
        fb_mix_free(out);
    return st;
}

fb_status fb_mix_ddp(const size_t *elements, size_t n, enum fb_dtype dtype, size_t first,
                     size_t cap, struct fb_mix *out)
{
    size_t es = fb_dtype_size(dtype), bytes = 0, t;
    fb_status st = FB_OK;

    *out = (struct fb_mix){0};
    if (first == 0 || cap == 0)
        return FB_ERR_USAGE;
    for (size_t i = 0; i < n && st == FB_OK; i++) {
        if (elements[i] == 0 || !fb_size_mul(elements[i], es, &t) ||
            !fb_size_add(bytes, t, &bytes) || bytes > FB_MIX_MAX_BYTES) {
            st = FB_ERR_USAGE;
            break;
        }
        /* the Reducer closes a bucket once it reaches its limit, this tensor in it */
        if (bytes >= (out->nops == 0 ? first : cap) || i + 1 == n) {
            struct fb_mix_op op = {.coll = FB_MIX_ALLREDUCE, .dtype = dtype, .bytes = bytes};
            snprintf(op.name, sizeof op.name, "bucket%zu", out->nops);
            st = fb_mix_add(out, &op);
            bytes = 0;
        }
    }
    if (st != FB_OK)
        fb_mix_free(out);
    return st;
}

fb_status fb_mix_fsdp(const size_t *elements, const char *const *names, size_t n,
                      enum fb_dtype dtype, struct fb_mix *out)
{
    fb_status st = FB_OK;

    *out = (struct fb_mix){0};
    for (size_t i = 0; i < n; i++)
        if (elements[i] == 0)
            return FB_ERR_USAGE;
    /* forward: unit 0 first; backward: the last unit first, gathered then its grads scattered */
    for (size_t k = 0; k < 3 * n && st == FB_OK; k++) {
        size_t i = k < n ? k : n - 1 - (k - n) / 2;
        bool fwd = k < n, grad = !fwd && (k - n) % 2 == 1;
        struct fb_mix_op op = {.coll = grad ? FB_MIX_REDUCE_SCATTER : FB_MIX_ALLGATHER,
                               .dtype = dtype, .bytes = elements[i] * fb_dtype_size(dtype)};
        char unit[32];
        snprintf(unit, sizeof unit, "unit%zu", i);
        snprintf(op.name, sizeof op.name, "%s.%.*s", fwd ? "fwd" : grad ? "grad" : "bwd",
                 (int)FB_MIX_LAYER_NAME,
                 names && names[i] ? names[i] : unit);
        st = fb_mix_add(out, &op);
    }
    if (st != FB_OK)
        fb_mix_free(out);
    return st;
}

fb_status fb_mix_moe(size_t layers, size_t tokens, size_t hidden, size_t topk,
                     enum fb_dtype dtype, struct fb_mix *out)
{
    size_t bytes = tokens * hidden * topk * fb_dtype_size(dtype);
    fb_status st = FB_OK;

    *out = (struct fb_mix){0};
    if (!layers || !tokens || !hidden || !topk)
        return FB_ERR_USAGE;
    for (size_t k = 0; k < 4 * layers && st == FB_OK; k++) {
        bool fwd = k < 2 * layers;
        size_t i = fwd ? k / 2 : layers - 1 - (k - 2 * layers) / 2;
        /* forward dispatches then combines; backward runs the combine's gradient first */
        bool dispatch = fwd ? k % 2 == 0 : k % 2 == 1;
        struct fb_mix_op op = {.coll = FB_MIX_ALLTOALL, .dtype = dtype, .bytes = bytes};
        snprintf(op.name, sizeof op.name, "%s%zu.%s", fwd ? "fwd" : "bwd", i,
                 dispatch ? "dispatch" : "combine");
        st = fb_mix_add(out, &op);
    }
    if (st != FB_OK)
        fb_mix_free(out);
    return st;
}

const char *const fb_mix_shipped_names[] = {"densenet121-horovod", "gpt2-124m-fsdp",
                                            "mixtral-8x7b-moe", NULL};

/* GPT-2 small (124,439,808 parameters) wrapped as FSDP wraps a transformer: one unit per block
 * (ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj with biases: 7,087,872) and the
 * root unit with what is left (wte 50257 x 768, wpe 1024 x 768, ln_f: 39,385,344). */
enum { GPT2_BLOCKS = 12 };

static fb_status gpt2_fsdp(struct fb_mix *m)
{
    size_t el[GPT2_BLOCKS + 1];
    const char *names[GPT2_BLOCKS + 1];
    char block[GPT2_BLOCKS][16];

    el[0] = 50257u * 768u + 1024u * 768u + 2u * 768u;
    names[0] = "root";
    for (int i = 0; i < GPT2_BLOCKS; i++) {
        el[i + 1] = 2u * 768u + (768u * 2304u + 2304u) + (768u * 768u + 768u) + 2u * 768u +
                    (768u * 3072u + 3072u) + (3072u * 768u + 768u);
        snprintf(block[i], sizeof block[i], "h%d", i);
        names[i + 1] = block[i];
    }
    return fb_mix_fsdp(el, names, GPT2_BLOCKS + 1, FB_DTYPE_FLOAT16, m);
}

static const char densenet_header[] =
    "densenet121-horovod: DenseNet-121's gradient exchange (14 classes, CheXNet: 6,968,206\n"
    "parameters in 364 tensors), fused the way Horovod fuses it: tensors in gradient-ready\n"
    "order, greedily into buffers of at most 4 MiB (float32). Horovod's default threshold\n"
    "(64 MiB to 0.20, 128 MiB since) puts the whole model into one buffer; a real run splits\n"
    "it by its cycle time (1-5 ms) instead, which 4 MiB stands in for.\n"
    "Generated by fb_mix_densenet_horovod (harness/mix/mix_gen.c) from harness/model's\n"
    "DenseNet-121 and fusion plan; the test mix_shipped checks this file against it\n"
    "(FB_UPDATE_GOLDEN=1 rewrites it).";

static const char fsdp_header[] =
    "gpt2-124m-fsdp: one FSDP step (ZeRO-3) of GPT-2 small, 124,439,808 parameters in 13 FSDP\n"
    "units (12 transformer blocks h0..h11 of 7,087,872 and the root unit: embeddings and the\n"
    "final layer norm, 39,385,344), parameters and gradients in 16-bit (float16 here, the bytes\n"
    "of bfloat16): forward all-gathers each unit, backward all-gathers it again and\n"
    "reduce-scatters its gradients, last unit first. Sizes: each rank's whole unit (the\n"
    "all-gathered buffer), as nccl-tests' size column.\n"
    "Generated by fb_mix_fsdp (harness/mix/mix_gen.c); the test mix_shipped checks it.";

static const char moe_header[] =
    "mixtral-8x7b-moe: the expert-parallel all-to-alls of one step of a Mixtral-8x7B-shaped\n"
    "mixture of experts: 32 MoE layers, hidden size 4096, top-2 routing, 4096 tokens per rank\n"
    "(one sequence of 4096), 16-bit activations (float16). Per layer: forward dispatch and\n"
    "combine, backward the combine's gradient then the dispatch's, last layer first. Each\n"
    "all-to-all sends tokens x top-k x hidden elements per rank (64 MiB).\n"
    "Generated by fb_mix_moe (harness/mix/mix_gen.c); the test mix_shipped checks it.";

fb_status fb_mix_shipped(const char *name, char **text)
{
    struct fb_mix m = {0};
    const char *header;
    fb_status st;

    *text = NULL;
    if (strcmp(name, "densenet121-horovod") == 0) {
        header = densenet_header;
        st = fb_mix_densenet_horovod(14, FB_DTYPE_FLOAT32, (size_t)4 << 20, &m);
    } else if (strcmp(name, "gpt2-124m-fsdp") == 0) {
        header = fsdp_header;
        st = gpt2_fsdp(&m);
    } else if (strcmp(name, "mixtral-8x7b-moe") == 0) {
        header = moe_header;
        st = fb_mix_moe(32, 4096, 4096, 2, FB_DTYPE_FLOAT16, &m);
    } else {
        return FB_ERR_USAGE;
    }
    if (st == FB_OK)
        st = fb_mix_format(&m, header, text);
    fb_mix_free(&m);
    return st;
}

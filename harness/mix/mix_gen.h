/* The generators of the shipped mixes (profiles/mixes/): DenseNet-121's gradient buckets under
 * Horovod's fusion (the model's own plan, fusion.c), an FSDP step of a model given by its
 * layer sizes, and a mixture-of-experts step's all-to-alls. The shipped files are these
 * functions' output (fb_mix_shipped), which a test compares byte for byte. */
#ifndef FB_MIX_GEN_H
#define FB_MIX_GEN_H

#include <stddef.h>

#include "mix.h"

/* One all-reduce per fusion bucket of DenseNet-121 (`classes` outputs), greedy in
 * gradient-ready order up to `threshold` bytes (fb_fusion_plan), named "bucketN". *out is
 * empty on entry; FB_ERR_NOMEM (emptied). */
fb_status fb_mix_densenet_horovod(int classes, enum fb_dtype dtype, size_t threshold,
                                  struct fb_mix *out);

/* The same for any model: one all-reduce per fusion bucket ("bucketN") of the gradient tensors
 * elements[0..n), given in gradient-ready order (backward: the last layer's first), fused
 * greedily up to `threshold` bytes (fb_fusion_plan_sizes; FB_FUSION_OFF: one per tensor).
 * FB_ERR_USAGE for a tensor of 0 elements; FB_ERR_NOMEM (emptied). */
fb_status fb_mix_horovod(const size_t *elements, size_t n, enum fb_dtype dtype,
                         size_t threshold, struct fb_mix *out);

/* PyTorch DistributedDataParallel's gradient buckets, as its Reducer has them from the second
 * iteration on (rebuilt in the order the gradients became ready in the first): the tensors
 * elements[0..n) in gradient-ready order (backward: the last layer's first) join the open
 * bucket one by one, and a bucket closes as soon as it holds `first` bytes or more for the
 * first bucket, `cap` bytes or more for every later one (DDP's first_bucket_bytes, 1 MiB, and
 * bucket_cap_mb, 25 MiB, by default); the last bucket holds what is left. A bucket may thus
 * pass its limit by its last tensor, unlike Horovod's fusion. One all-reduce per bucket,
 * "bucketN". FB_ERR_USAGE for a tensor of 0 elements, a zero limit or a bucket of more than
 * FB_MIX_MAX_BYTES; FB_ERR_NOMEM (emptied). */
fb_status fb_mix_ddp(const size_t *elements, size_t n, enum fb_dtype dtype, size_t first,
                     size_t cap, struct fb_mix *out);

/* A fully-sharded data-parallel step (PyTorch FSDP, ZeRO-3) of a model whose FSDP units hold
 * elements[0..n) parameters, in forward order: forward all-gathers each unit's parameters
 * (unit 0 first, "fwd.NAME"); backward, from the last unit to the first, all-gathers them again
 * ("bwd.NAME", resharded after forward) then reduce-scatters the unit's gradients
 * ("grad.NAME"). names[i] names unit i (NULL: "unitI"). Each op's bytes are the unit's
 * elements in dtype. FB_ERR_USAGE for a unit of 0 elements; FB_ERR_NOMEM. */
fb_status fb_mix_fsdp(const size_t *elements, const char *const *names, size_t n,
                      enum fb_dtype dtype, struct fb_mix *out);

/* A mixture-of-experts step's expert-parallel all-to-alls: forward, per MoE layer in order, a
 * dispatch (tokens to their experts, "fwdI.dispatch") and a combine ("fwdI.combine"); backward,
 * from the last layer, the combine's gradient then the dispatch's ("bwdI.combine",
 * "bwdI.dispatch"). Each all-to-all moves tokens * topk * hidden elements of dtype per rank.
 * FB_ERR_USAGE for a zero argument; FB_ERR_NOMEM. */
fb_status fb_mix_moe(size_t layers, size_t tokens, size_t hidden, size_t topk,
                     enum fb_dtype dtype, struct fb_mix *out);

/* The shipped mixes, by file name without ".mix": "densenet121-horovod", "gpt2-124m-fsdp",
 * "mixtral-8x7b-moe". *text is the file's whole text (malloc'ed). FB_ERR_USAGE for another
 * name; FB_ERR_NOMEM. */
fb_status fb_mix_shipped(const char *name, char **text);
/* The shipped names, NULL-terminated. */
extern const char *const fb_mix_shipped_names[];

#endif

/* Data types and the data pattern shared by host code and CUDA kernels.
 * Every buffer a benchmark moves is filled with a pattern whose expected value at any index is
 * known in closed form, so one check serves copies (the sender's values) and sum reductions
 * (n times the base plus a rank offset) on the host and on the GPU alike. Values are small
 * integers (|value| <= 11 n for a sum of n ranks), exact in float32, float64 and int32 for up to
 * a million ranks; float16 (IEEE binary16) is exact only for integers up to 2048 in magnitude,
 * so float16 sums are checked exactly for up to 186 ranks (11 * 186 = 2046). */
#ifndef FB_PATTERN_H
#define FB_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define FB_HD __host__ __device__
#else
#define FB_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* FB_DTYPE_FLOAT16 is IEEE binary16 (CUDA __half, NCCL ncclFloat16); host code handles its
 * 16-bit patterns through harness/core/half.h, since C11 has no half type. New types go before
 * FB_DTYPE_COUNT so existing values never change. */
enum fb_dtype {
    FB_DTYPE_FLOAT32,
    FB_DTYPE_FLOAT64,
    FB_DTYPE_INT32,
    FB_DTYPE_FLOAT16,
    FB_DTYPE_INT8, /* copies verified byte by byte (p2p); too narrow for sums of many ranks */
    FB_DTYPE_COUNT
};

/* expect(i) = scale * base(seed, i) + offset. scale = 0 gives a constant (a poison value). */
struct fb_pattern {
    uint32_t seed;
    int32_t scale;
    int64_t offset;
};

/* A value in [-8, 8] that changes with the index and the seed (a murmur-style mix, so a
 * different seed or a shifted index gives different data almost everywhere). */
static inline FB_HD int32_t fb_pattern_base32(uint32_t lo, uint32_t add)
{
    uint32_t h = lo * 2654435761u + add;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return (int32_t)(h % 17u) - 8;
}

/* What fb_pattern_base32 adds to the index's low 32 bits: the high ones and the seed. A run of
 * indices with the same high bits shares it (host loops use that to run in 32-bit lanes). */
static inline FB_HD uint32_t fb_pattern_add(uint32_t seed, size_t i)
{
    return (uint32_t)((uint64_t)i >> 32) + seed * 0x85ebca6bu;
}

static inline FB_HD int32_t fb_pattern_base(uint32_t seed, size_t i)
{
    return fb_pattern_base32((uint32_t)i, fb_pattern_add(seed, i));
}

/* A rank's own offset, in [-3, 3], so that ranks send different data. */
static inline FB_HD int32_t fb_pattern_rank_offset(int rank) { return rank % 7 - 3; }

static inline FB_HD int64_t fb_pattern_expect(struct fb_pattern p, size_t i)
{
    return (int64_t)p.scale * fb_pattern_base(p.seed, i) + p.offset;
}

static inline size_t fb_dtype_size(enum fb_dtype t)
{
    return t == FB_DTYPE_FLOAT64 ? 8 : t == FB_DTYPE_FLOAT16 ? 2 : t == FB_DTYPE_INT8 ? 1 : 4;
}

#ifdef __cplusplus
}
#endif

#endif

/* The pattern's host-side fill and check (kernels/pattern.h), which every backend can rely on:
 * the host backend's fill and check, the staged paths, and the verification of every copy and
 * reduction in host memory.
 * They run over whole buffers (a 1 GiB h2d point is 268 million values, filled twice and checked
 * once per case), so they are written to vectorize: where the pattern's values fit in 32 bits
 * (every pattern the benchmarks use), each run of indices that shares its high 32 bits is filled
 * in 32-bit lanes, and on x86-64 GCC builds an AVX2 copy that the loader picks where the CPU has
 * it. The values are the same as fb_pattern_expect's, element for element (test_pattern checks
 * both paths against it); 0.4-0.7 ns per value against 1.7-2.4 for the one-at-a-time loop
 * (measured 2026-12-04 on the project's 2-core VM, docs/testing.md round seven). */
#include "backend.h"

#include "half.h"

enum { HALF_BLOCK = 256 }; /* halves converted at once (fb_half_from_float_n) */

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define FB_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FB_VECTOR_CLONES
#endif

/* The 32-bit lanes hold scale * base + offset with |base| <= 8 without overflow. */
static bool fits32(struct fb_pattern p)
{
    return p.scale >= -(1 << 27) && p.scale <= (1 << 27) && p.offset > -(1 << 30) &&
           p.offset < (1 << 30);
}

/* The pattern's indices [first, first + count) in runs [i0, i0 + n) that share their high 32
 * bits; k is i0's place in the buffer. */
#define FB_RUNS(BODY)                                                                    \
    for (size_t k = 0, n; k < count; k += n) {                                           \
        const size_t i0 = first + k;                                                     \
        const uint32_t lo = (uint32_t)i0, add = fb_pattern_add(p.seed, i0);              \
        const uint64_t room = (uint64_t)UINT32_MAX - lo + 1;                             \
        n = (uint64_t)(count - k) < room ? count - k : (size_t)room;                     \
        BODY                                                                             \
    }

#define FB_FILL32(T)                                                                     \
    FB_VECTOR_CLONES static void fill32_##T(T *v, size_t first, size_t count,            \
                                            struct fb_pattern p)                         \
    {                                                                                    \
        const int32_t sc = p.scale, off = (int32_t)p.offset;                             \
        FB_RUNS({                                                                        \
            T *o = v + k;                                                                \
            for (size_t j = 0; j < n; j++)                                               \
                o[j] = (T)(sc * fb_pattern_base32(lo + (uint32_t)j, add) + off);         \
        })                                                                               \
    }

#define FB_CHECK32(T)                                                                    \
    FB_VECTOR_CLONES static size_t check32_##T(const T *v, size_t first, size_t count,   \
                                               struct fb_pattern p)                      \
    {                                                                                    \
        const int32_t sc = p.scale, off = (int32_t)p.offset;                             \
        size_t wrong = 0;                                                                \
        FB_RUNS({                                                                        \
            const T *o = v + k;                                                          \
            for (size_t j = 0; j < n; j++)                                               \
                wrong += o[j] != (T)(sc * fb_pattern_base32(lo + (uint32_t)j, add) + off); \
        })                                                                               \
        return wrong;                                                                    \
    }

FB_FILL32(float)
FB_FILL32(double)
FB_FILL32(int32_t)
FB_FILL32(int8_t)
FB_CHECK32(float)
FB_CHECK32(double)
FB_CHECK32(int32_t)
FB_CHECK32(int8_t)

/* Any pattern, one value at a time from fb_pattern_expect. */
#define FB_FILL_LOOP(T)                                                                  \
    do {                                                                                 \
        T *v = buf;                                                                      \
        for (size_t i = 0; i < count; i++)                                               \
            v[i] = (T)fb_pattern_expect(p, first + i);                                   \
    } while (0)

#define FB_CHECK_LOOP(T)                                                                 \
    do {                                                                                 \
        const T *v = buf;                                                                \
        for (size_t i = 0; i < count; i++)                                               \
            wrong += v[i] != (T)fb_pattern_expect(p, first + i);                         \
    } while (0)

void fb_pattern_fill_host_from(void *buf, size_t first, size_t count, enum fb_dtype dtype,
                               struct fb_pattern p)
{
    if (fits32(p)) {
        switch (dtype) {
        case FB_DTYPE_FLOAT32: fill32_float(buf, first, count, p); return;
        case FB_DTYPE_FLOAT64: fill32_double(buf, first, count, p); return;
        case FB_DTYPE_INT32: fill32_int32_t(buf, first, count, p); return;
        case FB_DTYPE_INT8: fill32_int8_t(buf, first, count, p); return;
        default: break;
        }
    }
    switch (dtype) {
    case FB_DTYPE_FLOAT32: FB_FILL_LOOP(float); break;
    case FB_DTYPE_FLOAT64: FB_FILL_LOOP(double); break;
    case FB_DTYPE_INT32: FB_FILL_LOOP(int32_t); break;
    case FB_DTYPE_INT8: FB_FILL_LOOP(int8_t); break;
    case FB_DTYPE_FLOAT16: {
        /* a block of floats at a time, converted at once (F16C where the CPU has it) */
        uint16_t *v = buf;
        float f[HALF_BLOCK];
        for (size_t at = 0, n; at < count; at += n) {
            n = count - at < HALF_BLOCK ? count - at : HALF_BLOCK;
            for (size_t i = 0; i < n; i++)
                f[i] = (float)fb_pattern_expect(p, first + at + i);
            fb_half_from_float_n(v + at, f, n);
        }
        break;
    }
    default: break;
    }
}

size_t fb_pattern_check_host_from(const void *buf, size_t first, size_t count,
                                  enum fb_dtype dtype, struct fb_pattern p)
{
    size_t wrong = 0;

    if (fits32(p)) {
        switch (dtype) {
        case FB_DTYPE_FLOAT32: return check32_float(buf, first, count, p);
        case FB_DTYPE_FLOAT64: return check32_double(buf, first, count, p);
        case FB_DTYPE_INT32: return check32_int32_t(buf, first, count, p);
        case FB_DTYPE_INT8: return check32_int8_t(buf, first, count, p);
        default: break;
        }
    }
    switch (dtype) {
    case FB_DTYPE_FLOAT32: FB_CHECK_LOOP(float); break;
    case FB_DTYPE_FLOAT64: FB_CHECK_LOOP(double); break;
    case FB_DTYPE_INT32: FB_CHECK_LOOP(int32_t); break;
    case FB_DTYPE_INT8: FB_CHECK_LOOP(int8_t); break;
    case FB_DTYPE_FLOAT16: {
        /* Compared as values, like the other types: the expectation rounded to a half, and a
         * NaN is always wrong. */
        const uint16_t *v = buf;
        float got[HALF_BLOCK], want[HALF_BLOCK];
        uint16_t h[HALF_BLOCK];
        for (size_t at = 0, n; at < count; at += n) {
            n = count - at < HALF_BLOCK ? count - at : HALF_BLOCK;
            for (size_t i = 0; i < n; i++)
                want[i] = (float)fb_pattern_expect(p, first + at + i);
            fb_half_from_float_n(h, want, n);
            fb_half_to_float_n(want, h, n);
            fb_half_to_float_n(got, v + at, n);
            for (size_t i = 0; i < n; i++)
                wrong += got[i] != want[i];
        }
        break;
    }
    default: return count;
    }
    return wrong;
}

void fb_pattern_fill_host(void *buf, size_t count, enum fb_dtype dtype, struct fb_pattern p)
{
    fb_pattern_fill_host_from(buf, 0, count, dtype, p);
}

size_t fb_pattern_check_host(const void *buf, size_t count, enum fb_dtype dtype,
                             struct fb_pattern p)
{
    return fb_pattern_check_host_from(buf, 0, count, dtype, p);
}

/* The backend registry and the host-side pattern fill/check that every backend can rely on. */
#include "backend.h"

#include <string.h>

#include "half.h"

const struct fb_backend *const fb_backends[] = {&fb_backend_cuda, &fb_backend_host,
                                                &fb_backend_host_strict, NULL};

const struct fb_backend *fb_backend_find(const char *name)
{
    for (size_t i = 0; fb_backends[i]; i++)
        if (strcmp(fb_backends[i]->name, name) == 0)
            return fb_backends[i];
    return NULL;
}

#define FB_FILL_LOOP(T)                                                                  \
    do {                                                                                 \
        T *v = buf;                                                                      \
        for (size_t i = 0; i < count; i++)                                               \
            v[i] = (T)fb_pattern_expect(p, i);                                           \
    } while (0)

#define FB_CHECK_LOOP(T)                                                                 \
    do {                                                                                 \
        const T *v = buf;                                                                \
        for (size_t i = 0; i < count; i++)                                               \
            wrong += v[i] != (T)fb_pattern_expect(p, i);                                 \
    } while (0)

void fb_pattern_fill_host(void *buf, size_t count, enum fb_dtype dtype, struct fb_pattern p)
{
    switch (dtype) {
    case FB_DTYPE_FLOAT32: FB_FILL_LOOP(float); break;
    case FB_DTYPE_FLOAT64: FB_FILL_LOOP(double); break;
    case FB_DTYPE_INT32: FB_FILL_LOOP(int32_t); break;
    case FB_DTYPE_INT8: FB_FILL_LOOP(int8_t); break;
    case FB_DTYPE_FLOAT16: {
        uint16_t *v = buf;
        for (size_t i = 0; i < count; i++)
            v[i] = fb_half_from_float((float)fb_pattern_expect(p, i));
        break;
    }
    default: break;
    }
}

size_t fb_pattern_check_host(const void *buf, size_t count, enum fb_dtype dtype,
                             struct fb_pattern p)
{
    size_t wrong = 0;

    switch (dtype) {
    case FB_DTYPE_FLOAT32: FB_CHECK_LOOP(float); break;
    case FB_DTYPE_FLOAT64: FB_CHECK_LOOP(double); break;
    case FB_DTYPE_INT32: FB_CHECK_LOOP(int32_t); break;
    case FB_DTYPE_INT8: FB_CHECK_LOOP(int8_t); break;
    case FB_DTYPE_FLOAT16: {
        /* Compared as values, like the other types: the expectation rounded to a half, and a
         * NaN is always wrong. */
        const uint16_t *v = buf;
        for (size_t i = 0; i < count; i++)
            wrong += fb_half_to_float(v[i]) !=
                     fb_half_to_float(fb_half_from_float((float)fb_pattern_expect(p, i)));
        break;
    }
    default: return count;
    }
    return wrong;
}

fb_status fb_sgd_momentum_host(float *w, float *v, const void *g, enum fb_dtype gdtype, size_t n,
                               float lr, float momentum, float scale)
{
    if (gdtype == FB_DTYPE_FLOAT32) {
        const float *gf = g;
        for (size_t i = 0; i < n; i++) {
            v[i] = momentum * v[i] + scale * gf[i];
            w[i] -= lr * v[i];
        }
    } else if (gdtype == FB_DTYPE_FLOAT16) {
        const uint16_t *gh = g;
        for (size_t i = 0; i < n; i++) {
            v[i] = momentum * v[i] + scale * fb_half_to_float(gh[i]);
            w[i] -= lr * v[i];
        }
    } else {
        return FB_ERR_USAGE;
    }
    return FB_OK;
}

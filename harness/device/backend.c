/* The backend registry and the host loop of sgd_momentum (the pattern's host fill and check are
 * in pattern_host.c). */
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

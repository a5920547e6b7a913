/* Stands in for the `cuda` convolution engine in builds without the CUDA kernels
 * (kernels/conv_gemm.cu): it opens nothing and says why. */
#include "conv_engine.h"

#include <stdio.h>

static fb_status stub_open(const struct fb_backend *be, enum fb_conv_prec prec,
                           struct fb_conv_ctx **out, char *why, size_t whylen)
{
    (void)be;
    (void)prec;
    *out = NULL;
    snprintf(why, whylen, "this fabricbench was built without the compute kernels "
             "(kernels/conv_gemm.cu and -DFB_WITH_CUDA=ON)");
    return FB_ERR_NOT_BUILT;
}

static void stub_close(struct fb_conv_ctx *ctx) { (void)ctx; }

static const char *stub_describe(bool ref) { return ref ? "cublas" : "implicit-gemm"; }

const struct fb_conv_engine fb_conv_engine_cuda = {
    .name = "cuda",
    .built = false,
    .open = stub_open,
    .close = stub_close,
    .describe = stub_describe,
};

/* The optimizer update: SGD with momentum over a flat fp32 parameter buffer, as a fused
 * multi-tensor apply runs it. Memory-bound (20 bytes per fp32-gradient weight: read w, v, g,
 * write w, v), so one grid-stride pass with vector loads where the buffers allow. */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "optimizer_kernels.h"

namespace {

const int kThreads = 256;

__device__ __forceinline__ float widen(const float *g, size_t i) { return g[i]; }
__device__ __forceinline__ float widen(const __half *g, size_t i) { return __half2float(g[i]); }

template <typename G>
__global__ void sgd_momentum_kernel(float *__restrict__ w, float *__restrict__ v,
                                    const G *__restrict__ g, size_t n, float lr, float momentum,
                                    float scale)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float vi = momentum * v[i] + scale * widen(g, i);
        v[i] = vi;
        w[i] -= lr * vi;
    }
}

/* Four weights per thread when every buffer is 16-byte aligned (cudaMalloc'ed, offset 0). */
__global__ void sgd_momentum_vec4(float4 *__restrict__ w, float4 *__restrict__ v,
                                  const float4 *__restrict__ g, size_t n4, float lr,
                                  float momentum, float scale)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4;
         i += (size_t)gridDim.x * blockDim.x) {
        float4 wi = w[i], vi = v[i], gi = g[i];
        vi.x = momentum * vi.x + scale * gi.x;
        vi.y = momentum * vi.y + scale * gi.y;
        vi.z = momentum * vi.z + scale * gi.z;
        vi.w = momentum * vi.w + scale * gi.w;
        wi.x -= lr * vi.x;
        wi.y -= lr * vi.y;
        wi.z -= lr * vi.z;
        wi.w -= lr * vi.w;
        v[i] = vi;
        w[i] = wi;
    }
}

unsigned grid_for(size_t n)
{
    size_t blocks = (n + kThreads - 1) / kThreads;
    /* grid-stride beyond this: enough blocks to fill any current GPU several times over */
    return (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks);
}

bool aligned16(const void *p) { return ((size_t)p & 15u) == 0; }

} // namespace

extern "C" int fb_kernel_sgd_momentum(float *w, float *v, const void *g, int g_half, size_t n,
                                      float lr, float momentum, float scale, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;

    if (n == 0)
        return 0;
    (void)cudaGetLastError(); /* this launch's error only */
    if (g_half) {
        sgd_momentum_kernel<__half><<<grid_for(n), kThreads, 0, s>>>(
            w, v, (const __half *)g, n, lr, momentum, scale);
    } else if (n % 4 == 0 && aligned16(w) && aligned16(v) && aligned16(g)) {
        sgd_momentum_vec4<<<grid_for(n / 4), kThreads, 0, s>>>(
            (float4 *)w, (float4 *)v, (const float4 *)g, n / 4, lr, momentum, scale);
    } else {
        sgd_momentum_kernel<float><<<grid_for(n), kThreads, 0, s>>>(
            w, v, (const float *)g, n, lr, momentum, scale);
    }
    return (int)cudaGetLastError();
}

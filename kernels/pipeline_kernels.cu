/* The input pipeline's device kernels: normalization of uint8 batches, and a timed spin that
 * stands for a model's compute. */
#include <cuda_runtime.h>

#include "pipeline_kernels.h"

namespace {

const int kThreads = 256;

struct norm3 {
    float mean[3], inv_std[3];
};

/* Grid-stride over every value; the channel comes from the value's plane. Memory-bound: it
 * reads a byte and writes a float per value. */
__global__ void normalize_kernel(float *dst, const unsigned char *src, size_t total, size_t plane,
                                 norm3 n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        int c = (int)(i / plane % 3);
        dst[i] = ((float)src[i] * (1.0f / 255.0f) - n.mean[c]) * n.inv_std[c];
    }
}

__device__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void busy_kernel(unsigned long long ns)
{
    unsigned long long start = global_ns();
    while (global_ns() - start < ns)
        ;
}

} // namespace

extern "C" int fb_kernel_normalize_u8(float *dst, const unsigned char *src, size_t images,
                                      size_t plane, const float mean[3], const float inv_std[3],
                                      void *stream)
{
    size_t total = images * 3 * plane, blocks = (total + kThreads - 1) / kThreads;
    norm3 n;

    for (int c = 0; c < 3; c++) {
        n.mean[c] = mean[c];
        n.inv_std[c] = inv_std[c];
    }
    if (total == 0)
        return 0;
    (void)cudaGetLastError(); /* this launch's error only */
    normalize_kernel<<<(unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks), kThreads, 0,
                       (cudaStream_t)stream>>>(dst, src, total, plane, n);
    return (int)cudaGetLastError();
}

extern "C" int fb_kernel_busy_wait(double us, void *stream)
{
    if (us <= 0.0)
        return 0;
    (void)cudaGetLastError();
    busy_kernel<<<1, 1, 0, (cudaStream_t)stream>>>((unsigned long long)(us * 1e3));
    return (int)cudaGetLastError();
}

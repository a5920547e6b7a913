/* GPU fill and check kernels for the shared data pattern (kernels/pattern.h). */
#include <mutex>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "pattern_kernels.h"

namespace {

const int kThreads = 256;

unsigned grid_for(size_t count)
{
    size_t blocks = (count + kThreads - 1) / kThreads;
    return (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : (blocks ? blocks : 1));
}

/* How a pattern value becomes an element, and when an element is wrong. Comparing as values
 * matches the host check (harness/device/pattern_host.c): NaN is always wrong. */
template <typename T>
struct elem {
    static __device__ T from(int64_t v) { return (T)v; }
    static __device__ bool differ(T a, T b) { return a != b; }
};

/* __half: one rounding, to nearest even, as fb_half_from_float on the host; compared in float
 * so that no half operators (sm_53+, and off under __CUDA_NO_HALF_OPERATORS__) are needed. */
template <>
struct elem<__half> {
    static __device__ __half from(int64_t v) { return __ll2half_rn((long long)v); }
    static __device__ bool differ(__half a, __half b) { return __half2float(a) != __half2float(b); }
};

template <typename T>
__global__ void fill_kernel(T *buf, size_t count, struct fb_pattern p)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        buf[i] = elem<T>::from(fb_pattern_expect(p, i));
}

template <typename T>
__global__ void check_kernel(const T *buf, size_t count, struct fb_pattern p,
                             unsigned long long *wrong)
{
    unsigned long long local = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        local += elem<T>::differ(buf[i], elem<T>::from(fb_pattern_expect(p, i)));
    if (local)
        atomicAdd(wrong, local);
}

template <typename T>
int fill_typed(void *buf, size_t count, struct fb_pattern p, cudaStream_t s)
{
    /* Clear an error left by an earlier call whose result was ignored (an IPC close, an
     * unregister), so the check below speaks of this launch only. */
    (void)cudaGetLastError();
    fill_kernel<T><<<grid_for(count), kThreads, 0, s>>>((T *)buf, count, p);
    return (int)cudaGetLastError();
}

template <typename T>
int check_typed(const void *buf, size_t count, struct fb_pattern p, unsigned long long *dev_wrong,
                cudaStream_t s)
{
    (void)cudaGetLastError();
    check_kernel<T><<<grid_for(count), kThreads, 0, s>>>((const T *)buf, count, p, dev_wrong);
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int fb_kernel_fill(void *buf, size_t count, enum fb_dtype dtype, struct fb_pattern p,
                              void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    switch (dtype) {
    case FB_DTYPE_FLOAT32: return fill_typed<float>(buf, count, p, s);
    case FB_DTYPE_FLOAT64: return fill_typed<double>(buf, count, p, s);
    case FB_DTYPE_INT32: return fill_typed<int>(buf, count, p, s);
    case FB_DTYPE_FLOAT16: return fill_typed<__half>(buf, count, p, s);
    case FB_DTYPE_INT8: return fill_typed<signed char>(buf, count, p, s);
    default: return (int)cudaErrorInvalidValue;
    }
}

/* The count of wrong elements lives in device memory of its own, taken from a pool and given
 * back once its check has synchronized: a cudaMalloc and cudaFree per check (as before, issue 29)
 * synchronize the whole device, every stream of every thread, between the points of a run. The
 * pool holds as many counters as checks ever ran at once (a thread that ends leaves nothing
 * behind, as a counter of its own per thread did); past kPoolMax idle ones, a counter given back
 * is freed. A check that fails gives its counter back only once its stream drains (its kernel
 * may still write it); on a stream that fails too, the counter is left out.
 * The device is the process's one (the backend's open), never reset. */
namespace {
constexpr int kPoolMax = 64;
std::mutex pool_lock;
unsigned long long *pool[kPoolMax];
int pool_n = 0;

cudaError_t counter_take(unsigned long long **out)
{
    {
        std::lock_guard<std::mutex> g(pool_lock);
        if (pool_n > 0) {
            *out = pool[--pool_n];
            return cudaSuccess;
        }
    }
    return cudaMalloc((void **)out, sizeof **out);
}

void counter_give(unsigned long long *c)
{
    {
        std::lock_guard<std::mutex> g(pool_lock);
        if (pool_n < kPoolMax) {
            pool[pool_n++] = c;
            return;
        }
    }
    (void)cudaFree(c);
}
} // namespace

extern "C" int fb_kernel_check(const void *buf, size_t count, enum fb_dtype dtype,
                               struct fb_pattern p, size_t *wrong, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    unsigned long long *dev_wrong = NULL, host_wrong = 0;
    cudaError_t err;

    *wrong = 0;
    if ((err = counter_take(&dev_wrong)) != cudaSuccess)
        return (int)err;
    err = cudaMemsetAsync(dev_wrong, 0, sizeof *dev_wrong, s);
    if (err == cudaSuccess) {
        switch (dtype) {
        case FB_DTYPE_FLOAT32: err = (cudaError_t)check_typed<float>(buf, count, p, dev_wrong, s); break;
        case FB_DTYPE_FLOAT64: err = (cudaError_t)check_typed<double>(buf, count, p, dev_wrong, s); break;
        case FB_DTYPE_INT32: err = (cudaError_t)check_typed<int>(buf, count, p, dev_wrong, s); break;
        case FB_DTYPE_FLOAT16: err = (cudaError_t)check_typed<__half>(buf, count, p, dev_wrong, s); break;
        case FB_DTYPE_INT8: err = (cudaError_t)check_typed<signed char>(buf, count, p, dev_wrong, s); break;
        default: err = cudaErrorInvalidValue;
        }
    }
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(&host_wrong, dev_wrong, sizeof host_wrong, cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s);
    /* after a failure, only a stream that drains shows no kernel can still write the counter */
    if (err == cudaSuccess || cudaStreamSynchronize(s) == cudaSuccess)
        counter_give(dev_wrong);
    *wrong = (size_t)host_wrong;
    return (int)err;
}

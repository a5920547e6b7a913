/* What the GPU kernel checks share: a failure count and a check macro that returns from the
 * case (device buffers are freed by their destructors), tensors that hold a precision's bytes
 * with the exact values they stand for, a reproducible generator, and the worst error of a case
 * against its tolerance. Included by one test file each (everything is file-local). */
#ifndef FB_GPU_CHECK_CUH
#define FB_GPU_CHECK_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <vector>

#include "conv_gemm.h"

namespace {

int g_failures = 0;

#define CK(expr)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (cudaError_t)(expr);                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr,               \
                    cudaGetErrorString(e_));                                                   \
            g_failures++;                                                                      \
            return;                                                                            \
        }                                                                                      \
    } while (0)

const char *kPrecName[] = {"fp32", "fp16", "bf16"};

/* The rounding of 16-bit outputs, relative: half an ulp is 4.9e-4 (fp16) and 3.9e-3 (bf16),
 * allowed twice. */
double out_tol(int prec) { return prec == FB_KPREC_FP16 ? 1e-3 : prec == FB_KPREC_BF16 ? 1e-2 : 0.0; }

uint64_t g_rng = 0x9e3779b97f4a7c15ULL;
double uniform(double lo, double hi)
{
    g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
    return lo + (hi - lo) * (double)(g_rng >> 11) / 9007199254740992.0;
}

/* A tensor in one precision: its bytes for the GPU and the exact values they hold. */
struct Tensor {
    int prec;
    std::vector<unsigned char> bytes;
    std::vector<double> val;
};

size_t esize(int prec) { return prec == FB_KPREC_FP32 ? 4 : 2; }

double load_elem(int prec, const unsigned char *p, size_t i)
{
    if (prec == FB_KPREC_FP32) {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return f;
    }
    uint16_t u;
    memcpy(&u, p + 2 * i, 2);
    if (prec == FB_KPREC_FP16) {
        __half_raw r;
        r.x = u;
        return __half2float(__half(r));
    }
    __nv_bfloat16_raw r;
    r.x = u;
    return __bfloat162float(__nv_bfloat16(r));
}

void store_elem(Tensor &t, size_t i, double v)
{
    float f = (float)v;
    if (t.prec == FB_KPREC_FP32) {
        memcpy(&t.bytes[4 * i], &f, 4);
    } else if (t.prec == FB_KPREC_FP16) {
        __half_raw r = __half_raw(__float2half_rn(f));
        memcpy(&t.bytes[2 * i], &r.x, 2);
    } else {
        __nv_bfloat16_raw r = __nv_bfloat16_raw(__float2bfloat16_rn(f));
        memcpy(&t.bytes[2 * i], &r.x, 2);
    }
    t.val[i] = load_elem(t.prec, t.bytes.data(), i);
}

Tensor random_tensor(int prec, size_t count, double lo, double hi)
{
    Tensor t{prec, std::vector<unsigned char>(count * esize(prec)), std::vector<double>(count)};
    for (size_t i = 0; i < count; i++)
        store_elem(t, i, uniform(lo, hi));
    return t;
}

/* Device buffer freed on scope exit, so a failed check returns without leaking. */
struct Dev {
    void *p = nullptr;
    size_t bytes = 0;
    Dev() = default;
    Dev(const Dev &) = delete;
    Dev &operator=(const Dev &) = delete;
    ~Dev() { cudaFree(p); }
    cudaError_t alloc(size_t n)
    {
        bytes = n;
        return cudaMalloc(&p, n ? n : 1);
    }
    cudaError_t put(const void *src) { return cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice); }
    cudaError_t get(void *dst) const { return cudaMemcpy(dst, p, bytes, cudaMemcpyDeviceToHost); }
};

/* The worst error of a case, as a fraction of what its element was allowed. */
struct Worst {
    double ratio = 0.0, abs_err = 0.0;
    bool bad = false;
    void add(double got, double ref, double allowed)
    {
        double e = fabs(got - ref), r = e / allowed;
        if (!(e <= allowed)) /* NaN too: unwritten outputs are filled with NaN */
            bad = true;
        if (!(r <= ratio))
            ratio = r, abs_err = e;
    }
};

/* Whether a GPU is there to test on: prints the device, or "no GPU: why" (the caller then exits
 * 77, which CTest shows as skipped). */
bool have_gpu()
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        printf("no GPU: %s\n", err != cudaSuccess ? cudaGetErrorString(err) : "no device visible");
        return false;
    }
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
        printf("device 0: %s, sm_%d%d, %d SMs\n", prop.name, prop.major, prop.minor,
               prop.multiProcessorCount);
    return true;
}

} // namespace

#endif

/* Training-mode BatchNorm + ReLU over NHWC rows (kernels/conv_gemm.h): per-channel reductions
 * with channels on the fast axis, and the element-wise passes. Memory-bound: each pass reads
 * its inputs once with 16-byte accesses where the channel count allows. */
#include "conv_gather.cuh"
#include "conv_gemm.h"

using namespace fbk;

namespace {

const float kEps = 1e-5f;

/* The reductions' block: LX threads across channel vectors (coalesced along a row), 256 / LX
 * rows at a time; each block walks a strip of rows and adds its per-channel partial sums into
 * fp32 totals with one atomic per channel per block. */
struct RedShape {
    dim3 block, grid;
};

RedShape red_shape(size_t rows, int cvecs, int sms)
{
    int lx = 1;
    while (lx < cvecs && lx < 32)
        lx *= 2;
    int ly = 256 / lx;
    unsigned gx = (unsigned)((cvecs + lx - 1) / lx);
    size_t want = (size_t)4 * sms / gx + 1, most = (rows + ly - 1) / ly;
    size_t gy = want < most ? want : most;
    RedShape r = {dim3(lx, ly), dim3(gx, (unsigned)(gy > 65535 ? 65535 : (gy ? gy : 1)))};
    return r;
}

/* Sums over threadIdx.y of a block, for VC * 2 values per thread; the result lands in thread
 * (x, 0). LY is a power of two. */
template <int VC>
__device__ void reduce_rows(float (&a)[VC], float (&b)[VC])
{
    __shared__ float red[256 * 2 * VC];
    const int t = threadIdx.y * blockDim.x + threadIdx.x;
#pragma unroll
    for (int v = 0; v < VC; v++) {
        red[t * 2 * VC + v] = a[v];
        red[t * 2 * VC + VC + v] = b[v];
    }
    __syncthreads();
    for (unsigned h = blockDim.y / 2; h > 0; h /= 2) {
        if (threadIdx.y < h) {
            const int u = t + h * blockDim.x;
#pragma unroll
            for (int v = 0; v < 2 * VC; v++)
                red[t * 2 * VC + v] += red[u * 2 * VC + v];
        }
        __syncthreads();
    }
#pragma unroll
    for (int v = 0; v < VC; v++) {
        a[v] = red[t * 2 * VC + v];
        b[v] = red[t * 2 * VC + VC + v];
    }
}

/* Sums of d = x - x[row 0] and d^2 per channel into sums[0..c) and sums[c..2c). Shifting by
 * a sample of the channel keeps var = E[d^2] - E[d]^2 from cancelling when |mean| >> std. */
template <typename T, int VC>
__global__ void bn_stats(const T *x, size_t rows, int c, float *sums)
{
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * VC;
    const bool on = c0 < c;
    float s1[VC], s2[VC], k[VC];
    Pack<T, VC> p0 = on ? *reinterpret_cast<const Pack<T, VC> *>(x + c0) : pack_zero<T, VC>();
#pragma unroll
    for (int v = 0; v < VC; v++)
        k[v] = to_f(p0.v[v]), s1[v] = 0.0f, s2[v] = 0.0f;
    if (on)
        for (size_t r = blockIdx.y * (size_t)blockDim.y + threadIdx.y; r < rows;
             r += (size_t)gridDim.y * blockDim.y) {
            Pack<T, VC> p = *reinterpret_cast<const Pack<T, VC> *>(x + r * c + c0);
#pragma unroll
            for (int v = 0; v < VC; v++) {
                float d = to_f(p.v[v]) - k[v];
                s1[v] += d;
                s2[v] = fmaf(d, d, s2[v]);
            }
        }
    reduce_rows<VC>(s1, s2);
    if (on && threadIdx.y == 0)
#pragma unroll
        for (int v = 0; v < VC; v++) {
            atomicAdd(sums + c0 + v, s1[v]);
            atomicAdd(sums + c + c0 + v, s2[v]);
        }
}

/* Shifted sums -> mean and biased variance, in place. */
template <typename T>
__global__ void bn_finish(const T *x, size_t rows, int c, float *mv)
{
    int ch = blockIdx.x * blockDim.x + threadIdx.x;
    if (ch >= c)
        return;
    float m1 = mv[ch] / (float)rows, var = mv[c + ch] / (float)rows - m1 * m1;
    mv[ch] = to_f(x[ch]) + m1;
    mv[c + ch] = var > 0.0f ? var : 0.0f;
}

/* y = max(0, (x - mean) * rsqrt(var + eps) * gamma + beta). x and y may be the same buffer:
 * each element is read and written by one thread, so they carry no __restrict__. */
template <typename T, int VC>
__global__ void bn_apply(const T *x, T *y, size_t rows, int c, const float *mv,
                         const float *gamma, const float *beta)
{
    const size_t packs = rows * (size_t)c / VC;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < packs;
         i += (size_t)gridDim.x * blockDim.x) {
        const int c0 = (int)((i * VC) % (size_t)c);
        Pack<T, VC> p = *reinterpret_cast<const Pack<T, VC> *>(x + i * VC), o;
#pragma unroll
        for (int v = 0; v < VC; v++) {
            int ch = c0 + v;
            float scale = rsqrtf(mv[c + ch] + kEps) * gamma[ch];
            float t = (to_f(p.v[v]) - mv[ch]) * scale + beta[ch];
            o.v[v] = from_f<T>(t > 0.0f ? t : 0.0f);
        }
        *reinterpret_cast<Pack<T, VC> *>(y + i * VC) = o;
    }
}

/* dbeta = sum of dyr, dgamma = sum of dyr * xhat, with dyr = dy where y > 0, else 0. */
template <typename T, int VC>
__global__ void bn_bwd_sums(const T *x, const T *y, const T *dy, size_t rows, int c,
                            const float *mv, float *dgamma, float *dbeta)
{
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * VC;
    const bool on = c0 < c;
    float sb[VC], sg[VC], mean[VC], rstd[VC];
#pragma unroll
    for (int v = 0; v < VC; v++) {
        sb[v] = sg[v] = 0.0f;
        mean[v] = on ? mv[c0 + v] : 0.0f;
        rstd[v] = on ? rsqrtf(mv[c + c0 + v] + kEps) : 0.0f;
    }
    if (on)
        for (size_t r = blockIdx.y * (size_t)blockDim.y + threadIdx.y; r < rows;
             r += (size_t)gridDim.y * blockDim.y) {
            size_t off = r * c + c0;
            Pack<T, VC> px = *reinterpret_cast<const Pack<T, VC> *>(x + off);
            Pack<T, VC> py = *reinterpret_cast<const Pack<T, VC> *>(y + off);
            Pack<T, VC> pd = *reinterpret_cast<const Pack<T, VC> *>(dy + off);
#pragma unroll
            for (int v = 0; v < VC; v++) {
                float g = to_f(py.v[v]) > 0.0f ? to_f(pd.v[v]) : 0.0f;
                sb[v] += g;
                sg[v] = fmaf(g, (to_f(px.v[v]) - mean[v]) * rstd[v], sg[v]);
            }
        }
    reduce_rows<VC>(sb, sg);
    if (on && threadIdx.y == 0)
#pragma unroll
        for (int v = 0; v < VC; v++) {
            atomicAdd(dbeta + c0 + v, sb[v]);
            atomicAdd(dgamma + c0 + v, sg[v]);
        }
}

/* Per channel, once: scratch[ch] = rstd, scratch[c + ch] = gamma * rstd. */
__global__ void bn_bwd_coef(int c, const float *mv, const float *gamma, float *scratch)
{
    int ch = blockIdx.x * blockDim.x + threadIdx.x;
    if (ch >= c)
        return;
    float rstd = rsqrtf(mv[c + ch] + kEps);
    scratch[ch] = rstd;
    scratch[c + ch] = gamma[ch] * rstd;
}

/* dx = gamma * rstd * (dyr - dbeta / rows - xhat * dgamma / rows): the means of the two
 * sums rather than rows * dyr minus them, which keeps the fp32 terms near dy's size. */
template <typename T, int VC>
__global__ void bn_bwd_dx(const T *x, const T *y, const T *dy, T *dx, size_t rows, int c,
                          const float *mv, const float *scratch, const float *dgamma,
                          const float *dbeta)
{
    const size_t packs = rows * (size_t)c / VC;
    const float inv = 1.0f / (float)rows;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < packs;
         i += (size_t)gridDim.x * blockDim.x) {
        const int c0 = (int)((i * VC) % (size_t)c);
        Pack<T, VC> px = *reinterpret_cast<const Pack<T, VC> *>(x + i * VC);
        Pack<T, VC> py = *reinterpret_cast<const Pack<T, VC> *>(y + i * VC);
        Pack<T, VC> pd = *reinterpret_cast<const Pack<T, VC> *>(dy + i * VC), o;
#pragma unroll
        for (int v = 0; v < VC; v++) {
            int ch = c0 + v;
            float g = to_f(py.v[v]) > 0.0f ? to_f(pd.v[v]) : 0.0f;
            float xhat = (to_f(px.v[v]) - mv[ch]) * scratch[ch];
            o.v[v] = from_f<T>(scratch[c + ch] * (g - dbeta[ch] * inv - xhat * dgamma[ch] * inv));
        }
        *reinterpret_cast<Pack<T, VC> *>(dx + i * VC) = o;
    }
}

int sm_count(void)
{
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return 0;
    return sms;
}

unsigned ew_grid(size_t packs, int sms)
{
    size_t blocks = (packs + 255) / 256, most = (size_t)sms * 8;
    return (unsigned)(blocks < most ? (blocks ? blocks : 1) : most);
}

template <typename T, int VC>
cudaError_t fwd_typed(const T *x, T *y, size_t rows, int c, const float *gamma, const float *beta,
                      float *mv, int sms, cudaStream_t s)
{
    cudaError_t err = cudaMemsetAsync(mv, 0, 2 * (size_t)c * sizeof(float), s);
    if (err != cudaSuccess)
        return err;
    RedShape rs = red_shape(rows, c / VC, sms);
    (void)cudaGetLastError();
    bn_stats<T, VC><<<rs.grid, rs.block, 0, s>>>(x, rows, c, mv);
    bn_finish<T><<<(c + 255) / 256, 256, 0, s>>>(x, rows, c, mv);
    bn_apply<T, VC><<<ew_grid(rows * c / VC, sms), 256, 0, s>>>(x, y, rows, c, mv, gamma, beta);
    return cudaGetLastError();
}

template <typename T, int VC>
cudaError_t bwd_typed(const T *x, const T *y, const T *dy, T *dx, size_t rows, int c,
                      const float *gamma, const float *mv, float *dgamma, float *dbeta,
                      float *scratch, int sms, cudaStream_t s)
{
    cudaError_t err = cudaMemsetAsync(dgamma, 0, (size_t)c * sizeof(float), s);
    if (err == cudaSuccess)
        err = cudaMemsetAsync(dbeta, 0, (size_t)c * sizeof(float), s);
    if (err != cudaSuccess)
        return err;
    RedShape rs = red_shape(rows, c / VC, sms);
    (void)cudaGetLastError();
    bn_bwd_sums<T, VC><<<rs.grid, rs.block, 0, s>>>(x, y, dy, rows, c, mv, dgamma, dbeta);
    bn_bwd_coef<<<(c + 255) / 256, 256, 0, s>>>(c, mv, gamma, scratch);
    bn_bwd_dx<T, VC><<<ew_grid(rows * c / VC, sms), 256, 0, s>>>(x, y, dy, dx, rows, c, mv,
                                                                 scratch, dgamma, dbeta);
    return cudaGetLastError();
}

/* 16-byte packs where every row's channels split into whole aligned packs; else one by one. */
bool packs_ok(int c, size_t esize, const void *a, const void *b, const void *d, const void *e)
{
    return c % (int)(16 / esize) == 0 && (size_t)a % 16 == 0 && (size_t)b % 16 == 0 &&
           (size_t)d % 16 == 0 && (size_t)e % 16 == 0;
}

template <typename T>
cudaError_t fwd_prec(const void *x, void *y, size_t rows, int c, const float *g, const float *b,
                     float *mv, int sms, cudaStream_t s)
{
    constexpr int VC = 16 / sizeof(T);
    if (packs_ok(c, sizeof(T), x, y, x, y))
        return fwd_typed<T, VC>((const T *)x, (T *)y, rows, c, g, b, mv, sms, s);
    return fwd_typed<T, 1>((const T *)x, (T *)y, rows, c, g, b, mv, sms, s);
}

template <typename T>
cudaError_t bwd_prec(const void *x, const void *y, const void *dy, void *dx, size_t rows, int c,
                     const float *g, const float *mv, float *dg, float *db, float *scr, int sms,
                     cudaStream_t s)
{
    constexpr int VC = 16 / sizeof(T);
    if (packs_ok(c, sizeof(T), x, y, dy, dx))
        return bwd_typed<T, VC>((const T *)x, (const T *)y, (const T *)dy, (T *)dx, rows, c, g, mv,
                                dg, db, scr, sms, s);
    return bwd_typed<T, 1>((const T *)x, (const T *)y, (const T *)dy, (T *)dx, rows, c, g, mv, dg,
                           db, scr, sms, s);
}

} // namespace

extern "C" int fb_kbn_relu_fwd(int prec, const void *x, void *y, size_t rows, int c,
                               const float *gamma, const float *beta, float *mean_var, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (c < 0 || prec < FB_KPREC_FP32 || prec > FB_KPREC_BF16)
        return (int)cudaErrorInvalidValue;
    if (rows == 0 || c == 0) /* no statistics to take: leave everything as it is */
        return 0;
    int sms = sm_count();
    if (sms <= 0)
        return (int)cudaErrorNoDevice;
    switch (prec) {
    case FB_KPREC_FP32: return (int)fwd_prec<float>(x, y, rows, c, gamma, beta, mean_var, sms, s);
    case FB_KPREC_FP16: return (int)fwd_prec<__half>(x, y, rows, c, gamma, beta, mean_var, sms, s);
    default: return (int)fwd_prec<__nv_bfloat16>(x, y, rows, c, gamma, beta, mean_var, sms, s);
    }
}

extern "C" int fb_kbn_relu_bwd(int prec, const void *x, const void *y, const void *dy, void *dx,
                               size_t rows, int c, const float *gamma, const float *mean_var,
                               float *dgamma, float *dbeta, float *scratch, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (c < 0 || prec < FB_KPREC_FP32 || prec > FB_KPREC_BF16)
        return (int)cudaErrorInvalidValue;
    if (rows == 0 || c == 0)
        return 0;
    int sms = sm_count();
    if (sms <= 0)
        return (int)cudaErrorNoDevice;
    switch (prec) {
    case FB_KPREC_FP32:
        return (int)bwd_prec<float>(x, y, dy, dx, rows, c, gamma, mean_var, dgamma, dbeta, scratch, sms, s);
    case FB_KPREC_FP16:
        return (int)bwd_prec<__half>(x, y, dy, dx, rows, c, gamma, mean_var, dgamma, dbeta, scratch, sms, s);
    default:
        return (int)bwd_prec<__nv_bfloat16>(x, y, dy, dx, rows, c, gamma, mean_var, dgamma, dbeta,
                                            scratch, sms, s);
    }
}

/* Pools and pitched copies over NHWC tensors (kernels/pool_kernels.h): one thread per output
 * vector of channels, 16-byte accesses where the channel count and pointers allow. The backward
 * pools gather (one thread per input element, visiting the few windows that read it) rather
 * than scatter, so they need no atomics, no zeroing pass and no stored argmax, and they sum a
 * pixel's contributions in the host engine's order. */
#include <math.h>

#include "conv_gather.cuh"
#include "pool_kernels.h"

using namespace fbk;

namespace {

constexpr int kThreads = 256;

/* Grid-stride loops everywhere: enough blocks to fill any GPU, never more than the items. */
unsigned grid_for(size_t items)
{
    size_t blocks = (items + kThreads - 1) / kThreads, most = (size_t)1 << 16;
    return (unsigned)(blocks < most ? (blocks ? blocks : 1) : most);
}

struct PoolGeo {
    int n, h, w, c, r, s, stride, pad, p, q;
};

/* The window of output (p, q) clipped to the input: rows [y0, y1), columns [x0, x1). */
struct Win {
    int y0, y1, x0, x1;
};

__device__ __forceinline__ Win window(const PoolGeo &g, int p, int q)
{
    int y0 = p * g.stride - g.pad, x0 = q * g.stride - g.pad;
    Win wn = {max(y0, 0), min(y0 + g.r, g.h), max(x0, 0), min(x0 + g.s, g.w)};
    return wn;
}

/* The outputs whose windows hold input row `i` along one axis (window extent `r`): [*lo, *hi]. */
__device__ __forceinline__ void readers(int i, int pad, int r, int stride, int outs, int *lo,
                                        int *hi)
{
    int t = i + pad - r + 1; /* the first output must start at or after this */
    *lo = t > 0 ? (t + stride - 1) / stride : 0;
    *hi = min((i + pad) / stride, outs - 1);
}

template <typename T, int V>
__device__ __forceinline__ Pack<T, V> ld(const T *base, size_t off)
{
    return *reinterpret_cast<const Pack<T, V> *>(base + off);
}

template <typename T, int V, bool MAX>
__global__ void pool_fwd(PoolGeo g, const T *__restrict__ x, T *__restrict__ y)
{
    const int cvecs = g.c / V;
    const size_t total = (size_t)g.n * g.p * g.q * cvecs;
    const float inv = 1.0f / (float)(g.r * g.s);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        const int c0 = (int)(i % cvecs) * V;
        size_t pix = i / cvecs;
        const int q = (int)(pix % g.q);
        pix /= g.q;
        const int p = (int)(pix % g.p), n = (int)(pix / g.p);
        const Win wn = window(g, p, q);
        float acc[V];
#pragma unroll
        for (int v = 0; v < V; v++)
            acc[v] = MAX ? -INFINITY : 0.0f;
        for (int yy = wn.y0; yy < wn.y1; yy++)
            for (int xx = wn.x0; xx < wn.x1; xx++) {
                Pack<T, V> in = ld<T, V>(x, (((size_t)n * g.h + yy) * g.w + xx) * g.c + c0);
#pragma unroll
                for (int v = 0; v < V; v++) {
                    float t = to_f(in.v[v]);
                    /* the host engine's comparison: a NaN never replaces the running max */
                    acc[v] = MAX ? (t > acc[v] ? t : acc[v]) : acc[v] + t;
                }
            }
        Pack<T, V> o;
#pragma unroll
        for (int v = 0; v < V; v++)
            o.v[v] = from_f<T>(MAX ? acc[v] : acc[v] * inv);
        /* output (n, p, q, c0) is at pix * c + c0 = i * V */
        *reinterpret_cast<Pack<T, V> *>(y + i * V) = o;
    }
}

template <typename T, int V, bool MAX>
__global__ void pool_bwd(PoolGeo g, const T *__restrict__ x, const T *__restrict__ dy,
                         T *__restrict__ dx)
{
    const int cvecs = g.c / V;
    const size_t total = (size_t)g.n * g.h * g.w * cvecs;
    const float inv = 1.0f / (float)(g.r * g.s);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        const int c0 = (int)(i % cvecs) * V;
        size_t pix = i / cvecs;
        const int ix = (int)(pix % g.w);
        pix /= g.w;
        const int iy = (int)(pix % g.h), n = (int)(pix / g.h);
        const int me = iy * g.w + ix;
        int plo, phi, qlo, qhi;
        readers(iy, g.pad, g.r, g.stride, g.p, &plo, &phi);
        readers(ix, g.pad, g.s, g.stride, g.q, &qlo, &qhi);
        float acc[V];
#pragma unroll
        for (int v = 0; v < V; v++)
            acc[v] = 0.0f;
        /* p, then q, ascending: the order in which the host engine adds into dx */
        for (int p = plo; p <= phi; p++)
            for (int q = qlo; q <= qhi; q++) {
                Pack<T, V> gp = ld<T, V>(dy, (((size_t)n * g.p + p) * g.q + q) * g.c + c0);
                if (!MAX) {
#pragma unroll
                    for (int v = 0; v < V; v++)
                        acc[v] += to_f(gp.v[v]) * inv;
                    continue;
                }
                /* The window's first maximum per channel, as the host picks it: the first
                 * element equal to the max of the non-NaN elements (started at -inf). A strict
                 * > keeps the first of equal maxima; the == branch takes the first -inf when
                 * nothing exceeds it; an all-NaN window routes its gradient nowhere. */
                const Win wn = window(g, p, q);
                float best[V];
                int arg[V];
#pragma unroll
                for (int v = 0; v < V; v++)
                    best[v] = -INFINITY, arg[v] = -1;
                for (int yy = wn.y0; yy < wn.y1; yy++)
                    for (int xx = wn.x0; xx < wn.x1; xx++) {
                        Pack<T, V> in = ld<T, V>(x, (((size_t)n * g.h + yy) * g.w + xx) * g.c + c0);
                        const int at = yy * g.w + xx;
#pragma unroll
                        for (int v = 0; v < V; v++) {
                            float t = to_f(in.v[v]);
                            if (t > best[v])
                                best[v] = t, arg[v] = at;
                            else if (arg[v] < 0 && t == best[v])
                                arg[v] = at;
                        }
                    }
#pragma unroll
                for (int v = 0; v < V; v++)
                    if (arg[v] == me)
                        acc[v] += to_f(gp.v[v]);
            }
        Pack<T, V> o;
#pragma unroll
        for (int v = 0; v < V; v++)
            o.v[v] = from_f<T>(acc[v]);
        *reinterpret_cast<Pack<T, V> *>(dx + i * V) = o;
    }
}

/* dst += src over rows x (wvecs * V). dst and src carry no __restrict__: the contract lets
 * them be the same elements, each read and written by one thread. */
template <typename T, int V>
__global__ void add2d(T *dst, size_t dst_ld, const T *src, size_t src_ld, size_t rows,
                      size_t wvecs)
{
    const size_t total = rows * wvecs;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t row = i / wvecs, j = (i - row * wvecs) * V;
        Pack<T, V> d = ld<T, V>(dst, row * dst_ld + j);
        const Pack<T, V> s = ld<T, V>(src, row * src_ld + j);
#pragma unroll
        for (int v = 0; v < V; v++)
            d.v[v] = from_f<T>(to_f(d.v[v]) + to_f(s.v[v]));
        *reinterpret_cast<Pack<T, V> *>(dst + row * dst_ld + j) = d;
    }
}

bool aligned16(const void *a) { return (size_t)a % 16 == 0; }

template <typename T, int V>
cudaError_t pool_fwd_launch(const PoolGeo &g, bool max_kind, const void *x, void *y,
                            cudaStream_t s)
{
    unsigned grid = grid_for((size_t)g.n * g.p * g.q * (g.c / V));
    (void)cudaGetLastError(); /* a stale error would be reported as this launch's */
    if (max_kind)
        pool_fwd<T, V, true><<<grid, kThreads, 0, s>>>(g, (const T *)x, (T *)y);
    else
        pool_fwd<T, V, false><<<grid, kThreads, 0, s>>>(g, (const T *)x, (T *)y);
    return cudaGetLastError();
}

template <typename T, int V>
cudaError_t pool_bwd_launch(const PoolGeo &g, bool max_kind, const void *x, const void *dy,
                            void *dx, cudaStream_t s)
{
    unsigned grid = grid_for((size_t)g.n * g.h * g.w * (g.c / V));
    (void)cudaGetLastError();
    if (max_kind)
        pool_bwd<T, V, true><<<grid, kThreads, 0, s>>>(g, (const T *)x, (const T *)dy, (T *)dx);
    else
        pool_bwd<T, V, false><<<grid, kThreads, 0, s>>>(g, (const T *)x, (const T *)dy, (T *)dx);
    return cudaGetLastError();
}

/* 16-byte vectors where every pixel's channels split into whole aligned vectors. */
template <typename T>
cudaError_t pool_prec(const PoolGeo &g, bool fwd, bool max_kind, const void *x, const void *dy,
                      void *out, cudaStream_t s)
{
    constexpr int V = 16 / sizeof(T);
    bool vec = g.c % V == 0 && aligned16(x) && aligned16(out) && (fwd || aligned16(dy));
    if (fwd)
        return vec ? pool_fwd_launch<T, V>(g, max_kind, x, out, s)
                   : pool_fwd_launch<T, 1>(g, max_kind, x, out, s);
    return vec ? pool_bwd_launch<T, V>(g, max_kind, x, dy, out, s)
               : pool_bwd_launch<T, 1>(g, max_kind, x, dy, out, s);
}

template <typename T>
cudaError_t add_prec(void *dst, size_t dst_ld, const void *src, size_t src_ld, size_t rows,
                     size_t width, cudaStream_t s)
{
    constexpr int V = 16 / sizeof(T);
    (void)cudaGetLastError();
    if (width % V == 0 && dst_ld % V == 0 && src_ld % V == 0 && aligned16(dst) && aligned16(src))
        add2d<T, V><<<grid_for(rows * (width / V)), kThreads, 0, s>>>(
            (T *)dst, dst_ld, (const T *)src, src_ld, rows, width / V);
    else
        add2d<T, 1><<<grid_for(rows * width), kThreads, 0, s>>>((T *)dst, dst_ld, (const T *)src,
                                                                src_ld, rows, width);
    return cudaGetLastError();
}

bool pool_args_ok(const struct fb_kconv *cv, int kind, int prec)
{
    return cv && (kind == FB_KPOOL_MAX || kind == FB_KPOOL_AVG) && prec >= FB_KPREC_FP32 &&
           prec <= FB_KPREC_BF16 && cv->n >= 0 && cv->h >= 0 && cv->w >= 0 && cv->c >= 0 &&
           cv->p >= 0 && cv->q >= 0 && cv->r >= 1 && cv->s >= 1 && cv->stride >= 1 &&
           cv->pad >= 0;
}

cudaError_t pool(const struct fb_kconv *cv, bool fwd, int kind, int prec, const void *x,
                 const void *dy, void *out, cudaStream_t s)
{
    PoolGeo g = {cv->n, cv->h, cv->w, cv->c, cv->r, cv->s, cv->stride, cv->pad, cv->p, cv->q};
    bool max_kind = kind == FB_KPOOL_MAX;
    switch (prec) {
    case FB_KPREC_FP32: return pool_prec<float>(g, fwd, max_kind, x, dy, out, s);
    case FB_KPREC_FP16: return pool_prec<__half>(g, fwd, max_kind, x, dy, out, s);
    default: return pool_prec<__nv_bfloat16>(g, fwd, max_kind, x, dy, out, s);
    }
}

/* fb_kconcat's pieces, passed by value (about 400 bytes of kernel parameters): no pointer
 * table in device memory, so nothing to upload before the launch. Columns count in vectors. */
struct CatArgs {
    void *piece[FB_KCONCAT_MAX];
    unsigned start[FB_KCONCAT_MAX + 1]; /* piece j's first column; start[n]: all of them */
    unsigned acc;                       /* bit j: piece j accumulates (split only) */
    int n;
};

/* One thread per vector of V elements of the concatenated columns. */
template <typename T, int V, bool SPLIT>
__global__ void __launch_bounds__(kThreads)
    concat(CatArgs a, T *__restrict__ cat, size_t cat_ld, size_t rows)
{
    const unsigned width = a.start[a.n];
    const size_t total = rows * width, step = (size_t)gridDim.x * blockDim.x;
    for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
        size_t row = idx / width;
        unsigned col = (unsigned)(idx - row * width);
        int j = 0;
        while (col >= a.start[j + 1])
            j++;
        unsigned w = a.start[j + 1] - a.start[j];
        T *c = cat + (row * cat_ld + col) * V;
        T *p = (T *)a.piece[j] + (row * w + (col - a.start[j])) * V;
        if (SPLIT && (a.acc >> j & 1u)) {
            alignas(16) T cv[V], pv[V];
            if constexpr (V * sizeof(T) == 16) {
                *(uint4 *)cv = *(const uint4 *)c;
                *(uint4 *)pv = *(const uint4 *)p;
            } else {
                for (int v = 0; v < V; v++) {
                    cv[v] = c[v];
                    pv[v] = p[v];
                }
            }
            for (int v = 0; v < V; v++)
                pv[v] = from_f<T>(to_f<T>(pv[v]) + to_f<T>(cv[v]));
            if constexpr (V * sizeof(T) == 16)
                *(uint4 *)p = *(const uint4 *)pv;
            else
                for (int v = 0; v < V; v++)
                    p[v] = pv[v];
        } else if constexpr (V * sizeof(T) == 16) {
            if (SPLIT)
                *(uint4 *)p = *(const uint4 *)c;
            else
                *(uint4 *)c = *(const uint4 *)p;
        } else {
            for (int v = 0; v < V; v++)
                if (SPLIT)
                    p[v] = c[v];
                else
                    c[v] = p[v];
        }
    }
}

/* 16-byte vectors when every width, cat's pitch and every pointer allow. */
template <typename T>
cudaError_t concat_prec(bool split, void *cat, size_t cat_ld, void *const *pieces,
                        const size_t *widths, const int *accumulate, size_t n, size_t rows,
                        cudaStream_t s)
{
    constexpr int V = 16 / sizeof(T);
    bool vec = cat_ld % V == 0 && aligned16(cat);
    size_t sum = 0;
    CatArgs a = {};

    for (size_t j = 0; j < n; j++)
        vec = vec && widths[j] % V == 0 && aligned16(pieces[j]);
    const int v = vec ? V : 1;
    a.n = (int)n;
    for (size_t j = 0; j < n; j++) {
        a.piece[j] = pieces[j];
        a.start[j] = (unsigned)(sum / v);
        sum += widths[j];
        if (accumulate && accumulate[j])
            a.acc |= 1u << j;
    }
    a.start[n] = (unsigned)(sum / v);
    if (sum == 0)
        return cudaSuccess;
    unsigned grid = grid_for(rows * a.start[n]);
    (void)cudaGetLastError();
    if (vec && split)
        concat<T, V, true><<<grid, kThreads, 0, s>>>(a, (T *)cat, cat_ld / V, rows);
    else if (vec)
        concat<T, V, false><<<grid, kThreads, 0, s>>>(a, (T *)cat, cat_ld / V, rows);
    else if (split)
        concat<T, 1, true><<<grid, kThreads, 0, s>>>(a, (T *)cat, cat_ld, rows);
    else
        concat<T, 1, false><<<grid, kThreads, 0, s>>>(a, (T *)cat, cat_ld, rows);
    return cudaGetLastError();
}

} // namespace

extern "C" int fb_kconcat(int prec, int split, void *cat, size_t cat_ld, void *const *pieces,
                          const size_t *widths, const int *accumulate, size_t npieces, size_t rows,
                          void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    size_t sum = 0;

    if (prec < FB_KPREC_FP32 || prec > FB_KPREC_BF16 || npieces > FB_KCONCAT_MAX ||
        (npieces && (!pieces || !widths)))
        return (int)cudaErrorInvalidValue;
    for (size_t j = 0; j < npieces; j++)
        sum += widths[j];
    if (sum > cat_ld || sum > 0xffffffffu) /* columns count in 32 bits */
        return (int)cudaErrorInvalidValue;
    if (rows == 0 || sum == 0)
        return 0;
    switch (prec) {
    case FB_KPREC_FP32:
        return (int)concat_prec<float>(split, cat, cat_ld, pieces, widths, accumulate, npieces,
                                       rows, s);
    case FB_KPREC_FP16:
        return (int)concat_prec<__half>(split, cat, cat_ld, pieces, widths, accumulate, npieces,
                                        rows, s);
    default:
        return (int)concat_prec<__nv_bfloat16>(split, cat, cat_ld, pieces, widths, accumulate,
                                               npieces, rows, s);
    }
}

extern "C" int fb_kpool_fwd(const struct fb_kconv *cv, int kind, int prec, const void *x, void *y,
                            void *stream)
{
    if (!pool_args_ok(cv, kind, prec))
        return (int)cudaErrorInvalidValue;
    if ((size_t)cv->n * cv->p * cv->q * cv->c == 0)
        return 0;
    return (int)pool(cv, true, kind, prec, x, NULL, y, (cudaStream_t)stream);
}

extern "C" int fb_kpool_bwd(const struct fb_kconv *cv, int kind, int prec, const void *x,
                            const void *dy, void *dx, void *stream)
{
    if (!pool_args_ok(cv, kind, prec))
        return (int)cudaErrorInvalidValue;
    if ((size_t)cv->n * cv->h * cv->w * cv->c == 0)
        return 0;
    return (int)pool(cv, false, kind, prec, x, dy, dx, (cudaStream_t)stream);
}

extern "C" int fb_kcopy2d(int prec, void *dst, size_t dst_ld, const void *src, size_t src_ld,
                          size_t rows, size_t width, int accumulate, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    size_t es = prec == FB_KPREC_FP32 ? 4 : 2;
    if (prec < FB_KPREC_FP32 || prec > FB_KPREC_BF16 || dst_ld < width || src_ld < width)
        return (int)cudaErrorInvalidValue;
    if (rows == 0 || width == 0)
        return 0;
    if (!accumulate)
        return (int)cudaMemcpy2DAsync(dst, dst_ld * es, src, src_ld * es, width * es, rows,
                                      cudaMemcpyDeviceToDevice, s);
    switch (prec) {
    case FB_KPREC_FP32: return (int)add_prec<float>(dst, dst_ld, src, src_ld, rows, width, s);
    case FB_KPREC_FP16: return (int)add_prec<__half>(dst, dst_ld, src, src_ld, rows, width, s);
    default: return (int)add_prec<__nv_bfloat16>(dst, dst_ld, src, src_ld, rows, width, s);
    }
}

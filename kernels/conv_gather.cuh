/* The im2col index arithmetic of the implicit-GEMM convolutions (conv_implicit_gemm.cu): one
 * loader per GEMM operand and pass, each gathering its share of a tile straight from the NHWC /
 * KRSC tensors into registers (zero for padding and for rows, columns or reductions past the
 * end). The kernels only see "a tile of OUTER x INNER elements, INNER contiguous in memory". */
#ifndef FB_CONV_GATHER_CUH
#define FB_CONV_GATHER_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <string.h>

namespace fbk {

/* One convolution and the GEMM that a pass makes of it (M x N, reduction K). */
struct Geo {
    int n, h, w, c, k, r, s, stride, pad, p, q;
    int M, N, K;
};

template <typename T> __device__ __forceinline__ float to_f(T v);
template <> __device__ __forceinline__ float to_f<float>(float v) { return v; }
template <> __device__ __forceinline__ float to_f<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_f<__nv_bfloat16>(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}

template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}

/* V consecutive elements moved as one load: with V * sizeof(T) == 16 the compiler emits a
 * single 16-byte access, which is why every vector must start 16-byte aligned. */
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
    T v[V];
};

/* +0 is all-zero bits in fp32, fp16 and bf16; clearing bytes (not converting 0.0f per
 * element) lets the compiler keep one zero register for the whole pack. */
template <typename T, int V>
__device__ __forceinline__ Pack<T, V> pack_zero()
{
    Pack<T, V> z;
    memset(&z, 0, sizeof z);
    return z;
}

/* Which vectors of an OUTER x INNER tile thread `tid` of NT loads: its INNER position never
 * changes (so the index arithmetic of that axis is done once per k-step, or once per block),
 * and it takes kVecs rows kRowStep apart. */
template <int OUTER, int INNER, int V, int NT>
struct TileMap {
    static constexpr int kPerRow = INNER / V;
    static_assert(INNER % V == 0 && NT % kPerRow == 0, "threads must cover whole rows");
    static constexpr int kRowStep = NT / kPerRow;
    static_assert(OUTER % kRowStep == 0, "threads must cover the tile exactly");
    static constexpr int kVecs = OUTER / kRowStep;
    static __device__ __forceinline__ int inner(int tid) { return (tid % kPerRow) * V; }
    static __device__ __forceinline__ int outer(int tid, int i) { return tid / kPerRow + i * kRowStep; }
};

/* A vector is taken whole or not at all: the launchers pick V > 1 only where the channel counts
 * make every aligned group of V along INNER lie in one (r, s) / one pixel, contiguous, and
 * all in bounds or all out (conv_implicit_gemm.cu, vec_ok). */
template <typename T, int V>
__device__ __forceinline__ Pack<T, V> fetch(const T *base, size_t off, bool ok)
{
    return ok ? *reinterpret_cast<const Pack<T, V> *>(base + off) : pack_zero<T, V>();
}

/* ---- forward: M = n*p*q, N = k, K = r*s*c (kk = (r*S + s)*C + c) ---- */

/* A[m][kk] = x[n, p*stride - pad + r, q*stride - pad + s, c]; rows fixed per block, so the
 * pixel of each row is decoded once; (r, s, c) of the thread's column once per k-step. */
template <typename T, int V, class Map>
struct FwdA {
    static constexpr bool kKMajor = true;
    const T *x;
    Geo g;
    int img[Map::kVecs], ih0[Map::kVecs], iw0[Map::kVecs], kin;

    __device__ void init(const Geo &geo, const T *ptr, int m0, int tid)
    {
        x = ptr;
        g = geo;
        kin = Map::inner(tid);
#pragma unroll
        for (int i = 0; i < Map::kVecs; i++) {
            int m = m0 + Map::outer(tid, i);
            int pq = g.p * g.q, nn = m / pq, rem = m - nn * pq, pp = rem / g.q, qq = rem - pp * g.q;
            img[i] = m < g.M ? nn : -1;
            ih0[i] = pp * g.stride - g.pad;
            iw0[i] = qq * g.stride - g.pad;
        }
    }
    __device__ void load(int k0, int kend, Pack<T, V> (&r)[Map::kVecs]) const
    {
        int kk = k0 + kin, cc = kk % g.c, rs = kk / g.c, rr = rs / g.s, ss = rs - rr * g.s;
        bool kok = kk < kend;
#pragma unroll
        for (int i = 0; i < Map::kVecs; i++) {
            int ih = ih0[i] + rr, iw = iw0[i] + ss;
            bool ok = kok && img[i] >= 0 && (unsigned)ih < (unsigned)g.h && (unsigned)iw < (unsigned)g.w;
            size_t off = (((size_t)img[i] * g.h + ih) * g.w + iw) * g.c + cc;
            r[i] = fetch<T, V>(x, ok ? off : 0, ok);
        }
    }
};

/* B[kk][j] = w[j][r][s][c] = w[j*K + kk]: stored K-major, as the weights lie. */
template <typename T, int V, class Map>
struct FwdB {
    static constexpr bool kKMajor = true;
    const T *w;
    int K, kin, row[Map::kVecs];

    __device__ void init(const Geo &geo, const T *ptr, int n0, int tid)
    {
        w = ptr;
        K = geo.K;
        kin = Map::inner(tid);
#pragma unroll
        for (int i = 0; i < Map::kVecs; i++) {
            int j = n0 + Map::outer(tid, i);
            row[i] = j < geo.N ? j : -1;
        }
    }
    __device__ void load(int k0, int kend, Pack<T, V> (&r)[Map::kVecs]) const
    {
        int kk = k0 + kin;
#pragma unroll
        for (int i = 0; i < Map::kVecs; i++) {
            bool ok = kk < kend && row[i] >= 0;
            r[i] = fetch<T, V>(w, ok ? (size_t)row[i] * K + kk : 0, ok);
        }
    }
};

/* ---- dgrad: M = n*h*w, N = c, K = r*s*k (kk = (r*S + s)*Kout + k, k fastest as dy lies) ---- */

/* A[m][kk] = dy[n, p, q, k] where input pixel (y, x) is read by output pixel (p, q) through tap
 * (r, s): y + pad - r = p*stride (divisible, and p in range), likewise x; zero otherwise. */
template <typename T, int V, class Map>
struct DgradA {
    static constexpr bool kKMajor = true;
    const T *dy;
    Geo g;
    int img[Map::kVecs], ty0[Map::kVecs], tx0[Map::kVecs], kin;

    __device__ void init(const Geo &geo, const T *ptr, int m0, int tid)
    {
        dy = ptr;
        g = geo;
        kin = Map::inner(tid);
#pragma unroll
        for (int i = 0; i < Map::kVecs; i++) {
            int m = m0 + Map::outer(tid, i);
            int hw = g.h * g.w, nn = m / hw, rem = m - nn * hw, yy = rem / g.w, xx = rem - yy * g.w;
            img[i] = m < g.M ? nn : -1;
            ty0[i] = yy + g.pad;
            tx0[i] = xx + g.pad;
        }
    }
    __device__ void load(int k0, int kend, Pack<T, V> (&r)[Map::kVecs]) const
    {
        int kk = k0 + kin, ko = kk % g.k, rs = kk / g.k, rr = rs / g.s, ss = rs - rr * g.s;
        bool kok = kk < kend;
#pragma unroll
        for (int i = 0; i < Map::kVecs; i++) {
            int ty = ty0[i] - rr, tx = tx0[i] - ss;
            /* Tested before dividing: a negative ty would divide towards zero into row 0. */
            bool ok = kok && img[i] >= 0 && ty >= 0 && tx >= 0;
            int pp = ok ? ty / g.stride : 0, qq = ok ? tx / g.stride : 0;
            ok = ok && pp * g.stride == ty && qq * g.stride == tx && pp < g.p && qq < g.q;
            size_t off = (((size_t)img[i] * g.p + pp) * g.q + qq) * g.k + ko;
            r[i] = fetch<T, V>(dy, ok ? off : 0, ok);
        }
    }
};

/* B[kk][c] = w[k][r][s][c]: rows are reductions (K on OUTER), channels contiguous. */
template <typename T, int V, class Map>
struct DgradB {
    static constexpr bool kKMajor = false;
    const T *w;
    int kout, rsz, C, col, orow;

    __device__ void init(const Geo &geo, const T *ptr, int n0, int tid)
    {
        w = ptr;
        kout = geo.k;
        rsz = geo.r * geo.s;
        C = geo.c;
        orow = Map::outer(tid, 0);
        int c = n0 + Map::inner(tid);
        col = c < geo.N ? c : -1;
    }
    __device__ void load(int k0, int kend, Pack<T, V> (&r)[Map::kVecs]) const
    {
#pragma unroll
        for (int i = 0; i < Map::kVecs; i++) {
            int kk = k0 + orow + i * Map::kRowStep;
            bool ok = kk < kend && col >= 0;
            /* (k*R + r)*S + s = k*R*S + rs: one division splits kk. */
            int ko = kk % kout, rs = kk / kout;
            r[i] = fetch<T, V>(w, ok ? ((size_t)ko * rsz + rs) * C + col : 0, ok);
        }
    }
};

/* ---- wgrad: M = k, N = r*s*c, K = n*p*q ---- */

/* A[m][kk] = dy[kk][m]: rows are reductions, output channels contiguous. */
template <typename T, int V, class Map>
struct WgradA {
    static constexpr bool kKMajor = false;
    const T *dy;
    int kout, col, orow;

    __device__ void init(const Geo &geo, const T *ptr, int m0, int tid)
    {
        dy = ptr;
        kout = geo.k;
        orow = Map::outer(tid, 0);
        int ko = m0 + Map::inner(tid);
        col = ko < geo.M ? ko : -1;
    }
    __device__ void load(int k0, int kend, Pack<T, V> (&r)[Map::kVecs]) const
    {
#pragma unroll
        for (int i = 0; i < Map::kVecs; i++) {
            int kk = k0 + orow + i * Map::kRowStep;
            bool ok = kk < kend && col >= 0;
            r[i] = fetch<T, V>(dy, ok ? (size_t)kk * kout + col : 0, ok);
        }
    }
};

/* B[kk][j] = x[n, p*stride - pad + r, q*stride - pad + s, c] with kk = (n, p, q), j = (r, s, c):
 * the thread's column (r, s, c) is decoded once per block, each row's pixel per k-step. */
template <typename T, int V, class Map>
struct WgradB {
    static constexpr bool kKMajor = false;
    const T *x;
    Geo g;
    int cc, rr, ss, orow;

    __device__ void init(const Geo &geo, const T *ptr, int n0, int tid)
    {
        x = ptr;
        g = geo;
        orow = Map::outer(tid, 0);
        int j = n0 + Map::inner(tid), rs = j / g.c;
        cc = j < g.N ? j - rs * g.c : -1;
        rr = rs / g.s;
        ss = rs - rr * g.s;
    }
    __device__ void load(int k0, int kend, Pack<T, V> (&r)[Map::kVecs]) const
    {
        int pq = g.p * g.q;
#pragma unroll
        for (int i = 0; i < Map::kVecs; i++) {
            int kk = k0 + orow + i * Map::kRowStep;
            int nn = kk / pq, rem = kk - nn * pq, pp = rem / g.q, qq = rem - pp * g.q;
            int ih = pp * g.stride - g.pad + rr, iw = qq * g.stride - g.pad + ss;
            bool ok = kk < kend && cc >= 0 && (unsigned)ih < (unsigned)g.h && (unsigned)iw < (unsigned)g.w;
            size_t off = (((size_t)nn * g.h + ih) * g.w + iw) * g.c + cc;
            r[i] = fetch<T, V>(x, ok ? off : 0, ok);
        }
    }
};

/* The three passes: which loader fills A and B (kId: 0 forward, 1 dgrad, 2 wgrad). */
struct FwdPass {
    template <typename T, int V, class Map> using A = FwdA<T, V, Map>;
    template <typename T, int V, class Map> using B = FwdB<T, V, Map>;
    static constexpr bool kAK = true, kBK = true;
    static constexpr int kId = 0;
};
struct DgradPass {
    template <typename T, int V, class Map> using A = DgradA<T, V, Map>;
    template <typename T, int V, class Map> using B = DgradB<T, V, Map>;
    static constexpr bool kAK = true, kBK = false;
    static constexpr int kId = 1;
};
struct WgradPass {
    template <typename T, int V, class Map> using A = WgradA<T, V, Map>;
    template <typename T, int V, class Map> using B = WgradB<T, V, Map>;
    static constexpr bool kAK = false, kBK = false;
    static constexpr int kId = 2;
};

} // namespace fbk

#endif

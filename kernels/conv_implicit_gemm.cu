/* Convolutions as implicit GEMMs (kernels/conv_gemm.h): forward, dgrad and wgrad share two
 * templated kernels, a tensor-core one (WMMA, fp16/bf16 in, fp32 accumulators) and a CUDA-core
 * one (fp32, and fp16/bf16 where a GPU lacks tensor cores); the per-pass im2col gathers are in
 * conv_gather.cuh. No im2col buffer is ever written. */
#include <mma.h>
#include <stdint.h>
#include <type_traits>

#include "conv_gather.cuh"
#include "conv_gemm.h"

using namespace fbk;

namespace {

/* Tests force a tile or the CUDA-core path so every kernel gets checked (fb_kconv_set_override). */
int g_force_tile = 0, g_force_simt = 0;

/* Whether this compilation target has WMMA for T: the bf16 fragments exist from sm_80, fp16 from
 * sm_70; for older targets the tensor-core kernel compiles to a trap it never reaches, because
 * the launchers ask fb_kconv_tensor_cores() first. */
template <typename T>
__device__ constexpr bool tc_compiled()
{
#if defined(__CUDA_ARCH__)
    return std::is_same<T, __half>::value           ? __CUDA_ARCH__ >= 700
           : std::is_same<T, __nv_bfloat16>::value ? __CUDA_ARCH__ >= 800
                                                   : false;
#else
    return false;
#endif
}

template <typename OutT>
__device__ __forceinline__ void put(OutT *out, size_t idx, float v, bool atomic)
{
    if constexpr (std::is_same<OutT, float>::value) {
        /* Split-K partial sums meet in a zeroed fp32 output. */
        if (atomic) {
            atomicAdd(out + idx, v);
            return;
        }
    }
    out[idx] = from_f<OutT>(v);
}

/* Tensor-core implicit GEMM. Block tile BM x BN, K-step 32, WARPS_M x WARPS_N warps each owning
 * a (BM/WARPS_M) x (BN/WARPS_N) patch of 16x16 fp32 accumulators. Shared memory holds two
 * stages of A and B (register-staged double buffering: the next k-step's gathers are in flight
 * while the tensor cores work on this one; one __syncthreads per k-step suffices because a
 * stage is rewritten only after the barrier that ends its last read). Rows are padded by 8
 * elements (16 bytes), which makes the 8 rows of each WMMA 16-byte row fetch fall in distinct
 * banks. blockIdx.z splits K (wgrad only; then the output is fp32, zeroed, and added to).
 *
 * What to expect (no GPU has measured it yet: docs/benchmarks/compute.md): on A100 a WMMA
 * kernel of this shape falls short of cuBLAS; on H100/H200 cuBLAS uses wgmma and TMA, which
 * mma.sync (what WMMA compiles to) cannot match, and the gathers' integer arithmetic competes
 * with the tensor cores for issue slots, so the gap to cuBLAS there is wider. The vector-gather
 * variants are held to 128 registers (2 blocks of 256 threads, or 4 of 128, per SM). ptxas (CUDA
 * 13.0, -O2, -Xptxas -v) reports no spills for them but three bf16 128x128 ones: forward on sm_80
 * 36 bytes of spill stores and 40 of loads, dgrad 4/4 on sm_80 and 16/20 on sm_90 (stack frames
 * of 8 to 40 bytes, in L1). Left so until a GPU measures it against the alternative, one block
 * per SM and half the warps to hide the gathers' latency. The scalar ones (c = 3 stem, odd
 * channel counts) hold 16 gathers each in flight and are left free, since capping them spills. */
template <typename T, class Pass, typename OutT, int BM, int BN, int WARPS_M, int WARPS_N, int V>
__global__ void __launch_bounds__(WARPS_M *WARPS_N * 32, V > 1 ? (BM >= 128 ? 2 : 4) : 1)
    tc_conv_gemm(Geo g, const T *__restrict__ a, const T *__restrict__ b, OutT *__restrict__ out,
                 int kchunk)
{
    if constexpr (!tc_compiled<T>()) {
        __trap();
    } else {
        namespace wmma = nvcuda::wmma;
        constexpr int NT = WARPS_M * WARPS_N * 32, BK = 32, PAD = 8;
        constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N, FM = WM / 16, FN = WN / 16;
        constexpr bool AK = Pass::kAK, BKM = Pass::kBK;
        using MapA = std::conditional_t<AK, TileMap<BM, BK, V, NT>, TileMap<BK, BM, V, NT>>;
        using MapB = std::conditional_t<BKM, TileMap<BN, BK, V, NT>, TileMap<BK, BN, V, NT>>;
        using LA = typename Pass::template A<T, V, MapA>;
        using LB = typename Pass::template B<T, V, MapB>;
        constexpr int LDA = AK ? BK + PAD : BM + PAD, LDB = BKM ? BK + PAD : BN + PAD;
        constexpr int SA = (AK ? BM : BK) * LDA, SB = (BKM ? BN : BK) * LDB;
        static_assert((SA * sizeof(T)) % 32 == 0 && (SB * sizeof(T)) % 32 == 0,
                      "WMMA pointers must stay 32-byte aligned");
        static_assert(2 * (SA + SB) * sizeof(T) >= NT / 32 * 256 * sizeof(float),
                      "the epilogue's per-warp scratch reuses the stages");
        using LayA = std::conditional_t<AK, wmma::row_major, wmma::col_major>;
        using LayB = std::conditional_t<BKM, wmma::col_major, wmma::row_major>;
        __shared__ __align__(128) T smem[2 * (SA + SB)];

        const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
        const int wm = warp / WARPS_N, wn = warp % WARPS_N;
        const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
        const int kbeg = blockIdx.z * kchunk, kend = min(g.K, kbeg + kchunk);
        LA la;
        LB lb;
        la.init(g, a, m0, tid);
        lb.init(g, b, n0, tid);
        Pack<T, V> ra[MapA::kVecs], rb[MapB::kVecs];

        auto stage = [&](int buf) {
            T *as = smem + buf * (SA + SB), *bs = as + SA;
#pragma unroll
            for (int i = 0; i < MapA::kVecs; i++)
                *reinterpret_cast<Pack<T, V> *>(as + MapA::outer(tid, i) * LDA + MapA::inner(tid)) = ra[i];
#pragma unroll
            for (int i = 0; i < MapB::kVecs; i++)
                *reinterpret_cast<Pack<T, V> *>(bs + MapB::outer(tid, i) * LDB + MapB::inner(tid)) = rb[i];
        };

        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
        for (int i = 0; i < FM; i++)
#pragma unroll
            for (int j = 0; j < FN; j++)
                wmma::fill_fragment(acc[i][j], 0.0f);

        la.load(kbeg, kend, ra);
        lb.load(kbeg, kend, rb);
        stage(0);
        __syncthreads();
        int buf = 0;
        for (int k0 = kbeg; k0 < kend; k0 += BK) {
            const bool more = k0 + BK < kend;
            if (more) {
                la.load(k0 + BK, kend, ra);
                lb.load(k0 + BK, kend, rb);
            }
            const T *as = smem + buf * (SA + SB), *bs = as + SA;
#pragma unroll
            for (int kf = 0; kf < BK; kf += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, T, LayA> fa[FM];
                wmma::fragment<wmma::matrix_b, 16, 16, 16, T, LayB> fb[FN];
#pragma unroll
                for (int i = 0; i < FM; i++) {
                    int mm = wm * WM + i * 16;
                    wmma::load_matrix_sync(fa[i], as + (AK ? mm * LDA + kf : kf * LDA + mm), LDA);
                }
#pragma unroll
                for (int j = 0; j < FN; j++) {
                    int nn = wn * WN + j * 16;
                    wmma::load_matrix_sync(fb[j], bs + (BKM ? nn * LDB + kf : kf * LDB + nn), LDB);
                }
#pragma unroll
                for (int i = 0; i < FM; i++)
#pragma unroll
                    for (int j = 0; j < FN; j++)
                        wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
            }
            if (more)
                stage(buf ^ 1);
            __syncthreads();
            buf ^= 1;
        }

        /* The loop ended on a barrier, so the stages are free: each warp bounces its fragments
         * through 1 KiB of them to store only the in-range elements, converted. */
        float *scratch = reinterpret_cast<float *>(smem) + warp * 256;
        const bool atomic = gridDim.z > 1;
        const int row = lane / 2, col0 = (lane % 2) * 8;
#pragma unroll
        for (int i = 0; i < FM; i++)
#pragma unroll
            for (int j = 0; j < FN; j++) {
                wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
                __syncwarp();
                int m = m0 + wm * WM + i * 16 + row, nb = n0 + wn * WN + j * 16 + col0;
                if (m < g.M)
#pragma unroll
                    for (int e = 0; e < 8; e++)
                        if (nb + e < g.N)
                            put(out, (size_t)m * g.N + nb + e, scratch[row * 16 + col0 + e], atomic);
                __syncwarp();
            }
    }
}

/* CUDA-core implicit GEMM, the classic register-tiled SGEMM: 256 threads in a 16 x 16 grid,
 * each computing TM x TN = (BM/16) x (BN/16) outputs from float4 reads of k-major stages
 * (threads own columns tx*4 + 64*g so a warp's float4 reads are contiguous). Tiles are stored
 * to shared memory as fp32, transposed where the gather is K-major. Expect it below cuBLAS's
 * SGEMM at large M, N, and further below where the gathers dominate (c = 3); no GPU has measured
 * it yet (docs/benchmarks/compute.md). */
template <typename T, class Pass, typename OutT, int BM, int V>
__global__ void __launch_bounds__(256)
    simt_conv_gemm(Geo g, const T *__restrict__ a, const T *__restrict__ b, OutT *__restrict__ out,
                   int kchunk)
{
    constexpr int NT = 256, BN = BM, BK = 1024 / BM, TM = BM / 16, TN = BN / 16;
    constexpr bool AK = Pass::kAK, BKM = Pass::kBK;
    using MapA = std::conditional_t<AK, TileMap<BM, BK, V, NT>, TileMap<BK, BM, V, NT>>;
    using MapB = std::conditional_t<BKM, TileMap<BN, BK, V, NT>, TileMap<BK, BN, V, NT>>;
    using LA = typename Pass::template A<T, V, MapA>;
    using LB = typename Pass::template B<T, V, MapB>;
    __shared__ __align__(16) float as[2][BK][BM];
    __shared__ __align__(16) float bs[2][BK][BN];

    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
    const int kbeg = blockIdx.z * kchunk, kend = min(g.K, kbeg + kchunk);
    LA la;
    LB lb;
    la.init(g, a, m0, tid);
    lb.init(g, b, n0, tid);
    Pack<T, V> ra[MapA::kVecs], rb[MapB::kVecs];

    auto stage = [&](int buf) {
#pragma unroll
        for (int i = 0; i < MapA::kVecs; i++)
#pragma unroll
            for (int e = 0; e < V; e++) {
                int o = MapA::outer(tid, i), in = MapA::inner(tid) + e;
                as[buf][AK ? in : o][AK ? o : in] = to_f(ra[i].v[e]);
            }
#pragma unroll
        for (int i = 0; i < MapB::kVecs; i++)
#pragma unroll
            for (int e = 0; e < V; e++) {
                int o = MapB::outer(tid, i), in = MapB::inner(tid) + e;
                bs[buf][BKM ? in : o][BKM ? o : in] = to_f(rb[i].v[e]);
            }
    };

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
            acc[i][j] = 0.0f;

    la.load(kbeg, kend, ra);
    lb.load(kbeg, kend, rb);
    stage(0);
    __syncthreads();
    int buf = 0;
    for (int k0 = kbeg; k0 < kend; k0 += BK) {
        const bool more = k0 + BK < kend;
        if (more) {
            la.load(k0 + BK, kend, ra);
            lb.load(k0 + BK, kend, rb);
        }
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float av[TM], bv[TN];
#pragma unroll
            for (int q = 0; q < TM / 4; q++) {
                float4 t = *reinterpret_cast<const float4 *>(&as[buf][kk][q * 64 + ty * 4]);
                av[q * 4] = t.x, av[q * 4 + 1] = t.y, av[q * 4 + 2] = t.z, av[q * 4 + 3] = t.w;
            }
#pragma unroll
            for (int q = 0; q < TN / 4; q++) {
                float4 t = *reinterpret_cast<const float4 *>(&bs[buf][kk][q * 64 + tx * 4]);
                bv[q * 4] = t.x, bv[q * 4 + 1] = t.y, bv[q * 4 + 2] = t.z, bv[q * 4 + 3] = t.w;
            }
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        if (more)
            stage(buf ^ 1);
        __syncthreads();
        buf ^= 1;
    }

    const bool atomic = gridDim.z > 1;
#pragma unroll
    for (int i = 0; i < TM; i++) {
        int m = m0 + (i / 4) * 64 + ty * 4 + i % 4;
        if (m >= g.M)
            continue;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            int n = n0 + (j / 4) * 64 + tx * 4 + j % 4;
            if (n < g.N)
                put(out, (size_t)m * g.N + n, acc[i][j], atomic);
        }
    }
}

struct DeviceInfo {
    int major, minor, sms;
    int arch; /* the virtual architecture of this file's code as loaded for the device */
};

/* Compiled with the tensor-core kernels, so its attributes say which of this file's builds the
 * device runs (the build for its own architecture, or PTX compiled just in time). */
__global__ void arch_probe() {}

cudaError_t device_info(DeviceInfo *d)
{
    static int archs[64]; /* per device, 0 until asked: the attributes cost a driver call */
    cudaFuncAttributes fa;
    int dev = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&d->major, cudaDevAttrComputeCapabilityMajor, dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&d->minor, cudaDevAttrComputeCapabilityMinor, dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, dev);
    if (err == cudaSuccess && dev >= 0 && dev < 64 && archs[dev]) {
        d->arch = archs[dev];
    } else if (err == cudaSuccess &&
               (err = cudaFuncGetAttributes(&fa, arch_probe)) == cudaSuccess) {
        d->arch = fa.ptxVersion;
        if (dev >= 0 && dev < 64)
            archs[dev] = fa.ptxVersion;
    }
    return err;
}

bool tc_usable(int prec, const DeviceInfo &d)
{
    return fb_kconv_tc_usable(prec, d.major * 10 + d.minor, d.arch) != 0;
}

inline int cdiv(long long a, long long b) { return (int)((a + b - 1) / b); }

/* Split K only where it is allowed (an fp32 output that can be zeroed and added to) and
 * needed: when the M x N tiles alone give fewer than two blocks per SM, which is wgrad's usual
 * shape (K = n*p*q in the hundreds of thousands, M = k and N = r*s*c small). Each split keeps
 * at least 8 k-steps so the atomics stay a small fraction of the traffic. */
int pick_splits(const Geo &g, int bm, int bn, int bk, bool can_split, int sms, int *kchunk)
{
    long long tiles = (long long)cdiv(g.M, bm) * cdiv(g.N, bn);
    int splits = 1;
    if (can_split && tiles < 2LL * sms) {
        splits = cdiv(2LL * sms, tiles);
        int most = cdiv(g.K, 8 * bk);
        splits = splits < most ? splits : most;
        splits = splits > 1 ? splits : 1;
    }
    int chunk = cdiv(cdiv(g.K, splits), bk) * bk;
    *kchunk = chunk > 0 ? chunk : bk;
    return cdiv(g.K, *kchunk) > 0 ? cdiv(g.K, *kchunk) : 1;
}

template <typename T, class Pass, typename OutT, int V>
cudaError_t launch(const Geo &g, const T *a, const T *b, OutT *out, bool tc, int sms, cudaStream_t s)
{
    /* 128x128 tiles where they fill the GPU (two blocks per SM of 8 warps each, 40 KiB of shared
     * memory apiece); 64x64 where the GEMM is too small for that or N is at most 64 (the growth
     * layers' k = 32 3x3 convolutions), so fewer tiles run half empty. */
    long long big = (long long)cdiv(g.M, 128) * cdiv(g.N, 128);
    int bm = (big >= sms && g.N > 64) ? 128 : 64;
    if (g_force_tile == 64 || g_force_tile == 128)
        bm = g_force_tile;
    const bool can_split = std::is_same<OutT, float>::value;
    int kchunk = 0, splits = pick_splits(g, bm, bm, tc ? 32 : 1024 / bm, can_split, sms, &kchunk);
    dim3 grid(cdiv(g.M, bm), cdiv(g.N, bm), splits);
    if (grid.y > 65535)
        return cudaErrorInvalidConfiguration;
    if (splits > 1) {
        cudaError_t err = cudaMemsetAsync(out, 0, (size_t)g.M * g.N * sizeof(OutT), s);
        if (err != cudaSuccess)
            return err;
    }
    (void)cudaGetLastError();
    /* Only the pairings that exist are instantiated: fp32 never on tensor cores, and 16-bit
     * types on CUDA cores (the fallback for GPUs without them) with scalar gathers only. */
    constexpr bool kTc = !std::is_same<T, float>::value, kSimt = !kTc || V == 1;
    if constexpr (kTc) {
        if (tc && bm == 128)
            tc_conv_gemm<T, Pass, OutT, 128, 128, 2, 4, V><<<grid, 256, 0, s>>>(g, a, b, out, kchunk);
        else if (tc)
            tc_conv_gemm<T, Pass, OutT, 64, 64, 2, 2, V><<<grid, 128, 0, s>>>(g, a, b, out, kchunk);
    }
    if constexpr (kSimt) {
        if (!tc && bm == 128)
            simt_conv_gemm<T, Pass, OutT, 128, V><<<grid, 256, 0, s>>>(g, a, b, out, kchunk);
        else if (!tc)
            simt_conv_gemm<T, Pass, OutT, 64, V><<<grid, 256, 0, s>>>(g, a, b, out, kchunk);
    }
    return cudaGetLastError();
}

/* One pass at one precision: picks tensor cores or CUDA cores and the vector width. 16-byte
 * gathers need every vector to lie in one pixel (or weight row) and be aligned: the channel
 * counts named in vec_dims divisible by 16 / sizeof(T), and 16-byte aligned tensors. */
template <typename T, class Pass, typename OutT>
cudaError_t run_typed(const Geo &g, int prec, const void *a, const void *b, OutT *out, int d1,
                      int d2, cudaStream_t s)
{
    constexpr int V = 16 / sizeof(T);
    DeviceInfo d;
    cudaError_t err = device_info(&d);
    if (err != cudaSuccess)
        return err;
    bool tc = !std::is_same<T, float>::value && !g_force_simt && tc_usable(prec, d);
    bool vec = d1 % V == 0 && d2 % V == 0 && (size_t)a % 16 == 0 && (size_t)b % 16 == 0;
    const T *ta = (const T *)a, *tb = (const T *)b;
    if (vec && (tc || std::is_same<T, float>::value))
        return launch<T, Pass, OutT, V>(g, ta, tb, out, tc, d.sms, s);
    return launch<T, Pass, OutT, 1>(g, ta, tb, out, tc, d.sms, s);
}

/* Checks the shape, fills the GEMM view, and handles the empty cases without a launch. */
bool make_geo(const struct fb_kconv *cv, int pass, Geo *g)
{
    if (!cv || cv->n < 0 || cv->h < 0 || cv->w < 0 || cv->c < 0 || cv->k < 0 || cv->r < 1 ||
        cv->s < 1 || cv->stride < 1 || cv->pad < 0)
        return false;
    int p = (cv->h + 2 * cv->pad - cv->r) / cv->stride + 1;
    int q = (cv->w + 2 * cv->pad - cv->s) / cv->stride + 1;
    if (cv->h + 2 * cv->pad < cv->r || cv->w + 2 * cv->pad < cv->s || cv->p != p || cv->q != q)
        return false;
    *g = Geo{cv->n, cv->h, cv->w, cv->c, cv->k, cv->r, cv->s, cv->stride, cv->pad, p, q, 0, 0, 0};
    long long npq = (long long)cv->n * p * q, nhw = (long long)cv->n * cv->h * cv->w;
    long long rsc = (long long)cv->r * cv->s * cv->c, krs = (long long)cv->k * cv->r * cv->s;
    long long m = pass == 0 ? npq : pass == 1 ? nhw : cv->k;
    long long n = pass == 0 ? cv->k : pass == 1 ? cv->c : rsc;
    long long k = pass == 0 ? rsc : pass == 1 ? krs : npq;
    /* 32-bit GEMM indices (the gathers' offsets themselves are 64-bit). */
    if (m > INT32_MAX - 256 || n > INT32_MAX - 256 || k > INT32_MAX - 1024)
        return false;
    g->M = (int)m, g->N = (int)n, g->K = (int)k;
    return true;
}

/* Forward and dgrad write the activations' type, wgrad always fp32. */
template <class Pass, typename T>
using OutOf = std::conditional_t<Pass::kId == 2, float, T>;

template <class Pass>
int run_pass(const struct fb_kconv *cv, int prec, const void *a, const void *b, void *out,
             void *stream)
{
    Geo g;
    cudaStream_t s = (cudaStream_t)stream;
    if (!make_geo(cv, Pass::kId, &g) || prec < FB_KPREC_FP32 || prec > FB_KPREC_BF16)
        return (int)cudaErrorInvalidValue;
    /* Vector gathers need these channel counts divisible (conv_gather.cuh, per loader). */
    int d1 = Pass::kId == 0 ? g.c : g.k, d2 = g.c;
    size_t esize = prec == FB_KPREC_FP32 || Pass::kId == 2 ? 4 : 2;
    if ((long long)g.M * g.N == 0)
        return 0;
    if (g.K == 0) /* empty sums: all-zero bits are +0 in fp32, fp16 and bf16 */
        return (int)cudaMemsetAsync(out, 0, (size_t)g.M * g.N * esize, s);
    switch (prec) {
    case FB_KPREC_FP32:
        return (int)run_typed<float, Pass, float>(g, prec, a, b, (float *)out, d1, d2, s);
    case FB_KPREC_FP16: {
        using O = OutOf<Pass, __half>;
        return (int)run_typed<__half, Pass, O>(g, prec, a, b, (O *)out, d1, d2, s);
    }
    default: {
        using O = OutOf<Pass, __nv_bfloat16>;
        return (int)run_typed<__nv_bfloat16, Pass, O>(g, prec, a, b, (O *)out, d1, d2, s);
    }
    }
}

} // namespace

extern "C" int fb_kconv_fwd(const struct fb_kconv *cv, int prec, const void *x, const void *w,
                            void *y, void *stream)
{
    return run_pass<FwdPass>(cv, prec, x, w, y, stream);
}

extern "C" int fb_kconv_dgrad(const struct fb_kconv *cv, int prec, const void *dy, const void *w,
                              void *dx, void *stream)
{
    return run_pass<DgradPass>(cv, prec, dy, w, dx, stream);
}

extern "C" int fb_kconv_wgrad(const struct fb_kconv *cv, int prec, const void *x, const void *dy,
                              float *dw, void *stream)
{
    /* The GEMM's A is dy (M = k) and B is the gathered x (N = r*s*c). */
    return run_pass<WgradPass>(cv, prec, dy, x, dw, stream);
}

extern "C" int fb_kconv_tensor_cores(int prec)
{
    DeviceInfo d;
    if (device_info(&d) != cudaSuccess)
        return 0;
    return tc_usable(prec, d) ? 1 : 0;
}

extern "C" void fb_kconv_set_override(int tile, int simt_only)
{
    g_force_tile = tile;
    g_force_simt = simt_only;
}

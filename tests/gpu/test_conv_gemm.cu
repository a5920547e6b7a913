/* GPU check of the convolution and BatchNorm + ReLU kernels (kernels/conv_gemm.h) against a
 * double-precision CPU reference of the same math on the same rounded inputs: every pass, every
 * precision, every kernel variant (tiles 64 and 128, tensor cores and CUDA cores), at shapes
 * that hit the stem (c = 3), 1x1 and 3x3 layers, c = 992, strides and odd sizes. Prints one line
 * per case with its largest error against its tolerance. Exits 77 ("no GPU: ...") where no
 * GPU can be used, 1 on any failure. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <vector>

#include "conv_gemm.h"
#include "gpu_check.cuh"

namespace {

/* Tolerances. Inputs are exact in every precision (they are rounded first), and so are their
 * products in fp32; what is left is fp32 accumulation, bounded relative to sum |a*b| (1e-5 on
 * CUDA cores; 3e-5 on tensor cores, whose fp32 adds truncate the aligned products), plus the
 * rounding of 16-bit outputs (out_tol, gpu_check.cuh). */

struct Shape {
    int n, h, w, c, k, r, s, stride, pad;
};

fb_kconv make_conv(const Shape &sh)
{
    fb_kconv cv = {sh.n, sh.h, sh.w, sh.c, sh.k, sh.r, sh.s, sh.stride, sh.pad, 0, 0};
    cv.p = (sh.h + 2 * sh.pad - sh.r) / sh.stride + 1;
    cv.q = (sh.w + 2 * sh.pad - sh.s) / sh.stride + 1;
    return cv;
}

/* CPU references: out[i] and sum |a*b| of its terms, in double. */
void ref_fwd(const fb_kconv &v, const Tensor &x, const Tensor &w, std::vector<double> &out,
             std::vector<double> &sabs)
{
    out.assign((size_t)v.n * v.p * v.q * v.k, 0.0);
    sabs.assign(out.size(), 0.0);
    for (int n = 0; n < v.n; n++)
        for (int p = 0; p < v.p; p++)
            for (int q = 0; q < v.q; q++)
                for (int k = 0; k < v.k; k++) {
                    double acc = 0, sa = 0;
                    for (int r = 0; r < v.r; r++)
                        for (int s = 0; s < v.s; s++) {
                            int ih = p * v.stride - v.pad + r, iw = q * v.stride - v.pad + s;
                            if (ih < 0 || ih >= v.h || iw < 0 || iw >= v.w)
                                continue;
                            for (int c = 0; c < v.c; c++) {
                                double t = x.val[(((size_t)n * v.h + ih) * v.w + iw) * v.c + c] *
                                           w.val[(((size_t)k * v.r + r) * v.s + s) * v.c + c];
                                acc += t, sa += fabs(t);
                            }
                        }
                    size_t o = (((size_t)n * v.p + p) * v.q + q) * v.k + k;
                    out[o] = acc, sabs[o] = sa;
                }
}

void ref_dgrad(const fb_kconv &v, const Tensor &dy, const Tensor &w, std::vector<double> &out,
               std::vector<double> &sabs)
{
    out.assign((size_t)v.n * v.h * v.w * v.c, 0.0);
    sabs.assign(out.size(), 0.0);
    for (int n = 0; n < v.n; n++)
        for (int y = 0; y < v.h; y++)
            for (int x = 0; x < v.w; x++)
                for (int c = 0; c < v.c; c++) {
                    double acc = 0, sa = 0;
                    for (int r = 0; r < v.r; r++)
                        for (int s = 0; s < v.s; s++) {
                            int ty = y + v.pad - r, tx = x + v.pad - s;
                            if (ty < 0 || tx < 0 || ty % v.stride || tx % v.stride)
                                continue;
                            int p = ty / v.stride, q = tx / v.stride;
                            if (p >= v.p || q >= v.q)
                                continue;
                            for (int k = 0; k < v.k; k++) {
                                double t = dy.val[(((size_t)n * v.p + p) * v.q + q) * v.k + k] *
                                           w.val[(((size_t)k * v.r + r) * v.s + s) * v.c + c];
                                acc += t, sa += fabs(t);
                            }
                        }
                    size_t o = (((size_t)n * v.h + y) * v.w + x) * v.c + c;
                    out[o] = acc, sabs[o] = sa;
                }
}

void ref_wgrad(const fb_kconv &v, const Tensor &x, const Tensor &dy, std::vector<double> &out,
               std::vector<double> &sabs)
{
    out.assign((size_t)v.k * v.r * v.s * v.c, 0.0);
    sabs.assign(out.size(), 0.0);
    for (int n = 0; n < v.n; n++)
        for (int p = 0; p < v.p; p++)
            for (int q = 0; q < v.q; q++)
                for (int r = 0; r < v.r; r++)
                    for (int s = 0; s < v.s; s++) {
                        int ih = p * v.stride - v.pad + r, iw = q * v.stride - v.pad + s;
                        if (ih < 0 || ih >= v.h || iw < 0 || iw >= v.w)
                            continue;
                        const double *xr = &x.val[(((size_t)n * v.h + ih) * v.w + iw) * v.c];
                        const double *dr = &dy.val[(((size_t)n * v.p + p) * v.q + q) * v.k];
                        for (int k = 0; k < v.k; k++) {
                            size_t o = (((size_t)k * v.r + r) * v.s + s) * v.c;
                            for (int c = 0; c < v.c; c++) {
                                double t = dr[k] * xr[c];
                                out[o + c] += t, sabs[o + c] += fabs(t);
                            }
                        }
                    }
}

struct Variant {
    const char *name;
    int tile, simt;
};
const Variant kVariants[] = {{"auto", 0, 0}, {"tile64", 64, 0}, {"tile128", 128, 0}, {"simt64", 64, 1}};

void check_conv(const Shape &sh, int prec)
{
    const char *pass_name[] = {"fwd", "dgrad", "wgrad"};
    fb_kconv cv = make_conv(sh);
    size_t nx = (size_t)cv.n * cv.h * cv.w * cv.c, nw = (size_t)cv.k * cv.r * cv.s * cv.c;
    size_t ny = (size_t)cv.n * cv.p * cv.q * cv.k;
    Tensor x = random_tensor(prec, nx, -1, 1), w = random_tensor(prec, nw, -1, 1);
    Tensor dy = random_tensor(prec, ny, -1, 1);
    Dev dx_, dw_, ddy, dout;
    CK(dx_.alloc(x.bytes.size()));
    CK(dw_.alloc(w.bytes.size()));
    CK(ddy.alloc(dy.bytes.size()));
    CK(dx_.put(x.bytes.data()));
    CK(dw_.put(w.bytes.data()));
    CK(ddy.put(dy.bytes.data()));
    size_t most = (nx > ny ? nx : ny) > nw ? (nx > ny ? nx : ny) : nw;
    CK(dout.alloc(most * 4));
    bool tc = fb_kconv_tensor_cores(prec) != 0;

    for (int pass = 0; pass < 3; pass++) {
        std::vector<double> ref, sabs;
        if (pass == 0)
            ref_fwd(cv, x, w, ref, sabs);
        else if (pass == 1)
            ref_dgrad(cv, dy, w, ref, sabs);
        else
            ref_wgrad(cv, x, dy, ref, sabs);
        int oprec = pass == 2 ? FB_KPREC_FP32 : prec;
        std::vector<unsigned char> got(ref.size() * esize(oprec));
        for (const Variant &var : kVariants) {
            if (var.simt && prec == FB_KPREC_FP32)
                continue; /* fp32 always runs on CUDA cores: "tile64" was this case */
            fb_kconv_set_override(var.tile, var.simt);
            CK(cudaMemset(dout.p, 0xff, most * 4)); /* NaN in every precision */
            int rc = pass == 0   ? fb_kconv_fwd(&cv, prec, dx_.p, dw_.p, dout.p, NULL)
                     : pass == 1 ? fb_kconv_dgrad(&cv, prec, ddy.p, dw_.p, dout.p, NULL)
                                 : fb_kconv_wgrad(&cv, prec, dx_.p, ddy.p, (float *)dout.p, NULL);
            fb_kconv_set_override(0, 0);
            CK(rc);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(got.data(), dout.p, got.size(), cudaMemcpyDeviceToHost));
            bool on_tc = tc && !var.simt && prec != FB_KPREC_FP32;
            double acc_tol = on_tc ? 3e-5 : 1e-5;
            Worst wst;
            for (size_t i = 0; i < ref.size(); i++)
                wst.add(load_elem(oprec, got.data(), i), ref[i],
                        acc_tol * sabs[i] + out_tol(oprec) * fabs(ref[i]) + 1e-6);
            printf("%-5s %s %-7s %-11s n=%d h=%d w=%d c=%d k=%d r=%d s=%d stride=%d pad=%d  "
                   "max_abs_err=%.3g err/tol=%.3g  %s\n",
                   pass_name[pass], kPrecName[prec], var.name, on_tc ? "tensor-core" : "cuda-core",
                   sh.n, sh.h, sh.w, sh.c, sh.k, sh.r, sh.s, sh.stride, sh.pad, wst.abs_err,
                   wst.ratio, wst.bad ? "FAIL" : "ok");
            g_failures += wst.bad;
        }
    }
}

/* BatchNorm + ReLU, forward (out of place and in place) then backward, against double. */
void check_bn(size_t rows, int c, int prec)
{
    size_t cnt = rows * (size_t)c;
    Tensor x = random_tensor(prec, cnt, 1.0, 4.0); /* mean far from 0: tests the shifted sums */
    Tensor dy = random_tensor(prec, cnt, -1, 1);
    std::vector<float> gamma(c), beta(c);
    for (int i = 0; i < c; i++)
        gamma[i] = (float)uniform(0.5, 1.5), beta[i] = (float)uniform(-0.5, 0.5);
    std::vector<double> mean(c, 0.0), var(c, 0.0);
    for (size_t r = 0; r < rows; r++)
        for (int i = 0; i < c; i++)
            mean[i] += x.val[r * c + i] / rows;
    for (size_t r = 0; r < rows; r++)
        for (int i = 0; i < c; i++)
            var[i] += (x.val[r * c + i] - mean[i]) * (x.val[r * c + i] - mean[i]) / rows;

    Dev dx, dy_, dout, dgrad, dg, db, dmv, dgam, dbet, dscr;
    size_t bytes = cnt * esize(prec);
    CK(dx.alloc(bytes));
    CK(dy_.alloc(bytes));
    CK(dout.alloc(bytes));
    CK(dgrad.alloc(bytes));
    CK(dmv.alloc(2 * c * sizeof(float)));
    CK(dscr.alloc(2 * c * sizeof(float)));
    CK(dg.alloc(c * sizeof(float)));
    CK(db.alloc(c * sizeof(float)));
    CK(dgam.alloc(c * sizeof(float)));
    CK(dbet.alloc(c * sizeof(float)));
    CK(dx.put(x.bytes.data()));
    CK(dy_.put(dy.bytes.data()));
    CK(dgam.put(gamma.data()));
    CK(dbet.put(beta.data()));

    std::vector<unsigned char> y(bytes), y2(bytes), g(bytes);
    std::vector<float> mv(2 * c);
    for (int inplace = 0; inplace < 2; inplace++) {
        void *out = dout.p;
        if (inplace)
            CK(cudaMemcpy(dout.p, dx.p, bytes, cudaMemcpyDeviceToDevice));
        else
            CK(cudaMemset(dout.p, 0xff, bytes));
        const void *in = inplace ? dout.p : dx.p;
        CK(fb_kbn_relu_fwd(prec, in, out, rows, c, (float *)dgam.p, (float *)dbet.p,
                           (float *)dmv.p, NULL));
        CK(cudaDeviceSynchronize());
        CK(dout.get(inplace ? y2.data() : y.data()));
        CK(dmv.get(mv.data()));
        Worst wm, wy;
        for (int i = 0; i < c; i++) {
            double sd = sqrt(var[i]);
            wm.add(mv[i], mean[i], 1e-5 * (fabs(mean[i]) + sd) + 1e-7);
            wm.add(mv[c + i], var[i], 1e-4 * var[i] + 1e-7);
        }
        const unsigned char *yy = inplace ? y2.data() : y.data();
        for (size_t r = 0; r < rows; r++)
            for (int i = 0; i < c; i++) {
                double xh = (x.val[r * c + i] - mean[i]) / sqrt(var[i] + 1e-5);
                double t = xh * gamma[i] + beta[i], ref = t > 0 ? t : 0;
                wy.add(load_elem(prec, yy, r * c + i), ref,
                       out_tol(prec) * fabs(ref) + 2e-5 * (1 + fabs(xh * gamma[i]) + fabs(beta[i])));
            }
        printf("bnfwd %s %-8s rows=%zu c=%d  mean/var err/tol=%.3g  y max_abs_err=%.3g "
               "err/tol=%.3g  %s\n",
               kPrecName[prec], inplace ? "in-place" : "separate", rows, c, wm.ratio, wy.abs_err,
               wy.ratio, wm.bad || wy.bad ? "FAIL" : "ok");
        g_failures += wm.bad || wy.bad;
    }

    /* Backward on the forward's own output (the ReLU mask is read from y). */
    CK(dout.put(y.data()));
    CK(cudaMemset(dgrad.p, 0xff, bytes));
    CK(fb_kbn_relu_bwd(prec, dx.p, dout.p, dy_.p, dgrad.p, rows, c, (float *)dgam.p,
                       (float *)dmv.p, (float *)dg.p, (float *)db.p, (float *)dscr.p, NULL));
    CK(cudaDeviceSynchronize());
    CK(dgrad.get(g.data()));
    std::vector<float> dgam_got(c), dbet_got(c);
    CK(dg.get(dgam_got.data()));
    CK(db.get(dbet_got.data()));
    std::vector<double> rb(c, 0.0), rg(c, 0.0), ab(c, 0.0), ag(c, 0.0);
    for (size_t r = 0; r < rows; r++)
        for (int i = 0; i < c; i++) {
            size_t e = r * c + i;
            double dyr = load_elem(prec, y.data(), e) > 0 ? dy.val[e] : 0.0;
            double xh = (x.val[e] - mean[i]) / sqrt(var[i] + 1e-5);
            rb[i] += dyr, rg[i] += dyr * xh, ab[i] += fabs(dyr), ag[i] += fabs(dyr * xh);
        }
    Worst ws, wd;
    for (int i = 0; i < c; i++) {
        ws.add(dbet_got[i], rb[i], 1e-5 * ab[i] + 1e-6);
        ws.add(dgam_got[i], rg[i], 1e-4 * ag[i] + 1e-6);
    }
    for (size_t r = 0; r < rows; r++)
        for (int i = 0; i < c; i++) {
            size_t e = r * c + i;
            double dyr = load_elem(prec, y.data(), e) > 0 ? dy.val[e] : 0.0;
            double rstd = 1.0 / sqrt(var[i] + 1e-5), xh = (x.val[e] - mean[i]) * rstd;
            double a = gamma[i] * rstd, ref = a * (dyr - rb[i] / rows - xh * rg[i] / rows);
            double scale = fabs(a) * (fabs(dyr) + ab[i] / rows + fabs(xh) * ag[i] / rows);
            wd.add(load_elem(prec, g.data(), e), ref, out_tol(prec) * fabs(ref) + 1e-4 * scale + 1e-6);
        }
    printf("bnbwd %s rows=%zu c=%d  dgamma/dbeta err/tol=%.3g  dx max_abs_err=%.3g err/tol=%.3g  %s\n",
           kPrecName[prec], rows, c, ws.ratio, wd.abs_err, wd.ratio, ws.bad || wd.bad ? "FAIL" : "ok");
    g_failures += ws.bad || wd.bad;
}

} // namespace

int main(void)
{
    if (!have_gpu())
        return 77;

    const Shape shapes[] = {
        {2, 29, 29, 3, 64, 7, 7, 2, 3},     /* the stem: 7x7/2, c = 3 (scalar gathers) */
        {2, 14, 14, 96, 128, 1, 1, 1, 0},   /* a bottleneck 1x1 */
        {2, 14, 14, 128, 32, 3, 3, 1, 1},   /* a growth 3x3, N = 32 */
        {3, 7, 7, 5, 7, 3, 3, 1, 1},        /* odd everything */
        {1, 7, 7, 992, 128, 1, 1, 1, 0},    /* the widest 1x1 of block 4 */
        {2, 9, 9, 16, 24, 3, 3, 2, 1},      /* stride 2 with padding: dgrad's divisibility */
        {2, 10, 10, 8, 12, 3, 3, 1, 1},     /* fp16 fwd vectorised, dgrad/wgrad scalar */
        {2, 8, 8, 32, 16, 1, 1, 2, 0},      /* 1x1/2: inputs no output reads get dx = 0 */
        {4, 28, 28, 64, 128, 3, 3, 1, 1},   /* many k-steps, full 128 tiles, split-K wgrad */
    };
    for (int prec = FB_KPREC_FP32; prec <= FB_KPREC_BF16; prec++)
        for (const Shape &sh : shapes)
            check_conv(sh, prec);

    const struct {
        size_t rows;
        int c;
    } bn[] = {{450, 64}, {1000, 3}, {98, 992}, {147, 5}, {6272, 128}};
    for (int prec = FB_KPREC_FP32; prec <= FB_KPREC_BF16; prec++)
        for (const auto &b : bn)
            check_bn(b.rows, b.c, prec);

    printf("%s: %d failure(s)\n", g_failures ? "FAIL" : "PASS", g_failures);
    return g_failures ? 1 : 0;
}

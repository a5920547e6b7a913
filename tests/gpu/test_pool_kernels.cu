/* GPU check of the pools and pitched copies (kernels/pool_kernels.h) against a double-precision
 * CPU reference on the same rounded inputs, in fp32, fp16 and bf16: max pools (DenseNet's 3x3/2
 * pad 1, overlapping 3x3/1, 1x1/2 that skips pixels, odd sizes and channel counts, and inputs
 * drawn from five values so that windows tie and the gradient must go to the first maximum),
 * average pools (2x2/2, 3x3/2 pad 1 with padding counted, global 7x7 and 5x3), each on the
 * vector path and on misaligned pointers (the scalar path), and the copies with and without
 * accumulation, whose untouched neighbours are checked too, and the one-kernel concatenation
 * and its split (fb_kconcat). Outputs are NaN before each launch.
 * Prints one line per case with its largest error against its tolerance. Exits 77 ("no GPU:
 * ...") where no GPU can be used, 1 on any failure. */
#include "gpu_check.cuh"
#include "pool_kernels.h"

namespace {

/* Tolerances. A max pool's forward is one of its inputs: exact. Sums (average pools, a pixel's
 * gradient from the windows that read it, dst + src) are fp32 over at most 49 terms: 1e-5 of
 * the sum of their magnitudes bounds that with room to spare, plus out_tol for 16-bit outputs. */
const double kSumTol = 1e-5;

struct Pool {
    const char *what;
    int kind, n, h, w, c, r, s, stride, pad;
    bool ties; /* inputs from {-1, -0.5, 0, 0.5, 1}: many equal maxima per window */
};

fb_kconv make_pool(const Pool &pl)
{
    fb_kconv cv = {pl.n, pl.h, pl.w, pl.c, pl.c, pl.r, pl.s, pl.stride, pl.pad, 0, 0};
    cv.p = (pl.h + 2 * pl.pad - pl.r) / pl.stride + 1;
    cv.q = (pl.w + 2 * pl.pad - pl.s) / pl.stride + 1;
    return cv;
}

size_t xi(const fb_kconv &v, int n, int y, int x, int c)
{
    return (((size_t)n * v.h + y) * v.w + x) * v.c + c;
}

size_t yi(const fb_kconv &v, int n, int p, int q, int c)
{
    return (((size_t)n * v.p + p) * v.q + q) * v.c + c;
}

/* The window of (p, q) clipped to the input, as the host engine clips it. */
void clip(const fb_kconv &v, int p, int q, int *y0, int *y1, int *x0, int *x1)
{
    *y0 = p * v.stride - v.pad, *x0 = q * v.stride - v.pad;
    *y1 = *y0 + v.r < v.h ? *y0 + v.r : v.h;
    *x1 = *x0 + v.s < v.w ? *x0 + v.s : v.w;
    *y0 = *y0 < 0 ? 0 : *y0;
    *x0 = *x0 < 0 ? 0 : *x0;
}

/* Forward and backward in double; mag[] is the sum of |terms| of each output's sum. */
void ref_pool(const fb_kconv &v, int kind, const Tensor &x, const Tensor &dy,
              std::vector<double> &y, std::vector<double> &ymag, std::vector<double> &dx,
              std::vector<double> &dxmag)
{
    const double inv = 1.0 / (v.r * v.s);
    y.assign((size_t)v.n * v.p * v.q * v.c, 0.0);
    ymag.assign(y.size(), 0.0);
    dx.assign((size_t)v.n * v.h * v.w * v.c, 0.0);
    dxmag.assign(dx.size(), 0.0);
    for (int n = 0; n < v.n; n++)
        for (int p = 0; p < v.p; p++)
            for (int q = 0; q < v.q; q++)
                for (int c = 0; c < v.c; c++) {
                    int y0, y1, x0, x1;
                    clip(v, p, q, &y0, &y1, &x0, &x1);
                    double g = dy.val[yi(v, n, p, q, c)], best = -INFINITY, sum = 0, mag = 0;
                    for (int a = y0; a < y1; a++)
                        for (int b = x0; b < x1; b++) {
                            double t = x.val[xi(v, n, a, b, c)];
                            best = t > best ? t : best;
                            sum += t, mag += fabs(t);
                        }
                    y[yi(v, n, p, q, c)] = kind == FB_KPOOL_MAX ? best : sum * inv;
                    ymag[yi(v, n, p, q, c)] = kind == FB_KPOOL_MAX ? 0.0 : mag * inv;
                    /* max: the gradient goes to the first element (row order) equal to it */
                    size_t win = SIZE_MAX;
                    for (int a = y0; a < y1 && win == SIZE_MAX; a++)
                        for (int b = x0; b < x1 && win == SIZE_MAX; b++)
                            if (x.val[xi(v, n, a, b, c)] == best)
                                win = xi(v, n, a, b, c);
                    for (int a = y0; a < y1; a++)
                        for (int b = x0; b < x1; b++) {
                            size_t i = xi(v, n, a, b, c);
                            double t = kind == FB_KPOOL_AVG ? g * inv : i == win ? g : 0.0;
                            dx[i] += t, dxmag[i] += fabs(t);
                        }
                }
}

/* One pool, forward then backward, in one precision; `offset` elements past an aligned
 * allocation when misaligned (c divisible by the vector still takes the scalar path). */
void check_pool(const Pool &pl, int prec, bool misaligned)
{
    fb_kconv cv = make_pool(pl);
    size_t nx = (size_t)cv.n * cv.h * cv.w * cv.c, ny = (size_t)cv.n * cv.p * cv.q * cv.c;
    size_t es = esize(prec), off = misaligned ? es : 0;
    Tensor x = random_tensor(prec, nx, -1, 1), dy = random_tensor(prec, ny, -1, 1);
    if (pl.ties)
        for (size_t i = 0; i < nx; i++)
            store_elem(x, i, 0.5 * (double)((int)floor(uniform(0, 5)) - 2));
    std::vector<double> y, ymag, dx, dxmag;
    ref_pool(cv, pl.kind, x, dy, y, ymag, dx, dxmag);

    Dev dxin, ddy, dout, dgrad;
    CK(dxin.alloc(nx * es + 16));
    CK(ddy.alloc(ny * es + 16));
    CK(dout.alloc(ny * es + 16));
    CK(dgrad.alloc(nx * es + 16));
    char *px = (char *)dxin.p + off, *pdy = (char *)ddy.p + off, *py = (char *)dout.p + off,
         *pdx = (char *)dgrad.p + off;
    CK(cudaMemcpy(px, x.bytes.data(), nx * es, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(pdy, dy.bytes.data(), ny * es, cudaMemcpyHostToDevice));
    CK(cudaMemset(dout.p, 0xff, dout.bytes)); /* NaN in every precision */
    CK(cudaMemset(dgrad.p, 0xff, dgrad.bytes));
    CK(fb_kpool_fwd(&cv, pl.kind, prec, px, py, NULL));
    CK(fb_kpool_bwd(&cv, pl.kind, prec, px, pdy, pdx, NULL));
    CK(cudaDeviceSynchronize());
    std::vector<unsigned char> gy(ny * es), gdx(nx * es);
    CK(cudaMemcpy(gy.data(), py, gy.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gdx.data(), pdx, gdx.size(), cudaMemcpyDeviceToHost));

    Worst wy, wd;
    for (size_t i = 0; i < ny; i++)
        wy.add(load_elem(prec, gy.data(), i), y[i],
               out_tol(prec) * fabs(y[i]) + kSumTol * ymag[i] + 1e-12);
    for (size_t i = 0; i < nx; i++)
        wd.add(load_elem(prec, gdx.data(), i), dx[i],
               out_tol(prec) * fabs(dx[i]) + kSumTol * dxmag[i] + 1e-12);
    printf("%-8s %s %-10s n=%d h=%d w=%d c=%d r=%d s=%d stride=%d pad=%d%s  fwd max_abs_err=%.3g "
           "err/tol=%.3g  bwd max_abs_err=%.3g err/tol=%.3g  %s\n",
           pl.what, kPrecName[prec], misaligned ? "misaligned" : "aligned", pl.n, pl.h, pl.w, pl.c,
           pl.r, pl.s, pl.stride, pl.pad, pl.ties ? " ties" : "", wy.abs_err, wy.ratio, wd.abs_err,
           wd.ratio, wy.bad || wd.bad ? "FAIL" : "ok");
    g_failures += wy.bad || wd.bad;
}

/* rows x width from src (pitch sld) into dst (pitch dld) at column `col`; dst starts with its
 * own random values, so an element the copy skipped, or a neighbour it overwrote, shows. */
void check_copy(size_t rows, size_t width, size_t dld, size_t sld, size_t col, int acc, int prec)
{
    size_t es = esize(prec), nd = rows * dld, ns = rows * sld;
    Tensor d0 = random_tensor(prec, nd, -1, 1), src = random_tensor(prec, ns, -1, 1);
    Dev dd, ds;
    CK(dd.alloc(nd * es));
    CK(ds.alloc(ns * es));
    CK(dd.put(d0.bytes.data()));
    CK(ds.put(src.bytes.data()));
    CK(fb_kcopy2d(prec, (char *)dd.p + col * es, dld, ds.p, sld, rows, width, acc, NULL));
    CK(cudaDeviceSynchronize());
    std::vector<unsigned char> got(nd * es);
    CK(dd.get(got.data()));
    Worst w;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < dld; j++) {
            size_t e = i * dld + j;
            bool in = j >= col && j < col + width;
            double s = in ? src.val[i * sld + j - col] : 0.0;
            double ref = !in ? d0.val[e] : acc ? d0.val[e] + s : s;
            /* outside the slice and plain copies: bit for bit; sums: one rounding */
            double tol = in && acc ? (out_tol(prec) + 2.4e-7) * (fabs(d0.val[e]) + fabs(s)) : 0.0;
            w.add(load_elem(prec, got.data(), e), ref, tol + 1e-30);
        }
    printf("copy2d   %s %-10s rows=%zu width=%zu dst_ld=%zu src_ld=%zu col=%zu  max_abs_err=%.3g "
           "err/tol=%.3g  %s\n",
           kPrecName[prec], acc ? "accumulate" : "copy", rows, width, dld, sld, col, w.abs_err,
           w.ratio, w.bad ? "FAIL" : "ok");
    g_failures += w.bad;
}

/* fb_kconcat: `n` pieces of the given widths into (split 0) or out of (split 1) a cat of pitch
 * cat_ld, every piece and cat starting with random values so that a skipped element or an
 * overwritten neighbour shows; with split, odd pieces accumulate. `shift` moves every pointer by
 * one element (the scalar path). */
void check_concat(int prec, int split, size_t rows, const std::vector<size_t> &widths,
                  size_t cat_ld, bool shift)
{
    size_t es = esize(prec), n = widths.size(), nc = rows * cat_ld + 1, off = shift ? 1 : 0;
    Tensor c0 = random_tensor(prec, nc, -1, 1);
    std::vector<Tensor> p0;
    std::vector<Dev> dp(n);
    std::vector<void *> ptr(n);
    std::vector<int> acc(n);
    Dev dc;
    CK(dc.alloc(nc * es));
    CK(dc.put(c0.bytes.data()));
    for (size_t j = 0; j < n; j++) {
        p0.push_back(random_tensor(prec, rows * widths[j] + 1, -1, 1));
        CK(dp[j].alloc((rows * widths[j] + 1) * es));
        CK(dp[j].put(p0[j].bytes.data()));
        ptr[j] = (char *)dp[j].p + off * es;
        acc[j] = split && j % 2 == 1;
    }
    CK(fb_kconcat(prec, split, (char *)dc.p + off * es, cat_ld, ptr.data(), widths.data(),
                  acc.data(), n, rows, NULL));
    CK(cudaDeviceSynchronize());
    Worst w;
    std::vector<unsigned char> got(nc * es);
    CK(dc.get(got.data()));
    size_t col = 0;
    for (size_t j = 0; j < n; j++) {
        std::vector<unsigned char> pg((rows * widths[j] + 1) * es);
        CK(dp[j].get(pg.data()));
        for (size_t i = 0; i < rows; i++)
            for (size_t k = 0; k < widths[j]; k++) {
                size_t ce = off + i * cat_ld + col + k, pe = off + i * widths[j] + k;
                double cv = c0.val[ce], pv = p0[j].val[pe];
                if (!split) {
                    w.add(load_elem(prec, got.data(), ce), pv, 1e-30);
                } else {
                    double ref = acc[j] ? pv + cv : cv;
                    double tol = acc[j] ? (out_tol(prec) + 2.4e-7) * (fabs(pv) + fabs(cv)) : 0;
                    w.add(load_elem(prec, pg.data(), pe), ref, tol + 1e-30);
                }
            }
        if (!split) /* a piece is only read */
            for (size_t e = 0; e < rows * widths[j] + 1; e++)
                w.add(load_elem(prec, pg.data(), e), p0[j].val[e], 1e-30);
        col += widths[j];
    }
    /* cat's columns past the pieces, and the element before a shifted start, untouched */
    for (size_t e = 0; e < nc; e++) {
        bool inside = e >= off && (e - off) / cat_ld < rows && (e - off) % cat_ld < col;
        if (split || !inside)
            w.add(load_elem(prec, got.data(), e), c0.val[e], 1e-30);
    }
    printf("concat   %s %-10s rows=%zu pieces=%zu cat_ld=%zu%s  max_abs_err=%.3g err/tol=%.3g  "
           "%s\n",
           kPrecName[prec], split ? "split" : "concat", rows, n, cat_ld,
           shift ? " misaligned" : "", w.abs_err, w.ratio, w.bad ? "FAIL" : "ok");
    g_failures += w.bad;
}

/* Bad arguments are refused before anything is launched. */
void check_refusals(void)
{
    fb_kconv bad = {1, 4, 4, 8, 8, 2, 2, 0, 0, 2, 2}, good = {1, 4, 4, 8, 8, 2, 2, 2, 0, 2, 2};
    bool ok = fb_kpool_fwd(&bad, FB_KPOOL_MAX, FB_KPREC_FP32, NULL, NULL, NULL) ==
                  (int)cudaErrorInvalidValue &&
              fb_kpool_bwd(&good, 7, FB_KPREC_FP32, NULL, NULL, NULL, NULL) ==
                  (int)cudaErrorInvalidValue &&
              fb_kcopy2d(FB_KPREC_FP16, NULL, 4, NULL, 8, 2, 8, 1, NULL) ==
                  (int)cudaErrorInvalidValue &&
              fb_kcopy2d(3, NULL, 8, NULL, 8, 2, 8, 0, NULL) == (int)cudaErrorInvalidValue;
    size_t widths[2] = {8, 8};
    void *pieces[2] = {NULL, NULL};
    ok = ok &&
         fb_kconcat(FB_KPREC_FP32, 0, NULL, 15, pieces, widths, NULL, 2, 4, NULL) ==
             (int)cudaErrorInvalidValue &&
         fb_kconcat(FB_KPREC_FP32, 0, NULL, 64, pieces, widths, NULL, FB_KCONCAT_MAX + 1, 4,
                    NULL) == (int)cudaErrorInvalidValue;
    printf("refusals (stride 0, unknown kind, pitch < width, unknown prec, concat wider than its "
           "pitch, too many pieces)  %s\n",
           ok ? "ok" : "FAIL");
    g_failures += !ok;
}

} // namespace

int main(void)
{
    if (!have_gpu())
        return 77;

    const Pool pools[] = {
        {"maxpool", FB_KPOOL_MAX, 2, 13, 13, 64, 3, 3, 2, 1, false}, /* the stem's, odd size */
        {"maxpool", FB_KPOOL_MAX, 2, 12, 11, 5, 3, 3, 2, 1, false},  /* odd channels */
        {"maxpool", FB_KPOOL_MAX, 3, 9, 10, 16, 3, 3, 2, 1, true},   /* ties */
        {"maxpool", FB_KPOOL_MAX, 2, 7, 6, 24, 3, 3, 1, 1, true},    /* 9 windows per pixel */
        {"maxpool", FB_KPOOL_MAX, 2, 8, 7, 8, 1, 1, 2, 0, false},    /* pixels no window reads */
        {"avgpool", FB_KPOOL_AVG, 2, 8, 8, 128, 2, 2, 2, 0, false},  /* a transition's */
        {"avgpool", FB_KPOOL_AVG, 2, 7, 9, 40, 2, 2, 2, 0, false},   /* last row/column unread */
        {"avgpool", FB_KPOOL_AVG, 2, 9, 9, 24, 3, 3, 2, 1, false},   /* padding in the divisor */
        {"gap", FB_KPOOL_AVG, 3, 7, 7, 1024, 7, 7, 1, 0, false},     /* the head's global pool */
        {"gap", FB_KPOOL_AVG, 2, 5, 3, 13, 5, 3, 1, 0, false},       /* odd global pool */
    };
    for (int prec = FB_KPREC_FP32; prec <= FB_KPREC_BF16; prec++)
        for (const Pool &pl : pools)
            for (int mis = 0; mis < 2; mis++)
                check_pool(pl, prec, mis != 0);

    for (int prec = FB_KPREC_FP32; prec <= FB_KPREC_BF16; prec++)
        for (int acc = 0; acc < 2; acc++) {
            check_copy(37, 32, 96, 32, 32, acc, prec);  /* a growth slice of a concatenation */
            check_copy(29, 64, 96, 96, 0, acc, prec);   /* a block input's slice, both pitched */
            check_copy(23, 13, 29, 13, 5, acc, prec);   /* odd: the scalar path */
            check_copy(5, 8, 16, 8, 1, acc, prec);      /* misaligned by one element */
        }
    for (int prec = FB_KPREC_FP32; prec <= FB_KPREC_BF16; prec++)
        for (int split = 0; split < 2; split++) {
            /* a dense block's: the block input and growth-rate slices */
            check_concat(prec, split, 37, {64, 32, 32, 32}, 160, false);
            check_concat(prec, split, 11, std::vector<size_t>(FB_KCONCAT_MAX, 8),
                         8 * FB_KCONCAT_MAX + 8, false);      /* the most pieces, spare columns */
            check_concat(prec, split, 13, {5, 3, 8}, 16, false); /* odd: the scalar path */
            check_concat(prec, split, 9, {16, 32}, 48, true);    /* misaligned pointers */
        }
    check_refusals();

    printf("%s: %d failure(s)\n", g_failures ? "FAIL" : "PASS", g_failures);
    return g_failures ? 1 : 0;
}

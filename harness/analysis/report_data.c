/* The plots' data: rows chosen per plot, grouped into series by the keys that tell them apart,
 * sorted along the x axis, and written as gnuplot data blocks (two blank lines between series,
 * so a script plots series i with `index i-1`). */
#include "report_data.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "units.h"

const char *const fb_report_split_metrics[6] = {"data_wait_us",    "h2d_us",    "compute_us",
                                                "comm_exposed_us", "update_us", "other_us"};

/* ---- a growing text buffer ---- */

struct sb {
    char *p;
    size_t len, cap;
    bool ok;
};

static void FB_PRINTF(2, 3) sb_printf(struct sb *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!b->ok)
        return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->ok = false;
            return;
        }
        if (b->p && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 1024;
        while (cap - b->len <= (size_t)n)
            cap *= 2;
        char *grown = realloc(b->p, cap);
        if (!grown) {
            b->ok = false;
            return;
        }
        b->p = grown;
        b->cap = cap;
    }
}

/* Writes s as a single-quoted gnuplot string. */
static void sb_quote(struct sb *b, const char *s)
{
    sb_printf(b, "'");
    for (; *s; s++)
        sb_printf(b, *s == '\'' ? "''" : "%c", *s);
    sb_printf(b, "'");
}

/* ---- series keys ---- */

enum {
    K_RANKS = 1 << 0,
    K_CASE = 1 << 1,
    K_DTYPE = 1 << 2,
    K_BYTES = 1 << 3,
    K_BATCH = 1 << 4,
    K_TRANSPORT = 1 << 5,
};

static int cmp_ll(long long a, long long b) { return (a > b) - (a < b); }

static int key_cmp(const struct fb_row *a, const struct fb_row *b, unsigned mask)
{
    int d = 0;
    if (!d && (mask & K_CASE))
        d = strcmp(a->kase, b->kase);
    if (!d && (mask & K_TRANSPORT))
        d = strcmp(a->transport, b->transport);
    if (!d && (mask & K_DTYPE))
        d = strcmp(a->dtype, b->dtype);
    if (!d && (mask & K_BYTES))
        d = cmp_ll(a->bytes, b->bytes);
    if (!d && (mask & K_BATCH))
        d = cmp_ll(a->batch, b->batch);
    if (!d && (mask & K_RANKS))
        d = cmp_ll(a->ranks, b->ranks);
    return d;
}

/* The sort of one plot: its series key, then the x value. */
struct sel {
    const struct fb_row **r;
    double *x;
    size_t n;
    unsigned mask;
};

static struct sel *sort_ctx;

static int sel_cmp(const void *pa, const void *pb)
{
    size_t i = *(const size_t *)pa, j = *(const size_t *)pb;
    int d = key_cmp(sort_ctx->r[i], sort_ctx->r[j], sort_ctx->mask);
    if (d)
        return d;
    d = (sort_ctx->x[i] > sort_ctx->x[j]) - (sort_ctx->x[i] < sort_ctx->x[j]);
    return d ? d : cmp_ll((long long)i, (long long)j);
}

/* Sorts s by series then x (qsort has no context argument in C11: a file-level pointer, fine
 * for a pure single-threaded function). */
static bool sel_sort(struct sel *s)
{
    size_t *order = malloc((s->n + 1) * sizeof *order);
    const struct fb_row **r = malloc((s->n + 1) * sizeof *r);
    double *x = malloc((s->n + 1) * sizeof *x);

    if (!order || !r || !x) {
        free(order);
        free(r);
        free(x);
        return false;
    }
    for (size_t i = 0; i < s->n; i++)
        order[i] = i;
    sort_ctx = s;
    qsort(order, s->n, sizeof *order, sel_cmp);
    sort_ctx = NULL;
    for (size_t i = 0; i < s->n; i++) {
        r[i] = s->r[order[i]];
        x[i] = s->x[order[i]];
    }
    free(s->r);
    free(s->x);
    free(order);
    s->r = r;
    s->x = x;
    return true;
}

static void sel_free(struct sel *s)
{
    free(s->r);
    free(s->x);
    memset(s, 0, sizeof *s);
}

static bool sel_add(struct sel *s, size_t cap, const struct fb_row *r, double x)
{
    if (s->n == cap)
        return false;
    s->r[s->n] = r;
    s->x[s->n] = x;
    s->n++;
    return true;
}

static bool sel_init(struct sel *s, size_t cap, unsigned mask)
{
    memset(s, 0, sizeof *s);
    s->r = malloc((cap + 1) * sizeof *s->r);
    s->x = malloc((cap + 1) * sizeof *s->x);
    s->mask = mask;
    if (!s->r || !s->x) {
        sel_free(s);
        return false;
    }
    return true;
}

/* Which of mask's keys take more than one value among the selected rows. */
static unsigned varying(const struct sel *s, unsigned mask)
{
    unsigned v = 0;
    for (unsigned bit = 1; bit <= K_TRANSPORT; bit <<= 1)
        for (size_t i = 1; i < s->n && (mask & bit) && !(v & bit); i++)
            if (key_cmp(s->r[0], s->r[i], bit) != 0)
                v |= bit;
    return v;
}

static const char *dtype_short(const char *d)
{
    if (strcmp(d, "float32") == 0)
        return "fp32";
    if (strcmp(d, "float16") == 0)
        return "fp16";
    if (strcmp(d, "float64") == 0)
        return "fp64";
    return d;
}

static const char *case_words(const struct fb_row *r)
{
    if (strcmp(r->bench, "step") == 0)
        return strcmp(r->kase, "step_no_overlap") == 0 ? "no overlap" : "overlap";
    if (strcmp(r->bench, "h2d") == 0) {
        if (strcmp(r->kase, "pinned_h2d") == 0)
            return "pinned, host to device";
        if (strcmp(r->kase, "pinned_d2h") == 0)
            return "pinned, device to host";
        if (strcmp(r->kase, "pageable_h2d") == 0)
            return "pageable, host to device";
        if (strcmp(r->kase, "pageable_d2h") == 0)
            return "pageable, device to host";
    }
    return r->kase;
}

/* A series' title: the keys in `show` (always) and those of `mask` that vary. */
static void series_title(const struct fb_row *r, unsigned show, char *buf, size_t len)
{
    size_t used = 0;
    char size[32];

#define ADD(...)                                                                          \
    do {                                                                                  \
        if (used < len) {                                                                 \
            int w_ = snprintf(buf + used, len - used, "%s", used ? ", " : "");            \
            used += w_ > 0 ? (size_t)w_ : 0;                                              \
        }                                                                                 \
        if (used < len) {                                                                 \
            int w_ = snprintf(buf + used, len - used, __VA_ARGS__);                       \
            used += w_ > 0 ? (size_t)w_ : 0;                                              \
        }                                                                                 \
    } while (0)
    buf[0] = '\0';
    if (show & K_RANKS)
        ADD("%d %s%s", r->ranks, strcmp(r->backend, "cuda") == 0 ? "GPU" : "rank",
            r->ranks == 1 ? "" : "s");
    if (show & K_BATCH)
        ADD("batch %ld", r->batch);
    if (show & K_CASE)
        ADD("%s", case_words(r));
    if (show & K_DTYPE)
        ADD("%s", r->dtype[0] ? dtype_short(r->dtype) : "-");
    if (show & K_BYTES) {
        if (r->bytes >= 0) {
            fb_size_format((size_t)r->bytes, size, sizeof size);
            ADD("fusion %sB", size);
        } else {
            ADD("no fusion");
        }
    }
    if (show & K_TRANSPORT)
        ADD("%s", r->transport);
#undef ADD
}

/* ---- the plots ---- */

struct build {
    const struct fb_row *rows;
    size_t n;
    struct fb_plot_set *set;
    bool ok;
};

static struct fb_plot *plot_new(struct build *b, const char *name, const char *tmpl,
                                const char *caption)
{
    struct fb_plot *grown = realloc(b->set->p, (b->set->n + 1) * sizeof *grown);
    struct fb_plot *p;

    if (!grown) {
        b->ok = false;
        return NULL;
    }
    b->set->p = grown;
    p = &grown[b->set->n++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    snprintf(p->template, sizeof p->template, "%s", tmpl);
    snprintf(p->caption, sizeof p->caption, "%s", caption);
    return p;
}

/* Hands the two buffers to the plot (or drops the plot when out of memory). */
static void plot_finish(struct build *b, struct fb_plot *p, struct sb *dat, struct sb *vars,
                        size_t lines)
{
    if (!dat->ok || !vars->ok || !dat->p || !vars->p) {
        free(dat->p);
        free(vars->p);
        b->set->n--;
        b->ok = false;
        return;
    }
    p->dat = dat->p;
    p->dat_len = dat->len;
    p->vars = vars->p;
    p->data_lines = lines;
}

static void vars_start(struct sb *v, const char *name)
{
    sb_printf(v, "name = ");
    sb_quote(v, name);
    sb_printf(v, "\ndat = name . '.dat'\nwidth = %d\nheight = %d\n", FB_PLOT_WIDTH,
              FB_PLOT_HEIGHT);
}

static void vars_titles(struct sb *v, const char *array, char (*titles)[160], size_t n)
{
    sb_printf(v, "n%s = %zu\narray %s[%zu]\n", array, n, array, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        sb_printf(v, "%s[%zu] = ", array, i + 1);
        sb_quote(v, titles[i]);
        sb_printf(v, "\n");
    }
}

/* Writes s as series blocks: a "# title" comment, then per point the x value and the row's
 * median, p05 and p95 scaled by `scale`, and `extra` columns when given. Returns the titles. */
typedef void (*extra_fn)(struct sb *dat, const struct sel *s, size_t i, size_t first);

static char (*write_series(struct sb *dat, const struct sel *s, unsigned show, double scale,
                           const char *columns, extra_fn extra, size_t *nseries))[160]
{
    char (*titles)[160] = calloc(s->n + 1, sizeof *titles);
    size_t ns = 0;

    if (!titles)
        return NULL;
    for (size_t i = 0; i < s->n;) {
        size_t j = i;
        while (j < s->n && key_cmp(s->r[i], s->r[j], s->mask) == 0)
            j++;
        series_title(s->r[i], show, titles[ns], sizeof titles[ns]);
        sb_printf(dat, "%s# %s\n# %s\n", ns ? "\n\n" : "", titles[ns], columns);
        for (size_t k = i; k < j; k++) {
            const struct fb_row *r = s->r[k];
            sb_printf(dat, "%.10g %.10g %.10g %.10g", s->x[k], r->st.median * scale,
                      r->st.p05 * scale, r->st.p95 * scale);
            if (extra)
                extra(dat, s, k, i);
            sb_printf(dat, "\n");
        }
        ns++;
        i = j;
    }
    *nseries = ns;
    return titles;
}

static double x_bytes(const struct fb_row *r);
static double x_fusion(const struct fb_row *r);

/* Tics at exact powers of two over [lo, hi], labelled with binary prefixes ("4 KiB") for bytes,
 * as plain numbers for counts: gnuplot's own log-scale tics drift ("1023ki") or land between
 * powers ("12"). Every 2nd, 4th, ... power so that at most 12 show. */
static void binary_xtics(struct sb *v, double lo, double hi, bool bytes)
{
    static const char *const prefix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
    int a, z, step = 1;
    bool first = true;

    if (!(lo > 0) || !(hi >= lo) || hi > 0x1p60)
        return;
    a = (int)ceil(log2(lo) - 1e-9);
    z = (int)floor(log2(hi) + 1e-9);
    while ((z - a) / step + 1 > 12)
        step *= 2;
    a = z - (z - a) / step * step; /* the largest size always has its tic */
    sb_printf(v, "binary_xtics = \"set xtics (");
    for (int e = a; e <= z; e += step) {
        if (bytes)
            sb_printf(v, "%s'%d %sB' %.0f", first ? "" : ", ", 1 << (e % 10), prefix[e / 10],
                      ldexp(1.0, e));
        else
            sb_printf(v, "%s'%.0f' %.0f", first ? "" : ", ", ldexp(1.0, e), ldexp(1.0, e));
        first = false;
    }
    sb_printf(v, ")");
    /* one x alone (a single fusion threshold, ...): an octave either side, not gnuplot's
     * "empty x range" warning and a point squeezed against the border */
    if (hi == lo)
        sb_printf(v, "; set xrange [%.17g:%.17g]", lo / 2.0, hi * 2.0);
    sb_printf(v, "\"\n");
}

/* One plot of series against x: rows chosen by pred, x from xof, series keyed by mask, titles
 * showing `always` and whichever of mask's keys vary. */
typedef bool (*pred_fn)(const struct fb_row *r, const void *arg);
typedef double (*x_fn)(const struct fb_row *r);
static double x_ranks(const struct fb_row *r);

static void series_plot(struct build *b, const char *name, const char *tmpl, const char *caption,
                        pred_fn pred, const void *arg, x_fn xof, unsigned mask, unsigned always,
                        double scale, const char *columns, extra_fn extra, const char *more_vars)
{
    struct sel s;
    struct sb dat = {.ok = true}, vars = {.ok = true};
    char (*titles)[160] = NULL;
    size_t ns = 0;
    struct fb_plot *p;

    if (!b->ok)
        return;
    if (!sel_init(&s, b->n, mask)) {
        b->ok = false;
        return;
    }
    for (size_t i = 0; i < b->n; i++)
        if (pred(&b->rows[i], arg))
            sel_add(&s, b->n, &b->rows[i], xof(&b->rows[i]));
    if (!s.n) {
        sel_free(&s);
        return;
    }
    if (!sel_sort(&s) || !(p = plot_new(b, name, tmpl, caption))) {
        sel_free(&s);
        b->ok = false;
        return;
    }
    sb_printf(&dat, "# %s: %s\n# written by `fabricbench report`; one block per series "
                    "(gnuplot: index i-1 is series[i])\n\n",
              name, caption);
    titles = write_series(&dat, &s, always | varying(&s, mask), scale, columns, extra, &ns);
    if (!titles)
        dat.ok = false;
    vars_start(&vars, name);
    if (titles)
        vars_titles(&vars, "series", titles, ns);
    if (more_vars)
        sb_printf(&vars, "%s", more_vars);
    {
        double lo = s.x[0], hi = s.x[0];
        for (size_t i = 1; i < s.n; i++) {
            lo = s.x[i] < lo ? s.x[i] : lo;
            hi = s.x[i] > hi ? s.x[i] : hi;
        }
        /* GPU-count axes start at one GPU, the reference of scaling (efficiency is 100%
         * there by definition, so its rows start at two) */
        if (xof == x_ranks && lo > 1.0)
            lo = 1.0;
        /* every x axis here is log2: sizes, GPU counts, batches */
        binary_xtics(&vars, lo, hi, xof == x_bytes || xof == x_fusion);
    }
    plot_finish(b, p, &dat, &vars, s.n);
    free(titles);
    sel_free(&s);
}

/* ---- what each plot takes ---- */

static bool is(const char *a, const char *b) { return strcmp(a, b) == 0; }

static double x_bytes(const struct fb_row *r) { return (double)r->bytes; }
static double x_ranks(const struct fb_row *r) { return (double)r->ranks; }
static double x_batch(const struct fb_row *r) { return (double)r->batch; }

static bool p_allreduce(const struct fb_row *r, const void *arg)
{
    (void)arg;
    /* busbw is 0 on one rank by definition: nothing to draw */
    return is(r->bench, "allreduce") && is(r->kase, "out_of_place") && is(r->metric, "busbw") &&
           r->src < 0 && r->ranks > 1 && r->bytes > 0;
}

/* densenet_allreduce's threshold: fusion_<SIZE>; NAN for flat, per_tensor and the rest. */
static double x_fusion(const struct fb_row *r)
{
    size_t bytes;
    char why[64];

    if (strncmp(r->kase, "fusion_", 7) == 0 &&
        fb_size_parse(r->kase + 7, &bytes, why, sizeof why) == FB_OK)
        return (double)bytes;
    return NAN;
}

static bool p_densenet(const struct fb_row *r, const void *arg)
{
    (void)arg;
    /* on one rank nothing crosses a fabric: the calls' own cost, not an exchange */
    return is(r->bench, "densenet_allreduce") && is(r->metric, "time") && r->src < 0 &&
           r->ranks > 1 && !isnan(x_fusion(r));
}

/* The per-tensor and flat times of the same ranks and dtype, beside each point (drawn as
 * horizontal lines). */
static const struct fb_row *g_rows;
static size_t g_nrows;

static void extra_per_tensor_flat(struct sb *dat, const struct sel *s, size_t i, size_t first)
{
    static const char *const cases[] = {"per_tensor", "flat"};
    const struct fb_row *r = s->r[i];

    (void)first;
    for (size_t c = 0; c < 2; c++) {
        const struct fb_row *found = NULL;
        for (size_t k = 0; k < g_nrows && !found; k++) {
            const struct fb_row *o = &g_rows[k];
            if (is(o->bench, r->bench) && is(o->kase, cases[c]) && is(o->metric, "time") &&
                o->src < 0 && o->ranks == r->ranks && is(o->dtype, r->dtype) &&
                is(o->transport, r->transport))
                found = o;
        }
        if (found)
            sb_printf(dat, " %.10g", found->st.median);
        else
            sb_printf(dat, " NaN");
    }
}

static bool p_step_metric(const struct fb_row *r, const void *metric)
{
    return is(r->bench, "step") && is(r->metric, (const char *)metric) && r->src < 0;
}

/* The ideal line: the series' images/s on one GPU times the GPUs. */
static void extra_ideal(struct sb *dat, const struct sel *s, size_t i, size_t first)
{
    for (size_t k = first; k < s->n && key_cmp(s->r[k], s->r[first], s->mask) == 0; k++)
        if (s->r[k]->ranks == 1) {
            sb_printf(dat, " %.10g", s->r[k]->st.median * s->r[i]->ranks);
            return;
        }
    sb_printf(dat, " NaN");
}

static bool p_h2d(const struct fb_row *r, const void *arg)
{
    (void)arg;
    return is(r->bench, "h2d") && is(r->metric, "bandwidth") && r->ranks == 1 && r->src == 0 &&
           r->bytes > 0 &&
           (is(r->kase, "pinned_h2d") || is(r->kase, "pinned_d2h") ||
            is(r->kase, "pageable_h2d") || is(r->kase, "pageable_d2h"));
}

/* One heat map per transport of p2p's matrix_uni bandwidth: src rows, dst columns. */
static void p2p_matrices(struct build *b)
{
    char done[16][24];
    size_t ndone = 0;

    for (size_t i = 0; i < b->n && b->ok; i++) {
        const struct fb_row *r = &b->rows[i];
        bool seen = false;
        int nr = 0;
        char name[48], caption[200];
        struct sb dat = {.ok = true}, vars = {.ok = true};
        struct fb_plot *p;
        double *cell;

        if (!is(r->bench, "p2p") || !is(r->kase, "matrix_uni") || !is(r->metric, "bandwidth") ||
            r->src < 0 || r->dst < 0)
            continue;
        for (size_t k = 0; k < ndone && !seen; k++)
            seen = is(done[k], r->transport);
        if (seen || ndone == sizeof done / sizeof done[0])
            continue;
        snprintf(done[ndone++], sizeof done[0], "%s", r->transport);
        for (size_t k = i; k < b->n; k++) {
            const struct fb_row *o = &b->rows[k];
            if (is(o->bench, "p2p") && is(o->kase, "matrix_uni") && is(o->metric, "bandwidth") &&
                is(o->transport, r->transport) && o->src >= 0 && o->dst >= 0) {
                nr = o->src + 1 > nr ? o->src + 1 : nr;
                nr = o->dst + 1 > nr ? o->dst + 1 : nr;
            }
        }
        /* A heat map of more ranks is unreadable and its data grows as nr^2 (a sampled
         * matrix of thousands of ranks): none is drawn; results.csv has every cell. */
        if (nr > 256)
            continue;
        if (!(cell = malloc((size_t)nr * (size_t)nr * sizeof *cell))) {
            b->ok = false;
            return;
        }
        for (size_t k = 0; k < (size_t)nr * (size_t)nr; k++)
            cell[k] = NAN;
        for (size_t k = i; k < b->n; k++) {
            const struct fb_row *o = &b->rows[k];
            if (is(o->bench, "p2p") && is(o->kase, "matrix_uni") && is(o->metric, "bandwidth") &&
                is(o->transport, r->transport) && o->src >= 0 && o->dst >= 0)
                cell[(size_t)o->src * (size_t)nr + (size_t)o->dst] = o->st.median;
        }
        snprintf(name, sizeof name, "p2p_matrix_%.30s", r->transport);
        for (char *c = name; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
                *c = '_';
        snprintf(caption, sizeof caption,
                 "p2p: one-way bandwidth of each ordered pair alone over %s at %s (GB/s)",
                 r->transport, r->bytes >= 0 ? "the matrix size" : "-");
        if (!(p = plot_new(b, name, "p2p_matrix", caption))) {
            free(cell);
            return;
        }
        sb_printf(&dat, "# %s: %s\n# written by `fabricbench report`: src dst bandwidth_gbps "
                        "(NaN: not measured, the diagonal)\n",
                  name, caption);
        for (int s = 0; s < nr; s++) {
            sb_printf(&dat, "\n");
            for (int d = 0; d < nr; d++) {
                double v = cell[(size_t)s * (size_t)nr + (size_t)d];
                if (isnan(v))
                    sb_printf(&dat, "%d %d NaN\n", s, d);
                else
                    sb_printf(&dat, "%d %d %.10g\n", s, d, v);
            }
        }
        free(cell);
        vars_start(&vars, name);
        sb_printf(&vars, "nranks = %d\ntransport = ", nr);
        sb_quote(&vars, r->transport);
        sb_printf(&vars, "\nmatrix_bytes = %lld\n", r->bytes);
        plot_finish(b, p, &dat, &vars, (size_t)nr * (size_t)nr);
    }
}

static bool split_metric(const char *m)
{
    for (size_t k = 0; k < 6; k++)
        if (is(m, fb_report_split_metrics[k]))
            return true;
    return false;
}

static bool p_split(const struct fb_row *r, const void *arg)
{
    (void)arg;
    return is(r->bench, "step") && r->src < 0 && split_metric(r->metric);
}

/* The step-time split: one bar per point (ranks, batch, and the case, dtype and threshold when
 * they vary), its six parts stacked. */
static void step_split(struct build *b)
{
    const unsigned mask = K_CASE | K_DTYPE | K_BYTES | K_BATCH | K_RANKS;
    struct sel s;
    struct sb dat = {.ok = true}, vars = {.ok = true};
    struct fb_plot *p;
    unsigned show;
    size_t bars = 0;

    if (!b->ok || !sel_init(&s, b->n, mask)) {
        b->ok = false;
        return;
    }
    for (size_t i = 0; i < b->n; i++)
        if (p_split(&b->rows[i], NULL))
            sel_add(&s, b->n, &b->rows[i], 0);
    if (!s.n) {
        sel_free(&s);
        return;
    }
    if (!sel_sort(&s) ||
        !(p = plot_new(b, "step_split", "step_split",
                       "step: where a step's time goes, per GPU count and batch (us per step, "
                       "median of trials)"))) {
        sel_free(&s);
        b->ok = false;
        return;
    }
    show = K_RANKS | K_BATCH | varying(&s, mask);
    sb_printf(&dat, "# step_split: the parts of a step (us, median of trials); 0 where a part "
                    "was not in the CSV\n# written by `fabricbench report`\nlabel");
    for (size_t k = 0; k < 6; k++)
        sb_printf(&dat, " %s", fb_report_split_metrics[k]);
    sb_printf(&dat, "\n");
    for (size_t i = 0; i < s.n;) {
        size_t j = i;
        double v[6] = {0};
        char title[160];

        while (j < s.n && key_cmp(s.r[i], s.r[j], mask) == 0) {
            for (size_t k = 0; k < 6; k++)
                if (is(s.r[j]->metric, fb_report_split_metrics[k]))
                    v[k] = s.r[j]->st.median;
            j++;
        }
        series_title(s.r[i], show, title, sizeof title);
        sb_printf(&dat, "\"");
        for (const char *c = title; *c; c++)
            sb_printf(&dat, "%c", *c == '"' ? '\'' : *c);
        sb_printf(&dat, "\"");
        for (size_t k = 0; k < 6; k++)
            sb_printf(&dat, " %.10g", v[k]);
        sb_printf(&dat, "\n");
        bars++;
        i = j;
    }
    vars_start(&vars, "step_split");
    sb_printf(&vars, "nbars = %zu\n", bars);
    plot_finish(b, p, &dat, &vars, bars);
    sel_free(&s);
}

fb_status fb_report_plots(const struct fb_row *rows, size_t n, struct fb_plot_set *out)
{
    struct build b = {.rows = rows, .n = n, .set = out, .ok = true};
    const unsigned step_key = K_CASE | K_DTYPE | K_BYTES | K_BATCH;
    bool eff_pct = false;

    memset(out, 0, sizeof *out);
    g_rows = rows;
    g_nrows = n;
    series_plot(&b, "allreduce_busbw", "allreduce_busbw",
                "allreduce: bus bandwidth against message size, one line per GPU count (median "
                "of trials, out of place)",
                p_allreduce, NULL, x_bytes, K_RANKS | K_DTYPE | K_TRANSPORT, K_RANKS, 1.0,
                "bytes busbw_gbps p05 p95", NULL, NULL);
    series_plot(&b, "densenet_fusion", "densenet_fusion",
                "densenet_allreduce: one step's DenseNet-121 gradient exchange against the "
                "fusion threshold, with one all-reduce per tensor (dashed) and one flat buffer "
                "(dotted)",
                p_densenet, NULL, x_fusion, K_RANKS | K_DTYPE | K_TRANSPORT, K_RANKS | K_DTYPE,
                1.0, "threshold_bytes time_us p05 p95 per_tensor_time_us flat_time_us",
                extra_per_tensor_flat, NULL);
    series_plot(&b, "step_scaling", "step_scaling",
                "step: images/s against GPUs, with the ideal (linear from one GPU) dashed",
                p_step_metric, "images_per_s", x_ranks, step_key, K_BATCH, 1.0,
                "gpus images_per_s p05 p95 ideal_images_per_s", extra_ideal, NULL);
    for (size_t i = 0; i < n; i++)
        if (p_step_metric(&rows[i], "scaling_efficiency"))
            eff_pct = is(rows[i].unit, "%");
    /* scaling_efficiency is a fraction (or a percentage when its unit says so): drawn in %. */
    series_plot(&b, "step_efficiency", "step_efficiency",
                "step: scaling efficiency against GPUs (per-GPU images/s at k GPUs over one GPU's)",
                p_step_metric, "scaling_efficiency", x_ranks, step_key, K_BATCH,
                eff_pct ? 1.0 : 100.0, "gpus efficiency_pct p05 p95", NULL, NULL);
    series_plot(&b, "step_batch", "step_batch",
                "step: images/s against the batch per GPU, one line per GPU count", p_step_metric,
                "images_per_s", x_batch, K_RANKS | K_CASE | K_DTYPE | K_BYTES, K_RANKS, 1.0,
                "batch images_per_s p05 p95", NULL, NULL);
    if (b.ok)
        p2p_matrices(&b);
    series_plot(&b, "h2d", "h2d",
                "h2d: host-device copy bandwidth against size, pinned and pageable, rank 0 alone "
                "(median of trials)",
                p_h2d, NULL, x_bytes, K_CASE | K_TRANSPORT, K_CASE, 1.0,
                "bytes bandwidth_gbps p05 p95", NULL, NULL);
    step_split(&b);
    g_rows = NULL;
    g_nrows = 0;
    if (!b.ok) {
        fb_report_plots_release(out);
        return FB_ERR_NOMEM;
    }
    return FB_OK;
}

void fb_report_plots_release(struct fb_plot_set *s)
{
    for (size_t i = 0; s->p && i < s->n; i++) {
        free(s->p[i].dat);
        free(s->p[i].vars);
    }
    free(s->p);
    memset(s, 0, sizeof *s);
}

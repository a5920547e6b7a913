/* The plots' series: rows chosen for a plot, grouped into series by the keys that tell them
 * apart, sorted along the x axis, and written as gnuplot data blocks (two blank lines between
 * series, so a script plots series i with `index i-1`), with the series' titles and the x
 * axis' tics as the gnuplot variables the plot's script starts with. */
#include "report_data_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_name.h"
#include "gp_text.h"
#include "units.h"

/* ---- a growing text buffer ---- */

void FB_PRINTF(2, 3) fb_report_sb_printf(struct sb *b, const char *fmt, ...)
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

/* Appends what escape (fb_gp_string or fb_gp_comment) makes of s. */
static void sb_escaped(struct sb *b, const char *s, size_t (*escape)(char *, size_t, const char *))
{
    size_t n = escape(NULL, 0, s);
    char *e = b->ok ? malloc(n + 1) : NULL;

    if (!e) {
        b->ok = false;
        return;
    }
    escape(e, n + 1, s);
    fb_report_sb_printf(b, "%s", e);
    free(e);
}

void fb_report_sb_quote(struct sb *b, const char *s) { sb_escaped(b, s, fb_gp_string); }

void fb_report_sb_comment(struct sb *b, const char *s) { sb_escaped(b, s, fb_gp_comment); }

/* ---- series keys ---- */

static int cmp_ll(long long a, long long b) { return (a > b) - (a < b); }

int fb_report_key_cmp(const struct fb_row *a, const struct fb_row *b, unsigned mask)
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

static struct sel *sort_ctx;

static int sel_cmp(const void *pa, const void *pb)
{
    size_t i = *(const size_t *)pa, j = *(const size_t *)pb;
    int d = fb_report_key_cmp(sort_ctx->r[i], sort_ctx->r[j], sort_ctx->mask);
    if (d)
        return d;
    d = (sort_ctx->x[i] > sort_ctx->x[j]) - (sort_ctx->x[i] < sort_ctx->x[j]);
    return d ? d : cmp_ll((long long)i, (long long)j);
}

/* Sorts s by series then x (qsort has no context argument in C11: a file-level pointer, fine
 * for a pure single-threaded function). */
bool fb_report_sel_sort(struct sel *s)
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

void fb_report_sel_free(struct sel *s)
{
    free(s->r);
    free(s->x);
    memset(s, 0, sizeof *s);
}

bool fb_report_sel_add(struct sel *s, size_t cap, const struct fb_row *r, double x)
{
    if (s->n == cap)
        return false;
    s->r[s->n] = r;
    s->x[s->n] = x;
    s->n++;
    return true;
}

bool fb_report_sel_init(struct sel *s, size_t cap, unsigned mask)
{
    memset(s, 0, sizeof *s);
    s->r = malloc((cap + 1) * sizeof *s->r);
    s->x = malloc((cap + 1) * sizeof *s->x);
    s->mask = mask;
    if (!s->r || !s->x) {
        fb_report_sel_free(s);
        return false;
    }
    return true;
}

unsigned fb_report_varying(const struct sel *s, unsigned mask)
{
    unsigned v = 0;
    for (unsigned bit = 1; bit <= K_TRANSPORT; bit <<= 1)
        for (size_t i = 1; i < s->n && (mask & bit) && !(v & bit); i++)
            if (fb_report_key_cmp(s->r[0], s->r[i], bit) != 0)
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

void fb_report_series_title(const struct fb_row *r, unsigned show, char *buf, size_t len)
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
            fb_size_format_named((size_t)r->bytes, size, sizeof size);
            ADD("fusion %s", size);
        } else {
            ADD("no fusion");
        }
    }
    if (show & K_TRANSPORT)
        ADD("%s", r->transport);
#undef ADD
}

/* ---- the plots ---- */

/* Whether a plot before the last of the set has this name (fb_file_name_unique). */
static bool plot_taken(const char *name, void *ctx)
{
    const struct fb_plot_set *set = ctx;
    for (size_t i = 0; i + 1 < set->n; i++)
        if (strcmp(set->p[i].name, name) == 0)
            return true;
    return false;
}

struct fb_plot *fb_report_plot_new(struct build *b, const char *name, const char *tmpl,
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
    /* names are made safe for a file name, so two series can come out the same */
    if (!fb_file_name_unique(p->name, sizeof p->name, "_", plot_taken, b->set)) {
        b->set->n--;
        b->ok = false;
        return NULL;
    }
    snprintf(p->template, sizeof p->template, "%s", tmpl);
    snprintf(p->caption, sizeof p->caption, "%s", caption);
    return p;
}

void fb_report_plot_finish(struct build *b, struct fb_plot *p, struct sb *dat, struct sb *vars,
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

void fb_report_vars_start(struct sb *v, const char *name)
{
    fb_report_sb_printf(v, "name = ");
    fb_report_sb_quote(v, name);
    fb_report_sb_printf(v, "\ndat = name . '.dat'\nwidth = %d\nheight = %d\n", FB_PLOT_WIDTH,
                        FB_PLOT_HEIGHT);
}

enum { MAX_EXTRA = 4 }; /* extra columns a series may carry: 5 .. 4 + MAX_EXTRA */

static void vars_titles(struct sb *v, const char *array, char (*titles)[160], size_t n)
{
    fb_report_sb_printf(v, "n%s = %zu\narray %s[%zu]\n", array, n, array, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        fb_report_sb_printf(v, "%s[%zu] = ", array, i + 1);
        fb_report_sb_quote(v, titles[i]);
        fb_report_sb_printf(v, "\n");
    }
}

/* has<C>[i] = 1 when extra column C of series i holds data, else 0: a template titles a line
 * from that column only where it has points (gnuplot would list an empty one in the key). */
static void vars_present(struct sb *v, const unsigned *present, size_t n, size_t nextra)
{
    for (size_t c = 0; c < nextra && c < MAX_EXTRA; c++) {
        fb_report_sb_printf(v, "array has%zu[%zu]\n", c + 5, n ? n : 1);
        for (size_t i = 0; i < n; i++)
            fb_report_sb_printf(v, "has%zu[%zu] = %d\n", c + 5, i + 1,
                                (present[i] >> c) & 1u ? 1 : 0);
    }
}

/* The extra columns named in `columns` (its words past the first four). */
static size_t count_extra(const char *columns)
{
    size_t words = 0;

    for (const char *c = columns; *c;) {
        while (*c == ' ')
            c++;
        if (*c)
            words++;
        while (*c && *c != ' ')
            c++;
    }
    return words > 4 ? words - 4 : 0;
}

/* Which of the extra columns just appended to dat (from `from` on) hold a number rather than
 * NaN: bit c for column 5 + c. */
static unsigned extra_present(const struct sb *dat, size_t from)
{
    unsigned bits = 0;
    size_t c = 0;

    for (size_t i = from; dat->p && i < dat->len && c < MAX_EXTRA;) {
        size_t j;
        while (i < dat->len && dat->p[i] == ' ')
            i++;
        for (j = i; j < dat->len && dat->p[j] != ' '; j++)
            ;
        if (j > i && !(j - i == 3 && strncmp(dat->p + i, "NaN", 3) == 0))
            bits |= 1u << c;
        if (j > i)
            c++;
        i = j;
    }
    return bits;
}

/* Writes s as series blocks: a "# title" comment, then per point the x value and the row's
 * median, p05 and p95 scaled by `scale`, and `extra` columns when given. Returns the titles;
 * present[k] says which extra columns of series k hold a number at some point (extra_present's
 * bits), so a template gives a line without data no key entry. */
static char (*write_series(struct sb *dat, const struct sel *s, unsigned show, double scale,
                           const char *columns, extra_fn extra, size_t *nseries,
                           unsigned *present))[160]
{
    char (*titles)[160] = calloc(s->n + 1, sizeof *titles);
    size_t ns = 0;

    if (!titles)
        return NULL;
    for (size_t i = 0; i < s->n;) {
        size_t j = i;
        while (j < s->n && fb_report_key_cmp(s->r[i], s->r[j], s->mask) == 0)
            j++;
        fb_report_series_title(s->r[i], show, titles[ns], sizeof titles[ns]);
        fb_report_sb_printf(dat, "%s# ", ns ? "\n\n" : "");
        fb_report_sb_comment(dat, titles[ns]);
        fb_report_sb_printf(dat, "\n# %s\n", columns);
        present[ns] = 0;
        for (size_t k = i; k < j; k++) {
            const struct fb_row *r = s->r[k];
            fb_report_sb_printf(dat, "%.10g %.10g %.10g %.10g", s->x[k], r->st.median * scale,
                                r->st.p05 * scale, r->st.p95 * scale);
            if (extra) {
                size_t from = dat->len;
                extra(dat, s, k, i);
                present[ns] |= extra_present(dat, from);
            }
            fb_report_sb_printf(dat, "\n");
        }
        ns++;
        i = j;
    }
    *nseries = ns;
    return titles;
}

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
    fb_report_sb_printf(v, "binary_xtics = \"set xtics (");
    for (int e = a; e <= z; e += step) {
        if (bytes)
            fb_report_sb_printf(v, "%s'%d %sB' %.0f", first ? "" : ", ", 1 << (e % 10),
                                prefix[e / 10], ldexp(1.0, e));
        else
            fb_report_sb_printf(v, "%s'%.0f' %.0f", first ? "" : ", ", ldexp(1.0, e),
                                ldexp(1.0, e));
        first = false;
    }
    fb_report_sb_printf(v, ")");
    /* one x alone (a single fusion threshold, ...): an octave either side, not gnuplot's
     * "empty x range" warning and a point squeezed against the border */
    if (hi == lo)
        fb_report_sb_printf(v, "; set xrange [%.17g:%.17g]", lo / 2.0, hi * 2.0);
    fb_report_sb_printf(v, "\"\n");
}

void fb_report_series_plot(struct build *b, const char *name, const char *tmpl,
                           const char *caption, pred_fn pred, const void *arg, x_fn xof,
                           unsigned mask, unsigned always, double scale, const char *columns,
                           extra_fn extra, const char *more_vars)
{
    struct sel s;
    struct sb dat = {.ok = true}, vars = {.ok = true};
    char (*titles)[160] = NULL;
    unsigned *present = NULL;
    size_t ns = 0;
    struct fb_plot *p;

    if (!b->ok)
        return;
    if (!fb_report_sel_init(&s, b->n, mask)) {
        b->ok = false;
        return;
    }
    for (size_t i = 0; i < b->n; i++)
        if (pred(&b->rows[i], arg))
            fb_report_sel_add(&s, b->n, &b->rows[i], xof(&b->rows[i]));
    if (!s.n) {
        fb_report_sel_free(&s);
        return;
    }
    if (!fb_report_sel_sort(&s) || !(p = fb_report_plot_new(b, name, tmpl, caption))) {
        fb_report_sel_free(&s);
        b->ok = false;
        return;
    }
    fb_report_sb_printf(&dat, "# %s: %s\n# written by `fabricbench report`; one block per "
                              "series (gnuplot: index i-1 is series[i])\n\n",
                        p->name, caption);
    if ((present = calloc(s.n + 1, sizeof *present)))
        titles = write_series(&dat, &s, always | fb_report_varying(&s, mask), scale, columns,
                              extra, &ns, present);
    if (!titles)
        dat.ok = false;
    fb_report_vars_start(&vars, p->name);
    if (titles)
        vars_titles(&vars, "series", titles, ns);
    if (titles && extra)
        vars_present(&vars, present, ns, count_extra(columns));
    if (more_vars)
        fb_report_sb_printf(&vars, "%s", more_vars);
    {
        double lo = s.x[0], hi = s.x[0];
        for (size_t i = 1; i < s.n; i++) {
            lo = s.x[i] < lo ? s.x[i] : lo;
            hi = s.x[i] > hi ? s.x[i] : hi;
        }
        /* GPU-count axes start at one GPU, the reference of scaling (efficiency is 100%
         * there by definition, so its rows start at two) */
        if (xof == fb_report_x_ranks && lo > 1.0)
            lo = 1.0;
        /* every x axis here is log2: sizes, GPU counts, batches */
        binary_xtics(&vars, lo, hi, xof == fb_report_x_bytes || xof == fb_report_x_fusion);
    }
    fb_report_plot_finish(b, p, &dat, &vars, s.n);
    free(titles);
    free(present);
    fb_report_sel_free(&s);
}

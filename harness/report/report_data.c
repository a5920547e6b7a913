/* What each of report's plots takes from a run's rows: the predicates and x values of the
 * series plots, the p2p heat maps, the step-time split, and the plot set in its fixed order
 * (fb_report_plots). Grouping rows into series and writing them is report_series.c's. */
#include "report_data.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_data_impl.h"
#include "row_index.h"
#include "units.h"

const char *const fb_report_split_metrics[6] = {"data_wait_us",    "h2d_us",    "compute_us",
                                                "comm_exposed_us", "update_us", "other_us"};

/* ---- what each plot takes ---- */

static bool is(const char *a, const char *b) { return strcmp(a, b) == 0; }

double fb_report_x_bytes(const struct fb_row *r) { return (double)r->bytes; }
double fb_report_x_ranks(const struct fb_row *r) { return (double)r->ranks; }
static double x_batch(const struct fb_row *r) { return (double)r->batch; }

static bool p_allreduce(const struct fb_row *r, const void *arg)
{
    (void)arg;
    /* busbw is 0 on one rank by definition: nothing to draw */
    return is(r->bench, "allreduce") && is(r->kase, "out_of_place") && is(r->metric, "busbw") &&
           r->src < 0 && r->ranks > 1 && r->bytes > 0;
}

double fb_report_x_fusion(const struct fb_row *r)
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
           r->ranks > 1 && !isnan(fb_report_x_fusion(r));
}

static struct fb_row_index g_times; /* rows of all ranks' times, by cmp_time */

/* A time row of all ranks, the key extra_per_tensor_flat looks one up by: bench, case, ranks,
 * dtype, transport. */
static int cmp_time(const struct fb_row *a, const struct fb_row *b)
{
    int c;

    if ((c = strcmp(a->bench, b->bench)) || (c = strcmp(a->kase, b->kase)) ||
        (c = (a->ranks > b->ranks) - (a->ranks < b->ranks)) || (c = strcmp(a->dtype, b->dtype)))
        return c;
    return strcmp(a->transport, b->transport);
}

static bool is_all_time(const struct fb_row *r) { return is(r->metric, "time") && r->src < 0; }

/* The per-tensor and flat times of the same ranks and dtype, beside each point (drawn as
 * horizontal lines). */
static void extra_per_tensor_flat(struct sb *dat, const struct sel *s, size_t i, size_t first)
{
    static const char *const cases[] = {"per_tensor", "flat"};
    const struct fb_row *r = s->r[i];

    (void)first;
    for (size_t c = 0; c < 2; c++) {
        struct fb_row key = *r;
        const struct fb_row *found;

        snprintf(key.kase, sizeof key.kase, "%s", cases[c]);
        if ((found = fb_row_index_first(&g_times, &key)))
            fb_report_sb_printf(dat, " %.10g", found->st.median);
        else
            fb_report_sb_printf(dat, " NaN");
    }
}

static bool p_step_metric(const struct fb_row *r, const void *metric)
{
    return is(r->bench, "step") && is(r->metric, (const char *)metric) && r->src < 0;
}

/* The ideal line: the series' images/s on one GPU times the GPUs. */
static void extra_ideal(struct sb *dat, const struct sel *s, size_t i, size_t first)
{
    for (size_t k = first; k < s->n && fb_report_key_cmp(s->r[k], s->r[first], s->mask) == 0;
         k++)
        if (s->r[k]->ranks == 1) {
            fb_report_sb_printf(dat, " %.10g", s->r[k]->st.median * s->r[i]->ranks);
            return;
        }
    fb_report_sb_printf(dat, " NaN");
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
                /* (a rank past the map's limit ends the count there: src + 1 of a rank near
                 * INT_MAX would wrap) */
                int top = o->src > o->dst ? o->src : o->dst;
                nr = top >= 256 ? 257 : top + 1 > nr ? top + 1 : nr;
                if (nr > 256)
                    break;
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
        if (!(p = fb_report_plot_new(b, name, "p2p_matrix", caption))) {
            free(cell);
            return;
        }
        fb_report_sb_printf(&dat, "# %s: ", p->name);
        fb_report_sb_comment(&dat, caption);
        fb_report_sb_printf(&dat, "\n# written by `fabricbench report`: src dst "
                                  "bandwidth_gbps (NaN: not measured, the diagonal)\n");
        for (int s = 0; s < nr; s++) {
            fb_report_sb_printf(&dat, "\n");
            for (int d = 0; d < nr; d++) {
                double v = cell[(size_t)s * (size_t)nr + (size_t)d];
                if (isnan(v))
                    fb_report_sb_printf(&dat, "%d %d NaN\n", s, d);
                else
                    fb_report_sb_printf(&dat, "%d %d %.10g\n", s, d, v);
            }
        }
        free(cell);
        fb_report_vars_start(&vars, p->name);
        fb_report_sb_printf(&vars, "nranks = %d\ntransport = ", nr);
        fb_report_sb_quote(&vars, r->transport);
        fb_report_sb_printf(&vars, "\nmatrix_bytes = %lld\n", r->bytes);
        fb_report_plot_finish(b, p, &dat, &vars, (size_t)nr * (size_t)nr);
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

    if (!b->ok || !fb_report_sel_init(&s, b->n, mask)) {
        b->ok = false;
        return;
    }
    for (size_t i = 0; i < b->n; i++)
        if (p_split(&b->rows[i], NULL))
            fb_report_sel_add(&s, b->n, &b->rows[i], 0);
    if (!s.n) {
        fb_report_sel_free(&s);
        return;
    }
    if (!fb_report_sel_sort(&s) ||
        !(p = fb_report_plot_new(b, "step_split", "step_split",
                                 "step: where a step's time goes, per GPU count and batch (us "
                                 "per step, median of trials)"))) {
        fb_report_sel_free(&s);
        b->ok = false;
        return;
    }
    show = K_RANKS | K_BATCH | fb_report_varying(&s, mask);
    fb_report_sb_printf(&dat, "# step_split: the parts of a step (us, median of trials); 0 "
                              "where a part was not in the CSV\n# written by `fabricbench "
                              "report`\nlabel");
    for (size_t k = 0; k < 6; k++)
        fb_report_sb_printf(&dat, " %s", fb_report_split_metrics[k]);
    fb_report_sb_printf(&dat, "\n");
    for (size_t i = 0; i < s.n;) {
        size_t j = i;
        double v[6] = {0};
        char title[160];

        while (j < s.n && fb_report_key_cmp(s.r[i], s.r[j], mask) == 0) {
            for (size_t k = 0; k < 6; k++)
                if (is(s.r[j]->metric, fb_report_split_metrics[k]))
                    v[k] = s.r[j]->st.median;
            j++;
        }
        fb_report_series_title(s.r[i], show, title, sizeof title);
        /* a data file's quoted label: its double quotes made single, the rest one line */
        for (char *c = title; *c; c++)
            *c = *c == '"' ? '\'' : *c;
        fb_report_sb_printf(&dat, "\"");
        fb_report_sb_comment(&dat, title);
        fb_report_sb_printf(&dat, "\"");
        for (size_t k = 0; k < 6; k++)
            fb_report_sb_printf(&dat, " %.10g", v[k]);
        fb_report_sb_printf(&dat, "\n");
        bars++;
        i = j;
    }
    fb_report_vars_start(&vars, "step_split");
    fb_report_sb_printf(&vars, "nbars = %zu\n", bars);
    fb_report_plot_finish(b, p, &dat, &vars, bars);
    fb_report_sel_free(&s);
}

fb_status fb_report_plots(const struct fb_row *rows, size_t n, struct fb_plot_set *out)
{
    struct build b = {.rows = rows, .n = n, .set = out, .ok = true};
    const unsigned step_key = K_CASE | K_DTYPE | K_BYTES | K_BATCH;
    bool eff_pct = false;

    memset(out, 0, sizeof *out);
    if (!fb_row_index_build(&g_times, rows, n, is_all_time, cmp_time))
        b.ok = false;
    fb_report_series_plot(&b, "allreduce_busbw", "allreduce_busbw",
                          "allreduce: bus bandwidth against message size, one line per GPU count "
                          "(median of trials, out of place)",
                          p_allreduce, NULL, fb_report_x_bytes, K_RANKS | K_DTYPE | K_TRANSPORT,
                          K_RANKS, 1.0, "bytes busbw_gbps p05 p95", NULL, NULL);
    fb_report_series_plot(&b, "densenet_fusion", "densenet_fusion",
                          "densenet_allreduce: one step's DenseNet-121 gradient exchange against "
                          "the fusion threshold, with one all-reduce per tensor (dashed) and one "
                          "flat buffer (dotted)",
                          p_densenet, NULL, fb_report_x_fusion, K_RANKS | K_DTYPE | K_TRANSPORT,
                          K_RANKS | K_DTYPE, 1.0,
                          "threshold_bytes time_us p05 p95 per_tensor_time_us flat_time_us",
                          extra_per_tensor_flat, NULL);
    fb_report_series_plot(&b, "step_scaling", "step_scaling",
                          "step: images/s against GPUs, with the ideal (linear from one GPU) "
                          "dashed",
                          p_step_metric, "images_per_s", fb_report_x_ranks, step_key, K_BATCH,
                          1.0, "gpus images_per_s p05 p95 ideal_images_per_s", extra_ideal, NULL);
    for (size_t i = 0; i < n; i++)
        if (p_step_metric(&rows[i], "scaling_efficiency"))
            eff_pct = is(rows[i].unit, "%");
    /* scaling_efficiency is a fraction (or a percentage when its unit says so): drawn in %. */
    fb_report_series_plot(&b, "step_efficiency", "step_efficiency",
                          "step: scaling efficiency against GPUs (per-GPU images/s at k GPUs "
                          "over one GPU's)",
                          p_step_metric, "scaling_efficiency", fb_report_x_ranks, step_key,
                          K_BATCH, eff_pct ? 1.0 : 100.0, "gpus efficiency_pct p05 p95", NULL,
                          NULL);
    fb_report_series_plot(&b, "step_batch", "step_batch",
                          "step: images/s against the batch per GPU, one line per GPU count",
                          p_step_metric, "images_per_s", x_batch,
                          K_RANKS | K_CASE | K_DTYPE | K_BYTES, K_RANKS, 1.0,
                          "batch images_per_s p05 p95", NULL, NULL);
    if (b.ok)
        p2p_matrices(&b);
    fb_report_series_plot(&b, "h2d", "h2d",
                          "h2d: host-device copy bandwidth against size, pinned and pageable, "
                          "rank 0 alone (median of trials)",
                          p_h2d, NULL, fb_report_x_bytes, K_CASE | K_TRANSPORT, K_CASE, 1.0,
                          "bytes bandwidth_gbps p05 p95", NULL, NULL);
    step_split(&b);
    fb_row_index_release(&g_times);
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

/* report's plot data and the headline's choice, on rows built here with known values: which
 * plots exist, how many data lines each has, the values in them (the ideal line is one GPU's
 * images/s times the GPUs, the p2p matrix's cells land at src, dst), series order and titles;
 * and the detail flags inferred for rows read back (p2p's per-direction shares, matrices). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headline.h"
#include "plot_templates.h"
#include "report_data.h"
#include "report_data_impl.h"
#include "test.h"

static struct fb_row rows[256];
static size_t nrows;

static struct fb_row *add(const char *bench, const char *kase, const char *metric, int ranks,
                          long long bytes, long batch, double median)
{
    struct fb_row *r = &rows[nrows++];

    memset(r, 0, sizeof *r);
    snprintf(r->bench, sizeof r->bench, "%s", bench);
    snprintf(r->kase, sizeof r->kase, "%s", kase);
    snprintf(r->metric, sizeof r->metric, "%s", metric);
    strcpy(r->backend, "cuda");
    strcpy(r->transport, "nccl");
    strcpy(r->unit, "GB/s");
    r->nodes = 1;
    r->ranks = ranks;
    r->src = r->dst = -1;
    r->bytes = bytes;
    r->batch = batch;
    r->count = r->wrong = -1;
    r->st.samples = 5;
    r->st.median = r->st.mean = median;
    r->st.p05 = median * 0.9;
    r->st.p95 = median * 1.1;
    return r;
}

static const struct fb_plot *find(const struct fb_plot_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->p[i].name, name) == 0)
            return &s->p[i];
    return NULL;
}

/* The data lines of a .dat text (not comments or blank lines). */
static size_t data_lines(const char *dat, char lines[][160], size_t max)
{
    size_t n = 0;
    for (const char *p = dat; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len && *p != '#') {
            if (n < max)
                snprintf(lines[n], 160, "%.*s", (int)len, p);
            n++;
        }
        p += len + (e ? 1 : 0);
    }
    return n;
}

static void test_empty(void)
{
    struct fb_plot_set s;

    nrows = 0;
    add("memfit", "fp16_adam_r224", "batch_max", 1, -1, -1, 96);
    CHECK(fb_report_plots(rows, nrows, &s) == FB_OK);
    CHECK(s.n == 0);
    fb_report_plots_release(&s);
}

static void test_allreduce_and_h2d(void)
{
    struct fb_plot_set s;
    const struct fb_plot *p;
    char l[64][160];

    nrows = 0;
    /* 4 ranks before 2 in the file, sizes out of order: sorted by ranks, then bytes */
    add("allreduce", "out_of_place", "busbw", 4, 1 << 20, -1, 40.0);
    add("allreduce", "out_of_place", "busbw", 4, 1 << 10, -1, 4.0);
    add("allreduce", "out_of_place", "busbw", 2, 1 << 20, -1, 20.0);
    add("allreduce", "out_of_place", "busbw", 1, 1 << 20, -1, 0.0);   /* one rank: not drawn */
    add("allreduce", "in_place", "busbw", 4, 1 << 20, -1, 41.0);      /* not drawn */
    add("allreduce", "out_of_place", "algbw", 4, 1 << 20, -1, 30.0);  /* not drawn */
    struct fb_row *h = add("h2d", "pinned_h2d", "bandwidth", 1, 4096, -1, 10.0);
    h->src = 0;
    h = add("h2d", "pinned_h2d", "bandwidth", 1, 4096, -1, 11.0);
    h->src = 1; /* rank 1 alone: not drawn */
    h = add("h2d", "pageable_h2d", "bandwidth", 1, 4096, -1, 5.0);
    h->src = 0;
    CHECK(fb_report_plots(rows, nrows, &s) == FB_OK);
    CHECK(s.n == 2);
    CHECK((p = find(&s, "allreduce_busbw")) != NULL);
    if (p) {
        CHECK(p->data_lines == 3);
        CHECK(data_lines(p->dat, l, 64) == 3);
        CHECK_STR(l[0], "1048576 20 18 22");
        CHECK_STR(l[1], "1024 4 3.6 4.4");
        CHECK_STR(l[2], "1048576 40 36 44");
        CHECK(strstr(p->vars, "series[1] = '2 GPUs'") != NULL);
        CHECK(strstr(p->vars, "series[2] = '4 GPUs'") != NULL);
        CHECK(strstr(p->vars, "nseries = 2") != NULL);
        CHECK(strstr(p->vars, "width = 1000") && strstr(p->vars, "height = 600"));
        /* binary tics from 1 KiB to 1 MiB, exact */
        CHECK(strstr(p->vars, "'1 KiB' 1024") != NULL);
        CHECK(strstr(p->vars, "'1 MiB' 1048576") != NULL);
        CHECK_STR(p->template, "allreduce_busbw");
    }
    CHECK((p = find(&s, "h2d")) != NULL);
    if (p) {
        CHECK(p->data_lines == 2);
        /* cases sorted by name: pageable first */
        CHECK(strstr(p->vars, "series[1] = 'pageable, host to device'") != NULL);
        CHECK(strstr(p->vars, "series[2] = 'pinned, host to device'") != NULL);
    }
    fb_report_plots_release(&s);
}

static void test_step(void)
{
    static const double split[6] = {100, 50, 7000, 300, 200, 10};
    struct fb_plot_set s;
    const struct fb_plot *p;
    char l[64][160];

    nrows = 0;
    for (int k = 1; k <= 4; k *= 2)
        for (long b = 16; b <= 32; b *= 2) {
            double per = (b == 16 ? 100.0 : 120.0) * (k == 1 ? 1.0 : 0.9);
            add("step", "step", "images_per_s", k, 26214400, b, per * k)->dtype[0] = '\0';
            add("step", "step", "scaling_efficiency", k, 26214400, b, k == 1 ? 1.0 : 0.9);
            for (int m = 0; m < 6; m++)
                add("step", "step", fb_report_split_metrics[m], k, 26214400, b, split[m] * k);
        }
    CHECK(fb_report_plots(rows, nrows, &s) == FB_OK);
    CHECK((p = find(&s, "step_scaling")) != NULL);
    if (p) {
        CHECK(p->data_lines == 6);
        CHECK(data_lines(p->dat, l, 64) == 6);
        /* batch 16: 1, 2, 4 GPUs; ideal = 100 images/s x GPUs */
        CHECK_STR(l[0], "1 100 90 110 100");
        CHECK_STR(l[1], "2 180 162 198 200");
        CHECK_STR(l[2], "4 360 324 396 400");
        CHECK_STR(l[5], "4 432 388.8 475.2 480");
        CHECK(strstr(p->vars, "series[1] = 'batch 16'") != NULL);
    }
    CHECK((p = find(&s, "step_efficiency")) != NULL);
    if (p) {
        data_lines(p->dat, l, 64);
        CHECK_STR(l[1], "2 90 81 99"); /* a fraction drawn in percent */
    }
    CHECK((p = find(&s, "step_batch")) != NULL);
    if (p) {
        CHECK(p->data_lines == 6);
        CHECK(strstr(p->vars, "nseries = 3") != NULL);
        CHECK(strstr(p->vars, "series[3] = '4 GPUs'") != NULL);
    }
    CHECK((p = find(&s, "step_split")) != NULL);
    if (p) {
        CHECK(p->data_lines == 6);
        CHECK(data_lines(p->dat, l, 64) == 7); /* and its header line */
        CHECK_STR(l[0], "label data_wait_us h2d_us compute_us comm_exposed_us update_us other_us");
        CHECK_STR(l[1], "\"1 GPU, batch 16\" 100 50 7000 300 200 10");
        CHECK_STR(l[6], "\"4 GPUs, batch 32\" 400 200 28000 1200 800 40");
    }
    CHECK(find(&s, "allreduce_busbw") == NULL && find(&s, "h2d") == NULL);
    fb_report_plots_release(&s);
}

static void test_densenet_and_p2p(void)
{
    struct fb_plot_set s;
    const struct fb_plot *p;
    char l[64][160];
    struct fb_row *r;

    nrows = 0;
    strcpy(add("densenet_allreduce", "fusion_4M", "time", 2, 27872824, -1, 900)->dtype, "float32");
    strcpy(add("densenet_allreduce", "fusion_1M", "time", 2, 27872824, -1, 1000)->dtype, "float32");
    strcpy(add("densenet_allreduce", "per_tensor", "time", 2, 27872824, -1, 5000)->dtype, "float32");
    strcpy(add("densenet_allreduce", "flat", "time", 2, 27872824, -1, 800)->dtype, "float32");
    strcpy(add("densenet_allreduce", "fusion_1M", "time", 1, 27872824, -1, 10)->dtype, "float32");
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            if (a == b)
                continue;
            r = add("p2p", "matrix_uni", "bandwidth", 2, 64 << 20, -1, 10 * a + b);
            r->src = a;
            r->dst = b;
        }
    CHECK(fb_report_plots(rows, nrows, &s) == FB_OK);
    CHECK((p = find(&s, "densenet_fusion")) != NULL);
    if (p) {
        CHECK(p->data_lines == 2);
        data_lines(p->dat, l, 64);
        CHECK_STR(l[0], "1048576 1000 900 1100 5000 800");
        CHECK_STR(l[1], "4194304 900 810 990 5000 800");
        CHECK(strstr(p->vars, "series[1] = '2 GPUs, fp32'") != NULL);
        /* both the per-tensor and the flat lines have data: both get a key entry */
        CHECK(strstr(p->vars, "has5[1] = 1") != NULL);
        CHECK(strstr(p->vars, "has6[1] = 1") != NULL);
    }
    CHECK((p = find(&s, "p2p_matrix_nccl")) != NULL);
    if (p) {
        CHECK(p->data_lines == 9);
        data_lines(p->dat, l, 64);
        CHECK_STR(l[0], "0 0 NaN");
        CHECK_STR(l[1], "0 1 1");
        CHECK_STR(l[5], "1 2 12");
        CHECK_STR(l[7], "2 1 21");
        CHECK(strstr(p->vars, "nranks = 3") != NULL);
    }
    fb_report_plots_release(&s);
}

/* A run without --fusion off (the quick run: --fusion 1M,4M,25M) has no per-tensor time: its
 * line has no point, so the template must not give it a key entry (has5 = 0); flat has one. */
static void test_densenet_without_per_tensor(void)
{
    struct fb_plot_set s;
    const struct fb_plot *p;
    char l[64][160];

    nrows = 0;
    strcpy(add("densenet_allreduce", "fusion_1M", "time", 2, 27872824, -1, 1000)->dtype, "float32");
    strcpy(add("densenet_allreduce", "fusion_4M", "time", 2, 27872824, -1, 900)->dtype, "float32");
    strcpy(add("densenet_allreduce", "flat", "time", 2, 27872824, -1, 800)->dtype, "float32");
    CHECK(fb_report_plots(rows, nrows, &s) == FB_OK);
    CHECK((p = find(&s, "densenet_fusion")) != NULL);
    if (p) {
        data_lines(p->dat, l, 64);
        CHECK_STR(l[0], "1048576 1000 900 1100 NaN 800");
        CHECK(strstr(p->vars, "has5[1] = 0") != NULL);
        CHECK(strstr(p->vars, "has6[1] = 1") != NULL);
    }
    /* and the template titles those lines by them */
    {
        const char *gp = fb_plot_template_find("densenet_fusion");
        CHECK(gp && strstr(gp, "title (has5[i] ? series[i] . ', per tensor' : '')"));
        CHECK(gp && strstr(gp, "title (has6[i] ? series[i] . ', flat' : '')"));
    }
    fb_report_plots_release(&s);
}

/* The headline's cache note: host rows at or below the last-level cache, bandwidths only. */
static void test_in_cache(void)
{
    struct fb_row *r;
    char note[160];

    nrows = 0;
    r = add("h2d", "pinned_h2d", "bandwidth_total", 2, 4 << 20, -1, 47.0);
    strcpy(r->backend, "host");
    CHECK(fb_headline_in_cache(r, 32u << 20));
    CHECK(!fb_headline_in_cache(r, 0));                       /* unknown cache: no claim */
    r->bytes = 64 << 20;
    CHECK(!fb_headline_in_cache(r, 32u << 20));               /* from memory */
    r->bytes = 4 << 20;
    strcpy(r->backend, "cuda");
    CHECK(!fb_headline_in_cache(r, 32u << 20));               /* a GPU's copy */
    r = add("allreduce", "out_of_place", "busbw", 2, 4 << 20, -1, 3.0);
    strcpy(r->backend, "host");
    CHECK(fb_headline_in_cache(r, 32u << 20));
    r = add("allreduce", "out_of_place", "time", 2, 4 << 20, -1, 3.0);
    strcpy(r->backend, "host");
    CHECK(!fb_headline_in_cache(r, 32u << 20));               /* not a bandwidth */
    fb_headline_cache_note(32u << 20, note, sizeof note);
    CHECK_STR(note, "(in cache): the buffer fits in the 32M last-level cache (hwloc): a cache "
                    "figure, not memory");
}

static void test_headline(void)
{
    size_t idx[64], n;
    struct fb_row *r;

    nrows = 0;
    /* a pair both ways: the total is the headline, each direction's share is detail */
    r = add("p2p", "sweep_bidir", "bandwidth_total", 2, 1 << 20, -1, 20);
    r->src = 0, r->dst = 1;
    r = add("p2p", "sweep_bidir", "bandwidth", 2, 1 << 20, -1, 10);
    r->src = 0, r->dst = 1;
    r = add("p2p", "sweep_bidir", "bandwidth", 2, 1 << 20, -1, 10);
    r->src = 1, r->dst = 0;
    r = add("p2p", "sweep_uni", "bandwidth", 2, 1 << 20, -1, 12);
    r->src = 0, r->dst = 1;
    r = add("p2p", "matrix_uni", "bandwidth", 2, 64 << 20, -1, 12);
    r->src = 0, r->dst = 1;
    /* h2d all at once: the total, not each rank's share; each rank alone stays */
    add("h2d", "pinned_h2d", "bandwidth_total", 2, 1 << 20, -1, 50);
    r = add("h2d", "pinned_h2d", "bandwidth", 2, 1 << 20, -1, 25);
    r->src = 0;
    r = add("h2d", "pinned_h2d", "bandwidth", 1, 1 << 20, -1, 30);
    r->src = 0;
    add("densenet_allreduce", "fusion_4M", "busbw", 2, 27872824, -1, 3);
    add("densenet_allreduce", "flat", "busbw", 2, 27872824, -1, 4);
    /* a batch sweep at one size: the largest batch */
    add("step", "step", "images_per_s", 2, 26214400, 64, 300);
    add("step", "step", "images_per_s", 2, 26214400, 128, 340);
    CHECK(fb_headline_infer_detail(rows, nrows) == FB_OK);
    CHECK(!rows[0].detail && rows[1].detail && rows[2].detail && !rows[3].detail);
    CHECK(rows[4].detail);
    CHECK(!rows[5].detail && rows[6].detail && !rows[7].detail);
    CHECK(rows[8].detail && !rows[9].detail);
    CHECK(fb_headline_select(rows, nrows, idx, &n) == FB_OK);
    CHECK(n == 6);
    if (n == 6) {
        CHECK(idx[0] == 0 && idx[1] == 3 && idx[2] == 5 && idx[3] == 7 && idx[4] == 9);
        CHECK(idx[5] == 11);
    }
}

/* host-strict's rows are no measurements: none makes a headline (docs/strict.md) */
static void test_headline_strict(void)
{
    struct fb_row *r;
    size_t idx[8], n;

    nrows = 0;
    r = add("allreduce", "in_place", "busbw", 2, 1 << 20, -1, 9);
    snprintf(r->backend, sizeof r->backend, "host-strict");
    r = add("h2d", "pinned_h2d", "bandwidth_total", 2, 1 << 20, -1, 50);
    snprintf(r->backend, sizeof r->backend, "host");
    CHECK(fb_headline_select(rows, nrows, idx, &n) == FB_OK);
    CHECK(n == 1 && idx[0] == 1);
}

/* a series' title names a fusion threshold in binary units spelled as such ("64 MiB", the size
 * `--fusion 64M` gives), never "64MB", which is another size and which mix refuses */
static void test_series_title(void)
{
    struct fb_row *r;
    char buf[128];

    nrows = 0;
    r = add("step", "step", "images_per_s", 4, 64 << 20, 32, 300);
    strcpy(r->dtype, "float16");
    fb_report_series_title(r, K_RANKS | K_BATCH | K_BYTES, buf, sizeof buf);
    CHECK(strcmp(buf, "4 GPUs, batch 32, fusion 64 MiB") == 0);
    r->bytes = 1000;
    fb_report_series_title(r, K_BYTES, buf, sizeof buf);
    CHECK(strcmp(buf, "fusion 1000 B") == 0);
    r->bytes = 2LL << 30;
    fb_report_series_title(r, K_BYTES, buf, sizeof buf);
    CHECK(strcmp(buf, "fusion 2 GiB") == 0);
    r->bytes = -1;
    fb_report_series_title(r, K_BYTES, buf, sizeof buf);
    CHECK(strcmp(buf, "no fusion") == 0);
}

int main(void)
{
    test_empty();
    test_allreduce_and_h2d();
    test_step();
    test_densenet_and_p2p();
    test_densenet_without_per_tensor();
    test_in_cache();
    test_headline();
    test_headline_strict();
    test_series_title();
    TEST_DONE();
}

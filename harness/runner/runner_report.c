/* What a measured case becomes on rank 0: rows in results.csv (the point as a whole, each
 * rank's own figures, a benchmark's values) and the table on stdout (its headers, its columns
 * and a line per point). */
#include "runner_impl.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "units.h"

static const char *const dtype_names[] = {
    [FB_DTYPE_FLOAT32] = "float32", [FB_DTYPE_FLOAT64] = "float64", [FB_DTYPE_INT32] = "int32",
    [FB_DTYPE_FLOAT16] = "float16", [FB_DTYPE_INT8] = "int8"};

static void row_init(struct fb_row *row, const struct fb_runner *r, const struct fb_bench *b,
                     const struct fb_case *c, int ranks, int nodes, long iters)
{
    memset(row, 0, sizeof *row);
    snprintf(row->bench, sizeof row->bench, "%s", b->name);
    snprintf(row->kase, sizeof row->kase, "%s", c->name);
    snprintf(row->backend, sizeof row->backend, "%s", r->s->be->name);
    snprintf(row->transport, sizeof row->transport, "%s", c->transport);
    row->nodes = nodes;
    row->ranks = ranks;
    row->src = row->dst = -1;
    row->batch = c->batch > 0 ? c->batch : -1;
    /* work that is not a message (a compute step, a batch that fits) has no size */
    row->bytes = c->report == FB_REPORT_THROUGHPUT && c->bytes == 0 ? -1 : (long long)c->bytes;
    row->count = c->typed ? (long long)c->count : -1;
    if (c->typed)
        snprintf(row->dtype, sizeof row->dtype, "%s", dtype_names[c->dtype]);
    if (c->redop)
        snprintf(row->redop, sizeof row->redop, "%s", c->redop);
    row->iters = iters;
    row->detail = c->detail;
}

/* The row is about rank src (and its partner dst when dst >= 0). */
static void row_who(struct fb_row *row, const struct fb_runner *r, int src, int dst)
{
    row->src = src;
    row->dst = dst;
    if (src >= 0 && dst >= 0 && r->links)
        snprintf(row->link, sizeof row->link, "%s", r->links[(size_t)src * r->s->world.size + dst]);
}

static fb_status emit(struct fb_runner *r, struct fb_row *row, const char *metric, const char *unit,
                      const double *values, size_t n)
{
    snprintf(row->metric, sizeof row->metric, "%s", metric);
    snprintf(row->unit, sizeof row->unit, "%s", unit);
    if (fb_stats_compute(values, n, &row->st) != 0)
        return FB_ERR_NOMEM;
    return fb_results_add(r->res, row);
}

int fb_runner_slowest(const double *all, const int *flag, int nranks, size_t trials, double *out)
{
    int n = 0;

    for (size_t t = 0; t < trials; t++)
        out[t] = 0.0;
    for (int k = 0; k < nranks; k++) {
        if (!flag[k])
            continue;
        n++;
        for (size_t t = 0; t < trials; t++)
            if (all[(size_t)k * trials + t] > out[t])
                out[t] = all[(size_t)k * trials + t];
    }
    return n;
}

int fb_runner_over_ranks(const double *all, const int *flag, int nranks, size_t trials,
                         double *mean, double *min, double *max)
{
    int n = 0;

    for (size_t t = 0; t < trials; t++)
        mean[t] = min[t] = max[t] = 0.0;
    for (int k = 0; k < nranks; k++) {
        if (!flag[k])
            continue;
        for (size_t t = 0; t < trials; t++) {
            double v = all[(size_t)k * trials + t];
            mean[t] += v;
            min[t] = n == 0 || v < min[t] ? v : min[t];
            max[t] = n == 0 || v > max[t] ? v : max[t];
        }
        n++;
    }
    for (size_t t = 0; n > 0 && t < trials; t++)
        mean[t] /= n;
    return n;
}

/* Rank 0: the point's own line in the stdout table. */
static void print_line(const struct fb_case *c, int nactive, long iters, const struct fb_stats *time,
                       const struct fb_stats *bw, const struct fb_stats *bus, long long wrong)
{
    char size[24], who[24];

    if (c->active == FB_ALL_RANKS)
        snprintf(who, sizeof who, "all");
    else if (!c->pair)
        snprintf(who, sizeof who, "%d", c->active);
    else
        snprintf(who, sizeof who, "%d%s%d", c->active, c->per_rank ? "<>" : ">", c->peer);
    switch (c->report) {
    case FB_REPORT_COLLECTIVE:
        /* nccl-tests' columns: size in bytes, count, type, redop, root, time, algbw, busbw,
         * #wrong. */
        if (nactive > 1)
            fb_out("%-16s %5d %12zu %10zu %8s %5s %4d %7ld %10.2f %10.2f %10.2f %9.3f %9.3f "
                   "%6lld%s\n",
                   c->name, nactive, c->bytes, c->count, c->typed ? dtype_names[c->dtype] : "-",
                   c->redop ? c->redop : "-", c->rooted ? c->root : -1, iters, time->median,
                   time->p05, time->p95, bw->median, bus->median, wrong, wrong ? "  WRONG" : "");
        else /* one rank: time only (no bandwidth rows) */
            fb_out("%-16s %5d %12zu %10zu %8s %5s %4d %7ld %10.2f %10.2f %10.2f %9s %9s "
                   "%6lld%s\n",
                   c->name, nactive, c->bytes, c->count, c->typed ? dtype_names[c->dtype] : "-",
                   c->redop ? c->redop : "-", c->rooted ? c->root : -1, iters, time->median,
                   time->p05, time->p95, "-", "-", wrong, wrong ? "  WRONG" : "");
        break;
    case FB_REPORT_LATENCY:
        fb_size_format(c->bytes, size, sizeof size);
        fb_out("%-16s %5d %6s %10s %7ld %10.2f %10.2f %10.2f %10.3f %6lld%s\n", c->name, nactive,
               who, size, iters, time->median, time->p05, time->p95, bw->median, wrong,
               wrong ? "  WRONG" : "");
        break;
    case FB_REPORT_THROUGHPUT:
        /* bw: the headline rate (images/s, else TFLOP/s, else GB/s); bus: GB/s copied */
        fb_out("%-16s %5d %6s %6ld %7ld %10.1f %10.1f %10.1f %10.2f %9.3f %6lld%s\n", c->name,
               nactive, who, c->batch, iters, time->median, time->p05, time->p95, bw->median,
               bus->median, wrong, wrong ? "  WRONG" : "");
        break;
    case FB_REPORT_BANDWIDTH:
        fb_size_format(c->bytes, size, sizeof size);
        fb_out("%-16s %5d %6s %10s %7ld %10.2f %10.2f %10.2f %9.3f %9.3f %6lld%s\n", c->name,
               nactive, who, size, iters, time->median, time->p05, time->p95, bw->median,
               bw->median / (c->per_rank ? nactive : 1), wrong, wrong ? "  WRONG" : "");
        break;
    }
}

/* Rank k's partner in a per-rank row. */
static int partner_of(const struct fb_case *c, int k)
{
    if (c->partners)
        return c->partners[k];
    if (c->pair && c->stride > 0)
        return k - k % c->stride + (k % c->stride == c->active ? c->peer : c->active);
    if (c->pair)
        return k == c->active ? c->peer : c->active;
    if (c->shift > 0)
        return (k + c->shift) % c->group;
    return -1;
}

/* FB_REPORT_THROUGHPUT rows from per-trial times (microseconds per iteration): what `ranks`
 * ranks did together per second, each trial as long as `times` says. Writes the last rate row's
 * statistics (images/s, else TFLOP/s, else GB/s) into *headline. */
static fb_status emit_throughput(struct fb_runner *r, struct fb_row *row, const struct fb_case *c,
                                 const double *times, size_t n, int ranks, bool whole,
                                 struct fb_stats *headline, struct fb_stats *gbps)
{
    double *v = calloc(n, sizeof *v);
    fb_status st = FB_OK;

    if (!v)
        return FB_ERR_NOMEM;
    if (c->bytes > 0 && !c->bytes_label) {
        for (size_t t = 0; t < n; t++)
            v[t] = fb_gbps((double)c->bytes * ranks, times[t]);
        if ((st = emit(r, row, whole && c->per_rank ? "bandwidth_total" : "bandwidth", "GB/s", v,
                       n)) != FB_OK)
            goto out;
        *gbps = *headline = row->st;
    }
    if (c->flops > 0) {
        for (size_t t = 0; t < n; t++)
            v[t] = times[t] > 0 ? c->flops * ranks / times[t] / 1e6 : 0.0;
        if ((st = emit(r, row, "tflops", "TFLOP/s", v, n)) != FB_OK)
            goto out;
        *headline = row->st;
    }
    if (c->items > 0) {
        for (size_t t = 0; t < n; t++)
            v[t] = times[t] > 0 ? c->items * ranks / times[t] * 1e6 : 0.0;
        if ((st = emit(r, row, "images_per_s", "images/s", v, n)) != FB_OK)
            goto out;
        *headline = row->st;
    }
    if (c->busy_us > 0) {
        for (size_t t = 0; t < n; t++)
            v[t] = times[t] > c->busy_us ? 1.0 - c->busy_us / times[t] : 0.0;
        st = emit(r, row, "stall_fraction", "fraction", v, n);
    }
out:
    free(v);
    return st;
}

fb_status fb_runner_report_values(struct fb_runner *r, const struct fb_bench *b,
                                  const struct fb_case *c, const struct measured *mine,
                                  const double *vals)
{
    const struct fb_world *w = &r->s->world;
    int *flag = calloc((size_t)w->size, sizeof *flag), nactive = 0, nodes;
    struct fb_row row;
    fb_status st = FB_OK;

    if (!flag)
        return FB_ERR_NOMEM;
    for (int k = 0; k < w->size; k++)
        nactive += flag[k] = fb_runner_is_active(c, k);
    nodes = fb_world_count_nodes(r->node_of, flag, w->size);
    for (size_t i = 0; i < mine->nvalues && st == FB_OK; i++) {
        double least = 0.0;
        bool any = false;
        for (int k = 0; k < w->size; k++)
            if (flag[k] && (!any || vals[(size_t)k * FB_MAX_VALUES + i] < least)) {
                least = vals[(size_t)k * FB_MAX_VALUES + i];
                any = true;
            }
        row_init(&row, r, b, c, nactive, nodes, 0);
        row.wrong = -1;
        row_who(&row, r, nactive == 1 ? c->active : -1, -1);
        st = emit(r, &row, mine->values[i].metric, mine->values[i].unit, &least, 1);
        for (int k = 0; nactive > 1 && k < w->size && st == FB_OK; k++) {
            if (!flag[k])
                continue;
            row_init(&row, r, b, c, nactive, nodes, 0);
            row.wrong = -1;
            row.detail = true;
            row_who(&row, r, k, -1);
            st = emit(r, &row, mine->values[i].metric, mine->values[i].unit,
                      &vals[(size_t)k * FB_MAX_VALUES + i], 1);
        }
        fb_out("%-16s %5d %-24s %14.6g %s\n", c->name, nactive, mine->values[i].metric, least,
               mine->values[i].unit);
    }
    free(flag);
    return st;
}

fb_status fb_runner_report(struct fb_runner *r, const struct fb_bench *b, const struct fb_case *c,
                           const double *all, const long long *wrong, long iters, long neach)
{
    const struct fb_world *w = &r->s->world;
    size_t trials = (size_t)r->opt->trials;
    int *flag = calloc((size_t)w->size, sizeof *flag);
    double *slow = calloc(trials, sizeof *slow), *bw = calloc(trials, sizeof *bw),
           *bus = calloc(trials, sizeof *bus);
    int nactive = 0, nodes;
    long long total_wrong = 0;
    struct fb_row row;
    struct fb_stats time_st, bw_st = {0}, bus_st = {0};
    fb_status st = FB_OK;

    if (!flag || !slow || !bw || !bus) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    /* A pair repeated on every node: each repetition's rows, as if measured alone. */
    for (int base = 0; c->pair && c->stride > 0 && base + c->stride <= c->group && st == FB_OK;
         base += c->stride) {
        struct fb_case one = *c;
        one.active += base;
        one.peer += base;
        one.stride = 0;
        st = fb_runner_report(r, b, &one, all, wrong, iters, neach);
    }
    if (c->pair && c->stride > 0)
        goto out;
    for (int k = 0; k < w->size; k++)
        if ((flag[k] = fb_runner_is_active(c, k)))
            total_wrong += wrong[k];
    nactive = fb_runner_slowest(all, flag, w->size, trials, slow);
    nodes = fb_world_count_nodes(r->node_of, flag, w->size);

    /* The point as a whole: each trial lasts as long as its slowest rank. */
    row_init(&row, r, b, c, nactive, nodes, iters);
    row_who(&row, r, c->active, c->pair ? c->peer : -1);
    row.wrong = total_wrong;
    for (size_t t = 0; t < trials; t++) {
        double moved = c->per_rank ? (double)c->bytes * nactive : (double)c->bytes;
        bw[t] = c->report == FB_REPORT_LATENCY ? slow[t] / (c->legs > 0 ? c->legs : 1)
                                               : fb_gbps(moved, slow[t]);
        bus[t] = bw[t] * c->bus_factor;
    }
    memset(&bus_st, 0, sizeof bus_st);
    if ((st = emit(r, &row, "time", "us", slow, trials)) != FB_OK)
        goto out;
    time_st = row.st;
    switch (c->report) {
    case FB_REPORT_COLLECTIVE:
        /* On one rank a collective moves nothing across a fabric (an in-place all-reduce is a
         * no-op timed in nanoseconds, an absurd bandwidth): its time is its figure, no bandwidth
         * row, so no headline either. */
        if (nactive > 1 && (st = emit(r, &row, "algbw", "GB/s", bw, trials)) != FB_OK)
            goto out;
        bw_st = row.st;
        if (nactive > 1 && (st = emit(r, &row, "busbw", "GB/s", bus, trials)) != FB_OK)
            goto out;
        bus_st = row.st;
        if (neach > 0) {
            /* each iteration as long as its slowest rank, like the trials */
            double each[MAX_EACH];
            fb_runner_slowest(r->each_all, flag, w->size, (size_t)neach, each);
            if ((st = emit(r, &row, "time_iter", "us", each, (size_t)neach)) != FB_OK)
                goto out;
        }
        break;
    case FB_REPORT_LATENCY:
        if ((st = emit(r, &row, "latency", "us", bw, trials)) != FB_OK)
            goto out;
        bw_st = row.st;
        break;
    case FB_REPORT_BANDWIDTH:
        if ((st = emit(r, &row, c->per_rank ? "bandwidth_total" : "bandwidth", "GB/s", bw,
                       trials)) != FB_OK)
            goto out;
        bw_st = row.st;
        break;
    case FB_REPORT_THROUGHPUT:
        if ((st = emit_throughput(r, &row, c, slow, trials, c->per_rank ? nactive : 1, true,
                                  &bw_st, &bus_st)) != FB_OK)
            goto out;
        break;
    }

    /* Concurrent copies: each rank's own figures, so one slow GPU, socket or pair stands out. */
    for (int k = 0; c->per_rank && k < w->size; k++) {
        const double *mine = &all[(size_t)k * trials];
        if (!flag[k])
            continue;
        row_init(&row, r, b, c, nactive, nodes, iters);
        row.detail = true;
        row_who(&row, r, k, partner_of(c, k));
        row.wrong = wrong[k];
        for (size_t t = 0; t < trials; t++)
            bw[t] = fb_gbps((double)c->bytes, mine[t]);
        if ((st = emit(r, &row, "time", "us", mine, trials)) != FB_OK)
            goto out;
        if (c->report == FB_REPORT_THROUGHPUT) {
            struct fb_stats unused[2];
            st = emit_throughput(r, &row, c, mine, trials, 1, false, &unused[0], &unused[1]);
        } else {
            st = emit(r, &row, "bandwidth", "GB/s", bw, trials);
        }
        if (st != FB_OK)
            goto out;
    }
    print_line(c, nactive, iters, &time_st, &bw_st, &bus_st, total_wrong);
out:
    free(flag);
    free(slow);
    free(bw);
    free(bus);
    return st;
}

fb_status fb_runner_report_synced(struct fb_runner *r, const struct fb_bench *b,
                                  const struct fb_case *c, const double *synced, long long wrong,
                                  long iters)
{
    const struct fb_world *w = &r->s->world;
    size_t trials = (size_t)r->opt->trials;
    int *flag = calloc((size_t)w->size, sizeof *flag), nactive, nodes;
    double *v = calloc(3 * trials, sizeof *v);
    struct fb_stats avg = {0}, lo = {0}, hi = {0};
    struct fb_row row;
    fb_status st = FB_OK;

    if (!flag || !v) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    for (int k = 0; k < w->size; k++)
        flag[k] = fb_runner_is_active(c, k);
    nactive = fb_runner_over_ranks(synced, flag, w->size, trials, v, v + trials, v + 2 * trials);
    nodes = fb_world_count_nodes(r->node_of, flag, w->size);
    row_init(&row, r, b, c, nactive, nodes, iters);
    row_who(&row, r, c->active, c->pair ? c->peer : -1);
    row.wrong = wrong;
    /* a metric of its own, never `time`: compare, trend and accept cannot mix the methods */
    if ((st = emit(r, &row, "time_synced_avg", "us", v, trials)) != FB_OK)
        goto out;
    avg = row.st;
    if ((st = emit(r, &row, "time_synced_min", "us", v + trials, trials)) != FB_OK)
        goto out;
    lo = row.st;
    if ((st = emit(r, &row, "time_synced_max", "us", v + 2 * trials, trials)) != FB_OK)
        goto out;
    hi = row.st;
    /* nccl-tests' columns with the synced mean's time and no bandwidth, marked */
    fb_out("%-16s %5d %12zu %10zu %8s %5s %4d %7ld %10.2f %10.2f %10.2f %9s %9s %6lld  synced: "
           "min %.2f max %.2f%s\n",
           c->name, nactive, c->bytes, c->count, c->typed ? dtype_names[c->dtype] : "-",
           c->redop ? c->redop : "-", c->rooted ? c->root : -1, iters, avg.median, avg.p05,
           avg.p95, "-", "-", wrong, lo.median, hi.median, wrong ? "  WRONG" : "");
out:
    free(flag);
    free(v);
    return st;
}

fb_status fb_runner_report_trial_values(struct fb_runner *r, const struct fb_bench *b,
                                        const struct fb_case *c, const struct measured *mine,
                                        const double *all, const double *tv, long long wrong,
                                        long iters)
{
    const struct fb_world *w = &r->s->world;
    size_t trials = (size_t)r->opt->trials;
    int *flag = calloc((size_t)w->size, sizeof *flag), *who = calloc(trials, sizeof *who);
    double *v = calloc(trials, sizeof *v);
    int nactive = 0, nodes;
    struct fb_row row;
    fb_status st = FB_OK;

    if (!flag || !who || !v) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    for (int k = 0; k < w->size; k++)
        nactive += flag[k] = fb_runner_is_active(c, k);
    nodes = fb_world_count_nodes(r->node_of, flag, w->size);
    for (size_t t = 0; t < trials; t++) {
        who[t] = -1;
        for (int k = 0; k < w->size; k++)
            if (flag[k] && (who[t] < 0 || all[(size_t)k * trials + t] >
                                              all[(size_t)who[t] * trials + t]))
                who[t] = k;
    }
    for (size_t i = 0; i < mine->nvalues && st == FB_OK; i++) {
        for (size_t t = 0; t < trials; t++)
            v[t] = who[t] < 0 ? 0.0 : tv[((size_t)who[t] * trials + t) * FB_MAX_VALUES + i];
        row_init(&row, r, b, c, nactive, nodes, iters);
        row_who(&row, r, c->active, c->pair ? c->peer : -1);
        row.wrong = wrong;
        st = emit(r, &row, mine->values[i].metric, mine->values[i].unit, v, trials);
    }
out:
    free(flag);
    free(who);
    free(v);
    return st;
}

void fb_runner_print_header(const struct fb_bench *b, const struct fb_options *o, int group,
                            int nodes, bool first)
{
    if (first) {
        fb_out("\n# %s: %s\n", b->name, b->summary);
        if (!(b->needs & FB_REPORTS_VALUES))
            fb_out("# sizes in bytes (K/M/G = 2^10/2^20/2^30); GB/s = 1e9 B/s; time per iteration, "
               "median [p05 p95] of %ld trials\n", o->trials);
    }
    if (group > 0)
        fb_out("# on ranks 0..%d (%d rank%s on %d node%s)\n", group - 1, group,
               group == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s");
}

void fb_runner_print_columns(enum fb_report kind, const char *transport)
{
    fb_out("# over %s\n", transport);
    switch (kind) {
    case FB_REPORT_COLLECTIVE:
        fb_out("# %-14s %5s %12s %10s %8s %5s %4s %7s %10s %10s %10s %9s %9s %6s\n", "case",
               "ranks", "size", "count", "type", "redop", "root", "iters", "time_us", "p05",
               "p95", "algbw", "busbw", "#wrong");
        break;
    case FB_REPORT_LATENCY:
        fb_out("# %-14s %5s %6s %10s %7s %10s %10s %10s %10s %6s\n", "case", "ranks", "rank",
               "size", "iters", "time_us", "p05", "p95", "latency_us", "wrong");
        break;
    case FB_REPORT_BANDWIDTH:
        fb_out("# %-14s %5s %6s %10s %7s %10s %10s %10s %9s %9s %6s\n", "case", "ranks", "rank",
               "size", "iters", "time_us", "p05", "p95", "GB/s", "per_rank", "wrong");
        break;
    case FB_REPORT_THROUGHPUT:
        fb_out("# %-14s %5s %6s %6s %7s %10s %10s %10s %10s %9s %6s\n", "case", "ranks", "rank",
               "batch", "iters", "time_us", "p05", "p95", "rate", "GB/s", "wrong");
        fb_out("# rate: images/s when the case counts images, else TFLOP/s, else GB/s\n");
        break;
    }
}

/* GPU telemetry's outputs at the end of each benchmark: rank 0 gathers every rank's samples,
 * rewrites telemetry.csv with them added and adds each rank's summary rows to results.csv. The
 * names and units of the fields (the CSV's columns, the rows' metrics) are defined here. */
#include "telemetry.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "csv.h"
#include "log.h"
#include "telemetry_impl.h"

const char *const fb_telemetry_field_names[FB_TELEMETRY_NFIELDS] = {
    "gpu_util_pct",  "mem_util_pct", "mem_used_bytes", "power_w",
    "sm_clock_mhz",  "mem_clock_mhz", "temp_c",       "throttle_reasons"};
const char *const fb_telemetry_field_units[FB_TELEMETRY_NFIELDS] = {"%",   "%",   "bytes", "W",
                                                        "MHz", "MHz", "C",     "mask"};

static void fmt_value(char *buf, size_t len, int field, double v)
{
    if (isnan(v))
        buf[0] = '\0';
    else if (field == FB_TELEMETRY_POWER)
        snprintf(buf, len, "%.3f", v);
    else
        snprintf(buf, len, "%.0f", v);
}

/* Rank 0: telemetry.csv rewritten atomically with this benchmark's samples added: the rows
 * already written are copied into the temporary, so a crash leaves the old file or the new,
 * whole. Memory stays bounded by one benchmark's samples. */
static fb_status write_csv(struct fb_telemetry *t, const char *dir, const char *bench)
{
    static const char *const head[] = {"time_s", "rank", "host", "gpu", "pci_bus_id", "bench"};
    struct fb_atomic_file af;
    char cells[6 + FB_TELEMETRY_NFIELDS][64];
    const char *fields[6 + FB_TELEMETRY_NFIELDS];
    fb_status st;
    FILE *old = NULL;
    int err = 0;

    if (snprintf(t->csv_path, sizeof t->csv_path, "%s/telemetry.csv", dir) >=
        (int)sizeof t->csv_path)
        return FB_ERR_IO;
    if ((st = fb_atomic_open(&af, t->csv_path)) != FB_OK)
        return st;
    if (t->csv_written && (old = fopen(t->csv_path, "r"))) {
        char chunk[65536];
        size_t got;
        while ((got = fread(chunk, 1, sizeof chunk, old)) > 0 && !err)
            err = fwrite(chunk, 1, got, af.f) != got;
        err |= ferror(old);
        fclose(old);
    } else {
        for (int i = 0; i < 6; i++)
            fields[i] = head[i];
        for (int f = 0; f < FB_TELEMETRY_NFIELDS; f++)
            fields[6 + f] = fb_telemetry_field_names[f];
        err = fb_csv_row(af.f, fields, 6 + FB_TELEMETRY_NFIELDS) != 0;
    }
    for (int k = 0; k < t->size && !err; k++) {
        const struct ident *id = &t->idents[k];
        for (int i = 0; i < t->counts[k] && !err; i++) {
            const struct fb_telemetry_sample *s = &t->recv[t->displs[k] + i];
            snprintf(cells[0], sizeof cells[0], "%.4f", s->t_s);
            snprintf(cells[1], sizeof cells[1], "%d", k);
            snprintf(cells[2], sizeof cells[2], "%s", id->host);
            if (id->gpu >= 0)
                snprintf(cells[3], sizeof cells[3], "%d", id->gpu);
            else
                cells[3][0] = '\0';
            snprintf(cells[4], sizeof cells[4], "%s", id->bus_id);
            snprintf(cells[5], sizeof cells[5], "%s", bench);
            for (int f = 0; f < FB_TELEMETRY_NFIELDS; f++)
                fmt_value(cells[6 + f], sizeof cells[6 + f], f, s->v[f]);
            for (int c = 0; c < 6 + FB_TELEMETRY_NFIELDS; c++)
                fields[c] = cells[c];
            err = fb_csv_row(af.f, fields, 6 + FB_TELEMETRY_NFIELDS) != 0;
        }
    }
    if (err) {
        fb_error("cannot write '%s': %s", af.tmp, strerror(errno));
        fb_atomic_abort(&af);
        return FB_ERR_IO;
    }
    if ((st = fb_atomic_commit(&af)) == FB_OK)
        t->csv_written = true;
    return st;
}

/* Rank 0: the rows of one rank's summary in results.csv. */
static fb_status add_rows(const struct fb_telemetry *t, struct fb_results *res, const char *bench,
                          int rank, const struct fb_telemetry_summary *sum)
{
    struct fb_row row;
    fb_status st = FB_OK;

    for (int f = 0; f < FB_TELEMETRY_NFIELDS && st == FB_OK; f++) {
        if (!sum->valid[f])
            continue; /* NVML gave no value: no row, rather than a row of zeros */
        memset(&row, 0, sizeof row);
        snprintf(row.bench, sizeof row.bench, "%s", bench);
        snprintf(row.kase, sizeof row.kase, "telemetry");
        snprintf(row.backend, sizeof row.backend, "%s", t->backend);
        snprintf(row.transport, sizeof row.transport, "nvml");
        row.nodes = row.ranks = 1;
        row.src = rank;
        row.dst = -1;
        row.batch = row.bytes = row.count = -1;
        row.wrong = -1;
        row.detail = true;
        snprintf(row.metric, sizeof row.metric, "%s", fb_telemetry_field_names[f]);
        snprintf(row.unit, sizeof row.unit, "%s", fb_telemetry_field_units[f]);
        if (f == FB_TELEMETRY_THROTTLE) {
            /* which reasons ever held, as one mask: one sample */
            double m = (double)sum->throttle_or;
            row.st = (struct fb_stats){.samples = 1, .median = m, .p05 = m, .p95 = m,
                                       .min = m, .max = m, .mean = m, .stddev = 0.0};
        } else {
            row.st = sum->st[f];
        }
        st = fb_results_add(res, &row);
    }
    return st;
}

void fb_telemetry_bench_end(struct fb_telemetry *t, struct fb_results *res)
{
    struct bench_rec rec;
    int mine;
    size_t total = 0;
    fb_status st = FB_OK;

    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->active = false;
    mine = (int)t->n;
    if (mine)
        memcpy(t->send, t->buf, (size_t)mine * sizeof *t->send);
    memset(&rec, 0, sizeof rec);
    snprintf(rec.name, sizeof rec.name, "%s", t->bench);
    rec.timed = t->timed && t->on_gpu;
    pthread_mutex_unlock(&t->mu);

    MPI_Gather(&mine, 1, MPI_INT, t->counts, 1, MPI_INT, 0, t->comm);
    if (t->rank == 0)
        for (int k = 0; k < t->size; k++) {
            t->displs[k] = k * FB_TELEMETRY_CAP;
            total += (size_t)t->counts[k];
        }
    MPI_Gatherv(t->send, mine, t->sample_type, t->recv, t->counts, t->displs, t->sample_type, 0,
                t->comm);
    if (t->rank != 0 || total == 0)
        return;

    if (!(rec.per_rank = calloc((size_t)t->size, sizeof *rec.per_rank)))
        st = FB_ERR_NOMEM;
    for (int k = 0; k < t->size && st == FB_OK; k++)
        if ((st = fb_telemetry_summarize(&t->recv[t->displs[k]], (size_t)t->counts[k],
                                         &rec.per_rank[k])) == FB_OK)
            st = add_rows(t, res, rec.name, k, &rec.per_rank[k]);
    if (st == FB_OK)
        st = fb_results_flush(res);
    if (st == FB_OK)
        st = write_csv(t, res->dir, rec.name);
    if (st == FB_OK)
        t->csv_samples += total;
    if (st == FB_OK && t->nbenches == t->cap_benches) {
        size_t cap = t->cap_benches ? 2 * t->cap_benches : 8;
        struct bench_rec *b = realloc(t->benches, cap * sizeof *b);
        if (b) {
            t->benches = b;
            t->cap_benches = cap;
        } else {
            st = FB_ERR_NOMEM;
        }
    }
    if (st != FB_OK) {
        fb_warn("telemetry of %s not fully recorded: %s", rec.name, fb_status_str(st));
        free(rec.per_rank);
        return;
    }
    t->benches[t->nbenches++] = rec;
}

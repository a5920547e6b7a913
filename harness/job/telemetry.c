/* GPU telemetry: the sampler thread, the gather at the end of each benchmark, telemetry.csv,
 * the summary rows of results.csv and the closing lines. NVML itself is in telemetry_nvml.c.
 * The sampler thread never calls MPI; only the main thread gathers. */
#define _GNU_SOURCE
#include "telemetry.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomic_file.h"
#include "clock.h"
#include "csv.h"
#include "log.h"
#include "telemetry_nvml.h"

const char *const fb_tel_field_names[FB_TEL_NFIELDS] = {
    "gpu_util_pct",  "mem_util_pct", "mem_used_bytes", "power_w",
    "sm_clock_mhz",  "mem_clock_mhz", "temp_c",       "throttle_reasons"};
const char *const fb_tel_field_units[FB_TEL_NFIELDS] = {"%",   "%",   "bytes", "W",
                                                        "MHz", "MHz", "C",     "mask"};

/* Below this mean GPU utilization a timed benchmark is WARNed about (the field's advice). */
static const double busy_target_pct = 90.0;

/* ---- pure parts ---- */

fb_status fb_telemetry_summarize(const struct fb_tel_sample *s, size_t n,
                                 struct fb_tel_summary *out)
{
    double *vals = malloc((n ? n : 1) * sizeof *vals);
    fb_status st = FB_OK;

    memset(out, 0, sizeof *out);
    if (!vals)
        return FB_ERR_NOMEM;
    out->samples = n;
    for (int f = 0; f < FB_TEL_NFIELDS; f++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!isnan(s[i].v[f]))
                vals[k++] = s[i].v[f];
        out->valid[f] = k;
        if (k && fb_stats_compute(vals, k, &out->st[f]) != 0) {
            st = FB_ERR_NOMEM;
            break;
        }
        if (f == FB_TEL_THROTTLE)
            for (size_t i = 0; i < k; i++) {
                out->throttle_or |= (unsigned long long)vals[i];
                out->throttle_valid = true;
            }
    }
    free(vals);
    return st;
}

void fb_telemetry_reasons(unsigned long long mask, bool with_idle, char *buf, size_t len)
{
    static const struct {
        unsigned long long bit;
        const char *name;
    } bits[] = {
        {FB_TEL_THR_GPU_IDLE, "gpu_idle"},
        {FB_TEL_THR_APP_CLOCKS, "app_clocks"},
        {FB_TEL_THR_SW_POWER_CAP, "sw_power_cap"},
        {FB_TEL_THR_HW_SLOWDOWN, "hw_slowdown"},
        {FB_TEL_THR_SYNC_BOOST, "sync_boost"},
        {FB_TEL_THR_SW_THERMAL, "sw_thermal"},
        {FB_TEL_THR_HW_THERMAL, "hw_thermal"},
        {FB_TEL_THR_HW_POWER_BRAKE, "hw_power_brake"},
        {FB_TEL_THR_DISPLAY_CLOCKS, "display_clocks"},
    };
    unsigned long long known = 0;
    size_t used = 0;

    if (len == 0)
        return;
    buf[0] = '\0';
    if (!with_idle)
        mask &= ~(unsigned long long)FB_TEL_THR_GPU_IDLE;
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        known |= bits[i].bit;
        if ((mask & bits[i].bit) && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                                     bits[i].name);
    }
    if ((mask & ~known) && used < len)
        used += (size_t)snprintf(buf + used, len - used, "%s0x%llx", used ? "," : "",
                                 mask & ~known);
    if (used == 0)
        snprintf(buf, len, "none");
}

bool fb_telemetry_line(const char *bench, const struct fb_tel_summary *per_rank, int nranks,
                       bool timed, char *line, size_t len, char *warn, size_t warnlen)
{
    double util_sum = 0.0, low_mean = INFINITY, peak_mem = -1.0, peak_power = -1.0;
    size_t util_n = 0, samples = 0;
    int ranks = 0, low_rank = -1, mem_rank = -1, power_rank = -1;
    unsigned long long reasons = 0;
    bool any_reasons = false;
    char util[96] = "GPU utilization n/a", mem[64] = "peak memory n/a",
         power[64] = "peak power n/a", thr[160] = "", names[128];

    if (warnlen)
        warn[0] = '\0';
    for (int k = 0; k < nranks; k++) {
        const struct fb_tel_summary *r = &per_rank[k];
        const struct fb_stats *u = &r->st[FB_TEL_GPU_UTIL];
        if (!r->samples)
            continue;
        ranks++;
        samples += r->samples;
        if (r->valid[FB_TEL_GPU_UTIL]) {
            util_sum += u->mean * (double)r->valid[FB_TEL_GPU_UTIL];
            util_n += r->valid[FB_TEL_GPU_UTIL];
            if (u->mean < low_mean) {
                low_mean = u->mean;
                low_rank = k;
            }
        }
        if (r->valid[FB_TEL_MEM_USED] && r->st[FB_TEL_MEM_USED].max > peak_mem) {
            peak_mem = r->st[FB_TEL_MEM_USED].max;
            mem_rank = k;
        }
        if (r->valid[FB_TEL_POWER] && r->st[FB_TEL_POWER].max > peak_power) {
            peak_power = r->st[FB_TEL_POWER].max;
            power_rank = k;
        }
        if (r->throttle_valid) {
            reasons |= r->throttle_or;
            any_reasons = true;
        }
    }
    if (!ranks)
        return false;
    if (util_n) {
        if (ranks > 1)
            snprintf(util, sizeof util, "GPU utilization mean %.1f%% (lowest: rank %d, %.1f%%)",
                     util_sum / (double)util_n, low_rank, low_mean);
        else
            snprintf(util, sizeof util, "GPU utilization mean %.1f%%", util_sum / (double)util_n);
    }
    if (mem_rank >= 0) {
        snprintf(mem, sizeof mem, "peak memory %.2f GiB (rank %d)", peak_mem / 1073741824.0,
                 mem_rank);
    }
    if (power_rank >= 0)
        snprintf(power, sizeof power, "peak power %.1f W (rank %d)", peak_power, power_rank);
    if (any_reasons) {
        fb_telemetry_reasons(reasons, false, names, sizeof names);
        snprintf(thr, sizeof thr, ", %s%s", strcmp(names, "none") == 0 ? "no throttling" :
                                            "throttled: ", strcmp(names, "none") == 0 ? "" : names);
    }
    snprintf(line, len, "telemetry %s: %d GPU%s, %zu samples: %s, %s, %s%s", bench, ranks,
             ranks == 1 ? "" : "s", samples, util, mem, power, thr);
    if (timed && util_n && low_mean < busy_target_pct && warnlen)
        snprintf(warn, warnlen,
                 "%s: mean GPU utilization %.1f%% on rank %d is under %.0f%%: the GPU waited "
                 "for the host, data or communication for part of the timed trials",
                 bench, low_mean, low_rank, busy_target_pct);
    return true;
}

size_t fb_telemetry_thin(struct fb_tel_sample *s, size_t n)
{
    for (size_t i = 0; 2 * i < n; i++)
        s[i] = s[2 * i];
    return (n + 1) / 2;
}

/* ---- the running part ---- */

/* One rank's identity, gathered once by rank 0 (fixed size: sent as bytes). */
struct ident {
    int ok;           /* this rank samples a GPU */
    int gpu;          /* NVML's index, -1 when unknown */
    char bus_id[32];  /* PCI bus id, "" when unknown */
    char host[64];
    char why[160];    /* why not, when !ok */
};

/* What rank 0 keeps of each benchmark for the closing lines. */
struct bench_rec {
    char name[24];
    bool timed;
    struct fb_tel_summary *per_rank; /* [size] */
};

struct fb_telemetry {
    MPI_Comm comm;
    int rank, size;
    const char *backend;
    bool on_gpu;          /* the benchmarks use the GPU (cuda backend): the WARN applies */
    double interval_s;
    double t0;            /* CLOCK_MONOTONIC seconds of time_s = 0 */
    struct fb_tel_nvml *nvml; /* NULL on a rank with no GPU to read */
    MPI_Datatype sample_type;

    /* shared with the sampler thread, under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool thread_running, stop, active, timed;
    char bench[24];
    unsigned long gen;    /* benchmarks begun: a read that straddles an end is dropped */
    struct fb_tel_sample *buf;
    size_t n;
    unsigned long ticks, stride;

    struct fb_tel_sample *send; /* this rank's samples of the benchmark, while gathering */

    /* rank 0 */
    struct ident *idents;
    struct fb_tel_sample *recv; /* size * FB_TEL_CAP */
    int *counts, *displs;
    struct bench_rec *benches;
    size_t nbenches, cap_benches;
    char csv_path[4200];
    bool csv_written;
    size_t csv_samples;
};

static struct timespec to_timespec(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}


/* The sampler: wakes on a fixed grid t0 + k * interval (a late wake-up skips the ticks it
 * missed rather than bunching samples), and while a benchmark runs reads the GPU on every
 * stride-th tick. NVML is read outside the lock so that a benchmark's end never waits on it. */
static void *sampler(void *arg)
{
    struct fb_telemetry *t = arg;
    unsigned long long k = 1;

    pthread_mutex_lock(&t->mu);
    while (!t->stop) {
        struct timespec due = to_timespec(t->t0 + (double)k * t->interval_s);
        /* 0 is a signal (stop) or a spurious wake-up: wait on; anything else is the due time */
        while (!t->stop && pthread_cond_timedwait(&t->cv, &t->mu, &due) == 0)
            ;
        if (t->stop)
            break;
        if (t->active && t->ticks++ % t->stride == 0) {
            struct fb_tel_sample s;
            unsigned long gen = t->gen;
            pthread_mutex_unlock(&t->mu);
            s.t_s = fb_clock_now_s() - t->t0;
            fb_tel_nvml_read(t->nvml, s.v);
            pthread_mutex_lock(&t->mu);
            if (t->active && t->gen == gen) {
                if (t->n == FB_TEL_CAP) {
                    /* full: every other sample goes, and from now on every other tick */
                    t->n = fb_telemetry_thin(t->buf, t->n);
                    t->stride *= 2;
                }
                t->buf[t->n++] = s;
            }
        }
        /* the next tick still ahead */
        double late = fb_clock_now_s() - t->t0;
        unsigned long long next = (unsigned long long)(late / t->interval_s) + 1;
        k = next > k + 1 ? next : k + 1;
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

static void release(struct fb_telemetry *t)
{
    if (!t)
        return;
    if (t->thread_running) {
        pthread_mutex_lock(&t->mu);
        t->stop = true;
        pthread_cond_signal(&t->cv);
        pthread_mutex_unlock(&t->mu);
        pthread_join(t->thread, NULL);
        t->thread_running = false;
    }
    fb_tel_nvml_close(t->nvml);
    if (t->sample_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&t->sample_type);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    for (size_t i = 0; i < t->nbenches; i++)
        free(t->benches[i].per_rank);
    free(t->benches);
    free(t->buf);
    free(t->send);
    free(t->idents);
    free(t->recv);
    free(t->counts);
    free(t->displs);
    free(t);
}

/* Rank 0: the note when some or all ranks have nothing to read. Returns how many can. */
static int note_missing(const struct fb_telemetry *t)
{
    int ok = 0, first = -1;

    for (int k = 0; k < t->size; k++) {
        if (t->idents[k].ok)
            ok++;
        else if (first < 0)
            first = k;
    }
    if (ok == 0)
        fb_info("telemetry: %s: no GPU telemetry", t->idents[0].why);
    else if (first >= 0)
        fb_info("telemetry: no GPU telemetry on %d of %d ranks (rank %d: %s)", t->size - ok,
                t->size, first, t->idents[first].why);
    return ok;
}

fb_status fb_telemetry_start(struct fb_telemetry **out, const struct fb_session *s,
                             long interval_ms)
{
    const struct fb_world *w = &s->world;
    struct fb_telemetry *t = NULL;
    struct ident me;
    bool missing;
    int any = 0, mine;
    fb_status st = FB_OK;

    *out = NULL;
    if (interval_ms <= 0)
        return FB_OK;
    memset(&me, 0, sizeof me);
    me.gpu = -1;
    snprintf(me.host, sizeof me.host, "%s", w->host);
    if (!(t = calloc(1, sizeof *t))) {
        st = FB_ERR_NOMEM;
        snprintf(me.why, sizeof me.why, "out of memory");
    } else {
        t->comm = w->comm;
        t->rank = w->rank;
        t->size = w->size;
        t->backend = s->be->name;
        t->on_gpu = s->be != &fb_backend_host;
        t->interval_s = (double)interval_ms / 1e3;
        t->sample_type = MPI_DATATYPE_NULL;
        pthread_mutex_init(&t->mu, NULL);
        {
            pthread_condattr_t ca;
            pthread_condattr_init(&ca);
            pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
            pthread_cond_init(&t->cv, &ca);
            pthread_condattr_destroy(&ca);
        }
        if ((t->nvml = fb_tel_nvml_open(&missing, me.why, sizeof me.why))) {
            /* cuda: the device this rank opened; host: none, so NVML's (local rank % count) */
            const char *bus = t->on_gpu ? s->dev.pci_bus_id : "";
            if (fb_tel_nvml_pick(t->nvml, bus, w->local_rank, &me.gpu, me.bus_id,
                                 sizeof me.bus_id, me.why, sizeof me.why))
                me.ok = 1;
            else {
                fb_tel_nvml_close(t->nvml);
                t->nvml = NULL;
            }
        }
        if (me.ok && (!(t->buf = malloc(FB_TEL_CAP * sizeof *t->buf)) ||
                      !(t->send = malloc(FB_TEL_CAP * sizeof *t->send))))
            st = FB_ERR_NOMEM;
        if (w->rank == 0 && !(t->idents = calloc((size_t)w->size, sizeof *t->idents)))
            st = FB_ERR_NOMEM;
    }
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto fail;
    MPI_Gather(&me, (int)sizeof me, MPI_BYTE, t->idents, (int)sizeof me, MPI_BYTE, 0, w->comm);
    mine = me.ok;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, w->comm);
    if (w->rank == 0)
        note_missing(t);
    if (!any)
        goto fail; /* nothing to read anywhere: off, quietly after the note */
    if (w->rank == 0) {
        snprintf(t->csv_path, sizeof t->csv_path, "(not written)");
        if (!(t->recv = malloc((size_t)w->size * FB_TEL_CAP * sizeof *t->recv)) ||
            !(t->counts = calloc((size_t)w->size, sizeof *t->counts)) ||
            !(t->displs = calloc((size_t)w->size, sizeof *t->displs)))
            st = FB_ERR_NOMEM;
    }
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto fail;
    MPI_Type_contiguous(1 + FB_TEL_NFIELDS, MPI_DOUBLE, &t->sample_type);
    MPI_Type_commit(&t->sample_type);
    /* One origin for the job's time_s: every rank takes it just after the same barrier. */
    MPI_Barrier(w->comm);
    t->t0 = fb_clock_now_s();
    t->stride = 1;
    if (me.ok) {
        if (pthread_create(&t->thread, NULL, sampler, t) == 0)
            t->thread_running = true;
        else
            fb_warn("telemetry: cannot start the sampler thread: no GPU telemetry on this rank");
    }
    *out = t;
    return FB_OK;
fail:
    if (st != FB_OK && w->rank == 0)
        fb_warn("telemetry: %s: no GPU telemetry", fb_status_str(st));
    release(t);
    return st;
}

void fb_telemetry_bench_begin(struct fb_telemetry *t, const char *bench, bool timed)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    snprintf(t->bench, sizeof t->bench, "%s", bench);
    t->timed = timed;
    t->active = true;
    t->gen++;
    t->n = 0;
    t->ticks = 0;
    t->stride = 1;
    pthread_mutex_unlock(&t->mu);
}

static void fmt_value(char *buf, size_t len, int field, double v)
{
    if (isnan(v))
        buf[0] = '\0';
    else if (field == FB_TEL_POWER)
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
    char cells[6 + FB_TEL_NFIELDS][64];
    const char *fields[6 + FB_TEL_NFIELDS];
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
        for (int f = 0; f < FB_TEL_NFIELDS; f++)
            fields[6 + f] = fb_tel_field_names[f];
        err = fb_csv_row(af.f, fields, 6 + FB_TEL_NFIELDS) != 0;
    }
    for (int k = 0; k < t->size && !err; k++) {
        const struct ident *id = &t->idents[k];
        for (int i = 0; i < t->counts[k] && !err; i++) {
            const struct fb_tel_sample *s = &t->recv[t->displs[k] + i];
            snprintf(cells[0], sizeof cells[0], "%.4f", s->t_s);
            snprintf(cells[1], sizeof cells[1], "%d", k);
            snprintf(cells[2], sizeof cells[2], "%s", id->host);
            if (id->gpu >= 0)
                snprintf(cells[3], sizeof cells[3], "%d", id->gpu);
            else
                cells[3][0] = '\0';
            snprintf(cells[4], sizeof cells[4], "%s", id->bus_id);
            snprintf(cells[5], sizeof cells[5], "%s", bench);
            for (int f = 0; f < FB_TEL_NFIELDS; f++)
                fmt_value(cells[6 + f], sizeof cells[6 + f], f, s->v[f]);
            for (int c = 0; c < 6 + FB_TEL_NFIELDS; c++)
                fields[c] = cells[c];
            err = fb_csv_row(af.f, fields, 6 + FB_TEL_NFIELDS) != 0;
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
                          int rank, const struct fb_tel_summary *sum)
{
    struct fb_row row;
    fb_status st = FB_OK;

    for (int f = 0; f < FB_TEL_NFIELDS && st == FB_OK; f++) {
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
        snprintf(row.metric, sizeof row.metric, "%s", fb_tel_field_names[f]);
        snprintf(row.unit, sizeof row.unit, "%s", fb_tel_field_units[f]);
        if (f == FB_TEL_THROTTLE) {
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
            t->displs[k] = k * FB_TEL_CAP;
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

void fb_telemetry_finish(struct fb_telemetry *t)
{
    char line[512], warn[320];

    if (!t)
        return;
    if (t->rank == 0 && t->nbenches) {
        fb_out("\ntelemetry: %s (%zu samples, every %.0f ms; what `nvidia-smi dmon` shows)\n",
               t->csv_path, t->csv_samples, t->interval_s * 1e3);
        for (size_t i = 0; i < t->nbenches; i++)
            if (fb_telemetry_line(t->benches[i].name, t->benches[i].per_rank, t->size,
                                  t->benches[i].timed, line, sizeof line, warn, sizeof warn)) {
                fb_out("  %s\n", line);
                if (warn[0])
                    fb_warn("%s", warn);
            }
    }
    release(t);
}

/* GPU telemetry's running part: start (which rank reads which GPU), the sampler thread, the
 * start of each benchmark, and the closing lines at the finish. NVML itself is in
 * telemetry_nvml.c, the pure summaries in telemetry_summary.c, the gather and the files at
 * each benchmark's end in telemetry_out.c. The sampler thread never calls MPI; only the main
 * thread gathers. */
#define _GNU_SOURCE
#include "telemetry.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "telemetry_impl.h"
#include "telemetry_nvml.h"

/* The sampler: wakes on a fixed grid t0 + k * interval (a late wake-up skips the ticks it
 * missed rather than bunching samples), and while a benchmark runs reads the GPU on every
 * stride-th tick. NVML is read outside the lock so that a benchmark's end never waits on it. */
static void *sampler(void *arg)
{
    struct fb_telemetry *t = arg;
    unsigned long long k = 1;

    pthread_mutex_lock(&t->mu);
    while (!t->stop) {
        struct timespec due = fb_clock_timespec(t->t0 + (double)k * t->interval_s);
        /* 0 is a signal (stop) or a spurious wake-up: wait on; anything else is the due time */
        while (!t->stop && pthread_cond_timedwait(&t->cv, &t->mu, &due) == 0)
            ;
        if (t->stop)
            break;
        if (t->active && t->ticks++ % t->stride == 0) {
            struct fb_telemetry_sample s;
            unsigned long gen = t->gen;
            pthread_mutex_unlock(&t->mu);
            s.t_s = fb_clock_now_s() - t->t0;
            fb_telemetry_nvml_read(t->nvml, s.v);
            pthread_mutex_lock(&t->mu);
            if (t->active && t->gen == gen) {
                if (t->n == FB_TELEMETRY_CAP) {
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
    fb_telemetry_nvml_close(t->nvml);
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
        t->on_gpu = !s->be->on_cpu;
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
        if ((t->nvml = fb_telemetry_nvml_open(&missing, me.why, sizeof me.why))) {
            /* cuda: the device this rank opened; host: none, so NVML's (local rank % count) */
            const char *bus = t->on_gpu ? s->dev.pci_bus_id : "";
            if (fb_telemetry_nvml_pick(t->nvml, bus, w->local_rank, &me.gpu, me.bus_id,
                                 sizeof me.bus_id, me.why, sizeof me.why))
                me.ok = 1;
            else {
                fb_telemetry_nvml_close(t->nvml);
                t->nvml = NULL;
            }
        }
        if (me.ok && (!(t->buf = malloc(FB_TELEMETRY_CAP * sizeof *t->buf)) ||
                      !(t->send = malloc(FB_TELEMETRY_CAP * sizeof *t->send))))
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
        if (!(t->recv = malloc((size_t)w->size * FB_TELEMETRY_CAP * sizeof *t->recv)) ||
            !(t->counts = calloc((size_t)w->size, sizeof *t->counts)) ||
            !(t->displs = calloc((size_t)w->size, sizeof *t->displs)))
            st = FB_ERR_NOMEM;
    }
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto fail;
    MPI_Type_contiguous(1 + FB_TELEMETRY_NFIELDS, MPI_DOUBLE, &t->sample_type);
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

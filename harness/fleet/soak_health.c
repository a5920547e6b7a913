/* soak's health counters on every node: each rank reads its own (sysfs once per node, by its
 * first rank; NVML for its GPU; its NCCL log's WARN lines), rank 0 gathers them after every
 * interval, writes health.csv with each counter's change and names what moved. */
#define _POSIX_C_SOURCE 200809L
#include "soak.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "csv.h"
#include "log.h"
#include "nccl_report.h"
#include "telemetry_nvml.h"
#include "watchdog.h"

static const char health_header[] =
    "interval,rank,host,source,device,counter,value,delta,max,finding\n";

/* The NCCL faults soak counts, as nccl-log's nccl_faults verdict names them (every event
 * fb_nccl_event_fault calls a fault), each a counter of source "nccl". */
static const struct {
    enum fb_nccl_event event;
    const char *counter;
} nccl_counters[] = {
    {FB_NCCL_EV_PORT_ERROR, "warn_port_error"},
    {FB_NCCL_EV_FATAL, "warn_fatal_event"},
    {FB_NCCL_EV_DEV_FAILED, "warn_device_failed"},
};

fb_status fb_soak_nccl_read(struct fb_soak_nccl *n, const char *path, int rank,
                            struct fb_health_set *set)
{
    char name[24], err[512];
    fb_status st;

    /* NCCL's wordings are known in one place: nccllog's classifier. Each interval reads only
     * what NCCL added since the last (a long soak's log grows without bound) */
    if ((st = fb_nccl_count_events_from(path, &n->offset, n->events, err, sizeof err)) != FB_OK) {
        if (st == FB_ERR_NOMEM)
            return st;
        if (!n->warned)
            fb_warn("soak: rank %d: %s; its NCCL fault lines are not counted", rank, err);
        n->warned = true;
        return FB_OK;
    }
    snprintf(name, sizeof name, "rank%d", rank);
    for (size_t i = 0; i < sizeof nccl_counters / sizeof nccl_counters[0] && st == FB_OK; i++)
        st = fb_health_add_count(set, "nccl", name, nccl_counters[i].counter,
                                 (uint64_t)n->events[nccl_counters[i].event], true);
    return st;
}

/* This rank's readings now. */
static fb_status read_mine(struct fb_soak_health *h, struct fb_health_set *set)
{
    const struct fb_world *w = &h->ctx->s->world;
    fb_status st = FB_OK;

    if (w->local_rank == 0)
        st = fb_health_sysfs_read(fb_health_sysfs_root(), set);
    if (st == FB_OK && h->nvml)
        st = fb_telemetry_nvml_health(h->nvml, h->gpu, set);
    if (st == FB_OK && h->ctx->nccl_log_path[0])
        st = fb_soak_nccl_read(&h->nccl, h->ctx->nccl_log_path, w->rank, set);
    return st;
}

static void number(char *buf, size_t len, double v)
{
    if (isnan(v))
        buf[0] = '\0';
    else
        snprintf(buf, len, "%.17g", v);
}

/* Rank 0: one rank's readings into health.csv, and the findings among them. */
static void judge_rank(struct fb_soak_health *h, int interval, int rank,
                       const struct fb_health_set *now)
{
    const struct fb_health_set *prev = &h->prev[rank];
    const char *host = h->hosts[rank];

    for (size_t i = 0; i < now->n; i++) {
        const struct fb_health_counter *c = &now->c[i];
        const struct fb_health_counter *was = interval > 0 ? fb_health_find(prev, c) : NULL;
        char v[32], d[48] = "", m[32], old[32] = "";
        /* a count compared exactly, as a 64-bit integer that may wrap (health.h) */
        bool wrapped = false;
        int how = was ? fb_health_change(was, c, d, sizeof d, &wrapped) : 0;
        /* a mask's bit coming on is a finding; one going off is the trouble ending */
        bool moved = c->judged && (c->is_mask ? how > 0 : how != 0);
        bool below = c->judged && fb_health_below_max(c);
        const char *fields[10];
        char iv[16], rk[16];

        fb_health_value_text(c, v, sizeof v);
        number(m, sizeof m, c->max);
        if (was)
            fb_health_value_text(was, old, sizeof old);
        snprintf(iv, sizeof iv, "%d", interval);
        snprintf(rk, sizeof rk, "%d", rank);
        fields[0] = iv, fields[1] = rk, fields[2] = host, fields[3] = c->source;
        fields[4] = c->device, fields[5] = c->counter, fields[6] = v, fields[7] = d;
        fields[8] = m, fields[9] = moved ? "moved" : below ? "below_max" : "";
        fb_csv_row(h->csv, fields, 10);
        if (moved && c->is_mask) {
            h->findings++;
            FB_SOAK_FINDING("rank %d on %s, interval %d: %s %s %s: %s (0x%" PRIx64 " -> 0x%" PRIx64
                            ")", rank, host, interval, c->source, c->device, c->counter, d,
                            was->count, c->count);
        } else if (moved) {
            h->findings++;
            FB_SOAK_FINDING("rank %d on %s, interval %d: %s %s %s %s by %s (%s -> %s%s)",
                            rank, host, interval, c->source, c->device, c->counter,
                            how > 0 ? "rose" : "fell", d[0] == '-' ? d + 1 : d, old, v,
                            wrapped ? ", past 2^64" : "");
        }
        /* a link below its maximum is named once, when it is first seen so */
        if (below && !(was && fb_health_below_max(was) && was->value == c->value)) {
            h->findings++;
            FB_SOAK_FINDING("rank %d on %s, interval %d: %s %s %s is %s, below its max %s",
                            rank, host, interval, c->source, c->device, c->counter, v, m);
        }
    }
}

/* Collective: every rank's readings to rank 0 (counts, then the readings as bytes). */
static fb_status gather(struct fb_soak_health *h, const struct fb_health_set *mine,
                        struct fb_health_set *all)
{
    const struct fb_world *w = &h->ctx->s->world;
    int n = (int)mine->n, *counts = NULL, *bytes = NULL, *displs = NULL, total = 0;
    struct fb_health_counter *buf = NULL;
    const int one = (int)sizeof *mine->c;
    fb_status st = FB_OK;

    if (w->rank == 0 && (!(counts = calloc((size_t)w->size, sizeof *counts)) ||
                         !(bytes = calloc((size_t)w->size, sizeof *bytes)) ||
                         !(displs = calloc((size_t)w->size, sizeof *displs))))
        st = FB_ERR_NOMEM;
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, w->comm);
    if (w->rank == 0) {
        for (int r = 0; r < w->size; r++) {
            bytes[r] = counts[r] * one;
            displs[r] = total * one;
            total += counts[r];
        }
        if (total && !(buf = malloc((size_t)total * sizeof *buf)))
            st = FB_ERR_NOMEM;
    }
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;
    MPI_Gatherv(mine->c, n * one, MPI_BYTE, buf, bytes, displs, MPI_BYTE, 0, w->comm);
    for (int r = 0; w->rank == 0 && r < w->size; r++) {
        all[r].n = all[r].cap = (size_t)counts[r];
        if (counts[r] && !(all[r].c = malloc((size_t)counts[r] * sizeof *buf))) {
            st = FB_ERR_NOMEM;
            break;
        }
        if (counts[r])
            memcpy(all[r].c, buf + displs[r] / one, (size_t)counts[r] * sizeof *buf);
    }
out:
    free(counts);
    free(bytes);
    free(displs);
    free(buf);
    return st;
}

fb_status fb_soak_health_interval(struct fb_soak_health *h, int interval)
{
    const struct fb_world *w = &h->ctx->s->world;
    struct fb_health_set mine = {0}, *all = NULL;
    fb_status st;

    fb_watchdog_phase("soak health, interval %d", interval);
    st = read_mine(h, &mine);
    if (w->rank == 0 && st == FB_OK && !(all = calloc((size_t)w->size, sizeof *all)))
        st = FB_ERR_NOMEM;
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;
    fb_watchdog_wait_begin();
    st = gather(h, &mine, all);
    fb_watchdog_wait_end();
    if (st != FB_OK || w->rank != 0)
        goto out;
    for (int r = 0; r < w->size; r++) {
        judge_rank(h, interval, r, &all[r]);
        fb_health_set_free(&h->prev[r]);
        h->prev[r] = all[r];
        memset(&all[r], 0, sizeof all[r]);
    }
    /* nothing is lost: each interval's rows are on disk before the next begins */
    if (fflush(h->csv) != 0 || fsync(fileno(h->csv)) != 0) {
        fb_error("cannot write %s/health.csv", h->ctx->res->dir);
        st = FB_ERR_IO;
    }
out:
    for (int r = 0; all && r < w->size; r++)
        fb_health_set_free(&all[r]);
    free(all);
    fb_health_set_free(&mine);
    return fb_world_agree(w, st);
}

/* This rank's GPU through NVML: the session's GPU by its bus id, else local rank % count (the
 * host backend, as telemetry picks). */
static void open_nvml(struct fb_soak_health *h)
{
    const struct fb_session *s = h->ctx->s;
    char why[256], bus[64];
    bool missing;
    int index;

    h->nvml = fb_telemetry_nvml_open(&missing, why, sizeof why);
    if (h->nvml && !fb_telemetry_nvml_pick(h->nvml, s->dev.pci_bus_id, s->world.local_rank,
                                           &index, bus, sizeof bus, why, sizeof why)) {
        fb_telemetry_nvml_close(h->nvml);
        h->nvml = NULL;
    }
    if (!h->nvml) {
        if (s->world.rank == 0)
            fb_info("soak: no NVML counters on rank 0 (%s)", why);
        return;
    }
    if (index >= 0)
        snprintf(h->gpu, sizeof h->gpu, "gpu%d", index);
    else
        snprintf(h->gpu, sizeof h->gpu, "%.39s", bus);
}

fb_status fb_soak_health_open(struct fb_soak_health *h, const struct fb_run_ctx *ctx,
                              const char (*hosts)[64])
{
    const struct fb_world *w = &ctx->s->world;
    char path[4300];
    fb_status st = FB_OK;

    memset(h, 0, sizeof *h);
    h->ctx = ctx;
    h->hosts = hosts;
    open_nvml(h);
    if (w->rank == 0) {
        snprintf(path, sizeof path, "%s/health.csv", ctx->res->dir);
        if (!(h->prev = calloc((size_t)w->size, sizeof *h->prev)))
            st = FB_ERR_NOMEM;
        else if (!(h->csv = fb_file_create(path)) || fputs(health_header, h->csv) == EOF) {
            fb_error("cannot write '%s'", path);
            st = FB_ERR_IO;
        }
        if (st == FB_OK)
            fb_info("soak: health counters from %s (FB_SYSFS_ROOT), NVML and NCCL's log",
                    fb_health_sysfs_root());
    }
    if ((st = fb_world_agree(w, st)) != FB_OK)
        return st;
    return fb_soak_health_interval(h, 0);
}

void fb_soak_health_close(struct fb_soak_health *h)
{
    if (h->prev)
        for (int r = 0; r < h->ctx->s->world.size; r++)
            fb_health_set_free(&h->prev[r]);
    free(h->prev);
    if (h->csv)
        fclose(h->csv);
    fb_telemetry_nvml_close(h->nvml);
    memset(h, 0, sizeof *h);
}

/* The timeline's recorder, its gathering and its Chrome-trace JSON (through cJSON). */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "atomic_file.h"
#include "log.h"
#include "overlap.h"

fb_status fb_trace_init(struct fb_trace *t, size_t cap)
{
    memset(t, 0, sizeof *t);
    if (!(t->spans = calloc(cap ? cap : 1, sizeof *t->spans)))
        return FB_ERR_NOMEM;
    t->cap = cap;
    return FB_OK;
}

void fb_trace_release(struct fb_trace *t)
{
    free(t->spans);
    memset(t, 0, sizeof *t);
}

void fb_trace_add(struct fb_trace *t, int track, int step, const char *name, double start_us,
                  double end_us)
{
    struct fb_span *s;

    if (t->n >= t->cap) {
        t->dropped++;
        return;
    }
    s = &t->spans[t->n++];
    s->start_us = start_us - t->origin_us;
    s->dur_us = end_us > start_us ? end_us - start_us : 0.0;
    s->rank = t->rank;
    s->track = track;
    s->step = step;
    snprintf(s->name, sizeof s->name, "%s", name);
}

fb_status fb_trace_gather(const struct fb_trace *t, MPI_Comm comm, struct fb_span **all,
                          size_t *nall)
{
    int rank, size, mine = (int)(t->n * sizeof *t->spans), *counts = NULL, *displs = NULL;
    long long total = 0;
    fb_status st = FB_OK;

    *all = NULL;
    *nall = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank == 0 && (!(counts = calloc((size_t)size, sizeof *counts)) ||
                      !(displs = calloc((size_t)size, sizeof *displs))))
        st = FB_ERR_NOMEM;
    /* every rank takes part in both calls whatever happened, so none is left waiting */
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
    if (rank == 0 && st == FB_OK) {
        for (int k = 0; k < size; k++) {
            displs[k] = (int)total;
            total += counts[k];
        }
        if (!(*all = malloc(total ? (size_t)total : 1)))
            st = FB_ERR_NOMEM;
    }
    MPI_Gatherv(t->spans, mine, MPI_BYTE, *all, counts, displs, MPI_BYTE, 0, comm);
    if (rank == 0 && st == FB_OK)
        *nall = (size_t)total / sizeof **all;
    free(counts);
    free(displs);
    return st;
}

void fb_trace_track_name(int rank, int track, char *buf, size_t len)
{
    static const char *const names[FB_TRACKS] = {
        [FB_TRACK_DATA] = "data", [FB_TRACK_COPY] = "copy stream",
        [FB_TRACK_COMPUTE] = "compute stream", [FB_TRACK_COMM] = "comm"};

    if (track == FB_TRACK_HOST)
        snprintf(buf, len, "rank %d host", rank);
    else
        snprintf(buf, len, "%s", track > 0 && track < FB_TRACKS ? names[track] : "?");
}

static cJSON *meta(const char *what, int pid, int tid, const char *name)
{
    cJSON *e = cJSON_CreateObject(), *args = cJSON_CreateObject();

    cJSON_AddStringToObject(e, "name", what);
    cJSON_AddStringToObject(e, "ph", "M");
    cJSON_AddNumberToObject(e, "pid", pid);
    cJSON_AddNumberToObject(e, "tid", tid);
    cJSON_AddStringToObject(args, "name", name);
    cJSON_AddItemToObject(e, "args", args);
    return e;
}

fb_status fb_trace_write(const char *path, const struct fb_span *spans, size_t n, int nranks)
{
    cJSON *root = cJSON_CreateObject(), *events = cJSON_CreateArray();
    char name[48], *text = NULL;
    fb_status st = FB_ERR_NOMEM;

    if (!root || !events)
        goto out;
    cJSON_AddItemToObject(root, "traceEvents", events);
    for (int r = 0; r < nranks; r++) {
        snprintf(name, sizeof name, "rank %d", r);
        cJSON_AddItemToArray(events, meta("process_name", r, 0, name));
        for (int k = 0; k < FB_TRACKS; k++) {
            fb_trace_track_name(r, k, name, sizeof name);
            cJSON_AddItemToArray(events, meta("thread_name", r, k, name));
        }
    }
    for (size_t i = 0; i < n; i++) {
        const struct fb_span *s = &spans[i];
        cJSON *e = cJSON_CreateObject(), *args = cJSON_CreateObject();
        if (!e || !args) {
            cJSON_Delete(e);
            cJSON_Delete(args);
            goto out;
        }
        cJSON_AddStringToObject(e, "name", s->name);
        cJSON_AddStringToObject(e, "cat", "step");
        cJSON_AddStringToObject(e, "ph", "X");
        /* Chrome traces count in microseconds; a tenth of one is plenty */
        cJSON_AddNumberToObject(e, "ts", (double)(long long)(s->start_us * 10.0) / 10.0);
        cJSON_AddNumberToObject(e, "dur", (double)(long long)(s->dur_us * 10.0) / 10.0);
        cJSON_AddNumberToObject(e, "pid", s->rank);
        cJSON_AddNumberToObject(e, "tid", s->track);
        cJSON_AddNumberToObject(args, "step", s->step);
        cJSON_AddItemToObject(e, "args", args);
        cJSON_AddItemToArray(events, e);
    }
    cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
    if (!(text = cJSON_PrintUnformatted(root)))
        goto out;
    st = fb_atomic_write(path, text, strlen(text));
out:
    if (st == FB_ERR_NOMEM)
        fb_error("no memory for the timeline '%s'", path);
    cJSON_free(text);
    cJSON_Delete(root);
    return st;
}

/* host-strict: the host backend with CUDA's rules enforced on a CPU, for tests. Streams and
 * events are handles (an id and a slot, never a pointer to free'd memory) owned by the case that
 * made them: a destroyed one, or another case's, is FB_ERR_STRICT with a line naming the
 * benchmark and the hook. Work enqueued on a stream is queued and runs, in order, only when the
 * stream is synchronized, or an event recorded after it is synchronized or waited for, so a
 * missing wait reads stale data. Device memory faults on a host access (backend_strict_mem.c).
 * The operations themselves are the host backend's, on the writable view. */
#define _GNU_SOURCE
#include "backend.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_fault.h"
#include "backend_strict.h"
#include "clock.h"
#include "log.h"

enum op_kind { OP_COPY, OP_FILL, OP_RECORD, OP_WAIT, OP_NORMALIZE, OP_SGD, OP_BUSY, OP_LAUNCH };

/* One queued operation; addresses are already the writable views. */
struct op {
    struct op *next;
    enum op_kind kind;
    union {
        struct { void *dst; const void *src; size_t bytes; enum fb_copy dir; } copy;
        struct { void *buf; size_t count; enum fb_dtype dtype; struct fb_pattern p; } fill;
        struct { uintptr_t ev; unsigned long seq; } mark; /* OP_RECORD and OP_WAIT */
        struct { float *dst; const unsigned char *src; size_t images, plane;
                 float mean[3], inv_std[3]; } norm;
        struct { float *w, *v; const void *g; enum fb_dtype gdtype; size_t n;
                 float lr, momentum, scale; } sgd;
        struct { double us; } busy;
        struct { fb_host_kernel fn; void *arg; } launch;
    } u;
};

/* A stream or an event. */
struct obj {
    uint32_t id; /* 0: a free slot */
    bool event;
    long owner;  /* the case that made it (fb_strict_scope_serial), 0: made outside a case */
    char owner_case[48];
    /* a stream: its queue, and the first error of its work (reported by the next sync) */
    struct op *head, *tail;
    fb_status err;
    /* an event: records enqueued and run, the stream of the last, and when it ran */
    unsigned long recorded, done;
    uintptr_t stream;
    double us;
};

static struct {
    pthread_mutex_t lock; /* recursive: running a wait runs another stream */
    struct obj *objs;
    size_t nobjs;
    uint32_t last_id;
} strict = {.lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP};

/* A handle is (id << 32) | (slot + 1): never NULL, and stale once its slot's id changes. */
static uintptr_t handle_of(size_t slot)
{
    return ((uintptr_t)strict.objs[slot].id << 32) | (slot + 1);
}

static const char *noun(bool event) { return event ? "event" : "stream"; }

/* The object behind a handle, checked: live, of the right kind, this case's (or made outside
 * any case). NULL with the line said. Lock held. */
static struct obj *lookup(uintptr_t h, bool event)
{
    size_t slot = (size_t)(h & 0xffffffffu) - 1;
    uint32_t id = (uint32_t)(h >> 32);
    long now = fb_strict_scope_serial();
    struct obj *o;

    if (!h || slot >= strict.nobjs || strict.objs[slot].id != id ||
        strict.objs[slot].event != event) {
        fb_error("strict: %s %s: %s %u used after destroy", fb_strict_scope_bench(),
                 fb_strict_scope_hook(), noun(event), id);
        return NULL;
    }
    o = &strict.objs[slot];
    if (o->owner && now && o->owner != now) {
        fb_error("strict: %s %s: %s %u of case %s used in case %s", fb_strict_scope_bench(),
                 fb_strict_scope_hook(), noun(event), id, o->owner_case, fb_strict_scope_case());
        return NULL;
    }
    return o;
}

static fb_status create(bool event, uintptr_t *out)
{
    size_t slot = strict.nobjs;
    struct obj *o;

    *out = 0;
    pthread_mutex_lock(&strict.lock);
    for (size_t i = 0; i < strict.nobjs && slot == strict.nobjs; i++)
        if (!strict.objs[i].id)
            slot = i;
    if (slot == strict.nobjs) {
        size_t n = strict.nobjs ? 2 * strict.nobjs : 64;
        struct obj *grown = realloc(strict.objs, n * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&strict.lock);
            return FB_ERR_NOMEM;
        }
        memset(grown + strict.nobjs, 0, (n - strict.nobjs) * sizeof *grown);
        strict.objs = grown;
        strict.nobjs = n;
    }
    o = &strict.objs[slot];
    memset(o, 0, sizeof *o);
    o->id = ++strict.last_id ? strict.last_id : ++strict.last_id;
    o->event = event;
    o->owner = fb_strict_scope_serial();
    snprintf(o->owner_case, sizeof o->owner_case, "%s", fb_strict_scope_case());
    *out = handle_of(slot);
    pthread_mutex_unlock(&strict.lock);
    return FB_OK;
}

static void drain_event(struct obj *e, unsigned long seq);

/* Runs one operation. Lock held. */
static fb_status run_op(struct op *op)
{
    struct obj *e;

    switch (op->kind) {
    case OP_COPY:
        memcpy(op->u.copy.dst, op->u.copy.src, op->u.copy.bytes);
        return FB_OK;
    case OP_FILL:
        fb_pattern_fill_host(op->u.fill.buf, op->u.fill.count, op->u.fill.dtype, op->u.fill.p);
        return FB_OK;
    case OP_RECORD:
        /* an event destroyed before its record ran: nothing to mark */
        e = &strict.objs[(op->u.mark.ev & 0xffffffffu) - 1];
        if (e->id == (uint32_t)(op->u.mark.ev >> 32) && e->done < op->u.mark.seq) {
            e->done = op->u.mark.seq;
            e->us = fb_clock_now_us();
        }
        return FB_OK;
    case OP_WAIT:
        e = &strict.objs[(op->u.mark.ev & 0xffffffffu) - 1];
        if (e->id == (uint32_t)(op->u.mark.ev >> 32))
            drain_event(e, op->u.mark.seq);
        return FB_OK;
    case OP_NORMALIZE:
        return fb_backend_host.normalize_u8(op->u.norm.dst, op->u.norm.src, op->u.norm.images,
                                            op->u.norm.plane, op->u.norm.mean,
                                            op->u.norm.inv_std, NULL);
    case OP_SGD:
        return fb_sgd_momentum_host(op->u.sgd.w, op->u.sgd.v, op->u.sgd.g, op->u.sgd.gdtype,
                                    op->u.sgd.n, op->u.sgd.lr, op->u.sgd.momentum,
                                    op->u.sgd.scale);
    case OP_BUSY:
        return fb_backend_host.busy_wait(op->u.busy.us, NULL);
    case OP_LAUNCH:
        return op->u.launch.fn(op->u.launch.arg);
    }
    return FB_ERR_INTERNAL;
}

/* Runs the first operation of stream s; false when its queue is empty. Lock held. */
static bool step(struct obj *s)
{
    struct op *op = s->head;
    fb_status st;

    if (!op)
        return false;
    s->head = op->next;
    if (!s->head)
        s->tail = NULL;
    st = run_op(op);
    if (st != FB_OK && s->err == FB_OK)
        s->err = st;
    if (op->kind == OP_LAUNCH)
        free(op->u.launch.arg);
    free(op);
    return true;
}

/* Runs e's stream until e's record number seq has run. Lock held. */
static void drain_event(struct obj *e, unsigned long seq)
{
    size_t slot = (size_t)(e->stream & 0xffffffffu) - 1;

    while (e->done < seq && e->stream && slot < strict.nobjs &&
           strict.objs[slot].id == (uint32_t)(e->stream >> 32) && step(&strict.objs[slot]))
        ;
}

static fb_status drain(struct obj *s)
{
    fb_status st;

    while (step(s))
        ;
    st = s->err;
    s->err = FB_OK;
    return st;
}

/* Appends a copy of *op to stream h's queue. */
static fb_status enqueue(struct fb_stream *h, const struct op *op)
{
    struct op *copy = malloc(sizeof *copy);
    struct obj *s;

    if (!copy)
        return FB_ERR_NOMEM;
    *copy = *op;
    copy->next = NULL;
    pthread_mutex_lock(&strict.lock);
    if (!(s = lookup((uintptr_t)h, false))) {
        pthread_mutex_unlock(&strict.lock);
        free(copy);
        return FB_ERR_STRICT;
    }
    if (s->tail)
        s->tail->next = copy;
    else
        s->head = copy;
    s->tail = copy;
    pthread_mutex_unlock(&strict.lock);
    return FB_OK;
}

static fb_status strict_open(int device, struct fb_device_info *info)
{
    fb_status st = fb_backend_host.open(device, info);

    if (st == FB_OK)
        st = fb_strict_mem_open();
    return st;
}

static void strict_close(void)
{
    size_t left = 0;

    pthread_mutex_lock(&strict.lock);
    for (size_t i = 0; i < strict.nobjs; i++) {
        if (!strict.objs[i].id)
            continue;
        left++;
        (void)drain(&strict.objs[i]);
    }
    free(strict.objs);
    strict.objs = NULL;
    strict.nobjs = 0;
    pthread_mutex_unlock(&strict.lock);
    if (left)
        fb_warn("strict: %zu stream(s) and event(s) never destroyed", left);
    fb_strict_mem_close();
    fb_backend_host.close();
}

static fb_status strict_alloc(enum fb_mem kind, size_t bytes, void **out)
{
    *out = NULL;
    if (kind != FB_MEM_DEVICE && kind != FB_MEM_SHARED_DEVICE)
        return fb_backend_host.alloc(kind, bytes, out); /* counts the fault point itself */
    if (fb_fault_hit(FB_FAULT_ALLOC))
        return FB_ERR_NOMEM;
    return fb_strict_mem_alloc(kind, bytes, out, false);
}

static fb_status strict_probe_alloc(size_t bytes, void **out)
{
    return fb_strict_mem_alloc(FB_MEM_DEVICE, bytes, out, true);
}

/* A new stream or event handle; FB_FAULT's stream or event fault point first. */
static uintptr_t make(bool event, fb_status *st)
{
    uintptr_t h = 0;

    *st = fb_fault_hit(event ? FB_FAULT_EVENT : FB_FAULT_STREAM) ? FB_ERR_BACKEND
                                                                   : create(event, &h);
    return h;
}

static fb_status strict_stream_create(struct fb_stream **out)
{
    fb_status st;

    *out = (struct fb_stream *)make(false, &st);
    return st;
}

static fb_status strict_event_create(struct fb_event **out)
{
    fb_status st;

    *out = (struct fb_event *)make(true, &st);
    return st;
}

/* Destroying waits for the stream's work (cudaStreamDestroy lets it finish). Destroying a
 * stream or event twice is the use after destroy it is. */
static void destroy(uintptr_t h, bool event)
{
    struct obj *o;
    size_t slot = (size_t)(h & 0xffffffffu) - 1;

    if (!h)
        return;
    pthread_mutex_lock(&strict.lock);
    if (slot < strict.nobjs && strict.objs[slot].id == (uint32_t)(h >> 32) &&
        strict.objs[slot].event == event) {
        o = &strict.objs[slot];
        (void)drain(o);
        memset(o, 0, sizeof *o);
    } else {
        (void)lookup(h, event); /* says it */
    }
    pthread_mutex_unlock(&strict.lock);
}

static void strict_stream_destroy(struct fb_stream *s) { destroy((uintptr_t)s, false); }
static void strict_event_destroy(struct fb_event *e) { destroy((uintptr_t)e, true); }

static fb_status strict_stream_sync(struct fb_stream *h)
{
    struct obj *s;
    fb_status st = FB_ERR_STRICT;

    pthread_mutex_lock(&strict.lock);
    if ((s = lookup((uintptr_t)h, false)))
        st = drain(s);
    pthread_mutex_unlock(&strict.lock);
    return st;
}

static void *strict_stream_native(struct fb_stream *s)
{
    (void)s;
    return NULL;
}

static fb_status strict_copy(void *dst, const void *src, size_t bytes, enum fb_copy dir,
                             struct fb_stream *s)
{
    struct op op = {.kind = OP_COPY};

    if (fb_fault_hit(FB_FAULT_COPY))
        return FB_ERR_BACKEND;
    op.u.copy.dst = fb_device_view(dst);
    op.u.copy.src = fb_device_view(src);
    op.u.copy.bytes = bytes;
    op.u.copy.dir = dir;
    return enqueue(s, &op);
}

static fb_status strict_event_record(struct fb_event *eh, struct fb_stream *sh)
{
    struct obj *e, *s;
    struct op *op = calloc(1, sizeof *op);
    fb_status st = FB_ERR_STRICT;

    if (!op)
        return FB_ERR_NOMEM;
    pthread_mutex_lock(&strict.lock);
    if ((e = lookup((uintptr_t)eh, true)) && (s = lookup((uintptr_t)sh, false))) {
        op->kind = OP_RECORD;
        op->u.mark.ev = (uintptr_t)eh;
        op->u.mark.seq = ++e->recorded;
        e->stream = (uintptr_t)sh;
        if (s->tail)
            s->tail->next = op;
        else
            s->head = op;
        s->tail = op;
        op = NULL;
        st = FB_OK;
    }
    pthread_mutex_unlock(&strict.lock);
    free(op);
    return st;
}

/* CUDA answers cudaErrorNotReady for an event whose work has not run: here it is an error. */
static fb_status strict_event_elapsed_us(struct fb_event *a, struct fb_event *b, double *us)
{
    struct obj *ea, *eb;
    fb_status st = FB_ERR_STRICT;

    *us = 0.0;
    pthread_mutex_lock(&strict.lock);
    if ((ea = lookup((uintptr_t)a, true)) && (eb = lookup((uintptr_t)b, true))) {
        if (!ea->recorded || !eb->recorded || ea->done < ea->recorded ||
            eb->done < eb->recorded) {
            fb_error("strict: %s %s: elapsed time of event %u and %u asked before both ran "
                     "(synchronize their stream first)", fb_strict_scope_bench(),
                     fb_strict_scope_hook(), ea->id, eb->id);
        } else {
            *us = eb->us - ea->us;
            st = FB_OK;
        }
    }
    pthread_mutex_unlock(&strict.lock);
    return st;
}

static fb_status strict_event_sync(struct fb_event *eh)
{
    struct obj *e;
    fb_status st = FB_ERR_STRICT;

    pthread_mutex_lock(&strict.lock);
    if ((e = lookup((uintptr_t)eh, true))) {
        drain_event(e, e->recorded);
        st = FB_OK;
    }
    pthread_mutex_unlock(&strict.lock);
    return st;
}

/* Waits for the event's last record as of now (a later record is not waited for: CUDA's rule);
 * an event never recorded is no wait at all. */
static fb_status strict_stream_wait_event(struct fb_stream *s, struct fb_event *eh)
{
    struct op op = {.kind = OP_WAIT};
    struct obj *e;

    pthread_mutex_lock(&strict.lock);
    if (!(e = lookup((uintptr_t)eh, true))) {
        pthread_mutex_unlock(&strict.lock);
        return FB_ERR_STRICT;
    }
    op.u.mark.ev = (uintptr_t)eh;
    op.u.mark.seq = e->recorded;
    pthread_mutex_unlock(&strict.lock);
    return enqueue(s, &op);
}

static fb_status strict_fill(void *buf, size_t count, enum fb_dtype dtype, struct fb_pattern p,
                             struct fb_stream *s)
{
    struct op op = {.kind = OP_FILL};

    op.u.fill.buf = fb_device_view(buf);
    op.u.fill.count = count;
    op.u.fill.dtype = dtype;
    op.u.fill.p = p;
    return enqueue(s, &op);
}

/* Synchronous, like cuda's (a kernel, then the stream synchronized). */
static fb_status strict_check(const void *buf, size_t count, enum fb_dtype dtype,
                              struct fb_pattern p, size_t *wrong, struct fb_stream *s)
{
    fb_status st = strict_stream_sync(s);

    *wrong = st == FB_OK ? fb_pattern_check_host(fb_device_view(buf), count, dtype, p) : count;
    return st;
}

static fb_status strict_normalize_u8(float *dst, const unsigned char *src, size_t images,
                                     size_t plane, const float mean[3], const float inv_std[3],
                                     struct fb_stream *s)
{
    struct op op = {.kind = OP_NORMALIZE};

    op.u.norm.dst = fb_device_view(dst);
    op.u.norm.src = fb_device_view(src);
    op.u.norm.images = images;
    op.u.norm.plane = plane;
    memcpy(op.u.norm.mean, mean, sizeof op.u.norm.mean);
    memcpy(op.u.norm.inv_std, inv_std, sizeof op.u.norm.inv_std);
    return enqueue(s, &op);
}

static fb_status strict_busy_wait(double us, struct fb_stream *s)
{
    struct op op = {.kind = OP_BUSY};

    op.u.busy.us = us;
    return enqueue(s, &op);
}

static fb_status strict_sgd_momentum(float *w, float *v, const void *g, enum fb_dtype gdtype,
                                     size_t n, float lr, float momentum, float scale,
                                     struct fb_stream *s)
{
    struct op op = {.kind = OP_SGD};

    if (gdtype != FB_DTYPE_FLOAT32 && gdtype != FB_DTYPE_FLOAT16)
        return FB_ERR_USAGE;
    op.u.sgd.w = fb_device_view(w);
    op.u.sgd.v = fb_device_view(v);
    op.u.sgd.g = fb_device_view(g);
    op.u.sgd.gdtype = gdtype;
    op.u.sgd.n = n;
    op.u.sgd.lr = lr;
    op.u.sgd.momentum = momentum;
    op.u.sgd.scale = scale;
    return enqueue(s, &op);
}

static fb_status strict_host_launch(struct fb_stream *s, fb_host_kernel fn, const void *arg,
                                    size_t argbytes)
{
    struct op op = {.kind = OP_LAUNCH};
    fb_status st;

    if (!(op.u.launch.arg = malloc(argbytes ? argbytes : 1)))
        return FB_ERR_NOMEM;
    memcpy(op.u.launch.arg, arg, argbytes);
    op.u.launch.fn = fn;
    if ((st = enqueue(s, &op)) != FB_OK)
        free(op.u.launch.arg);
    return st;
}

/* What involves no stream and no device memory is the host's own. */
static int strict_device_count(char *why, size_t whylen)
{
    return fb_backend_host.device_count(why, whylen);
}

static void strict_versions(int *driver, int *runtime)
{
    fb_backend_host.versions(driver, runtime);
}

/* With a capacity, what a GPU of that memory would say; else the host's memory. */
static fb_status strict_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    size_t cap = fb_strict_mem_capacity(), used;

    if (!cap)
        return fb_backend_host.mem_info(free_bytes, total_bytes);
    used = fb_strict_mem_in_use();
    *free_bytes = used < cap ? cap - used : 0;
    *total_bytes = cap;
    return FB_OK;
}

static fb_status strict_thread_init(void) { return FB_OK; }

const struct fb_backend fb_backend_host_strict = {
    .name = "host-strict",
    .built = true,
    .on_cpu = true,
    .host_memory = false,
    .measures = false,
    .device_count = strict_device_count,
    .versions = strict_versions,
    .open = strict_open,
    .close = strict_close,
    .alloc = strict_alloc,
    .free = fb_strict_mem_free,
    .stream_create = strict_stream_create,
    .stream_destroy = strict_stream_destroy,
    .stream_sync = strict_stream_sync,
    .stream_native = strict_stream_native,
    .copy = strict_copy,
    .event_create = strict_event_create,
    .event_destroy = strict_event_destroy,
    .event_record = strict_event_record,
    .event_elapsed_us = strict_event_elapsed_us,
    .ipc_export = fb_strict_ipc_export,
    .ipc_open = fb_strict_ipc_open,
    .ipc_close = fb_strict_ipc_close,
    .fill = strict_fill,
    .check = strict_check,
    .mem_info = strict_mem_info,
    .probe_alloc = strict_probe_alloc,
    .set_capacity = fb_strict_mem_set_capacity,
    .capacity = fb_strict_mem_capacity,
    .event_sync = strict_event_sync,
    .stream_wait_event = strict_stream_wait_event,
    .normalize_u8 = strict_normalize_u8,
    .busy_wait = strict_busy_wait,
    .sgd_momentum = strict_sgd_momentum,
    .thread_init = strict_thread_init,
    .host_launch = strict_host_launch,
};

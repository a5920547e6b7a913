/* The bucket engine: gradient-ready elements counted against the model's tensor list, buckets
 * handed to a communication stream (stream-ordered collectives) or thread (blocking ones). */
#define _GNU_SOURCE
#include "overlap.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "half.h"
#include "mpi_half.h"
#include "log.h"
#include "nvtx.h"

struct fb_overlap {
    struct fb_overlap_config cfg;
    struct fb_bucket *buckets;
    size_t nbuckets;
    size_t *bucket_end;  /* elements before the end of bucket i (cumulative) */
    size_t *tensor_end;  /* elements before the end of tensor i (cumulative) */
    size_t esize;
    size_t ntensors, parameters; /* the model's, or the given buckets' */
    bool stream_ordered, threaded;
    struct fb_stream *comm;
    /* this step */
    size_t done;         /* parameters whose gradients are ready */
    size_t tensors;      /* tensors whose gradients are ready */
    size_t completed;    /* buckets whose tensors are all ready */
    struct fb_event **ready_of; /* per bucket: the event after which it is ready */
    /* stream-ordered: each bucket's all-reduce between two events on the comm stream */
    struct fb_event **ev_start, **ev_end, *bwd_done;
    /* blocking: host times of each bucket's all-reduce */
    double *t_start, *t_end;
    /* the communication thread; `handed` and `reduced` count buckets, under `lock` */
    pthread_t thread;
    bool started, stopping;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    size_t handed, reduced;
    fb_status error;
};

bool fb_overlap_possible(const struct fb_coll *coll, char *why, size_t whylen)
{
    int level = MPI_THREAD_SINGLE;

    if (coll->stream_ordered) {
        snprintf(why, whylen, "%s all-reduces are stream-ordered: a communication stream", coll->name);
        return true;
    }
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_SERIALIZED) {
        snprintf(why, whylen, "%s all-reduces block and MPI offers %s, below "
                 "MPI_THREAD_SERIALIZED: no communication thread", coll->name,
                 level == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE" : "MPI_THREAD_FUNNELED");
        return false;
    }
    snprintf(why, whylen, "%s all-reduces block: a communication thread", coll->name);
    return true;
}

size_t fb_overlap_nbuckets(const struct fb_overlap *ov) { return ov->nbuckets; }
bool fb_overlap_threaded(const struct fb_overlap *ov) { return ov->threaded; }
const struct fb_bucket *fb_overlap_bucket(const struct fb_overlap *ov, size_t i)
{
    return i < ov->nbuckets ? &ov->buckets[i] : NULL;
}

/* Bucket i's all-reduce on the comm stream (or, blocking, done on return). */
static fb_status reduce(struct fb_overlap *ov, size_t i)
{
    size_t off = (i ? ov->bucket_end[i - 1] : 0) * ov->esize;

    if ((long)i == ov->cfg.skip_bucket)
        return FB_OK;
    if (ov->cfg.issue)
        return ov->cfg.issue(ov->cfg.issue_arg, i, ov->comm);
    return ov->cfg.coll->allreduce(ov->cfg.comm, (const char *)ov->cfg.send + off,
                                   (char *)ov->cfg.recv + off, ov->buckets[i].elements,
                                   ov->cfg.dtype, FB_REDOP_SUM, ov->comm);
}

/* Stream-ordered: the comm stream waits for the bucket's gradients, then reduces them. */
static fb_status enqueue(struct fb_overlap *ov, size_t i)
{
    const struct fb_backend *be = ov->cfg.be;
    fb_status st;

    if ((st = be->stream_wait_event(ov->comm, ov->ready_of[i])) != FB_OK ||
        (st = be->event_record(ov->ev_start[i], ov->comm)) != FB_OK || (st = reduce(ov, i)) != FB_OK)
        return st;
    return be->event_record(ov->ev_end[i], ov->comm);
}

/* Blocking: waits on the host for the bucket's gradients, then reduces them, timed. */
static fb_status reduce_now(struct fb_overlap *ov, size_t i)
{
    fb_status st = ov->cfg.be->event_sync(ov->ready_of[i]);

    ov->t_start[i] = fb_clock_now_us();
    if (st == FB_OK)
        st = reduce(ov, i);
    ov->t_end[i] = fb_clock_now_us();
    return st;
}

/* The communication thread: buckets in order, as they are handed over. After a failure it
 * goes on with the next buckets, so the other ranks are not left waiting in an all-reduce. */
static void *comm_main(void *arg)
{
    struct fb_overlap *ov = arg;
    /* a failure here is reported by the first bucket's all-reduce */
    fb_status ready = ov->cfg.be->thread_init ? ov->cfg.be->thread_init() : FB_OK;

    pthread_mutex_lock(&ov->lock);
    for (;;) {
        size_t i;
        fb_status st;
        while (!ov->stopping && ov->reduced >= ov->handed)
            pthread_cond_wait(&ov->cond, &ov->lock);
        if (ov->stopping)
            break;
        i = ov->reduced;
        pthread_mutex_unlock(&ov->lock);
        fb_nvtx_push("allreduce");
        st = ready != FB_OK ? ready : reduce_now(ov, i);
        fb_nvtx_pop();
        pthread_mutex_lock(&ov->lock);
        if (st != FB_OK && ov->error == FB_OK)
            ov->error = st;
        ov->reduced++;
        pthread_cond_broadcast(&ov->cond);
    }
    pthread_mutex_unlock(&ov->lock);
    return NULL;
}

static void hand_over(struct fb_overlap *ov, size_t upto)
{
    pthread_mutex_lock(&ov->lock);
    ov->handed = upto;
    pthread_cond_broadcast(&ov->cond);
    pthread_mutex_unlock(&ov->lock);
}

void fb_overlap_free(struct fb_overlap *ov)
{
    const struct fb_backend *be;

    if (!ov)
        return;
    be = ov->cfg.be;
    if (ov->started) {
        pthread_mutex_lock(&ov->lock);
        ov->stopping = true;
        pthread_cond_broadcast(&ov->cond);
        pthread_mutex_unlock(&ov->lock);
        pthread_join(ov->thread, NULL);
        pthread_mutex_destroy(&ov->lock);
        pthread_cond_destroy(&ov->cond);
    }
    if (ov->comm)
        (void)be->stream_sync(ov->comm);
    for (size_t i = 0; i < ov->nbuckets; i++) {
        if (ov->ev_start)
            be->event_destroy(ov->ev_start[i]);
        if (ov->ev_end)
            be->event_destroy(ov->ev_end[i]);
    }
    be->event_destroy(ov->bwd_done);
    be->stream_destroy(ov->comm);
    free(ov->ev_start);
    free(ov->ev_end);
    free(ov->ready_of);
    free(ov->t_start);
    free(ov->t_end);
    free(ov->bucket_end);
    free(ov->tensor_end);
    free(ov->buckets);
    free(ov);
}

/* The buckets given by cfg->elements, one tensor each. */
static fb_status given_buckets(struct fb_overlap *ov, const struct fb_overlap_config *cfg)
{
    if (!cfg->issue || !cfg->elements || cfg->nelements == 0)
        return FB_ERR_INTERNAL;
    if (!(ov->buckets = calloc(cfg->nelements, sizeof *ov->buckets)))
        return FB_ERR_NOMEM;
    for (size_t i = 0; i < cfg->nelements; i++) {
        if (cfg->elements[i] == 0)
            return FB_ERR_INTERNAL;
        ov->buckets[i] = (struct fb_bucket){i, 1, cfg->elements[i]};
        ov->parameters += cfg->elements[i];
    }
    ov->nbuckets = ov->ntensors = cfg->nelements;
    return FB_OK;
}

fb_status fb_overlap_create(const struct fb_overlap_config *cfg, struct fb_overlap **out)
{
    struct fb_overlap *ov = calloc(1, sizeof *ov);
    const struct fb_densenet *m = cfg->model;
    const struct fb_backend *be = cfg->be;
    size_t sum = 0, nb;
    fb_status st = FB_ERR_NOMEM;

    *out = NULL;
    if (!ov)
        return st;
    ov->cfg = *cfg;
    ov->esize = fb_dtype_size(cfg->dtype);
    ov->stream_ordered = cfg->coll->stream_ordered;
    ov->threaded = cfg->overlap && !ov->stream_ordered;
    if (m) {
        st = fb_fusion_plan(m, ov->esize, cfg->threshold, &ov->buckets, &ov->nbuckets);
        ov->ntensors = m->ntensors;
        ov->parameters = m->parameters;
    } else {
        st = given_buckets(ov, cfg);
    }
    if (st != FB_OK)
        goto fail;
    nb = ov->nbuckets ? ov->nbuckets : 1;
    st = FB_ERR_NOMEM;
    if (!(ov->tensor_end = calloc(ov->ntensors ? ov->ntensors : 1, sizeof *ov->tensor_end)) ||
        !(ov->bucket_end = calloc(nb, sizeof *ov->bucket_end)) ||
        !(ov->ready_of = calloc(nb, sizeof *ov->ready_of)) ||
        !(ov->ev_start = calloc(nb, sizeof *ov->ev_start)) ||
        !(ov->ev_end = calloc(nb, sizeof *ov->ev_end)) ||
        !(ov->t_start = calloc(nb, sizeof *ov->t_start)) ||
        !(ov->t_end = calloc(nb, sizeof *ov->t_end)))
        goto fail;
    for (size_t i = 0; i < ov->ntensors; i++)
        ov->tensor_end[i] = sum += m ? m->tensors[i].elements : cfg->elements[i];
    sum = 0;
    for (size_t i = 0; i < ov->nbuckets; i++)
        ov->bucket_end[i] = sum += ov->buckets[i].elements;
    if ((st = be->stream_create(&ov->comm)) != FB_OK || (st = be->event_create(&ov->bwd_done)) != FB_OK)
        goto fail;
    for (size_t i = 0; ov->stream_ordered && i < ov->nbuckets; i++)
        if ((st = be->event_create(&ov->ev_start[i])) != FB_OK ||
            (st = be->event_create(&ov->ev_end[i])) != FB_OK)
            goto fail;
    if (!ov->stream_ordered && cfg->dtype == FB_DTYPE_FLOAT16) {
        /* MPI's half type and sum are made on first use, which must not be on the thread */
        if (fb_mpi_half_type() == MPI_DATATYPE_NULL || fb_mpi_half_sum() == MPI_OP_NULL) {
            st = FB_ERR_MPI;
            goto fail;
        }
    }
    if (ov->threaded) {
        pthread_mutex_init(&ov->lock, NULL);
        pthread_cond_init(&ov->cond, NULL);
        if (pthread_create(&ov->thread, NULL, comm_main, ov) != 0) {
            pthread_mutex_destroy(&ov->lock);
            pthread_cond_destroy(&ov->cond);
            st = FB_ERR_NOMEM;
            goto fail;
        }
        ov->started = true;
    }
    *out = ov;
    return FB_OK;
fail:
    fb_overlap_free(ov);
    return st;
}

fb_status fb_overlap_begin(struct fb_overlap *ov)
{
    ov->done = ov->tensors = ov->completed = 0;
    if (ov->threaded) {
        pthread_mutex_lock(&ov->lock);
        ov->handed = ov->reduced = 0;
        ov->error = FB_OK;
        pthread_mutex_unlock(&ov->lock);
    }
    return FB_OK;
}

fb_status fb_overlap_ready(struct fb_overlap *ov, size_t elements, struct fb_event *ready)
{
    const struct fb_densenet *m = ov->cfg.model;
    size_t first = ov->completed;
    fb_status st = FB_OK;

    ov->done += elements;
    while (ov->tensors < ov->ntensors && ov->tensor_end[ov->tensors] < ov->done)
        ov->tensors++;
    if (ov->tensors >= ov->ntensors || ov->tensor_end[ov->tensors] != ov->done) {
        size_t t = ov->tensors < ov->ntensors ? ov->tensors : ov->ntensors - 1;
        fb_error("overlap: gradients of %zu parameters ready, which ends inside tensor %zu "
                 "('%s'): the step's gradient-ready order does not match the model's tensors",
                 ov->done, t, m ? m->tensors[t].name : "a given bucket");
        return FB_ERR_INTERNAL;
    }
    ov->tensors++;
    while (ov->completed < ov->nbuckets && ov->bucket_end[ov->completed] <= ov->done)
        ov->ready_of[ov->completed++] = ready;
    if (!ov->cfg.overlap || ov->completed == first)
        return FB_OK;
    if (ov->threaded)
        hand_over(ov, ov->completed);
    else
        for (size_t i = first; i < ov->completed && st == FB_OK; i++)
            st = enqueue(ov, i);
    return st;
}

fb_status fb_overlap_finish(struct fb_overlap *ov)
{
    const struct fb_backend *be = ov->cfg.be;
    fb_status st = FB_OK;

    if (ov->done != ov->parameters || ov->completed != ov->nbuckets) {
        fb_error("overlap: the gradients of %zu of %zu parameters were made ready", ov->done,
                 ov->parameters);
        st = FB_ERR_INTERNAL;
        /* what was handed over still has to finish before anything is freed */
        if (!ov->threaded)
            return st;
    }
    if (ov->threaded) {
        hand_over(ov, ov->completed);
        pthread_mutex_lock(&ov->lock);
        while (ov->reduced < ov->handed)
            pthread_cond_wait(&ov->cond, &ov->lock);
        st = st != FB_OK ? st : ov->error;
        pthread_mutex_unlock(&ov->lock);
        return st;
    }
    if (!ov->cfg.overlap) {
        /* every bucket once backward is done, in the same order */
        if (ov->stream_ordered && (st = be->event_record(ov->bwd_done, ov->cfg.compute)) != FB_OK)
            return st;
        for (size_t i = 0; i < ov->nbuckets && st == FB_OK; i++) {
            if (ov->stream_ordered) {
                ov->ready_of[i] = ov->bwd_done;
                st = enqueue(ov, i);
            } else {
                st = reduce_now(ov, i);
            }
        }
    }
    if (st == FB_OK && ov->stream_ordered && ov->nbuckets > 0)
        st = be->stream_wait_event(ov->cfg.compute, ov->ev_end[ov->nbuckets - 1]);
    return st;
}

fb_status fb_overlap_anchor(const struct fb_backend *be, struct fb_event *anchor,
                            struct fb_stream *stream, double *anchor_us)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        double t0 = fb_clock_now_us();
        fb_status st;
        if ((st = be->event_record(anchor, stream)) != FB_OK ||
            (st = be->event_sync(anchor)) != FB_OK)
            return st;
        *anchor_us = t0;
        if (fb_clock_now_us() - t0 <= FB_ANCHOR_SLACK_US)
            break;
    }
    return FB_OK;
}

fb_status fb_overlap_spans(const struct fb_overlap *ov, struct fb_event *anchor, double anchor_us,
                           double *start, double *end)
{
    fb_status st = FB_OK;

    for (size_t i = 0; i < ov->nbuckets && st == FB_OK; i++) {
        double a = 0.0, b = 0.0;
        if (!ov->stream_ordered) {
            start[i] = ov->t_start[i];
            end[i] = ov->t_end[i];
            continue;
        }
        if ((st = ov->cfg.be->event_elapsed_us(anchor, ov->ev_start[i], &a)) == FB_OK &&
            (st = ov->cfg.be->event_elapsed_us(anchor, ov->ev_end[i], &b)) == FB_OK) {
            start[i] = anchor_us + a;
            end[i] = anchor_us + b;
        }
    }
    return st;
}

/* The ring of batches and its worker threads. One mutex guards the ring's bookkeeping; workers
 * sleep on `freed` until their slot is released, the consumer on `filled` until its batch is
 * in. Nobody spins, and nobody holds the lock while filling. */
#define _GNU_SOURCE
#include "input_pipeline.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>

struct slot {
    void *data;
    long ready;    /* the batch the slot holds, full and not yet taken; -1 when none */
    long released; /* the last batch released from this slot: batch released + depth may go in */
};

struct worker {
    struct fb_pipeline *p;
    int index;
    pthread_t thread;
    bool started;
};

struct fb_pipeline {
    struct fb_pipeline_config cfg;
    struct slot *slots;
    struct worker *workers;
    pthread_mutex_t lock;
    pthread_cond_t filled, freed;
    bool sync_made;
    long next_claim; /* the next batch a worker takes on */
    long next_take;  /* the next batch the consumer takes */
    long held;       /* taken and not released */
    bool stopping;
    bool gate_open;  /* workers may start new work */
    long failed_at;  /* the first batch a worker failed to build; LONG_MAX when none */
    fb_status error; /* its status */
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct fb_pipeline *p = w->p;
    int depth = p->cfg.depth;

    pthread_mutex_lock(&p->lock);
    while (!p->stopping) {
        long n;
        while (!p->gate_open && !p->stopping)
            pthread_cond_wait(&p->freed, &p->lock);
        if (p->stopping)
            break;
        n = p->next_claim++;
        struct slot *s = &p->slots[n % depth];
        fb_status st;

        /* The slot is ours once batch n - depth has left it. */
        while (!p->stopping && s->released != n - depth)
            pthread_cond_wait(&p->freed, &p->lock);
        if (p->stopping)
            break;
        pthread_mutex_unlock(&p->lock);
        st = p->cfg.fill(p->cfg.arg, p, w->index, n, s->data);
        pthread_mutex_lock(&p->lock);
        if (st != FB_OK) {
            /* The batches before it still arrive; the consumer gets the error in its place.
             * Its slot is never filled, so the workers soon wait until stop. */
            if (n < p->failed_at) {
                p->failed_at = n;
                p->error = st;
            }
        } else {
            s->ready = n;
        }
        pthread_cond_broadcast(&p->filled);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int fb_pipeline_cpus(void)
{
    cpu_set_t set;
    int n;

    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

fb_status fb_pipeline_start(const struct fb_pipeline_config *cfg, struct fb_pipeline **out)
{
    struct fb_pipeline *p;
    fb_status st = FB_ERR_NOMEM;

    *out = NULL;
    if (cfg->threads < 1 || cfg->depth < 1 || !cfg->fill || cfg->slot_bytes == 0)
        return FB_ERR_USAGE;
    if (!(p = calloc(1, sizeof *p)))
        return FB_ERR_NOMEM;
    p->cfg = *cfg;
    p->failed_at = LONG_MAX;
    p->gate_open = true;
    if (!(p->slots = calloc((size_t)cfg->depth, sizeof *p->slots)) ||
        !(p->workers = calloc((size_t)cfg->threads, sizeof *p->workers)))
        goto fail;
    if (pthread_mutex_init(&p->lock, NULL) != 0)
        goto fail;
    if (pthread_cond_init(&p->filled, NULL) != 0) {
        pthread_mutex_destroy(&p->lock);
        goto fail;
    }
    if (pthread_cond_init(&p->freed, NULL) != 0) {
        pthread_cond_destroy(&p->filled);
        pthread_mutex_destroy(&p->lock);
        goto fail;
    }
    p->sync_made = true;
    for (int i = 0; i < cfg->depth; i++) {
        p->slots[i].ready = -1;
        p->slots[i].released = i - cfg->depth;
        if ((st = cfg->be->alloc(cfg->kind, cfg->slot_bytes, &p->slots[i].data)) != FB_OK)
            goto fail;
    }
    for (int i = 0; i < cfg->threads; i++) {
        struct worker *w = &p->workers[i];
        w->p = p;
        w->index = i;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            st = FB_ERR_NOMEM;
            goto fail;
        }
        w->started = true;
    }
    *out = p;
    return FB_OK;
fail:
    fb_pipeline_stop(p);
    return st;
}

fb_status fb_pipeline_take(struct fb_pipeline *p, struct fb_batch *b)
{
    fb_status st = FB_OK;
    long n;
    struct slot *s;

    pthread_mutex_lock(&p->lock);
    n = p->next_take;
    s = &p->slots[n % p->cfg.depth];
    if (p->held >= p->cfg.depth) {
        st = FB_ERR_USAGE;
        goto out;
    }
    while (s->ready != n && n < p->failed_at)
        pthread_cond_wait(&p->filled, &p->lock);
    if (s->ready != n) {
        st = p->error;
        goto out;
    }
    s->ready = -1;
    p->next_take++;
    p->held++;
    b->seq = n;
    b->data = s->data;
    b->slot = (int)(n % p->cfg.depth);
out:
    pthread_mutex_unlock(&p->lock);
    return st;
}

void fb_pipeline_release(struct fb_pipeline *p, const struct fb_batch *b)
{
    pthread_mutex_lock(&p->lock);
    p->slots[b->slot].released = b->seq;
    p->held--;
    pthread_cond_broadcast(&p->freed);
    pthread_mutex_unlock(&p->lock);
}

void fb_pipeline_gate(struct fb_pipeline *p, bool open)
{
    pthread_mutex_lock(&p->lock);
    p->gate_open = open;
    if (open)
        pthread_cond_broadcast(&p->freed);
    pthread_mutex_unlock(&p->lock);
}

void fb_pipeline_gate_wait(struct fb_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    while (!p->gate_open && !p->stopping)
        pthread_cond_wait(&p->freed, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

void fb_pipeline_stop(struct fb_pipeline *p)
{
    if (!p)
        return;
    if (p->sync_made) {
        pthread_mutex_lock(&p->lock);
        p->stopping = true;
        pthread_cond_broadcast(&p->freed);
        pthread_cond_broadcast(&p->filled);
        pthread_mutex_unlock(&p->lock);
    }
    for (int i = 0; p->workers && i < p->cfg.threads; i++)
        if (p->workers[i].started)
            pthread_join(p->workers[i].thread, NULL);
    for (int i = 0; p->slots && i < p->cfg.depth; i++)
        p->cfg.be->free(p->cfg.kind, p->slots[i].data);
    if (p->sync_made) {
        pthread_cond_destroy(&p->freed);
        pthread_cond_destroy(&p->filled);
        pthread_mutex_destroy(&p->lock);
    }
    free(p->workers);
    free(p->slots);
    free(p);
}

/* The collectives table (coll.h): every library fabricbench can reduce with, NCCL first, so
 * that `auto` and `list` see them in one order. */
#include "coll.h"

#include <string.h>

#include "clock.h"

const struct fb_coll *const fb_colls[] = {&fb_coll_nccl, &fb_coll_mpi, NULL};

const struct fb_coll *fb_coll_find(const char *name)
{
    for (size_t i = 0; fb_colls[i]; i++)
        if (strcmp(fb_colls[i]->name, name) == 0)
            return fb_colls[i];
    return NULL;
}

/* This thread's span (coll.h) */
static _Thread_local struct fb_call_span {
    double begin_us, end_us; /* fb_clock_now_us() around the last stamped call */
    int calls;               /* calls made since fb_call_span_clear, stamped or not */
    bool partial;            /* one of them was not stamped whole */
} fb_call_span;

void fb_call_span_clear(void) { fb_call_span = (struct fb_call_span){0}; }

void fb_call_span_begin(void)
{
    fb_call_span.calls++;
    fb_call_span.begin_us = fb_clock_now_us();
}

void fb_call_span_end(void) { fb_call_span.end_us = fb_clock_now_us(); }

void fb_call_span_partial(void) { fb_call_span.partial = true; }

void fb_call_span_widen(double begin_us)
{
    if (begin_us < fb_call_span.begin_us)
        fb_call_span.begin_us = begin_us;
}

bool fb_call_span_take(double *us)
{
    if (fb_call_span.calls != 1 || fb_call_span.partial ||
        !(fb_call_span.end_us >= fb_call_span.begin_us))
        return false;
    *us = fb_call_span.end_us - fb_call_span.begin_us;
    return true;
}

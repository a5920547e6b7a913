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

/* This thread's span (coll.h); nothing is stamped unless armed, so no other figure pays for
 * the clock reads */
static _Thread_local struct span {
    bool armed;              /* between fb_call_span_clear and fb_call_span_take */
    double begin_us, end_us; /* fb_clock_now_us() around the last stamped call */
    int calls;               /* calls since the clear, stamped or not; counts to 2 at most */
    bool partial;            /* one of them was not stamped whole */
} this_span;

void fb_call_span_clear(void) { this_span = (struct span){.armed = true}; }

void fb_call_span_begin(void)
{
    if (!this_span.armed)
        return;
    this_span.calls += this_span.calls < 2;
    this_span.begin_us = fb_clock_now_us();
}

void fb_call_span_end(bool whole)
{
    if (!whole)
        this_span.partial = true;
    else if (this_span.armed)
        this_span.end_us = fb_clock_now_us();
}

void fb_call_span_partial(void) { this_span.partial = true; }

double fb_call_span_now(void) { return this_span.armed ? fb_clock_now_us() : 0.0; }

void fb_call_span_widen(double begin_us)
{
    if (this_span.armed && begin_us > 0.0 && begin_us < this_span.begin_us)
        this_span.begin_us = begin_us;
}

bool fb_call_span_take(double *us)
{
    bool whole = this_span.armed && this_span.calls == 1 && !this_span.partial &&
                 this_span.end_us >= this_span.begin_us;

    if (whole)
        *us = this_span.end_us - this_span.begin_us;
    this_span.armed = false;
    return whole;
}

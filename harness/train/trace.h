/* A bounded timeline of a training step's phases: spans (data wait, copy, forward, backward,
 * each bucket's all-reduce, update) per rank and track, on the host's monotonic clock aligned
 * across ranks after a barrier, gathered to rank 0 and written as a Chrome trace
 * (`{"traceEvents":[...]}`, Horovod's timeline format; opens in Perfetto and chrome://tracing). */
#ifndef FB_TRACE_H
#define FB_TRACE_H

#include <mpi.h>
#include <stddef.h>

#include "status.h"

/* The tracks of a rank: the Chrome trace's tid. */
enum fb_track {
    FB_TRACK_HOST,    /* "rank N host": the whole step, as the host thread runs it */
    FB_TRACK_DATA,    /* "data": waiting for the input pipeline's batch */
    FB_TRACK_COPY,    /* "copy stream": the batch's host-to-device copy */
    FB_TRACK_COMPUTE, /* "compute stream": forward, backward, waiting for comm, update */
    FB_TRACK_COMM,    /* "comm": each bucket's all-reduce (stream or thread) */
    FB_TRACKS
};

/* One span. Plain data, gathered across ranks as bytes. */
struct fb_span {
    double start_us, dur_us; /* microseconds from the rank's aligned origin */
    int rank, track, step;
    char name[28];
};

struct fb_trace {
    struct fb_span *spans;
    size_t n, cap;
    size_t dropped;   /* spans that did not fit */
    double origin_us; /* host monotonic time each rank takes as it leaves a barrier of the
                         ranks: spans of different ranks share one time axis (to the barrier's
                         release skew, microseconds on one node) */
    int rank;
};

/* Room for `cap` spans. */
fb_status fb_trace_init(struct fb_trace *t, size_t cap);
void fb_trace_release(struct fb_trace *t); /* accepts a zeroed one */

/* A span from start_us to end_us (host monotonic microseconds, fb_clock_now_us). One that no
 * longer fits is counted in `dropped`. */
void fb_trace_add(struct fb_trace *t, int track, int step, const char *name, double start_us,
                  double end_us);

/* Collective over comm: every rank's spans to rank 0, into a malloc'ed *all (rank 0; NULL
 * elsewhere). */
fb_status fb_trace_gather(const struct fb_trace *t, MPI_Comm comm, struct fb_span **all,
                          size_t *nall);

/* The name of a track as the trace shows it ("rank 3 host", "data", ...). */
void fb_trace_track_name(int rank, int track, char *buf, size_t len);

/* Writes spans of `nranks` ranks as a Chrome trace to `path`, atomically: "X" events with
 * pid = rank, tid = track, ts and dur in microseconds, and "M" metadata naming each process
 * ("rank N") and track. */
fb_status fb_trace_write(const char *path, const struct fb_span *spans, size_t n, int nranks);

#endif

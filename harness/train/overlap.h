/* Gradient all-reduce overlapped with the backward pass, as Horovod and PyTorch DDP run it
 * (and, with given buckets and an `issue` hook, any collectives: replay's mixes):
 * the gradients are grouped into fusion buckets (fb_fusion_plan, greedy in gradient-ready
 * order) and each bucket is all-reduced as soon as the last of its tensors is ready, while
 * backward goes on. A stream-ordered collective (NCCL) gets a communication stream that waits
 * on the compute stream's gradient-ready events; a blocking one (MPI) gets a communication
 * thread that reduces the buckets in order as they are handed over (Horovod's background
 * thread), so the main thread makes no MPI call while a step runs. The buffers reduced are a
 * flat gradient buffer of the model's real sizes, in gradient-ready order, out of place. */
#ifndef FB_OVERLAP_H
#define FB_OVERLAP_H

#include <stdbool.h>
#include <stddef.h>

#include "backend.h"
#include "coll.h"
#include "densenet.h"
#include "fusion.h"

struct fb_overlap_config {
    const struct fb_backend *be;
    const struct fb_coll *coll;
    struct fb_coll_comm *comm;      /* the group's collectives; borrowed */
    const struct fb_densenet *model; /* the tensors in gradient-ready order; borrowed */
    size_t threshold;               /* fusion threshold in bytes; FB_FUSION_OFF: per tensor */
    enum fb_dtype dtype;            /* on the wire: FB_DTYPE_FLOAT32 or FB_DTYPE_FLOAT16 */
    const void *send;               /* model->parameters elements of dtype (device memory) */
    void *recv;                     /* the sums land here (out of place) */
    struct fb_stream *compute;      /* the stream backward runs on; borrowed */
    bool overlap;                   /* false: every bucket once backward is done */
    /* Tests only: the bucket whose all-reduce is skipped (its sums never arrive, so a check
     * of recv must fail); -1 for none. */
    long skip_bucket;
    /* Instead of a model (model NULL, threshold unused): the buckets are given, bucket i of
     * elements[i] (> 0) parameters, each a "tensor" of its own, and its work is
     * issue(issue_arg, i, stream) instead of an all-reduce of send into recv (replay's mixed
     * collectives; send and recv unused). issue is called on the communication stream
     * (stream-ordered) or thread (blocking), in bucket order. */
    const size_t *elements;
    size_t nelements;
    fb_status (*issue)(void *arg, size_t bucket, struct fb_stream *stream);
    void *issue_arg;
};

struct fb_overlap;

/* Whether overlap can run with `coll` here: always for a stream-ordered collective; for a
 * blocking one only when MPI was initialised with at least MPI_THREAD_SERIALIZED (a
 * communication thread calls MPI). On false, *why says why. Local. */
bool fb_overlap_possible(const struct fb_coll *coll, char *why, size_t whylen);

/* Plans the buckets and makes the communication stream, events and (blocking collective,
 * overlap on) thread. cfg->overlap must be possible (fb_overlap_possible). Not collective.
 * *out is NULL on failure. */
fb_status fb_overlap_create(const struct fb_overlap_config *cfg, struct fb_overlap **out);
/* Stops the thread and frees everything. Call after fb_overlap_finish. Accepts NULL. */
void fb_overlap_free(struct fb_overlap *ov);

size_t fb_overlap_nbuckets(const struct fb_overlap *ov);
/* Whether buckets go to a communication thread (blocking collective with overlap). */
bool fb_overlap_threaded(const struct fb_overlap *ov);

/* Before a backward pass: nothing handed over yet. */
fb_status fb_overlap_begin(struct fb_overlap *ov);

/* During backward, the gradients of the next `elements` parameters in gradient-ready order are
 * ready once `ready` (an event recorded on the compute stream after their kernels) completes.
 * Every bucket they complete is handed over at once (overlap on). The elements must end
 * exactly at a tensor boundary of the model: FB_ERR_INTERNAL (with a message) when the
 * caller's order does not match the model's tensor list. Not collective; must be called in
 * the same order on every rank. */
fb_status fb_overlap_ready(struct fb_overlap *ov, size_t elements, struct fb_event *ready);

/* After backward is enqueued: hands over what is left (every bucket with overlap off), then
 * makes the compute stream wait for the last all-reduce (stream-ordered), or waits on the host
 * until every bucket is reduced (blocking). FB_ERR_INTERNAL when fewer than all parameters
 * were made ready; an all-reduce's failure otherwise. Collective in effect (every rank's
 * buckets meet in the all-reduces). */
fb_status fb_overlap_finish(struct fb_overlap *ov);

/* After the step's streams are synchronised: each bucket's all-reduce as host monotonic
 * microseconds (start[i], end[i]), for i < nbuckets. Stream-ordered buckets are timed by
 * events, placed on the host clock through `anchor` (an event recorded on any stream of the
 * step and completed) taken at host time anchor_us. */
fb_status fb_overlap_spans(const struct fb_overlap *ov, struct fb_event *anchor, double anchor_us,
                           double *start, double *end);

/* Records `anchor` on `stream` (idle: nothing left on it) and waits for it, setting *anchor_us
 * to the host time just before the record: the event cannot complete earlier, so a time placed
 * through it (an op's readiness) is never later than it was, and an op never reads as exposed
 * for less than it ran. A thread descheduled between the record and the clock would otherwise
 * shift every such time by the pause; so the anchor is retaken (at most 4 attempts) until the
 * record and its wait took at most FB_ANCHOR_SLACK_US. */
#define FB_ANCHOR_SLACK_US 50.0
fb_status fb_overlap_anchor(const struct fb_backend *be, struct fb_event *anchor,
                            struct fb_stream *stream, double *anchor_us);

/* The bucket i's tensors: [first, first + count) of the model, `elements` parameters. */
const struct fb_bucket *fb_overlap_bucket(const struct fb_overlap *ov, size_t i);

#endif

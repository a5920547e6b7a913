/* The collectives table: how benchmark buffers are reduced across ranks.
 * `mpi` runs MPI collectives on host buffers (and on device buffers directly when MPI is
 * CUDA-aware, else staged through pinned host memory); `nccl` runs NCCL on GPU buffers. */
#ifndef FB_COLL_H
#define FB_COLL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "backend.h"
#include "status.h"

enum fb_redop { FB_REDOP_SUM };

struct fb_coll_comm; /* a communicator of one collectives library; opaque */

struct fb_coll {
    const char *name;
    bool built;
    /* Whether allreduce is stream-ordered (NCCL: enqueued on the stream, returns at once; the
     * work waits for what the stream waits for) or blocking (MPI: done when it returns, so a
     * caller overlapping it with compute runs it on a thread of its own). */
    bool stream_ordered;
    /* Whether this library can reduce buffers of backend `be`; if not, why. */
    bool (*usable)(const struct fb_backend *be, char *why, size_t whylen);
    /* Collective over `comm`: creates a communicator for its ranks. `comm` is borrowed and must
     * outlive the result. */
    fb_status (*comm_create)(MPI_Comm comm, const struct fb_backend *be,
                             struct fb_coll_comm **out);
    void (*comm_destroy)(struct fb_coll_comm *c); /* accepts NULL */
    /* Collective over every rank of `parent`: a communicator of the ranks whose `sub` is not
     * MPI_COMM_NULL (sub comes from MPI_Comm_split over parent's ranks, members in parent's
     * order, and must outlive the result); *out is NULL on the other ranks. NCCL splits its
     * own communicator (ncclCommSplit) where it can. */
    fb_status (*comm_split)(struct fb_coll_comm *parent, MPI_Comm sub, struct fb_coll_comm **out);
    /* The transport label written to the CSV: "mpi", "mpi-cuda-aware", "mpi-staged", "nccl". */
    const char *(*transport)(const struct fb_coll_comm *c);
    /* Collective, stream-ordered where the library is (NCCL); MPI completes before returning.
     * send == recv means in place. Every call is made on every rank even when a step of this
     * rank before it failed (a copy, a stream wait), and the failure returned after, so no
     * rank is left waiting in a call that another never makes (mpi: not without its staging
     * buffer, whose allocation failing leaves the call unmade). */
    fb_status (*allreduce)(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                           enum fb_dtype dtype, enum fb_redop op, struct fb_stream *s);
    /* Point to point: sends `bytes` of `send` to rank `to` while receiving `bytes` into `recv`
     * from rank `from` (ranks of this communicator; either may be -1 for none). Stream-ordered
     * where the library is (NCCL); MPI completes before returning. */
    fb_status (*sendrecv)(struct fb_coll_comm *c, const void *send, int to, void *recv, int from,
                          size_t bytes, struct fb_stream *s);
    /* The number of ranks of the communicator. */
    int (*size)(const struct fb_coll_comm *c);

    /* The other collectives of nccl-tests, with the allreduce's rules: stream-ordered where the
     * library is (NCCL), done on return with MPI; counts in elements; a block is `count`
     * elements; ranks are this communicator's. In place is send == recv, where stated. */
    /* recv holds nranks blocks of `count` elements, block r from rank r. In place: this rank's
     * block is already at block `rank` of recv. */
    fb_status (*allgather)(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                           enum fb_dtype dtype, struct fb_stream *s);
    /* send holds nranks blocks of `count`; recv gets this rank's block reduced over the ranks.
     * In place: the input is recv's nranks blocks, the result lands in block `rank` of it (as
     * NCCL's in place does; the other blocks are then undefined). */
    fb_status (*reduce_scatter)(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                                enum fb_dtype dtype, enum fb_redop op, struct fb_stream *s);
    /* send and recv hold nranks blocks of `count`: block r of send goes to rank r, and block r
     * of recv comes from rank r. Out of place only: send == recv is FB_ERR_USAGE. */
    fb_status (*alltoall)(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                          enum fb_dtype dtype, struct fb_stream *s);
    /* `count` elements of root's send arrive in every rank's recv (send is read at root only;
     * in place: send == recv). */
    fb_status (*broadcast)(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                           enum fb_dtype dtype, int root, struct fb_stream *s);
    /* The element-wise reduction of every rank's send arrives in root's recv (recv is unused
     * elsewhere and may be NULL there; in place: send == recv). */
    fb_status (*reduce)(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                        enum fb_dtype dtype, enum fb_redop op, int root, struct fb_stream *s);
};

/* A collective call's own span, for --timing synced. A table whose call is complete when it
 * returns (MPI on buffers it reads itself: host memory, or device memory with a CUDA-aware MPI)
 * reads the monotonic clock just before and just after the library's call, as OSU reads
 * MPI_Wtime around it; the runner then times an iteration that is one such call by that span
 * rather than by its own reads around the benchmark's iteration, which would add this harness's
 * dispatch to the figure (the benchmark's iterate, the table's arguments, the watchdog's flag:
 * 0.3 us an iteration on the CI VM, 5% of a 16 KiB all-gather: docs/benchmarks/osu-compare.md).
 * NCCL stamps nothing (its calls return before the work is done); a staged call marks its span
 * partial (its copies are part of it); either way the runner's reads stand. Per thread, and
 * armed only from a clear to the next take: no other figure pays for the clock reads. */
void fb_call_span_clear(void); /* arms it, empty */
/* Around the library's call, in a table: begin, then end, `whole` when the call succeeded and
 * its result is in place on return (nothing else of it left out); partial marks a call whose
 * span is not its cost (a staged call, a failed copy). Work of the table's call after the
 * library's (an in-place reduce-scatter's copy of its result into block `rank`) is in the span
 * by ending it again after that work. */
void fb_call_span_begin(void);
void fb_call_span_end(bool whole);
void fb_call_span_partial(void);
/* Work of the table's call before the library's (an out-of-place broadcast's copy at the root)
 * is in the span from begin_us, taken with fb_call_span_now: fb_clock_now_us() while armed, else
 * 0 without reading the clock. */
double fb_call_span_now(void);
void fb_call_span_widen(double begin_us);
/* The span of the one call since the clear, in microseconds: false where there were none, more
 * than one, or one not stamped whole. Disarms it. */
bool fb_call_span_take(double *us);

extern const struct fb_coll fb_coll_mpi;
extern const struct fb_coll fb_coll_nccl; /* a stub when built without NCCL */
extern const struct fb_coll *const fb_colls[];

const struct fb_coll *fb_coll_find(const char *name);

/* The NCCL library loaded at run time ($FB_NCCL_LIBRARY, else libnccl.so.2; loaded at the first
 * call of these, of `usable` or of comm_create, once per process): its version as
 * NCCL_VERSION_CODE (22809 = 2.28.9), 0 when not built or not loadable; its path as given to
 * dlopen, "" likewise; and why it is not there ("" when it is). */
int fb_nccl_version_code(void);
const char *fb_nccl_library_path(void);
const char *fb_nccl_missing_why(void);

/* Whether this MPI library accepts device pointers (Open MPI's MPIX_Query_cuda_support); the
 * reason is written in either case ("Open MPI built without CUDA support"). */
bool fb_mpi_cuda_aware(char *why, size_t whylen);

MPI_Datatype fb_dtype_mpi(enum fb_dtype dtype);

#endif

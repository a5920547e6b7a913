/* Status codes shared by every layer of fabricbench.
 * One table generates the enum and its messages, so a code can never lack text. Functions
 * that can fail return fb_status; nothing below main() calls exit(). */
#ifndef FB_STATUS_H
#define FB_STATUS_H

/* Each status: its code, its severity (fb_status_severity: which status wins when the ranks
 * agree, docs/timeouts.md) and its message. The order of the codes decides only between two
 * statuses of one severity (the later code wins), never across severities. */
#define FB_STATUS_TABLE(X)                                                                \
    X(FB_OK, FB_SEV_OK, "success")                                                        \
    X(FB_ERR_USAGE, FB_SEV_FAILED, "invalid usage")                                       \
    X(FB_ERR_NOMEM, FB_SEV_RESOURCE, "out of memory")                                     \
    X(FB_ERR_IO, FB_SEV_RESOURCE, "input/output error")                                   \
    X(FB_ERR_NO_DEVICE, FB_SEV_RESOURCE, "no GPU visible")                                \
    X(FB_ERR_NOT_BUILT, FB_SEV_FAILED, "support not built into this binary")              \
    X(FB_ERR_UNSUPPORTED, FB_SEV_WAIVED, "not supported here")                            \
    X(FB_ERR_BACKEND, FB_SEV_FAILED, "device backend error")                              \
    X(FB_ERR_MPI, FB_SEV_TRANSPORT, "MPI error")                                          \
    X(FB_ERR_NCCL, FB_SEV_TRANSPORT, "NCCL error")                                        \
    X(FB_ERR_VERIFY, FB_SEV_FAILED, "verification failed")                                \
    X(FB_ERR_OVERSUBSCRIBED, FB_SEV_FAILED, "more ranks than GPUs on a node")             \
    X(FB_ERR_INTERNAL, FB_SEV_RESOURCE, "internal error")                                 \
    X(FB_ERR_STRICT, FB_SEV_FAILED, "a rule of CUDA broken (host-strict)")                \
    X(FB_ERR_TIMEOUT, FB_SEV_TIMEOUT, "timed out (--timeout)")                            \
    X(FB_ERR_INTERRUPTED, FB_SEV_INTERRUPTED, "interrupted (SIGINT or SIGTERM)")           \
    X(FB_ERR_PEER, FB_SEV_ECHO, "a partner rank failed")

/* How bad a status is, lowest first. When ranks disagree the most severe wins (then the later
 * code, then the lowest rank): a point one rank cannot measure (waived) never hides another rank's
 * failure; a rank that only learnt of its partner's failure (PEER) yields to any failure, so the
 * partner is the one named; a transport error, often only the echo of a peer's failure, yields
 * to the peer's own cause; a rank short of memory, storage or its GPU is the root cause of the others' failures; a
 * timeout and a signal stop every rank whatever else was seen. */
enum fb_severity {
    FB_SEV_OK,          /* success */
    FB_SEV_WAIVED,      /* UNSUPPORTED: the point is skipped with a reason, the run goes on */
    FB_SEV_ECHO,        /* PEER: a partner's failure, told to this rank */
    FB_SEV_TRANSPORT,   /* MPI, NCCL */
    FB_SEV_FAILED,      /* USAGE, NOT_BUILT, BACKEND, VERIFY, OVERSUBSCRIBED */
    FB_SEV_RESOURCE,    /* NOMEM, IO, NO_DEVICE, INTERNAL */
    FB_SEV_TIMEOUT,     /* TIMEOUT */
    FB_SEV_INTERRUPTED, /* INTERRUPTED */
    FB_SEV_COUNT
};

#define FB_STATUS_ENUM_ITEM(code, sev, text) code,
typedef enum { FB_STATUS_TABLE(FB_STATUS_ENUM_ITEM) FB_STATUS_COUNT } fb_status;
#undef FB_STATUS_ENUM_ITEM

/* The message for a status; never NULL. */
const char *fb_status_str(fb_status st);

/* The severity of a status (FB_STATUS_TABLE); FB_SEV_RESOURCE for a value outside the enum. */
enum fb_severity fb_status_severity(fb_status st);

/* Process exit code for a status: 0 success, 2 bad usage/input, 3 timed out, 4 interrupted,
 * 1 anything else. Timeouts and signals are the most severe statuses, so fb_world_agree makes
 * every rank stop on them. */
int fb_status_exit_code(fb_status st);

#endif

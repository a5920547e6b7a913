/* Status codes shared by every layer of fabricbench.
 * One table generates the enum and its messages, so a code can never lack text. Functions
 * that can fail return fb_status; nothing below main() calls exit(). */
#ifndef FB_STATUS_H
#define FB_STATUS_H

#define FB_STATUS_TABLE(X)                                                        \
    X(FB_OK, "success")                                                           \
    X(FB_ERR_USAGE, "invalid usage")                                              \
    X(FB_ERR_NOMEM, "out of memory")                                              \
    X(FB_ERR_IO, "input/output error")                                            \
    X(FB_ERR_NO_DEVICE, "no GPU visible")                                         \
    X(FB_ERR_NOT_BUILT, "support not built into this binary")                     \
    X(FB_ERR_UNSUPPORTED, "not supported here")                                   \
    X(FB_ERR_BACKEND, "device backend error")                                     \
    X(FB_ERR_MPI, "MPI error")                                                    \
    X(FB_ERR_NCCL, "NCCL error")                                                  \
    X(FB_ERR_VERIFY, "verification failed")                                       \
    X(FB_ERR_OVERSUBSCRIBED, "more ranks than GPUs on a node")                    \
    X(FB_ERR_INTERNAL, "internal error")                                          \
    X(FB_ERR_STRICT, "a rule of CUDA broken (host-strict)")                       \
    X(FB_ERR_TIMEOUT, "timed out (--timeout)")                                    \
    X(FB_ERR_INTERRUPTED, "interrupted (SIGINT or SIGTERM)")

#define FB_STATUS_ENUM_ITEM(code, text) code,
typedef enum { FB_STATUS_TABLE(FB_STATUS_ENUM_ITEM) FB_STATUS_COUNT } fb_status;
#undef FB_STATUS_ENUM_ITEM

/* The message for a status; never NULL. */
const char *fb_status_str(fb_status st);

/* Process exit code for a status: 0 success, 2 bad usage/input, 3 timed out, 4 interrupted,
 * 1 anything else. The two last codes are the largest statuses, so fb_world_agree (the worst
 * status wins) makes every rank stop on them. */
int fb_status_exit_code(fb_status st);

#endif

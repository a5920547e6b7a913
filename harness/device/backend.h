/* The device-backend table: where benchmark buffers live and how they are copied and timed.
 * Three implementations: `cuda` (GPU memory, CUDA streams and events), `host` (device buffers
 * are host memory, copies are memcpy, events read the monotonic clock) and `host-strict` (the
 * host backend with CUDA's rules enforced: streams run their work only when waited for, device
 * memory faults on a host access; backend_strict*.c). Benchmarks and the runner use only this
 * table, never CUDA directly. One backend is open per process. */
#ifndef FB_BACKEND_H
#define FB_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "pattern.h"
#include "status.h"

enum fb_mem {
    FB_MEM_DEVICE,   /* GPU memory (host backend: page-touched host memory) */
    FB_MEM_PINNED,   /* page-locked host memory (host backend: mlock'ed when allowed) */
    FB_MEM_PAGEABLE, /* ordinary malloc'ed host memory */
    FB_MEM_SHARED_DEVICE, /* device memory other processes of the node can map (ipc_export) */
    FB_MEM_SHARED_PINNED, /* page-locked host memory other processes of the node can map */
};

/* A buffer as another process of the node can map it (a cudaIpcMemHandle_t, or a memfd). */
enum { FB_IPC_HANDLE_BYTES = 72 };
struct fb_ipc_handle {
    unsigned char bytes[FB_IPC_HANDLE_BYTES];
};

enum fb_copy { FB_COPY_H2D, FB_COPY_D2H, FB_COPY_D2D, FB_COPY_PEER };

struct fb_stream; /* an ordered queue of work; opaque per backend */
struct fb_event;  /* a point in a stream that can be timed */

struct fb_device_info {
    int index;            /* device ordinal opened, -1 on host */
    char name[128];       /* "NVIDIA H200" or "host memory (CPU model)" */
    char pci_bus_id[32];  /* "0000:3b:00.0", empty on host */
    size_t mem_bytes;     /* device memory, or host memory on host */
    int cc_major, cc_minor;
};

/* Host work that stands in for a kernel (backend.host_launch): reads and writes device memory
 * through fb_device_view. Returns a status, which the stream reports at its next sync. */
typedef fb_status (*fb_host_kernel)(void *arg);

struct fb_backend {
    const char *name;
    bool built; /* false for a stub compiled without its library */
    bool on_cpu; /* a CPU stands in for the GPU (host, host-strict): CPU-sized defaults */
    bool host_memory; /* device buffers are host memory any code may read (host only) */
    bool measures; /* false: its figures are not measurements (host-strict) */

    /* How many devices this process can see. On none, writes why ("CUDA driver not found").
     * Never fails hard: a missing driver is an answer, not an error. */
    int (*device_count)(char *why, size_t whylen);
    /* Driver and runtime versions as integers (CUDA: 13000 = 13.0), 0 when not applicable. */
    void (*versions)(int *driver, int *runtime);

    /* Visible device `device`'s PCI bus id ("0000:3b:00.0"), before any is opened, so that the
     * ranks of a node can tell which of them see the same GPUs (hw/gpu_pick.h). NULL where the
     * backend has no devices to tell apart. */
    fb_status (*device_bus)(int device, char *bus, size_t len);

    fb_status (*open)(int device, struct fb_device_info *info);
    void (*close)(void);

    fb_status (*alloc)(enum fb_mem kind, size_t bytes, void **out);
    void (*free)(enum fb_mem kind, void *ptr); /* accepts NULL */

    fb_status (*stream_create)(struct fb_stream **out);
    void (*stream_destroy)(struct fb_stream *s); /* accepts NULL */
    fb_status (*stream_sync)(struct fb_stream *s);
    void *(*stream_native)(struct fb_stream *s); /* cudaStream_t for NCCL; NULL on host */

    /* Stream-ordered copy of `bytes` bytes. On host the copy is done before returning. */
    fb_status (*copy)(void *dst, const void *src, size_t bytes, enum fb_copy dir,
                      struct fb_stream *s);

    fb_status (*event_create)(struct fb_event **out);
    void (*event_destroy)(struct fb_event *e); /* accepts NULL */
    fb_status (*event_record)(struct fb_event *e, struct fb_stream *s);
    /* Microseconds from a to b; both must have completed (sync the stream first). */
    fb_status (*event_elapsed_us)(struct fb_event *a, struct fb_event *b, double *us);

    /* Sharing buffers between the processes of a node (the CUDA IPC of NCCL's P2P/IPC
     * transport; memfd mappings on host). export: a handle for a buffer alloc'ed as
     * FB_MEM_SHARED_*; open: maps another process's handle into this one, usable with
     * copy(FB_COPY_PEER) (device) or as host memory (pinned); close: unmaps an opened one.
     * open prints nothing: a peer's memory that cannot be mapped here (no peer access between
     * two GPUs, /proc out of reach) is FB_ERR_BACKEND with the reason in why (whylen bytes),
     * and the caller waives the pair's point with a warning, not an error (FB_ERR_NOMEM too,
     * which stops). */
    fb_status (*ipc_export)(enum fb_mem kind, void *ptr, struct fb_ipc_handle *h);
    fb_status (*ipc_open)(enum fb_mem kind, const struct fb_ipc_handle *h, void **ptr, char *why,
                          size_t whylen);
    void (*ipc_close)(enum fb_mem kind, void *ptr); /* accepts NULL */

    /* Free and total device memory now (host: the kernel's MemAvailable and MemTotal). */
    fb_status (*mem_info)(size_t *free_bytes, size_t *total_bytes);
    /* Device memory that may not be there (memfit looks for the limit): as
     * alloc(FB_MEM_DEVICE), but running out is FB_ERR_NOMEM without a message. */
    fb_status (*probe_alloc)(size_t bytes, void **out);
    /* A device memory of `bytes` (host-strict alone; NULL elsewhere), set before the first
     * device allocation (the session sets it right after open): past it
     * alloc fails with FB_ERR_NOMEM as cudaMalloc would, naming the capacity; mem_info reports
     * it (free: what is not allocated). Address space only: no page exists until written. */
    fb_status (*set_capacity)(size_t bytes);
    /* The capacity set (0: none, or a backend whose memory is its own). */
    size_t (*capacity)(void);

    /* Stream-ordered fill of `count` elements of device memory with a pattern. */
    fb_status (*fill)(void *buf, size_t count, enum fb_dtype dtype, struct fb_pattern p,
                      struct fb_stream *s);
    /* Synchronous check of `count` device elements against a pattern; *wrong = mismatches. */
    fb_status (*check)(const void *buf, size_t count, enum fb_dtype dtype, struct fb_pattern p,
                       size_t *wrong, struct fb_stream *s);

    /* The input pipeline's device side. Waits on the host until the work before event e is
     * done (the host backend's work is always done). */
    fb_status (*event_sync)(struct fb_event *e);
    /* Stream-ordered: work queued on s after this waits for event e (recorded on another
     * stream): a copy stream hands batches to a compute stream this way. */
    fb_status (*stream_wait_event)(struct fb_stream *s, struct fb_event *e);
    /* Stream-ordered ToTensor + Normalize: `images` images of 3 planes of `plane` uint8 values
     * in device memory become floats, dst = (src / 255 - mean[c]) * inv_std[c]. */
    fb_status (*normalize_u8)(float *dst, const unsigned char *src, size_t images, size_t plane,
                              const float mean[3], const float inv_std[3], struct fb_stream *s);
    /* Stream-ordered: keeps the device busy for `us` microseconds (a spin kernel on cuda, a
     * busy loop on the monotonic clock on host): a consumer's compute at a known rate. */
    fb_status (*busy_wait)(double us, struct fb_stream *s);

    /* Stream-ordered optimizer update, SGD with momentum (PyTorch's torch.optim.SGD, no
     * dampening, no weight decay) over `n` fp32 weights w and their momentum v:
     * v = momentum * v + scale * g; w = w - lr * v. g is float32, or float16 as it comes off a
     * compressed all-reduce (FB_DTYPE_FLOAT16, widened per element); `scale` turns the
     * all-reduce's sum into the mean (1 / ranks). Memory-bound: reads w, v and g, writes w and
     * v. FB_ERR_USAGE for another gdtype. */
    fb_status (*sgd_momentum)(float *w, float *v, const void *g, enum fb_dtype gdtype, size_t n,
                              float lr, float momentum, float scale, struct fb_stream *s);

    /* Makes a thread the process started use the device `open` opened (CUDA's current device
     * is per thread: a new thread starts on device 0); nothing on host. Call it first thing in
     * a thread that uses streams or copies. */
    fb_status (*thread_init)(void);

    /* Stream-ordered host work standing in for a kernel (the host convolution engine): runs
     * fn(arg) after the work before it on s, `argbytes` of arg copied first (the caller's copy
     * may go at once). host runs it before returning; host-strict when s is waited for. NULL
     * where kernels are real (cuda). */
    fb_status (*host_launch)(struct fb_stream *s, fb_host_kernel fn, const void *arg,
                             size_t argbytes);
};

extern const struct fb_backend fb_backend_host;
extern const struct fb_backend fb_backend_cuda; /* a stub when built without CUDA */
extern const struct fb_backend fb_backend_host_strict;

/* What a run on a backend that does not measure (host-strict) says in env.json, on stdout and
 * in summary.md, where its headline would be. */
#define FB_STRICT_NOTE "host-strict: figures are not measurements"

/* Where host code standing in for a kernel (an fb_host_kernel) reads and writes the device
 * buffer at p: p itself, except under host-strict, whose device addresses fault on a host
 * access and have a second, writable view for the backend's own operations. Safe from any
 * thread. */
void *fb_device_view(const void *p);

/* What runs now, for host-strict's ownership of streams and events and its messages; the
 * runner says it, the other backends ignore it. scope_case: a case of a benchmark begins
 * (bench NULL: none runs); streams and events created from now belong to it. scope_hook: the
 * hook (or runner step) now running ("setup", "iterate", ...): a string literal. */
void fb_backend_scope_case(const char *bench, const char *kase);
void fb_backend_scope_hook(const char *hook);

/* Looks a backend up by name ("host", "host-strict", "cuda"); NULL when unknown. */
const struct fb_backend *fb_backend_find(const char *name);

/* The device memory capacity set on be (--device-memory), 0 when none. */
static inline size_t fb_backend_capacity(const struct fb_backend *be)
{
    return be->capacity ? be->capacity() : 0;
}

/* The list of backends, NULL-terminated, for `list` and help texts. */
extern const struct fb_backend *const fb_backends[];

/* Host-side fill and check of host memory; the host backend and staged paths use them.
 * The _from forms fill or check a window of the pattern: buf[k] holds the value of index
 * first + k (a buffer filled in pieces; the tests of indices past 2^32). */
void fb_pattern_fill_host(void *buf, size_t count, enum fb_dtype dtype, struct fb_pattern p);
size_t fb_pattern_check_host(const void *buf, size_t count, enum fb_dtype dtype,
                             struct fb_pattern p);
void fb_pattern_fill_host_from(void *buf, size_t first, size_t count, enum fb_dtype dtype,
                               struct fb_pattern p);
size_t fb_pattern_check_host_from(const void *buf, size_t first, size_t count,
                                  enum fb_dtype dtype, struct fb_pattern p);

/* The host loop of sgd_momentum (the host backend's op, and the reference of tests). */
fb_status fb_sgd_momentum_host(float *w, float *v, const void *g, enum fb_dtype gdtype, size_t n,
                               float lr, float momentum, float scale);

#endif

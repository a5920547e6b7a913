/* The CUDA backend: GPU memory, pinned host memory, streams and events through the CUDA runtime
 * (linked statically, so this binary starts on a machine without an NVIDIA driver and reports
 * "no GPU"). Fill and check run as kernels (kernels/pattern_kernels.cu). */
#include "backend.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern_kernels.h"
#include "optimizer_kernels.h"
#include "pipeline_kernels.h"
#include "log.h"
#include "watchdog.h"
#include "shm.h"

struct fb_stream {
    cudaStream_t s;
};

struct fb_event {
    cudaEvent_t e;
};

static fb_status cuda_fail(cudaError_t err, const char *what)
{
    fb_error("%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
    return err == cudaErrorMemoryAllocation ? FB_ERR_NOMEM : FB_ERR_BACKEND;
}

#define CUDA_TRY(call)                                                                   \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess)                                                         \
            return cuda_fail(err_, #call);                                               \
    } while (0)

static fb_status cuda_device_bus(int device, char *bus, size_t len)
{
    CUDA_TRY(cudaDeviceGetPCIBusId(bus, (int)len, device));
    return FB_OK;
}

static int cuda_device_count(char *why, size_t whylen)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);

    if (err == cudaSuccess && n > 0)
        return n;
    int driver = 0, runtime = 0;

    if (err == cudaErrorInsufficientDriver && cudaDriverGetVersion(&driver) == cudaSuccess &&
        driver > 0 && cudaRuntimeGetVersion(&runtime) == cudaSuccess) {
        /* a driver is there, too old for this runtime: not "no driver" (issue 29) */
        snprintf(why, whylen, "the NVIDIA driver supports CUDA %d.%d, older than this build's "
                 "CUDA %d.%d runtime: update the driver (%s)", driver / 1000,
                 driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, cudaGetErrorName(err));
    } else if (err == cudaErrorInsufficientDriver)
        snprintf(why, whylen, "no NVIDIA driver found (%s)", cudaGetErrorName(err));
    else if (err == cudaErrorNoDevice || (err == cudaSuccess && n == 0))
        snprintf(why, whylen, "the driver sees no GPU (check CUDA_VISIBLE_DEVICES)");
    else
        snprintf(why, whylen, "%s (%s)", cudaGetErrorString(err), cudaGetErrorName(err));
    (void)cudaGetLastError(); /* clear the sticky-free error so later calls start clean */
    return 0;
}

static void cuda_versions(int *driver, int *runtime)
{
    if (cudaDriverGetVersion(driver) != cudaSuccess)
        *driver = 0;
    if (cudaRuntimeGetVersion(runtime) != cudaSuccess)
        *runtime = 0;
}

/* The device open() chose: other threads of the process select it too (thread_init). */
static int opened_device;

static fb_status cuda_open(int device, struct fb_device_info *info)
{
    struct cudaDeviceProp prop;

    memset(info, 0, sizeof *info);
    CUDA_TRY(cudaSetDevice(device));
    opened_device = device;
    CUDA_TRY(cudaGetDeviceProperties(&prop, device));
    info->index = device;
    snprintf(info->name, sizeof info->name, "%.127s", prop.name);
    info->mem_bytes = prop.totalGlobalMem;
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    CUDA_TRY(cudaDeviceGetPCIBusId(info->pci_bus_id, (int)sizeof info->pci_bus_id, device));
    /* Create the context now, so its cost never lands in the first timed iteration. */
    CUDA_TRY(cudaFree(NULL));
    return FB_OK;
}

static void cuda_close(void) { (void)cudaDeviceSynchronize(); }

/* Shared pinned memory: a memfd mapping that every process registers with CUDA itself. */
static fb_status shared_pinned_alloc(size_t bytes, void **out)
{
    cudaError_t err;
    fb_status st = fb_shm_alloc(bytes, out);

    if (st != FB_OK)
        return st;
    if ((err = cudaHostRegister(*out, bytes ? bytes : 1, cudaHostRegisterPortable)) != cudaSuccess) {
        fb_shm_free(*out);
        *out = NULL;
        return cuda_fail(err, "cudaHostRegister");
    }
    return FB_OK;
}

static fb_status cuda_alloc(enum fb_mem kind, size_t bytes, void **out)
{
    *out = NULL;
    switch (kind) {
    case FB_MEM_DEVICE: CUDA_TRY(cudaMalloc(out, bytes ? bytes : 1)); break;
    case FB_MEM_PINNED: CUDA_TRY(cudaMallocHost(out, bytes ? bytes : 1)); break;
    case FB_MEM_PAGEABLE:
        if (!(*out = malloc(bytes ? bytes : 1)))
            return FB_ERR_NOMEM;
        break;
    case FB_MEM_SHARED_DEVICE: CUDA_TRY(cudaMalloc(out, bytes ? bytes : 1)); break;
    case FB_MEM_SHARED_PINNED: return shared_pinned_alloc(bytes, out);
    }
    return FB_OK;
}

static void cuda_free(enum fb_mem kind, void *ptr)
{
    if (!ptr)
        return;
    switch (kind) {
    case FB_MEM_DEVICE: (void)cudaFree(ptr); break;
    case FB_MEM_PINNED: (void)cudaFreeHost(ptr); break;
    case FB_MEM_PAGEABLE: free(ptr); break;
    case FB_MEM_SHARED_DEVICE: (void)cudaFree(ptr); break;
    case FB_MEM_SHARED_PINNED:
        (void)cudaHostUnregister(ptr);
        fb_shm_free(ptr);
        break;
    }
}

static fb_status cuda_ipc_export(enum fb_mem kind, void *ptr, struct fb_ipc_handle *h)
{
    struct fb_shm_handle sh;
    cudaIpcMemHandle_t mh;
    fb_status st;

    memset(h, 0, sizeof *h);
    if (kind == FB_MEM_SHARED_PINNED) {
        if ((st = fb_shm_export(ptr, &sh)) == FB_OK)
            memcpy(h->bytes, &sh, sizeof sh);
        return st;
    }
    _Static_assert(sizeof mh <= FB_IPC_HANDLE_BYTES, "cudaIpcMemHandle_t fits the handle");
    CUDA_TRY(cudaIpcGetMemHandle(&mh, ptr));
    memcpy(h->bytes, &mh, sizeof mh);
    return FB_OK;
}

/* The reason for a failed open into why; the status as cuda_fail's, nothing printed. */
static fb_status ipc_fail(cudaError_t err, const char *what, char *why, size_t whylen)
{
    snprintf(why, whylen, "%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
    (void)cudaGetLastError();
    return err == cudaErrorMemoryAllocation ? FB_ERR_NOMEM : FB_ERR_BACKEND;
}

static fb_status cuda_ipc_open(enum fb_mem kind, const struct fb_ipc_handle *h, void **ptr,
                               char *why, size_t whylen)
{
    struct fb_shm_handle sh;
    cudaIpcMemHandle_t mh;
    cudaError_t err;
    fb_status st;

    *ptr = NULL;
    if (kind == FB_MEM_SHARED_PINNED) {
        memcpy(&sh, h->bytes, sizeof sh);
        if ((st = fb_shm_open(&sh, ptr, why, whylen)) != FB_OK)
            return st;
        if ((err = cudaHostRegister(*ptr, (size_t)sh.bytes, cudaHostRegisterPortable)) != cudaSuccess) {
            fb_shm_close(*ptr);
            *ptr = NULL;
            return ipc_fail(err, "cudaHostRegister", why, whylen);
        }
        return FB_OK;
    }
    memcpy(&mh, h->bytes, sizeof mh);
    /* Peer access between the two GPUs is enabled on first use, as NCCL's P2P/IPC does. */
    if ((err = cudaIpcOpenMemHandle(ptr, mh, cudaIpcMemLazyEnablePeerAccess)) != cudaSuccess) {
        *ptr = NULL;
        return ipc_fail(err, "cudaIpcOpenMemHandle", why, whylen);
    }
    return FB_OK;
}

static void cuda_ipc_close(enum fb_mem kind, void *ptr)
{
    if (!ptr)
        return;
    if (kind == FB_MEM_SHARED_PINNED) {
        (void)cudaHostUnregister(ptr);
        fb_shm_close(ptr);
    } else {
        (void)cudaIpcCloseMemHandle(ptr);
    }
}

static fb_status cuda_stream_create(struct fb_stream **out)
{
    struct fb_stream *s = calloc(1, sizeof *s);
    cudaError_t err;

    *out = NULL;
    if (!s)
        return FB_ERR_NOMEM;
    err = cudaStreamCreateWithFlags(&s->s, cudaStreamNonBlocking);
    if (err != cudaSuccess) {
        free(s);
        return cuda_fail(err, "cudaStreamCreateWithFlags");
    }
    *out = s;
    return FB_OK;
}

static void cuda_stream_destroy(struct fb_stream *s)
{
    if (!s)
        return;
    (void)cudaStreamDestroy(s->s);
    free(s);
}

/* A wait the watchdog sees: past --timeout its thread aborts the NCCL communicators (which
 * releases a kernel waiting for a peer, and so this call) and stops the job. */
static fb_status cuda_stream_sync(struct fb_stream *s)
{
    cudaError_t e;

    fb_watchdog_wait_begin();
    e = cudaStreamSynchronize(s->s);
    fb_watchdog_wait_end();
    return e == cudaSuccess ? FB_OK : cuda_fail(e, "cudaStreamSynchronize");
}

static void *cuda_stream_native(struct fb_stream *s) { return (void *)s->s; }

static fb_status cuda_copy(void *dst, const void *src, size_t bytes, enum fb_copy dir,
                           struct fb_stream *s)
{
    static const enum cudaMemcpyKind kinds[] = {
        [FB_COPY_H2D] = cudaMemcpyHostToDevice,
        [FB_COPY_D2H] = cudaMemcpyDeviceToHost,
        [FB_COPY_D2D] = cudaMemcpyDeviceToDevice,
        [FB_COPY_PEER] = cudaMemcpyDefault, /* unified addressing finds both devices */
    };
    CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kinds[dir], s->s));
    return FB_OK;
}

static fb_status cuda_event_create(struct fb_event **out)
{
    struct fb_event *e = calloc(1, sizeof *e);
    cudaError_t err;

    *out = NULL;
    if (!e)
        return FB_ERR_NOMEM;
    err = cudaEventCreate(&e->e);
    if (err != cudaSuccess) {
        free(e);
        return cuda_fail(err, "cudaEventCreate");
    }
    *out = e;
    return FB_OK;
}

static void cuda_event_destroy(struct fb_event *e)
{
    if (!e)
        return;
    (void)cudaEventDestroy(e->e);
    free(e);
}

static fb_status cuda_event_record(struct fb_event *e, struct fb_stream *s)
{
    CUDA_TRY(cudaEventRecord(e->e, s->s));
    return FB_OK;
}

static fb_status cuda_event_elapsed_us(struct fb_event *a, struct fb_event *b, double *us)
{
    float ms = 0.0f;

    CUDA_TRY(cudaEventElapsedTime(&ms, a->e, b->e));
    *us = (double)ms * 1e3;
    return FB_OK;
}

static fb_status cuda_fill(void *buf, size_t count, enum fb_dtype dtype, struct fb_pattern p,
                           struct fb_stream *s)
{
    CUDA_TRY((cudaError_t)fb_kernel_fill(buf, count, dtype, p, s->s));
    return FB_OK;
}

static fb_status cuda_check(const void *buf, size_t count, enum fb_dtype dtype,
                            struct fb_pattern p, size_t *wrong, struct fb_stream *s)
{
    CUDA_TRY((cudaError_t)fb_kernel_check(buf, count, dtype, p, wrong, s->s));
    return FB_OK;
}

static fb_status cuda_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    CUDA_TRY(cudaMemGetInfo(free_bytes, total_bytes));
    return FB_OK;
}

static fb_status cuda_probe_alloc(size_t bytes, void **out)
{
    cudaError_t err = cudaMalloc(out, bytes ? bytes : 1);

    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError(); /* not sticky: clear it so later calls do not see it */
        *out = NULL;
        return FB_ERR_NOMEM;
    }
    if (err != cudaSuccess) {
        *out = NULL;
        return cuda_fail(err, "cudaMalloc");
    }
    return FB_OK;
}

static fb_status cuda_event_sync(struct fb_event *e)
{
    CUDA_TRY(cudaEventSynchronize(e->e));
    return FB_OK;
}

static fb_status cuda_stream_wait_event(struct fb_stream *s, struct fb_event *e)
{
    CUDA_TRY(cudaStreamWaitEvent(s->s, e->e, 0));
    return FB_OK;
}

static fb_status cuda_normalize_u8(float *dst, const unsigned char *src, size_t images,
                                   size_t plane, const float mean[3], const float inv_std[3],
                                   struct fb_stream *s)
{
    CUDA_TRY((cudaError_t)fb_kernel_normalize_u8(dst, src, images, plane, mean, inv_std, s->s));
    return FB_OK;
}

static fb_status cuda_busy_wait(double us, struct fb_stream *s)
{
    CUDA_TRY((cudaError_t)fb_kernel_busy_wait(us, s->s));
    return FB_OK;
}

static fb_status cuda_sgd_momentum(float *w, float *v, const void *g, enum fb_dtype gdtype,
                                   size_t n, float lr, float momentum, float scale,
                                   struct fb_stream *s)
{
    if (gdtype != FB_DTYPE_FLOAT32 && gdtype != FB_DTYPE_FLOAT16)
        return FB_ERR_USAGE;
    CUDA_TRY((cudaError_t)fb_kernel_sgd_momentum(w, v, g, gdtype == FB_DTYPE_FLOAT16, n, lr,
                                                 momentum, scale, s->s));
    return FB_OK;
}

static fb_status cuda_thread_init(void)
{
    CUDA_TRY(cudaSetDevice(opened_device));
    return FB_OK;
}

const struct fb_backend fb_backend_cuda = {
    .name = "cuda",
    .built = true,
    .measures = true,
    .device_count = cuda_device_count,
    .device_bus = cuda_device_bus,
    .versions = cuda_versions,
    .open = cuda_open,
    .close = cuda_close,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_sync = cuda_stream_sync,
    .stream_native = cuda_stream_native,
    .copy = cuda_copy,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_elapsed_us = cuda_event_elapsed_us,
    .ipc_export = cuda_ipc_export,
    .ipc_open = cuda_ipc_open,
    .ipc_close = cuda_ipc_close,
    .fill = cuda_fill,
    .check = cuda_check,
    .mem_info = cuda_mem_info,
    .probe_alloc = cuda_probe_alloc,
    .event_sync = cuda_event_sync,
    .stream_wait_event = cuda_stream_wait_event,
    .normalize_u8 = cuda_normalize_u8,
    .busy_wait = cuda_busy_wait,
    .sgd_momentum = cuda_sgd_momentum,
    .thread_init = cuda_thread_init,
};

/* The host backend: "device" buffers are host memory, copies are memcpy done at once, and events
 * read CLOCK_MONOTONIC when recorded. Its figures are real CPU-memory figures; this is how every
 * benchmark runs and is tested where no GPU exists. FB_FAULT makes one of its allocations, copies,
 * streams or events fail, for the error-path tests (backend_fault.h). */
#define _GNU_SOURCE
#include "backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "backend_fault.h"
#include "clock.h"
#include "shm.h"
#include "units.h"

struct fb_stream {
    int unused;
};

struct fb_event {
    double us;
};

/* Page alignment keeps host buffers comparable with cudaMalloc'ed ones (256 B or more: the CUDA
 * C++ Programming Guide). */
enum { HOST_ALIGN = 4096 };

/* Built with AddressSanitizer (gcc's macro, clang's feature): device and pinned buffers come
 * from the heap, where the sanitizer sees their bounds and leaks, not from mappings it cannot
 * see; their placement then is the sanitizer allocator's anyway. */
#if defined(__SANITIZE_ADDRESS__)
#define HOST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOST_SANITIZED 1
#endif
#endif
#ifndef HOST_SANITIZED
#define HOST_SANITIZED 0
#endif

/* Whether a private buffer of this kind is a heap block (else a mapping of its own): what
 * alloc_pages gives and host_free gives back must agree. */
static bool on_heap(enum fb_mem kind) { return kind == FB_MEM_PAGEABLE || HOST_SANITIZED; }

static int host_device_count(char *why, size_t whylen)
{
    (void)why;
    (void)whylen;
    return 1;
}

static void host_versions(int *driver, int *runtime)
{
    *driver = 0;
    *runtime = 0;
}

static void cpu_model(char *buf, size_t len)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");

    snprintf(buf, len, "unknown CPU");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon += 2;
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(buf, len, "%s", colon);
            break;
        }
    }
    fclose(f);
}

static fb_status host_open(int device, struct fb_device_info *info)
{
    char cpu[96];
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

    (void)device;
    memset(info, 0, sizeof *info);
    info->index = -1;
    cpu_model(cpu, sizeof cpu);
    snprintf(info->name, sizeof info->name, "host memory (%s)", cpu);
    info->mem_bytes = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
    return fb_fault_setup();
}

static void kept_release_all(void);

static void host_close(void)
{
    kept_release_all();
    fb_fault_report();
}

/* The last freed device or pinned mapping of each kind, of KEEP_MIN bytes or more, is kept for
 * the next allocation of that kind and size. A benchmark's cases allocate and free the same large
 * buffers one after another (h2d's four cases past the last-level cache: 1 GiB a buffer on a VM
 * whose cache reads 508 MiB), and making a fresh mapping resident costs far more than the copies
 * it serves: 262,144 page faults a GiB (shm.h says what they cost on the project's VM), where the
 * kept one is only memset again. A kept buffer is the same memory, made resident the same way
 * (touched page by page when first mapped) and memset again when handed out, as a fresh one is;
 * nothing timed sees the difference. The kept one goes back to the system when a large allocation
 * of its kind asks for another size, when memory is counted or probed (mem_info, probe_alloc:
 * memfit and the step size their batch by it) and at close. Under AddressSanitizer nothing is
 * kept (heap blocks). */
enum { KEEP_MIN = 64 << 20 };
static struct {
    void *ptr;
    size_t bytes;
} kept[2]; /* [0] device, [1] pinned */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

/* The slot of a kind that can be kept; -1 for the others. */
static int keep_slot(enum fb_mem kind)
{
    return on_heap(kind) ? -1 : kind == FB_MEM_DEVICE ? 0 : kind == FB_MEM_PINNED ? 1 : -1;
}

/* The kept mapping of slot k when it is `bytes` long (NULL otherwise), and no longer kept. A
 * kept mapping of another size is unmapped first, so at most one buffer a kind waits. */
static void *kept_take(int k, size_t bytes)
{
    void *p = NULL, *other = NULL;

    pthread_mutex_lock(&kept_lock);
    if (kept[k].ptr && kept[k].bytes == bytes)
        p = kept[k].ptr;
    else
        other = kept[k].ptr;
    kept[k].ptr = NULL;
    kept[k].bytes = 0;
    pthread_mutex_unlock(&kept_lock);
    fb_map_free(other);
    return p;
}

static void kept_release_all(void)
{
    for (int k = 0; k < 2; k++)
        (void)kept_take(k, 0);
}

static fb_status alloc_pages(enum fb_mem kind, size_t bytes, void **out)
{
    size_t rounded;
    void *p = NULL;
    fb_status st;
    int k = keep_slot(kind);
    bool kept = false, fresh = false, zero = false;

    *out = NULL;
    /* a size near SIZE_MAX would wrap to a small buffer, then be written whole */
    if (!fb_size_round_up(bytes, HOST_ALIGN, &rounded))
        return FB_ERR_NOMEM;
    if (kind == FB_MEM_SHARED_DEVICE || kind == FB_MEM_SHARED_PINNED) {
        if ((st = fb_shm_alloc(bytes, out)) == FB_OK && kind == FB_MEM_SHARED_PINNED)
            (void)mlock(*out, rounded);
        return st;
    }
    if (on_heap(kind)) {
        /* a user's buffer: from the heap, as malloc gives it (and, under AddressSanitizer,
         * every kind: its allocator then checks each buffer's bounds and leaks) */
        if (!(p = aligned_alloc(HOST_ALIGN, rounded ? rounded : HOST_ALIGN)))
            return FB_ERR_NOMEM;
    } else if (k >= 0 && rounded >= KEEP_MIN && (p = kept_take(k, rounded)) != NULL) {
        kept = true; /* the kept mapping of this size: resident already */
    } else if ((st = fb_map_alloc(rounded, &p)) != FB_OK) {
        /* device and pinned memory: a mapping of its own, as the driver gives it (shm.h) */
        return st;
    } else {
        fresh = true;
    }
    /* A pageable buffer too: the benchmark writes it before timing, and the kernel's populate
     * with the first write after it costs about half of the faults it replaces (shm.h). A new
     * mapping it populated is zeroed by the kernel already. */
    if (!kept)
        zero = fb_pages_populate(p, rounded) && fresh;
    if (kind != FB_MEM_PAGEABLE) {
        /* Device and pinned memory are resident and zeroed from the start, as with cudaMalloc
         * and cudaMallocHost: no page fault lands in a timed copy. */
        if (!zero)
            memset(p, 0, rounded);
        /* mlock fails under a low RLIMIT_MEMLOCK; the pages are resident anyway. */
        if (kind == FB_MEM_PINNED)
            (void)mlock(p, rounded);
    }
    *out = p;
    return FB_OK;
}

static fb_status host_alloc(enum fb_mem kind, size_t bytes, void **out)
{
    if (fb_fault_hit(FB_FAULT_ALLOC)) {
        *out = NULL;
        return FB_ERR_NOMEM;
    }
    return alloc_pages(kind, bytes, out);
}

static void host_free(enum fb_mem kind, void *ptr)
{
    int k = keep_slot(kind);
    size_t bytes;

    /* munlock is implied when the pages are released */
    if (kind == FB_MEM_SHARED_DEVICE || kind == FB_MEM_SHARED_PINNED) {
        fb_shm_free(ptr);
    } else if (on_heap(kind)) {
        free(ptr);
    } else if (ptr && k >= 0 && (bytes = fb_map_size(ptr)) >= KEEP_MIN) {
        void *old;

        pthread_mutex_lock(&kept_lock);
        old = kept[k].ptr;
        kept[k].ptr = ptr;
        kept[k].bytes = bytes;
        pthread_mutex_unlock(&kept_lock);
        fb_map_free(old);
    } else {
        fb_map_free(ptr);
    }
}

static fb_status host_ipc_export(enum fb_mem kind, void *ptr, struct fb_ipc_handle *h)
{
    struct fb_shm_handle sh;
    fb_status st = fb_shm_export(ptr, &sh);

    (void)kind;
    memset(h, 0, sizeof *h);
    memcpy(h->bytes, &sh, sizeof sh);
    return st;
}

static fb_status host_ipc_open(enum fb_mem kind, const struct fb_ipc_handle *h, void **ptr,
                               char *why, size_t whylen)
{
    struct fb_shm_handle sh;

    (void)kind;
    *ptr = NULL;
    if (fb_fault_hit(FB_FAULT_IPC)) {
        snprintf(why, whylen, "FB_FAULT: the peer's memory made unmappable, as between two GPUs "
                 "without peer access");
        return FB_ERR_BACKEND;
    }
    memcpy(&sh, h->bytes, sizeof sh);
    return fb_shm_open(&sh, ptr, why, whylen);
}

static void host_ipc_close(enum fb_mem kind, void *ptr)
{
    (void)kind;
    fb_shm_close(ptr);
}

static fb_status host_stream_create(struct fb_stream **out)
{
    if (fb_fault_hit(FB_FAULT_STREAM)) {
        *out = NULL;
        return FB_ERR_BACKEND;
    }
    *out = calloc(1, sizeof **out);
    return *out ? FB_OK : FB_ERR_NOMEM;
}

static void host_stream_destroy(struct fb_stream *s) { free(s); }

static fb_status host_stream_sync(struct fb_stream *s)
{
    (void)s;
    return FB_OK;
}

static void *host_stream_native(struct fb_stream *s)
{
    (void)s;
    return NULL;
}

static fb_status host_copy(void *dst, const void *src, size_t bytes, enum fb_copy dir,
                           struct fb_stream *s)
{
    (void)dir;
    (void)s;
    if (fb_fault_hit(FB_FAULT_COPY))
        return FB_ERR_BACKEND;
    memcpy(dst, src, bytes);
    return FB_OK;
}

static fb_status host_event_create(struct fb_event **out)
{
    if (fb_fault_hit(FB_FAULT_EVENT)) {
        *out = NULL;
        return FB_ERR_BACKEND;
    }
    *out = calloc(1, sizeof **out);
    return *out ? FB_OK : FB_ERR_NOMEM;
}

static void host_event_destroy(struct fb_event *e) { free(e); }

static fb_status host_event_record(struct fb_event *e, struct fb_stream *s)
{
    (void)s;
    e->us = fb_clock_now_us();
    return FB_OK;
}

static fb_status host_event_elapsed_us(struct fb_event *a, struct fb_event *b, double *us)
{
    *us = b->us - a->us;
    return FB_OK;
}

static fb_status host_fill(void *buf, size_t count, enum fb_dtype dtype, struct fb_pattern p,
                           struct fb_stream *s)
{
    (void)s;
    fb_pattern_fill_host(buf, count, dtype, p);
    return FB_OK;
}

static fb_status host_check(const void *buf, size_t count, enum fb_dtype dtype,
                            struct fb_pattern p, size_t *wrong, struct fb_stream *s)
{
    (void)s;
    *wrong = fb_pattern_check_host(buf, count, dtype, p);
    return FB_OK;
}

/* A /proc/meminfo line's value in bytes ("MemAvailable:   123456 kB"); 0 when absent. */
static size_t meminfo_bytes(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    size_t len = strlen(key), kb = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, len) == 0 && line[len] == ':') {
            kb = strtoull(line + len + 1, NULL, 10);
            break;
        }
    fclose(f);
    return kb * 1024;
}

static fb_status host_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    kept_release_all(); /* what is free counts the kept buffers back */
    *free_bytes = meminfo_bytes("MemAvailable");
    *total_bytes = meminfo_bytes("MemTotal");
    return *total_bytes ? FB_OK : FB_ERR_IO;
}

/* Not a fault point: running out is the answer memfit looks for, not an error path. */
static fb_status host_probe_alloc(size_t bytes, void **out)
{
    kept_release_all();
    return alloc_pages(FB_MEM_DEVICE, bytes, out);
}

static fb_status host_event_sync(struct fb_event *e)
{
    (void)e;
    return FB_OK;
}

static fb_status host_stream_wait_event(struct fb_stream *s, struct fb_event *e)
{
    (void)s;
    (void)e;
    return FB_OK;
}

static fb_status host_normalize_u8(float *dst, const unsigned char *src, size_t images,
                                   size_t plane, const float mean[3], const float inv_std[3],
                                   struct fb_stream *s)
{
    (void)s;
    for (size_t i = 0; i < images; i++)
        for (size_t c = 0; c < 3; c++) {
            size_t base = (i * 3 + c) * plane;
            for (size_t k = 0; k < plane; k++)
                dst[base + k] = ((float)src[base + k] * (1.0f / 255.0f) - mean[c]) * inv_std[c];
        }
    return FB_OK;
}

/* Sleeps to an absolute deadline rather than spinning: it stands for a GPU's compute, which
 * takes no CPU core from the input pipeline's workers. On a 2-core machine a spinning consumer
 * would halve the workers and report a stall the GPU case would not have. */
static fb_status host_busy_wait(double us, struct fb_stream *s)
{
    struct timespec end;
    long long ns;
    int rc;

    (void)s;
    clock_gettime(CLOCK_MONOTONIC, &end);
    ns = (long long)end.tv_nsec + (long long)(us * 1e3);
    end.tv_sec += (time_t)(ns / 1000000000LL);
    end.tv_nsec = (long)(ns % 1000000000LL);
    /* interrupted by a signal: sleep on to the same deadline */
    while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL)) == EINTR)
        ;
    return rc == 0 ? FB_OK : FB_ERR_BACKEND;
}

static fb_status host_sgd_momentum(float *w, float *v, const void *g, enum fb_dtype gdtype,
                                   size_t n, float lr, float momentum, float scale,
                                   struct fb_stream *s)
{
    (void)s;
    return fb_sgd_momentum_host(w, v, g, gdtype, n, lr, momentum, scale);
}

static fb_status host_thread_init(void) { return FB_OK; }

/* The host's kernels run at once: the stream's earlier work is already done. */
static fb_status host_host_launch(struct fb_stream *s, fb_host_kernel fn, const void *arg,
                                  size_t argbytes)
{
    (void)s;
    (void)argbytes;
    return fn((void *)(uintptr_t)arg);
}

const struct fb_backend fb_backend_host = {
    .name = "host",
    .built = true,
    .on_cpu = true,
    .host_memory = true,
    .measures = true,
    .device_count = host_device_count,
    .versions = host_versions,
    .open = host_open,
    .close = host_close,
    .alloc = host_alloc,
    .free = host_free,
    .stream_create = host_stream_create,
    .stream_destroy = host_stream_destroy,
    .stream_sync = host_stream_sync,
    .stream_native = host_stream_native,
    .copy = host_copy,
    .event_create = host_event_create,
    .event_destroy = host_event_destroy,
    .event_record = host_event_record,
    .event_elapsed_us = host_event_elapsed_us,
    .ipc_export = host_ipc_export,
    .ipc_open = host_ipc_open,
    .ipc_close = host_ipc_close,
    .fill = host_fill,
    .check = host_check,
    .mem_info = host_mem_info,
    .probe_alloc = host_probe_alloc,
    .event_sync = host_event_sync,
    .stream_wait_event = host_stream_wait_event,
    .normalize_u8 = host_normalize_u8,
    .busy_wait = host_busy_wait,
    .sgd_momentum = host_sgd_momentum,
    .thread_init = host_thread_init,
    .host_launch = host_host_launch,
};

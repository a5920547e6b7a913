/* host-strict's device memory and scope. Device buffers live in one memfd, reserved large and
 * backed lazily, mapped twice: benchmarks get addresses in a PROT_NONE view, so a host access
 * faults, and the backend's operations reach the same pages through a writable view
 * (fb_device_view). A SIGSEGV handler turns a fault in the PROT_NONE view into one line naming
 * the address, the benchmark and the hook. Freed buffers give their pages back (a punched
 * hole) and their addresses are never handed out again. */
#define _GNU_SOURCE
#include "backend_strict.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "shm.h"
#include "units.h"

/* Address space, not memory: pages exist once written and go at free. 4 TiB: memfit's search
 * of a 141 GB device (--device-memory) allocates and frees it a few dozen times, and freed
 * addresses are never handed out again. */
#define ARENA_BYTES ((size_t)1 << 42)
enum { PAGE = 4096, MAX_VIEWS = 256 };
static const uint64_t MAGIC = 0x7374726963746d65ull; /* "strictme" */

/* A device allocation's first page, in the writable view, before the buffer. */
struct header {
    uint64_t magic;
    uint64_t bytes; /* the pages after the header */
};

/* A shared device buffer (its own memfd): the writable mapping and the PROT_NONE one. */
struct view {
    char *none, *rw;
    size_t bytes;
    bool opened; /* another process's buffer (ipc_open), else ours (alloc) */
};

static struct {
    int fd;
    char *none, *rw; /* NULL when host-strict is not open */
    size_t next;     /* the next free offset */
    size_t capacity; /* --device-memory; 0: none */
    size_t in_use;   /* pages of our device buffers (shared ones included) held now */
    struct view views[MAX_VIEWS];
    struct sigaction old;
    pthread_mutex_t lock;
} mem = {.fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

static struct {
    atomic_long serial, last;
    char bench[32], kase[48];
    const char *_Atomic hook;
} scope;

void fb_backend_scope_case(const char *bench, const char *kase)
{
    snprintf(scope.bench, sizeof scope.bench, "%s", bench ? bench : "");
    snprintf(scope.kase, sizeof scope.kase, "%s", bench && kase ? kase : "");
    atomic_store(&scope.serial, bench ? atomic_fetch_add(&scope.last, 1) + 1 : 0);
    atomic_store(&scope.hook, bench ? "setup" : NULL);
}

void fb_backend_scope_hook(const char *hook) { atomic_store(&scope.hook, hook); }

long fb_strict_scope_serial(void) { return atomic_load(&scope.serial); }
const char *fb_strict_scope_bench(void) { return scope.bench[0] ? scope.bench : "(no benchmark)"; }
const char *fb_strict_scope_case(void) { return scope.kase[0] ? scope.kase : "(none)"; }

const char *fb_strict_scope_hook(void)
{
    const char *h = atomic_load(&scope.hook);
    return h ? h : "(outside a case)";
}

void *fb_device_view(const void *p)
{
    const char *c = p;
    void *out = (void *)(uintptr_t)p;

    if (!mem.none || !c)
        return out;
    if (c >= mem.none && c < mem.none + ARENA_BYTES)
        return mem.rw + (c - mem.none);
    pthread_mutex_lock(&mem.lock);
    for (size_t i = 0; i < MAX_VIEWS; i++)
        if (mem.views[i].none && c >= mem.views[i].none &&
            c < mem.views[i].none + mem.views[i].bytes) {
            out = mem.views[i].rw + (c - mem.views[i].none);
            break;
        }
    pthread_mutex_unlock(&mem.lock);
    return out;
}

static bool in_device(const char *c)
{
    if (!mem.none)
        return false;
    if (c >= mem.none && c < mem.none + ARENA_BYTES)
        return true;
    for (size_t i = 0; i < MAX_VIEWS; i++) /* no lock in a signal handler: a glimpse */
        if (mem.views[i].none && c >= mem.views[i].none &&
            c < mem.views[i].none + mem.views[i].bytes)
            return true;
    return false;
}

static size_t put(char *buf, size_t at, size_t cap, const char *s)
{
    while (*s && at + 1 < cap)
        buf[at++] = *s++;
    return at;
}

/* Async-signal-safe: write(2) of a line built by hand, then _exit(2). Another fault (not ours)
 * goes to the handler that was there before, or kills the process as it would have. */
static void on_segv(int sig, siginfo_t *si, void *uc)
{
    char line[256], hex[19] = "0x";
    uintptr_t a = (uintptr_t)si->si_addr;
    size_t n = 0;

    if (!in_device(si->si_addr)) {
        if (mem.old.sa_flags & SA_SIGINFO && mem.old.sa_sigaction) {
            mem.old.sa_sigaction(sig, si, uc);
            return;
        }
        if (mem.old.sa_handler != SIG_DFL && mem.old.sa_handler != SIG_IGN &&
            mem.old.sa_handler) {
            mem.old.sa_handler(sig);
            return;
        }
        signal(sig, SIG_DFL); /* the access runs again and kills the process */
        return;
    }
    for (int i = 0; i < 16; i++)
        hex[2 + i] = "0123456789abcdef"[(a >> (60 - 4 * i)) & 0xf];
    hex[18] = '\0';
    n = put(line, n, sizeof line, "strict: host access to device memory at ");
    n = put(line, n, sizeof line, hex);
    n = put(line, n, sizeof line, " (");
    n = put(line, n, sizeof line, fb_strict_scope_bench());
    n = put(line, n, sizeof line, ", ");
    n = put(line, n, sizeof line, fb_strict_scope_hook());
    n = put(line, n, sizeof line, "): device buffers are read with copy(), not by the host\n");
    if (write(STDERR_FILENO, line, n) < 0)
        _exit(1);
    _exit(1);
}

fb_status fb_strict_mem_open(void)
{
    struct sigaction sa;

    if (mem.none)
        return FB_OK;
    if ((mem.fd = memfd_create("fabricbench-strict", MFD_CLOEXEC)) < 0 ||
        ftruncate(mem.fd, (off_t)ARENA_BYTES) != 0) {
        fb_error("host-strict: cannot make its device memory (memfd): %s", strerror(errno));
        goto fail;
    }
    mem.rw = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, mem.fd,
                  0);
    mem.none = mmap(NULL, ARENA_BYTES, PROT_NONE, MAP_SHARED | MAP_NORESERVE, mem.fd, 0);
    if (mem.rw == MAP_FAILED || mem.none == MAP_FAILED) {
        fb_error("host-strict: cannot map its device memory: %s", strerror(errno));
        goto fail;
    }
    mem.next = 0;
    mem.in_use = 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &mem.old);
    return FB_OK;
fail:
    mem.none = mem.none == MAP_FAILED ? NULL : mem.none;
    mem.rw = mem.rw == MAP_FAILED ? NULL : mem.rw;
    fb_strict_mem_close();
    return FB_ERR_BACKEND;
}

void fb_strict_mem_close(void)
{
    char *none = mem.none;

    if (none)
        sigaction(SIGSEGV, &mem.old, NULL);
    mem.none = NULL; /* fb_device_view is the identity from here */
    if (none)
        munmap(none, ARENA_BYTES);
    if (mem.rw)
        munmap(mem.rw, ARENA_BYTES);
    mem.rw = NULL;
    if (mem.fd >= 0)
        close(mem.fd);
    mem.fd = -1;
    for (size_t i = 0; i < MAX_VIEWS; i++)
        if (mem.views[i].none)
            munmap(mem.views[i].none, mem.views[i].bytes);
    memset(mem.views, 0, sizeof mem.views);
}

/* A PROT_NONE mapping of another mapping's memfd (pid, fd), registered as a view of rw. */
static fb_status add_view(const struct fb_shm_handle *sh, void *rw, bool opened, void **out)
{
    char path[64];
    size_t bytes = (sh->bytes + PAGE - 1) / PAGE * PAGE;
    void *none;
    int fd;
    fb_status st = FB_ERR_BACKEND;

    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)sh->pid, (int)sh->fd);
    if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
        fb_error("host-strict: cannot open %s: %s", path, strerror(errno));
        return st;
    }
    none = mmap(NULL, bytes, PROT_NONE, MAP_SHARED, fd, 0);
    close(fd);
    if (none == MAP_FAILED) {
        fb_error("host-strict: cannot map a shared buffer: %s", strerror(errno));
        return st;
    }
    pthread_mutex_lock(&mem.lock);
    for (size_t i = 0; i < MAX_VIEWS && st != FB_OK; i++)
        if (!mem.views[i].none) {
            mem.views[i] = (struct view){.none = none, .rw = rw, .bytes = bytes,
                                         .opened = opened};
            st = FB_OK;
        }
    pthread_mutex_unlock(&mem.lock);
    if (st != FB_OK) {
        fb_error("host-strict: more than %d shared device buffers at once", MAX_VIEWS);
        munmap(none, bytes);
        return st;
    }
    *out = none;
    return FB_OK;
}

/* The view whose PROT_NONE address is p, taken out of the table; NULL when none. */
static bool take_view(void *p, struct view *v)
{
    bool found = false;

    pthread_mutex_lock(&mem.lock);
    for (size_t i = 0; i < MAX_VIEWS && !found; i++)
        if (mem.views[i].none == p) {
            *v = mem.views[i];
            memset(&mem.views[i], 0, sizeof mem.views[i]);
            found = true;
        }
    pthread_mutex_unlock(&mem.lock);
    return found;
}

fb_status fb_strict_mem_set_capacity(size_t bytes)
{
    pthread_mutex_lock(&mem.lock);
    mem.capacity = bytes;
    pthread_mutex_unlock(&mem.lock);
    return FB_OK;
}

size_t fb_strict_mem_capacity(void) { return mem.capacity; }

size_t fb_strict_mem_in_use(void)
{
    size_t n;

    pthread_mutex_lock(&mem.lock);
    n = mem.in_use;
    pthread_mutex_unlock(&mem.lock);
    return n;
}

/* Takes `pages` of the capacity; false (and a line, unless quiet) when they do not fit, as
 * cudaMalloc's out of memory. */
static bool take(size_t bytes, size_t pages, bool quiet)
{
    char cap[32], used[32];
    size_t in_use;
    bool ok;

    pthread_mutex_lock(&mem.lock);
    in_use = mem.in_use;
    ok = !mem.capacity || (pages <= mem.capacity && in_use <= mem.capacity - pages);
    if (ok)
        mem.in_use += pages;
    pthread_mutex_unlock(&mem.lock);
    if (!ok && !quiet) {
        fb_size_format(mem.capacity, cap, sizeof cap);
        fb_size_format(in_use, used, sizeof used);
        fb_error("host-strict: out of device memory: %zu bytes asked with %s (%zu bytes) of its "
                 "%s capacity (--device-memory %zu bytes) in use",
                 bytes, used, in_use, cap, mem.capacity);
    }
    return ok;
}

static void give_back(size_t pages)
{
    pthread_mutex_lock(&mem.lock);
    mem.in_use -= pages <= mem.in_use ? pages : mem.in_use;
    pthread_mutex_unlock(&mem.lock);
}

fb_status fb_strict_mem_alloc(enum fb_mem kind, size_t bytes, void **out, bool quiet)
{
    /* at least a page: no two buffers share an address, not even an empty one */
    size_t pages = bytes ? (bytes + PAGE - 1) / PAGE * PAGE : PAGE, at;
    struct header *h;
    fb_status st;

    *out = NULL;
    if (bytes > SIZE_MAX - PAGE)
        return FB_ERR_NOMEM;
    if (kind == FB_MEM_SHARED_DEVICE) {
        struct fb_shm_handle sh;
        void *rw;
        pages = (bytes + PAGE - 1) / PAGE * PAGE; /* as its view is counted back at free */
        if (!take(bytes, pages, quiet))
            return FB_ERR_NOMEM;
        if ((st = fb_shm_alloc(bytes, &rw)) != FB_OK) {
            give_back(pages);
            return st;
        }
        if ((st = fb_shm_export(rw, &sh)) != FB_OK || (st = add_view(&sh, rw, false, out))) {
            fb_shm_free(rw);
            give_back(pages);
        }
        return st;
    }
    if (kind != FB_MEM_DEVICE)
        return fb_backend_host.alloc(kind, bytes, out);
    if (!take(bytes, pages, quiet))
        return FB_ERR_NOMEM;
    pthread_mutex_lock(&mem.lock);
    at = mem.next;
    if (mem.none && pages + PAGE <= ARENA_BYTES - at)
        mem.next = at + PAGE + pages;
    pthread_mutex_unlock(&mem.lock);
    if (!mem.none || mem.next == at) {
        give_back(pages);
        if (!quiet)
            fb_error("host-strict: no room for %zu bytes of device memory (%zu of its %zu "
                     "bytes of addresses used)", bytes, at, ARENA_BYTES);
        return FB_ERR_NOMEM;
    }
    h = (struct header *)(mem.rw + at);
    h->magic = MAGIC;
    h->bytes = pages;
    *out = mem.none + at + PAGE;
    return FB_OK;
}

void fb_strict_mem_free(enum fb_mem kind, void *ptr)
{
    char *c = ptr;
    struct header *h;
    struct view v;

    if (!ptr)
        return;
    if (kind == FB_MEM_SHARED_DEVICE) {
        if (take_view(ptr, &v)) {
            munmap(v.none, v.bytes);
            fb_shm_free(v.rw);
            give_back(v.bytes);
        }
        return;
    }
    if (kind != FB_MEM_DEVICE) {
        fb_backend_host.free(kind, ptr);
        return;
    }
    if (!mem.none || c < mem.none + PAGE || c >= mem.none + ARENA_BYTES ||
        (h = (struct header *)(mem.rw + (c - mem.none) - PAGE))->magic != MAGIC) {
        fb_error("strict: %s %s: %p freed as device memory, but it is none (or freed twice)",
                 fb_strict_scope_bench(), fb_strict_scope_hook(), ptr);
        return;
    }
    h->magic = 0;
    give_back(h->bytes);
    /* the pages go back; the addresses are never handed out again */
    fallocate(mem.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(c - mem.none - PAGE),
              (off_t)(h->bytes + PAGE));
}

fb_status fb_strict_ipc_export(enum fb_mem kind, void *ptr, struct fb_ipc_handle *h)
{
    struct view v = {0};
    bool found = false;

    if (kind == FB_MEM_SHARED_DEVICE) {
        pthread_mutex_lock(&mem.lock);
        for (size_t i = 0; i < MAX_VIEWS && !found; i++)
            if (mem.views[i].none == ptr) {
                v = mem.views[i];
                found = true;
            }
        pthread_mutex_unlock(&mem.lock);
        if (!found)
            return FB_ERR_USAGE;
        ptr = v.rw;
    }
    return fb_backend_host.ipc_export(kind, ptr, h);
}

fb_status fb_strict_ipc_open(enum fb_mem kind, const struct fb_ipc_handle *h, void **ptr,
                             char *why, size_t whylen)
{
    struct fb_shm_handle sh;
    void *rw;
    fb_status st;

    if (kind != FB_MEM_SHARED_DEVICE)
        return fb_backend_host.ipc_open(kind, h, ptr, why, whylen);
    *ptr = NULL;
    if ((st = fb_backend_host.ipc_open(kind, h, &rw, why, whylen)) != FB_OK)
        return st;
    memcpy(&sh, h->bytes, sizeof sh);
    if ((st = add_view(&sh, rw, true, ptr)) != FB_OK)
        fb_backend_host.ipc_close(kind, rw);
    return st;
}

void fb_strict_ipc_close(enum fb_mem kind, void *ptr)
{
    struct view v;

    if (kind != FB_MEM_SHARED_DEVICE) {
        fb_backend_host.ipc_close(kind, ptr);
        return;
    }
    if (ptr && take_view(ptr, &v)) {
        munmap(v.none, v.bytes);
        fb_backend_host.ipc_close(kind, v.rw);
    }
}

/* The host backend's memory kinds (harness/device/backend_host.c, shm.c): device and pinned
 * buffers are mappings of their own, outside the malloc heap, as cudaMalloc and cudaMallocHost
 * memory is (a heap buffer put the heap's next small allocation, Open MPI's temporary buffer
 * among them, 16 bytes past a page from the buffer: 4K aliasing in the library's copies,
 * docs/benchmarks/osu-compare.md); pageable buffers come from the heap; every kind is
 * page-aligned, writable whole and given back when freed; device and pinned buffers (shared or
 * not) are resident before their first touch, as the driver's are, so no timed copy takes
 * their page faults. A freed device or pinned buffer of 64 MiB or more is kept for the next
 * allocation of its kind and size (resident, zeroed again), one a kind, and given back when a
 * large allocation of another size comes, when memory is counted or probed, and at close. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend.h"
#include "shm.h"
#include "test.h"

static const struct fb_backend *be = &fb_backend_host;

/* VmSize of this process in kB (0 when unreadable). */
static long vm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;

    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

/* Whether every page of [p, p + bytes) is resident (mincore), before anything touched it. */
static bool resident(void *p, size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = (bytes + page - 1) / page, in = 0;
    unsigned char *vec = malloc(pages);

    if (!vec || mincore(p, bytes, vec) != 0) {
        free(vec);
        return false;
    }
    for (size_t i = 0; i < pages; i++)
        in += vec[i] & 1;
    free(vec);
    if (in != pages)
        fprintf(stderr, "%zu of %zu pages resident\n", in, pages);
    return in == pages;
}

static void check_resident(enum fb_mem kind, const char *name)
{
    void *p = NULL;
    size_t bytes = (size_t)8 << 20;

    CHECK(be->alloc(kind, bytes, &p) == FB_OK && p != NULL);
    if (!p)
        return;
    if (!resident(p, bytes))
        fprintf(stderr, "%s: not resident when allocated\n", name);
    CHECK(resident(p, bytes));
    be->free(kind, p);
}

/* fb_pages_populate: an untouched mapping's whole pages are resident after it, what was written
 * stays (an unaligned span: its partial first and last pages are left to the caller), and a
 * pageable buffer is resident when allocated (the benchmark's first write takes no faults).
 * Where the kernel has no MADV_POPULATE_WRITE (before Linux 5.14) that is said, and only the
 * contents are checked. */
static void check_populate(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = (size_t)8 << 20;
    unsigned char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    bool kernel_has = false;
    void *p = NULL;

    CHECK(m != MAP_FAILED);
    if (m == MAP_FAILED)
        return;
#ifdef MADV_POPULATE_WRITE
    kernel_has = madvise(m + bytes - page, page, MADV_POPULATE_WRITE) == 0;
#endif
    if (!kernel_has)
        puts("fb_pages_populate: this kernel has no MADV_POPULATE_WRITE; residency not checked");
    m[page + 5] = 0xa5;
    /* partial first and last pages: not all of it populated, so the caller must write it */
    CHECK(!fb_pages_populate(m + 100, bytes - 200));
    CHECK(m[page + 5] == 0xa5 && m[2 * page] == 0);
    /* whole pages: true where the kernel populated them (the caller then skips its zeroing) */
    CHECK(fb_pages_populate(m, bytes) == kernel_has);
    CHECK(m[page + 5] == 0xa5);
    if (kernel_has) {
        CHECK(resident(m + page, bytes - 2 * page));
        CHECK(be->alloc(FB_MEM_PAGEABLE, bytes, &p) == FB_OK && p != NULL);
        if (p)
            CHECK(resident(p, bytes));
        be->free(FB_MEM_PAGEABLE, p);
    }
    munmap(m, bytes);
}

#if !defined(__SANITIZE_ADDRESS__) /* placement is checked without the sanitizer only */
/* Whether p lies in the heap: in a [heap] line of /proc/self/maps (read again each time, the
 * heap may have grown; mlock can split it into several lines). */
static bool in_heap(const void *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long lo, hi;
    bool found = false;

    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, "[heap]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
                (uintptr_t)p >= lo && (uintptr_t)p < hi;
    if (f)
        fclose(f);
    return found;
}

static void check_kind(enum fb_mem kind, const char *name, bool heap)
{
    void *p = NULL, *next;
    unsigned char *b;

    CHECK(be->alloc(kind, 16384, &p) == FB_OK && p != NULL);
    if (!p)
        return;
    CHECK((uintptr_t)p % 4096 == 0);
    b = p;
    memset(b, 0xA5, 16384); /* all of it writable */
    CHECK(b[0] == 0xA5 && b[16383] == 0xA5);
    /* the heap's next small block (what a library mallocs next) */
    next = malloc(16384);
    CHECK(next != NULL);
    if (heap) {
        if (!in_heap(p))
            fprintf(stderr, "%s: %p is not in the heap\n", name, p);
        CHECK(in_heap(p));
    } else {
        if (in_heap(p))
            fprintf(stderr, "%s: %p is in the heap\n", name, p);
        CHECK(!in_heap(p));
        /* not in the page right after the buffer (a heap block there sits 16 bytes past the
         * buffer's last page: 4K aliasing) */
        CHECK(!((uintptr_t)next >= (uintptr_t)p + 16384 && (uintptr_t)next < (uintptr_t)p + 20480));
    }
    free(next);
    be->free(kind, p);
}
#endif

#if !defined(__SANITIZE_ADDRESS__)
/* The kept buffers (backend_host.c): what is reused, what is given back, and when. */
static void check_kept(void)
{
    const size_t big = (size_t)64 << 20;
    size_t maps = fb_map_count(), free_b = 0, total_b = 0;
    unsigned char *d = NULL, *d2 = NULL, *q = NULL, *q2 = NULL, *e = NULL, *s = NULL, *pr = NULL;

    CHECK(be->alloc(FB_MEM_DEVICE, big, (void **)&d) == FB_OK);
    memset(d, 0xab, big);
    be->free(FB_MEM_DEVICE, d);
    CHECK(fb_map_count() == maps + 1); /* kept, not given back */
    /* the same kind and size: the same memory, resident and zeroed again */
    CHECK(be->alloc(FB_MEM_DEVICE, big, (void **)&d2) == FB_OK);
    CHECK(d2 == d);
    CHECK(resident(d2, big));
    CHECK(d2[0] == 0 && d2[big / 2] == 0 && d2[big - 1] == 0);
    /* another kind never takes it; each kind keeps its own */
    CHECK(be->alloc(FB_MEM_PINNED, big, (void **)&q) == FB_OK);
    CHECK(q != d2);
    be->free(FB_MEM_DEVICE, d2);
    be->free(FB_MEM_PINNED, q);
    CHECK(fb_map_count() == maps + 2);
    /* a small buffer neither takes nor disturbs them */
    CHECK(be->alloc(FB_MEM_DEVICE, (size_t)1 << 20, (void **)&s) == FB_OK);
    CHECK(s != d && fb_map_count() == maps + 3);
    be->free(FB_MEM_DEVICE, s);
    CHECK(fb_map_count() == maps + 2);
    /* a large buffer of another size: the kept device buffer is given back first */
    CHECK(be->alloc(FB_MEM_DEVICE, 2 * big, (void **)&e) == FB_OK);
    CHECK(fb_map_count() == maps + 2); /* the new one and the kept pinned one */
    be->free(FB_MEM_DEVICE, e);
    CHECK(be->alloc(FB_MEM_PINNED, big, (void **)&q2) == FB_OK && q2 == q);
    be->free(FB_MEM_PINNED, q2);
    CHECK(fb_map_count() == maps + 2);
    /* counting memory gives both back (memfit and the step size their batch by it) */
    CHECK(be->mem_info(&free_b, &total_b) == FB_OK);
    CHECK(fb_map_count() == maps);
    /* so does probing it, and closing */
    CHECK(be->alloc(FB_MEM_DEVICE, big, (void **)&d) == FB_OK);
    be->free(FB_MEM_DEVICE, d);
    CHECK(be->probe_alloc(big / 2, (void **)&pr) == FB_OK);
    CHECK(fb_map_count() == maps + 1); /* the probe's own */
    be->free(FB_MEM_DEVICE, pr);
    CHECK(be->alloc(FB_MEM_PINNED, big, (void **)&q) == FB_OK);
    be->free(FB_MEM_PINNED, q);
    CHECK(fb_map_count() == maps + 1);
    be->close();
    CHECK(fb_map_count() == maps);
}
#endif

int main(void)
{
    void *p = NULL;
    long before, after;
    size_t maps = fb_map_count();

#if defined(__SANITIZE_ADDRESS__)
    /* every kind is the sanitizer allocator's (backend_host.c): no placement to check */
    puts("AddressSanitizer: buffers come from its allocator; placement not checked");
#else
    /* device and pinned memory: mappings of their own; pageable: the heap (a malloc'ed block
     * of 16 KiB, below glibc's mmap threshold) */
    check_kind(FB_MEM_DEVICE, "device", false);
    check_kind(FB_MEM_PINNED, "pinned", false);
    check_kind(FB_MEM_PAGEABLE, "pageable", true);
    CHECK(fb_map_count() == maps); /* each freed */
    check_kept();
#endif

    check_populate();
    check_resident(FB_MEM_DEVICE, "device");
    check_resident(FB_MEM_PINNED, "pinned");
    check_resident(FB_MEM_SHARED_DEVICE, "shared device");
    check_resident(FB_MEM_SHARED_PINNED, "shared pinned");

    /* a zero-byte buffer is a page, and freed */
    CHECK(be->alloc(FB_MEM_DEVICE, 0, &p) == FB_OK && p != NULL);
    be->free(FB_MEM_DEVICE, p);
    be->free(FB_MEM_DEVICE, NULL); /* accepted */

    /* freed mappings are given back: 200 rounds of 2 x 1 MiB would add 400 MiB of address space */
    before = vm_kb();
    for (int i = 0; i < 200; i++) {
        void *d = NULL, *q = NULL;
        CHECK(be->alloc(FB_MEM_DEVICE, (size_t)1 << 20, &d) == FB_OK);
        CHECK(be->alloc(FB_MEM_PINNED, (size_t)1 << 20, &q) == FB_OK);
        be->free(FB_MEM_DEVICE, d);
        be->free(FB_MEM_PINNED, q);
    }
    after = vm_kb();
    CHECK(fb_map_count() == maps);
    CHECK(before > 0 && after > 0);
#if !defined(__SANITIZE_ADDRESS__) /* its quarantine keeps freed blocks; LeakSanitizer checks */
    if (after - before > 64 * 1024)
        fprintf(stderr, "VmSize grew from %ld kB to %ld kB\n", before, after);
    CHECK(after - before <= 64 * 1024);
#endif
    TEST_DONE();
}

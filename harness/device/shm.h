/* Host memory in mappings of its own. Shared: memory that other processes of the node can map,
 * an anonymous memfd, shared by handing over (pid, fd), which the other process opens as
 * /proc/<pid>/fd/<fd>; nothing is left in /dev/shm when a process dies. The host backend's IPC
 * and the CUDA backend's shared pinned staging buffers are built on it. Private: the host
 * backend's device and pinned buffers (fb_map_alloc). */
#ifndef FB_SHM_H
#define FB_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* What another process needs to map a buffer. Plain data, sent as bytes. */
struct fb_shm_handle {
    int32_t pid;
    int32_t fd;
    uint64_t bytes;
};

/* A new shared mapping of `bytes` (rounded up to pages), every page touched. */
fb_status fb_shm_alloc(size_t bytes, void **out);
void fb_shm_free(void *ptr); /* accepts NULL; only for fb_shm_alloc'ed pointers */
fb_status fb_shm_export(const void *ptr, struct fb_shm_handle *h);
/* Maps another process's buffer. FB_ERR_BACKEND with the reason in why (whylen bytes; nothing
 * printed) when the process or descriptor cannot be opened (another node, or /proc hidden). */
fb_status fb_shm_open(const struct fb_shm_handle *h, void **out, char *why, size_t whylen);
void fb_shm_close(void *ptr); /* accepts NULL; only for fb_shm_open'ed pointers */

/* A private anonymous mapping of `bytes` (rounded up to pages; at least one), page-aligned and
 * not touched (the caller makes it resident). What cudaMalloc and cudaMallocHost are to the
 * CUDA backend: memory of its own, outside the malloc heap. A heap buffer would place the
 * heap's next small allocation right after its last page, and a library's temporary buffer
 * there is 16 bytes past a page boundary from the buffer's start: the worst case for 4K
 * aliasing when the library copies one into the other (measured: Open MPI 4.1's ring
 * reduce-scatter at 16 KiB, 9-12% slower; docs/benchmarks/osu-compare.md). FB_ERR_NOMEM. */
fb_status fb_map_alloc(size_t bytes, void **out);
void fb_map_free(void *ptr); /* accepts NULL; only for fb_map_alloc'ed pointers */
/* The size of the fb_map_alloc'ed mapping at ptr (rounded up to pages); 0 when ptr is none. */
size_t fb_map_size(const void *ptr);
/* Makes the whole pages of [ptr, ptr + bytes) resident and writable now, in one call into the
 * kernel (MADV_POPULATE_WRITE, Linux 5.14) where it has one; the caller still writes the
 * buffer. A first write per page costs a fault each: on the project's 2-core VM (measured
 * 2026-12-04, docs/testing.md rounds six and seven) 10-15 us a page. Populated,
 * 1 GiB took 0.14-0.20 s and its first write still 1.3-1.8 s there (the guest's shadow page
 * tables fault at the first user access), against 3.7 s for the first write alone; the second
 * write 0.04 s either way (the page size, and so every timed copy, is the same). Where
 * the kernel lacks it, nothing: the caller's write makes the pages resident. True when every
 * byte of the range lies in pages it populated (page-aligned ptr and bytes): a new anonymous
 * mapping's pages are then zero, and its caller need not write them. */
bool fb_pages_populate(void *ptr, size_t bytes);
/* How many fb_map_alloc'ed mappings are not yet freed (LeakSanitizer does not see mappings:
 * a test counts them instead). */
size_t fb_map_count(void);

#endif

/* host-strict's parts, shared between its files: device memory that faults on a host access
 * (backend_strict_mem.c) and the scope the runner sets (what runs now, for ownership and
 * messages). Private to harness/device. */
#ifndef FB_BACKEND_STRICT_H
#define FB_BACKEND_STRICT_H

#include <stddef.h>

#include "backend.h"

/* The scope: the case now running (0: none) and names for messages, never NULL. */
long fb_strict_scope_serial(void);
const char *fb_strict_scope_bench(void);
const char *fb_strict_scope_case(void);
const char *fb_strict_scope_hook(void);

/* Device memory. open: one memfd reserved (lazily backed) and mapped twice, a PROT_NONE view
 * handed out and a writable one for the backend's own operations; the SIGSEGV handler that
 * names a host access. close undoes both. */
fb_status fb_strict_mem_open(void);
void fb_strict_mem_close(void);
/* FB_MEM_DEVICE (and SHARED_DEVICE: a memfd of its own, mapped a second time PROT_NONE);
 * host kinds go to the host backend. */
fb_status fb_strict_mem_alloc(enum fb_mem kind, size_t bytes, void **out, bool quiet);
void fb_strict_mem_free(enum fb_mem kind, void *ptr);
/* The device memory's capacity (0: none, the address space alone): set before the first device
 * allocation (open resets what is in use, not the capacity), and what
 * the buffers held take of it (pages rounded, as the allocations are). */
fb_status fb_strict_mem_set_capacity(size_t bytes);
size_t fb_strict_mem_capacity(void);
size_t fb_strict_mem_in_use(void);
fb_status fb_strict_ipc_export(enum fb_mem kind, void *ptr, struct fb_ipc_handle *h);
fb_status fb_strict_ipc_open(enum fb_mem kind, const struct fb_ipc_handle *h, void **ptr,
                             char *why, size_t whylen);
void fb_strict_ipc_close(enum fb_mem kind, void *ptr);

#endif

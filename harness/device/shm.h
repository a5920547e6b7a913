/* Host memory that other processes of the node can map: an anonymous memfd, shared by handing
 * over (pid, fd), which the other process opens as /proc/<pid>/fd/<fd>. Nothing is left in
 * /dev/shm when a process dies. The host backend's IPC and the CUDA backend's shared pinned
 * staging buffers are built on it. */
#ifndef FB_SHM_H
#define FB_SHM_H

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
/* Maps another process's buffer; *bytes gets its size. FB_ERR_BACKEND with a message when the
 * process or descriptor cannot be opened (another node, or /proc hidden). */
fb_status fb_shm_open(const struct fb_shm_handle *h, void **out);
void fb_shm_close(void *ptr); /* accepts NULL; only for fb_shm_open'ed pointers */

#endif

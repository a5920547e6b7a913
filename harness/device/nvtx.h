/* NVTX ranges, so Nsight Systems shows a training step's phases (data wait, copy, forward,
 * backward, each bucket's all-reduce, update) on the threads that enqueue them. The CUDA build
 * uses NVTX3's header-only API (<nvtx3/nvToolsExt.h>, the CUDA toolkit's; a no-op unless a
 * profiler is attached); other builds get a stub that does nothing. Thread-safe. */
#ifndef FB_NVTX_H
#define FB_NVTX_H

#include <stdbool.h>

/* Opens a range named `name` on the calling thread (nested ranges stack). */
void fb_nvtx_push(const char *name);
/* Closes the calling thread's innermost range. */
void fb_nvtx_pop(void);
/* Whether ranges go anywhere (the CUDA build). */
bool fb_nvtx_built(void);

#endif

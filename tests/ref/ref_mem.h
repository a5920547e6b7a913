/* Buffers of the reference programs, made as the host backend makes its device and pinned
 * buffers (harness/device/shm.c): a private anonymous mapping of their own, its pages populated
 * by the kernel at once (MADV_POPULATE_WRITE, Linux 5.14), then written. A reference compares
 * fabricbench's path with a minimal program's, so the two differ in the path alone, not in
 * where and how their pages were placed. */
#ifndef REF_MEM_H
#define REF_MEM_H

#include <stddef.h>
#include <sys/mman.h>

static void *ref_buffer(size_t bytes)
{
    size_t rounded = (bytes + 4095) / 4096 * 4096;
    void *p = mmap(NULL, rounded ? rounded : 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_POPULATE_WRITE
    (void)madvise(p, rounded ? rounded : 4096, MADV_POPULATE_WRITE);
#endif
    return p;
}

static void ref_buffer_free(void *p, size_t bytes)
{
    size_t rounded = (bytes + 4095) / 4096 * 4096;

    if (p)
        munmap(p, rounded ? rounded : 4096);
}

#endif

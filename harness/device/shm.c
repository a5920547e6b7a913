/* Host mappings of their own: shared through memfd, or private. A short list, under a lock
 * (a pipeline's or a step's threads may allocate), remembers each mapping's size and
 * descriptor, since munmap needs the one and the export the other. */
#define _GNU_SOURCE
#include "shm.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "units.h"

/* What a mapping is, so each free takes only its own kind. */
enum origin { SHARED, OPENED, PRIVATE };

struct mapping {
    void *ptr;
    size_t bytes;
    int fd; /* SHARED: its memfd; -1 otherwise */
    enum origin origin;
    struct mapping *next;
};

static struct mapping *mappings;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The mapping of that origin at ptr, unlinked from the list when unlink_it; NULL when none is.
 * A pointer kept (not unlinked) stays valid until it is unlinked, by its owner's free. */
static struct mapping *take(const void *ptr, enum origin origin, bool unlink_it)
{
    struct mapping *found = NULL;

    pthread_mutex_lock(&lock);
    for (struct mapping **m = &mappings; *m; m = &(*m)->next)
        if ((*m)->ptr == ptr && (*m)->origin == origin) {
            found = *m;
            if (unlink_it)
                *m = found->next;
            break;
        }
    pthread_mutex_unlock(&lock);
    return found;
}

static fb_status remember(void *ptr, size_t bytes, int fd, enum origin origin)
{
    struct mapping *m = malloc(sizeof *m);

    if (!m)
        return FB_ERR_NOMEM;
    pthread_mutex_lock(&lock);
    *m = (struct mapping){ptr, bytes, fd, origin, mappings};
    mappings = m;
    pthread_mutex_unlock(&lock);
    return FB_OK;
}

fb_status fb_shm_alloc(size_t bytes, void **out)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t rounded;
    int fd;
    void *p;

    *out = NULL;
    /* checked: a size near SIZE_MAX would wrap to a page, then be written whole */
    if (page <= 0 || !fb_size_round_up(bytes, (size_t)page, &rounded) ||
        rounded > (size_t)INT64_MAX) {
        fb_error("cannot create %zu bytes of shared memory: more than can be mapped", bytes);
        return FB_ERR_NOMEM;
    }
    fd = memfd_create("fabricbench", MFD_CLOEXEC);
    if (rounded == 0)
        rounded = (size_t)page;
    if (fd < 0 || ftruncate(fd, (off_t)rounded) != 0) {
        fb_error("cannot create %zu bytes of shared memory: %s", rounded, strerror(errno));
        if (fd >= 0)
            close(fd);
        return FB_ERR_NOMEM;
    }
    p = mmap(NULL, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return FB_ERR_NOMEM;
    }
    /* resident from the start, like device memory; populated, a new memfd's pages are zero */
    if (!fb_pages_populate(p, rounded))
        memset(p, 0, rounded);
    if (remember(p, rounded, fd, SHARED) != FB_OK) {
        munmap(p, rounded);
        close(fd);
        return FB_ERR_NOMEM;
    }
    *out = p;
    return FB_OK;
}

/* Unmaps the mapping of that origin at ptr (and closes its memfd); nothing for NULL or a
 * pointer that is none. */
static void release(void *ptr, enum origin origin)
{
    struct mapping *m = ptr ? take(ptr, origin, true) : NULL;

    if (!m)
        return;
    munmap(m->ptr, m->bytes);
    if (m->fd >= 0)
        close(m->fd);
    free(m);
}

void fb_shm_free(void *ptr) { release(ptr, SHARED); }

fb_status fb_shm_export(const void *ptr, struct fb_shm_handle *h)
{
    struct mapping *m = take(ptr, SHARED, false);

    if (!m)
        return FB_ERR_USAGE;
    *h = (struct fb_shm_handle){(int32_t)getpid(), m->fd, m->bytes};
    return FB_OK;
}

fb_status fb_shm_open(const struct fb_shm_handle *h, void **out, char *why, size_t whylen)
{
    char path[64];
    int fd;
    void *p;

    *out = NULL;
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)h->pid, (int)h->fd);
    if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
        snprintf(why, whylen, "cannot open the peer's shared memory %s: %s", path,
                 strerror(errno));
        return FB_ERR_BACKEND;
    }
    p = mmap(NULL, (size_t)h->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd); /* the mapping keeps the memory */
    if (p == MAP_FAILED) {
        snprintf(why, whylen, "cannot map the peer's shared memory %s: %s", path,
                 strerror(errno));
        return FB_ERR_BACKEND;
    }
    if (remember(p, (size_t)h->bytes, -1, OPENED) != FB_OK) {
        munmap(p, (size_t)h->bytes);
        return FB_ERR_NOMEM;
    }
    *out = p;
    return FB_OK;
}

void fb_shm_close(void *ptr) { release(ptr, OPENED); }

fb_status fb_map_alloc(size_t bytes, void **out)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t rounded;
    void *p;

    *out = NULL;
    if (page <= 0 || !fb_size_round_up(bytes, (size_t)page, &rounded))
        return FB_ERR_NOMEM;
    if (rounded == 0)
        rounded = (size_t)page;
    p = mmap(NULL, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return FB_ERR_NOMEM;
    if (remember(p, rounded, -1, PRIVATE) != FB_OK) {
        munmap(p, rounded);
        return FB_ERR_NOMEM;
    }
    *out = p;
    return FB_OK;
}

void fb_map_free(void *ptr) { release(ptr, PRIVATE); }

bool fb_pages_populate(void *ptr, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)ptr, end = start + bytes, first;

    if (page <= 0 || !ptr || end < start)
        return false;
    first = (start + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
    end = end / (uintptr_t)page * (uintptr_t)page;
    if (end <= first)
        return false;
    return madvise((void *)first, end - first, MADV_POPULATE_WRITE) == 0 && first == start &&
           end == start + bytes;
#else
    (void)ptr;
    (void)bytes;
    return false;
#endif
}

size_t fb_map_size(const void *ptr)
{
    size_t bytes = 0;

    pthread_mutex_lock(&lock);
    for (struct mapping *m = mappings; m; m = m->next)
        if (m->ptr == ptr && m->origin == PRIVATE) {
            bytes = m->bytes;
            break;
        }
    pthread_mutex_unlock(&lock);
    return bytes;
}

size_t fb_map_count(void)
{
    size_t n = 0;

    pthread_mutex_lock(&lock);
    for (struct mapping *m = mappings; m; m = m->next)
        n += m->origin == PRIVATE;
    pthread_mutex_unlock(&lock);
    return n;
}

/* What the fuzz targets share: the input as a C string, and as a file that the readers open by
 * name (a memfd seen through /proc/self/fd, so each run costs no disk and leaves nothing). A
 * target aborts on a broken promise of the parser (a status without a message, a count beyond
 * its bound); libFuzzer reports that as a crash with the input that caused it. */
#ifndef FB_FUZZ_H
#define FB_FUZZ_H

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A broken promise: say which, then abort (a crash to libFuzzer). */
#define FUZZ_CHECK(cond)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond);  \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

/* data[0..size) as a NUL-terminated copy (malloc'ed; free it). An embedded NUL ends it early,
 * as it would a C string from the command line or a file read line by line. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    FUZZ_CHECK(s);
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* One file whose content is replaced for each input; path names it for fopen. */
struct fuzz_file {
    int fd;
    char path[64];
};

static inline void fuzz_file_init(struct fuzz_file *f, const char *name)
{
    f->fd = memfd_create(name, 0);
    FUZZ_CHECK(f->fd >= 0);
    snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
}

static inline void fuzz_file_set(struct fuzz_file *f, const uint8_t *data, size_t size)
{
    FUZZ_CHECK(ftruncate(f->fd, 0) == 0);
    FUZZ_CHECK(size == 0 || pwrite(f->fd, data, size, 0) == (ssize_t)size);
}

/* The message a failed parse must leave: not empty, and one line unless the input itself put
 * a line feed where the message quotes it (input_has_lf). */
static inline void fuzz_check_message(const char *err, int input_has_lf)
{
    FUZZ_CHECK(err[0] != '\0');
    FUZZ_CHECK(input_has_lf || strchr(err, '\n') == NULL);
}

/* Whether data[0..size) holds a line feed. */
static inline int fuzz_has_lf(const uint8_t *data, size_t size)
{
    return memchr(data, '\n', size) != NULL;
}

#endif

/* Files that appear whole or not at all: written under a temporary name in the same folder,
 * flushed, then renamed over the final name. A crash leaves at most a ".tmp" file behind. */
#ifndef FB_ATOMIC_FILE_H
#define FB_ATOMIC_FILE_H

#include <stdio.h>

#include "status.h"

struct fb_atomic_file {
    FILE *f;
    char path[4096];
    char tmp[4096];
};

/* Opens `path`.tmp for writing. On failure prints why and returns FB_ERR_IO. */
fb_status fb_atomic_open(struct fb_atomic_file *af, const char *path);

/* Flushes, fsyncs and renames the temporary over `path`. Closes in every case. */
fb_status fb_atomic_commit(struct fb_atomic_file *af);

/* Closes and removes the temporary; accepts a file that was never opened. */
void fb_atomic_abort(struct fb_atomic_file *af);

/* Writes `len` bytes of `data` to `path` atomically. */
fb_status fb_atomic_write(const char *path, const char *data, size_t len);

/* Opens `path` for writing as a new, empty file, the way every file of a run folder is made:
 * an existing entry of that name (an earlier file, a symbolic or hard link) is removed first,
 * so nothing is ever written through it to somewhere else. NULL with errno set on failure. */
FILE *fb_file_create(const char *path);

/* mkdir -p: creates `path` and its missing parents (mode 0775). Returns 0, or -1 with errno
 * set. */
int fb_mkdirs(const char *path);

#endif

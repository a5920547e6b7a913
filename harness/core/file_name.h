/* File names made from text that is not ours (a benchmark's name, a run folder's name, a
 * transport): safe for one path component, and kept apart when two come out the same. */
#ifndef FB_FILE_NAME_H
#define FB_FILE_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* Replaces every byte of the NUL-terminated s outside A-Z a-z 0-9 and the bytes of `keep` with
 * '_', so that no text becomes a path ("/", "..") or reaches a shell or gnuplot. */
void fb_file_name_safe(char *s, const char *keep);

/* Makes name (a buffer of size bytes) differ from every name taken() says is in use: left as it
 * is when free, else the original followed by sep and 2, 3, ... (the original cut so that the
 * number fits). Two names made safe can come out the same ("a.b" and "a_b"): the later one gets
 * the number, never the earlier one's files. false, the name as it was, when no free name fits
 * the buffer (or memory ran out). */
bool fb_file_name_unique(char *name, size_t size, const char *sep,
                         bool (*taken)(const char *name, void *ctx), void *ctx);

#endif

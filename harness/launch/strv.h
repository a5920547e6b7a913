/* A string vector: the argv of a command that is built for exec, never a shell string, and the
 * NAME=VALUE environment given to it. */
#ifndef FB_STRV_H
#define FB_STRV_H

#include <stddef.h>

#include "status.h"

/* A growing, NULL-terminated array of owned strings: an argv or a list of NAME=VALUE. */
struct fb_strv {
    char **v;
    size_t n, cap;
};

/* Appends a copy of s; FB_ERR_NOMEM when out of memory. */
fb_status fb_strv_push(struct fb_strv *a, const char *s);
/* Frees every string and the array; accepts an empty one. */
void fb_strv_free(struct fb_strv *a);

#endif

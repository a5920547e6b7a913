/* File names made from foreign text (file_name.h). */
#define _POSIX_C_SOURCE 200809L
#include "file_name.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fb_file_name_safe(char *s, const char *keep)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              (keep && strchr(keep, *s))))
            *s = '_';
}

bool fb_file_name_unique(char *name, size_t size, const char *sep,
                         bool (*taken)(const char *name, void *ctx), void *ctx)
{
    if (size == 0 || !taken(name, ctx))
        return true;
    char *stem = strdup(name);
    if (!stem)
        return false;
    bool found = false;
    for (unsigned k = 2; k < 1000000 && !found; k++) {
        char suffix[24];
        int sl = snprintf(suffix, sizeof suffix, "%s%u", sep, k);
        if ((size_t)sl + 2 > size) /* not even one byte of the name beside the number */
            break;
        size_t keep = strlen(stem);
        if (keep + (size_t)sl + 1 > size)
            keep = size - (size_t)sl - 1;
        snprintf(name, size, "%.*s%s", (int)keep, stem, suffix);
        found = !taken(name, ctx);
    }
    if (!found)
        snprintf(name, size, "%s", stem);
    free(stem);
    return found;
}

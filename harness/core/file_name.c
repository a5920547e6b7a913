/* File names made from foreign text (file_name.h). */
#include "file_name.h"

#include <stdio.h>
#include <string.h>

void fb_file_name_safe(char *s, const char *keep)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              (keep && strchr(keep, *s))))
            *s = '_';
}

void fb_file_name_unique(char *name, size_t size, const char *sep,
                         bool (*taken)(const char *name, void *ctx), void *ctx)
{
    char stem[256];

    if (size == 0 || !taken(name, ctx))
        return;
    snprintf(stem, sizeof stem, "%s", name);
    for (unsigned k = 2; taken(name, ctx) && k != 0; k++) {
        char suffix[24];
        int sl = snprintf(suffix, sizeof suffix, "%s%u", sep, k);
        size_t keep = strlen(stem);
        if (keep + (size_t)sl + 1 > size)
            keep = size > (size_t)sl + 1 ? size - (size_t)sl - 1 : 0;
        snprintf(name, size, "%.*s%s", (int)keep, stem, suffix);
    }
}

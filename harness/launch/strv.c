/* A growing, NULL-terminated array of owned strings (strv.h). */
#define _GNU_SOURCE
#include "strv.h"

#include <stdlib.h>
#include <string.h>

fb_status fb_strv_push(struct fb_strv *a, const char *s)
{
    char *copy;

    /* room for the string and the NULL that ends the array */
    if (a->n + 2 > a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        char **v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return FB_ERR_NOMEM;
        a->v = v;
        a->cap = cap;
    }
    if (!(copy = strdup(s)))
        return FB_ERR_NOMEM;
    a->v[a->n++] = copy;
    a->v[a->n] = NULL;
    return FB_OK;
}

void fb_strv_free(struct fb_strv *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    memset(a, 0, sizeof *a);
}

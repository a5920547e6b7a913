/* The collectives table (coll.h): every library fabricbench can reduce with, NCCL first, so
 * that `auto` and `list` see them in one order. */
#include "coll.h"

#include <string.h>

const struct fb_coll *const fb_colls[] = {&fb_coll_nccl, &fb_coll_mpi, NULL};

const struct fb_coll *fb_coll_find(const char *name)
{
    for (size_t i = 0; fb_colls[i]; i++)
        if (strcmp(fb_colls[i]->name, name) == 0)
            return fb_colls[i];
    return NULL;
}

/* Version numbers as people write them (versions.h). */
#include "versions.h"

#include <stdio.h>

void fb_versions_cuda_str(int version, char *buf, size_t len)
{
    if (version <= 0)
        snprintf(buf, len, "none");
    else
        snprintf(buf, len, "%d.%d", version / 1000, version % 1000 / 10);
}

void fb_versions_nccl_str(int code, char *buf, size_t len)
{
    /* NCCL 2.9 widened the code from major*1000+minor*100+patch to major*10000+minor*100+patch. */
    if (code <= 0)
        snprintf(buf, len, "not built");
    else if (code >= 10000)
        snprintf(buf, len, "%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
    else
        snprintf(buf, len, "%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
}

/* Stands in for NCCL in builds without it: never usable, and says why. */
#include "coll.h"

#include <stdio.h>

int fb_nccl_version_code(void) { return 0; }
const char *fb_nccl_library_path(void) { return ""; }
const char *fb_nccl_missing_why(void) { return "built without NCCL"; }

static bool stub_usable(const struct fb_backend *be, char *why, size_t whylen)
{
    (void)be;
    snprintf(why, whylen, "this fabricbench was built without NCCL (configure with -DFB_WITH_NCCL=ON)");
    return false;
}

const struct fb_coll fb_coll_nccl = {
    .name = "nccl",
    .built = false,
    .stream_ordered = false,
    .usable = stub_usable,
};

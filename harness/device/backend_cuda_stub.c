/* Stands in for the CUDA backend in builds without CUDA: it sees no GPU and says why. */
#include "backend.h"

#include <stdio.h>

static int stub_device_count(char *why, size_t whylen)
{
    snprintf(why, whylen, "this fabricbench was built without CUDA (configure with -DFB_WITH_CUDA=ON)");
    return 0;
}

static void stub_versions(int *driver, int *runtime)
{
    *driver = 0;
    *runtime = 0;
}

static fb_status stub_open(int device, struct fb_device_info *info)
{
    (void)device;
    (void)info;
    return FB_ERR_NOT_BUILT;
}

const struct fb_backend fb_backend_cuda = {
    .name = "cuda",
    .built = false,
    .measures = true,
    .device_count = stub_device_count,
    .versions = stub_versions,
    .open = stub_open,
};

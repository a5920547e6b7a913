/* A stand-in NVIDIA driver library (libcuda.so.1) that reports one device: put where the dynamic
 * loader finds it, it makes this machine look like one with a driver. binary_starts_without_driver
 * runs with it on the loader's path, so that the test's way of hiding a real driver (a private
 * mount namespace where every libcuda.so* is /dev/null) is exercised here too: if the stand-in is
 * not hidden, the CUDA runtime loads it and the checks of a driverless start fail. */
#include <stdlib.h>

int cuInit(unsigned flags);
int cuDriverGetVersion(int *version);
int cuDeviceGetCount(int *count);

int cuInit(unsigned flags)
{
    (void)flags;
    return 0;
}

/* $FAKE_CUDA_DRIVER_VERSION (the driver API's number: 12020 for CUDA 12.2), default 13000 */
int cuDriverGetVersion(int *version)
{
    const char *v = getenv("FAKE_CUDA_DRIVER_VERSION");

    *version = v && *v ? atoi(v) : 13000;
    return 0;
}

int cuDeviceGetCount(int *count)
{
    *count = 1;
    return 0;
}

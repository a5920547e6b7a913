/* A fake libnvidia-ml for telemetry's tests: the NVML entry points telemetry uses, answering
 * deterministic values for two GPUs, so the tests can check every figure that reaches
 * telemetry.csv and results.csv. Loaded through FB_NVML_LIBRARY; the values are documented in
 * tests/telemetry.sh, which checks them:
 *   device d (0 or 1), PCI bus id 00000000:3B:00.0 and 00000000:86:00.0;
 *   gpu utilization counts up by one per call on each device (0, 1, 2, ...; wraps after 100);
 *   memory utilization 25 + d %; memory used (d + 1) GiB; power 250.5 + d W (in mW);
 *   SM clock 1410 + d MHz, memory clock 1215 MHz; temperature 65 C on device 0, and
 *   NVML_ERROR_NOT_SUPPORTED on device 1 (a field NVML refuses: an empty cell);
 *   clock event reasons sw_power_cap (0x4), with hw_thermal (0x40) on device 1.
 * Built with FAKE_NO_POWER: no nvmlDeviceGetPowerUsage at all (a driver without it), and the
 * reasons under their pre-535 name nvmlDeviceGetCurrentClocksThrottleReasons only. */
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum { OK = 0, ERR_INVALID_ARGUMENT = 2, ERR_NOT_SUPPORTED = 3, ERR_NOT_FOUND = 6 };
enum { NDEV = 2 };

struct fake_device {
    int index;
};
static struct fake_device devices[NDEV] = {{0}, {1}};
static const unsigned bus[NDEV] = {0x3b, 0x86};
static unsigned util_calls[NDEV];

struct pci_info {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};
struct utilization {
    unsigned gpu, memory;
};
struct memory {
    unsigned long long total, free, used;
};

static struct fake_device *dev_of(void *h)
{
    for (int i = 0; i < NDEV; i++)
        if (h == &devices[i])
            return &devices[i];
    return NULL;
}

EXPORT int nvmlInit_v2(void) { return OK; }
EXPORT int nvmlShutdown(void) { return OK; }
EXPORT const char *nvmlErrorString(int rc)
{
    return rc == ERR_NOT_SUPPORTED ? "Not Supported" : rc == ERR_NOT_FOUND ? "Not Found" : "Error";
}
EXPORT int nvmlDeviceGetCount_v2(unsigned *n)
{
    *n = NDEV;
    return OK;
}
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h)
{
    if (i >= NDEV)
        return ERR_INVALID_ARGUMENT;
    *h = &devices[i];
    return OK;
}
/* Accepts domain:bus:device.function in hex, as NVML does ("0000:3b:00.0", "00000000:3B:00.0"). */
EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *id, void **h)
{
    unsigned domain, b, d, f;

    if (sscanf(id, "%x:%x:%x.%x", &domain, &b, &d, &f) != 4)
        return ERR_INVALID_ARGUMENT;
    for (int i = 0; i < NDEV; i++)
        if (domain == 0 && b == bus[i] && d == 0 && f == 0) {
            *h = &devices[i];
            return OK;
        }
    return ERR_NOT_FOUND;
}
EXPORT int nvmlDeviceGetIndex(void *h, unsigned *i)
{
    struct fake_device *d = dev_of(h);
    if (!d)
        return ERR_INVALID_ARGUMENT;
    *i = (unsigned)d->index;
    return OK;
}
EXPORT int nvmlDeviceGetPciInfo_v3(void *h, struct pci_info *p)
{
    struct fake_device *d = dev_of(h);
    if (!d)
        return ERR_INVALID_ARGUMENT;
    memset(p, 0, sizeof *p);
    p->bus = bus[d->index];
    snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02X:00.0", bus[d->index]);
    return OK;
}
EXPORT int nvmlDeviceGetUtilizationRates(void *h, struct utilization *u)
{
    struct fake_device *d = dev_of(h);
    if (!d)
        return ERR_INVALID_ARGUMENT;
    u->gpu = util_calls[d->index]++ % 101;
    u->memory = 25u + (unsigned)d->index;
    return OK;
}
EXPORT int nvmlDeviceGetMemoryInfo(void *h, struct memory *m)
{
    struct fake_device *d = dev_of(h);
    if (!d)
        return ERR_INVALID_ARGUMENT;
    m->total = 80ull << 30;
    m->used = (unsigned long long)(d->index + 1) << 30;
    m->free = m->total - m->used;
    return OK;
}
#ifndef FAKE_NO_POWER
EXPORT int nvmlDeviceGetPowerUsage(void *h, unsigned *mw)
{
    struct fake_device *d = dev_of(h);
    if (!d)
        return ERR_INVALID_ARGUMENT;
    *mw = 250500u + 1000u * (unsigned)d->index;
    return OK;
}
#endif
EXPORT int nvmlDeviceGetClockInfo(void *h, int type, unsigned *mhz)
{
    struct fake_device *d = dev_of(h);
    if (!d)
        return ERR_INVALID_ARGUMENT;
    if (type == 1) /* SM */
        *mhz = 1410u + (unsigned)d->index;
    else if (type == 2) /* memory */
        *mhz = 1215u;
    else
        return ERR_NOT_SUPPORTED;
    return OK;
}
EXPORT int nvmlDeviceGetTemperature(void *h, int sensor, unsigned *c)
{
    struct fake_device *d = dev_of(h);
    if (!d || sensor != 0)
        return ERR_INVALID_ARGUMENT;
    if (d->index == 1)
        return ERR_NOT_SUPPORTED;
    *c = 65;
    return OK;
}
static int reasons(void *h, unsigned long long *mask)
{
    struct fake_device *d = dev_of(h);
    if (!d)
        return ERR_INVALID_ARGUMENT;
    *mask = 0x4ull | (d->index == 1 ? 0x40ull : 0);
    return OK;
}
#ifndef FAKE_NO_POWER
EXPORT int nvmlDeviceGetCurrentClocksEventReasons(void *h, unsigned long long *mask)
{
    return reasons(h, mask);
}
#else
EXPORT int nvmlDeviceGetCurrentClocksThrottleReasons(void *h, unsigned long long *mask)
{
    return reasons(h, mask);
}
#endif

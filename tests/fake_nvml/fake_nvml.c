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
 * Health counters (soak): every device answers the values named in the file at
 * $FAKE_NVML_HEALTH, read again at each call, one "NAME VALUE" per line (absent file or name:
 * 0): ecc_corrected, ecc_uncorrected (nvmlDeviceGetTotalEccErrors, volatile), nvlink_replay,
 * nvlink_recovery, nvlink_crc_flit (nvmlDeviceGetNvLinkErrorCounter: links 0 and 1 answer, the
 * count on link 0; other links are not supported), xid (XID 79 critical-error events delivered
 * through nvmlEventSetWait_v2 until each device has delivered that many), throttle (bits
 * added to the clock event reasons). A test bumps them by rewriting the file during a run.
 * Built with FAKE_NO_POWER: no nvmlDeviceGetPowerUsage at all (a driver without it), and the
 * reasons under their pre-535 name nvmlDeviceGetCurrentClocksThrottleReasons only. */
#include <stdio.h>
#include <stdlib.h>
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
/* The value of NAME in $FAKE_NVML_HEALTH; 0 when absent. */
static unsigned long long health(const char *name)
{
    const char *path = getenv("FAKE_NVML_HEALTH");
    char key[64];
    unsigned long long v, found = 0;
    FILE *f;

    if (!path || !(f = fopen(path, "r")))
        return 0;
    while (fscanf(f, "%63s %llu", key, &v) == 2)
        if (strcmp(key, name) == 0)
            found = v;
    fclose(f);
    return found;
}

EXPORT int nvmlDeviceGetTotalEccErrors(void *h, int type, int counter, unsigned long long *n)
{
    if (!dev_of(h) || counter != 0 || type < 0 || type > 1)
        return ERR_INVALID_ARGUMENT;
    *n = health(type == 0 ? "ecc_corrected" : "ecc_uncorrected");
    return OK;
}
EXPORT int nvmlDeviceGetNvLinkErrorCounter(void *h, unsigned link, int counter,
                                           unsigned long long *n)
{
    static const char *const names[] = {"nvlink_replay", "nvlink_recovery", "nvlink_crc_flit"};
    if (!dev_of(h) || counter < 0 || counter > 2)
        return ERR_INVALID_ARGUMENT;
    if (link > 1)
        return ERR_NOT_SUPPORTED;
    *n = link == 0 ? health(names[counter]) : 0;
    return OK;
}

/* One event set holds the devices registered with it; each device delivers XID 79 until it
 * has delivered as many as the file's "xid". */
struct fake_event_set {
    int registered[NDEV];
};
struct event_data {
    void *device;
    unsigned long long type, data;
    unsigned gpu_instance, compute_instance;
};
static struct fake_event_set event_sets[8];
static int nsets;
static unsigned long long delivered[NDEV];

EXPORT int nvmlEventSetCreate(struct fake_event_set **set)
{
    if (nsets == 8)
        return ERR_NOT_SUPPORTED;
    *set = &event_sets[nsets++];
    memset(*set, 0, sizeof **set);
    return OK;
}
EXPORT int nvmlEventSetFree(struct fake_event_set *set)
{
    (void)set;
    return OK;
}
EXPORT int nvmlDeviceRegisterEvents(void *h, unsigned long long types, struct fake_event_set *set)
{
    struct fake_device *d = dev_of(h);
    if (!d || !set || !(types & 0x8))
        return ERR_INVALID_ARGUMENT;
    set->registered[d->index] = 1;
    return OK;
}
EXPORT int nvmlEventSetWait_v2(struct fake_event_set *set, struct event_data *e, unsigned ms)
{
    unsigned long long want = health("xid");
    (void)ms;
    for (int i = 0; i < NDEV; i++)
        if (set->registered[i] && delivered[i] < want) {
            delivered[i]++;
            memset(e, 0, sizeof *e);
            e->device = &devices[i];
            e->type = 0x8;
            e->data = 79;
            return OK;
        }
    return 10; /* NVML_ERROR_TIMEOUT */
}

static int reasons(void *h, unsigned long long *mask)
{
    struct fake_device *d = dev_of(h);
    if (!d)
        return ERR_INVALID_ARGUMENT;
    *mask = 0x4ull | (d->index == 1 ? 0x40ull : 0) | health("throttle");
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

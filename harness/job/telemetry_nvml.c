/* NVML for telemetry, loaded at run time. The few entry points used are declared here with
 * their C ABI (nvml.h is often not installed); each is looked up by name, its newer version
 * first, and one that is missing only leaves its field empty. */
#define _POSIX_C_SOURCE 200809L
#include "telemetry_nvml.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health.h"

/* ---- NVML's C ABI: return codes, handles and the structs the calls fill ---- */
enum { NVML_SUCCESS = 0 };
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_TEMPERATURE_GPU = 0 };
typedef int nvml_return;
typedef struct nvmlDevice_st *nvml_device;

struct nvml_utilization { /* nvmlUtilization_t */
    unsigned gpu, memory;
};
struct nvml_memory { /* nvmlMemory_t (version 1) */
    unsigned long long total, free, used;
};
struct nvml_event_data { /* nvmlEventData_t */
    nvml_device device;
    unsigned long long type, data;
    unsigned gpu_instance, compute_instance;
};
typedef struct nvmlEventSet_st *nvml_event_set;
enum { NVML_MEMORY_ERROR_CORRECTED = 0, NVML_MEMORY_ERROR_UNCORRECTED = 1, NVML_VOLATILE_ECC = 0 };
enum { NVML_EVENT_XID_CRITICAL = 0x8, NVML_NVLINK_MAX_LINKS = 18 };
/* clocks event reasons that mean trouble: hw slowdown, sw thermal, hw thermal, hw power brake */
enum { FB_NVML_BAD_REASONS = 0x8 | 0x20 | 0x40 | 0x80 };

struct nvml_pci_info { /* nvmlPciInfo_t, as the _v2/_v3 entry points fill it */
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};

struct fb_telemetry_nvml {
    void *lib;
    nvml_device dev;
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    const char *(*error_string)(nvml_return);
    nvml_return (*count)(unsigned *);
    nvml_return (*by_index)(unsigned, nvml_device *);
    nvml_return (*by_bus_id)(const char *, nvml_device *);
    nvml_return (*index)(nvml_device, unsigned *);
    nvml_return (*pci_info)(nvml_device, struct nvml_pci_info *);
    nvml_return (*utilization)(nvml_device, struct nvml_utilization *);
    nvml_return (*memory)(nvml_device, struct nvml_memory *);
    nvml_return (*power_mw)(nvml_device, unsigned *);
    nvml_return (*clock)(nvml_device, int, unsigned *);
    nvml_return (*temperature)(nvml_device, int, unsigned *);
    nvml_return (*reasons)(nvml_device, unsigned long long *);
    nvml_return (*ecc_total)(nvml_device, int, int, unsigned long long *);
    nvml_return (*nvlink_errors)(nvml_device, unsigned, int, unsigned long long *);
    nvml_return (*event_set_create)(nvml_event_set *);
    nvml_return (*event_set_free)(nvml_event_set);
    nvml_return (*register_events)(nvml_device, unsigned long long, nvml_event_set);
    nvml_return (*event_wait)(nvml_event_set, struct nvml_event_data *, unsigned);
    nvml_event_set events; /* XID events of the chosen GPU, registered on first need */
    bool events_tried;
    uint64_t xid_count; /* events drained so far */
    double xid_last;
};

const char *fb_telemetry_nvml_library(void)
{
    const char *env = getenv("FB_NVML_LIBRARY");
    return env && *env ? env : "libnvidia-ml.so.1";
}

/* The first of `names` (NULL-terminated) the library has, into *fn; NULL when none. ISO C has
 * no void* to function pointer conversion; POSIX guarantees this one works (dlsym). */
static void resolve(void *lib, const char *const *names, void *fn, size_t fnsize)
{
    void *p = NULL;

    for (; *names && !p; names++)
        p = dlsym(lib, *names);
    memset(fn, 0, fnsize);
    if (p)
        memcpy(fn, &p, sizeof p);
}

#define RESOLVE(n, field, ...)                                                          \
    do {                                                                                \
        static const char *const names_[] = {__VA_ARGS__, NULL};                        \
        resolve((n)->lib, names_, &(n)->field, sizeof (n)->field);                      \
    } while (0)

static const char *nvml_error(const struct fb_telemetry_nvml *n, nvml_return rc)
{
    const char *s = n->error_string ? n->error_string(rc) : NULL;
    return s ? s : "NVML error";
}

struct fb_telemetry_nvml *fb_telemetry_nvml_open(bool *missing, char *why, size_t whylen)
{
    const char *path = fb_telemetry_nvml_library();
    struct fb_telemetry_nvml *n = calloc(1, sizeof *n);
    nvml_return rc;

    *missing = false;
    if (!n) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    if (!(n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        *missing = true;
        snprintf(why, whylen, "NVML not found (%s)", path);
        free(n);
        return NULL;
    }
    RESOLVE(n, init, "nvmlInit_v2", "nvmlInit");
    RESOLVE(n, shutdown, "nvmlShutdown");
    RESOLVE(n, error_string, "nvmlErrorString");
    RESOLVE(n, count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    RESOLVE(n, by_index, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    RESOLVE(n, by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
    RESOLVE(n, index, "nvmlDeviceGetIndex");
    RESOLVE(n, pci_info, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2");
    RESOLVE(n, utilization, "nvmlDeviceGetUtilizationRates");
    RESOLVE(n, memory, "nvmlDeviceGetMemoryInfo");
    RESOLVE(n, power_mw, "nvmlDeviceGetPowerUsage");
    RESOLVE(n, clock, "nvmlDeviceGetClockInfo");
    RESOLVE(n, temperature, "nvmlDeviceGetTemperature");
    /* "clocks event reasons" is the name since driver 535; the older one answers the same. */
    RESOLVE(n, reasons, "nvmlDeviceGetCurrentClocksEventReasons",
            "nvmlDeviceGetCurrentClocksThrottleReasons");
    RESOLVE(n, ecc_total, "nvmlDeviceGetTotalEccErrors");
    RESOLVE(n, nvlink_errors, "nvmlDeviceGetNvLinkErrorCounter");
    RESOLVE(n, event_set_create, "nvmlEventSetCreate");
    RESOLVE(n, event_set_free, "nvmlEventSetFree");
    RESOLVE(n, register_events, "nvmlDeviceRegisterEvents");
    RESOLVE(n, event_wait, "nvmlEventSetWait_v2", "nvmlEventSetWait");
    if (!n->init || !n->shutdown) {
        snprintf(why, whylen, "%s lacks nvmlInit or nvmlShutdown: not NVML", path);
        goto fail;
    }
    if ((rc = n->init()) != NVML_SUCCESS) {
        snprintf(why, whylen, "nvmlInit failed: %s", nvml_error(n, rc));
        goto fail;
    }
    return n;
fail:
    dlclose(n->lib);
    free(n);
    return NULL;
}

bool fb_telemetry_nvml_pick(struct fb_telemetry_nvml *n, const char *bus_id, int local_rank,
                            int *index, char *bus_out, size_t buslen, char *why, size_t whylen)
{
    struct nvml_pci_info pci;
    unsigned count = 0, idx;
    nvml_return rc;

    *index = -1;
    snprintf(bus_out, buslen, "%s", bus_id ? bus_id : "");
    if (bus_id && *bus_id) {
        /* CUDA's and NVML's device orders differ (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER):
         * only the bus id names the same GPU in both. */
        if (!n->by_bus_id) {
            snprintf(why, whylen, "NVML lacks nvmlDeviceGetHandleByPciBusId");
            return false;
        }
        if ((rc = n->by_bus_id(bus_id, &n->dev)) != NVML_SUCCESS) {
            snprintf(why, whylen, "NVML does not know GPU %s: %s", bus_id, nvml_error(n, rc));
            return false;
        }
    } else {
        if (!n->count || !n->by_index) {
            snprintf(why, whylen, "NVML lacks nvmlDeviceGetCount or nvmlDeviceGetHandleByIndex");
            return false;
        }
        if ((rc = n->count(&count)) != NVML_SUCCESS || count == 0) {
            snprintf(why, whylen, "NVML sees no GPU%s%s", rc != NVML_SUCCESS ? ": " : "",
                     rc != NVML_SUCCESS ? nvml_error(n, rc) : "");
            return false;
        }
        idx = (unsigned)local_rank % count;
        if ((rc = n->by_index(idx, &n->dev)) != NVML_SUCCESS) {
            snprintf(why, whylen, "NVML device %u: %s", idx, nvml_error(n, rc));
            return false;
        }
        *index = (int)idx;
    }
    if (n->index && n->index(n->dev, &idx) == NVML_SUCCESS)
        *index = (int)idx;
    memset(&pci, 0, sizeof pci);
    if (n->pci_info && n->pci_info(n->dev, &pci) == NVML_SUCCESS) {
        pci.bus_id[sizeof pci.bus_id - 1] = '\0';
        snprintf(bus_out, buslen, "%s", pci.bus_id);
    }
    return true;
}

void fb_telemetry_nvml_read(struct fb_telemetry_nvml *n, double v[FB_TELEMETRY_NFIELDS])
{
    struct nvml_utilization u;
    struct nvml_memory m;
    unsigned x;
    unsigned long long mask;

    for (int i = 0; i < FB_TELEMETRY_NFIELDS; i++)
        v[i] = NAN;
    if (n->utilization && n->utilization(n->dev, &u) == NVML_SUCCESS) {
        v[FB_TELEMETRY_GPU_UTIL] = u.gpu;
        v[FB_TELEMETRY_MEM_UTIL] = u.memory;
    }
    if (n->memory && n->memory(n->dev, &m) == NVML_SUCCESS)
        v[FB_TELEMETRY_MEM_USED] = (double)m.used;
    if (n->power_mw && n->power_mw(n->dev, &x) == NVML_SUCCESS)
        v[FB_TELEMETRY_POWER] = x / 1000.0; /* NVML answers milliwatts */
    if (n->clock && n->clock(n->dev, NVML_CLOCK_SM, &x) == NVML_SUCCESS)
        v[FB_TELEMETRY_SM_CLOCK] = x;
    if (n->clock && n->clock(n->dev, NVML_CLOCK_MEM, &x) == NVML_SUCCESS)
        v[FB_TELEMETRY_MEM_CLOCK] = x;
    if (n->temperature && n->temperature(n->dev, NVML_TEMPERATURE_GPU, &x) == NVML_SUCCESS)
        v[FB_TELEMETRY_TEMP] = x;
    if (n->reasons && n->reasons(n->dev, &mask) == NVML_SUCCESS)
        v[FB_TELEMETRY_THROTTLE] = (double)mask; /* exact: the defined bits are far below 2^53 */
}

/* XID events since the first call: registered then, drained now without waiting. false when
 * NVML cannot deliver them (no event calls, or the GPU refuses). */
static bool drain_xid(struct fb_telemetry_nvml *n)
{
    struct nvml_event_data e;

    if (!n->events_tried) {
        n->events_tried = true;
        if (!n->event_set_create || !n->register_events || !n->event_wait ||
            n->event_set_create(&n->events) != NVML_SUCCESS)
            n->events = NULL;
        else if (n->register_events(n->dev, NVML_EVENT_XID_CRITICAL, n->events) !=
                 NVML_SUCCESS) {
            if (n->event_set_free)
                n->event_set_free(n->events);
            n->events = NULL;
        }
    }
    if (!n->events)
        return false;
    /* bounded: a flood of events is read over several calls */
    for (int i = 0; i < 1000 && n->event_wait(n->events, &e, 0) == NVML_SUCCESS; i++)
        if (e.type & NVML_EVENT_XID_CRITICAL) {
            n->xid_count++;
            n->xid_last = (double)e.data;
        }
    return true;
}

fb_status fb_telemetry_nvml_health(struct fb_telemetry_nvml *n, const char *device,
                                   struct fb_health_set *set)
{
    static const char *const links[] = {"nvlink_replay", "nvlink_recovery", "nvlink_crc_flit"};
    unsigned long long v, mask;
    unsigned mhz;
    fb_status st = FB_OK;

    if (n->ecc_total &&
        n->ecc_total(n->dev, NVML_MEMORY_ERROR_CORRECTED, NVML_VOLATILE_ECC, &v) == NVML_SUCCESS)
        st = fb_health_add_count(set, "nvml", device, "ecc_volatile_corrected", v, true);
    if (st == FB_OK && n->ecc_total &&
        n->ecc_total(n->dev, NVML_MEMORY_ERROR_UNCORRECTED, NVML_VOLATILE_ECC, &v) ==
            NVML_SUCCESS)
        st = fb_health_add_count(set, "nvml", device, "ecc_volatile_uncorrected", v, true);
    if (st == FB_OK && drain_xid(n)) {
        st = fb_health_add_count(set, "nvml", device, "xid_events", n->xid_count, true);
        if (st == FB_OK && n->xid_count > 0)
            st = fb_health_add(set, "nvml", device, "xid_last", n->xid_last, NAN, false);
    }
    for (int k = 0; k < 3 && st == FB_OK && n->nvlink_errors; k++) {
        uint64_t sum = 0;
        bool any = false;
        for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++)
            if (n->nvlink_errors(n->dev, l, k, &v) == NVML_SUCCESS) {
                sum += v; /* modulo 2^64, as each link's counter itself wraps */
                any = true;
            }
        if (any)
            st = fb_health_add_count(set, "nvml", device, links[k], sum, true);
    }
    if (st == FB_OK && n->reasons && n->reasons(n->dev, &mask) == NVML_SUCCESS)
        st = fb_health_add_mask(set, "nvml", device, "throttle_bad_reasons",
                                 mask & FB_NVML_BAD_REASONS, true);
    if (st == FB_OK && n->clock && n->clock(n->dev, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS)
        st = fb_health_add(set, "nvml", device, "sm_clock_mhz", mhz, NAN, false);
    return st;
}

void fb_telemetry_nvml_close(struct fb_telemetry_nvml *n)
{
    if (!n)
        return;
    if (n->events && n->event_set_free)
        n->event_set_free(n->events);
    n->shutdown();
    dlclose(n->lib);
    free(n);
}

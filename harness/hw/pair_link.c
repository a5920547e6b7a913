/* The link between two ranks of one node: the PCI path between two GPUs from hwloc's tree, NVLink
 * from hwloc's NVLink distances or from NVML (dlopen'ed, never linked: the binary must start
 * without a driver), and the package relation between two CPU bindings. */
#define _GNU_SOURCE
#include "pair_link.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "topo.h"

const char *fb_pair_link_name(enum fb_link l)
{
    switch (l) {
    case FB_LINK_UNKNOWN: return "unknown";
    case FB_LINK_SAME_DEVICE: return "same-gpu";
    case FB_LINK_NVLINK: return "nvlink";
    case FB_LINK_PCIE_SWITCH: return "pcie-switch";
    case FB_LINK_HOST_BRIDGE: return "host-bridge";
    case FB_LINK_SOCKET: return "socket";
    case FB_LINK_CROSS_SOCKET: return "cross-socket";
    case FB_LINK_NETWORK: return "network";
    }
    return "????";
}

struct pci_addr {
    unsigned long domain, bus, dev, fn;
};

/* Up to 8 hex digits; strtoul would also take blanks, signs and "0x", which are no bus id. */
static bool hex_field(const char **p, unsigned long max, unsigned long *out)
{
    unsigned long v = 0;
    int n = 0;

    for (; isxdigit((unsigned char)**p) && n < 8; (*p)++, n++) {
        int c = tolower((unsigned char)**p);
        v = v * 16 + (unsigned long)(isdigit(c) ? c - '0' : c - 'a' + 10);
    }
    *out = v;
    return n > 0 && !isxdigit((unsigned char)**p) && v <= max;
}

/* "[domain:]bus:dev.fn". Parsed to numbers so "0000:3B:00.0", "00000000:3b:00.0" and "3b:00.0"
 * are one device. */
static bool pci_parse(const char *s, struct pci_addr *a)
{
    unsigned long f1, f2;

    if (!s || !hex_field(&s, 0xffffffffUL, &f1) || *s++ != ':' || !hex_field(&s, 0xff, &f2))
        return false;
    a->domain = 0;
    if (*s == ':') {
        s++;
        a->domain = f1;
        a->bus = f2;
        if (!hex_field(&s, 0x1f, &a->dev))
            return false;
    } else {
        if (f1 > 0xff || f2 > 0x1f)
            return false;
        a->bus = f1;
        a->dev = f2;
    }
    return *s++ == '.' && hex_field(&s, 7, &a->fn) && *s == '\0';
}

static bool pci_same(const struct pci_addr *a, const struct pci_addr *b)
{
    return a->domain == b->domain && a->bus == b->bus && a->dev == b->dev && a->fn == b->fn;
}

/* The PCI device behind a distances entry: NVML's matrix lists GPUs as their OS devices
 * ("nvml0") and NVSwitches as PCI devices. NULL for CPU-side entries (POWER's packages). */
static hwloc_obj_t pci_of(hwloc_obj_t o)
{
    while (o && o->type == HWLOC_OBJ_OS_DEVICE)
        o = o->parent;
    return o && o->type == HWLOC_OBJ_PCI_DEVICE ? o : NULL;
}

static bool is_nvswitch(hwloc_obj_t o)
{
    o = pci_of(o);
    return o && o->subtype && strcmp(o->subtype, "NVSwitch") == 0;
}

/* Whether one NVLinkBandwidth matrix links a and b, directly or both to some NVSwitch. Any
 * NVSwitch, not a shared one: the DGX-2 matrix links each baseboard's 8 GPUs to its own 6
 * switches and leaves out the trunk between the boards, yet all 16 GPUs reach each other. */
static bool matrix_links(const struct hwloc_distances_s *d, hwloc_obj_t a, hwloc_obj_t b)
{
    unsigned n = d->nbobjs, ia = n, ib = n;
    bool a_sw = false, b_sw = false;

    for (unsigned i = 0; i < n; i++) {
        hwloc_obj_t p = pci_of(d->objs[i]);
        if (p == a)
            ia = i;
        else if (p == b)
            ib = i;
    }
    if (ia == n || ib == n)
        return false;
    if (d->values[ia * n + ib] > 0 || d->values[ib * n + ia] > 0)
        return true;
    for (unsigned k = 0; k < n; k++) {
        if (!is_nvswitch(d->objs[k]))
            continue;
        a_sw = a_sw || d->values[ia * n + k] > 0 || d->values[k * n + ia] > 0;
        b_sw = b_sw || d->values[ib * n + k] > 0 || d->values[k * n + ib] > 0;
    }
    return a_sw && b_sw;
}

static bool hwloc_nvlinked(hwloc_topology_t topo, hwloc_obj_t a, hwloc_obj_t b)
{
    struct hwloc_distances_s *d[4];
    unsigned nr = 4;
    bool linked = false;

    if (hwloc_distances_get_by_name(topo, "NVLinkBandwidth", &nr, d, 0) != 0)
        return false;
    /* On return nr counts all matrices, filled or not. */
    for (unsigned i = 0; i < nr && i < 4; i++) {
        linked = linked || matrix_links(d[i], a, b);
        hwloc_distances_release(topo, d[i]);
    }
    return linked;
}

/* The one package whose CPUs include all of set; NULL when the set is empty or spans several. */
static hwloc_obj_t package_of(hwloc_topology_t topo, hwloc_const_cpuset_t set)
{
    hwloc_obj_t pkg = NULL;

    if (!set || hwloc_bitmap_iszero(set))
        return NULL;
    while ((pkg = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pkg)))
        if (hwloc_bitmap_isincluded(set, pkg->cpuset))
            return pkg;
    return NULL;
}

/* hwloc_get_common_ancestor_obj() compares depths, which I/O objects do not have. */
static hwloc_obj_t common_ancestor(hwloc_obj_t a, hwloc_obj_t b)
{
    for (hwloc_obj_t x = a; x; x = x->parent)
        for (hwloc_obj_t y = b; y; y = y->parent)
            if (x == y)
                return x;
    return NULL;
}

static enum fb_link pci_path(hwloc_topology_t topo, hwloc_obj_t a, hwloc_obj_t b)
{
    hwloc_obj_t up = common_ancestor(a, b), pa, pb;

    if (!up)
        return FB_LINK_UNKNOWN;
    if (up->type == HWLOC_OBJ_BRIDGE)
        return up->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST ? FB_LINK_HOST_BRIDGE
                                                                       : FB_LINK_PCIE_SWITCH;
    if (hwloc_obj_type_is_io(up->type))
        return FB_LINK_UNKNOWN;
    /* Different host bridges: where each attaches to the CPU side decides. */
    pa = package_of(topo, hwloc_get_non_io_ancestor_obj(topo, a)->cpuset);
    pb = package_of(topo, hwloc_get_non_io_ancestor_obj(topo, b)->cpuset);
    if (!pa || !pb)
        return FB_LINK_UNKNOWN;
    return pa == pb ? FB_LINK_SOCKET : FB_LINK_CROSS_SOCKET;
}

enum fb_link fb_pair_link_gpu(struct fb_topo *t, const char *busid_a, const char *busid_b,
                              int nvlinks)
{
    hwloc_topology_t topo = fb_topo_hwloc(t);
    struct pci_addr pa, pb;
    hwloc_obj_t a, b;

    if (!pci_parse(busid_a, &pa) || !pci_parse(busid_b, &pb))
        return FB_LINK_UNKNOWN;
    if (pci_same(&pa, &pb))
        return FB_LINK_SAME_DEVICE;
    /* NVML saw the links on this very machine; no topology is needed to believe it. */
    if (nvlinks > 0)
        return FB_LINK_NVLINK;
    if (!topo ||
        !(a = hwloc_get_pcidev_by_busid(topo, (unsigned)pa.domain, (unsigned)pa.bus,
                                        (unsigned)pa.dev, (unsigned)pa.fn)) ||
        !(b = hwloc_get_pcidev_by_busid(topo, (unsigned)pb.domain, (unsigned)pb.bus,
                                        (unsigned)pb.dev, (unsigned)pb.fn)))
        return FB_LINK_UNKNOWN;
    if (hwloc_nvlinked(topo, a, b))
        return FB_LINK_NVLINK;
    return pci_path(topo, a, b);
}

/* hwloc's list parser takes "0-" (every CPU onwards), "3-1", " 5", "0x3" and "-1"; a binding
 * that reads like those is a bug upstream, not a set of CPUs. CPU numbers are capped so a typo
 * cannot make hwloc allocate a bitmap of gigabytes. */
enum { CPU_MAX = 1 << 20 };

static bool cpu_list_valid(const char *s)
{
    if (!s || !*s)
        return false;
    for (;;) {
        char *end;
        unsigned long lo, hi;

        if (!isdigit((unsigned char)*s))
            return false;
        lo = hi = strtoul(s, &end, 10);
        s = end;
        if (*s == '-') {
            if (!isdigit((unsigned char)*++s))
                return false;
            hi = strtoul(s, &end, 10);
            s = end;
        }
        if (hi < lo || hi >= CPU_MAX)
            return false;
        if (*s == '\0')
            return true;
        if (*s++ != ',')
            return false;
    }
}

/* The package holding every CPU of the list string s; NULL when none does or s is no list. */
static hwloc_obj_t package_of_list(hwloc_topology_t topo, const char *s)
{
    hwloc_bitmap_t set;
    hwloc_obj_t pkg = NULL;

    if (!cpu_list_valid(s) || !(set = hwloc_bitmap_alloc()))
        return NULL;
    if (hwloc_bitmap_list_sscanf(set, s) == 0)
        pkg = package_of(topo, set);
    hwloc_bitmap_free(set);
    return pkg;
}

enum fb_link fb_pair_link_cpu(struct fb_topo *t, const char *cpus_a, const char *cpus_b)
{
    hwloc_topology_t topo = fb_topo_hwloc(t);
    hwloc_obj_t pa, pb;

    if (!topo || !(pa = package_of_list(topo, cpus_a)) || !(pb = package_of_list(topo, cpus_b)))
        return FB_LINK_UNKNOWN;
    return pa == pb ? FB_LINK_SOCKET : FB_LINK_CROSS_SOCKET;
}

/* ---- NVML, declared here with its C ABI (nvml.h is often not installed) ---- */

enum { NVML_SUCCESS = 0, NVML_FEATURE_ENABLED = 1, NVML_NVLINK_MAX_LINKS = 18 /* NVML 12 */ };
enum { NVML_NVLINK_DEVICE_TYPE_GPU = 0, NVML_NVLINK_DEVICE_TYPE_SWITCH = 2,
       NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xff };
typedef int nvml_return;
typedef struct nvmlDevice_st *nvml_device;
struct nvml_pci_info { /* nvmlPciInfo_t, the layout the _v2/_v3 entry points fill */
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32]; /* "00000000:3B:00.0" */
};

struct nvml {
    void *lib;
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    const char *(*error_string)(nvml_return);
    nvml_return (*by_bus_id)(const char *, nvml_device *);
    nvml_return (*link_state)(nvml_device, unsigned, int *);
    nvml_return (*remote_pci)(nvml_device, unsigned, struct nvml_pci_info *);
    nvml_return (*remote_type)(nvml_device, unsigned, int *); /* NULL in older drivers */
    nvml_return (*name)(nvml_device, char *, unsigned);        /* NULL when missing */
};

/* Resolves the entry points; false with why filled when the library or one of them is missing. */
static bool nvml_open(struct nvml *n, char *why, size_t whylen)
{
    static const char *const names[] = {"nvmlInit_v2", "nvmlShutdown", "nvmlErrorString",
                                        "nvmlDeviceGetHandleByPciBusId_v2",
                                        "nvmlDeviceGetNvLinkState",
                                        "nvmlDeviceGetNvLinkRemotePciInfo_v2"};
    void *sym[sizeof names / sizeof names[0]];
    const char *err;

    memset(n, 0, sizeof *n);
    if (!(n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL))) {
        err = dlerror();
        snprintf(why, whylen, "no NVML: %s", err ? err : "cannot load libnvidia-ml.so.1");
        return false;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(sym[i] = dlsym(n->lib, names[i]))) {
            snprintf(why, whylen, "libnvidia-ml.so.1 lacks %s: the driver is too old", names[i]);
            dlclose(n->lib);
            n->lib = NULL;
            return false;
        }
    }
    /* ISO C has no void* to function pointer conversion; POSIX guarantees it works (dlsym). */
    memcpy(&n->init, &sym[0], sizeof sym[0]);
    memcpy(&n->shutdown, &sym[1], sizeof sym[1]);
    memcpy(&n->error_string, &sym[2], sizeof sym[2]);
    memcpy(&n->by_bus_id, &sym[3], sizeof sym[3]);
    memcpy(&n->link_state, &sym[4], sizeof sym[4]);
    memcpy(&n->remote_pci, &sym[5], sizeof sym[5]);
    if ((sym[0] = dlsym(n->lib, "nvmlDeviceGetNvLinkRemoteDeviceType")))
        memcpy(&n->remote_type, &sym[0], sizeof sym[0]);
    if ((sym[0] = dlsym(n->lib, "nvmlDeviceGetName")))
        memcpy(&n->name, &sym[0], sizeof sym[0]);
    return true;
}

/* Active links of dev: to the peer (when peer is not NULL), to NVSwitches, and each GPU at the
 * other end of one counted in g (when g is not NULL). */
static void nvml_census(const struct nvml *n, nvml_device dev, const struct pci_addr *peer,
                        int *to_peer, int *to_switch, struct fb_nvml_gpu *g)
{
    *to_peer = *to_switch = 0;
    for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
        int active = 0, type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
        struct nvml_pci_info pci;
        struct pci_addr remote;

        /* Links past the GPU's own count answer an error: skip, not stop (they need not be
         * numbered densely). */
        if (n->link_state(dev, l, &active) != NVML_SUCCESS || active != NVML_FEATURE_ENABLED)
            continue;
        if (n->remote_type && n->remote_type(dev, l, &type) != NVML_SUCCESS)
            type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
        if (type == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
            (*to_switch)++;
            continue;
        }
        /* An IBM NPU is the POWER CPU's end of a CPU-GPU link. */
        if (type != NVML_NVLINK_DEVICE_TYPE_GPU && type != NVML_NVLINK_DEVICE_TYPE_UNKNOWN)
            continue;
        memset(&pci, 0, sizeof pci);
        if (n->remote_pci(dev, l, &pci) != NVML_SUCCESS)
            continue;
        pci.bus_id[sizeof pci.bus_id - 1] = '\0';
        if (!pci_parse(pci.bus_id, &remote))
            continue;
        if (peer && pci_same(&remote, peer))
            (*to_peer)++;
        if (g) {
            int k = 0;
            while (k < g->npeers && strcmp(g->peer[k].bus, pci.bus_id) != 0)
                k++;
            if (k == g->npeers && k < FB_NVML_PEERS) {
                snprintf(g->peer[k].bus, sizeof g->peer[k].bus, "%s", pci.bus_id);
                g->peer[k].links = 0;
                g->npeers++;
            }
            if (k < g->npeers)
                g->peer[k].links++;
        }
    }
}

int fb_pair_link_nvlinks(const char *busid_a, const char *busid_b, char *why, size_t whylen)
{
    struct pci_addr pa, pb;
    struct nvml n;
    nvml_device da, db;
    char ida[32], idb[32];
    nvml_return rc;
    int links = -1, a_peer, a_sw, b_peer, b_sw;
    const char *bad = NULL, *msg;
    char scratch[1];

    if (!why || whylen == 0) {
        why = scratch;
        whylen = sizeof scratch;
    }
    why[0] = '\0';
    if (!pci_parse(busid_a, &pa))
        bad = busid_a ? busid_a : "(null)";
    else if (!pci_parse(busid_b, &pb))
        bad = busid_b ? busid_b : "(null)";
    if (bad) {
        snprintf(why, whylen, "malformed PCI bus id '%s'", bad);
        return -1;
    }
    if (pci_same(&pa, &pb))
        return 0;
    if (!nvml_open(&n, why, whylen))
        return -1;
    if ((rc = n.init()) != NVML_SUCCESS) {
        msg = n.error_string(rc);
        snprintf(why, whylen, "NVML does not start: %s", msg ? msg : "unknown error");
        dlclose(n.lib);
        return -1;
    }
    /* NVML's own spelling, so its parser sees no surprise. */
    snprintf(ida, sizeof ida, "%08lX:%02lX:%02lX.%lX", pa.domain, pa.bus, pa.dev, pa.fn);
    snprintf(idb, sizeof idb, "%08lX:%02lX:%02lX.%lX", pb.domain, pb.bus, pb.dev, pb.fn);
    if ((rc = n.by_bus_id(ida, &da)) != NVML_SUCCESS)
        bad = busid_a;
    else if ((rc = n.by_bus_id(idb, &db)) != NVML_SUCCESS)
        bad = busid_b;
    if (bad) {
        msg = n.error_string(rc);
        snprintf(why, whylen, "GPU %s is not known to NVML: %s", bad, msg ? msg : "unknown error");
        goto out;
    }
    nvml_census(&n, da, &pb, &a_peer, &a_sw, NULL);
    nvml_census(&n, db, &pa, &b_peer, &b_sw, NULL);
    links = a_peer + (a_sw > 0 && b_sw > 0 ? a_sw : 0);
out:
    n.shutdown();
    dlclose(n.lib);
    return links;
}

bool fb_pair_link_nvml_gpus(int count, const char *const busids[], struct fb_nvml_gpu out[],
                            bool known[], char *why, size_t whylen)
{
    struct nvml n;
    nvml_return rc;
    const char *msg;

    for (int i = 0; i < count; i++) {
        memset(&out[i], 0, sizeof out[i]);
        known[i] = false;
    }
    if (!nvml_open(&n, why, whylen))
        return false;
    if ((rc = n.init()) != NVML_SUCCESS) {
        msg = n.error_string(rc);
        snprintf(why, whylen, "NVML does not start: %s", msg ? msg : "unknown error");
        dlclose(n.lib);
        return false;
    }
    /* one NVML session for every GPU: starting NVML is slow on a large node */
    for (int i = 0; i < count; i++) {
        struct pci_addr pa;
        nvml_device dev;
        char id[32];
        int none, sw;

        if (!pci_parse(busids[i], &pa))
            continue;
        snprintf(id, sizeof id, "%08lX:%02lX:%02lX.%lX", pa.domain, pa.bus, pa.dev, pa.fn);
        if (n.by_bus_id(id, &dev) != NVML_SUCCESS)
            continue;
        if (n.name && n.name(dev, out[i].name, sizeof out[i].name) != NVML_SUCCESS)
            out[i].name[0] = '\0';
        out[i].name[sizeof out[i].name - 1] = '\0';
        nvml_census(&n, dev, NULL, &none, &sw, &out[i]);
        out[i].to_switch = sw;
        known[i] = true;
    }
    n.shutdown();
    dlclose(n.lib);
    return true;
}

/* hwloc behind fabricbench's topology questions: machine counts, PCI locality, this process's
 * binding and the GPU-binding verdict. Everything goes through hwloc (never /sys by hand) so the
 * same code answers for this machine and for recorded XML topologies in the tests. */
#define _GNU_SOURCE
#include "topo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "log.h"

struct fb_topo {
    hwloc_topology_t topo;
    bool this_system;
};

/* hwloc components left out of every load (fb_topo_load). */
static const char *const unused_components[] = {"opencl", "gl"};

void fb_topo_plugins_prepare(void)
{
    if (!getenv("HWLOC_PLUGINS_BLACKLIST"))
        (void)setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_opencl,hwloc_gl", 0);
}

fb_status fb_topo_load(struct fb_topo **out, const char *xml_path)
{
    struct fb_topo *t = NULL;
    fb_status st = FB_OK;
    unsigned api = hwloc_get_api_version();

    *out = NULL;
    /* The library loaded at run time must speak the ABI we compiled against (hwloc's own
     * advice): a major mismatch gives wrong answers, not errors. */
    if ((api >> 16) != (HWLOC_API_VERSION >> 16)) {
        fb_error("hwloc library API %u.x does not match the headers fabricbench was built with "
                 "(%u.x): rebuild against the installed hwloc",
                 api >> 16, (unsigned)HWLOC_API_VERSION >> 16);
        st = FB_ERR_UNSUPPORTED;
        goto out;
    }
    if (!(t = calloc(1, sizeof *t))) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    fb_topo_plugins_prepare(); /* done by main() already, before MPI (a no-op then) */
    if (hwloc_topology_init(&t->topo) != 0) {
        t->topo = NULL;
        st = FB_ERR_NOMEM;
        goto out;
    }
    /* I/O objects are filtered out by default; GPUs and NICs are what locality is about. */
    hwloc_topology_set_io_types_filter(t->topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    /* PCI devices are found by the pci component. The OpenCL and OpenGL components only add OS
     * devices under them, which nothing here reads, and their discovery runs the OpenCL ICD
     * loader and Xlib on the calling thread: after that, LeakSanitizer's exit check of a soak
     * rank crashed in its scan of thread-local storage on Debian 12 (docs/sanitizers.md). A
     * component that is not installed is no error. */
    for (size_t i = 0; i < sizeof unused_components / sizeof *unused_components; i++)
        (void)hwloc_topology_set_components(t->topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                            unused_components[i]);
    if (xml_path && hwloc_topology_set_xml(t->topo, xml_path) != 0) {
        fb_error("cannot use hwloc XML '%s': %s", xml_path, strerror(errno));
        st = FB_ERR_IO;
        goto out;
    }
    if (hwloc_topology_load(t->topo) != 0) {
        if (xml_path)
            fb_error("cannot load hwloc XML '%s': %s", xml_path, strerror(errno));
        else
            fb_error("cannot discover this machine's topology with hwloc: %s", strerror(errno));
        st = FB_ERR_IO;
        goto out;
    }
    t->this_system = hwloc_topology_is_thissystem(t->topo) != 0;
    *out = t;
    t = NULL;
out:
    fb_topo_free(t);
    return st;
}

void fb_topo_free(struct fb_topo *t)
{
    if (!t)
        return;
    if (t->topo)
        hwloc_topology_destroy(t->topo);
    free(t);
}

bool fb_topo_is_this_system(const struct fb_topo *t) { return t && t->this_system; }

struct hwloc_topology *fb_topo_hwloc(struct fb_topo *t) { return t ? t->topo : NULL; }

static int count_type(hwloc_topology_t topo, hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(topo, type);
    return n > 0 ? n : 0;
}

/* The largest data or unified cache object: the one a buffer must outgrow before a copy reads
 * memory rather than cache. One object's size, not the machine's total: a rank's buffer lives
 * in its own package's L3. Instruction caches are left out. */
static unsigned long long largest_cache(hwloc_topology_t topo)
{
    unsigned long long most = 0;

    for (hwloc_obj_type_t type = HWLOC_OBJ_L1CACHE; type <= HWLOC_OBJ_L5CACHE; type++) {
        int n = hwloc_get_nbobjs_by_type(topo, type);
        for (int i = 0; i < n; i++) {
            hwloc_obj_t c = hwloc_get_obj_by_type(topo, type, (unsigned)i);
            if (c && c->attr && c->attr->cache.type != HWLOC_OBJ_CACHE_INSTRUCTION &&
                c->attr->cache.size > most)
                most = (unsigned long long)c->attr->cache.size;
        }
    }
    return most;
}

void fb_topo_summary(struct fb_topo *t, struct fb_topo_summary *out)
{
    hwloc_obj_t pkg, root = hwloc_get_root_obj(t->topo);
    const char *model, *version;
    size_t len;

    memset(out, 0, sizeof *out);
    out->sockets = count_type(t->topo, HWLOC_OBJ_PACKAGE);
    out->numa_nodes = count_type(t->topo, HWLOC_OBJ_NUMANODE);
    out->cores = count_type(t->topo, HWLOC_OBJ_CORE);
    out->pus = count_type(t->topo, HWLOC_OBJ_PU);
    out->memory_bytes = (unsigned long long)root->total_memory;
    out->llc_bytes = largest_cache(t->topo);
    pkg = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_PACKAGE, 0);
    model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
    snprintf(out->cpu_model, sizeof out->cpu_model, "%s", model ? model : "");
    /* CPUID pads the brand string with blanks. */
    len = strlen(out->cpu_model);
    while (len > 0 && out->cpu_model[len - 1] == ' ')
        out->cpu_model[--len] = '\0';
    /* hwloc_get_api_version() names the API, which outlives releases (hwloc 2.9.0 answers
     * 2.8.0); the root's hwlocVersion is the release itself. */
    version = hwloc_obj_get_info_by_name(root, "hwlocVersion");
    snprintf(out->hwloc_version, sizeof out->hwloc_version, "%s", version ? version : "");
}

/* hwloc's parser accepts "bus:dev.fn" and "domain:bus:dev.fn"; checking first lets a typo be
 * told apart from a device that is simply absent. */
static bool busid_valid(const char *busid)
{
    unsigned a, b, c, d;

    if (!busid || !*busid)
        return false;
    return sscanf(busid, "%x:%x:%x.%x", &a, &b, &c, &d) == 4 ||
           sscanf(busid, "%x:%x.%x", &a, &b, &c) == 3;
}

/* The CPU-side object a PCI device hangs from (a package, a NUMA node's parent, a group, or the
 * machine when the firmware gives no locality). NULL when the device is not in the topology. */
static hwloc_obj_t pci_anchor(struct fb_topo *t, const char *busid)
{
    hwloc_obj_t dev = hwloc_get_pcidev_by_busidstring(t->topo, busid);
    return dev ? hwloc_get_non_io_ancestor_obj(t->topo, dev) : NULL;
}

static void put_list(char *buf, size_t len, hwloc_const_bitmap_t set)
{
    if (!buf || len == 0)
        return;
    buf[0] = '\0';
    if (set)
        hwloc_bitmap_list_snprintf(buf, len, set);
}

fb_status fb_topo_pci_locality(struct fb_topo *t, const char *busid, char *cpus, size_t cpuslen,
                               char *numa, size_t numalen)
{
    hwloc_obj_t anchor;

    put_list(cpus, cpuslen, NULL);
    put_list(numa, numalen, NULL);
    if (!busid_valid(busid))
        return FB_ERR_USAGE;
    if (!(anchor = pci_anchor(t, busid)))
        return FB_ERR_UNSUPPORTED;
    put_list(cpus, cpuslen, anchor->cpuset);
    put_list(numa, numalen, anchor->nodeset);
    return FB_OK;
}

fb_status fb_topo_my_binding(struct fb_topo *t, char *cpus, size_t cpuslen, char *numa,
                             size_t numalen, bool *bound)
{
    hwloc_bitmap_t set = NULL, nodes = NULL;
    fb_status st = FB_OK;

    put_list(cpus, cpuslen, NULL);
    put_list(numa, numalen, NULL);
    *bound = false;
    /* Binding questions about an XML topology would describe this machine's CPUs with another
     * machine's numbering. */
    if (!t->this_system)
        return FB_ERR_UNSUPPORTED;
    if (!(set = hwloc_bitmap_alloc()) || !(nodes = hwloc_bitmap_alloc())) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    /* PROCESS, not THREAD: MPI progress threads count, and hwloc merges every thread's set. */
    if (hwloc_get_cpubind(t->topo, set, HWLOC_CPUBIND_PROCESS) != 0) {
        st = FB_ERR_UNSUPPORTED;
        goto out;
    }
    hwloc_cpuset_to_nodeset(t->topo, set, nodes);
    put_list(cpus, cpuslen, set);
    put_list(numa, numalen, nodes);
    /* Compared with the allowed set, not all PUs: inside a cgroup or a Slurm allocation the
     * whole allocation is what "unbound" looks like. */
    *bound = !hwloc_bitmap_isincluded(hwloc_topology_get_allowed_cpuset(t->topo), set);
out:
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(nodes);
    return st;
}

fb_status fb_topo_rank_home(struct fb_topo *t, const char *busid, int local_rank, int local_size,
                            const char *current, char *cpus, size_t cpuslen)
{
    hwloc_bitmap_t cur = NULL;
    hwloc_const_cpuset_t home = NULL;
    fb_status st = FB_OK;

    put_list(cpus, cpuslen, NULL);
    if (local_size < 1 || local_rank < 0 || local_rank >= local_size)
        return FB_ERR_USAGE;
    if (busid && *busid) {
        hwloc_obj_t anchor = pci_anchor(t, busid);
        if (!anchor || hwloc_bitmap_iszero(anchor->cpuset))
            return FB_ERR_UNSUPPORTED;
        home = anchor->cpuset;
    } else {
        int n = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_PACKAGE);
        hwloc_obj_t pkg = n > 0 ? hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_PACKAGE,
                                                        (unsigned)((long)local_rank * n /
                                                                   local_size))
                                : NULL;
        if (!pkg || !pkg->cpuset || hwloc_bitmap_iszero(pkg->cpuset))
            return FB_ERR_UNSUPPORTED;
        home = pkg->cpuset;
    }
    if (!(cur = hwloc_bitmap_alloc()))
        return FB_ERR_NOMEM;
    if (current && *current && hwloc_bitmap_list_sscanf(cur, current) != 0)
        st = FB_ERR_USAGE;
    else if (!current || !*current || !hwloc_bitmap_isincluded(cur, home))
        put_list(cpus, cpuslen, home);
    hwloc_bitmap_free(cur);
    return st;
}

fb_status fb_topo_gpu_rebind(struct fb_topo *t, const char *busid, int local_size,
                             const char *current, char *cpus, size_t cpuslen)
{
    fb_status st;

    put_list(cpus, cpuslen, NULL);
    if (local_size != 1 || !busid || !*busid)
        return FB_OK;
    st = fb_topo_rank_home(t, busid, 0, 1, current, cpus, cpuslen);
    return st == FB_ERR_UNSUPPORTED ? FB_OK : st; /* a GPU hwloc does not place: stay */
}

fb_status fb_topo_bind(struct fb_topo *t, const char *cpus)
{
    hwloc_bitmap_t set;
    fb_status st = FB_OK;

    if (!t->this_system)
        return FB_ERR_UNSUPPORTED;
    if (!cpus || !*cpus || !(set = hwloc_bitmap_alloc()))
        return !cpus || !*cpus ? FB_ERR_USAGE : FB_ERR_NOMEM;
    if (hwloc_bitmap_list_sscanf(set, cpus) != 0)
        st = FB_ERR_USAGE;
    else if (hwloc_set_cpubind(t->topo, set, HWLOC_CPUBIND_PROCESS) != 0)
        st = FB_ERR_UNSUPPORTED;
    hwloc_bitmap_free(set);
    return st;
}

fb_status fb_topo_cpus_numa(struct fb_topo *t, const char *cpus, char *numa, size_t numalen)
{
    hwloc_bitmap_t set = NULL, nodes = NULL;
    fb_status st = FB_OK;

    put_list(numa, numalen, NULL);
    if (!cpus || !*cpus)
        return FB_ERR_USAGE;
    if (!(set = hwloc_bitmap_alloc()) || !(nodes = hwloc_bitmap_alloc())) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    if (hwloc_bitmap_list_sscanf(set, cpus) != 0) {
        st = FB_ERR_USAGE;
        goto out;
    }
    hwloc_cpuset_to_nodeset(t->topo, set, nodes);
    put_list(numa, numalen, nodes);
out:
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(nodes);
    return st;
}

/* "NUMA node 1", "NUMA nodes 0-1" or "no NUMA node". */
static void numa_phrase(char *buf, size_t len, hwloc_const_bitmap_t nodes)
{
    char list[128];
    int weight = nodes ? hwloc_bitmap_weight(nodes) : 0;

    if (weight <= 0) {
        snprintf(buf, len, "no NUMA node");
        return;
    }
    hwloc_bitmap_list_snprintf(list, sizeof list, nodes);
    snprintf(buf, len, "NUMA node%s %s", weight > 1 ? "s" : "", list);
}

enum fb_verdict fb_topo_binding_verdict(struct fb_topo *t, const char *rank_cpus,
                                        const char *gpu_busid, char *why, size_t whylen)
{
    hwloc_bitmap_t rank = NULL, rank_nodes = NULL;
    hwloc_obj_t anchor;
    hwloc_const_cpuset_t allowed;
    char gpu_numa[160], gpu_cpus[256], rnuma[160];
    enum fb_verdict v = FB_SKIP;

    if (why && whylen)
        why[0] = '\0';
    if (!busid_valid(gpu_busid)) {
        snprintf(why, whylen, "no GPU PCI bus id to locate");
        goto out;
    }
    if (!(anchor = pci_anchor(t, gpu_busid))) {
        snprintf(why, whylen, "GPU %s is not in the hwloc topology, so its socket is unknown",
                 gpu_busid);
        goto out;
    }
    numa_phrase(gpu_numa, sizeof gpu_numa, anchor->nodeset);
    hwloc_bitmap_list_snprintf(gpu_cpus, sizeof gpu_cpus, anchor->cpuset);

    if (!rank_cpus || !*rank_cpus) {
        v = FB_WARN;
        snprintf(why, whylen, "rank's CPU binding is unknown; GPU %s is on %s (CPUs %s)",
                 gpu_busid, gpu_numa, gpu_cpus);
        goto out;
    }
    if (!(rank = hwloc_bitmap_alloc()) || !(rank_nodes = hwloc_bitmap_alloc())) {
        v = FB_WARN;
        snprintf(why, whylen, "out of memory while judging the binding");
        goto out;
    }
    if (hwloc_bitmap_list_sscanf(rank, rank_cpus) != 0 || hwloc_bitmap_iszero(rank)) {
        v = FB_WARN;
        snprintf(why, whylen, "rank's CPU list '%s' cannot be read; GPU %s is on %s (CPUs %s)",
                 rank_cpus, gpu_busid, gpu_numa, gpu_cpus);
        goto out;
    }
    /* CPUs this topology does not have mean the facts come from another machine. */
    if (!hwloc_bitmap_intersects(rank, hwloc_topology_get_topology_cpuset(t->topo))) {
        snprintf(why, whylen, "rank CPUs %s are not in this topology", rank_cpus);
        goto out;
    }
    hwloc_cpuset_to_nodeset(t->topo, rank, rank_nodes);
    numa_phrase(rnuma, sizeof rnuma, rank_nodes);
    allowed = hwloc_topology_get_allowed_cpuset(t->topo);

    if (hwloc_bitmap_isincluded(rank, anchor->cpuset)) {
        v = FB_PASS;
        if (hwloc_bitmap_isincluded(allowed, anchor->cpuset))
            snprintf(why, whylen, "GPU %s is attached to the whole machine (%s), so any CPU is "
                     "as close as another", gpu_busid, gpu_numa);
        else
            snprintf(why, whylen, "rank CPUs %s (%s) are local to GPU %s (%s)", rank_cpus, rnuma,
                     gpu_busid, gpu_numa);
    } else if (!hwloc_bitmap_intersects(rank, anchor->cpuset)) {
        v = FB_FAIL;
        snprintf(why, whylen, "rank CPUs %s are on %s but GPU %s is on %s (CPUs %s): every "
                 "host-device copy crosses the inter-socket link", rank_cpus, rnuma, gpu_busid,
                 gpu_numa, gpu_cpus);
    } else if (hwloc_bitmap_isincluded(allowed, rank)) {
        v = FB_WARN;
        snprintf(why, whylen, "rank is not bound (CPUs %s, %s); GPU %s is on %s (CPUs %s)",
                 rank_cpus, rnuma, gpu_busid, gpu_numa, gpu_cpus);
    } else {
        v = FB_WARN;
        snprintf(why, whylen, "rank CPUs %s straddle %s; GPU %s is on %s (CPUs %s)", rank_cpus,
                 rnuma, gpu_busid, gpu_numa, gpu_cpus);
    }
out:
    hwloc_bitmap_free(rank);
    hwloc_bitmap_free(rank_nodes);
    return v;
}

/* The machine's shape through hwloc: sockets, NUMA nodes, cores, memory, where a PCI device
 * (a GPU, a NIC) attaches, and how this process is bound. A topology can also be loaded from
 * an hwloc XML export, so locality rules are tested against recorded real machines.
 * CPU and NUMA sets are exchanged as hwloc list strings ("0-19,40-59"; NUMA nodes by OS index). */
#ifndef FB_TOPO_H
#define FB_TOPO_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"
#include "verdict.h"

struct fb_topo; /* an hwloc topology with I/O devices; opaque */
struct hwloc_topology; /* hwloc_topology_t without pulling hwloc.h into every includer */

struct fb_topo_summary {
    int sockets;         /* packages */
    int numa_nodes;
    int cores;
    int pus;             /* hardware threads */
    unsigned long long memory_bytes; /* all NUMA nodes' memory, bytes (binary units when shown) */
    unsigned long long llc_bytes; /* the last-level cache: the largest data or unified cache
                                     object (one L3 of one package, not their sum), bytes; 0
                                     when hwloc sees no cache (some VMs, some XML exports) */
    char cpu_model[128]; /* hwloc's CPUModel of the first package, "" when hwloc does not say */
    char hwloc_version[64]; /* release of the hwloc that discovered it: for this machine the
                               library loaded at run time, for XML the one that wrote it */
};

/* Keeps hwloc's OpenCL and GL plugins from loading in this process (HWLOC_PLUGINS_BLACKLIST,
 * unless the user set it): fb_topo_load leaves their components out, and loaded they would only
 * map libOpenCL and Xlib for nothing (libOpenCL's TLS record crashed LeakSanitizer's exit check,
 * docs/sanitizers.md). hwloc reads it at the process's first topology, which in a singleton is
 * MPI_Init's: main() calls this first, before any thread; fb_topo_load calls it too. */
void fb_topo_plugins_prepare(void);

/* Loads the topology of this machine (xml_path NULL) or of an hwloc XML export, keeping the
 * important I/O devices (GPUs, NICs) so PCI locality can be asked. *out is owned by the caller
 * (fb_topo_free). FB_ERR_IO with a message when the XML cannot be read, FB_ERR_NOMEM. */
fb_status fb_topo_load(struct fb_topo **out, const char *xml_path);
void fb_topo_free(struct fb_topo *t); /* accepts NULL */

/* The hwloc topology inside t (NULL for NULL), for harness modules that ask hwloc questions of
 * their own (pair_link.c) and tests that edit a fixture; still owned by t. */
struct hwloc_topology *fb_topo_hwloc(struct fb_topo *t);

/* Whether the topology describes the machine this process runs on (false for XML). */
bool fb_topo_is_this_system(const struct fb_topo *t);

/* Counts and memory of the whole machine. Never fails. */
void fb_topo_summary(struct fb_topo *t, struct fb_topo_summary *out);

/* Where the PCI device `busid` ("0000:3b:00.0" as cudaDeviceGetPCIBusId writes it; hex in
 * either case) attaches: the CPUs and NUMA nodes of its first non-I/O ancestor, as list
 * strings. FB_ERR_UNSUPPORTED when the device is not in the topology (cpus and numa are then
 * ""), FB_ERR_USAGE for a malformed bus id. */
fb_status fb_topo_pci_locality(struct fb_topo *t, const char *busid, char *cpus, size_t cpuslen,
                               char *numa, size_t numalen);

/* This process's CPU binding (all its threads), the NUMA nodes those CPUs belong to, and
 * whether the binding is narrower than the CPUs the machine allows this process. Needs a
 * topology of this system: FB_ERR_UNSUPPORTED for an XML one or where the OS cannot say. */
fb_status fb_topo_my_binding(struct fb_topo *t, char *cpus, size_t cpuslen, char *numa,
                             size_t numalen, bool *bound);

/* Where a rank driving GPU `busid` should run when it is its node's only rank (local_size 1):
 * the GPU's CPUs (its socket, fb_topo_pci_locality) when `current` (the rank's binding as a list
 * string) is not already inside them. Open MPI binds one or two ranks to a core, core 0 for the
 * first, which may be the socket away from the GPU; several local ranks are laid out by the
 * launcher (`--map-by ppr:K:socket`, docs/sweep.md) and left alone. Writes "" when the rank is
 * to stay (several local ranks, no bus id, the GPU not in the topology, already there). Pure:
 * works on XML topologies. FB_ERR_USAGE for a malformed `current`. */
fb_status fb_topo_gpu_rebind(struct fb_topo *t, const char *busid, int local_size,
                             const char *current, char *cpus, size_t cpuslen);

/* Where a rank should run when it binds itself (run --self-bind): its GPU's CPUs (`busid`, the
 * GPU's socket, fb_topo_pci_locality) or, without a GPU (busid NULL or ""), socket
 * local_rank x sockets / local_size (the node's ranks dealt over its sockets in blocks, never
 * round robin). `cpus` gets that list when `current` (the rank's binding, a list string; ""
 * unknown) is not already inside it, else "". FB_ERR_USAGE for a malformed `current` or bad
 * ranks; FB_ERR_UNSUPPORTED when the GPU is not in the topology or it has no socket. */
fb_status fb_topo_rank_home(struct fb_topo *t, const char *busid, int local_rank, int local_size,
                            const char *current, char *cpus, size_t cpuslen);

/* Binds this process (all its threads) to the CPU list `cpus`. FB_ERR_UNSUPPORTED for an XML
 * topology or where the OS refuses; FB_ERR_USAGE for a malformed list. */
fb_status fb_topo_bind(struct fb_topo *t, const char *cpus);

/* The NUMA nodes (OS indexes, list string) whose CPUs intersect the CPU list `cpus`.
 * FB_ERR_USAGE when `cpus` is not a list string. */
fb_status fb_topo_cpus_numa(struct fb_topo *t, const char *cpus, char *numa, size_t numalen);

/* Judges a rank bound to `rank_cpus` (a list string; NULL or "" = unknown) that drives the
 * GPU at `gpu_busid`:
 *   PASS  the rank's CPUs all lie in the GPU's local CPUs (or the GPU is local to the whole
 *         machine, so no binding can be better);
 *   FAIL  the rank is bound entirely outside them: every host<->device copy crosses the
 *         inter-socket link (the classic wrong-socket binding);
 *   WARN  the rank is unbound, straddles the GPU's socket and another, or its binding is
 *         unknown: the OS may run it far from the GPU;
 *   SKIP  the GPU is not in the topology (or no bus id).
 * `why` gets one line naming the NUMA node(s) of the GPU and of the rank's CPUs. Pure: no
 * binding or hardware is touched, so it works on XML topologies. */
enum fb_verdict fb_topo_binding_verdict(struct fb_topo *t, const char *rank_cpus,
                                        const char *gpu_busid, char *why, size_t whylen);

#endif

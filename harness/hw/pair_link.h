/* What lies between two ranks of one node: the link between their GPUs (one GPU, NVLink, a PCIe
 * switch, a host bridge, a socket, the inter-socket link) or, on the host backend, between their
 * CPU bindings. The p2p benchmark labels its pairs with these names. PCI answers come from hwloc
 * (so recorded XML topologies test them); NVLink counts from NVML, loaded only at run time. */
#ifndef FB_PAIR_LINK_H
#define FB_PAIR_LINK_H

#include <stdbool.h>
#include <stddef.h>

struct fb_topo; /* topo.h */

enum fb_link {
    FB_LINK_UNKNOWN,      /* "unknown" */
    FB_LINK_SAME_DEVICE,  /* "same-gpu": both bus ids equal (two ranks on one GPU) */
    FB_LINK_NVLINK,       /* "nvlink": NVLink between them (directly or through NVSwitch) */
    FB_LINK_PCIE_SWITCH,  /* "pcie-switch": below a common PCIe bridge/switch, not the host bridge */
    FB_LINK_HOST_BRIDGE,  /* "host-bridge": common ancestor is the host bridge (same root complex) */
    FB_LINK_SOCKET,       /* "socket": same package, different host bridges */
    FB_LINK_CROSS_SOCKET, /* "cross-socket": different packages (traffic crosses the inter-socket
                             link) */
    FB_LINK_NETWORK,      /* "network": different nodes (set by the caller, never computed here) */
};

/* The label of a link, as above; "????" for a value outside the enum. Static storage. */
const char *fb_pair_link_name(enum fb_link l);

/* The link between the GPUs (any PCI devices) at busid_a and busid_b ("0000:3b:00.0" as
 * cudaDeviceGetPCIBusId writes it, NVML's "00000000:3B:00.0" or "3b:00.0"; hex in any case).
 * The first rule that applies wins:
 *   UNKNOWN      either bus id is NULL or malformed;
 *   SAME_DEVICE  the two bus ids name one device (even one absent from the topology);
 *   NVLINK       nvlinks > 0 (the caller's NVML count, fb_pair_link_nvlinks), then, with both
 *                devices in the topology, hwloc's "NVLinkBandwidth" distances give bandwidth
 *                between them or from each to an NVSwitch (the NVSwitches of one node are taken
 *                as one fabric, as on DGX-2 and HGX boards);
 *   UNKNOWN      t is NULL or either device is not in it;
 *   PCIE_SWITCH / HOST_BRIDGE  their nearest common PCI ancestor is a PCI bridge / a host bridge;
 *   SOCKET / CROSS_SOCKET  under different host bridges whose CPUs lie in one package / two;
 *   UNKNOWN      otherwise (a host bridge the firmware attached to no single package).
 * NVLink wins over any PCI path because that is the path CUDA peer copies take. Pure: reads t
 * only, so XML topologies answer too. */
enum fb_link fb_pair_link_gpu(struct fb_topo *t, const char *busid_a, const char *busid_b,
                              int nvlinks);

/* Host backend: the relation between two ranks' CPU bindings (hwloc list strings, "0-3,8"):
 * SOCKET when both lie in one package, CROSS_SOCKET when each lies in one package and the two
 * differ, UNKNOWN when t is NULL or either is NULL, empty, not a plain list of CPU numbers and
 * ascending ranges, outside t's CPUs or spread over more than one package (unbound). Pure. */
enum fb_link fb_pair_link_cpu(struct fb_topo *t, const char *cpus_a, const char *cpus_b);

/* NVLinks from GPU a to GPU b on this machine, through NVML loaded at run time from
 * libnvidia-ml.so.1 (never linked, so a driverless machine still runs fabricbench): the active
 * links of a whose remote end is b, plus, when both a and b have active links to NVSwitches,
 * a's NVSwitch links. Remote ends are typed with nvmlDeviceGetNvLinkRemoteDeviceType; a driver
 * too old to have it gets only direct links counted. 0 for the same GPU twice. Returns -1, with
 * one line saying why in `why` (may be NULL), when a bus id is malformed, NVML cannot be loaded or
 * started, or either GPU is unknown to it; `why` is "" otherwise. Never prints, never aborts;
 * local to this node, not collective. Each call starts NVML and shuts it down again, so ask
 * once per pair, not in a loop. */
int fb_pair_link_nvlinks(const char *busid_a, const char *busid_b, char *why, size_t whylen);

/* One GPU's NVLinks as NVML gives them (for the expected-figure model): its name, its active
 * links to each other GPU (peer bus ids as NVML spells them, "00000000:3B:00.0") and to
 * NVSwitches. */
enum { FB_NVML_PEERS = 16 };
struct fb_nvml_gpu {
    char name[64];       /* nvmlDeviceGetName; "" when the driver does not say */
    int to_switch;
    int npeers;
    struct {
        char bus[32];
        int links;
    } peer[FB_NVML_PEERS];
};

/* Fills out[i] for the GPU at busids[i], each of `count`, through NVML loaded at run time (as
 * fb_pair_link_nvlinks) in one NVML session; known[i] false for a bus id that is malformed or a
 * GPU NVML does not know. false with one line in `why` when NVML cannot be loaded or started
 * ("no NVML: ...", "NVML does not start: ..."). Never prints. */
bool fb_pair_link_nvml_gpus(int count, const char *const busids[], struct fb_nvml_gpu out[],
                            bool known[], char *why, size_t whylen);

#endif

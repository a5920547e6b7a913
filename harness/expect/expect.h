/* The expected-figure model (issue 27, docs/expected.md): a node's description (its NICs, its
 * GPUs' PCIe links, NVLink between GPU pairs) turned into the figure each measurement should
 * reach on it and the part that bounds it. Pure: no MPI, no files (expect_sysfs.c fills a
 * description from a sysfs tree). Every efficiency is data, with its source, in
 * fb_expect_efficiencies (expect_eff.c) and docs/reference-figures.md; a site file may override
 * each (fb_expect_eff_load). Figures are GB/s = 1e9 B/s, per direction. */
#ifndef FB_EXPECT_H
#define FB_EXPECT_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

enum {
    FB_EXPECT_BOUND = 48, /* "eth 800 Mb/s fbv0", "PCIe Gen3 x16 (GPU 0000:3b:00.0)" */
    FB_EXPECT_NICS = 16,
    FB_EXPECT_GPUS = 16,
    FB_EXPECT_NOTE = 256,
    FB_EXPECT_PEERS = 8,
};

enum fb_nic_kind { FB_NIC_ETH, FB_NIC_IB };

/* One network port as sysfs shows it. */
struct fb_expect_nic {
    char name[32];       /* "eth0", "mlx5_0/1" (device/port) */
    enum fb_nic_kind kind;
    double gbps;         /* line rate, Gb/s (Ethernet `speed` / 1000; InfiniBand `rate`) */
    int mtu;             /* Ethernet: bytes of IP packet per frame (sysfs `mtu`); 0: 1500 */
    bool up;             /* Ethernet operstate "up" (or "unknown" with a rate); IB state ACTIVE */
    /* where it sits, from its `device` entry: the NUMA node (-1: not said) and the root port
     * above it ("" when not followed), to tell the NICs near each GPU */
    int numa;
    char root[16];
};

/* One GPU's PCIe link as sysfs shows it. */
struct fb_expect_gpu {
    char bus[16];        /* "0000:3b:00.0" */
    double gts;          /* the link's speed under load, GT/s (2.5, 5, 8, 16, 32, 64): its
                            max_link_speed capped by the port above it, else current_link_speed */
    int width;           /* ... and width, lanes, likewise */
    double cur_gts;      /* current_link_speed: what it runs at now (an idle GPU's is lower) */
    int cur_width;       /* current_link_width */
    /* The root port above the GPU (the device right under its root bus, pciDDDD:BB, in the
     * device's real sysfs path) and that port's link: the uplink every GPU behind it shares
     * (a PCIe switch's), or the GPU's own link when it sits on the root port. "" and 0 when
     * the path cannot be followed (a tree without devices/). */
    char up[16];
    double up_gts;
    int up_width;
    /* sysfs `numa_node`: the NUMA node (a socket, or part of one) the GPU's root complex
     * belongs to; -1 when the platform does not say */
    int numa;
    /* What NVML says (or a facts file, FB_NVML_FACTS, in its place; fb_expect_nvml_load):
     * the GPU's name ("Tesla V100-SXM2-32GB"; "" when not known), its active NVLinks to each
     * other GPU, and to NVSwitches. */
    char model[48];
    int nvl_switch;
    int npeers;
    struct fb_expect_peer {
        char bus[16];
        int links;
    } peer[FB_EXPECT_PEERS];
};

/* What the model knows of one node. */
struct fb_expect_node {
    char host[64];
    struct fb_expect_nic nic[FB_EXPECT_NICS];
    int nnics;
    struct fb_expect_gpu gpu[FB_EXPECT_GPUS];
    int ngpus;
    char note[FB_EXPECT_NOTE]; /* what could not be read, one line; "" when all was */
    /* GPUDirect RDMA: the kernel module that lets a NIC reach GPU memory (module/nvidia_peermem
     * or module/nv_peer_mem in sysfs) is loaded; "" when neither is */
    char gdr[24];
};

/* A figure the model gives: gbps is NAN where it has nothing honest to say (bound then says
 * why, or is ""). */
struct fb_expect_fig {
    double gbps;
    char bound[FB_EXPECT_BOUND];
};

/* Reads the description of the node this process runs on from the sysfs tree at `root`
 * (expect_sysfs.c; the caller passes $FB_SYSFS_ROOT or /sys): its Ethernet and InfiniBand
 * ports and its NVIDIA GPUs' PCIe links, sorted by name. What cannot be read goes to n->note
 * (a port without a speed, no bus/pci/devices), never an error: a node the model knows less
 * of gets fewer figures. */
void fb_expect_node_read(const char *root, const char *host, struct fb_expect_node *n);

/* The same, with the ports named in `only` (the job's transport's, as fb_expect_node_net takes
 * them: comma-separated, an InfiniBand port named by its device too) kept first when the node
 * has more ports than the model holds (FB_EXPECT_NICS); NULL or "": none named. */
void fb_expect_node_read_for(const char *root, const char *host, const char *only,
                             struct fb_expect_node *n);

/* Whether port `name` ("eth0", "mlx5_0/1") is one of the comma-separated names of `only`; an
 * InfiniBand port is named by its device ("mlx5_0") too. */
bool fb_expect_named(const char *only, const char *name);

/* Adds what NVML says of the node's GPUs (names, NVLinks to each other and to NVSwitches):
 * from the facts file `facts` when it is not NULL or "" (fb_expect_nvml_load), else from NVML
 * itself through hw (a GPU NVML does not know, or no NVML at all, goes to n->note). Call after
 * fb_expect_node_read. FB_ERR_USAGE or FB_ERR_IO, with err filled, for a bad facts file. */
fb_status fb_expect_node_nvml(const char *facts, struct fb_expect_node *n, char *err, size_t errlen);

/* Reads a facts file in NVML's place, for tests and for users describing a machine in files
 * (docs/expected.md): lines
 *   gpu BUS NAME...              the GPU's name as NVML gives it
 *   nvlink BUS PEER_BUS LINKS    LINKS active NVLinks between the two GPUs (counted both ways)
 *   nvlink BUS switch LINKS      LINKS active NVLinks from the GPU to NVSwitches
 * with `#` comments and blank lines. A GPU the sysfs tree did not show is added (with no PCIe
 * link). FB_ERR_USAGE with "path:line: what" for a line that is not one of those, a malformed
 * bus id, a link count outside 1-18 or too many GPUs or peers; FB_ERR_IO when it cannot be read.
 * n is left as it was unless the whole file is good. */
fb_status fb_expect_nvml_load(const char *path, struct fb_expect_node *n, char *err, size_t errlen);

/* The NVLink generation of a GPU by its name (2 for V100, 3 for A100, 4 for H100/H200/GH200,
 * 5 for B200/GB200; docs/reference-figures.md); 0 when the name is not one the model knows. */
int fb_expect_gpu_nvlink_gen(const char *model);

/* A GPU's dense peak for a precision ("fp16", "bf16": the tensor cores'; "fp32": the CUDA
 * cores'), TFLOP/s, by its name (V100-SXM2, A100-SXM4, H100-SXM5, H200-SXM: the datasheets in
 * docs/reference-figures.md), in f->gbps (the row's own unit), bound "peak H100-SXM5 fp16 989
 * TFLOP/s"; NAN and "" for a name or precision the table does not hold. */
void fb_expect_gpu_peak(const char *model, const char *precision, struct fb_expect_fig *f);

/* ---- efficiencies: data, each with its source ------------------------------------------ */

struct fb_expect_eff {
    const char *key;     /* "ib", "pcie_copy", "nvlink" */
    double value;        /* a share of the link's payload rate, 0 < value <= 1 */
    const char *source;  /* where the figure comes from */
};

/* The table, in the order docs/reference-figures.md lists it. */
extern struct fb_expect_eff fb_expect_efficiencies[];
extern const size_t fb_expect_neff;

/* The value of an efficiency by key; NAN for an unknown key. */
double fb_expect_eff(const char *key);

/* Overrides efficiencies from a site file: lines `key = value` (0 < value <= 1), `#` or `;`
 * comments, blank lines. FB_ERR_USAGE with "path:line: what" for an unknown key, a value out of
 * range or a line that is not one; FB_ERR_IO when the file cannot be read. Nothing is changed
 * unless the whole file is good. */
fb_status fb_expect_eff_load(const char *path, char *err, size_t errlen);

/* ---- the links ------------------------------------------------------------------------- */

/* A PCIe link's payload rate per direction (GB/s) before any efficiency: GT/s x lanes x the
 * encoding (8b/10b to Gen2, 128b/130b from Gen3) / 8. NAN for a speed that is no PCIe
 * generation or a width that is not a lane count. *gen gets the generation (may be NULL). */
double fb_expect_pcie_raw(double gts, int width, int *gen);

/* The payload a NIC carries per direction (GB/s): Ethernet, TCP/IPv4 with timestamps in frames
 * of its MTU, on the wire with the header, FCS, preamble and inter-frame gap; InfiniBand, its
 * data rate times the `ib` efficiency. NAN for a rate that is not positive. */
double fb_expect_nic_payload(const struct fb_expect_nic *nic);

/* "eth 800 Mb/s fbv0", "IB 100 Gb/s mlx5_0/1" into a bound. */
void fb_expect_nic_bound(const struct fb_expect_nic *nic, char *bound, size_t len);

/* The NIC a node's traffic to other nodes leaves by: an ACTIVE InfiniBand port first (MPI's and
 * NCCL's transports prefer it), else an Ethernet port that is up; the fastest among them. When
 * `only` is not NULL or "", only the ports it names (comma-separated interface or device names,
 * as OMPI_MCA_btl_tcp_if_include or NCCL_SOCKET_IFNAME give them) count. NULL when none. */
const struct fb_expect_nic *fb_expect_node_nic(const struct fb_expect_node *n, const char *only);

/* A node's figure toward other nodes: its NIC's payload rate (fb_expect_node_nic). */
void fb_expect_node_net(const struct fb_expect_node *n, const char *only, struct fb_expect_fig *f);

/* One GPU's host-to-device copy figure: its PCIe link times the `pcie_copy` efficiency. */
void fb_expect_gpu_h2d(const struct fb_expect_gpu *g, struct fb_expect_fig *f);

/* Host-device copies of `sharing` GPUs behind one uplink at once (each one's figure): the
 * smaller of its own link and its uplink's share, uplink x `pcie_copy` / sharing; bound
 * "PCIe Gen3 x16 uplink 0000:00:03.0 / 4 GPUs" when the uplink bounds it. Without a known
 * uplink (g->up "") or with sharing 1, fb_expect_gpu_h2d's figure. */
void fb_expect_gpu_h2d_shared(const struct fb_expect_gpu *g, int sharing, struct fb_expect_fig *f);

/* NVLink between two GPUs: links x the per-link rate of the generation (GB/s per direction:
 * 25 for NVLink 2, 3 and 4; 50 for 5) times the `nvlink` efficiency; NAN for no links or an
 * unknown generation. */
void fb_expect_nvlink(int gen, int links, struct fb_expect_fig *f);

/* How near a NIC sits to a GPU: 2 behind the same root port (one PCIe switch), 1 on the same
 * NUMA node, 0 elsewhere or not known. */
int fb_expect_nic_near(const struct fb_expect_nic *nic, const struct fb_expect_gpu *g);

/* A one-way copy between two GPUs of one node (p2p over IPC): NVLink when they have links
 * (direct, or both to NVSwitches: the fewer of the two GPUs' switch links), at the generation
 * of a's model; else PCIe through the switch they share (the same root port, `up`) or their
 * root complex (the same NUMA node, or neither says), the slower GPU link times `pcie_copy`.
 * NAN (bound "") across NUMA nodes (the inter-socket link's rate is not in sysfs) or where a
 * link or the generation is unknown. */
void fb_expect_gpu_pair(const struct fb_expect_gpu *a, const struct fb_expect_gpu *b,
                        struct fb_expect_fig *f);

/* A ring collective's bus bandwidth over GPUs that reach each other by NVLink, from the links
 * each GPU has toward the others: links x the per-link rate x `nvlink_ring` (NCCL's rings use
 * every link at once; the share is its protocol's). */
void fb_expect_nvring(int gen, int links, struct fb_expect_fig *f);

/* Busbw of a ring collective over the n GPUs g[] of one node: where every GPU reaches the others
 * by NVLink (directly or through NVSwitches, one connected graph), fb_expect_nvring with the
 * fewest links any GPU has toward the others (bound names that GPU); else the slowest hop of
 * the ring in bus order (fb_expect_gpu_pair). NAN for fewer than 2 GPUs or a hop with none. */
void fb_expect_node_ring(const struct fb_expect_gpu *const *g, int n, struct fb_expect_fig *f);

/* A memory copy's calibration: `reps` memcpy of `bytes` between two buffers the caller owns
 * (both at least that long, already touched), timed each on the monotonic clock; the best
 * (what the memory allows) in f, bound "memcpy calibration 64 MiB best of 5". The host
 * backend's copies are memcpy, so this is what they should reach, not a datasheet's figure. */
void fb_expect_memcpy_calibrate(void *dst, const void *src, size_t bytes, int reps,
                                struct fb_expect_fig *f);

/* The slower of two figures; a NAN one is ignored (NAN only when both are): for a hop that may
 * not be on the path at all (a host buffer's PCIe link). */
void fb_expect_min(const struct fb_expect_fig *a, const struct fb_expect_fig *b,
                   struct fb_expect_fig *out);

/* A path through two hops that are both on it: the slower, or NAN (bound "") when either is
 * unknown: a path is as fast as its slowest hop, and an unknown hop may be that one. */
void fb_expect_path_min(const struct fb_expect_fig *a, const struct fb_expect_fig *b,
                        struct fb_expect_fig *out);

/* One node of a ring collective: the GPUs of its ranks (one a rank) and the NICs its rings
 * leave it by (fb_expect_node_rails for those ranks; NAN: none known). */
struct fb_expect_ring_node {
    const struct fb_expect_gpu *gpu[FB_EXPECT_GPUS];
    int ngpus;
    struct fb_expect_fig rails;
};

/* Ring all-reduce bus bandwidth (nccl-tests' busbw) over `n` nodes, which may hold different
 * numbers of ranks: a ring's every hop carries the same bytes, so busbw is its slowest hop:
 * each node's ring over its GPUs (fb_expect_node_ring; none for a node of one rank) and, over
 * two nodes or more, each node's rails. NAN when any of those hops is unknown, or for fewer
 * than 2 ranks in all. */
void fb_expect_ring_nodes(const struct fb_expect_ring_node *nodes, int n, struct fb_expect_fig *f);

/* The NICs a node's ranks spread their rings over (rails): the ports of the kind and rate of
 * fb_expect_node_nic's choice that are up (and named by `only`), at most `ranks` of them (NCCL
 * gives each GPU's channels a NIC near it); their payloads summed, bound "IB 200 Gb/s x8
 * mlx5_0/1...". 0 ports: NAN. */
void fb_expect_node_rails(const struct fb_expect_node *n, const char *only, int ranks,
                          struct fb_expect_fig *f);

#endif

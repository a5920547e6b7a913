/* One node's hardware against what it should have, for `fabricbench health` (Slurm's
 * HealthCheckProgram, a job prolog): the NVIDIA GPUs on its PCI bus, its InfiniBand ports that
 * are ACTIVE and their rates, and every judged PCIe link (GPUs' widths, HCAs' speed and width)
 * at its maximum. Read from sysfs (hw/health_sysfs.c, under $FB_SYSFS_ROOT when set), no MPI,
 * no library: it runs in a fraction of a second on a node whose GPUs are busy. */
#ifndef FB_NODE_HEALTH_H
#define FB_NODE_HEALTH_H

#include "health.h"
#include "status.h"

/* What the node should have; each part judged only when given. */
struct fb_node_expect {
    int gpus;            /* NVIDIA GPUs on the PCI bus, exactly; -1: not judged */
    int ib_ports;        /* ACTIVE InfiniBand ports, at least; -1: not judged */
    double ib_rate_gbps; /* each ACTIVE port's rate, at least (Gb/s); <= 0: not judged */
};

struct fb_node_health {
    int gpus;            /* NVIDIA GPUs found */
    int ib_ports;        /* InfiniBand ports read */
    int ib_active;       /* of them ACTIVE (state 4) */
    double ib_slowest;   /* the slowest ACTIVE port's rate (Gb/s); NAN when none */
    int links;           /* judged PCIe links read */
    int links_low;       /* of them below their maximum speed or width */
    int findings;        /* what is wrong: 0 for a healthy node */
    char reason[1024];   /* one line: the findings joined by "; " (sysfs names escaped), or,
                            healthy, what was found */
};

/* Judges `set` and `gpus` (fb_health_sysfs_read_node's readings and GPU count) against e.
 * Pure. */
void fb_node_health_judge(const struct fb_node_expect *e, const struct fb_health_set *set,
                          int gpus, struct fb_node_health *h);

/* Reads the sysfs tree under root and judges it (fb_node_health_judge). FB_ERR_NOMEM. */
fb_status fb_node_health_check(const struct fb_node_expect *e, const char *root,
                               struct fb_node_health *h);

#endif

/* A node's description for the model, read from a sysfs tree in the standard layout (the root
 * is $FB_SYSFS_ROOT in tests and for a user describing a machine in files; /sys else):
 *   class/net/IF/{speed,mtu,operstate,type}          Ethernet ports (lo and IPoIB left out)
 *   class/infiniband/DEV/ports/N/{rate,state}         InfiniBand (and RoCE) ports
 *   bus/pci/devices/ADDR/{vendor,class,current_link_speed,current_link_width,numa_node}
 *   NVIDIA GPUs,
 *   and through the entry's real path devices/pciDDDD:BB/ROOT_PORT/.../ADDR the root port
 *   above each GPU and its current_link_* (the uplink the GPUs behind a switch share);
 *   each port's DEV/device (numa_node, its root port): the NICs near each GPU;
 *   module/nvidia_peermem or module/nv_peer_mem: GPUDirect RDMA */
#define _DEFAULT_SOURCE /* DT_*, realpath */
#include "expect.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysfs.h"

enum { PATH_CAP = 4096 };

static void note(struct fb_expect_node *n, const char *fmt, const char *what)
{
    size_t len = strlen(n->note);

    if (len + 3 >= sizeof n->note)
        return;
    snprintf(n->note + len, sizeof n->note - len, "%s", len ? "; " : "");
    len = strlen(n->note);
    snprintf(n->note + len, sizeof n->note - len, fmt, what);
}

static bool skip_entry(const struct dirent *e)
{
    return e->d_name[0] == '.';
}

/* The root port in a device's real sysfs path (devices/pciDDDD:BB/<root port>/.../<device>):
 * false when the path has none (the device is the root port itself, or a tree without
 * devices/). */
static bool root_port(const char *real, char *up, size_t len)
{
    const char *p, *port, *end;

    for (p = strstr(real, "/pci"); p; p = strstr(p + 1, "/pci")) {
        if (strchr(p + 1, '/') && strchr(p + 4, ':') && strchr(p + 4, ':') < strchr(p + 1, '/'))
            break; /* "/pci0000:00/" */
    }
    if (!p)
        return false;
    port = strchr(p + 1, '/') + 1;
    end = strchr(port, '/');
    if (!end || (size_t)(end - port) >= len)
        return false;
    memcpy(up, port, (size_t)(end - port));
    up[end - port] = '\0';
    return true;
}

/* A NIC's place: its `device` entry's numa_node and root port. */
static void read_nic_place(const char *device, struct fb_expect_nic *c)
{
    char real[PATH_MAX], path[PATH_MAX + 16];
    double numa;

    c->numa = -1;
    c->root[0] = '\0';
    if (!realpath(device, real))
        return;
    snprintf(path, sizeof path, "%s/numa_node", real);
    numa = fb_sysfs_number(path, 10);
    c->numa = isnan(numa) || numa < 0 ? -1 : (int)numa;
    if (!root_port(real, c->root, sizeof c->root))
        c->root[0] = '\0';
}

static void read_net(const char *root, struct fb_expect_node *n)
{
    char dir[PATH_CAP], path[PATH_CAP + 300], state[64];
    DIR *d;
    struct dirent *e;

    snprintf(dir, sizeof dir, "%s/class/net", root);
    if (!(d = opendir(dir))) {
        note(n, "%s: no Ethernet ports read", "class/net");
        return;
    }
    while ((e = readdir(d)) && n->nnics < FB_EXPECT_NICS) {
        struct fb_expect_nic *c = &n->nic[n->nnics];
        double speed, type;

        if (skip_entry(e) || strcmp(e->d_name, "lo") == 0 || strlen(e->d_name) >= sizeof c->name)
            continue;
        snprintf(path, sizeof path, "%s/%s/type", dir, e->d_name);
        type = fb_sysfs_number(path, 10);
        if (type == 32 || type == 772) /* IPoIB (its port is read as InfiniBand), loopback */
            continue;
        memset(c, 0, sizeof *c);
        snprintf(c->name, sizeof c->name, "%s", e->d_name);
        c->kind = FB_NIC_ETH;
        snprintf(path, sizeof path, "%s/%s/speed", dir, e->d_name);
        speed = fb_sysfs_number(path, 10);
        snprintf(path, sizeof path, "%s/%s/mtu", dir, e->d_name);
        c->mtu = (int)(isnan(fb_sysfs_number(path, 10)) ? 0 : fb_sysfs_number(path, 10));
        snprintf(path, sizeof path, "%s/%s/operstate", dir, e->d_name);
        c->up = fb_sysfs_line(path, state, sizeof state) &&
                (strcmp(state, "up") == 0 || strcmp(state, "unknown") == 0);
        if (!(speed > 0)) {
            /* virtio and some virtual ports have none ("-1", or the read fails) */
            if (c->up)
                note(n, "%s: no link speed in sysfs", c->name);
            continue;
        }
        c->gbps = speed / 1000.0;
        snprintf(path, sizeof path, "%s/%s/device", dir, e->d_name);
        read_nic_place(path, c);
        n->nnics++;
    }
    closedir(d);
}

static void read_ib(const char *root, struct fb_expect_node *n)
{
    char dir[PATH_CAP], ports[PATH_CAP + 300], path[PATH_CAP + 600], state[64];
    DIR *d, *pd;
    struct dirent *e, *p;

    snprintf(dir, sizeof dir, "%s/class/infiniband", root);
    if (!(d = opendir(dir)))
        return; /* no InfiniBand: nothing to note */
    while ((e = readdir(d))) {
        if (skip_entry(e))
            continue;
        snprintf(ports, sizeof ports, "%s/%s/ports", dir, e->d_name);
        if (!(pd = opendir(ports)))
            continue;
        while ((p = readdir(pd)) && n->nnics < FB_EXPECT_NICS) {
            struct fb_expect_nic *c = &n->nic[n->nnics];
            double rate;

            if (skip_entry(p) || strlen(e->d_name) + strlen(p->d_name) + 2 > sizeof c->name)
                continue;
            memset(c, 0, sizeof *c);
            snprintf(c->name, sizeof c->name, "%s/%s", e->d_name, p->d_name);
            c->kind = FB_NIC_IB;
            snprintf(path, sizeof path, "%s/%s/rate", ports, p->d_name);
            rate = fb_sysfs_number(path, 10);
            snprintf(path, sizeof path, "%s/%s/state", ports, p->d_name);
            c->up = fb_sysfs_line(path, state, sizeof state) && atoi(state) == 4; /* 4: ACTIVE */
            if (!(rate > 0)) {
                note(n, "%s: no rate in sysfs", c->name);
                continue;
            }
            c->gbps = rate;
            snprintf(path, sizeof path, "%s/%s/device", dir, e->d_name);
            read_nic_place(path, c);
            n->nnics++;
        }
        closedir(pd);
    }
    closedir(d);
}

/* The root port above a device: its sysfs entry is a link into devices/pciDDDD:BB/<root
 * port>/.../<device>; the component after pciDDDD:BB names the root port, whose own
 * current_link_* is the link below it (a switch's uplink, or the device's own link). */
static void read_uplink(const char *entry, struct fb_expect_gpu *g)
{
    char real[PATH_MAX], path[PATH_MAX + 64], *end;
    double width;

    if (!realpath(entry, real) || !root_port(real, g->up, sizeof g->up))
        return;
    end = strstr(real, g->up) + strlen(g->up); /* the path up to the root port */
    snprintf(path, sizeof path, "%.*s/current_link_speed", (int)(end - real), real);
    g->up_gts = fb_sysfs_number(path, 10);
    snprintf(path, sizeof path, "%.*s/current_link_width", (int)(end - real), real);
    width = fb_sysfs_number(path, 10);
    g->up_width = isnan(width) ? 0 : (int)width;
    if (isnan(fb_expect_pcie_raw(g->up_gts, g->up_width, NULL)))
        g->up[0] = '\0'; /* a port whose link cannot be read: no uplink figure */
}

/* A link's speed and width from a device folder's `which`_link_speed/width ("current", "max");
 * NAN and 0 when unread. */
static void link_of(const char *dev, const char *which, double *gts, int *width)
{
    char path[PATH_MAX + 64];
    double w;

    snprintf(path, sizeof path, "%s/%s_link_speed", dev, which);
    *gts = fb_sysfs_number(path, 10);
    snprintf(path, sizeof path, "%s/%s_link_width", dev, which);
    w = fb_sysfs_number(path, 10);
    *width = isnan(w) ? 0 : (int)w;
}

/* A GPU's link: what it trains to under load, its own max_link_* capped by the port above it
 * (the slot: a Gen4 GPU in a Gen3 slot runs Gen3), or current_link_* where no max is given;
 * and what it runs at now (an idle GPU lowers its speed, to 2.5 GT/s on many; a width below
 * the max is a fault). */
static void read_link(const char *entry, struct fb_expect_gpu *g)
{
    char real[PATH_MAX], *slash;
    double max_gts, port_gts;
    int max_width, port_width;

    link_of(entry, "current", &g->cur_gts, &g->cur_width);
    link_of(entry, "max", &max_gts, &max_width);
    g->gts = g->cur_gts;
    g->width = g->cur_width;
    if (isnan(fb_expect_pcie_raw(max_gts, max_width, NULL)))
        return;
    if (realpath(entry, real) && (slash = strrchr(real, '/'))) {
        *slash = '\0'; /* the port above: a switch's downstream port or a root port */
        link_of(real, "max", &port_gts, &port_width);
        if (!isnan(fb_expect_pcie_raw(port_gts, port_width, NULL))) {
            max_gts = port_gts < max_gts ? port_gts : max_gts;
            max_width = port_width < max_width ? port_width : max_width;
        }
    }
    g->gts = max_gts;
    g->width = max_width;
}

static void read_gpus(const char *root, struct fb_expect_node *n)
{
    char dir[PATH_CAP], path[PATH_CAP + 300];
    DIR *d;
    struct dirent *e;

    snprintf(dir, sizeof dir, "%s/bus/pci/devices", root);
    if (!(d = opendir(dir))) {
        note(n, "%s: no PCIe links read", "bus/pci/devices");
        return;
    }
    while ((e = readdir(d)) && n->ngpus < FB_EXPECT_GPUS) {
        struct fb_expect_gpu *g = &n->gpu[n->ngpus];
        double width;

        if (skip_entry(e) || strlen(e->d_name) >= sizeof g->bus)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (!fb_sysfs_nvidia_gpu(path))
            continue;
        memset(g, 0, sizeof *g);
        snprintf(g->bus, sizeof g->bus, "%s", e->d_name);
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        read_link(path, g);
        if (isnan(fb_expect_pcie_raw(g->gts, g->width, NULL)))
            note(n, "GPU %s: no PCIe link speed and width in sysfs", g->bus);
        snprintf(path, sizeof path, "%s/%s/numa_node", dir, e->d_name);
        width = fb_sysfs_number(path, 10);
        g->numa = isnan(width) || width < 0 ? -1 : (int)width;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        read_uplink(path, g);
        n->ngpus++;
    }
    closedir(d);
}

/* Sorted by name, so a description reads the same on every read (readdir's order is not). */
static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct fb_expect_nic *)a)->name, ((const struct fb_expect_nic *)b)->name);
}

static int by_bus(const void *a, const void *b)
{
    return strcmp(((const struct fb_expect_gpu *)a)->bus, ((const struct fb_expect_gpu *)b)->bus);
}

/* The kernel modules of GPUDirect RDMA: NVIDIA's, and Mellanox's older one. */
static const char *const gdr_modules[] = {"nvidia_peermem", "nv_peer_mem"};

void fb_expect_node_read(const char *root, const char *host, struct fb_expect_node *n)
{
    memset(n, 0, sizeof *n);
    snprintf(n->host, sizeof n->host, "%s", host ? host : "");
    read_ib(root, n);
    read_net(root, n);
    qsort(n->nic, (size_t)n->nnics, sizeof n->nic[0], by_name);
    read_gpus(root, n);
    qsort(n->gpu, (size_t)n->ngpus, sizeof n->gpu[0], by_bus);
    for (size_t i = 0; i < sizeof gdr_modules / sizeof gdr_modules[0] && !n->gdr[0]; i++) {
        char path[PATH_CAP + 64];
        DIR *d;
        snprintf(path, sizeof path, "%s/module/%s", root, gdr_modules[i]);
        if ((d = opendir(path))) {
            closedir(d);
            snprintf(n->gdr, sizeof n->gdr, "%s", gdr_modules[i]);
        }
    }
}

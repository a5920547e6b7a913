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

/* Adds one item to the node's note, once (the GPUs behind one root port share its item). */
static void note(struct fb_expect_node *n, const char *fmt, const char *what)
{
    char item[sizeof n->note];
    size_t len = strlen(n->note);

    snprintf(item, sizeof item, fmt, what);
    if (len + 3 >= sizeof n->note)
        return;
    for (const char *at = strstr(n->note, item); at; at = strstr(at + 1, item)) {
        /* a whole item: at the start or after "; ", and up to the next "; " or the end */
        size_t ilen = strlen(item);
        if ((at == n->note || (at - n->note >= 2 && at[-2] == ';' && at[-1] == ' ')) &&
            (at[ilen] == '\0' || at[ilen] == ';'))
            return;
    }
    if (len) {
        memcpy(n->note + len, "; ", 3);
        len += 2;
    }
    size_t room = sizeof n->note - 1 - len, ilen = strlen(item);
    memcpy(n->note + len, item, ilen < room ? ilen : room); /* cut where the note is full */
    n->note[len + (ilen < room ? ilen : room)] = '\0';
}

static bool skip_entry(const struct dirent *e)
{
    return e->d_name[0] == '.';
}

/* The root port in a device's real sysfs path (devices/pciDDDD:BB/<root port>/.../<device>),
 * looked for after `base` (the tree's own real root, so that no folder above the tree is
 * taken for a root bus): its name in up, and the end of its path in real returned; NULL when
 * the path has none (the device is the root port itself, or a tree without devices/). */
static const char *root_port(const char *real, const char *base, char *up, size_t len)
{
    const char *p, *port, *end, *from = real;
    size_t blen = strlen(base);

    if (blen && strncmp(real, base, blen) == 0 && (real[blen] == '/' || real[blen] == '\0'))
        from = real + blen;
    for (p = strstr(from, "/pci"); p; p = strstr(p + 1, "/pci")) {
        if (strchr(p + 1, '/') && strchr(p + 4, ':') && strchr(p + 4, ':') < strchr(p + 1, '/'))
            break; /* "/pci0000:00/" */
    }
    if (!p)
        return NULL;
    port = strchr(p + 1, '/') + 1;
    end = strchr(port, '/');
    if (!end || end == port || (size_t)(end - port) >= len)
        return NULL;
    memcpy(up, port, (size_t)(end - port));
    up[end - port] = '\0';
    return end;
}

/* A whole number from a sysfs reading, when it is one in [lo, hi]; `none` else (a reading that
 * is not a count: "16.9", 1e20). */
static int whole(double v, int lo, int hi, int none)
{
    v = fb_sysfs_within(v, lo, hi, true);
    return isnan(v) ? none : (int)v;
}

/* A NIC's place: its `device` entry's numa_node and root port. */
static void read_nic_place(const char *device, const char *base, struct fb_expect_nic *c)
{
    char real[PATH_MAX], path[PATH_MAX + 16];

    c->numa = -1;
    c->root[0] = '\0';
    if (!realpath(device, real))
        return;
    snprintf(path, sizeof path, "%s/numa_node", real);
    c->numa = whole(fb_sysfs_number(path, 10), 0, 1 << 16, -1);
    if (!root_port(real, base, c->root, sizeof c->root))
        c->root[0] = '\0';
}

/* Whether NIC a is the better to keep when a node has more than the model holds: one the job's
 * transport is told to use (`only`) first, then up before down, then the faster, then the
 * first by name. */
static bool nic_better(const struct fb_expect_nic *a, const struct fb_expect_nic *b,
                       const char *only)
{
    bool an = only && *only && fb_expect_named(only, a->name);
    bool bn = only && *only && fb_expect_named(only, b->name);

    if (an != bn)
        return an;
    if (a->up != b->up)
        return a->up;
    if (a->gbps != b->gbps)
        return a->gbps > b->gbps;
    return strcmp(a->name, b->name) < 0; /* a tie kept by name, not by readdir's order */
}

/* Keeps c (read into n->nic[n->nnics] when there is room, else into *spare): appended while
 * there is room; past that it takes the place of the worst kept one when better, and the one
 * left out is counted in *dropped. */
static void keep_nic(struct fb_expect_node *n, const struct fb_expect_nic *c, const char *only,
                     int *dropped)
{
    int worst = 0;

    if (n->nnics < FB_EXPECT_NICS) {
        if (c != &n->nic[n->nnics])
            n->nic[n->nnics] = *c;
        n->nnics++;
        return;
    }
    (*dropped)++;
    for (int i = 1; i < n->nnics; i++)
        if (nic_better(&n->nic[worst], &n->nic[i], only))
            worst = i;
    if (nic_better(c, &n->nic[worst], only))
        n->nic[worst] = *c;
}

static void read_net(const char *root, const char *base, const char *only,
                     struct fb_expect_node *n, int *dropped)
{
    char dir[PATH_CAP], path[PATH_CAP + 300], state[64];
    DIR *d;
    struct dirent *e;
    struct fb_expect_nic spare;

    snprintf(dir, sizeof dir, "%s/class/net", root);
    if (!(d = opendir(dir))) {
        note(n, "%s: no Ethernet ports read", "class/net");
        return;
    }
    while ((e = readdir(d))) {
        struct fb_expect_nic *c = n->nnics < FB_EXPECT_NICS ? &n->nic[n->nnics] : &spare;
        double speed, type, mtu;

        if (skip_entry(e) || strcmp(e->d_name, "lo") == 0 || strlen(e->d_name) >= sizeof c->name)
            continue;
        snprintf(path, sizeof path, "%s/%s/type", dir, e->d_name);
        type = fb_sysfs_number(path, 10);
        if (type == 32 || type == 772) /* IPoIB (its port is read as InfiniBand), loopback */
            continue;
        memset(c, 0, sizeof *c);
        snprintf(c->name, sizeof c->name, "%.31s", e->d_name); /* its length checked above */
        c->kind = FB_NIC_ETH;
        snprintf(path, sizeof path, "%s/%s/speed", dir, e->d_name);
        speed = fb_sysfs_number(path, 10);
        snprintf(path, sizeof path, "%s/%s/mtu", dir, e->d_name);
        mtu = fb_sysfs_number(path, 10);
        c->mtu = whole(mtu, 68, 1 << 20, 0); /* IPv4's least; an absent one reads as 1500 */
        snprintf(path, sizeof path, "%s/%s/operstate", dir, e->d_name);
        c->up = fb_sysfs_line(path, state, sizeof state) &&
                (strcmp(state, "up") == 0 || strcmp(state, "unknown") == 0);
        if (!(speed > 0)) {
            /* virtio and some virtual ports have none ("-1", or the read fails) */
            if (c->up)
                note(n, "%s: no link speed in sysfs", c->name);
            continue;
        }
        if (!isnan(mtu) && c->mtu == 0) {
            note(n, "%s: no usable MTU in sysfs", c->name);
            continue;
        }
        c->gbps = speed / 1000.0;
        snprintf(path, sizeof path, "%s/%s/device", dir, e->d_name);
        read_nic_place(path, base, c);
        keep_nic(n, c, only, dropped);
    }
    closedir(d);
}

static void read_ib(const char *root, const char *base, const char *only,
                    struct fb_expect_node *n, int *dropped)
{
    char dir[PATH_CAP], ports[PATH_CAP + 300], path[PATH_CAP + 600];
    DIR *d, *pd;
    struct dirent *e, *p;
    struct fb_expect_nic spare;

    snprintf(dir, sizeof dir, "%s/class/infiniband", root);
    if (!(d = opendir(dir)))
        return; /* no InfiniBand: nothing to note */
    while ((e = readdir(d))) {
        if (skip_entry(e))
            continue;
        snprintf(ports, sizeof ports, "%s/%s/ports", dir, e->d_name);
        if (!(pd = opendir(ports)))
            continue;
        while ((p = readdir(pd))) {
            struct fb_expect_nic *c = n->nnics < FB_EXPECT_NICS ? &n->nic[n->nnics] : &spare;
            double rate;

            if (skip_entry(p) || strlen(e->d_name) + strlen(p->d_name) + 2 > sizeof c->name)
                continue;
            memset(c, 0, sizeof *c);
            snprintf(ports, sizeof ports, "%s/%s", e->d_name, p->d_name);
            snprintf(c->name, sizeof c->name, "%.31s", ports); /* its length checked above */
            snprintf(ports, sizeof ports, "%s/%s/ports", dir, e->d_name);
            c->kind = FB_NIC_IB;
            snprintf(path, sizeof path, "%s/%s/rate", ports, p->d_name);
            rate = fb_sysfs_number(path, 10);
            snprintf(path, sizeof path, "%s/%s/state", ports, p->d_name);
            /* "4: ACTIVE" */
            c->up = whole(fb_sysfs_number(path, 10), 0, 255, -1) == 4;
            if (!(rate > 0)) {
                note(n, "%s: no rate in sysfs", c->name);
                continue;
            }
            c->gbps = rate;
            snprintf(path, sizeof path, "%s/%s/device", dir, e->d_name);
            read_nic_place(path, base, c);
            keep_nic(n, c, only, dropped);
        }
        closedir(pd);
    }
    closedir(d);
}

/* The root port above a device: its sysfs entry is a link into devices/pciDDDD:BB/<root
 * port>/.../<device>; the component after pciDDDD:BB names the root port, whose own
 * current_link_* is the link below it (a switch's uplink, or the device's own link). */
static void read_uplink(const char *entry, const char *base, struct fb_expect_gpu *g,
                        struct fb_expect_node *n)
{
    char real[PATH_MAX], path[PATH_MAX + 64];
    const char *end;

    if (!realpath(entry, real) || !(end = root_port(real, base, g->up, sizeof g->up)))
        return;
    snprintf(path, sizeof path, "%.*s/current_link_speed", (int)(end - real), real);
    g->up_gts = fb_sysfs_number(path, 10);
    snprintf(path, sizeof path, "%.*s/current_link_width", (int)(end - real), real);
    g->up_width = whole(fb_sysfs_number(path, 10), 1, 64, 0);
    if (isnan(fb_expect_pcie_raw(g->up_gts, g->up_width, NULL))) {
        /* no uplink figure: each GPU behind the port is judged by its own link alone */
        note(n, "root port %s: no link speed and width in sysfs", g->up);
        g->up[0] = '\0';
    }
}

/* A link's speed and width from a device folder's `which`_link_speed/width ("current", "max");
 * NAN and 0 when unread; *present tells whether either file is there. */
static void link_of(const char *dev, const char *which, double *gts, int *width, bool *present)
{
    char path[PATH_MAX + 64], line[8];
    bool there;

    snprintf(path, sizeof path, "%s/%s_link_speed", dev, which);
    there = fb_sysfs_line(path, line, sizeof line);
    *gts = fb_sysfs_number(path, 10);
    snprintf(path, sizeof path, "%s/%s_link_width", dev, which);
    there = fb_sysfs_line(path, line, sizeof line) || there;
    *width = whole(fb_sysfs_number(path, 10), 1, 64, 0);
    if (present)
        *present = there;
}

/* A GPU's link: what it trains to under load, its own max_link_* capped by the port above it
 * (the slot: a Gen4 GPU in a Gen3 slot runs Gen3), or current_link_* where no max is given;
 * and what it runs at now (an idle GPU lowers its speed, to 2.5 GT/s on many; a width below
 * the max is a fault). A max that is there but cannot be read ("Unknown": a speed the kernel
 * does not name) leaves the link unknown: the current one may be an idle GPU's. */
static void read_link(const char *entry, struct fb_expect_gpu *g)
{
    char real[PATH_MAX], *slash;
    double max_gts, port_gts;
    int max_width, port_width;
    bool max_there;

    link_of(entry, "current", &g->cur_gts, &g->cur_width, NULL);
    link_of(entry, "max", &max_gts, &max_width, &max_there);
    g->gts = g->cur_gts;
    g->width = g->cur_width;
    if (isnan(fb_expect_pcie_raw(max_gts, max_width, NULL))) {
        if (max_there) {
            g->gts = NAN;
            g->width = 0;
        }
        return;
    }
    if (realpath(entry, real) && (slash = strrchr(real, '/'))) {
        *slash = '\0'; /* the port above: a switch's downstream port or a root port */
        link_of(real, "max", &port_gts, &port_width, NULL);
        if (!isnan(fb_expect_pcie_raw(port_gts, port_width, NULL))) {
            max_gts = port_gts < max_gts ? port_gts : max_gts;
            max_width = port_width < max_width ? port_width : max_width;
        }
    }
    g->gts = max_gts;
    g->width = max_width;
}

static void read_gpus(const char *root, const char *base, struct fb_expect_node *n, int *dropped)
{
    char dir[PATH_CAP], path[PATH_CAP + 300];
    DIR *d;
    struct dirent *e;

    snprintf(dir, sizeof dir, "%s/bus/pci/devices", root);
    if (!(d = opendir(dir))) {
        note(n, "%s: no PCIe links read", "bus/pci/devices");
        return;
    }
    while ((e = readdir(d))) {
        struct fb_expect_gpu *g;
        int last = 0;

        if (skip_entry(e) || strlen(e->d_name) >= sizeof g->bus)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (!fb_sysfs_nvidia_gpu(path))
            continue;
        if (n->ngpus == FB_EXPECT_GPUS) {
            /* more than the model holds: it keeps the first in bus order, whatever order
             * readdir gives */
            (*dropped)++;
            for (int i = 1; i < n->ngpus; i++)
                if (strcmp(n->gpu[i].bus, n->gpu[last].bus) > 0)
                    last = i;
            if (strcmp(e->d_name, n->gpu[last].bus) > 0)
                continue;
            g = &n->gpu[last];
        } else {
            g = &n->gpu[n->ngpus++];
        }
        memset(g, 0, sizeof *g);
        snprintf(g->bus, sizeof g->bus, "%.15s", e->d_name); /* its length checked above */
        read_link(path, g);
        snprintf(path, sizeof path, "%s/%s/numa_node", dir, e->d_name);
        g->numa = whole(fb_sysfs_number(path, 10), 0, 1 << 16, -1);
    }
    closedir(d);
    /* the kept ones' root ports, and what could not be read, once they are known (a GPU left
     * out later would have been noted too) */
    for (int i = 0; i < n->ngpus; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, n->gpu[i].bus);
        read_uplink(path, base, &n->gpu[i], n);
        if (isnan(fb_expect_pcie_raw(n->gpu[i].gts, n->gpu[i].width, NULL)))
            note(n, "GPU %s: no PCIe link speed and width in sysfs", n->gpu[i].bus);
    }
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
    fb_expect_node_read_for(root, host, NULL, n);
}

void fb_expect_node_read_for(const char *root, const char *host, const char *only,
                             struct fb_expect_node *n)
{
    char base[PATH_MAX], count[32];
    int nics_out = 0, gpus_out = 0;

    memset(n, 0, sizeof *n);
    snprintf(n->host, sizeof n->host, "%s", host ? host : "");
    if (!realpath(root, base))
        base[0] = '\0';
    read_ib(root, base, only, n, &nics_out);
    read_net(root, base, only, n, &nics_out);
    qsort(n->nic, (size_t)n->nnics, sizeof n->nic[0], by_name);
    if (nics_out) {
        snprintf(count, sizeof count, "%d", nics_out);
        note(n,
             only && *only
                 ? "%s more ports than the model holds (16): those the job's transport is not "
                   "told to use, the down and the slowest left out"
                 : "%s more ports than the model holds (16): the down and slowest left out",
             count);
    }
    read_gpus(root, base, n, &gpus_out);
    qsort(n->gpu, (size_t)n->ngpus, sizeof n->gpu[0], by_bus);
    if (gpus_out) {
        snprintf(count, sizeof count, "%d", gpus_out);
        note(n, "%s more GPUs than the model holds (16): the last in bus order left out", count);
    }
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

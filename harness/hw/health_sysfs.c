/* The sysfs health reader: InfiniBand port counters, rate and state, and the PCIe link of each
 * HCA and NVIDIA GPU, all under one root ($FB_SYSFS_ROOT in tests: a fake tree a script edits
 * during a soak). Files are read as sysfs writes them: one line of text. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "health.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysfs.h"

enum { PATH_CAP = 4096 };

static const char *const ib_counters[] = {"symbol_error", "link_downed", "port_rcv_errors",
                                          "port_xmit_discards"};

/* A counter file: a whole decimal number up to 2^64 - 1, read exactly (sysfs's 64-bit port
 * counters pass 2^53, where a double loses the last units); false when it is not one. */
static bool read_count(const char *path, uint64_t *out)
{
    char buf[128], *end;
    unsigned long long x;

    if (!fb_sysfs_line(path, buf, sizeof buf) || buf[0] < '0' || buf[0] > '9')
        return false;
    errno = 0;
    x = strtoull(buf, &end, 10);
    if (errno == ERANGE || end == buf || (*end && *end != ' '))
        return false;
    *out = (uint64_t)x;
    return true;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* Sorted entries of a folder (so readings come in the same order every time), not "." or
 * "..". *names is malloc'ed; NULL with 0 when the folder cannot be read. */
static fb_status list_dir(const char *path, char (**names)[256], size_t *n)
{
    DIR *d = opendir(path);
    struct dirent *e;
    size_t cap = 0;
    fb_status st = FB_OK;

    *names = NULL;
    *n = 0;
    if (!d)
        return FB_OK;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (*n == cap) {
            char (*grown)[256];
            cap = cap ? 2 * cap : 16;
            if (!(grown = realloc(*names, cap * sizeof *grown))) {
                st = FB_ERR_NOMEM;
                goto out;
            }
            *names = grown;
        }
        snprintf((*names)[(*n)++], 256, "%s", e->d_name);
    }
    if (*n)
        qsort(*names, *n, sizeof **names, name_cmp);
out:
    closedir(d);
    return st;
}

/* The link of the PCI device in folder `dir`, named `name`: speed and width, each against its
 * maximum. A device without link files (a virtual function, an old kernel) adds nothing. The
 * speed is judged only when `judge_speed`: a GPU lowers its link speed when idle (Gen1 at rest
 * is power management, not a fault), so a GPU's speed is recorded and its width judged. */
static fb_status read_pcie_link(const char *dir, const char *name, bool judge_speed,
                                struct fb_health_set *set)
{
    static const char *const what[2][3] = {
        {"current_link_speed", "max_link_speed", "link_speed_gts"},
        {"current_link_width", "max_link_width", "link_width"}};
    /* what a link can read: 2.5 (Gen1) to Gen7's 128 GT/s, x1 to x32 (wider is no PCIe link) */
    static const double least[2] = {2.5, 1}, most[2] = {128, 32};
    char path[PATH_CAP];
    fb_status st = FB_OK;

    for (int i = 0; i < 2 && st == FB_OK; i++) {
        double cur, max;
        snprintf(path, sizeof path, "%s/%s", dir, what[i][0]);
        cur = fb_sysfs_within(fb_sysfs_number(path, 10), least[i], most[i], i == 1);
        snprintf(path, sizeof path, "%s/%s", dir, what[i][1]);
        max = fb_sysfs_within(fb_sysfs_number(path, 10), least[i], most[i], i == 1);
        if (!isnan(cur))
            st = fb_health_add(set, "pcie", name, what[i][2], cur, max, i == 1 || judge_speed);
    }
    return st;
}

/* The PCI address an HCA's device link points at (its last part); the HCA's name when the
 * link cannot be resolved. */
static void hca_address(const char *link, const char *dev, char *out, size_t len)
{
    char *real = realpath(link, NULL);
    const char *base = real ? strrchr(real, '/') : NULL;

    snprintf(out, len, "%s", base && base[1] ? base + 1 : dev);
    free(real);
}

static fb_status read_ib(const char *root, struct fb_health_set *set)
{
    char (*devs)[256] = NULL, (*ports)[256] = NULL;
    size_t ndevs = 0, nports = 0;
    char dir[PATH_CAP], path[PATH_CAP + 64], name[80], addr[128];
    fb_status st;

    snprintf(dir, sizeof dir, "%s/class/infiniband", root);
    if ((st = list_dir(dir, &devs, &ndevs)) != FB_OK)
        goto out;
    for (size_t d = 0; d < ndevs && st == FB_OK; d++) {
        snprintf(dir, sizeof dir, "%s/class/infiniband/%s/ports", root, devs[d]);
        free(ports);
        if ((st = list_dir(dir, &ports, &nports)) != FB_OK)
            break;
        for (size_t p = 0; p < nports && st == FB_OK; p++) {
            snprintf(name, sizeof name, "%.63s/%.15s", devs[d], ports[p]);
            for (size_t k = 0; k < sizeof ib_counters / sizeof *ib_counters && st == FB_OK;
                 k++) {
                uint64_t v;
                snprintf(path, sizeof path, "%s/%s/counters/%s", dir, ports[p], ib_counters[k]);
                if (read_count(path, &v))
                    st = fb_health_add_count(set, "ib", name, ib_counters[k], v, true);
            }
            snprintf(path, sizeof path, "%s/%s/rate", dir, ports[p]);
            double rate = fb_sysfs_within(fb_sysfs_number(path, 10), 1, 1e4, false); /* Gb/s */
            if (st == FB_OK && !isnan(rate))
                st = fb_health_add(set, "ib", name, "rate_gbps", rate, NAN, true);
            snprintf(path, sizeof path, "%s/%s/state", dir, ports[p]);
            /* a port's state: 1 DOWN to 5 ACTIVE_DEFER (ib_port_state), shown as read */
            double state = fb_sysfs_within(fb_sysfs_number(path, 10), 0, 15, false);
            if (st == FB_OK && !isnan(state))
                st = fb_health_add(set, "ib", name, "state", state, NAN, true);
        }
        snprintf(path, sizeof path, "%s/class/infiniband/%s/device", root, devs[d]);
        hca_address(path, devs[d], addr, sizeof addr);
        if (st == FB_OK)
            st = read_pcie_link(path, addr, true, set);
    }
out:
    free(devs);
    free(ports);
    return st;
}

/* Every NVIDIA GPU of bus/pci/devices under root: counted into *count (may be NULL) and its link
 * read into set (may be NULL). *opened (may be NULL): whether the folder could be read. */
static fb_status scan_gpus(const char *root, struct fb_health_set *set, int *count, bool *opened)
{
    char (*bdfs)[256] = NULL;
    size_t n = 0;
    char dir[PATH_CAP], path[2 * PATH_CAP];
    fb_status st;
    DIR *d;

    if (count)
        *count = 0;
    snprintf(dir, sizeof dir, "%s/bus/pci/devices", root);
    if (opened && (*opened = (d = opendir(dir)) != NULL))
        closedir(d);
    if ((st = list_dir(dir, &bdfs, &n)) != FB_OK)
        goto out;
    for (size_t i = 0; i < n && st == FB_OK; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, bdfs[i]);
        if (!fb_sysfs_nvidia_gpu(path))
            continue;
        if (count)
            (*count)++;
        if (set)
            st = read_pcie_link(path, bdfs[i], false, set);
    }
out:
    free(bdfs);
    return st;
}

fb_status fb_health_sysfs_read(const char *root, struct fb_health_set *set)
{
    fb_status st = read_ib(root, set);
    return st == FB_OK ? scan_gpus(root, set, NULL, NULL) : st;
}

fb_status fb_health_sysfs_read_node(const char *root, struct fb_health_set *set, int *gpus)
{
    bool opened = false;
    fb_status st = read_ib(root, set);

    if (st == FB_OK)
        st = scan_gpus(root, set, gpus, &opened);
    return st == FB_OK && !opened ? FB_ERR_IO : st;
}

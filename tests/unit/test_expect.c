/* The expected-figure model (harness/expect/, docs/expected.md): the links' figures, the NIC a
 * node's traffic takes, the sysfs reader over the machines of tests/data/machines/, the site
 * file of efficiencies, and every row of docs/expected.md's table of published figures: the
 * model column is what the model computes from the row's input, and its error is within 10%
 * unless the row gives a reason.
 * docs/reference-figures.md's efficiencies are the code's.
 *   test_expect MACHINES_DIR EXPECTED_MD REFERENCE_FIGURES_MD */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "expect.h"
#include "test.h"

static char tmp[64];
static const char *machines; /* tests/data/machines */

static const char *write_tmp(const char *name, const char *text);
static const char *write_raw(const char *name, const char *data, size_t len);

/* A figure of a machine described in tests/data/machines, its sysfs tree and its nvml.txt:
 * "NAME pair I J" (GPUs I and J in bus order), "NAME ring" (NCCL over all its GPUs), "NAME h2d
 * I", "NAME net" (its NIC toward other nodes), "NAME rails N" (its NICs for N ranks a node);
 * NAN when the input is not one. */
static double machine_fig(const char *in)
{
    static struct fb_expect_node n;
    char name[64], what[16], root[1024], facts[1100], err[256];
    const struct fb_expect_gpu *all[FB_EXPECT_GPUS];
    struct fb_expect_fig f = {NAN, ""};
    int a = -1, b = -1;
    FILE *probe;

    if (sscanf(in, "%63s %15s %d %d", name, what, &a, &b) < 2)
        return NAN;
    snprintf(root, sizeof root, "%s/%s", machines, name);
    fb_expect_node_read(root, name, &n);
    snprintf(facts, sizeof facts, "%s/nvml.txt", root);
    if ((probe = fopen(facts, "r"))) {
        fclose(probe);
        if (fb_expect_node_nvml(facts, &n, err, sizeof err) != FB_OK)
            return NAN;
    }
    if (strcmp(what, "pair") == 0 && a >= 0 && b >= 0 && a < n.ngpus && b < n.ngpus)
        fb_expect_gpu_pair(&n.gpu[a], &n.gpu[b], &f);
    else if (strcmp(what, "h2d") == 0 && a >= 0 && a < n.ngpus)
        fb_expect_gpu_h2d(&n.gpu[a], &f);
    else if (strcmp(what, "net") == 0)
        fb_expect_node_net(&n, NULL, &f);
    else if (strcmp(what, "rails") == 0 && a > 0)
        fb_expect_node_rails(&n, NULL, a, &f);
    else if (strcmp(what, "ring") == 0) {
        for (int i = 0; i < n.ngpus; i++)
            all[i] = &n.gpu[i];
        fb_expect_node_ring(all, n.ngpus, &f);
    }
    return f.gbps;
}

/* The model's figure for a table row's input ("nvlink 2 x2", "nvring 4 x18", "pcie 8 x16",
 * "ib 100", "ib 200 x8", "eth 10000 mtu 1500", "machine ..." (machine_fig), or two of them joined
 * by " and ": a ring over both, the slower); NAN when the input is not one. */
static double model_of(const char *in)
{
    struct fb_expect_fig f;
    struct fb_expect_nic nic;
    double a;
    int b;
    const char *and = strstr(in, " and ");

    if (and) {
        char first[128];
        snprintf(first, sizeof first, "%.*s", (int)(and - in), in);
        return fmin(model_of(first), model_of(and + 5));
    }
    if (strncmp(in, "machine ", 8) == 0)
        return machine_fig(in + 8);
    memset(&nic, 0, sizeof nic);
    if (sscanf(in, "nvring %lf x%d", &a, &b) == 2) {
        fb_expect_nvring((int)a, b, &f);
        return f.gbps;
    }
    if (sscanf(in, "ib %lf x%d", &a, &b) == 2) {
        nic.kind = FB_NIC_IB;
        nic.gbps = a;
        return fb_expect_nic_payload(&nic) * b;
    }
    if (sscanf(in, "nvlink %lf x%d", &a, &b) == 2) {
        fb_expect_nvlink((int)a, b, &f);
        return f.gbps;
    }
    if (sscanf(in, "pcie %lf x%d", &a, &b) == 2) {
        struct fb_expect_gpu g = {.bus = "0000:00:00.0", .gts = a, .width = b, .numa = -1};
        fb_expect_gpu_h2d(&g, &f);
        return f.gbps;
    }
    if (sscanf(in, "ib %lf", &a) == 1) {
        nic.kind = FB_NIC_IB;
        nic.gbps = a;
        return fb_expect_nic_payload(&nic);
    }
    if (sscanf(in, "eth %lf mtu %d", &a, &b) == 2) {
        nic.kind = FB_NIC_ETH;
        nic.gbps = a / 1000.0;
        nic.mtu = b;
        return fb_expect_nic_payload(&nic);
    }
    return NAN;
}

/* Splits a Markdown table row into its cells (trimmed); returns how many. */
static int cells(char *line, char **cell, int most)
{
    int n = 0;
    char *p = strchr(line, '|');

    while (p && n < most) {
        char *next = strchr(p + 1, '|');
        if (!next)
            break;
        *next = '\0';
        p++;
        while (*p == ' ')
            p++;
        for (char *e = p + strlen(p); e > p && e[-1] == ' ';)
            *--e = '\0';
        cell[n++] = p;
        p = next;
    }
    return n;
}

static void check_table(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[2048];
    bool in_table = false;
    int rows = 0, checked = 0;

    CHECK(f != NULL);
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char *c[8], copy[2048];
        int n;
        double published, shown, model, err, shown_err;

        if (strstr(line, "<!-- model table")) {
            in_table = true;
            continue;
        }
        if (!in_table)
            continue;
        if (line[0] != '|') {
            if (rows > 0)
                break;
            continue;
        }
        snprintf(copy, sizeof copy, "%s", line);
        n = cells(copy, c, 8);
        if (n != 7 || strcmp(c[0], "configuration") == 0 || strncmp(c[0], "---", 3) == 0)
            continue;
        rows++;
        model = model_of(c[2]);
        published = atof(c[3]);
        shown = atof(c[4]);
        shown_err = atof(c[5]);
        if (isnan(model) || !(published > 0) || !(shown > 0)) {
            fprintf(stderr, "%s: row '%s': input '%s' or a figure cannot be read\n", path, c[0],
                    c[2]);
            fb_test_failures++;
            continue;
        }
        err = (model / published - 1) * 100;
        /* the model column to its printed digits (0.1%), the error to its one decimal */
        if (fabs(model / shown - 1) > 0.001 || fabs(err - shown_err) > 0.051) {
            fprintf(stderr, "%s: row '%s': the model gives %.6g GB/s (error %+.2f%%), the table "
                    "says %s (%s)\n", path, c[0], model, err, c[4], c[5]);
            fb_test_failures++;
        }
        if (fabs(err) > 10 && !strchr(c[6], ';')) {
            fprintf(stderr, "%s: row '%s': error %+.1f%% is outside 10%% and the row gives no "
                    "reason\n", path, c[0], err);
            fb_test_failures++;
        }
        checked++;
    }
    fclose(f);
    CHECK(rows >= 8);
    CHECK(checked == rows);
    printf("docs/expected.md: %d rows of published figures against the model\n", rows);
}

/* docs/reference-figures.md's table of efficiencies: every key of the code, with its value. */
static void check_efficiency_doc(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    size_t found = 0;

    CHECK(f != NULL);
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char key[32];
        double v;
        if (sscanf(line, "| `%31[a-z_]` | %lf |", key, &v) != 2)
            continue;
        if (isnan(fb_expect_eff(key))) {
            fprintf(stderr, "%s: efficiency '%s' is not in the code\n", path, key);
            fb_test_failures++;
        } else if (fb_expect_eff(key) != v) {
            fprintf(stderr, "%s: efficiency '%s' is %g there, %g in the code\n", path, key, v,
                    fb_expect_eff(key));
            fb_test_failures++;
        } else {
            found++;
        }
    }
    fclose(f);
    CHECK(found == fb_expect_neff);
}

static void check_machines(const char *dir)
{
    char root[1024];
    struct fb_expect_node n;
    struct fb_expect_fig f;
    const struct fb_expect_nic *nic;

    /* C4140 M: four GPUs on Gen3 x16, an EDR port taken over the 10 GbE one, IPoIB left out */
    snprintf(root, sizeof root, "%s/c4140-m", dir);
    fb_expect_node_read(root, "c4140", &n);
    CHECK(n.ngpus == 4 && n.nnics == 2);
    CHECK(n.note[0] == '\0');
    CHECK(n.ngpus == 4 && strcmp(n.gpu[0].bus, "0000:1a:00.0") == 0 && n.gpu[3].width == 16);
    fb_expect_gpu_h2d(&n.gpu[0], &f);
    CHECK_NEAR(f.gbps, 8.0 * 16 * 128 / 130 / 8 * 0.79, 1e-9);
    CHECK_STR(f.bound, "PCIe Gen3 x16 (GPU 0000:1a:00.0)");
    nic = fb_expect_node_nic(&n, NULL);
    CHECK(nic && nic->kind == FB_NIC_IB && strcmp(nic->name, "mlx5_0/1") == 0);
    fb_expect_node_net(&n, NULL, &f);
    CHECK_NEAR(f.gbps, 12.0, 1e-9);
    CHECK_STR(f.bound, "IB 100 Gb/s mlx5_0/1");
    /* told to use the Ethernet port (OMPI_MCA_btl_tcp_if_include=eno1): that one */
    fb_expect_node_net(&n, "eno1", &f);
    CHECK_NEAR(f.gbps, 10.0 / 8 * 1448 / 1538, 1e-9);
    CHECK_STR(f.bound, "eth 10 Gb/s eno1");
    /* NCCL_IB_HCA=mlx5_0 names the port by its device */
    fb_expect_node_net(&n, "mlx5_0", &f);
    CHECK_STR(f.bound, "IB 100 Gb/s mlx5_0/1");
    /* a name no port has: no figure, not another port's */
    fb_expect_node_net(&n, "eth7", &f);
    CHECK(isnan(f.gbps) && f.bound[0] == '\0');

    CHECK(n.gpu[0].up[0] == '\0'); /* no devices/ tree: the uplink is not known */
    fb_expect_gpu_h2d_shared(&n.gpu[0], 4, &f); /* so each GPU keeps its own link's figure */
    CHECK_STR(f.bound, "PCIe Gen3 x16 (GPU 0000:1a:00.0)");

    /* C4140 K: four GPUs behind one switch, one Gen3 x16 link from the root port 0000:00:03.0
     * (each bus/pci/devices entry links into devices/pci0000:00/0000:00:03.0/0000:01:00.0/...): all at
     * once, a quarter of that link each */
    snprintf(root, sizeof root, "%s/c4140-k", dir);
    fb_expect_node_read(root, "k", &n);
    CHECK(n.ngpus == 4);
    for (int i = 0; i < n.ngpus; i++)
        CHECK(strcmp(n.gpu[i].up, "0000:00:03.0") == 0 && n.gpu[i].up_gts == 8 &&
              n.gpu[i].up_width == 16);
    fb_expect_gpu_h2d_shared(&n.gpu[2], 4, &f);
    CHECK_NEAR(f.gbps, 8.0 * 16 * 128 / 130 / 8 * 0.79 / 4, 1e-9);
    CHECK_STR(f.bound, "PCIe Gen3 x16 uplink 0000:00:03.0 / 4 GPUs");
    fb_expect_gpu_h2d_shared(&n.gpu[2], 1, &f); /* alone: its own link */
    CHECK_STR(f.bound, "PCIe Gen3 x16 (GPU 0000:05:00.0)");

    /* the K's GPU 03 says it can do Gen4 (max_link_speed 16 GT/s) in a Gen3 switch port: Gen3 */
    CHECK(n.gpu[0].gts == 8 && n.gpu[0].width == 16 && n.gpu[0].cur_gts == 8);

    /* Gen4 + HDR: the DOWN port is not taken; jumbo frames on the 25 GbE port */
    snprintf(root, sizeof root, "%s/gen4-hdr", dir);
    fb_expect_node_read(root, "gen4", &n);
    /* GPU 07 trained at x8 of its x16 (a fault: the bound says so); GPU 0f idle at 2.5 GT/s
     * (its max, Gen4, is the figure; the bound says nothing of an idle speed) */
    fb_expect_gpu_h2d(&n.gpu[0], &f);
    CHECK_NEAR(f.gbps, 16.0 * 16 * 128 / 130 / 8 * 0.79, 1e-9);
    CHECK_STR(f.bound, "PCIe Gen4 x16 (GPU 0000:07:00.0 now x8)");
    CHECK(n.gpu[1].cur_gts == 2.5 && n.gpu[1].gts == 16);
    fb_expect_gpu_h2d(&n.gpu[1], &f);
    CHECK_STR(f.bound, "PCIe Gen4 x16 (GPU 0000:0f:00.0)");
    CHECK(n.ngpus == 2 && n.nnics == 3);
    fb_expect_node_net(&n, NULL, &f);
    CHECK_STR(f.bound, "IB 200 Gb/s mlx5_0/1");
    fb_expect_node_net(&n, "eth0", &f);
    CHECK_NEAR(f.gbps, 25.0 / 8 * (9000 - 52) / (9000 + 38), 1e-9);
    fb_expect_node_net(&n, "mlx5_1", &f); /* named, but DOWN */
    CHECK(isnan(f.gbps));

    /* 10 GbE: eno2, down and without a speed file, is left out with nothing said, as is lo; no
     * GPU */
    snprintf(root, sizeof root, "%s/eth-10g", dir);
    fb_expect_node_read(root, "box", &n);
    CHECK(n.ngpus == 0 && n.nnics == 1 && strcmp(n.nic[0].name, "eno1") == 0);
    CHECK(strstr(n.note, "eno2") == NULL); /* down: nothing to say */
    fb_expect_node_net(&n, NULL, &f);
    CHECK_STR(f.bound, "eth 10 Gb/s eno1");

    /* DGX A100: eight HDR ports, all ACTIVE: the rails of 8 ranks a node are all eight, of 2
     * ranks two (one NIC a GPU) */
    snprintf(root, sizeof root, "%s/dgx-a100", dir);
    fb_expect_node_read(root, "dgx", &n);
    CHECK(n.nnics == 8 && n.ngpus == 0);
    fb_expect_node_rails(&n, NULL, 8, &f);
    CHECK_NEAR(f.gbps, 8 * 24.0, 1e-9);
    CHECK_STR(f.bound, "IB 200 Gb/s x8 mlx5_0/1...");
    fb_expect_node_rails(&n, NULL, 2, &f);
    CHECK_NEAR(f.gbps, 2 * 24.0, 1e-9);
    fb_expect_node_rails(&n, "mlx5_3", 8, &f); /* NCCL_IB_HCA=mlx5_3: that one alone */
    CHECK_NEAR(f.gbps, 24.0, 1e-9);
    CHECK_STR(f.bound, "IB 200 Gb/s mlx5_3/1");

    /* no tree at all: every part said, no figure */
    fb_expect_node_read("/nonexistent-sysfs", "none", &n);
    CHECK(n.nnics == 0 && n.ngpus == 0);
    CHECK(strstr(n.note, "class/net") && strstr(n.note, "bus/pci/devices"));
}

/* GPU pairs and rings inside a node: NVLink from the facts file in NVML's place, else PCIe
 * through a switch or a root complex, nothing across NUMA nodes. */
static void check_gpu_pairs(const char *dir)
{
    char root[1024], facts[1100], err[512];
    struct fb_expect_node n;
    struct fb_expect_fig f;
    const struct fb_expect_gpu *all[FB_EXPECT_GPUS];

    /* C4140 M without NVML: PCIe only; 1a and 1c on NUMA node 0, 1d and 1e on node 1 */
    snprintf(root, sizeof root, "%s/c4140-m", dir);
    fb_expect_node_read(root, "m", &n);
    CHECK(n.gpu[0].numa == 0 && n.gpu[2].numa == 1);
    fb_expect_gpu_pair(&n.gpu[0], &n.gpu[1], &f);
    CHECK_NEAR(f.gbps, 8.0 * 16 * 128 / 130 / 8 * 0.79, 1e-9);
    CHECK_STR(f.bound, "PCIe Gen3 x16 root complex");
    fb_expect_gpu_pair(&n.gpu[0], &n.gpu[2], &f);
    CHECK(isnan(f.gbps) && f.bound[0] == '\0');
    for (int i = 0; i < 4; i++)
        all[i] = &n.gpu[i];
    fb_expect_node_ring(all, 4, &f); /* a hop crosses the sockets: nothing honest */
    CHECK(isnan(f.gbps));
    fb_expect_node_ring(all, 2, &f); /* the two GPUs of socket 0 */
    CHECK_STR(f.bound, "PCIe Gen3 x16 root complex");

    /* ... with what NVML says: NV2 between every pair, V100 so NVLink 2 */
    snprintf(facts, sizeof facts, "%s/nvml.txt", root);
    CHECK(fb_expect_node_nvml(facts, &n, err, sizeof err) == FB_OK);
    CHECK(n.ngpus == 4 && n.gpu[1].npeers == 3 && n.gpu[1].peer[0].links == 2);
    CHECK_STR(n.gpu[3].model, "Tesla V100-SXM2-32GB");
    CHECK(fb_expect_gpu_nvlink_gen(n.gpu[3].model) == 2);
    fb_expect_gpu_pair(&n.gpu[0], &n.gpu[2], &f);
    CHECK_NEAR(f.gbps, 47.9, 1e-9);
    CHECK_STR(f.bound, "NVLink2 x2");
    fb_expect_node_ring(all, 4, &f); /* each GPU's 6 links */
    CHECK_NEAR(f.gbps, 6 * 25 * 0.822, 1e-9);
    CHECK_STR(f.bound, "NVLink2 x6 (GPU 0000:1a:00.0)");
    fb_expect_node_ring(all, 2, &f); /* two GPUs: the pair's 2 */
    CHECK_NEAR(f.gbps, 2 * 25 * 0.822, 1e-9);

    /* the M's EDR HCA on NUMA node 0, near GPUs 1a and 1c; GPUDirect RDMA's module loaded */
    snprintf(root, sizeof root, "%s/c4140-m", dir);
    fb_expect_node_read(root, "m", &n);
    CHECK(n.nic[1].kind == FB_NIC_IB && n.nic[1].numa == 0 && n.nic[1].root[0] == '\0');
    CHECK(fb_expect_nic_near(&n.nic[1], &n.gpu[1]) == 1 && fb_expect_nic_near(&n.nic[1], &n.gpu[2]) == 0);
    CHECK(n.nic[0].numa == -1 && fb_expect_nic_near(&n.nic[0], &n.gpu[0]) == 0); /* eno1: no device */
    CHECK_STR(n.gdr, "nvidia_peermem");

    /* C4140 K without NVML: the four GPUs reach each other through their switch, and the EDR
     * HCA sits behind it too */
    snprintf(root, sizeof root, "%s/c4140-k", dir);
    fb_expect_node_read(root, "k", &n);
    CHECK(n.nnics == 1 && strcmp(n.nic[0].root, "0000:00:03.0") == 0 && n.nic[0].numa == 0);
    CHECK(fb_expect_nic_near(&n.nic[0], &n.gpu[3]) == 2);
    CHECK(n.gdr[0] == '\0');
    fb_expect_gpu_pair(&n.gpu[1], &n.gpu[3], &f);
    CHECK_NEAR(f.gbps, 8.0 * 16 * 128 / 130 / 8 * 0.79, 1e-9);
    CHECK_STR(f.bound, "PCIe Gen3 x16 switch 0000:00:03.0");

    /* DGX A100: GPUs known from the facts file alone, each with 12 links to NVSwitches */
    snprintf(root, sizeof root, "%s/dgx-a100", dir);
    fb_expect_node_read(root, "dgx", &n);
    snprintf(facts, sizeof facts, "%s/nvml.txt", root);
    CHECK(fb_expect_node_nvml(facts, &n, err, sizeof err) == FB_OK);
    CHECK(n.ngpus == 8 && n.gpu[7].nvl_switch == 12 && strcmp(n.gpu[7].bus, "0000:bd:00.0") == 0);
    fb_expect_gpu_pair(&n.gpu[0], &n.gpu[5], &f);
    CHECK_NEAR(f.gbps, 12 * 25 * 0.958, 1e-9);
    CHECK_STR(f.bound, "NVLink3 x12");
    for (int i = 0; i < 8; i++)
        all[i] = &n.gpu[i];
    fb_expect_node_ring(all, 8, &f);
    CHECK_NEAR(f.gbps, 12 * 25 * 0.822, 1e-9);
    CHECK_STR(f.bound, "NVLink3 x12 (GPU 0000:07:00.0)");

    /* Gen4 GPUs on two NUMA nodes: nothing between them */
    snprintf(root, sizeof root, "%s/gen4-hdr", dir);
    fb_expect_node_read(root, "g", &n);
    fb_expect_gpu_pair(&n.gpu[0], &n.gpu[1], &f);
    CHECK(isnan(f.gbps));

    /* ESC8000A: eight Gen5 GPUs, two behind each switch, two switches a socket. A pair behind
     * one switch and a pair under two root ports of one socket each get the slower GPU link;
     * a pair across the sockets nothing, nor the ring over all eight (one hop crosses) */
    snprintf(root, sizeof root, "%s/esc8000a", dir);
    fb_expect_node_read(root, "esc", &n);
    CHECK(n.ngpus == 8 && strcmp(n.gpu[2].bus, "0000:73:00.0") == 0 && n.gpu[4].numa == 1);
    fb_expect_gpu_pair(&n.gpu[0], &n.gpu[1], &f);
    CHECK_NEAR(f.gbps, 32.0 * 16 * 128 / 130 / 8 * 0.79, 1e-9);
    CHECK_STR(f.bound, "PCIe Gen5 x16 switch 0000:10:01.1");
    fb_expect_gpu_pair(&n.gpu[0], &n.gpu[2], &f);
    CHECK_NEAR(f.gbps, 32.0 * 16 * 128 / 130 / 8 * 0.79, 1e-9);
    CHECK_STR(f.bound, "PCIe Gen5 x16 root complex");
    fb_expect_gpu_pair(&n.gpu[0], &n.gpu[4], &f);
    CHECK(isnan(f.gbps));
    for (int i = 0; i < 8; i++)
        all[i] = &n.gpu[i];
    fb_expect_node_ring(all, 8, &f);
    CHECK(isnan(f.gbps));
    fb_expect_node_ring(all, 4, &f); /* the first socket's four: its slowest hop */
    CHECK_NEAR(f.gbps, 32.0 * 16 * 128 / 130 / 8 * 0.79, 1e-9);

    /* DGX-1 V100: one or two links by pair, six a GPU; a pair the mesh does not join (SYS)
     * gets nothing; the ring is bounded by a GPU's six */
    snprintf(root, sizeof root, "%s/dgx1-v100", dir);
    fb_expect_node_read(root, "dgx1", &n);
    snprintf(facts, sizeof facts, "%s/nvml.txt", root);
    CHECK(fb_expect_node_nvml(facts, &n, err, sizeof err) == FB_OK);
    CHECK(n.ngpus == 8);
    fb_expect_gpu_pair(&n.gpu[0], &n.gpu[1], &f);
    CHECK_NEAR(f.gbps, 25 * 0.958, 1e-9);
    CHECK_STR(f.bound, "NVLink2 x1");
    fb_expect_gpu_pair(&n.gpu[0], &n.gpu[4], &f);
    CHECK_NEAR(f.gbps, 2 * 25 * 0.958, 1e-9);
    fb_expect_gpu_pair(&n.gpu[0], &n.gpu[5], &f); /* SYS: no PCIe tree described either */
    CHECK(isnan(f.gbps));
    for (int i = 0; i < 8; i++)
        all[i] = &n.gpu[i];
    fb_expect_node_ring(all, 8, &f);
    CHECK_NEAR(f.gbps, 6 * 25 * 0.822, 1e-9);
    CHECK_STR(f.bound, "NVLink2 x6 (GPU 0000:06:00.0)");

    /* datasheet peaks by name and precision; a PCIe or NVL part, or an unknown one, has none */
    fb_expect_gpu_peak("NVIDIA H100 80GB HBM3", "fp16", &f);
    CHECK(f.gbps == 989);
    CHECK_STR(f.bound, "peak H100-SXM5 fp16 989 TFLOP/s");
    fb_expect_gpu_peak("Tesla V100-SXM2-32GB", "fp32", &f);
    CHECK_NEAR(f.gbps, 15.7, 1e-12);
    fb_expect_gpu_peak("NVIDIA A100-SXM4-80GB", "bf16", &f);
    CHECK(f.gbps == 312);
    fb_expect_gpu_peak("NVIDIA H100 PCIe", "fp16", &f);
    CHECK(isnan(f.gbps) && f.bound[0] == '\0');
    fb_expect_gpu_peak("NVIDIA H200 NVL", "fp16", &f);
    CHECK(isnan(f.gbps));
    fb_expect_gpu_peak("NVIDIA H200", "fp8", &f);
    CHECK(isnan(f.gbps));
    fb_expect_gpu_peak("Tesla P100-SXM2-16GB", "fp16", &f);
    CHECK(isnan(f.gbps));

    /* an unknown GPU name: links, but no generation, so no figure */
    CHECK(fb_expect_gpu_nvlink_gen("NVIDIA GH200 480GB") == 4 &&
          fb_expect_gpu_nvlink_gen("NVIDIA B200") == 5 && fb_expect_gpu_nvlink_gen("Tesla P100") == 0);
    snprintf(n.gpu[0].model, sizeof n.gpu[0].model, "Tesla P100-SXM2");
    n.gpu[0].npeers = 1;
    snprintf(n.gpu[0].peer[0].bus, sizeof n.gpu[0].peer[0].bus, "%s", n.gpu[1].bus);
    n.gpu[0].peer[0].links = 4;
    fb_expect_gpu_pair(&n.gpu[0], &n.gpu[1], &f);
    CHECK(isnan(f.gbps));
}

/* Bad facts files: one line naming file:line and what, the node left as it was. */
static void check_nvml_facts(void)
{
    struct fb_expect_node n;
    char err[512];
    static const struct {
        const char *name, *text, *says;
    } bad[] = {
        {"f1", "gpu 0000:1a:00.0 V100\nnvlnk 0000:1a:00.0 0000:1c:00.0 2\n", "f1:2: unknown line"},
        {"f2", "gpu 1a:00 V100\n", "f2:1: not a PCI bus id"},
        {"f3", "nvlink 0000:1a:00.0 0000:1c:00.0 0\n", "f3:1: a link count from 1 to 18"},
        {"f4", "nvlink 0000:1a:00.0 0000:1a:00.0 2\n", "f4:1: the peer is not another GPU"},
        {"f5", "nvlink 0000:1a:00.0 switch 12 extra\n", "f5:1: expected 'nvlink BUS"},
        {"f6", "# ok\n\ngpu 0000:1a:00.0\n", "f6:3: a GPU name of 1 to 47"},
        /* nvidia-smi's matrix gives each pair twice: given twice, the links are not doubled */
        {"f7", "nvlink 0000:03:00.0 0000:04:00.0 2\nnvlink 0000:04:00.0 0000:03:00.0 2\n",
         "f7:2: the NVLinks between these two GPUs were given already"},
        {"f8", "nvlink 0000:03:00.0 switch 18\nnvlink 0000:03:00.0 switch 18\n",
         "f8:2: this GPU's NVLinks to NVSwitches were given already"},
        {"f9", "gpu 0000:03:00.0 V100\ngpu 0000:03:00.0 A100\n", "f9:2: this GPU's name was given"},
        {"f10", "nvlink 0000:03:00.0 0000:04:00.0 4294967298\n", "f10:1: a link count from 1"},
        {"f11", "bogus line here\n", "f11:1: unknown line"},
        {"f12", "gpu 0000000000000000000000000000000:01:00.0Tesla V100\n", "f12:1: expected 'gpu"},
        /* a CR inside the line (it was cut there, and is no longer): the name reaches the
         * screen, so no control character in it */
        {"f15", "gpu 0000:01:00.0 H100\rjunk\n",
         "f15:1: control character: \\x0d after 'gpu 0000:01:00.0 H100'"},
        {"f16", "gpu 0000:01:00.0 H\x1b[31m100\n", "f16:1: control character: \\x1b after"},
    };

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&n, 0, sizeof n);
        err[0] = '\0';
        CHECK(fb_expect_nvml_load(write_tmp(bad[i].name, bad[i].text), &n, err, sizeof err) ==
              FB_ERR_USAGE);
        if (!strstr(err, bad[i].says)) {
            fprintf(stderr, "facts file %s: '%s', expected '%s'\n", bad[i].name, err, bad[i].says);
            fb_test_failures++;
        }
        CHECK(n.ngpus == 0); /* nothing taken from a bad file */
    }
    /* a NUL byte is said as one, not as a line too long */
    {
        static const char nul[] = "gpu 0000:03:00.0 V100\0x\ngpu 0000:04:00.0 V100\n";
        memset(&n, 0, sizeof n);
        CHECK(fb_expect_nvml_load(write_raw("f13", nul, sizeof nul - 1), &n, err, sizeof err) ==
              FB_ERR_USAGE);
        CHECK(strstr(err, "f13:1: a NUL byte in the line") != NULL);
    }
    /* a line of 512 characters is too long (after its comment and blanks are taken away) */
    {
        static char text[600];
        int k = snprintf(text, sizeof text, "gpu 0000:03:00.0 ");
        while (k < 512)
            text[k++] = 'x';
        snprintf(text + k, sizeof text - (size_t)k, "\n");
        memset(&n, 0, sizeof n);
        CHECK(fb_expect_nvml_load(write_tmp("f17", text), &n, err, sizeof err) == FB_ERR_USAGE);
        CHECK(strstr(err, "f17:1: line longer than 511 characters") != NULL);
    }
    /* a path with a line break stays one line in the message */
    CHECK(fb_expect_nvml_load(write_tmp("f\n14", "bogus\n"), &n, err, sizeof err) == FB_ERR_USAGE);
    CHECK(strchr(err, '\n') == NULL && strstr(err, "f\\x0a14:1: unknown line") != NULL);
    CHECK(fb_expect_nvml_load("/nonexistent/nvml.txt", &n, err, sizeof err) == FB_ERR_IO);
    CHECK(strstr(err, "/nonexistent/nvml.txt") != NULL);
    /* any spelling of a bus id is NVML's or sysfs's; counted both ways */
    memset(&n, 0, sizeof n);
    CHECK(fb_expect_nvml_load(write_tmp("good", "nvlink 00000000:1A:00.0 0000:1c:00.0 3\n"), &n,
                              err, sizeof err) == FB_OK);
    CHECK(n.ngpus == 2 && strcmp(n.gpu[0].bus, "0000:1a:00.0") == 0 && n.gpu[1].peer[0].links == 3);
    /* the GPUs a file adds come in bus order, not in the file's */
    memset(&n, 0, sizeof n);
    CHECK(fb_expect_nvml_load(write_tmp("order", "gpu 0000:1c:00.0 B\ngpu 0000:1a:00.0 A\n"), &n,
                              err, sizeof err) == FB_OK);
    CHECK(n.ngpus == 2 && strcmp(n.gpu[0].bus, "0000:1a:00.0") == 0 &&
          strcmp(n.gpu[0].model, "A") == 0);
}

/* A ring collective over nodes, even or not: the slowest of each node's ring and, over two
 * nodes or more, each node's rails; any hop unknown, nothing. DGX A100s (every GPU 12 NVLink3
 * links through NVSwitches: a ring of 246.6 GB/s) with hand-given rails of 24 GB/s a NIC. */
static void check_rings_over_nodes(const char *dir)
{
    char root[1024], facts[1100], err[512];
    static struct fb_expect_node dgx, esc;
    struct fb_expect_ring_node nodes[3];
    struct fb_expect_fig f;
    const double ring = 12 * 25 * 0.822;

    snprintf(root, sizeof root, "%s/dgx-a100", dir);
    fb_expect_node_read(root, "dgx", &dgx);
    snprintf(facts, sizeof facts, "%s/nvml.txt", root);
    CHECK(fb_expect_node_nvml(facts, &dgx, err, sizeof err) == FB_OK);
    snprintf(root, sizeof root, "%s/esc8000a", dir);
    fb_expect_node_read(root, "esc", &esc);
    CHECK(dgx.ngpus == 8 && esc.ngpus == 8);
    memset(nodes, 0, sizeof nodes);
    for (int i = 0; i < 8; i++) {
        nodes[0].gpu[i] = &dgx.gpu[i];
        nodes[1].gpu[i] = &dgx.gpu[i];
        nodes[2].gpu[i] = &esc.gpu[i];
    }
    nodes[0].ngpus = 8;
    nodes[0].rails = (struct fb_expect_fig){8 * 24.0, "IB x8"};
    nodes[1].ngpus = 2;
    nodes[1].rails = (struct fb_expect_fig){2 * 24.0, "IB x2"};

    fb_expect_ring_nodes(nodes, 1, &f); /* one node: its ring, no NIC on the way */
    CHECK_NEAR(f.gbps, ring, 1e-9);
    CHECK_STR(f.bound, "NVLink3 x12 (GPU 0000:07:00.0)");
    fb_expect_ring_nodes(nodes, 2, &f); /* 8 + 2 ranks: the smaller node's two rails */
    CHECK_NEAR(f.gbps, 48, 1e-9);
    CHECK_STR(f.bound, "IB x2");
    nodes[1].rails.gbps = 8 * 24.0; /* were it to have eight, the rails would still bound it */
    fb_expect_ring_nodes(nodes, 2, &f);
    CHECK_NEAR(f.gbps, 192, 1e-9);
    nodes[1].rails.gbps = 300; /* and past the ring, the ring */
    nodes[0].rails.gbps = 300;
    fb_expect_ring_nodes(nodes, 2, &f);
    CHECK_NEAR(f.gbps, ring, 1e-9);
    nodes[0].rails.gbps = 192;
    nodes[1].ngpus = 1; /* 8 + 1: a node of one rank has no ring, only its rails */
    nodes[1].rails = (struct fb_expect_fig){24, "IB x1"};
    fb_expect_ring_nodes(nodes, 2, &f);
    CHECK_NEAR(f.gbps, 24, 1e-9);
    CHECK_STR(f.bound, "IB x1");
    nodes[0].ngpus = 1; /* 1 + 1: the NICs alone */
    fb_expect_ring_nodes(nodes, 2, &f);
    CHECK_NEAR(f.gbps, 24, 1e-9);
    fb_expect_ring_nodes(nodes, 1, &f); /* one rank in all: nothing to ring */
    CHECK(isnan(f.gbps));
    nodes[0].ngpus = 8;
    nodes[1].rails.gbps = NAN; /* a node with no NIC known: nothing honest, however fast the rest */
    fb_expect_ring_nodes(nodes, 2, &f);
    CHECK(isnan(f.gbps) && f.bound[0] == '\0');
    nodes[1].rails.gbps = 24;
    nodes[2].ngpus = 8; /* a node whose ring crosses its sockets (ESC8000A): nothing */
    nodes[2].rails = (struct fb_expect_fig){192, "IB x8"};
    fb_expect_ring_nodes(nodes, 3, &f);
    CHECK(isnan(f.gbps));
    nodes[2].ngpus = 4; /* its first socket's four: their PCIe Gen5 hop, above the 24 */
    fb_expect_ring_nodes(nodes, 3, &f);
    CHECK_NEAR(f.gbps, 24, 1e-9);
}

static void check_links(void)
{
    struct fb_expect_fig a = {10, "a"}, b = {5, "b"}, none = {NAN, ""}, out;
    int gen;

    CHECK_NEAR(fb_expect_pcie_raw(8, 16, &gen), 15.753846, 1e-6);
    CHECK(gen == 3);
    CHECK_NEAR(fb_expect_pcie_raw(5, 8, &gen), 4.0, 1e-12); /* Gen2: 8b/10b */
    CHECK(gen == 2);
    CHECK(isnan(fb_expect_pcie_raw(7, 16, NULL)) && isnan(fb_expect_pcie_raw(8, 3, NULL)));
    fb_expect_min(&a, &b, &out);
    CHECK_STR(out.bound, "b");
    fb_expect_min(&none, &a, &out);
    CHECK_STR(out.bound, "a");
    {
        struct fb_expect_nic slow = {"x", FB_NIC_ETH, 0.0005, 1500, true, -1, ""};
        char bound[FB_EXPECT_BOUND];
        fb_expect_nic_bound(&slow, bound, sizeof bound);
        CHECK_STR(bound, "eth 0.5 Mb/s x");
        slow.gbps = 0;
        CHECK(isnan(fb_expect_nic_payload(&slow)));
    }
}

/* The path tmp/NAME, with text written there (NULL: left as it is). */
static const char *write_tmp(const char *name, const char *text)
{
    static char path[128];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", tmp, name);
    if (text && (f = fopen(path, "w"))) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

/* Writes len bytes of data (NUL bytes too) into tmp/NAME; returns its path, as write_tmp. */
static const char *write_raw(const char *name, const char *data, size_t len)
{
    const char *path = write_tmp(name, NULL);
    FILE *f = fopen(path, "w");

    if (f) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
    return path;
}

/* Writes text into tmp/REL, making its folders. */
static void put(const char *rel, const char *text)
{
    char path[1024];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", tmp, rel);
    for (char *s = path + strlen(tmp) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    if ((f = fopen(path, "w"))) {
        fputs(text, f);
        fclose(f);
    }
}

/* An NVIDIA GPU's sysfs folder at tmp/DIR: vendor, class and its link files (NULL: absent). */
static void put_gpu(const char *dir, const char *cur, const char *max)
{
    char rel[512];

    snprintf(rel, sizeof rel, "%s/vendor", dir);
    put(rel, "0x10de\n");
    snprintf(rel, sizeof rel, "%s/class", dir);
    put(rel, "0x030200\n");
    if (cur) {
        snprintf(rel, sizeof rel, "%s/current_link_speed", dir);
        put(rel, cur);
        snprintf(rel, sizeof rel, "%s/current_link_width", dir);
        put(rel, "16\n");
    }
    if (max) {
        snprintf(rel, sizeof rel, "%s/max_link_speed", dir);
        put(rel, max);
        snprintf(rel, sizeof rel, "%s/max_link_width", dir);
        put(rel, "16\n");
    }
}

/* An Ethernet port in the tree ROOT (under tmp). */
static void put_eth(const char *root, const char *name, const char *speed, const char *mtu)
{
    char rel[512];

    snprintf(rel, sizeof rel, "%s/class/net/%s/speed", root, name);
    put(rel, speed);
    snprintf(rel, sizeof rel, "%s/class/net/%s/mtu", root, name);
    put(rel, mtu);
    snprintf(rel, sizeof rel, "%s/class/net/%s/operstate", root, name);
    put(rel, "up\n");
    snprintf(rel, sizeof rel, "%s/class/net/%s/type", root, name);
    put(rel, "1\n");
}

/* Trees a real machine can give that the reader must not misread: more ports and GPUs than
 * the model holds, readings that are no number, a max link the kernel cannot name, a root
 * port without a link, and a tree kept under folders named like PCI devices. */
static void check_odd_trees(void)
{
    char root[1024], rel[512], target[512], link[1024];
    struct fb_expect_node n;
    struct fb_expect_fig f, g;

    /* 40 container veths at 10 Gb/s and the one 100 GbE port: kept, and the rest counted */
    for (int i = 0; i < 40; i++) {
        snprintf(rel, sizeof rel, "veth%07d", i);
        put_eth("many", rel, "10000\n", "1500\n");
    }
    put_eth("many", "ens1f0", "100000\n", "1500\n");
    put_eth("many", "eno1", "10000\n", "1500\n"); /* ties with the veths: kept by its name */
    /* 20 GPUs: the first 16 in bus order kept, whatever order readdir gives */
    for (int i = 0; i < 20; i++) {
        snprintf(rel, sizeof rel, "many/bus/pci/devices/0000:%02x:00.0", 0x23 - i);
        put_gpu(rel, "8.0 GT/s PCIe\n", NULL);
    }
    snprintf(root, sizeof root, "%s/many", tmp);
    fb_expect_node_read(root, "many", &n);
    CHECK(n.nnics == FB_EXPECT_NICS);
    fb_expect_node_net(&n, NULL, &f);
    CHECK_STR(f.bound, "eth 100 Gb/s ens1f0");
    CHECK(strstr(n.note, "26 more ports than the model holds (16)") != NULL);
    {
        bool eno1 = false;
        for (int i = 0; i < n.nnics; i++)
            eno1 = eno1 || strcmp(n.nic[i].name, "eno1") == 0;
        CHECK(eno1);
    }
    CHECK(n.ngpus == FB_EXPECT_GPUS && strcmp(n.gpu[0].bus, "0000:10:00.0") == 0 &&
          strcmp(n.gpu[15].bus, "0000:1f:00.0") == 0);
    CHECK(strstr(n.note, "4 more GPUs than the model holds (16)") != NULL);
    /* the port the job's transport is told to use (NCCL_IB_HCA, NCCL_SOCKET_IFNAME, Open MPI's
     * if_include) is kept first, slow as it is: the veth named is the path the job takes */
    fb_expect_node_read_for(root, "many", "veth0000039", &n);
    CHECK(n.nnics == FB_EXPECT_NICS);
    fb_expect_node_net(&n, "veth0000039", &f);
    CHECK_STR(f.bound, "eth 10 Gb/s veth0000039");
    CHECK(strstr(n.note, "26 more ports than the model holds (16): those the job's transport "
                         "is not told to use") != NULL);
    fb_expect_node_net(&n, NULL, &f); /* the fastest still kept beside it */
    CHECK_STR(f.bound, "eth 100 Gb/s ens1f0");

    /* readings that are no number: not a rate, not an MTU, not a max link */
    put_eth("odd", "eno1", "10000\n", "1500\n");
    put_eth("odd", "eno2", "inf\n", "1500\n");
    put_eth("odd", "eno3", "100000\n", "52\n");
    put_eth("odd", "veth1", "-1\n", "1500\n"); /* two notes, one the end of the other's */
    put_eth("odd", "eth1", "-1\n", "1500\n");
    put_gpu("odd/bus/pci/devices/0000:07:00.0", "2.5 GT/s PCIe\n", "Unknown\n");
    snprintf(root, sizeof root, "%s/odd", tmp);
    fb_expect_node_read(root, "odd", &n);
    fb_expect_node_net(&n, NULL, &f);
    CHECK_STR(f.bound, "eth 10 Gb/s eno1");
    CHECK(n.nnics == 1);
    CHECK(strstr(n.note, "eno2: no link speed in sysfs") != NULL);
    CHECK(strstr(n.note, "eno3: no usable MTU in sysfs") != NULL);
    CHECK(strstr(n.note, "veth1: no link speed in sysfs") != NULL);
    CHECK(strncmp(n.note, "eth1: no link speed in sysfs", 28) == 0 ||
          strstr(n.note, "; eth1: no link speed in sysfs") != NULL);
    /* an idle GPU's 2.5 GT/s is not what it should reach: no figure, said */
    CHECK(n.ngpus == 1);
    fb_expect_gpu_h2d(&n.gpu[0], &f);
    CHECK(isnan(f.gbps));
    CHECK(strstr(n.note, "GPU 0000:07:00.0: no PCIe link speed and width in sysfs") != NULL);

    /* a tree kept under folders named like a root bus and a root port: the GPUs' root ports
     * are the tree's own; one of them without a link is said, not silently dropped */
    const char *t = "pci0000:00/0000:00:03.0/tree";
    const char *port[2] = {"0000:00:01.0", "0000:00:02.0"};
    snprintf(rel, sizeof rel, "%s/bus/pci/devices/.keep", t); /* the folder of the links */
    put(rel, "");
    for (int i = 0; i < 2; i++) {
        snprintf(rel, sizeof rel, "%s/devices/pci0000:00/%s/0000:0%d:00.0", t, port[i], i + 1);
        put_gpu(rel, "8.0 GT/s PCIe\n", "8.0 GT/s PCIe\n");
        snprintf(target, sizeof target, "../../../devices/pci0000:00/%s/0000:0%d:00.0", port[i],
                 i + 1);
        snprintf(link, sizeof link, "%s/%s/bus/pci/devices/0000:0%d:00.0", tmp, t, i + 1);
        CHECK(symlink(target, link) == 0);
    }
    snprintf(rel, sizeof rel, "%s/devices/pci0000:00/%s/current_link_speed", t, port[0]);
    put(rel, "8.0 GT/s PCIe\n");
    snprintf(rel, sizeof rel, "%s/devices/pci0000:00/%s/current_link_width", t, port[0]);
    put(rel, "16\n");
    snprintf(root, sizeof root, "%s/%s", tmp, t);
    fb_expect_node_read(root, "t", &n);
    CHECK(n.ngpus == 2);
    CHECK_STR(n.gpu[0].up, "0000:00:01.0");
    CHECK(n.gpu[0].up_gts == 8.0 && n.gpu[0].up_width == 16);
    CHECK(n.gpu[1].up[0] == '\0');
    CHECK(strstr(n.note, "root port 0000:00:02.0: no link speed and width in sysfs") != NULL);

    /* a path is as fast as its slowest hop: one unknown hop leaves it unknown */
    f.gbps = 12.0;
    snprintf(f.bound, sizeof f.bound, "IB 100 Gb/s mlx5_0/1");
    g.gbps = NAN;
    g.bound[0] = '\0';
    fb_expect_path_min(&f, &g, &g);
    CHECK(isnan(g.gbps) && g.bound[0] == '\0');
    g.gbps = 1.177;
    snprintf(g.bound, sizeof g.bound, "eth 10 Gb/s eno1");
    fb_expect_path_min(&f, &g, &f);
    CHECK(f.gbps == 1.177);
    CHECK_STR(f.bound, "eth 10 Gb/s eno1");
}

static void check_site_file(void)
{
    char err[512];
    struct fb_expect_node n;
    double ib = fb_expect_eff("ib");

    CHECK(fb_expect_eff_load(write_tmp("good", "# site\nib = 0.9\n\n; x\npcie_copy=0.8\n"), err,
                             sizeof err) == FB_OK);
    CHECK_NEAR(fb_expect_eff("ib"), 0.9, 1e-12);
    CHECK_NEAR(fb_expect_eff("pcie_copy"), 0.8, 1e-12);
    /* a bad file changes nothing, and says where */
    CHECK(fb_expect_eff_load(write_tmp("bad1", "ib = 0.5\nnvlnk = 0.9\n"), err, sizeof err) ==
          FB_ERR_USAGE);
    CHECK(strstr(err, "bad1:2:") && strstr(err, "unknown efficiency 'nvlnk'"));
    /* the message names every key the table holds, in the table's order */
    {
        const char *at = strstr(err, "(known: ");
        CHECK(at != NULL);
        for (size_t i = 0; at && i < fb_expect_neff; i++) {
            char want[80];
            snprintf(want, sizeof want, "%s%s%s", i ? ", " : "(known: ",
                     fb_expect_efficiencies[i].key, i + 1 == fb_expect_neff ? ")" : "");
            CHECK(strncmp(at, want, strlen(want)) == 0);
            at += strlen(want);
        }
    }
    CHECK_NEAR(fb_expect_eff("ib"), 0.9, 1e-12);
    CHECK(fb_expect_eff_load(write_tmp("bad2", "ib = 1.5\n"), err, sizeof err) == FB_ERR_USAGE);
    CHECK(strstr(err, "bad2:1:") && strstr(err, "at most 1"));
    CHECK(strstr(err, "not '1.5'") != NULL); /* the value quoted whole, its line break left out */
    CHECK(fb_expect_eff_load(write_tmp("twice", "ib = 0.9\n\nib = 0.8\n"), err, sizeof err) ==
          FB_ERR_USAGE);
    CHECK(strstr(err, "twice:3: 'ib' given twice (first at line 1)") != NULL);
    {
        static const char nul[] = "ib = 0.5\0x\n";
        CHECK(fb_expect_eff_load(write_raw("bad5", nul, sizeof nul - 1), err, sizeof err) ==
              FB_ERR_USAGE);
        CHECK(strstr(err, "bad5:1: a NUL byte in the line") != NULL);
        /* on the last line, with no line break after it, too */
        CHECK(fb_expect_eff_load(write_raw("bad6", nul, sizeof nul - 2), err, sizeof err) ==
              FB_ERR_USAGE);
        CHECK(strstr(err, "bad6:1: a NUL byte in the line") != NULL);
    }
    /* read as the other text formats are (fb_file_read, fb_file_line): a '#' comment after a
     * value, CRLF line ends; a line of 511 characters is the most, with CRLF as with LF */
    CHECK(fb_expect_eff_load(write_tmp("inline", "ib = 0.91  # our fabric\r\n"), err,
                             sizeof err) == FB_OK);
    CHECK_NEAR(fb_expect_eff("ib"), 0.91, 1e-12);
    {
        static char text[600];
        for (int cols = 511; cols <= 512; cols++)
        for (int crlf = 0; crlf <= 1; crlf++) {
            int k = snprintf(text, sizeof text, "ib = 0.9");
            while (k < cols)
                text[k++] = '0';
            snprintf(text + k, sizeof text - (size_t)k, crlf ? "\r\n" : "\n");
            err[0] = '\0';
            if (cols == 511) {
                CHECK(fb_expect_eff_load(write_tmp("long", text), err, sizeof err) == FB_OK);
            } else {
                CHECK(fb_expect_eff_load(write_tmp("long", text), err, sizeof err) ==
                      FB_ERR_USAGE);
                CHECK(strstr(err, "long:1: line longer than 511 characters") != NULL);
            }
        }
    }
    /* a control character anywhere, a NUL byte in a comment too */
    CHECK(fb_expect_eff_load(write_tmp("ctl", "ib = 0.9\x1b[31m\n"), err, sizeof err) ==
          FB_ERR_USAGE);
    CHECK(strstr(err, "ctl:1: control character: \\x1b after 'ib = 0.9'") != NULL);
    {
        static const char nul[] = "# a \0 comment\nib = 0.9\n";
        CHECK(fb_expect_eff_load(write_raw("nulc", nul, sizeof nul - 1), err, sizeof err) ==
              FB_ERR_USAGE);
        CHECK(strstr(err, "nulc:1: a NUL byte in the line") != NULL);
    }
    /* not a regular file, or larger than a site file's 1 MiB: refused before a line is read */
    CHECK(fb_expect_eff_load("/tmp", err, sizeof err) == FB_ERR_USAGE);
    CHECK(strstr(err, "not a regular file") != NULL);
    {
        FILE *f = fopen(write_tmp("huge", ""), "w");
        if (f) {
            for (int i = 0; i < 120000; i++)
                fputs("# padding\n", f);
            fclose(f);
        }
        CHECK(fb_expect_eff_load(write_tmp("huge", NULL), err, sizeof err) == FB_ERR_USAGE);
        CHECK(strstr(err, "a site file may hold") != NULL);
        memset(&n, 0, sizeof n);
        CHECK(fb_expect_nvml_load(write_tmp("huge", NULL), &n, err, sizeof err) == FB_ERR_USAGE);
        CHECK(strstr(err, "a site file may hold") != NULL);
    }
    CHECK(fb_expect_eff_load(write_tmp("bad3", "ib 0.9\n"), err, sizeof err) == FB_ERR_USAGE);
    CHECK(strstr(err, "bad3:1:") && strstr(err, "key = value"));
    CHECK(fb_expect_eff_load(write_tmp("bad4", "ib = 0.9x\n"), err, sizeof err) == FB_ERR_USAGE);
    CHECK(fb_expect_eff_load("/nonexistent/eff", err, sizeof err) == FB_ERR_IO);
    CHECK(strstr(err, "/nonexistent/eff") != NULL);
    CHECK(isnan(fb_expect_eff("nope")));
    /* back to the shipped values for the table */
    snprintf(err, sizeof err, "ib = %.17g\npcie_copy = 0.79\n", ib);
    CHECK(fb_expect_eff_load(write_tmp("restore", err), err, sizeof err) == FB_OK);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_expect MACHINES_DIR EXPECTED_MD REFERENCE_FIGURES_MD\n");
        return 2;
    }
    machines = argv[1];
    snprintf(tmp, sizeof tmp, "/tmp/fb_test_expect.XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    check_efficiency_doc(argv[3]);
    check_links();
    check_machines(argv[1]);
    check_gpu_pairs(argv[1]);
    check_rings_over_nodes(argv[1]);
    check_site_file();
    check_nvml_facts();
    check_odd_trees();
    check_table(argv[2]);
    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", tmp);
    }
    if (fb_test_failures) {
        fprintf(stderr, "%d check(s) failed\n", fb_test_failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}

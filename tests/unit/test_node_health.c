/* `fabricbench health`'s judgement (doctor/node_health.c) against tests/data/sysfs, copied to a
 * temporary folder and edited there: the healthy node and its one-line summary, then each
 * finding alone (a GPU gone, a port down, a port at a lower rate, a GPU's link at x8), several
 * at once in one line, a device name with control bytes escaped, and what is judged only when
 * it is asked for. */
#define _POSIX_C_SOURCE 200809L
#include "node_health.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static char tmp[] = "/tmp/fb_test_node_health.XXXXXX";

static void put(const char *file, const char *text)
{
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", tmp, file);
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void judge(const struct fb_node_expect *e, struct fb_node_health *h)
{
    CHECK(fb_node_health_check(e, tmp, h) == FB_OK);
    printf("%d finding(s): %s\n", h->findings, h->reason);
}

int main(int argc, char **argv)
{
    const struct fb_node_expect c4140 = {.gpus = 1, .ib_ports = 1, .ib_rate_gbps = 100};
    const struct fb_node_expect none = {.gpus = -1, .ib_ports = -1, .ib_rate_gbps = -1};
    struct fb_node_health h;
    char cmd[8192];

    if (argc < 2 || !mkdtemp(tmp)) {
        fprintf(stderr, "usage: test_node_health tests/data/sysfs\n");
        return 2;
    }
    snprintf(cmd, sizeof cmd, "cp -a '%s/.' '%s/'", argv[1], tmp);
    CHECK(system(cmd) == 0);

    /* healthy: one GPU, one ACTIVE port at 100 Gb/s, the HCA's and the GPU's links */
    judge(&c4140, &h);
    CHECK(h.findings == 0 && h.gpus == 1 && h.ib_ports == 1 && h.ib_active == 1 &&
          h.ib_slowest == 100 && h.links == 2 && h.links_low == 0);
    CHECK_STR(h.reason, "1 NVIDIA GPU(s), 1 of 1 InfiniBand port(s) ACTIVE (slowest 100 Gb/s), "
                        "2 PCIe link(s) at their maximum");

    /* expected 4 GPUs (a C4140's), 1 found */
    {
        struct fb_node_expect four = c4140;
        four.gpus = 4;
        judge(&four, &h);
        CHECK(h.findings == 1);
        CHECK_STR(h.reason, "1 NVIDIA GPU(s) on the PCI bus, expected 4");
    }
    /* the port at FDR: slower than asked */
    put("class/infiniband/mlx5_0/ports/1/rate", "56 Gb/sec (4X FDR)\n");
    judge(&c4140, &h);
    CHECK(h.findings == 1 && h.ib_slowest == 56);
    CHECK_STR(h.reason, "InfiniBand mlx5_0/1 at 56 Gb/s, expected at least 100");
    /* not judged when no rate is asked */
    judge(&none, &h);
    CHECK(h.findings == 0);
    put("class/infiniband/mlx5_0/ports/1/rate", "100 Gb/sec (4X EDR)\n");

    /* the port down: too few ACTIVE, named with its state; a down port's rate is not judged */
    put("class/infiniband/mlx5_0/ports/1/state", "1: DOWN\n");
    put("class/infiniband/mlx5_0/ports/1/rate", "10 Gb/sec (4X SDR)\n");
    judge(&c4140, &h);
    CHECK(h.findings == 1 && h.ib_active == 0 && isnan(h.ib_slowest));
    CHECK_STR(h.reason, "0 InfiniBand port(s) ACTIVE, expected at least 1; not ACTIVE: mlx5_0/1 "
                        "(state 1)");
    put("class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
    put("class/infiniband/mlx5_0/ports/1/rate", "100 Gb/sec (4X EDR)\n");

    /* the GPU trained to x8 (judged with no expectation at all), and its GPU gone from the bus
     * count at the same time: both findings, in one line */
    put("bus/pci/devices/0000:3b:00.0/current_link_width", "8\n");
    judge(&none, &h);
    CHECK(h.findings == 1 && h.links == 2 && h.links_low == 1);
    CHECK_STR(h.reason, "PCIe link of 0000:3b:00.0 at x8 of x16");
    put("bus/pci/devices/0000:3b:00.0/vendor", "0x8086\n"); /* no longer an NVIDIA device */
    put("bus/pci/devices/0000:5e:00.0/current_link_speed", "8.0 GT/s PCIe\n");
    judge(&c4140, &h);
    CHECK(h.findings == 2 && h.gpus == 0 && h.links == 1 && h.links_low == 1);
    CHECK_STR(h.reason, "0 NVIDIA GPU(s) on the PCI bus, expected 1; PCIe link of 0000:5e:00.0 at "
                        "8 GT/s of 16 GT/s");

    /* a port's folder name with an escape sequence reaches the line escaped */
    snprintf(cmd, sizeof cmd, "mv '%s/class/infiniband/mlx5_0' '%s/class/infiniband/x\033[2Jy'", tmp,
             tmp);
    CHECK(system(cmd) == 0);
    put("class/infiniband/x\033[2Jy/ports/1/state", "2: INIT\n");
    judge(&c4140, &h);
    CHECK(strchr(h.reason, '\033') == NULL);
    CHECK(strstr(h.reason, "not ACTIVE: x\\x1b[2Jy/1 (state 2)") != NULL);

    /* many findings: the line stays within its buffer and ends in "..." */
    {
        struct fb_health_set s = {0};
        char dev[40];
        for (int i = 0; i < 200; i++) {
            snprintf(dev, sizeof dev, "0000:%02x:00.0", i);
            CHECK(fb_health_add(&s, "pcie", dev, "link_width", 4, 16, true) == FB_OK);
        }
        fb_node_health_judge(&none, &s, 0, &h);
        CHECK(h.findings == 200 && h.links_low == 200);
        CHECK(strlen(h.reason) < sizeof h.reason);
        CHECK(strcmp(h.reason + strlen(h.reason) - 3, "...") == 0);
        fb_health_set_free(&s);
    }

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK(system(cmd) == 0);
    return fb_test_failures ? 1 : 0;
}

/* Health readers against tests/data/sysfs (copied to a temporary folder and edited there): the
 * InfiniBand port's counters, rate and state, the PCIe links of the HCA and of the NVIDIA GPU
 * only, a link trained below its maximum. (NCCL's lines: test_soak_nccl.) */
#define _POSIX_C_SOURCE 200809L
#include "health.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static const struct fb_health_counter *get(const struct fb_health_set *s, const char *source,
                                           const char *device, const char *counter)
{
    struct fb_health_counter like = {0};
    snprintf(like.source, sizeof like.source, "%s", source);
    snprintf(like.device, sizeof like.device, "%s", device);
    snprintf(like.counter, sizeof like.counter, "%s", counter);
    return fb_health_find(s, &like);
}

static void put(const char *dir, const char *file, const char *text)
{
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    char tmp[] = "/tmp/fb_test_health.XXXXXX", cmd[8192];
    struct fb_health_set s = {0};
    const struct fb_health_counter *c;

    if (argc < 2 || !mkdtemp(tmp)) {
        fprintf(stderr, "usage: test_health tests/data/sysfs\n");
        return 2;
    }
    snprintf(cmd, sizeof cmd, "cp -a '%s/.' '%s/'", argv[1], tmp);
    CHECK(system(cmd) == 0);

    CHECK(fb_health_sysfs_read(tmp, &s) == FB_OK);
    /* 4 counters + rate + state, 2 links of the HCA, 2 of the GPU; nothing of the USB device */
    CHECK(s.n == 10);
    CHECK((c = get(&s, "ib", "mlx5_0/1", "symbol_error")) && c->value == 0 && c->judged);
    CHECK((c = get(&s, "ib", "mlx5_0/1", "port_xmit_discards")) && c->value == 0);
    CHECK(get(&s, "ib", "mlx5_0/1", "port_xmit_data") == NULL); /* traffic, not an error */
    CHECK((c = get(&s, "ib", "mlx5_0/1", "rate_gbps")) && c->value == 100);
    CHECK((c = get(&s, "ib", "mlx5_0/1", "state")) && c->value == 4);
    CHECK((c = get(&s, "pcie", "0000:5e:00.0", "link_width")) && c->value == 16 && c->max == 16);
    CHECK((c = get(&s, "pcie", "0000:3b:00.0", "link_speed_gts")) && c->value == 16.0 &&
          !fb_health_below_max(c));
    CHECK(get(&s, "pcie", "0000:00:14.0", "link_width") == NULL);
    fb_health_set_free(&s);
    CHECK(s.n == 0 && s.c == NULL);

    /* a counter bumped, the rate halved, the GPU trained down to x8 Gen3 */
    put(tmp, "class/infiniband/mlx5_0/ports/1/counters/symbol_error", "17\n");
    put(tmp, "class/infiniband/mlx5_0/ports/1/rate", "50 Gb/sec (2X EDR)\n");
    put(tmp, "bus/pci/devices/0000:3b:00.0/current_link_width", "8\n");
    put(tmp, "bus/pci/devices/0000:3b:00.0/current_link_speed", "8.0 GT/s PCIe\n");
    put(tmp, "bus/pci/devices/0000:5e:00.0/max_link_speed", "Unknown\n");
    CHECK(fb_health_sysfs_read(tmp, &s) == FB_OK);
    CHECK((c = get(&s, "ib", "mlx5_0/1", "symbol_error")) && c->value == 17);
    CHECK((c = get(&s, "ib", "mlx5_0/1", "rate_gbps")) && c->value == 50);
    CHECK((c = get(&s, "pcie", "0000:3b:00.0", "link_width")) && c->value == 8 && c->max == 16 &&
          fb_health_below_max(c));
    CHECK((c = get(&s, "pcie", "0000:3b:00.0", "link_speed_gts")) && c->value == 8 &&
          fb_health_below_max(c));
    /* a GPU's speed drops when it idles: recorded, not judged; its width and an HCA's speed are */
    CHECK(c && !c->judged);
    CHECK((c = get(&s, "pcie", "0000:3b:00.0", "link_width")) && c->judged);
    CHECK((c = get(&s, "pcie", "0000:5e:00.0", "link_speed_gts")) && c->judged);
    /* a maximum the kernel does not know is no finding */
    CHECK((c = get(&s, "pcie", "0000:5e:00.0", "link_speed_gts")) && isnan(c->max) &&
          !fb_health_below_max(c));
    fb_health_set_free(&s);

    /* Counts near 2^64, read and compared exactly (issue 30: held as doubles, whose spacing there
     * is 4096, a rise of 7 read as no change) */
    {
        struct fb_health_set t = {0};
        const struct fb_health_counter *a, *b;
        char d[48];
        bool w = true;

        put(tmp, "class/infiniband/mlx5_0/ports/1/counters/symbol_error", "18446744073709551606\n");
        CHECK(fb_health_sysfs_read(tmp, &s) == FB_OK);
        put(tmp, "class/infiniband/mlx5_0/ports/1/counters/symbol_error", "18446744073709551613\n");
        CHECK(fb_health_sysfs_read(tmp, &t) == FB_OK);
        a = get(&s, "ib", "mlx5_0/1", "symbol_error");
        b = get(&t, "ib", "mlx5_0/1", "symbol_error");
        CHECK(a && b && a->is_count && a->count == UINT64_MAX - 9 && b->count == UINT64_MAX - 2);
        CHECK(a && b && a->value == b->value); /* what the doubles saw */
        CHECK(a && b && fb_health_change(a, b, d, sizeof d, &w) == 1 && strcmp(d, "7") == 0 && !w);
        CHECK(a && fb_health_change(a, a, d, sizeof d, NULL) == 0 && strcmp(d, "0") == 0);
        fb_health_set_free(&s);
        /* past 2^64 to 4: a wrap, a rise of 7; then 4 to 0: a fall (a reset), by 4 */
        put(tmp, "class/infiniband/mlx5_0/ports/1/counters/symbol_error", "4\n");
        CHECK(fb_health_sysfs_read(tmp, &s) == FB_OK);
        a = get(&s, "ib", "mlx5_0/1", "symbol_error");
        CHECK(a && b && fb_health_change(b, a, d, sizeof d, &w) == 1 && strcmp(d, "7") == 0 && w);
        fb_health_set_free(&t);
        put(tmp, "class/infiniband/mlx5_0/ports/1/counters/symbol_error", "0\n");
        CHECK(fb_health_sysfs_read(tmp, &t) == FB_OK);
        b = get(&t, "ib", "mlx5_0/1", "symbol_error");
        CHECK(a && b && fb_health_change(a, b, d, sizeof d, &w) == -1 && strcmp(d, "-4") == 0 &&
              !w);
        /* a mask compares bit by bit: a bit on rises, a bit off falls, both at once rise */
        {
            struct fb_health_set m = {0};
            CHECK(fb_health_add_mask(&m, "nvml", "gpu0", "throttle_bad_reasons", 0x40, true) ==
                  FB_OK);
            CHECK(fb_health_add_mask(&m, "nvml", "gpu0", "throttle_bad_reasons", 0x60, true) ==
                  FB_OK);
            CHECK(fb_health_add_mask(&m, "nvml", "gpu0", "throttle_bad_reasons", 0x20, true) ==
                  FB_OK);
            CHECK(fb_health_add_mask(&m, "nvml", "gpu0", "throttle_bad_reasons", 0x88, true) ==
                  FB_OK);
            if (m.n == 4) {
                CHECK(m.c[0].is_mask && m.c[0].is_count && m.c[0].count == 0x40);
                CHECK(fb_health_change(&m.c[0], &m.c[1], d, sizeof d, &w) == 1 &&
                      strcmp(d, "set 0x20") == 0 && !w);
                CHECK(fb_health_change(&m.c[1], &m.c[2], d, sizeof d, &w) == -1 &&
                      strcmp(d, "cleared 0x40") == 0 && !w);
                CHECK(fb_health_change(&m.c[2], &m.c[3], d, sizeof d, NULL) == 1 &&
                      strcmp(d, "set 0x88 cleared 0x20") == 0);
                CHECK(fb_health_change(&m.c[3], &m.c[3], d, sizeof d, NULL) == 0 &&
                      strcmp(d, "0") == 0);
                fb_health_value_text(&m.c[1], d, sizeof d);
                CHECK(strcmp(d, "96") == 0);
            }
            fb_health_set_free(&m);
        }
        /* a figure (not a count) still compares as a double */
        a = get(&s, "ib", "mlx5_0/1", "rate_gbps");
        CHECK(a && !a->is_count && fb_health_change(a, a, NULL, 0, NULL) == 0);
        fb_health_set_free(&s);
        fb_health_set_free(&t);
        /* over 2^64 - 1, or not a whole number: not a count, not read */
        put(tmp, "class/infiniband/mlx5_0/ports/1/counters/symbol_error", "18446744073709551616\n");
        CHECK(fb_health_sysfs_read(tmp, &s) == FB_OK);
        CHECK(get(&s, "ib", "mlx5_0/1", "symbol_error") == NULL);
        fb_health_set_free(&s);
        put(tmp, "class/infiniband/mlx5_0/ports/1/counters/symbol_error", "-1\n");
        CHECK(fb_health_sysfs_read(tmp, &s) == FB_OK);
        CHECK(get(&s, "ib", "mlx5_0/1", "symbol_error") == NULL);
        fb_health_set_free(&s);
    }

    /* no sysfs at all: nothing read, no error */
    snprintf(cmd, sizeof cmd, "%s/none", tmp);
    CHECK(fb_health_sysfs_read(cmd, &s) == FB_OK && s.n == 0);

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK(system(cmd) == 0);
    TEST_DONE();
}

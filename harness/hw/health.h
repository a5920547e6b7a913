/* Health counters: a set of named readings of one host or one GPU (InfiniBand port counters,
 * PCIe links, NVML's error counters, NCCL's WARN lines) that `soak` reads before and after
 * every interval and judges by what moved. This module owns the set and the reader that needs
 * no library: sysfs (all paths under $FB_SYSFS_ROOT, default /sys). NVML's counters are read by
 * harness/job/telemetry_nvml.c into the same set, NCCL's log by harness/fleet/soak_health.c
 * through nccllog's classifier. No MPI. */
#ifndef FB_HEALTH_H
#define FB_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* One reading. Fixed-size text, so a set can travel between ranks as plain bytes. */
struct fb_health_counter {
    char source[8];    /* "ib", "pcie", "nvml", "nccl" */
    char device[80];   /* "mlx5_0/1" (device/port: an InfiniBand device's name may take 63
                          bytes), "0000:3b:00.0" (PCI address), "gpu0" */
    char counter[32];  /* "symbol_error", "rate_gbps", "link_width", "ecc_volatile_total", ... */
    double value;      /* the reading (a count's, rounded: for display alone) */
    double max;        /* for a PCIe link: the most it can train to (max_link_*); NAN else */
    uint64_t count;    /* a count (errors, events) or a mask, exact: when is_count */
    bool is_count;     /* compared as 64-bit integers (fb_health_change), not as doubles,
                          which above 2^53 cannot tell a count from its next ones */
    bool is_mask;      /* a bit mask (with is_count): compared bit by bit, not as a number */
    bool judged;       /* a change between two readings is a finding (errors, rate, state,
                          link); false for figures that move in health (clocks) */
};

struct fb_health_set {
    struct fb_health_counter *c;
    size_t n, cap;
};

/* Adds a reading (text cut to its field). FB_ERR_NOMEM. */
fb_status fb_health_add(struct fb_health_set *set, const char *source, const char *device,
                        const char *counter, double value, double max, bool judged);

/* Adds a count (errors, events) or a bit mask: kept exactly (is_count). FB_ERR_NOMEM. */
fb_status fb_health_add_count(struct fb_health_set *set, const char *source, const char *device,
                              const char *counter, uint64_t count, bool judged);

/* Adds a bit mask of conditions (NVML's clock event reasons): kept exactly, and compared bit by
 * bit (is_mask): a bit that comes on is a change upward, one that goes off one downward, what
 * the number did is nothing (a thermal slowdown ending is not a count falling by 32).
 * FB_ERR_NOMEM. */
fb_status fb_health_add_mask(struct fb_health_set *set, const char *source, const char *device,
                             const char *counter, uint64_t mask, bool judged);

/* How `now` moved from `was`, the same counter read earlier: 0 when it did not, 1 when it rose,
 * -1 when it fell. A count is compared as a 64-bit integer, and one that passed 2^64 and wrapped
 * (now below was, by more than the rise past the top would be) rose by that rise (*wrapped
 * true; may be NULL). text (may be NULL) gets the change as a number: "7", "-3", "0.5", "0".
 * A mask: 1 when a bit came on (text "set 0x40", and " cleared 0x20" after it when another
 * went off), -1 when bits only went off ("cleared 0x20"), 0 when it is the same ("0"). */
int fb_health_change(const struct fb_health_counter *was, const struct fb_health_counter *now,
                     char *text, size_t len, bool *wrapped);

/* A reading as health.csv writes it: a count (a mask too) exactly, in decimal, a figure with 17
 * digits, "" for NAN. */
void fb_health_value_text(const struct fb_health_counter *c, char *text, size_t len);

/* Frees the readings and empties the set; accepts an empty one. */
void fb_health_set_free(struct fb_health_set *set);

/* The reading of set with the same source, device and counter as `like`; NULL when none. */
const struct fb_health_counter *fb_health_find(const struct fb_health_set *set,
                                               const struct fb_health_counter *like);

/* Whether a reading is a finding on its own, whatever moved: a PCIe link trained below its
 * maximum speed or width. */
bool fb_health_below_max(const struct fb_health_counter *c);

/* The sysfs root the readers use: $FB_SYSFS_ROOT when set and non-empty, else "/sys". */
const char *fb_health_sysfs_root(void);

/* Reads this host's InfiniBand ports and PCIe links under `root` (a sysfs tree) into set:
 *  - each port of class/infiniband/<dev>/ports/<p>/: counters/{symbol_error, link_downed,
 *    port_rcv_errors, port_xmit_discards}, rate (Gb/s, "rate_gbps") and state (the number
 *    before the colon: 4 is ACTIVE), device "<dev>/<p>";
 *  - the PCIe link of each HCA (class/infiniband/<dev>/device) and of each NVIDIA GPU (every
 *    bus/pci/devices/<bdf> whose vendor is 0x10de and class 0x0302xx or 0x0300xx):
 *    "link_speed_gts" (current_link_speed against max_link_speed) and "link_width"
 *    (current_link_width against max_link_width), device the PCI address.
 * A file that is absent or unreadable is skipped (a machine without InfiniBand has no port to
 * read); FB_OK then with fewer readings. FB_ERR_NOMEM. */
fb_status fb_health_sysfs_read(const char *root, struct fb_health_set *set);

/* fb_health_sysfs_read, and how many NVIDIA GPUs (vendor 0x10de, class 0x0302xx or 0x0300xx)
 * bus/pci/devices under `root` holds, into *gpus, from the same walk. FB_ERR_IO where that
 * folder cannot be read (not a sysfs tree: no count is better than a count of 0);
 * FB_ERR_NOMEM. */
fb_status fb_health_sysfs_read_node(const char *root, struct fb_health_set *set, int *gpus);

#endif

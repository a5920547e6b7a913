/* Small files as sysfs writes them (one line of text), for every reader of a sysfs tree: soak's
 * health counters (health_sysfs.c) and the expected-figure model's node description
 * (expect/expect_sysfs.c). No MPI. */
#ifndef FB_SYSFS_H
#define FB_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

/* The first line of a small file into buf, without its line break; false when it cannot be
 * read or is no regular file (a FIFO, a device: never waited on). */
bool fb_sysfs_line(const char *path, char *buf, size_t len);

/* The number a sysfs file starts with ("100 Gb/sec (4X EDR)", "4: ACTIVE", "16.0 GT/s PCIe",
 * "0x10de" with base 16); NAN when it is absent, does not start with one ("Unknown") or is not
 * finite ("inf", "nan", 1e400). */
double fb_sysfs_number(const char *path, int base);

/* A reading v kept when it lies in [lo, hi] (and is a whole number where `whole`), else NAN: a
 * tree with "-5", "16.9" or 1e308 where a rate, a width or a count should be gives no figure. */
double fb_sysfs_within(double v, double lo, double hi, bool whole);

/* Whether the PCI device in `dir` (a bus/pci/devices entry) is an NVIDIA GPU: vendor 0x10de,
 * class 3D (0x0302) or VGA (0x0300) controller. */
bool fb_sysfs_nvidia_gpu(const char *dir);

#endif

/* Small sysfs files read (sysfs.h). */
#define _POSIX_C_SOURCE 200809L
#include "sysfs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_read.h"

bool fb_sysfs_line(const char *path, char *buf, size_t len)
{
    /* a regular file only, opened without waiting (fb_file_open): sysfs attributes are regular
     * files, and a FIFO in a tree given by FB_SYSFS_ROOT would block open() and read() for
     * ever (health under Slurm's HealthCheckProgram) */
    char err[800];
    size_t size;
    int fd;
    FILE *f;
    bool ok;

    if (fb_file_open(path, FB_FILE_SITE, false, &fd, &size, err, sizeof err) != FB_OK)
        return false;
    if (!(f = fdopen(fd, "r"))) {
        close(fd);
        return false;
    }
    ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\r\n")] = '\0';
    return ok;
}

double fb_sysfs_within(double v, double lo, double hi, bool whole)
{
    return v >= lo && v <= hi && (!whole || v == floor(v)) ? v : NAN;
}

double fb_sysfs_number(const char *path, int base)
{
    char buf[128], *end;
    double v;

    if (!fb_sysfs_line(path, buf, sizeof buf))
        return NAN;
    if (base == 16) {
        unsigned long long x = strtoull(buf, &end, 16);
        return end == buf ? NAN : (double)x;
    }
    v = strtod(buf, &end);
    return end == buf || !isfinite(v) ? NAN : v; /* "inf", "nan", 1e400: no reading */
}

bool fb_sysfs_nvidia_gpu(const char *dir)
{
    char path[4200];
    double vendor, klass;

    snprintf(path, sizeof path, "%s/vendor", dir);
    vendor = fb_sysfs_number(path, 16);
    snprintf(path, sizeof path, "%s/class", dir);
    klass = fb_sysfs_number(path, 16);
    if (isnan(vendor) || isnan(klass) || vendor != 0x10de)
        return false;
    return ((unsigned long)klass >> 8) == 0x0302 || ((unsigned long)klass >> 8) == 0x0300;
}

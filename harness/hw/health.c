/* Health counters: the set of readings (health.h) and NCCL's WARN lines counted in its log
 * text. The sysfs reader is health_sysfs.c. */
#define _POSIX_C_SOURCE 200809L
#include "health.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

fb_status fb_health_add(struct fb_health_set *set, const char *source, const char *device,
                        const char *counter, double value, double max, bool judged)
{
    struct fb_health_counter *c;

    if (set->n == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 16;
        struct fb_health_counter *grown = realloc(set->c, cap * sizeof *grown);
        if (!grown)
            return FB_ERR_NOMEM;
        set->c = grown;
        set->cap = cap;
    }
    c = &set->c[set->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->source, sizeof c->source, "%s", source);
    snprintf(c->device, sizeof c->device, "%s", device);
    snprintf(c->counter, sizeof c->counter, "%s", counter);
    c->value = value;
    c->max = max;
    c->judged = judged;
    return FB_OK;
}

void fb_health_set_free(struct fb_health_set *set)
{
    free(set->c);
    memset(set, 0, sizeof *set);
}

const struct fb_health_counter *fb_health_find(const struct fb_health_set *set,
                                               const struct fb_health_counter *like)
{
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(set->c[i].source, like->source) == 0 &&
            strcmp(set->c[i].device, like->device) == 0 &&
            strcmp(set->c[i].counter, like->counter) == 0)
            return &set->c[i];
    return NULL;
}

bool fb_health_below_max(const struct fb_health_counter *c)
{
    return !isnan(c->max) && !isnan(c->value) && c->value < c->max;
}

const char *fb_health_sysfs_root(void)
{
    const char *env = getenv("FB_SYSFS_ROOT");
    return env && *env ? env : "/sys";
}

fb_status fb_health_nccl_count(const char *path, long *port_errors, long *failed)
{
    FILE *f = fopen(path, "r");
    char line[2048];
    fb_status st = FB_OK;

    *port_errors = 0;
    *failed = 0;
    if (!f)
        return errno == ENOENT ? FB_OK : FB_ERR_IO;
    /* a line longer than the buffer is read in pieces: a phrase cut in two is missed, and
     * NCCL's WARN lines are far shorter */
    while (fgets(line, sizeof line, f)) {
        if (!strstr(line, "NCCL WARN"))
            continue;
        /* every release's wording, as nccllog/nccl_line.c reads them: "Got async event : port
         * error" (to 2.22.3), "Got async error event: port error" (2.23 to 2.28.3), "Got
         * non-fatal async event: port error(10)" (2.28.7 on); "Device N marked as failed"
         * (2.29.7 on), not its "was already marked as failed" */
        if (strstr(line, "async") && strstr(line, "event") && strstr(line, ": port error"))
            (*port_errors)++;
        else if (strstr(line, " marked as failed") && !strstr(line, "already marked"))
            (*failed)++;
    }
    if (ferror(f))
        st = FB_ERR_IO;
    fclose(f);
    return st;
}

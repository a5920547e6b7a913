/* Health counters: the set of readings (health.h). The sysfs reader is health_sysfs.c. */
#define _POSIX_C_SOURCE 200809L
#include "health.h"

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

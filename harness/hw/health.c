/* Health counters: the set of readings (health.h). The sysfs reader is health_sysfs.c. */
#define _POSIX_C_SOURCE 200809L
#include "health.h"

#include <inttypes.h>
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

fb_status fb_health_add_count(struct fb_health_set *set, const char *source, const char *device,
                              const char *counter, uint64_t count, bool judged)
{
    fb_status st = fb_health_add(set, source, device, counter, (double)count, NAN, judged);

    if (st == FB_OK) {
        set->c[set->n - 1].count = count;
        set->c[set->n - 1].is_count = true;
    }
    return st;
}

fb_status fb_health_add_mask(struct fb_health_set *set, const char *source, const char *device,
                             const char *counter, uint64_t mask, bool judged)
{
    fb_status st = fb_health_add_count(set, source, device, counter, mask, judged);

    if (st == FB_OK)
        set->c[set->n - 1].is_mask = true;
    return st;
}

int fb_health_change(const struct fb_health_counter *was, const struct fb_health_counter *now,
                     char *text, size_t len, bool *wrapped)
{
    char none[1];
    bool ignored;

    if (!text) {
        text = none;
        len = sizeof none;
    }
    if (!wrapped)
        wrapped = &ignored;
    text[0] = '\0';
    *wrapped = false;
    if (was->is_mask && now->is_mask) {
        uint64_t on = now->count & ~was->count, off = was->count & ~now->count;
        if (on && off)
            snprintf(text, len, "set 0x%" PRIx64 " cleared 0x%" PRIx64, on, off);
        else if (on || off)
            snprintf(text, len, "%s 0x%" PRIx64, on ? "set" : "cleared", on ? on : off);
        else
            snprintf(text, len, "0");
        return on ? 1 : off ? -1 : 0;
    }
    if (was->is_count && now->is_count) {
        uint64_t rise = now->count - was->count, fall = was->count - now->count; /* mod 2^64 */
        if (now->count == was->count) {
            snprintf(text, len, "0");
            return 0;
        }
        if (now->count > was->count) {
            snprintf(text, len, "%" PRIu64, rise);
            return 1;
        }
        if (rise < fall) { /* wrapped past 2^64: the smaller move is the rise */
            snprintf(text, len, "%" PRIu64, rise);
            *wrapped = true;
            return 1;
        }
        snprintf(text, len, "-%" PRIu64, fall);
        return -1;
    }
    if (now->value == was->value || (isnan(now->value) && isnan(was->value))) {
        snprintf(text, len, "0");
        return 0;
    }
    snprintf(text, len, "%.17g", now->value - was->value);
    return now->value > was->value ? 1 : -1;
}

void fb_health_value_text(const struct fb_health_counter *c, char *text, size_t len)
{
    if (c->is_count)
        snprintf(text, len, "%" PRIu64, c->count);
    else if (isnan(c->value))
        text[0] = '\0';
    else
        snprintf(text, len, "%.17g", c->value);
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

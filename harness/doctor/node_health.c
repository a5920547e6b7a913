/* One node's hardware against what it should have (node_health.h). */
#include "node_health.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"

/* Appends one finding to h->reason ("; " between them); what does not fit ends in "...". */
static void finding(struct fb_node_health *h, const char *fmt, ...)
{
    size_t used = strlen(h->reason), room = sizeof h->reason;
    va_list ap;
    int n;

    h->findings++;
    if (used + 4 >= room)
        return;
    if (used)
        used += (size_t)snprintf(h->reason + used, room - used, "; ");
    va_start(ap, fmt);
    n = vsnprintf(h->reason + used, room - used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room - used)
        memcpy(h->reason + room - 4, "...", 4);
}

/* A PCIe reading's figure as sysfs means it: "x8" for a width, "8 GT/s" for a speed. */
static void link_figure(const struct fb_health_counter *c, double v, char *buf, size_t len)
{
    if (strcmp(c->counter, "link_width") == 0)
        snprintf(buf, len, "x%.0f", v);
    else
        snprintf(buf, len, "%g GT/s", v);
}

void fb_node_health_judge(const struct fb_node_expect *e, const struct fb_health_set *set,
                          int gpus, struct fb_node_health *h)
{
    char name[340], down[512] = "", now[32], max[32];
    const struct fb_health_counter *last = NULL; /* the judged PCIe reading before */
    bool last_low = false;                       /* its link below its maximum so far */

    memset(h, 0, sizeof *h);
    h->gpus = gpus;
    h->ib_slowest = NAN;
    if (e->gpus >= 0 && gpus != e->gpus)
        finding(h, "%d NVIDIA GPU(s) on the PCI bus, expected %d", gpus, e->gpus);
    for (size_t i = 0; i < set->n; i++) {
        const struct fb_health_counter *c = &set->c[i];
        fb_escape_str(c->device, 0, name, sizeof name);
        if (strcmp(c->source, "ib") == 0 && strcmp(c->counter, "state") == 0) {
            h->ib_ports++;
            if (c->value == 4) {
                h->ib_active++;
            } else if (strlen(down) + strlen(name) + 3 < sizeof down) {
                snprintf(down + strlen(down), sizeof down - strlen(down), "%s%s (state %g)",
                         down[0] ? ", " : "", name, c->value);
            }
        } else if (strcmp(c->source, "pcie") == 0 && c->judged) {
            /* a link's speed and width are two readings, one after the other */
            bool same = last && strcmp(last->device, c->device) == 0;
            if (!same)
                h->links++;
            if (fb_health_below_max(c)) {
                if (!same || !last_low)
                    h->links_low++;
                link_figure(c, c->value, now, sizeof now);
                link_figure(c, c->max, max, sizeof max);
                finding(h, "PCIe link of %s at %s of %s", name, now, max);
            }
            last_low = (same && last_low) || fb_health_below_max(c);
            last = c;
        }
    }
    /* each ACTIVE port's rate (a port's state and rate are separate readings) */
    for (size_t i = 0; i < set->n; i++) {
        const struct fb_health_counter *c = &set->c[i], *state;
        struct fb_health_counter like = *c;
        if (strcmp(c->source, "ib") != 0 || strcmp(c->counter, "rate_gbps") != 0)
            continue;
        snprintf(like.counter, sizeof like.counter, "state");
        state = fb_health_find(set, &like);
        if (state && state->value != 4)
            continue;
        if (isnan(h->ib_slowest) || c->value < h->ib_slowest)
            h->ib_slowest = c->value;
        if (e->ib_rate_gbps > 0 && c->value < e->ib_rate_gbps) {
            fb_escape_str(c->device, 0, name, sizeof name);
            finding(h, "InfiniBand %s at %g Gb/s, expected at least %g", name, c->value,
                    e->ib_rate_gbps);
        }
    }
    if (e->ib_ports >= 0 && h->ib_active < e->ib_ports)
        finding(h, "%d InfiniBand port(s) ACTIVE, expected at least %d%s%s", h->ib_active,
                e->ib_ports, down[0] ? "; not ACTIVE: " : "", down);
    if (!h->findings) {
        char slow[48] = "";
        if (!isnan(h->ib_slowest))
            snprintf(slow, sizeof slow, " (slowest %g Gb/s)", h->ib_slowest);
        snprintf(h->reason, sizeof h->reason,
                 "%d NVIDIA GPU(s), %d of %d InfiniBand port(s) ACTIVE%s, %d PCIe link(s) at their "
                 "maximum",
                 h->gpus, h->ib_active, h->ib_ports, slow, h->links);
    }
}

fb_status fb_node_health_check(const struct fb_node_expect *e, const char *root,
                               struct fb_node_health *h)
{
    struct fb_health_set set = {0};
    int gpus = 0;
    fb_status st;

    if ((st = fb_health_sysfs_read_node(root, &set, &gpus)) == FB_OK)
        fb_node_health_judge(e, &set, gpus, h);
    fb_health_set_free(&set);
    return st;
}

/* Progress lines and the estimate of the time left. */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"
#include "clock.h"

#include <math.h>
#include <string.h>
#include <time.h>

double fb_progress_eta(const struct fb_progress_group *g, size_t n)
{
    long done = 0;
    double seconds = 0.0, mean, left = 0.0;

    for (size_t i = 0; i < n; i++) {
        done += g[i].done;
        seconds += g[i].seconds;
    }
    if (done == 0)
        return -1.0;
    mean = seconds / (double)done;
    for (size_t i = 0; i < n; i++) {
        long rest = g[i].total - g[i].done;
        if (rest <= 0)
            continue;
        /* Points of one benchmark take about the same time: trials are calibrated to
         * --trial-ms whatever the size. Benchmarks differ (a p2p matrix cell against a
         * pipeline case), so a group's own mean is preferred to the run's. */
        left += (double)rest * (g[i].done > 0 ? g[i].seconds / (double)g[i].done : mean);
    }
    return left;
}

void fb_progress_hms(double seconds, char *buf, size_t len)
{
    long s;

    if (seconds < 0.0 || !isfinite(seconds)) {
        snprintf(buf, len, "?");
        return;
    }
    s = (long)floor(seconds + 0.5);
    if (s >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, len, "%ld:%02ld", s / 60, s % 60);
}

void fb_progress_line(long index, long total, const char *label, double elapsed_s,
                      double eta_s, char *buf, size_t len)
{
    char elapsed[32], eta[32];
    int width = snprintf(NULL, 0, "%ld", total);

    fb_progress_hms(elapsed_s, elapsed, sizeof elapsed);
    fb_progress_hms(eta_s, eta, sizeof eta);
    snprintf(buf, len, "[%*ld/%ld] %s | %s elapsed, ~%s left", width, index, total, label,
             elapsed, eta);
}

void fb_progress_init(struct fb_progress *p, FILE *out, const char *prefix)
{
    memset(p, 0, sizeof *p);
    p->current = -1;
    p->out = out;
    p->prefix = prefix ? prefix : "";
    p->start_s = fb_clock_now_s();
}

static int group_of(struct fb_progress *p, const char *name, bool create)
{
    for (size_t i = 0; i < p->ngroups; i++)
        if (strcmp(p->groups[i].name, name) == 0)
            return (int)i;
    if (!create || p->ngroups == FB_PROGRESS_MAX_GROUPS)
        return -1;
    memset(&p->groups[p->ngroups], 0, sizeof p->groups[0]);
    snprintf(p->groups[p->ngroups].name, sizeof p->groups[0].name, "%s", name);
    return (int)p->ngroups++;
}

fb_status fb_progress_plan(struct fb_progress *p, const char *name, long points)
{
    int g = group_of(p, name, true);

    if (g < 0)
        return FB_ERR_NOMEM;
    p->groups[g].total += points;
    p->total += points;
    return FB_OK;
}

void fb_progress_end(struct fb_progress *p)
{
    struct fb_progress_group *g;

    if (!p || p->current < 0)
        return;
    g = &p->groups[p->current];
    g->done++;
    g->seconds += fb_clock_now_s() - p->point_start_s;
    p->current = -1;
}

void fb_progress_begin(struct fb_progress *p, const char *name, const char *label)
{
    int g;
    double now;
    char line[512];

    if (!p)
        return;
    fb_progress_end(p);
    if ((g = group_of(p, name, true)) < 0)
        g = 0; /* more groups than room: charged to the first; the count stays right */
    if (p->ngroups == 0)
        return;
    p->started++;
    /* a point the plan did not count: the plan grows, the counter never passes it */
    if (p->groups[g].done >= p->groups[g].total) {
        p->groups[g].total++;
        p->total++;
    }
    if (p->started > p->total)
        p->total = p->started;
    p->current = g;
    now = fb_clock_now_s();
    p->point_start_s = now;
    if (!p->out)
        return;
    fb_progress_line(p->started, p->total, label, now - p->start_s,
                     fb_progress_eta(p->groups, p->ngroups), line, sizeof line);
    fprintf(p->out, "%s%s\n", p->prefix, line);
    fflush(p->out);
}

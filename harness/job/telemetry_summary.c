/* GPU telemetry's pure parts: a benchmark's samples summarised per rank, the names of the
 * throttle reasons, the closing line of a benchmark with its utilization WARN, and the thinning
 * of a full buffer. No MPI call, no thread, no NVML: the unit tests call them directly. */
#include "telemetry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Below this mean GPU utilization a timed benchmark is WARNed about (the field's advice). */
static const double busy_target_pct = 90.0;

fb_status fb_telemetry_summarize(const struct fb_telemetry_sample *s, size_t n,
                                 struct fb_telemetry_summary *out)
{
    double *vals = malloc((n ? n : 1) * sizeof *vals);
    fb_status st = FB_OK;

    memset(out, 0, sizeof *out);
    if (!vals)
        return FB_ERR_NOMEM;
    out->samples = n;
    for (int f = 0; f < FB_TELEMETRY_NFIELDS; f++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!isnan(s[i].v[f]))
                vals[k++] = s[i].v[f];
        out->valid[f] = k;
        if (k && fb_stats_compute(vals, k, &out->st[f]) != 0) {
            st = FB_ERR_NOMEM;
            break;
        }
        if (f == FB_TELEMETRY_THROTTLE)
            for (size_t i = 0; i < k; i++) {
                out->throttle_or |= (unsigned long long)vals[i];
                out->throttle_valid = true;
            }
    }
    free(vals);
    return st;
}

void fb_telemetry_reasons(unsigned long long mask, bool with_idle, char *buf, size_t len)
{
    static const struct {
        unsigned long long bit;
        const char *name;
    } bits[] = {
        {FB_TELEMETRY_THR_GPU_IDLE, "gpu_idle"},
        {FB_TELEMETRY_THR_APP_CLOCKS, "app_clocks"},
        {FB_TELEMETRY_THR_SW_POWER_CAP, "sw_power_cap"},
        {FB_TELEMETRY_THR_HW_SLOWDOWN, "hw_slowdown"},
        {FB_TELEMETRY_THR_SYNC_BOOST, "sync_boost"},
        {FB_TELEMETRY_THR_SW_THERMAL, "sw_thermal"},
        {FB_TELEMETRY_THR_HW_THERMAL, "hw_thermal"},
        {FB_TELEMETRY_THR_HW_POWER_BRAKE, "hw_power_brake"},
        {FB_TELEMETRY_THR_DISPLAY_CLOCKS, "display_clocks"},
    };
    unsigned long long known = 0;
    size_t used = 0;

    if (len == 0)
        return;
    buf[0] = '\0';
    if (!with_idle)
        mask &= ~(unsigned long long)FB_TELEMETRY_THR_GPU_IDLE;
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        known |= bits[i].bit;
        if ((mask & bits[i].bit) && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                                     bits[i].name);
    }
    if ((mask & ~known) && used < len)
        used += (size_t)snprintf(buf + used, len - used, "%s0x%llx", used ? "," : "",
                                 mask & ~known);
    if (used == 0)
        snprintf(buf, len, "none");
}

bool fb_telemetry_line(const char *bench, const struct fb_telemetry_summary *per_rank, int nranks,
                       bool timed, char *line, size_t len, char *warn, size_t warnlen)
{
    double util_sum = 0.0, low_mean = INFINITY, peak_mem = -1.0, peak_power = -1.0;
    size_t util_n = 0, samples = 0;
    int ranks = 0, low_rank = -1, mem_rank = -1, power_rank = -1;
    unsigned long long reasons = 0;
    bool any_reasons = false;
    char util[96] = "GPU utilization n/a", mem[64] = "peak memory n/a",
         power[64] = "peak power n/a", thr[160] = "", names[128];

    if (warnlen)
        warn[0] = '\0';
    for (int k = 0; k < nranks; k++) {
        const struct fb_telemetry_summary *r = &per_rank[k];
        const struct fb_stats *u = &r->st[FB_TELEMETRY_GPU_UTIL];
        if (!r->samples)
            continue;
        ranks++;
        samples += r->samples;
        if (r->valid[FB_TELEMETRY_GPU_UTIL]) {
            util_sum += u->mean * (double)r->valid[FB_TELEMETRY_GPU_UTIL];
            util_n += r->valid[FB_TELEMETRY_GPU_UTIL];
            if (u->mean < low_mean) {
                low_mean = u->mean;
                low_rank = k;
            }
        }
        if (r->valid[FB_TELEMETRY_MEM_USED] && r->st[FB_TELEMETRY_MEM_USED].max > peak_mem) {
            peak_mem = r->st[FB_TELEMETRY_MEM_USED].max;
            mem_rank = k;
        }
        if (r->valid[FB_TELEMETRY_POWER] && r->st[FB_TELEMETRY_POWER].max > peak_power) {
            peak_power = r->st[FB_TELEMETRY_POWER].max;
            power_rank = k;
        }
        if (r->throttle_valid) {
            reasons |= r->throttle_or;
            any_reasons = true;
        }
    }
    if (!ranks)
        return false;
    if (util_n) {
        if (ranks > 1)
            snprintf(util, sizeof util, "GPU utilization mean %.1f%% (lowest: rank %d, %.1f%%)",
                     util_sum / (double)util_n, low_rank, low_mean);
        else
            snprintf(util, sizeof util, "GPU utilization mean %.1f%%", util_sum / (double)util_n);
    }
    if (mem_rank >= 0) {
        snprintf(mem, sizeof mem, "peak memory %.2f GiB (rank %d)", peak_mem / 1073741824.0,
                 mem_rank);
    }
    if (power_rank >= 0)
        snprintf(power, sizeof power, "peak power %.1f W (rank %d)", peak_power, power_rank);
    if (any_reasons) {
        fb_telemetry_reasons(reasons, false, names, sizeof names);
        snprintf(thr, sizeof thr, ", %s%s", strcmp(names, "none") == 0 ? "no throttling" :
                                            "throttled: ", strcmp(names, "none") == 0 ? "" : names);
    }
    snprintf(line, len, "telemetry %s: %d GPU%s, %zu samples: %s, %s, %s%s", bench, ranks,
             ranks == 1 ? "" : "s", samples, util, mem, power, thr);
    if (timed && util_n && low_mean < busy_target_pct && warnlen)
        snprintf(warn, warnlen,
                 "%s: mean GPU utilization %.1f%% on rank %d is under %.0f%%: the GPU waited "
                 "for the host, data or communication for part of the timed trials",
                 bench, low_mean, low_rank, busy_target_pct);
    return true;
}

size_t fb_telemetry_thin(struct fb_telemetry_sample *s, size_t n)
{
    for (size_t i = 0; 2 * i < n; i++)
        s[i] = s[2 * i];
    return (n + 1) / 2;
}

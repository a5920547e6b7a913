/* GPU telemetry while benchmarks run: a sampler thread per rank reads this rank's GPU through
 * NVML (libnvidia-ml, dlopen'ed at run time, never linked) at a fixed interval; rank 0 gathers
 * the samples at the end of each benchmark into telemetry.csv and a summary per (benchmark,
 * rank) into results.csv (case "telemetry"). No NVML or no GPU is a note, never an error.
 * docs/telemetry.md documents the fields, units and limits. */
#ifndef FB_TELEMETRY_H
#define FB_TELEMETRY_H

#include <stdbool.h>
#include <stddef.h>

#include "results.h"
#include "session.h"
#include "status.h"

/* The fields of a sample, in telemetry.csv's column order and as results.csv metrics. */
enum fb_telemetry_field {
    FB_TELEMETRY_GPU_UTIL,  /* gpu_util_pct: % of the last sample period a kernel ran */
    FB_TELEMETRY_MEM_UTIL,  /* mem_util_pct: % of the period device memory was read or written */
    FB_TELEMETRY_MEM_USED,  /* mem_used_bytes */
    FB_TELEMETRY_POWER,     /* power_w */
    FB_TELEMETRY_SM_CLOCK,  /* sm_clock_mhz */
    FB_TELEMETRY_MEM_CLOCK, /* mem_clock_mhz */
    FB_TELEMETRY_TEMP,      /* temp_c */
    FB_TELEMETRY_THROTTLE,  /* throttle_reasons: NVML's clock event reasons, a bit mask */
    FB_TELEMETRY_NFIELDS
};

/* The fields' names ("gpu_util_pct", ...) and units ("%", "bytes", "W", ...). */
extern const char *const fb_telemetry_field_names[FB_TELEMETRY_NFIELDS];
extern const char *const fb_telemetry_field_units[FB_TELEMETRY_NFIELDS];

/* Throttle (clock event) reason bits, as NVML numbers them. */
enum {
    FB_TELEMETRY_THR_GPU_IDLE = 0x1,
    FB_TELEMETRY_THR_APP_CLOCKS = 0x2,
    FB_TELEMETRY_THR_SW_POWER_CAP = 0x4,
    FB_TELEMETRY_THR_HW_SLOWDOWN = 0x8,
    FB_TELEMETRY_THR_SYNC_BOOST = 0x10,
    FB_TELEMETRY_THR_SW_THERMAL = 0x20,
    FB_TELEMETRY_THR_HW_THERMAL = 0x40,
    FB_TELEMETRY_THR_HW_POWER_BRAKE = 0x80,
    FB_TELEMETRY_THR_DISPLAY_CLOCKS = 0x100,
};

/* Samples kept per benchmark per rank. Beyond it every other sample is dropped and the sampling
 * stride doubles, so a long benchmark keeps between FB_TELEMETRY_CAP / 2 and FB_TELEMETRY_CAP
 * samples spread evenly over its whole length. Rank 0 holds ranks x FB_TELEMETRY_CAP samples. */
enum { FB_TELEMETRY_CAP = 1024 };

/* One sample; NAN in a field means "no value" (NVML lacks the function or answered an error). */
struct fb_telemetry_sample {
    double t_s; /* seconds since the telemetry started (after a barrier: one origin per job) */
    double v[FB_TELEMETRY_NFIELDS];
};

/* Statistics of one benchmark on one rank. */
struct fb_telemetry_summary {
    size_t samples;                      /* samples taken */
    size_t valid[FB_TELEMETRY_NFIELDS];        /* samples with a value, per field */
    struct fb_stats st[FB_TELEMETRY_NFIELDS];  /* over the samples with a value (zero when none) */
    unsigned long long throttle_or;      /* OR of every mask (throttle_valid: any was read) */
    bool throttle_valid;
};

/* Pure: summarises n samples. Percentiles and the rest as fb_stats_compute; the throttle field's
 * statistics are those of the masks as numbers, and throttle_or is their OR. Returns FB_OK, or
 * FB_ERR_NOMEM. */
fb_status fb_telemetry_summarize(const struct fb_telemetry_sample *s, size_t n,
                                 struct fb_telemetry_summary *out);

/* Pure: keeps samples 0, 2, 4, ... of n (in place) and returns how many are left, (n + 1) / 2:
 * what the sampler does when a benchmark's buffer is full (and it then samples half as often). */
size_t fb_telemetry_thin(struct fb_telemetry_sample *s, size_t n);

/* Pure: the names of the bits of a throttle mask, comma-separated ("sw_power_cap,hw_thermal"),
 * "none" for 0; gpu_idle is left out unless `with_idle`. Unknown bits as "0x...". */
void fb_telemetry_reasons(unsigned long long mask, bool with_idle, char *buf, size_t len);

/* Pure: the terminal line of one benchmark from every rank's summary (nranks of them; ranks with
 * no sample are skipped), and whether to WARN (mean GPU utilization under 90% in a timed
 * benchmark). Returns false (and writes nothing) when no rank has a sample. */
bool fb_telemetry_line(const char *bench, const struct fb_telemetry_summary *per_rank, int nranks,
                       bool timed, char *line, size_t len, char *warn, size_t warnlen);

struct fb_telemetry; /* opaque */

/* Collective. Starts telemetry for the run: every `interval_ms` (0 = off: *out = NULL and
 * nothing else happens) each rank's sampler thread reads its GPU through NVML. The library is
 * libnvidia-ml.so.1, or $FB_NVML_LIBRARY. The GPU: on `cuda` the device the rank opened, by
 * PCI bus id; on `host`, NVML's device (local rank % count). When no rank has a GPU to read,
 * rank 0 prints one note and *out is NULL. Returns FB_OK, or FB_ERR_NOMEM (then *out is NULL on
 * every rank); telemetry never makes a run fail otherwise. */
fb_status fb_telemetry_start(struct fb_telemetry **out, const struct fb_session *s,
                             long interval_ms);

/* Not collective; accepts NULL. Samples from now on are labelled `bench`; `timed` says whether
 * the benchmark runs timed trials (the utilization WARN is only for those). */
void fb_telemetry_bench_begin(struct fb_telemetry *t, const char *bench, bool timed);

/* Collective; accepts NULL (on every rank). Ends the benchmark begun last: rank 0 gathers
 * every rank's samples (one MPI_Gatherv), rewrites telemetry.csv in res->dir atomically with
 * them added, adds the summary rows to res and rewrites results.csv. res: rank 0's results,
 * NULL on the other ranks. A file that cannot be written is a warning. */
void fb_telemetry_bench_end(struct fb_telemetry *t, struct fb_results *res);

/* Collective; accepts NULL. Stops the sampler threads; rank 0 prints one line per benchmark
 * (mean GPU utilization, peak memory, peak power, throttling) and the WARNs. Frees t. */
void fb_telemetry_finish(struct fb_telemetry *t);

#endif

/* NVML for telemetry: libnvidia-ml loaded with dlopen (never linked, so the binary starts
 * without a driver), one GPU chosen, its fields read. Every entry point but init, shutdown and
 * the device lookup is optional: a missing one, or an error, is "no value" (NAN). Internal to
 * telemetry.c and its tests. */
#ifndef FB_TELEMETRY_NVML_H
#define FB_TELEMETRY_NVML_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"
#include "telemetry.h"

struct fb_telemetry_nvml; /* opaque */

/* The library telemetry loads: $FB_NVML_LIBRARY when set and non-empty, else
 * "libnvidia-ml.so.1". */
const char *fb_telemetry_nvml_library(void);

/* Loads the library and calls nvmlInit. NULL when it cannot, with why filled; `missing` set
 * when the library itself was not found (the "NVML not found" note) rather than unusable. */
struct fb_telemetry_nvml *fb_telemetry_nvml_open(bool *missing, char *why, size_t whylen);

/* Chooses the GPU: the one at PCI bus id `bus_id` when it is non-empty (the cuda backend's
 * device), else NVML's device (local_rank % count). Writes NVML's index (-1 when unknown) and
 * bus id ("" when unknown). false with why filled when there is none. */
bool fb_telemetry_nvml_pick(struct fb_telemetry_nvml *n, const char *bus_id, int local_rank,
                            int *index, char *bus_out, size_t buslen, char *why, size_t whylen);

/* Reads every field of the chosen GPU into v (NAN where there is no value). Thread-safe as
 * NVML is; called by the sampler thread only. */
void fb_telemetry_nvml_read(struct fb_telemetry_nvml *n, double v[FB_TELEMETRY_NFIELDS]);

struct fb_health_set;

/* The chosen GPU's health counters into set (source "nvml", device `device`): ECC errors
 * (volatile, corrected and uncorrected), XID events seen since the first call (critical-error
 * events, drained without waiting), NVLink replay, recovery and CRC flit errors summed over the
 * links that answer, the reasons for lower clocks that mean trouble (hardware slowdown,
 * thermal, power brake: a mask) and the SM clock (recorded, not judged). A counter NVML does
 * not answer is left out. FB_ERR_NOMEM. */
fb_status fb_telemetry_nvml_health(struct fb_telemetry_nvml *n, const char *device,
                                   struct fb_health_set *set);

/* Shuts NVML down and unloads it; accepts NULL. */
void fb_telemetry_nvml_close(struct fb_telemetry_nvml *n);

#endif

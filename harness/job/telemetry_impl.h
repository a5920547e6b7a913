/* GPU telemetry's own header, for its files only (telemetry.c runs the sampler,
 * telemetry_out.c gathers and writes at each benchmark's end): the telemetry object they share
 * and what it holds of each rank and each benchmark. Not for anything outside telemetry*.c. */
#ifndef FB_TELEMETRY_IMPL_H
#define FB_TELEMETRY_IMPL_H

#include <pthread.h>

#include "telemetry.h"

/* One rank's identity, gathered once by rank 0 (fixed size: sent as bytes). */
struct ident {
    int ok;           /* this rank samples a GPU */
    int gpu;          /* NVML's index, -1 when unknown */
    char bus_id[32];  /* PCI bus id, "" when unknown */
    char host[64];
    char why[160];    /* why not, when !ok */
};

/* What rank 0 keeps of each benchmark for the closing lines. */
struct bench_rec {
    char name[24];
    bool timed;
    struct fb_telemetry_summary *per_rank; /* [size] */
};

struct fb_telemetry {
    MPI_Comm comm;
    int rank, size;
    const char *backend;
    bool on_gpu;          /* the benchmarks use the GPU (cuda backend): the WARN applies */
    double interval_s;
    double t0;            /* CLOCK_MONOTONIC seconds of time_s = 0 */
    struct fb_telemetry_nvml *nvml; /* NULL on a rank with no GPU to read */
    MPI_Datatype sample_type;

    /* shared with the sampler thread, under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool thread_running, stop, active, timed;
    char bench[24];
    unsigned long gen;    /* benchmarks begun: a read that straddles an end is dropped */
    struct fb_telemetry_sample *buf;
    size_t n;
    unsigned long ticks, stride;

    struct fb_telemetry_sample *send; /* this rank's samples of the benchmark, while gathering */

    /* rank 0 */
    struct ident *idents;
    struct fb_telemetry_sample *recv; /* size * FB_TELEMETRY_CAP */
    int *counts, *displs;
    struct bench_rec *benches;
    size_t nbenches, cap_benches;
    char csv_path[4200];
    bool csv_written;
    size_t csv_samples;
};

#endif

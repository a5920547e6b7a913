/* Options of `fabricbench run`, parsed once by the command line and read by the runner and
 * the benchmarks (which never parse options themselves). */
#ifndef FB_OPTIONS_H
#define FB_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "pattern.h"

enum { FB_MAX_BENCHES = 32, FB_MAX_SIZES = 64 };

/* A set of disjoint pairs of ranks measured at once (a round of `locate`'s tournament):
 * partner[k] is world rank k's partner, -1 when k sits it out; symmetric. */
struct fb_pairing {
    char name[48];      /* the CSV `case` column: "round3", "retest1" */
    const int *partner; /* one entry per world rank, owned by whoever fills the options */
};

struct fb_options {
    char backend[16];         /* "auto", "host", "cuda" */
    char coll[16];            /* "auto", "nccl", "mpi" */
    const char *out_dir;      /* --out; NULL = <results_root>/<run-id> */
    const char *results_root; /* default "results" */
    size_t min_bytes;         /* 0 = the benchmark's default */
    size_t max_bytes;         /* 0 = the benchmark's default */
    long factor;              /* size step; 0 = the benchmark's default */
    size_t nsizes;            /* --sizes: an explicit list replaces the sweep */
    size_t sizes[FB_MAX_SIZES];
    long warmup;              /* untimed iterations before timing */
    long iters;               /* iterations per trial; 0 = calibrated to trial_ms */
    long trials;              /* timed trials per point (the statistics' samples) */
    double trial_ms;          /* target length of one trial when iters == 0 */
    enum fb_dtype dtype;
    size_t ngroups;           /* --ranks: rank counts of the scaling curve; 0 = 1, 2, 4, ... all */
    int groups[FB_MAX_SIZES];
    size_t nthresholds;       /* --fusion: fusion thresholds in bytes (0 = off); 0 = defaults */
    size_t thresholds[FB_MAX_SIZES];
    size_t npairs;            /* --pairs: the pairs of the p2p size sweep; 0 = the default */
    int pairs[FB_MAX_SIZES][2];
    size_t matrix_bytes;      /* p2p matrix bandwidth size; 0 = the default */
    size_t latency_bytes;     /* p2p matrix latency size; 0 = the default */
    char matrix[8];           /* --matrix: p2p pairs "auto", "all", "sampled" (p2p_sample.h) */
    bool beyond_llc;          /* --beyond-llc: h2d adds fb_size_past_cache(LLC) to its sweep */
    char mpi_thread[12];      /* --mpi-thread: "auto", "single" or "serialized" (cmd_run.c) */
    int classes;              /* densenet_allreduce: classifier outputs (default 14, CheXNet) */
    bool no_nccl_log;         /* --no-nccl-log: leave NCCL_DEBUG alone */
    long telemetry_ms;        /* --telemetry-ms: NVML sampling interval; 0 = no telemetry */
    double timeout_s;         /* --timeout: limit of every phase in seconds; 0 = none
                                 (default: fb_options_timeout_default) */
    /* The training-step benchmarks (pipeline, compute, memfit); 0 = the benchmark's default. */
    size_t nbatches;          /* --batch: images per batch (per GPU) */
    long batches[FB_MAX_SIZES];
    long resolution;          /* --resolution: the model's input side in pixels */
    long threads;             /* --threads: pipeline worker threads */
    long prefetch;            /* --prefetch: pipeline ring depth, in batches */
    char dataset[16];         /* --dataset: "chestxray" (1024x1024 gray PNG) or "imagenet" (JPEG) */
    bool pageable;            /* --host-memory pageable: pipeline batches in pageable memory */
    bool wire_float;          /* --wire float: normalize on the CPU, copy floats */
    size_t nrates;            /* --rate: consumer rates in images/s for the stall fraction */
    double rates[FB_MAX_SIZES];
    char precision[8];        /* --precision: "fp16", "bf16", "fp32"; "" = the backend's best */
    size_t memory_budget;     /* --memory-budget: memfit's budget in bytes (host); 0 = default */
    size_t device_memory;     /* --device-memory: host-strict's capacity in bytes; 0 = none */
    bool self_bind;           /* --self-bind: each rank binds itself to its GPU's socket */
    bool dry_run;             /* --dry-run: plans only, as on a described GPU of */
    double dry_tflops, dry_gbps; /* ... this peak (TFLOP/s) and memory bandwidth (GB/s) */
    char optimizer[12];       /* --optimizer: "sgd", "momentum", "adam" (memfit's state) */
    bool fp16_allreduce;      /* --fp16-allreduce: step's gradients on the wire as float16 */
    char overlap[8];          /* --overlap: step's all-reduce during backward: "on", "off", "both"
                                 (replay: its ops overlapped, in sequence, both; --sequence: off) */
    /* replay (issue 18): the mix it replays, its sizes' scale, the compute stand-in per op. */
    const char *mix;          /* --mix FILE; NULL = replay has nothing to run */
    double mix_scale;         /* --scale: each op's bytes times this (default 1) */
    double compute_us;        /* --compute-us: before each op the mix gives none (default 0) */
    /* --timing (issue 18): how collective points are timed. "batch" (the default): trials of
     * back-to-back iterations, each as long as its slowest rank; "synced": OSU's way, a barrier
     * before every iteration (outside the time), each timed alone on each rank, reported as
     * the mean, min and max over ranks of each rank's mean (time_synced_*); "both". */
    char timing[8];
    /* locate (harness/fleet/locate_run.c): the rounds of pairs bench/locate.c measures. */
    const struct fb_pairing *pairings;
    size_t npairings;
    bool allow_oversubscribe;
    bool force;               /* reuse an --out folder that already holds a run */
    bool quiet;
    int nbench;
    const char *bench[FB_MAX_BENCHES];
};

/* Fills the defaults: auto backends, 5 warm-up iterations, 10 trials of about 5 ms, float32,
 * telemetry every 100 ms, batch timing. */
void fb_options_defaults(struct fb_options *o);

/* --timeout's default: 300 s per phase, or three trials of --trial-ms when they are longer. */
double fb_options_timeout_default(double trial_ms);

#endif

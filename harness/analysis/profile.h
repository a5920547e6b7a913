/* Hardware profiles: what one kind of node must show to be accepted (GPU count and model, P2P,
 * host-to-device and all-reduce bandwidth, compute, transports, InfiniBand, binding, noise), read
 * from an INI file with inih. Every section and key is documented in docs/accept.md; a key the
 * reader does not know is an error that names the file and line, never ignored. */
#ifndef FB_PROFILE_H
#define FB_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

enum { FB_PROFILE_MAX_P2P = 8, FB_PROFILE_MAX_BUSBW = 32 };

/* GPUDirect RDMA between nodes: not judged, must be used, or must not be used. */
enum fb_gdr_rule { FB_GDR_UNSET, FB_GDR_OPTIONAL, FB_GDR_REQUIRED, FB_GDR_OFF };

/* A floor on the one-way bandwidth of every GPU pair on one link class (the CSV's `link`). */
struct fb_profile_p2p {
    char link[16];   /* "nvlink", "pcie-switch", "host-bridge", "socket", "cross-socket", ... */
    double min_gbps; /* GB/s = 1e9 B/s */
};

/* A floor on all-reduce bus bandwidth at one size and one rank count. */
struct fb_profile_busbw {
    long long bytes; /* per rank, as the CSV's `bytes` */
    int ranks;
    double min_gbps;
};

/* The most GPUs or InfiniBand ports a node's count may name, in a profile ([node] gpus,
 * [infiniband] ports) and on health's command line (--gpus, --ib-ports) alike. (accept sees a
 * node's first 16 ports only: docs/accept.md.) */
enum { FB_PROFILE_COUNT_MAX = 1024 };

/* A parsed profile. A number below 0 (or an empty string) means "not in the profile": the
 * check is not made. */
struct fb_profile {
    char path[4096];
    char name[64];          /* [profile] name; the file's base name without .ini by default */
    char description[256];  /* [profile] description */

    int gpus;               /* [node] gpus: GPUs each rank must see */
    char gpu_model[64];     /* [node] gpu_model: a case-insensitive part of every GPU's name */
    long long gpu_memory;   /* [node] gpu_memory: each GPU's memory (bytes, the datasheet's);
                               what `run --device-memory PROFILE` gives host-strict */

    struct fb_profile_p2p p2p[FB_PROFILE_MAX_P2P]; /* [p2p] min_gbps.<link> */
    size_t np2p;

    double h2d_min_gbps;    /* [h2d] min_pinned_gbps_per_gpu_all */
    long long h2d_bytes;    /* [h2d] bytes; -1: the largest size measured */

    char allreduce_case[48];  /* [allreduce] case, default "out_of_place" */
    char allreduce_dtype[12]; /* [allreduce] dtype, default "float32" */
    struct fb_profile_busbw busbw[FB_PROFILE_MAX_BUSBW]; /* [allreduce] busbw_gbps.<bytes>.<ranks> */
    size_t nbusbw;

    double compute_min_tflops; /* [compute] min_tflops: per GPU */
    char compute_case[48];     /* [compute] case, default "step_ours" */

    char intra[16];           /* [transports] intra: "p2p", "shm", "any"; "" not judged */
    char inter[16];           /* [transports] inter: "ib", "socket", "any"; "" not judged */
    enum fb_gdr_rule gdrdma;  /* [transports] gdrdma */

    int ib_ports;             /* [infiniband] ports: ACTIVE ports at least */
    double ib_rate_gbps;      /* [infiniband] rate_gbps: each of them at least (Gb/s) */

    bool binding_required;    /* [binding] required = yes */

    double max_spread_pct;    /* [noise] max_spread_pct: (p95 - p05) / median * 100 */
    int min_samples;          /* [noise] min_samples: trials a median needs (default 3) */
    double max_cpu_wait_pct;  /* [noise] max_cpu_wait_pct: the most of a point's time a rank
                                 may wait for a CPU (results.csv's cpu_wait x 100); -1: none */
    double expected_min_share; /* [expected] min_share: the share of its own expected figure
                                  (results.csv's `expected`) each series must reach at its
                                  largest size; default 0.8, 0 = not judged */
};

/* Fills *p with "not in the profile" everywhere and the defaults. */
void fb_profile_init(struct fb_profile *p);

/* Reads the INI file at `path` into *p (initialised here). FB_ERR_IO with "cannot open profile
 * 'path': why" when it cannot be opened; FB_ERR_USAGE with "not a profile file: 'path' is a
 * directory" for a folder, and with "path:line: what" in err for a syntax error, a NUL byte, an
 * unknown section or key, a key given twice (busbw_gbps.<bytes>.<ranks> compared as numbers:
 * .2 and .02 are one key), or a value that is not what the key takes (numbers are decimal
 * only: fb_decimal_parse). A profile that asks for nothing at all is refused too. Not
 * collective. */
fb_status fb_profile_load(const char *path, struct fb_profile *p, char *err, size_t errlen);

/* The same over INI text held in memory; `name` stands for the file in messages. */
fb_status fb_profile_parse(const char *text, const char *name, struct fb_profile *p, char *err,
                           size_t errlen);

#endif

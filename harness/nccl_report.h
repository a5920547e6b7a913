/* What NCCL said about a run: its NCCL_DEBUG=INFO log lines (any version from 2.3 on, launcher
 * prefixes and other programs' lines mixed in) read into which transport carried each
 * connection, the NCCL version and the NICs it chose. `fabricbench nccl-log` prints it with
 * verdicts; `run` and `doctor` apply it to the logs of a run; `accept` checks the transports a
 * hardware profile requires against it. */
#ifndef FB_NCCL_REPORT_H
#define FB_NCCL_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

/* How one connection (a pair of ranks on one channel, one direction) was carried. */
enum fb_nccl_path {
    FB_NCCL_P2P,       /* GPU peer access: P2P/IPC, P2P/CUMEM, P2P/direct pointer (+ /read, /CE) */
    FB_NCCL_SHM,       /* through host shared memory: SHM/..., "direct shared memory" */
    FB_NCCL_IB,        /* InfiniBand (or RoCE) verbs, NCCL's own NET/IB or a plugin's IBext */
    FB_NCCL_IB_GDR,    /* the same with GPUDirect RDMA (/GDRDMA) */
    FB_NCCL_SOCKET,    /* TCP sockets: NET/Socket */
    FB_NCCL_NET_OTHER, /* another network plugin */
    FB_NCCL_UNKNOWN,
    FB_NCCL_PATHS
};

struct fb_nccl_report {
    char version[32];             /* "2.18.3"; "" when no line said */
    size_t intra[FB_NCCL_PATHS];  /* connections inside a node, by path */
    size_t inter[FB_NCCL_PATHS];  /* connections between nodes, by path */
    size_t lines;                 /* lines read */
    size_t nccl_lines;            /* of which NCCL's own */
    bool ib_available;            /* NCCL found InfiniBand devices (NET/IB : Using ...) */
    char nics[256];               /* the NICs NCCL chose, comma-separated; "" when none */
};

/* Reads NCCL_DEBUG=INFO logs into one report. A file that cannot be read, or a line that claims
 * to be NCCL's and cannot be understood where understanding matters: FB_ERR_USAGE (or FB_ERR_IO)
 * with "file:line: what" in err. Lines of other programs are counted and skipped. */
fb_status fb_nccl_report_files(const char *const *paths, size_t n, struct fb_nccl_report *r,
                               char *err, size_t errlen);

/* The nccl-rank*.log files fabricbench kept in a run folder; FB_ERR_UNSUPPORTED when it has
 * none (a run without NCCL, or with --no-nccl-log). */
fb_status fb_nccl_report_dir(const char *run_dir, struct fb_nccl_report *r, char *err,
                             size_t errlen);

#endif

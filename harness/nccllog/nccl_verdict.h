/* The verdicts on an NCCL log report: the misconfigurations every field guide checks (an old
 * NCCL, no P2P inside a node, TCP sockets where InfiniBand exists, no GPUDirect RDMA), and the
 * InfiniBand faults NCCL reported (a port error, a failed device NCCL failed over from). */
#ifndef FB_NCCL_VERDICT_H
#define FB_NCCL_VERDICT_H

#include "nccl_report.h"
#include "verdict.h"

/* The verdicts on a report, in this order: version, intra-node, inter-node, GPUDirect RDMA,
 * network faults. */
#define FB_NCCL_VERDICTS 5
struct fb_nccl_verdict {
    const char *check;   /* "nccl_version", "nccl_intra", "nccl_inter", "nccl_gdr",
                            "nccl_faults" */
    enum fb_verdict verdict;
    char text[480];      /* one line: what was seen and, when not PASS, the likely cause */
};

/* Fills out[FB_NCCL_VERDICTS] and returns the worst verdict (fb_verdict_worst). */
enum fb_verdict fb_nccl_verdicts(const struct fb_nccl_report *r,
                                 struct fb_nccl_verdict out[FB_NCCL_VERDICTS]);

#endif

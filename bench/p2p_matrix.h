/* The p2p benchmark's vocabulary, shared by its measuring part (p2p.c) and its summary
 * (p2p_matrix.c): what a case measures and over which path. */
#ifndef FB_P2P_MATRIX_H
#define FB_P2P_MATRIX_H

#include "bench.h"

enum p2p_kind {
    P2P_MATRIX_UNI,     /* one ordered pair alone, one way, at the matrix size */
    P2P_MATRIX_BIDIR,   /* one pair alone, both ways at once */
    P2P_MATRIX_LATENCY, /* one pair alone, a small message */
    P2P_ALL_PAIRS,      /* every rank k sends to k + shift at once */
    P2P_SWEEP_UNI,      /* a chosen pair over a size sweep, one way */
    P2P_SWEEP_BIDIR,    /* the same, both ways */
    P2P_KIND_COUNT
};

enum p2p_via {
    P2P_VIA_COLL,   /* the collectives library's send/recv: NCCL, or MPI */
    P2P_VIA_IPC,    /* a direct copy into the peer's memory, mapped through an IPC handle */
    P2P_VIA_STAGED, /* two copies through a shared pinned host buffer */
    P2P_VIA_COUNT
};

/* The summary prints whole matrices up to this many ranks; above, the outliers only. */
enum { P2P_PRINT_MAX = 64 };

extern const char *const p2p_kind_name[P2P_KIND_COUNT];
extern const char *const p2p_via_name[P2P_VIA_COUNT];

/* Rank 0: prints the rank x rank matrices of the rows from `first` on (up to P2P_PRINT_MAX
 * ranks), with the link of each pair, names the slowest pairs with their ratio to the median
 * pair, and says how many pairs were measured (adding two matrix_plan rows per transport).
 * Its memory grows with the measured cells, not with ranks squared. */
void p2p_summarize(const struct fb_ctx *ctx, struct fb_results *res, size_t first);

/* The pair outliers of a matrix (n x n, NaN where not measured, diagonal ignored): writes into
 * out[] the up to `max` pairs (src * n + dst) furthest below the median when higher is better,
 * above it otherwise, and the median; returns how many pairs were measured. For tests. */
size_t p2p_outliers(const double *m, int n, bool higher_is_better, int *out, size_t max,
                    size_t *nout, double *median);

#endif

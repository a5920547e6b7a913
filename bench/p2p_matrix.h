/* The p2p benchmark's vocabulary, shared by its measuring part (p2p.c) and its summary
 * (p2p_matrix.c): what a case measures and over which path. */
#ifndef FB_P2P_MATRIX_H
#define FB_P2P_MATRIX_H

#include "bench.h"

enum fb_p2p_kind {
    FB_P2P_MATRIX_UNI,     /* one ordered pair alone, one way, at the matrix size */
    FB_P2P_MATRIX_BIDIR,   /* one pair alone, both ways at once */
    FB_P2P_MATRIX_LATENCY, /* one pair alone, a small message */
    FB_P2P_ALL_PAIRS,      /* every rank k sends to k + shift at once */
    FB_P2P_SWEEP_UNI,      /* a chosen pair over a size sweep, one way */
    FB_P2P_SWEEP_BIDIR,    /* the same, both ways */
    FB_P2P_KIND_COUNT
};

enum fb_p2p_via {
    FB_P2P_VIA_COLL,   /* the collectives library's send/recv: NCCL, or MPI */
    FB_P2P_VIA_IPC,    /* a direct copy into the peer's memory, mapped through an IPC handle */
    FB_P2P_VIA_STAGED, /* two copies through a shared pinned host buffer */
    FB_P2P_VIA_COUNT
};

/* The summary prints whole matrices up to this many ranks; above, the outliers only. */
enum { FB_P2P_PRINT_MAX = 64 };

extern const char *const fb_p2p_matrix_kind_name[FB_P2P_KIND_COUNT];
extern const char *const fb_p2p_matrix_via_name[FB_P2P_VIA_COUNT];

/* Rank 0: prints the rank x rank matrices of the rows from `first` on (up to FB_P2P_PRINT_MAX
 * ranks), with the link of each pair, names the slowest pairs with their ratio to the median
 * pair, and says how many pairs were measured (adding two matrix_plan rows per transport).
 * Its memory grows with the measured cells, not with ranks squared. */
void fb_p2p_matrix_summarize(const struct fb_ctx *ctx, struct fb_results *res, size_t first);

/* The pair outliers of a matrix (n x n, NaN where not measured, diagonal ignored): writes into
 * out[] the up to `max` pairs (src * n + dst) furthest below the median when higher is better,
 * above it otherwise, and the median; returns how many pairs were measured. For tests. */
size_t fb_p2p_matrix_outliers(const double *m, int n, bool higher_is_better, int *out,
                              size_t max, size_t *nout, double *median);

#endif

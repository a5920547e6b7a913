/* Which pairs the p2p matrices measure. Every pair below a threshold of ranks; above it (or
 * when asked) a sample that grows as O(N G + N) cells, not O(N^2): every pair inside each node,
 * a ring across the nodes (local rank r of node i to local rank r of node i+1), a few seeded
 * random cross-node pairs, and all-at-once patterns (neighbour, ring, bisection). docs/scale.md
 * gives the counts and the time. Pure: no MPI, the same answer on every rank. */
#ifndef FB_P2P_SAMPLE_H
#define FB_P2P_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

enum fb_p2p_matrix_mode { FB_P2P_MATRIX_AUTO, FB_P2P_MATRIX_ALL, FB_P2P_MATRIX_SAMPLED };

enum {
    FB_P2P_SAMPLE_THRESHOLD = 64, /* auto: every pair up to this many ranks, a sample above */
    FB_P2P_SAMPLE_RANDOM = 16,    /* random cross-node pairs in a sample */
    FB_P2P_SAMPLE_SEED = 0x5eed,  /* their seed (mixed with the rank count) */
};

/* One point of a matrix: the pair a -> b (for the symmetric matrices a < b). With stride > 0
 * the pair is local ranks a and b of a node of `stride` consecutive ranks, measured on every
 * node at once (a pair inside a node shares no link with a pair inside another node): the point
 * fills one cell per node. */
struct fb_p2p_point {
    int a, b, stride;
};

struct fb_p2p_sample {
    bool sampled;           /* false: every pair */
    int n, nodes;
    int per_node;           /* ranks per node when the nodes are equal blocks of consecutive
                               ranks (node_of[k] == k / per_node), else 0 */
    struct fb_p2p_point *uni;  /* one-way: ordered pairs */
    size_t nuni;
    struct fb_p2p_point *sym;  /* both ways and latency: unordered pairs, a < b */
    size_t nsym;
    int *shifts;            /* all_pairs: every rank k sends to k + shift at once */
    size_t nshifts;
    size_t cells_uni, cells_sym; /* matrix cells the points fill (ordered; unordered) */
    size_t random;          /* random cross-node pairs among uni */
};

/* Plans the points over n ranks on the nodes node_of[0..n) (node indices 0..nodes-1).
 * intra_only: only pairs inside a node (IPC reaches no further). mode AUTO samples above
 * FB_P2P_SAMPLE_THRESHOLD ranks. Fills *out (release with fb_p2p_sample_release); FB_ERR_NOMEM. */
fb_status fb_p2p_sample_plan(int n, const int *node_of, enum fb_p2p_matrix_mode mode,
                             bool intra_only, struct fb_p2p_sample *out);
void fb_p2p_sample_release(struct fb_p2p_sample *s);

/* A checksum of the plan, so the ranks can check that they agree on it. */
uint64_t fb_p2p_sample_hash(const struct fb_p2p_sample *s);

/* The mode named by --matrix ("auto", "all", "sampled"); AUTO for NULL or "". */
enum fb_p2p_matrix_mode fb_p2p_sample_mode_parse(const char *name);

#endif

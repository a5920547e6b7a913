/* locate's plan of node pairs (docs/locate.md): the round-robin tournament of the circle method
 * (n - 1 rounds of disjoint pairs for n nodes, n rounds with one bye each when n is odd), a
 * sampled set of its rounds above a cap of nodes, and retest rounds that pair suspects with
 * healthy partners. Pure: no MPI, the same answer on every rank for the same inputs. */
#ifndef FB_LOCATE_PLAN_H
#define FB_LOCATE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

enum {
    FB_LOCATE_CAP = 64,            /* above this many nodes the tournament is sampled */
    FB_LOCATE_SAMPLED_ROUNDS = 16, /* rounds of the sampled plan */
    FB_LOCATE_SEED = 0x10ca7e,     /* which rounds the sample takes (mixed with the node count) */
};

/* Rounds of pairs over `nodes` nodes: partner[r * nodes + i] is node i's partner in round r,
 * -1 when node i sits the round out (a bye, or not in a retest round). Symmetric in each round:
 * partner[j] == i when partner[i] == j. */
struct fb_locate_rounds {
    int nodes;
    int nrounds;
    int full;      /* rounds of the whole tournament (n - 1 even n, n odd n; 0 for one node) */
    bool sampled;  /* true: nrounds of the `full` rounds, chosen by a seeded generator */
    int *partner;  /* nrounds * nodes, owned */
};

/* The rounds of the whole tournament for n nodes: n - 1 for even n, n for odd n, 0 below 2. */
int fb_locate_full_rounds(int nodes);

/* Round r (0 <= r < fb_locate_full_rounds(nodes)) of the circle method: node 0 stays, the
 * others turn one place each round; writes nodes partners into partner[] (-1: the bye). */
void fb_locate_circle_round(int nodes, int r, int *partner);

/* The plan for `nodes` nodes: every round up to `cap` nodes (0: FB_LOCATE_CAP), above it
 * `sample` rounds (0: FB_LOCATE_SAMPLED_ROUNDS) of the tournament picked without repeats by a
 * generator seeded with `seed` and the node count. Fills *out (release with
 * fb_locate_rounds_release); FB_ERR_NOMEM, FB_ERR_USAGE for nodes < 1. */
fb_status fb_locate_plan(int nodes, int cap, int sample, uint64_t seed,
                         struct fb_locate_rounds *out);

/* Retest rounds: each node i with want[i] > 0 meets want[i] distinct partners from the nodes
 * with healthy[i] set (never itself, never a partner it has met in these rounds), and each
 * pair in pairs[0..npairs) (node a, node b) meets again alone. Pairs of one round are disjoint;
 * rounds are added until everything is placed (a request with no healthy partner left is
 * dropped). Fills *out; FB_ERR_NOMEM. */
fb_status fb_locate_retests(int nodes, const int *want, const bool *healthy, const int (*pairs)[2],
                            size_t npairs, struct fb_locate_rounds *out);

void fb_locate_rounds_release(struct fb_locate_rounds *r); /* accepts a zeroed one */

/* Probability that a sampled plan of `sample` rounds out of `full` misses a given pair (the
 * pair meets in exactly one round of the tournament): 1 - sample / full, 0 when not sampled. */
double fb_locate_miss_odds(int full, int sample);

#endif

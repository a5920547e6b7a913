/* The benchmarks of `fabricbench locate` (harness/fleet/locate_run.c runs them; they are not in
 * `run`'s registry): every node alone (locate_node), rounds of disjoint pairs of ranks at once
 * (locate_pairs, from fb_options.pairings) and each rank's compute-free loop (locate_arrive).
 * They measure through p2p's and h2d's hooks and the one runner. */
#ifndef FB_LOCATE_BENCH_H
#define FB_LOCATE_BENCH_H

#include "bench.h"

/* Phase 1: h2d on every rank at once (the host memcpy path on the host backend), each pairing
 * of fb_options.pairings (ranks of one node) both ways at once over the collectives (and IPC on
 * a GPU backend), and a sum all-reduce inside every node at once when a node has 2 ranks. */
extern const struct fb_bench fb_bench_locate_node;

/* Phase 1 too, timed apart: the compute stand-in on every rank at once (compute's whole step,
 * bench/compute.h; 1 image on the host, the GPU's default batch), where compute can run. */
extern const struct fb_bench fb_bench_locate_compute;

/* Phase 2: one point per pairing of fb_options.pairings: its pairs both ways at once over the
 * collectives' send/recv, each rank's own bandwidth in its own rows (dst: its partner). */
extern const struct fb_bench fb_bench_locate_pairs;

/* Stragglers: every rank runs the same compute-free loop at once; each rank's time is a row. */
extern const struct fb_bench fb_bench_locate_arrive;

/* Test only: FB_TEST_LOCATE_SLOW ("node:N", "compute:N", "link:A-B" with node indices, "rank:R")
 * makes node N's transfers between nodes, the transfers between nodes A and B, or rank R's loop
 * 10 times slower or more (one end sleeps 9 times what its work took, 5 ms at least: more than
 * this machine's noise with oversubscribed ranks, docs/locate.md), or
 * node N's compute stand-in take 50 times its CPU time (busy: bench/locate.c says why), so the
 * mpi tests see a culprit without a shaped network. Parses the variable into *kind ('n', 'l',
 * 'r', 0 when unset) and a, b; FB_ERR_USAGE with a message when it is malformed. */
fb_status fb_locate_test_slow(char *kind, int *a, int *b);

#endif

/* locate's statistics and decisions (docs/locate.md), pure and MPI-free: the typical value of
 * comparable measurements (median) and their spread (MAD), which measurements are suspect under
 * a tolerance, which nodes of a tournament look slow as a whole and which pairs alone, and the
 * verdict after the retests: a slow node, a slow link, or noise. */
#ifndef FB_LOCATE_JUDGE_H
#define FB_LOCATE_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

/* A MAD scaled by 1.4826 estimates a normal spread's standard deviation; a measurement must be
 * this many such deviations away, besides past the tolerance, to be suspect. */
#define FB_LOCATE_MAD_K 3.0

/* The nodes a tournament needs before the MAD of their figures counts (below, the tolerance
 * alone, and the retests): with 4 nodes one slow node's figure is one of the two that set it. */
enum { FB_LOCATE_MAD_NODES = 8 };

/* The median and the median absolute deviation (unscaled) of v[0..n); v is not modified.
 * FB_ERR_USAGE for n == 0, FB_ERR_NOMEM. */
fb_status fb_locate_typical(const double *v, size_t n, double *median, double *mad);

/* Whether `value` is suspect against comparable measurements of median `median` and MAD `mad`:
 * higher_is_better (bandwidth): below median * (1 - tol_pct / 100) and below median - K * 1.4826
 * * mad; otherwise (time): above median / (1 - tol_pct / 100) and above median + K * 1.4826 *
 * mad. A measurement of 0 or NaN where higher is better is suspect. */
bool fb_locate_is_suspect(double value, double median, double mad, double tol_pct,
                          bool higher_is_better);

/* Whether a rate `value` (higher is better) is suspect against comparable rates others[0..n)
 * (n >= 1): below their median by tol_pct and below it by FB_LOCATE_MAD_K scaled MADs of their
 * logarithms. Rates spread by factors, not by amounts: 4 healthy nodes at 0.0058, 0.0060, 0.0090
 * and 0.0100 TFLOP/s (two groups on one busy core) have a MAD of 0.0016, whose 3 scaled MADs
 * (0.0071) reach almost to zero from their median of 0.0075 and hide a node 15 times slower;
 * the MAD of their logarithms (0.22) puts the line at 0.0075 / 2.65. *median: their median (NaN for
 * n == 0, which is no suspect). A value of 0 or NaN is suspect. FB_ERR_NOMEM. */
fb_status fb_locate_rate_suspect(double value, const double *others, size_t n, double tol_pct,
                                 bool *suspect, double *median);

/* One measured pair of nodes of the tournament: value is the pair's bandwidth
 * (fb_locate_pair_figure of its two directions), GB/s. */
struct fb_locate_pair {
    int a, b;
    double value;
};

/* A pair's figure from each end's own bandwidth while both directions ran at once: their mean.
 * Two-way TCP through the same queues splits a healthy link unevenly (one direction read far
 * below the other, always on the same host, on the shaped cluster: docs/locate.md, "Deciding"),
 * which the slower direction would turn into a slow node; a link or node slow both ways is as
 * slow in the mean. NaN when either is NaN. */
double fb_locate_pair_figure(double a, double b);

/* After the tournament: the typical pair (*median) is the median over the nodes of each node's
 * median pair, so the pairs of one slow node cannot set it, and *mad the MAD of those node
 * figures; slow[k] says whether pair k is suspect against them (tolerance tol_pct, and the MAD
 * from FB_LOCATE_MAD_NODES nodes on; never with fewer than 3 nodes: nothing to compare with). A
 * node is a node candidate (node_cand[i]) when its median pair is suspect against the median of
 * the other nodes' median pairs (a slow node's median pair is slow; a node in one slow link has
 * a normal median) and one of its pairs at least is slow. slow[] has n entries, node_cand[]
 * `nodes`; FB_ERR_USAGE for n == 0, FB_ERR_NOMEM. */
fb_status fb_locate_classify(int nodes, const struct fb_locate_pair *p, size_t n, double tol_pct,
                             bool *slow, bool *node_cand, double *median, double *mad);

/* Node x's median over its pairs in p[0..n) (tournament and retests alike), leaving out the
 * pairs with node `skip` (-1: none); NaN when it has none (or out of memory). */
double fb_locate_node_median(int x, const struct fb_locate_pair *p, size_t n, int skip);

/* Whether pair k (a-b) looks like a slow link: below both ends' medians over their other pairs
 * (fb_locate_node_median skipping the other end) by more than tol_pct. A slow node's pair is not
 * (the node's other pairs are as slow); an end without other pairs does not count against it. */
bool fb_locate_link_like(const struct fb_locate_pair *p, size_t n, size_t k, double tol_pct);

enum fb_locate_kind { FB_LOCATE_NOISE, FB_LOCATE_NODE, FB_LOCATE_LINK };

/* A node candidate after its retests against healthy partners: `slow` of `tested` retests were
 * suspect. NODE when every retest (at least one) was slow, NOISE when none was, LINK otherwise
 * (slow against one partner only: the link to that partner). NOISE when nothing was tested. */
enum fb_locate_kind fb_locate_decide_node(int slow, int tested);

/* A slow pair after its retests: the pair alone (alone_slow), and each end against a healthy
 * partner (a_slow, b_slow; untested counts as fine). NOISE when the pair alone is fine; NODE when
 * an end is slow with a healthy partner too (*which: 0 for a, 1 for b, 2 for both); LINK when
 * only the pair is slow. */
enum fb_locate_kind fb_locate_decide_link(bool alone_slow, bool a_slow, bool b_slow, int *which);

/* Straggler ranks: time[k] is rank k's time for the same work (higher is worse). Sets
 * straggler[k] for the ranks suspect against all ranks under tol_pct; returns how many, -1 when
 * out of memory. *median: the typical time. */
int fb_locate_stragglers(const double *time, int n, double tol_pct, bool *straggler,
                         double *median);

#endif

/* Comparing two runs (`fabricbench compare`): rows joined on their keys, the ratio of medians,
 * each metric's direction, the noise rule that decides REGRESSION / improved / noise / same
 * (docs/compare.md states it), and the difference between the two runs' env.json fingerprints.
 * Pure: no output, no files except the env.json read by fb_compare_fingerprints. */
#ifndef FB_COMPARE_H
#define FB_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "results_read.h"
#include "status.h"

#define FB_COMPARE_THRESHOLD_DEFAULT 0.05

/* Which way is better for a metric. */
enum fb_cmp_dir { FB_CMP_UNKNOWN = 0, FB_CMP_HIGHER, FB_CMP_LOWER };

enum fb_cmp_verdict {
    FB_CMP_SAME,       /* |ratio - 1| within the threshold */
    FB_CMP_NOISE,      /* beyond the threshold, but the trial bands overlap */
    FB_CMP_IMPROVED,   /* beyond both, the better way */
    FB_CMP_REGRESSION, /* beyond both, the worse way */
    FB_CMP_CHANGED,    /* beyond the threshold, for a metric with no better way: never flagged */
    FB_CMP_NA,         /* no ratio: a zero, negative or non-finite median */
    FB_CMP_ONLY_BASE,  /* the row is in BASE only: listed, never flagged */
    FB_CMP_ONLY_NEW,   /* in NEW only */
};

/* The direction of a metric (results/SCHEMA.md): bandwidths, throughputs, fits and
 * efficiencies higher; times, latencies, stall fractions and overheads lower; the rest unknown. */
enum fb_cmp_dir fb_compare_direction(const char *metric);

/* The verdict for one joined pair, and the ratio new median / base median (NAN when there is
 * none). threshold is a fraction (0.05 = 5%; for stall_fraction, 0.05 of time, absolute). With
 * two or more samples on both sides a change beyond the threshold counts only when the
 * [p05, p95] trial bands do not overlap; with one sample on either side (*threshold_only is
 * set) the threshold alone decides for figures found exactly (memfit's), and a figure derived
 * from other rows' medians or from one timing is never flagged (noise): its inputs are judged
 * on their own rows. */
enum fb_cmp_verdict fb_compare_judge(const struct fb_row *base, const struct fb_row *cur,
                                     double threshold, double *ratio, bool *threshold_only);

/* Whether a metric is a fraction of time in [0, 1] (stall_fraction): its change is measured in
 * points, not as a ratio. */
bool fb_compare_is_fraction(const char *metric);

/* The verdict for one joined pair of pooled rows (fb_compare_pool: st.samples counts runs,
 * st.median is the median of the runs' medians, st.mean and st.stddev their mean and sample
 * standard deviation), and the ratio of the medians. Beyond the threshold (as
 * fb_compare_judge), a change counts only when Welch's t of the runs' medians passes the
 * two-sided 1% level (Student's t quantile, its degrees of freedom rounded down); with one run
 * on a side the other side's variance stands for both (its runs - 1 degrees of freedom); with
 * one run on each side, never (noise). Figures derived from other rows are judged like any
 * other: each run has its own. */
enum fb_cmp_verdict fb_compare_judge_runs(const struct fb_row *base, const struct fb_row *cur,
                                          double threshold, double *ratio);

/* Student's t quantile at 0.995 for df degrees of freedom (rounded down; at least 1). */
double fb_compare_t995(double df);

/* The most runs fb_compare_runs_needed looks at. */
#define FB_COMPARE_RUNS_MAX 1000

/* The runs per side that see a relative change `change` (0.05 = 5%) at the rule's two-sided 1%
 * level with 80% power, when the runs' medians spread with relative standard deviation cv: the
 * least n >= 2 with (t_0.995 + t_0.80)(2n - 2 df) x cv x sqrt(2 / n) <= change. -1 when more
 * than FB_COMPARE_RUNS_MAX, or the inputs are not finite and positive. */
int fb_compare_runs_needed(double cv, double change);

/* The verdict's word: "REGRESSION", "improved", ... With machines (comparing two machines,
 * not two runs of one), "worse" / "better" replace "REGRESSION" / "improved". */
const char *fb_compare_verdict_str(enum fb_cmp_verdict v, bool machines);

/* Compares the join keys of two rows (bench, case, backend, transport, ranks, nodes, src, dst,
 * bytes, batch, dtype, metric), strcmp-like. */
int fb_compare_key_cmp(const struct fb_row *a, const struct fb_row *b);

struct fb_cmp_entry {
    const struct fb_read_row *base, *cur; /* NULL for the side that lacks the row */
    double ratio;
    enum fb_cmp_verdict verdict;
    bool threshold_only;
    bool runs; /* judged by fb_compare_judge_runs (pooled rows of several runs) */
    bool busy; /* a change beyond the noise rule on a busy machine (fb_compare_busy): noise */
};

/* Whether a joined pair was measured on machines busy to different degrees: the two sides'
 * cpu_wait (the share of a point's time a rank waited for a CPU; the largest over its runs when
 * pooled) differ by more than FB_CPU_WAIT_BUSY, or, where one side's is unknown (a run from
 * before the column), the other's is above it. A change the noise rule would flag is then
 * noise (rule "busy"): ranks that exchange messages amplify each other's waits (one waits for a
 * CPU while the other spins for its message), so no bound on the slowdown a wait explains
 * holds (measured beyond what 1 / (1 - wait) allows: docs/compare.md), and the row is no
 * evidence either way. Two runs that waited alike are compared like for like (a link shaped to
 * a third less under the same load is still flagged). */
bool fb_compare_busy(const struct fb_row *base, const struct fb_row *cur);

struct fb_comparison {
    struct fb_cmp_entry *e;
    size_t n;
    size_t count[FB_CMP_ONLY_NEW + 1]; /* entries per verdict */
    size_t busy;                       /* entries judged noise by the busy rule */
    double busiest[2];                 /* the largest cpu_wait of base's and new's joined rows */
};

/* Joins base and cur (they must outlive out): every base row in its order, matched with the
 * first unmatched cur row with the same key, then the cur rows left over. Returns FB_OK or
 * FB_ERR_NOMEM. Release with fb_compare_release (accepts a zeroed struct). */
fb_status fb_compare_join(const struct fb_read_results *base, const struct fb_read_results *cur,
                          double threshold, struct fb_comparison *out);
void fb_compare_release(struct fb_comparison *c);

/* The same join over pooled rows (fb_compare_pool), each pair judged by fb_compare_judge_runs. */
fb_status fb_compare_join_runs(const struct fb_read_results *base,
                               const struct fb_read_results *cur, double threshold,
                               struct fb_comparison *out);

/* Pools k runs of one side into one row per key and occurrence (the j-th row with a key in each
 * run goes with the j-th in the others): the row of the first run that has it (its line and run
 * id), in that run's order, its statistics those of the runs' medians (fb_stats_compute over
 * the finite ones: samples counts them; NAN medians when there is none). Returns FB_OK or
 * FB_ERR_NOMEM; release out with fb_results_read_release. */
fb_status fb_compare_pool(const struct fb_read_results *runs, size_t k,
                          struct fb_read_results *out);

/* One benchmark's run-to-run spread in a comparison of pooled rows: over its rows with a better
 * way (not fractions) and two runs or more on a side, the relative standard deviation of the
 * runs' medians (both sides' variances averaged), its median and 90th percentile over the rows,
 * and the runs per side that see `change` at each (fb_compare_runs_needed; -1: more than
 * FB_COMPARE_RUNS_MAX). */
struct fb_cmp_spread {
    char bench[24];
    size_t rows;
    double cv, cv_p90;
    int runs_needed, runs_needed_p90;
};

/* Fills out[0..max) with one entry per benchmark, in the comparison's order, and returns how
 * many; 0 when no entry was judged by runs (or out of memory). */
size_t fb_compare_spread(const struct fb_comparison *c, double change, struct fb_cmp_spread *out,
                         size_t max);

/* One difference between two fingerprints: a JSON path ("cuda.driver_version",
 * "ranks[0].cpus", "environment.NCCL_ALGO") and both values as text ("(absent)" when missing). */
struct fb_fp_diff {
    char path[160];
    char base[256], cur[256];
    int rank; /* the group that orders the list: 0 versions, 1 GPUs, 2 binding and layout,
                 3 environment, 4 host and build, 5 the rest */
};

/* Reads base_json and cur_json (env.json files) and lists where they differ, likely causes
 * first (the order of struct fb_fp_diff's rank, then path). *diffs is malloc'ed (free it).
 * FB_ERR_IO with a message in err when a file cannot be read, FB_ERR_USAGE when it is not
 * JSON. */
fb_status fb_compare_fingerprints(const char *base_json, const char *cur_json,
                                  struct fb_fp_diff **diffs, size_t *ndiffs, char *err,
                                  size_t errlen);

#endif

/* locate's orchestration, the fleet layer (below the command line, above the benchmarks and the
 * runner): the state of one locate and its suspects, its phases (locate_run.c, the tournament in
 * locate_pairs.c) and its outputs (locate_out.c). cli/cmd_locate.c fills struct loc's options
 * and calls fb_locate_main. */
#ifndef FB_LOCATE_RUN_H
#define FB_LOCATE_RUN_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "expect_job.h"
#include "options.h"
#include "results.h"
#include "runner.h"
#include "session.h"

/* One verdict: kind "node", "link" or "rank". */
struct loc_suspect {
    char kind[8];
    int node, peer; /* node indices; peer -1 but for a link */
    int rank;       /* a straggler's rank, else -1 */
    char bench[24], metric[24];
    double measured, typical;
    char evidence[400];
};

/* phase 1's cases, each node alone (locate_run.c), in node_fig's order: h2d, p2p and
 * all-reduce (each rank's `bandwidth`, GB/s) and the compute stand-in (its `tflops`, TFLOP/s) */
enum { LOC_NODE_CASES = 4 };
extern const char *const loc_node_cases[LOC_NODE_CASES];
extern const char *const loc_node_benches[LOC_NODE_CASES];
extern const char *const loc_node_metrics[LOC_NODE_CASES];
extern const char *const loc_node_units[LOC_NODE_CASES];

/* where a locate is */
enum loc_stage { LOC_STAGE_NODES, LOC_STAGE_PAIRS, LOC_STAGE_STRAGGLERS, LOC_STAGE_DONE };

struct loc {
    struct fb_options opt;
    double tolerance; /* percent below the typical value before a measurement is suspect */
    bool no_compute;  /* --compute off: phase 1 without its compute stand-in */
    struct fb_session s;
    struct fb_results res; /* rank 0 */
    FILE *log;             /* rank 0 */
    cJSON *env;            /* rank 0 */
    char env_path[4300];
    int nodes;
    int *lead;               /* node -> its rank nearest the NIC (local rank 0) */
    char (*name)[80];        /* node -> its label: the host, "host/nN" when hosts repeat */
    struct loc_suspect *sus; /* rank 0 */
    size_t nsus, capsus;
    double *heat;            /* rank 0: nodes x nodes, a's bandwidth with b (GB/s); NaN */
    double phase2_typical;   /* rank 0: the median pair (GB/s) */
    double *node_fig;        /* rank 0: nodes x LOC_NODE_CASES, phase 1's figure of each node
                                (its slowest rank's, in loc_node_units); NaN where none */
    double node_med[LOC_NODE_CASES];      /* rank 0: the median node's figure of each case; NaN below 3 nodes */
    struct fb_expect_job expect; /* the expected-figure model (docs/expected.md), gathered at
                                    the start; its ranks on rank 0 */
    struct fb_expect_fig *node_exp; /* rank 0: nodes x LOC_NODE_CASES, what each node's own
                                       hardware allows in each case of phase 1 (in its unit);
                                       NAN where the model says nothing */
    int full_rounds, rounds, retest_rounds;
    bool sampled;
    double round_s;          /* mean seconds per round of phase 2 */
    double phase_s[6];       /* seconds: node phase (its transfers), tournament, retests,
                                stragglers, node phase's compute stand-in (phase 1's on rank
                                0's node), rank 0's wait for the other nodes' answers */
    /* rank 0: the nodes that did not send phase 1's answer in time (hung or dead), named as
     * `node` suspects of metric "answer"; then the fleet stops after phase 1 (its pairs, links
     * and stragglers not run) */
    int unanswered;
    /* rank 0: the nodes have distinct host names but run on one kernel (containers or network
     * namespaces of one machine); on a CPU backend phase 1 then does not judge them (each
     * node's figure is its share of the same CPUs); the kernel's boot_id */
    bool one_kernel;
    char boot_id[40];
    /* the deputy: the lead of node 1 (-1 with one node). Every lead sends it phase 1's answer
     * too; when rank 0's own node does not answer in time (rank 0 cannot write then), the
     * deputy judges the others, names rank 0's node, writes the node table into the run folder
     * and stops the job. by_deputy: this table is the deputy's (l->res then holds its rows in
     * memory, l->res.dir rank 0's folder). */
    int deputy;
    bool by_deputy;
    /* how far the locate got, and (rank 0) the end state of a job stopped after phase 1
     * ("timeout", "failed", "interrupted"; "" otherwise): the node table then holds the checks
     * that finished, the others SKIP (loc_write_stopped) */
    enum loc_stage stage;
    char stopped[16];
    size_t nsus_nodes; /* rank 0: the suspects of phase 1 (the first of l->sus) */
    const int *node_of; /* rank -> node, the runner's, while it is up (for loc_write_stopped) */
};

/* Rank 0: the node table of a locate stopped after phase 1 (state: the end state, detail its
 * line): phase 1's verdicts (and the tournament's, when the job stopped in the stragglers),
 * the checks of the phases not finished SKIP. Writes once: from the watchdog's stop hook
 * (fb_run_record_also: the main thread is blocked in MPI) or from the main thread. */
void loc_write_stopped(void *l, const char *state, const char *detail);

/* Rank 0's main thread holds this while it changes what the node table shows after phase 1
 * (the tournament's cells and verdicts, the stragglers), so that loc_write_stopped, from the
 * watchdog's thread, reads it whole. */
void loc_table_lock(void);
void loc_table_unlock(void);

/* the stage's words for the node table: "phase 2 (the tournament and its retests)", ... */
const char *loc_stage_name(enum loc_stage s);

/* Rank 0: the per-rank figure (metric, src == rank) of case `kase` of benchmark `bench` in
 * rows [first, nrows) of l->res, its best trial (the largest bandwidth, the shortest time:
 * what else runs on a machine only ever slows a trial down, a slow part slows every trial);
 * NaN when absent. */
double loc_rank_figure(const struct fb_results *res, size_t first, const char *bench,
                       const char *kase, const char *metric, int rank);

/* Collective: runs benchmark b through the runner with these pairings (fb_options.pairings);
 * a benchmark waived here (too few ranks) is FB_OK. */
fb_status loc_run_bench(struct loc *l, struct fb_runner *r, const struct fb_bench *b,
                        const struct fb_pairing *p, size_t np);

/* Collective: phase 2 (locate_pairs.c): the tournament, the retests of what looked slow,
 * and their verdicts added to l->sus on rank 0; the heat map's cells in l->heat. */
fb_status loc_phase_pairs(struct loc *l, struct fb_runner *r);

/* Rank 0: appends a suspect; false when out of memory. */
bool loc_suspect_add(struct loc *l, const struct loc_suspect *s);

/* Rank 0: one terminal line per suspect (or the all-clear), suspects.csv, locate.md and the
 * heat map locate-heat.png/.svg in the run folder. FB_OK, or FB_ERR_IO with a line printed. */
fb_status loc_write_outputs(struct loc *l);

/* Collective, between fb_world_start and fb_world_finish: the whole locate over l->opt and
 * l->tolerance (set by the command): the session, the run folder, every phase, the outputs.
 * The exit code: 0 no suspect, 1 a suspect, else fb_status_exit_code's. */
int fb_locate_main(struct loc *l);

/* Frees l (calloc'ed by the command) and what fb_locate_main kept in it; accepts NULL. */
void fb_locate_free(struct loc *l);

#endif

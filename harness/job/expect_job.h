/* The expected-figure model for one job (docs/expected.md): each rank reads its own node's
 * description (expect/, sysfs under $FB_SYSFS_ROOT) and takes its figures: toward other nodes
 * (its NIC, the one the job's transport is told to use where it is told) and for its GPU's
 * copies (its PCIe link); rank 0 gathers them and fills every row's `expected` and `bound`
 * through results' annotate hook. */
#ifndef FB_EXPECT_JOB_H
#define FB_EXPECT_JOB_H

#include "expect.h"
#include "results.h"
#include "session.h"

/* One rank's figures. Fixed size: it travels between ranks as bytes. */
struct fb_expect_rank {
    int node;                  /* the world's node index */
    char host[64];
    struct fb_expect_fig net;  /* toward other nodes: its NIC's payload rate */
    struct fb_expect_fig h2d;  /* its GPU's host-device copies: its PCIe link */
    struct fb_expect_fig rails;/* its node's NICs the node's ranks spread over (one a rank) */
    struct fb_expect_gpu gpu;  /* its GPU's links (gpu.bus "" when it has none known) */
};

/* One rank's memcpy calibration on a CPU backend (fb_expect_job_calibrate). */
struct fb_expect_copy {
    struct fb_expect_fig alone; /* this rank copying while the others wait */
    struct fb_expect_fig all;   /* every rank of the job copying at once */
};

struct fb_expect_job {
    int size, nodes;
    struct fb_expect_node me;      /* this rank's node, as read */
    char only[256];                /* the ports the job's transport is told to use; "" */
    char only_from[64];            /* which variable said so */
    struct fb_expect_rank *ranks;  /* rank 0: every rank's (size of them); NULL elsewhere */
    struct fb_expect_node *descs;  /* rank 0, after fb_expect_job_gather_nodes: every rank's
                                      node as it read it (note: what it lacks); NULL else */
    bool hosts_distinct;           /* rank 0: no two ranks share a host */
    struct fb_expect_fig nccl;     /* rank 0: an NCCL collective's busbw over every rank, several
                                      a node (NAN where a rank has no GPU) */
    struct fb_expect_copy *copies; /* rank 0, after fb_expect_job_calibrate: every rank's */
    size_t copy_bytes;             /* the smallest h2d row judged by the calibration (twice the
                                      cache or more); 0 when none ran */
};

/* Smallest message the model judges: below it, latency is a share of the time the asymptotic
 * rate does not hold (1 MiB; docs/expected.md). */
enum { FB_EXPECT_MIN_BYTES = 1 << 20 };

/* The site's efficiencies: the file $FB_EXPECT_EFFICIENCY names, when set (fb_expect_eff_load),
 * and the NVML facts file $FB_NVML_FACTS names, when set, checked (fb_expect_nvml_load) on
 * this node's GPUs as sysfs lists them (what fb_expect_job_gather loads it onto).
 * Collective over MPI_COMM_WORLD, before anything is created: every rank reads them on its own
 * node and the ranks agree, so that a file one node lacks stops every rank; then every rank
 * returns FB_ERR_USAGE (FB_ERR_NOMEM where its own check ran out) and, with `say` (rank 0),
 * says the lowest failing rank's line, named by rank and host when it is not this one. */
fb_status fb_expect_job_site(bool say);

/* Collective over the session's world. Reads this rank's node and gathers every rank's figures
 * on rank 0. FB_ERR_MPI, FB_ERR_NOMEM. */
fb_status fb_expect_job_gather(const struct fb_session *s, struct fb_expect_job *j);

/* Collective, after fb_expect_job_gather: every rank's node description to rank 0 (j->descs),
 * for `expect`'s listing (about 6 KB a rank: run does not gather them). FB_ERR_MPI,
 * FB_ERR_NOMEM. */
fb_status fb_expect_job_gather_nodes(const struct fb_session *s, struct fb_expect_job *j);

/* Collective, on a CPU backend (nothing on a GPU one): the host backend's copies are memcpy, so
 * the model calibrates memcpy on this machine: each rank alone (ranks of one node in turn, nodes
 * at once), then every rank at once, 5 copies each of a size past the job's last-level cache.
 * `whole` (run, whose h2d copies that size): the size of the rows it judges (twice the cache,
 * rounded up to a power of two, 64 MiB at least), which h2d's copies of that size then reuse.
 * Otherwise (expect) 64 MiB: with a cache over 32 MiB, partly the cache's figures, which it
 * says. Both in buffers of the backend's own allocator, h2d's kind of memory. A cache not known, or
 * buffers that would take over a quarter of a node's memory, run none and say why. rank 0 says
 * what it ran and gets every rank's figures; j->copy_bytes is the smallest row size judged.
 * FB_ERR_MPI, FB_ERR_NOMEM (buffers it could not have: none then, said). */
fb_status fb_expect_job_calibrate(const struct fb_session *s, struct fb_expect_job *j,
                                  bool whole);

/* The smallest h2d row the calibration would judge on a job whose largest last-level cache is
 * llc_bytes (twice it, rounded up to a power of two, 64 MiB at least); 0 when none would run
 * (the cache not known). A run whose h2d copies nothing that large calibrates nothing. */
size_t fb_expect_job_copy_from(unsigned long long llc_bytes);

/* The results hook (fb_results.annotate, ctx a struct fb_expect_job on rank 0): fills the row's
 * `expected` and `bound` where the model has a figure:
 *  - p2p one-way bandwidth (matrix_uni, sweep_uni) between two ranks on different hosts, at
 *    FB_EXPECT_MIN_BYTES or more: the slower of their NICs;
 *  - a collective's busbw with one rank per node, at FB_EXPECT_MIN_BYTES or more: the ring's
 *    slowest hop, the slowest NIC of the job;
 *  - p2p one-way bandwidth over IPC between two ranks' GPUs of one host: their NVLinks or the
 *    PCIe path between them (fb_expect_gpu_pair);
 *  - on a CPU backend, after fb_expect_job_calibrate, h2d's bandwidth rows of the calibration's
 *    size and more: one rank alone, its memcpy alone; every rank at once, its memcpy at once;
 *  - an NCCL collective's busbw over every rank, each with a GPU: one node, the ring over its
 *    GPUs (fb_expect_node_ring); several nodes, as many ranks on each as the job has, the
 *    slowest of every node's ring and every node's NICs (its rails: fb_expect_ring_nodes);
 *  - h2d pinned bandwidth of one rank's GPU on `cuda`: alone, its PCIe link; all ranks at once,
 *    the smaller of that and its share of the uplink it shares with the ranks' GPUs behind the
 *    same root port of its host (a PCIe switch's: the C4140 K's four GPUs on one x16 link);
 *    the all-at-once `bandwidth_total`, the sum of every rank's;
 * Other rows are left as they are. */
void fb_expect_job_annotate(void *ctx, struct fb_row *row);

/* What one node should reach measuring itself alone, every rank of it at once (locate's phase
 * 1): NAN where the model has nothing honest to say. */
struct fb_expect_alone {
    struct fb_expect_fig h2d;       /* its slowest GPU's host-device copies, each GPU its share of
                                       an uplink it shares with the node's others */
    struct fb_expect_fig allreduce; /* an NCCL all-reduce over its ranks: the ring over their
                                       GPUs (MPI on GPU or host memory: none) */
    struct fb_expect_fig compute;   /* its slowest GPU's peak for the precision: shown, never
                                       judged (fb_row_expected_judged's reason) */
};

/* Rank 0, after fb_expect_job_gather: node `node`'s (the world's node index) figures for
 * messages of `bytes` (below FB_EXPECT_MIN_BYTES: no copy or ring figure), the ring only when
 * `nccl`, the peak at the precision that ends `compute_transport` ("cudnn-fp16": fp16; NULL or
 * "": none). Every figure needs each of the node's ranks on a GPU the model knows. */
void fb_expect_job_node_alone(const struct fb_expect_job *j, int node, size_t bytes, bool nccl,
                              const char *compute_transport, struct fb_expect_alone *out);

/* Rank 0: one line for the run's log: the slowest NIC between nodes and how many GPUs have a
 * PCIe figure, or what the model could not read. */
void fb_expect_job_say(const struct fb_expect_job *j);

void fb_expect_job_release(struct fb_expect_job *j);

#endif

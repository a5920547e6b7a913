/* The MPI job as fabricbench sees it: ranks, nodes, and which rank is which on its node.
 * Node membership comes from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), never from one
 * launcher's environment variables, so mpirun, srun and any PMIx launcher agree. */
#ifndef FB_WORLD_H
#define FB_WORLD_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "status.h"

struct fb_world {
    MPI_Comm comm;      /* a duplicate of MPI_COMM_WORLD, owned */
    MPI_Comm node_comm; /* the ranks sharing this node's memory, owned */
    int rank, size;
    int local_rank, local_size;
    int node;  /* index of this rank's node, 0..nodes-1, ordered by lowest world rank */
    int nodes; /* number of nodes in the job */
    char host[64];
    char (*hosts)[64]; /* every rank's host name, gathered once by fb_world_init, owned */
    MPI_Comm view_comm; /* the watchdog's channel to rank 0 (fb_watchdog_share_view), owned;
                           MPI_COMM_NULL below MPI_THREAD_MULTIPLE */
};

/* Starts MPI for `run` and `doctor` alike, so that doctor checks the MPI that run uses: arms
 * the watchdog (fb_watchdog_start: `command` in its messages, `timeout_s` per phase) before
 * MPI_Init, asks for the thread level `required`, and makes errors on MPI_COMM_WORLD return
 * instead of aborting. *provided gets the thread level MPI gives (it may be lower). run asks
 * for what its benchmarks need (--mpi-thread; cmd_run.c says why, and what each level costs);
 * doctor asks for MPI_THREAD_SERIALIZED, the most a run asks for; locate for
 * MPI_THREAD_MULTIPLE, where fb_world_init gives the watchdog its view (fb_watchdog_share_view).
 * Call once, first thing. */
void fb_world_start(int *argc, char ***argv, const char *command, double timeout_s,
                    int required, int *provided);

/* "single", "funneled", "serialized" or "multiple": an MPI_THREAD_* level by its name. */
const char *fb_mpi_thread_name(int level);

/* Ends what fb_world_start began: MPI_Finalize, with the watchdog's last phase around it, then
 * the watchdog. Returns the process's exit code: `rc`, or FB_EXIT_INTERRUPTED when SIGINT or
 * SIGTERM came and rc said success (0) or failure (1). Free MPI objects (fb_mpi_half_free)
 * before. */
int fb_world_finish(int rc);

/* Collective over MPI_COMM_WORLD: fills *w. MPI must be initialised. */
fb_status fb_world_init(struct fb_world *w);
void fb_world_release(struct fb_world *w);

/* Collective: every rank passes its status and all return the worst one, so all ranks take the
 * same branch after a phase. Worst is the highest severity (fb_status_severity, status.h), then
 * the later code, then the lowest rank: one MPI_Allreduce of (severity x 256 + code, rank) with
 * MPI_MAXLOC. A signal
 * (SIGINT/SIGTERM) counts as FB_ERR_INTERRUPTED. *rank (may be NULL) gets the rank that reported
 * the winner, -1 when every rank passed FB_OK. */
fb_status fb_world_agree_who(const struct fb_world *w, fb_status mine, int *rank);

/* fb_world_agree_who without the rank. The first agreed failure (a severity above
 * FB_SEV_WAIVED) of the process is kept for fb_world_culprit. */
fb_status fb_world_agree(const struct fb_world *w, fb_status mine);

/* Collective: whether `mine` holds on every rank. When it does not, *first (may be NULL) gets
 * the lowest rank where it does not and why (len bytes, the same len on every rank) that
 * rank's reason, as it wrote it there; otherwise *first is -1 and why is left alone. For a
 * choice each rank could make alone from what it sees (NCCL loaded or not): one rank that
 * decides otherwise runs another protocol than the rest and the job hangs. */
bool fb_world_all(const struct fb_world *w, bool mine, char *why, size_t len, int *first);

/* The first failure the ranks agreed on (fb_world_agree), the rank that reported it and its
 * host into *st, *rank, host (len bytes): false when none yet. Not collective. */
bool fb_world_culprit(const struct fb_world *w, fb_status *st, int *rank, char *host,
                      size_t len);

/* Restates the first failure as this rank's world knows it: a command whose ranks agreed over
 * a communicator of their own (locate's phase 1, each node alone, whose ranks are the node's)
 * hands rank 0 the failure and the job's rank that reported it. Not collective. */
void fb_world_culprit_set(fb_status st, int rank);

/* What stopped a command, for its last error line and env.json, into buf (len bytes): "rank R
 * on HOST: WHY" from the first failure the ranks agreed on (fb_world_culprit), or st's text
 * alone for an interruption or where no rank is known. Every command names a failure so (run,
 * soak, locate). Not collective; returns buf. */
const char *fb_world_stop_reason(const struct fb_world *w, fb_status st, char *buf, size_t len);

/* Rank r's host name ("?" for a rank outside the job). */
const char *fb_world_host_of(const struct fb_world *w, int r);

/* Collective barrier over `comm`: a one-int all-reduce (bitwise or) of this rank's interrupt
 * flag, so it returns FB_ERR_INTERRUPTED on every rank when any was signalled (SIGINT/SIGTERM),
 * and the runner can stop between trials. Every rank enters the non-blocking form: a quiet rank
 * tests it and sleeps in between (20 us growing to 2 ms), so a rank that sits out a measurement
 * takes no processor time from the ranks that measure; the others poll it for 2 ms, then nap
 * up to 200 us. */
fb_status fb_world_barrier(MPI_Comm comm, bool quiet);

/* fb_world_barrier that also carries whether this rank has failed: *any_failed is true on every
 * rank when one passed failed = true, so all ranks leave a loop of collective calls at the same
 * barrier and none waits in a call that a failed rank will never make (the failure itself is
 * agreed after, with fb_world_agree, which names it and its rank). The same one-int all-reduce
 * (bitwise or of the interrupt and failure flags). */
fb_status fb_world_barrier_failed(MPI_Comm comm, bool quiet, bool failed, bool *any_failed);

/* fb_world_barrier_failed before a timing starts: then, on the measuring ranks (not quiet), a
 * second round over `timed`, their own communicator (MPI_COMM_NULL: none), which each reaches
 * within a nap of the others, so that they leave it together, polling, even when one of them
 * napped waiting in the first (docs/methodology.md: both ways at once over Open MPI's TCP
 * transport took turns when released a nap apart). */
fb_status fb_world_barrier_start(MPI_Comm comm, MPI_Comm timed, bool quiet, bool failed,
                                 bool *any_failed);

/* Number of distinct nodes among the ranks whose flag is non-zero; node_of[r] is rank r's node. */
int fb_world_count_nodes(const int *node_of, const int *flag, int nranks);

#endif

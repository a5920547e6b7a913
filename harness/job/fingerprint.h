/* The run's environment fingerprint: what each rank saw (host, binding, GPU, locality) and what
 * the job ran on (versions of CUDA, NCCL, MPI, hwloc; InfiniBand ports; launcher variables),
 * as one JSON object that `run` stores beside its results and `doctor` prints. A result without
 * its fingerprint cannot be compared with another. */
#ifndef FB_FINGERPRINT_H
#define FB_FINGERPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "session.h"
#include "status.h"
#include "topo.h"
#include "verdict.h"

enum { FB_CPULIST_LEN = 512, FB_NUMALIST_LEN = 64 };

/* What one rank saw, measured on that rank with its own node's topology. Plain fixed-size data:
 * gathered as MPI_BYTE, so every rank must run the same binary. Strings are always
 * NUL-terminated; "" means unknown or not applicable. */
struct fb_rank_facts {
    int rank, local_rank, node;
    char host[64];
    char cpus[FB_CPULIST_LEN];     /* CPU binding as a list ("0-19,40-59") */
    bool bound;                    /* narrower than the CPUs the machine allows */
    char cpu_numa[FB_NUMALIST_LEN]; /* NUMA nodes of those CPUs (OS indexes) */

    bool cuda_built;               /* this binary has the CUDA backend */
    int visible_gpus;              /* GPUs this rank can see */
    char no_gpu_why[160];          /* why none, when visible_gpus == 0 */
    int gpu_index;                 /* device ordinal this rank drives, -1 for none */
    char gpu_name[128];
    char gpu_busid[32];            /* "0000:3b:00.0" */
    char gpu_numa[FB_NUMALIST_LEN]; /* NUMA nodes local to the GPU */
    char gpu_cpus[FB_CPULIST_LEN]; /* CPUs local to the GPU */
    uint64_t gpu_mem_bytes;

    enum fb_verdict binding;       /* fb_topo_binding_verdict on this rank; SKIP without a GPU */
    char binding_why[256];

    bool mpi_cuda_aware;           /* fb_mpi_cuda_aware on this rank */
    char mpi_cuda_aware_why[128];
};

/* Fills *mine from the open session and this node's topology (topo may be NULL when it could
 * not be loaded: binding and locality are then ""). Not collective; never fails for want of a
 * fact (an unknown is recorded as ""), so it returns FB_OK unless an argument is wrong. */
fb_status fb_facts_collect(const struct fb_session *s, struct fb_topo *topo,
                           struct fb_rank_facts *mine);

/* Collective over the session's ranks: gathers every rank's facts to rank 0. On rank 0 *all is
 * a malloc'ed array of world.size facts, ordered by rank (free() it); NULL on other ranks. All
 * ranks return the same status (FB_ERR_NOMEM when rank 0 cannot allocate, FB_ERR_MPI). */
fb_status fb_facts_gather(const struct fb_session *s, const struct fb_rank_facts *mine,
                          struct fb_rank_facts **all);

/* Whether two ranks drive the same physical GPU: the same node and PCI bus id (compared without
 * regard to case), or the same ordinal when a backend gave no bus id. False when either has no
 * GPU. Ordinals alone would mislead: CUDA_VISIBLE_DEVICES renumbers devices per rank. */
bool fb_facts_same_gpu(const struct fb_rank_facts *a, const struct fb_rank_facts *b);

/* Builds the fingerprint object from rank 0's view: this host (via `topo`, may be NULL), the
 * session, every rank's facts (`all`, world.size of them), versions, the InfiniBand ports of
 * this host and the launcher environment. `run_status` is a free word ("ok", "failed",
 * "doctor"). Not collective: call it on rank 0 only. Returns a new object owned by the caller
 * (cJSON_Delete), NULL when out of memory. */
cJSON *fb_fingerprint_json(const struct fb_session *s, struct fb_topo *topo,
                           const struct fb_rank_facts *all, const char *run_status);

/* "13.0" from a CUDA version integer (13000), "none" for 0. */
void fb_cuda_version_str(int version, char *buf, size_t len);

/* "2.28.9" from NCCL_VERSION_CODE (22809; before 2.9 the code was 2408 for 2.4.8), "not built"
 * for 0. */
void fb_nccl_version_str(int code, char *buf, size_t len);

#endif

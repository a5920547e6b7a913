/* What one rank saw of its machine (host, binding, GPU and its locality, MPI's CUDA support):
 * plain fixed-size data, collected and gathered by the fingerprint (job/fingerprint.h), written
 * into env.json, read back by `accept`, and judged by the doctor's checks. No MPI here. */
#ifndef FB_FACTS_H
#define FB_FACTS_H

#include <stdbool.h>
#include <stdint.h>

#include "ib.h"
#include "verdict.h"

enum { FB_CPULIST_LEN = 512, FB_NUMALIST_LEN = 64 };

/* The InfiniBand ports a node's facts keep: the first FB_FACTS_PORTS of fb_ib_ports(). */
enum { FB_FACTS_PORTS = 16 };

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

    /* The node's own facts, read by its local rank 0 alone (node_read true there), so that
     * env.json holds every node's InfiniBand ports, not only rank 0's host's. */
    bool node_read;
    int nports;                    /* ports this node has (may exceed FB_FACTS_PORTS); -1 when
                                      they could not be read (ib_why says why) */
    struct fb_ib_port ports[FB_FACTS_PORTS];
    char ib_why[96];               /* "" or why the ports are not known */
};

/* Whether two ranks drive the same physical GPU: the same node and PCI bus id (compared without
 * regard to case), or the same ordinal when a backend gave no bus id. False when either has no
 * GPU. Ordinals alone would mislead: CUDA_VISIBLE_DEVICES renumbers devices per rank. */
bool fb_facts_same_gpu(const struct fb_rank_facts *a, const struct fb_rank_facts *b);

/* The launcher that started this process, from its environment: "mpirun" (Open MPI 4's ORTE:
 * OMPI_MCA_orte_hnp_uri; Open MPI 5's PRRTE, whose mpirun/prterun marks every process it starts
 * with PRTE_LAUNCHED), else "srun" (Slurm's step: SLURM_STEP_ID, as srun --mpi=pmix sets it;
 * mpirun inside an allocation sets its own variable too, so it wins), else "" (a singleton or
 * another launcher). */
const char *fb_facts_launcher(void);

#endif

/* The checks `fabricbench doctor` runs: the field's advice for GPU training fabrics (one rank
 * per GPU, each rank bound to its GPU's socket, CUDA-aware MPI, InfiniBand up) judged over the
 * facts every rank gathered. Pure: no MPI, no hardware, so tests feed constructed facts. */
#ifndef FB_DOCTOR_H
#define FB_DOCTOR_H

#include <stddef.h>

#include <stdbool.h>

#include "facts.h"
#include "ib.h"
#include "verdict.h"

/* What the doctor judges a job by, besides its ranks' facts: the choices the session made (plain
 * data, so `accept` judges a run folder's env.json the same way, without MPI). */
struct fb_doctor_job {
    const char *backend;  /* the device backend's name: "cuda", "host" */
    const char *coll;     /* the collectives' name ("nccl", "mpi"), NULL when unknown */
    bool oversubscribed;  /* some node has more ranks than GPUs */
    const char *launcher; /* "srun" or "mpirun" (fb_facts_launcher); NULL or "": unknown, and
                             the fixes say mpirun's options */
};

struct fb_check {
    char name[48];   /* "binding" */
    enum fb_verdict verdict;
    char why[256];   /* one line: what was seen */
    char fix[256];   /* one line: what to do, "" when nothing is to be done */
};

/* The most checks fb_doctor_checks produces; an `out` this long always holds them all. */
enum { FB_DOCTOR_MAX_CHECKS = 8 };

/* Judges the job: `job` says which backend and collectives were chosen and whether a node is
 * oversubscribed; `all` holds nranks facts as fb_fingerprint_gather returns them; `ports` are the
 * InfiniBand ports of the host being judged (may be NULL when nports == 0). Writes up to `max`
 * checks, in this order: gpu_build, gpu_visible, one_rank_per_gpu, binding, mpi_cuda_aware,
 * infiniband. Returns how many were written. Not collective. */
size_t fb_doctor_checks(const struct fb_doctor_job *job, const struct fb_rank_facts *all,
                        int nranks, const struct fb_ib_port *ports, size_t nports,
                        struct fb_check *out, size_t max);

/* The infiniband check alone, for one host's ports: PASS when every device has an ACTIVE port,
 * WARN when none exists (traffic between nodes goes over TCP) or when some devices are up and
 * others not, FAIL when devices exist and none has an ACTIVE port. */
void fb_doctor_infiniband(const struct fb_ib_port *ports, size_t nports, struct fb_check *out);

/* The worst verdict among n checks (SKIP when n == 0). */
enum fb_verdict fb_doctor_worst(const struct fb_check *checks, size_t n);

#endif

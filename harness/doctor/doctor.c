/* doctor's checks over gathered facts: each turns what the ranks saw into PASS/WARN/FAIL, one
 * line of why and one line of fix. No MPI and no hardware here (only hwloc's bitmap parser), so
 * every rule is unit-tested with constructed facts. */
#define _GNU_SOURCE
#include "doctor.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <hwloc.h>

#include "log.h"

static void check_set(struct fb_check *c, const char *name, enum fb_verdict v, const char *fix,
                      const char *fmt, ...) FB_PRINTF(5, 6);

static void check_set(struct fb_check *c, const char *name, enum fb_verdict v, const char *fix,
                      const char *fmt, ...)
{
    va_list ap;

    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->verdict = v;
    snprintf(c->fix, sizeof c->fix, "%s", fix ? fix : "");
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
}

static void check_gpu_build(const struct fb_rank_facts *all, int n, struct fb_check *c)
{
    bool built = true;

    /* Every rank runs the same binary, but a mixed install is exactly what doctor is for. */
    for (int r = 0; r < n; r++)
        built = built && all[r].cuda_built;
    if (built)
        check_set(c, "gpu_build", FB_PASS, NULL, "the CUDA backend is built into this binary");
    else
        check_set(c, "gpu_build", FB_WARN,
                  "rebuild on a machine with the CUDA toolkit: cmake -DFB_WITH_CUDA=ON",
                  "this fabricbench was built without CUDA: only the host backend can run");
}

static void check_gpu_visible(const struct fb_rank_facts *all, int n, struct fb_check *c)
{
    int lo = -1, hi = 0, blind = -1, nblind = 0;

    for (int r = 0; r < n; r++) {
        int v = all[r].visible_gpus;
        if (lo < 0 || v < lo)
            lo = v;
        if (v > hi)
            hi = v;
        if (v <= 0 && nblind++ == 0)
            blind = r;
    }
    if (blind < 0) {
        if (lo == hi)
            check_set(c, "gpu_visible", FB_PASS, NULL, "every rank sees %d GPU(s)", lo);
        else
            check_set(c, "gpu_visible", FB_PASS, NULL, "every rank sees %d to %d GPUs", lo, hi);
        return;
    }
    const struct fb_rank_facts *f = &all[blind];
    const char *fix = f->cuda_built ? "check the driver with nvidia-smi where no GPU is seen, "
                                      "and CUDA_VISIBLE_DEVICES"
                                    : "";
    if (nblind == n)
        check_set(c, "gpu_visible", FB_WARN, fix, "no GPU visible: %s",
                  f->no_gpu_why[0] ? f->no_gpu_why : "no reason given");
    else
        check_set(c, "gpu_visible", FB_WARN, fix, "rank %d on %s sees no GPU (%d of %d ranks): %s",
                  f->rank, f->host, nblind, n, f->no_gpu_why[0] ? f->no_gpu_why : "no reason given");
}

static bool srun(const struct fb_doctor_job *job)
{
    return job->launcher && strcmp(job->launcher, "srun") == 0;
}

static void check_one_per_gpu(const struct fb_doctor_job *job, const struct fb_rank_facts *all,
                              int n, struct fb_check *c)
{
    const char *fix = srun(job) ? "launch one rank per GPU on each node (srun --ntasks-per-node="
                                  "<GPUs per node> --gpus-per-task=1 --gpu-bind=closest ...)"
                                : "launch one rank per GPU on each node (mpirun -np <nodes x "
                                  "GPUs> --map-by ppr:<GPUs per node>:node ...)";

    if (strcmp(job->backend, "cuda") != 0) {
        check_set(c, "one_rank_per_gpu", FB_WARN, NULL, "no GPU: ranks use host memory");
        return;
    }
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (fb_facts_same_gpu(&all[a], &all[b])) {
                check_set(c, "one_rank_per_gpu", FB_FAIL, fix,
                          "ranks %d and %d on %s both drive GPU %d (%s): they halve each other's "
                          "bandwidth, and NCCL refuses them",
                          all[a].rank, all[b].rank, all[a].host, all[a].gpu_index,
                          all[a].gpu_busid[0] ? all[a].gpu_busid : "no bus id");
                return;
            }
    if (job->oversubscribed) {
        check_set(c, "one_rank_per_gpu", FB_FAIL, fix, "a node runs more ranks than it has GPUs");
        return;
    }
    check_set(c, "one_rank_per_gpu", FB_PASS, NULL, "each of the %d rank(s) drives its own GPU", n);
}

static void check_binding_gpu(const struct fb_doctor_job *job, const struct fb_rank_facts *all,
                              int n, struct fb_check *c)
{
    enum fb_verdict worst = FB_SKIP;
    int first = -1, count = 0;
    char fix[256];

    for (int r = 0; r < n; r++)
        worst = fb_verdict_worst(worst, all[r].binding);
    for (int r = 0; r < n; r++)
        if (all[r].binding == worst && count++ == 0)
            first = r;
    if (first < 0) {
        check_set(c, "binding", FB_SKIP, NULL, "no rank to judge");
        return;
    }
    const struct fb_rank_facts *f = &all[first];
    switch (worst) {
    case FB_PASS:
        check_set(c, "binding", FB_PASS, NULL,
                  "every rank runs on CPUs local to its GPU (rank %d: %.180s)", f->rank,
                  f->binding_why);
        break;
    case FB_SKIP:
        check_set(c, "binding", FB_SKIP, NULL, "rank %d on %s: %.200s", f->rank, f->host,
                  f->binding_why);
        break;
    default:
        if (srun(job))
            snprintf(fix, sizeof fix,
                     "bind each rank to its GPU's socket (rank %d: NUMA node %s): srun "
                     "--ntasks-per-node=<GPUs per node> --cpu-bind=socket --gpu-bind=closest "
                     "..., or fabricbench run --self-bind",
                     f->rank, f->gpu_numa[0] ? f->gpu_numa : "?");
        else
            snprintf(fix, sizeof fix,
                     "bind each rank to its GPU's socket (rank %d: NUMA node %s): mpirun "
                     "--map-by ppr:<GPUs per socket>:socket --bind-to socket ..., or "
                     "fabricbench run --self-bind",
                     f->rank, f->gpu_numa[0] ? f->gpu_numa : "?");
        if (count > 1)
            check_set(c, "binding", worst, fix, "rank %d on %s (and %d more): %.180s", f->rank,
                      f->host, count - 1, f->binding_why);
        else
            check_set(c, "binding", worst, fix, "rank %d on %s: %.200s", f->rank, f->host,
                      f->binding_why);
        break;
    }
}

/* Without a GPU the advice is the CPU half of it: every rank pinned, and no two ranks of a node
 * fighting over the same CPUs (which would halve both ranks' memcpy and MPI figures). */
static void check_binding_host(const struct fb_doctor_job *job, const struct fb_rank_facts *all,
                               int n, struct fb_check *c)
{
    hwloc_bitmap_t a = NULL, b = NULL, both = NULL;
    int loose = -1, nloose = 0;
    char shared[128];

    for (int r = 0; r < n; r++)
        if (!all[r].bound && nloose++ == 0)
            loose = r;
    if (loose >= 0) {
        const struct fb_rank_facts *f = &all[loose];
        check_set(c, "binding", FB_WARN,
                  srun(job) ? "srun --cpu-bind=cores ... (no GPU: no socket is nearer; each "
                              "rank its own core)"
                            : "mpirun --map-by core --bind-to core ... (no GPU: no socket is "
                              "nearer; each rank its own core)",
                  "rank %d on %s is not bound to CPUs (%s)%s: the OS may move it between "
                  "sockets mid-run",
                  f->rank, f->host, f->cpus[0] ? f->cpus : "binding unknown",
                  nloose > 1 ? ", nor are others" : "");
        return;
    }
    if (!(a = hwloc_bitmap_alloc()) || !(b = hwloc_bitmap_alloc()) ||
        !(both = hwloc_bitmap_alloc())) {
        check_set(c, "binding", FB_SKIP, NULL, "out of memory while comparing bindings");
        goto out;
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (all[i].node != all[j].node || hwloc_bitmap_list_sscanf(a, all[i].cpus) != 0 ||
                hwloc_bitmap_list_sscanf(b, all[j].cpus) != 0)
                continue;
            hwloc_bitmap_and(both, a, b);
            if (hwloc_bitmap_iszero(both))
                continue;
            hwloc_bitmap_list_snprintf(shared, sizeof shared, both);
            check_set(c, "binding", FB_WARN,
                      srun(job) ? "srun --cpu-bind=cores ... gives each rank a core of its own"
                                : "mpirun --map-by core --bind-to core ... gives each rank a "
                                  "core of its own",
                      "ranks %d and %d on %s share CPUs %s: they compete for the same cores",
                      all[i].rank, all[j].rank, all[i].host, shared);
            goto out;
        }
    check_set(c, "binding", FB_PASS, NULL, "every rank is bound to CPUs of its own (rank %d: %s)",
              all[0].rank, all[0].cpus);
out:
    hwloc_bitmap_free(a);
    hwloc_bitmap_free(b);
    hwloc_bitmap_free(both);
}

static void check_cuda_aware(const struct fb_doctor_job *job, const struct fb_rank_facts *all,
                             int n, struct fb_check *c)
{
    for (int r = 0; r < n; r++) {
        if (all[r].mpi_cuda_aware)
            continue;
        check_set(c, "mpi_cuda_aware", FB_WARN,
                  "use an MPI built with CUDA (ompi_info --parsable --all | grep "
                  "mpi_built_with_cuda_support), or --coll nccl",
                  "%.150s: device buffers are staged through host memory%s",
                  all[r].mpi_cuda_aware_why[0] ? all[r].mpi_cuda_aware_why : "MPI is not CUDA-aware",
                  job->coll && strcmp(job->coll, "nccl") == 0 ? " (nccl collectives do not need it)"
                                                                : "");
        return;
    }
    check_set(c, "mpi_cuda_aware", FB_PASS, NULL, "MPI accepts device pointers: %.200s",
              all[0].mpi_cuda_aware_why);
}

static bool port_active(const struct fb_ib_port *p) { return strcmp(p->state, "ACTIVE") == 0; }

static bool device_active(const struct fb_ib_port *ports, size_t n, const char *device)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(ports[i].device, device) == 0 && port_active(&ports[i]))
            return true;
    return false;
}

static const char *ib_fix(const struct fb_ib_port *p)
{
    if (strcmp(p->state, "NO_ACCESS") == 0)
        return "give the process /dev/infiniband (containers: --device=/dev/infiniband) and "
               "check ibv_devinfo";
    if (strcmp(p->state, "INIT") == 0 || strcmp(p->state, "ARMED") == 0)
        return "the link is up but not active: start a subnet manager (opensm) or check the "
               "fabric's; see ibstat";
    return "check the cable and the switch port, then ibstat / ibv_devinfo";
}

void fb_doctor_infiniband(const struct fb_ib_port *ports, size_t nports, struct fb_check *c)
{
    const struct fb_ib_port *up = NULL, *dead = NULL;
    int nup = 0;

    if (nports == 0 || !ports) {
        if (fb_ib_built())
            check_set(c, "infiniband", FB_WARN,
                      "if this host has an HCA, check its driver with ibv_devinfo (rdma-core)",
                      "no InfiniBand device: multi-node traffic will use TCP sockets");
        else
            check_set(c, "infiniband", FB_WARN,
                      "rebuild with libibverbs (apt-get install libibverbs-dev) to see HCAs",
                      "no InfiniBand device: multi-node traffic will use TCP sockets (this "
                      "fabricbench was built without libibverbs, so it cannot look)");
        return;
    }
    for (size_t i = 0; i < nports; i++) {
        if (port_active(&ports[i])) {
            if (nup++ == 0)
                up = &ports[i];
        } else if (!dead && !device_active(ports, nports, ports[i].device)) {
            dead = &ports[i];
        }
    }
    if (!up) {
        check_set(c, "infiniband", FB_FAIL, ib_fix(dead),
                  "no ACTIVE InfiniBand port: %s port %d is %s (%zu port(s) seen)", dead->device,
                  dead->port, dead->state, nports);
    } else if (dead) {
        check_set(c, "infiniband", FB_WARN, ib_fix(dead),
                  "%s has no ACTIVE port (port %d %s); %s port %d is ACTIVE", dead->device,
                  dead->port, dead->state, up->device, up->port);
    } else {
        check_set(c, "infiniband", FB_PASS, NULL,
                  "%s port %d ACTIVE, %s %dx %s (%.1f Gb/s signalling)%s", up->device, up->port,
                  up->link_layer, up->width, up->speed, up->rate_gbps,
                  nup > 1 ? ", and more ports ACTIVE" : "");
    }
}

size_t fb_doctor_checks(const struct fb_doctor_job *job, const struct fb_rank_facts *all,
                        int nranks, const struct fb_ib_port *ports, size_t nports,
                        struct fb_check *out, size_t max)
{
    struct fb_check c[FB_DOCTOR_MAX_CHECKS];
    size_t n = 0;

    if (!job || !job->backend || !all || nranks <= 0 || !out)
        return 0;
    check_gpu_build(all, nranks, &c[n++]);
    check_gpu_visible(all, nranks, &c[n++]);
    check_one_per_gpu(job, all, nranks, &c[n++]);
    if (strcmp(job->backend, "cuda") == 0)
        check_binding_gpu(job, all, nranks, &c[n++]);
    else
        check_binding_host(job, all, nranks, &c[n++]);
    check_cuda_aware(job, all, nranks, &c[n++]);
    fb_doctor_infiniband(ports, nports, &c[n++]);
    if (n > max)
        n = max;
    memcpy(out, c, n * sizeof *c);
    return n;
}

enum fb_verdict fb_doctor_worst(const struct fb_check *checks, size_t n)
{
    enum fb_verdict v = FB_SKIP;

    for (size_t i = 0; i < n; i++)
        v = fb_verdict_worst(v, checks[i].verdict);
    return v;
}

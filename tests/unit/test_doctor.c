/* doctor's rules over constructed facts: two ranks on one GPU fail, a wrong-socket rank fails
 * the binding check, host ranks sharing CPUs warn, an HCA with no active port fails, and so on.
 * Also the version strings the fingerprint prints. No MPI, no hardware. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "facts.h"
#include "test.h"
#include "versions.h"


#define CHECK_VERDICT(c, want)                                                             \
    do {                                                                                   \
        const struct fb_check *c_ = (c);                                                   \
        if (!c_) {                                                                         \
            fprintf(stderr, "%s:%d: check missing\n", __FILE__, __LINE__);                 \
            fb_test_failures++;                                                            \
        } else if (c_->verdict != (want)) {                                                \
            fprintf(stderr, "%s:%d: %s is %s, expected %s (%s)\n", __FILE__, __LINE__,      \
                    c_->name, fb_verdict_str(c_->verdict), fb_verdict_str(want), c_->why); \
            fb_test_failures++;                                                            \
        }                                                                                  \
    } while (0)

enum { MAXR = 8 };

struct job {
    struct fb_doctor_job job;
    struct fb_rank_facts f[MAXR];
    int n;
    struct fb_ib_port ports[4];
    size_t nports;
    struct fb_check out[FB_DOCTOR_MAX_CHECKS];
    size_t nout;
};

/* A healthy GPU job: n ranks on one node, each bound to its own socket's GPU, CUDA-aware MPI. */
static void job_gpu(struct job *j, int n)
{
    memset(j, 0, sizeof *j);
    j->job.backend = "cuda";
    j->job.coll = "mpi";
    j->n = n;
    for (int r = 0; r < n; r++) {
        struct fb_rank_facts *f = &j->f[r];
        f->rank = r;
        f->local_rank = r;
        f->node = 0;
        snprintf(f->host, sizeof f->host, "gpu01");
        snprintf(f->cpus, sizeof f->cpus, "%d-%d", r * 8, r * 8 + 7);
        f->bound = true;
        snprintf(f->cpu_numa, sizeof f->cpu_numa, "%d", r);
        f->cuda_built = true;
        f->visible_gpus = n;
        f->gpu_index = r;
        snprintf(f->gpu_name, sizeof f->gpu_name, "NVIDIA H200");
        snprintf(f->gpu_busid, sizeof f->gpu_busid, "0000:%02x:00.0", 0x1b + r * 0x20);
        snprintf(f->gpu_numa, sizeof f->gpu_numa, "%d", r);
        f->binding = FB_PASS;
        snprintf(f->binding_why, sizeof f->binding_why, "rank CPUs are local to the GPU");
        f->mpi_cuda_aware = true;
        snprintf(f->mpi_cuda_aware_why, sizeof f->mpi_cuda_aware_why, "says yes");
    }
    j->ports[0] = (struct fb_ib_port){"mlx5_0", 1, "ACTIVE", "InfiniBand", 103.125, 4, "EDR"};
    j->nports = 1;
}

/* A CPU-only job: host backend, no GPU, ranks bound to disjoint CPUs. */
static void job_host(struct job *j, int n)
{
    job_gpu(j, n);
    j->job.backend = "host";
    for (int r = 0; r < n; r++) {
        struct fb_rank_facts *f = &j->f[r];
        f->cuda_built = false;
        f->visible_gpus = 0;
        snprintf(f->no_gpu_why, sizeof f->no_gpu_why, "no NVIDIA driver found");
        f->gpu_index = -1;
        f->gpu_name[0] = f->gpu_busid[0] = f->gpu_numa[0] = '\0';
        f->binding = FB_SKIP;
        f->mpi_cuda_aware = false;
        snprintf(f->mpi_cuda_aware_why, sizeof f->mpi_cuda_aware_why,
                 "this Open MPI was built without CUDA support");
    }
}

static const struct fb_check *find(struct job *j, const char *name)
{
    j->nout = fb_doctor_checks(&j->job, j->f, j->n, j->ports, j->nports, j->out,
                               FB_DOCTOR_MAX_CHECKS);
    for (size_t i = 0; i < j->nout; i++)
        if (strcmp(j->out[i].name, name) == 0)
            return &j->out[i];
    fprintf(stderr, "no check named '%s'\n", name);
    return NULL;
}

static void the_list(void)
{
    static const char *const names[] = {"gpu_build", "gpu_visible", "one_rank_per_gpu",
                                        "binding", "mpi_cuda_aware", "infiniband"};
    struct job j;
    struct fb_check few[2];

    job_gpu(&j, 2);
    j.nout = fb_doctor_checks(&j.job, j.f, j.n, j.ports, j.nports, j.out, FB_DOCTOR_MAX_CHECKS);
    CHECK(j.nout == 6);
    for (size_t i = 0; i < 6 && i < j.nout; i++)
        CHECK_STR(j.out[i].name, names[i]);
    /* The healthy job passes everything, with no fix to suggest. */
    for (size_t i = 0; i < j.nout; i++) {
        CHECK_VERDICT(&j.out[i], FB_PASS);
        CHECK_STR(j.out[i].fix, "");
    }
    CHECK(fb_doctor_worst(j.out, j.nout) == FB_PASS);
    /* `max` is honoured. */
    CHECK(fb_doctor_checks(&j.job, j.f, j.n, j.ports, j.nports, few, 2) == 2);
    CHECK_STR(few[1].name, "gpu_visible");
    CHECK(fb_doctor_checks(&j.job, j.f, 0, j.ports, j.nports, j.out, FB_DOCTOR_MAX_CHECKS) == 0);
}

static void gpu_build_and_visible(void)
{
    struct job j;
    const struct fb_check *c;

    job_host(&j, 2);
    c = find(&j, "gpu_build");
    CHECK_VERDICT(c, FB_WARN);
    c = find(&j, "gpu_visible");
    CHECK_VERDICT(c, FB_WARN);
    if (c)
        CHECK_HAS(c->why, "no NVIDIA driver found");

    /* One node of two sees no GPU: named, with the count. */
    job_gpu(&j, 2);
    j.f[1].visible_gpus = 0;
    snprintf(j.f[1].no_gpu_why, sizeof j.f[1].no_gpu_why, "CUDA driver version is insufficient");
    c = find(&j, "gpu_visible");
    CHECK_VERDICT(c, FB_WARN);
    if (c) {
        CHECK_HAS(c->why, "rank 1");
        CHECK_HAS(c->why, "insufficient");
        CHECK_HAS(c->fix, "nvidia-smi");
    }
}

static void one_rank_per_gpu(void)
{
    struct job j;
    const struct fb_check *c;

    /* Two ranks on one node picked the same GPU. */
    job_gpu(&j, 3);
    snprintf(j.f[2].gpu_busid, sizeof j.f[2].gpu_busid, "%s", j.f[0].gpu_busid);
    j.f[2].gpu_index = 0;
    c = find(&j, "one_rank_per_gpu");
    CHECK_VERDICT(c, FB_FAIL);
    if (c) {
        CHECK_HAS(c->why, "ranks 0 and 2");
        CHECK(c->fix[0] != '\0');
    }

    /* Bus ids compare without regard to case (CUDA writes upper, hwloc lower). */
    job_gpu(&j, 2);
    snprintf(j.f[0].gpu_busid, sizeof j.f[0].gpu_busid, "0000:3B:00.0");
    snprintf(j.f[1].gpu_busid, sizeof j.f[1].gpu_busid, "0000:3b:00.0");
    CHECK_VERDICT(find(&j, "one_rank_per_gpu"), FB_FAIL);

    /* The same bus id on two different nodes is two GPUs. */
    j.f[1].node = 1;
    snprintf(j.f[1].host, sizeof j.f[1].host, "gpu02");
    CHECK_VERDICT(find(&j, "one_rank_per_gpu"), FB_PASS);

    /* CUDA_VISIBLE_DEVICES gave each rank its own GPU as device 0: distinct bus ids, no clash. */
    job_gpu(&j, 2);
    j.f[1].gpu_index = 0;
    CHECK_VERDICT(find(&j, "one_rank_per_gpu"), FB_PASS);
    /* Without bus ids the ordinal is all there is. */
    j.f[0].gpu_busid[0] = j.f[1].gpu_busid[0] = '\0';
    CHECK_VERDICT(find(&j, "one_rank_per_gpu"), FB_FAIL);

    /* The session saw oversubscription even if the facts look distinct. */
    job_gpu(&j, 2);
    j.job.oversubscribed = true;
    CHECK_VERDICT(find(&j, "one_rank_per_gpu"), FB_FAIL);

    /* Host backend: nothing to share, but no GPU either. */
    job_host(&j, 2);
    c = find(&j, "one_rank_per_gpu");
    CHECK_VERDICT(c, FB_WARN);
    if (c)
        CHECK_HAS(c->why, "no GPU: ranks use host memory");
}

static void binding_gpu(void)
{
    struct job j;
    const struct fb_check *c;

    job_gpu(&j, 4);
    j.f[2].binding = FB_FAIL;
    snprintf(j.f[2].binding_why, sizeof j.f[2].binding_why, "rank CPUs 0-7 are on NUMA node 0");
    j.f[3].binding = FB_WARN;
    c = find(&j, "binding");
    CHECK_VERDICT(c, FB_FAIL);
    if (c) {
        CHECK_HAS(c->why, "rank 2");
        CHECK_HAS(c->why, "NUMA node 0");
        CHECK_HAS(c->fix, "--map-by ppr:<GPUs per socket>:socket --bind-to socket");
        CHECK_HAS(c->fix, "NUMA node 2"); /* rank 2's GPU is on node 2 in job_gpu */
    }
    /* under srun the fixes speak srun's options, never mpirun's (issue 28) */
    j.job.launcher = "srun";
    c = find(&j, "binding");
    CHECK_VERDICT(c, FB_FAIL);
    if (c) {
        CHECK_HAS(c->fix, "srun --ntasks-per-node=<GPUs per node> --cpu-bind=socket "
                          "--gpu-bind=closest");
        CHECK(!strstr(c->fix, "mpirun") && !strstr(c->fix, "--map-by"));
    }
    j.job.oversubscribed = true;
    c = find(&j, "one_rank_per_gpu");
    CHECK_VERDICT(c, FB_FAIL);
    if (c) {
        CHECK_HAS(c->fix, "srun --ntasks-per-node=<GPUs per node> --gpus-per-task=1");
        CHECK(!strstr(c->fix, "mpirun"));
    }
    j.job.launcher = "mpirun";
    c = find(&j, "one_rank_per_gpu");
    if (c)
        CHECK_HAS(c->fix, "mpirun -np <nodes x GPUs> --map-by ppr:<GPUs per node>:node");

    job_gpu(&j, 4);
    j.f[1].binding = FB_WARN;
    j.f[3].binding = FB_WARN;
    c = find(&j, "binding");
    CHECK_VERDICT(c, FB_WARN);
    if (c)
        CHECK_HAS(c->why, "and 1 more");

    /* One rank that could not be judged does not hide the others' PASS... */
    job_gpu(&j, 2);
    j.f[0].binding = FB_SKIP;
    CHECK_VERDICT(find(&j, "binding"), FB_PASS);
    /* ...but when nothing could be judged, say so. */
    j.f[1].binding = FB_SKIP;
    CHECK_VERDICT(find(&j, "binding"), FB_SKIP);
}

static void binding_host(void)
{
    struct job j;
    const struct fb_check *c;

    job_host(&j, 2);
    CHECK_VERDICT(find(&j, "binding"), FB_PASS); /* 0-7 and 8-15 */

    job_host(&j, 2);
    j.f[1].bound = false;
    snprintf(j.f[1].cpus, sizeof j.f[1].cpus, "0-15");
    c = find(&j, "binding");
    CHECK_VERDICT(c, FB_WARN);
    if (c) {
        CHECK_HAS(c->why, "rank 1");
        CHECK_HAS(c->why, "not bound");
        CHECK_HAS(c->fix, "--bind-to");
    }
    j.job.launcher = "srun";
    c = find(&j, "binding");
    if (c) {
        CHECK_HAS(c->fix, "srun --cpu-bind=cores");
        CHECK(!strstr(c->fix, "mpirun"));
    }

    /* Both bound, but to overlapping CPUs on the same node. */
    job_host(&j, 2);
    snprintf(j.f[1].cpus, sizeof j.f[1].cpus, "6-9");
    c = find(&j, "binding");
    CHECK_VERDICT(c, FB_WARN);
    if (c)
        CHECK_HAS(c->why, "share CPUs 6-7");

    /* The same CPU numbers on two nodes are different CPUs. */
    j.f[1].node = 1;
    CHECK_VERDICT(find(&j, "binding"), FB_PASS);
}

static void cuda_aware(void)
{
    struct job j;
    const struct fb_check *c;

    job_gpu(&j, 2);
    CHECK_VERDICT(find(&j, "mpi_cuda_aware"), FB_PASS);
    j.f[1].mpi_cuda_aware = false;
    snprintf(j.f[1].mpi_cuda_aware_why, sizeof j.f[1].mpi_cuda_aware_why,
             "this Open MPI was built without CUDA support");
    c = find(&j, "mpi_cuda_aware");
    CHECK_VERDICT(c, FB_WARN);
    if (c) {
        CHECK_HAS(c->why, "device buffers are staged through host memory");
        CHECK_HAS(c->why, "built without CUDA support");
    }
}

static void infiniband(void)
{
    struct job j;
    const struct fb_check *c;

    job_gpu(&j, 1);
    c = find(&j, "infiniband");
    CHECK_VERDICT(c, FB_PASS);
    if (c) {
        CHECK_HAS(c->why, "mlx5_0");
        CHECK_HAS(c->why, "EDR");
    }

    j.nports = 0;
    c = find(&j, "infiniband");
    CHECK_VERDICT(c, FB_WARN);
    if (c)
        CHECK_HAS(c->why, "no InfiniBand device: multi-node traffic will use TCP sockets");

    /* A device exists, and none of its ports is up. */
    j.ports[0] = (struct fb_ib_port){"mlx5_0", 1, "DOWN", "InfiniBand", 0, 0, "?"};
    j.ports[1] = (struct fb_ib_port){"mlx5_0", 2, "DOWN", "InfiniBand", 0, 0, "?"};
    j.nports = 2;
    c = find(&j, "infiniband");
    CHECK_VERDICT(c, FB_FAIL);
    if (c) {
        CHECK_HAS(c->why, "mlx5_0 port 1 is DOWN");
        CHECK(c->fix[0] != '\0');
    }

    /* One port of two up on the device: fine. */
    snprintf(j.ports[1].state, sizeof j.ports[1].state, "ACTIVE");
    CHECK_VERDICT(find(&j, "infiniband"), FB_PASS);

    /* A second HCA with no active port, the first one up: warned, named. */
    j.ports[0] = (struct fb_ib_port){"mlx5_0", 1, "ACTIVE", "InfiniBand", 212.5, 4, "HDR"};
    j.ports[1] = (struct fb_ib_port){"mlx5_1", 1, "DOWN", "InfiniBand", 0, 0, "?"};
    c = find(&j, "infiniband");
    CHECK_VERDICT(c, FB_WARN);
    if (c)
        CHECK_HAS(c->why, "mlx5_1 has no ACTIVE port");

    /* Link trained but no subnet manager: INIT, and the fix says so. */
    j.ports[0] = (struct fb_ib_port){"mlx5_0", 1, "INIT", "InfiniBand", 212.5, 4, "HDR"};
    j.nports = 1;
    c = find(&j, "infiniband");
    CHECK_VERDICT(c, FB_FAIL);
    if (c)
        CHECK_HAS(c->fix, "subnet manager");

    /* The HCA is there but this process may not open it (a container without the device). */
    j.ports[0] = (struct fb_ib_port){"mlx5_0", 0, "NO_ACCESS", "unspecified", 0, 0, "?"};
    c = find(&j, "infiniband");
    CHECK_VERDICT(c, FB_FAIL);
    if (c)
        CHECK_HAS(c->fix, "/dev/infiniband");
}

/* Whatever this host has, the answer is well formed. */
static void ib_here(void)
{
    struct fb_ib_port *ports = (struct fb_ib_port *)&ports; /* must be overwritten */
    size_t n = 12345;

    CHECK(fb_ib_ports(&ports, &n) == FB_OK);
    CHECK(n != 12345);
    CHECK(n > 0 || ports == NULL);
    for (size_t i = 0; i < n; i++) {
        CHECK(ports[i].device[0] != '\0');
        CHECK(ports[i].state[0] != '\0');
        if (strcmp(ports[i].state, "ACTIVE") == 0)
            CHECK(ports[i].width > 0);
    }
    free(ports);
    if (!fb_ib_built())
        CHECK(n == 0);
}

static void version_strings(void)
{
    char buf[32];

    fb_versions_cuda_str(13000, buf, sizeof buf);
    CHECK_STR(buf, "13.0");
    fb_versions_cuda_str(12040, buf, sizeof buf);
    CHECK_STR(buf, "12.4");
    fb_versions_cuda_str(0, buf, sizeof buf);
    CHECK_STR(buf, "none");
    fb_versions_nccl_str(22809, buf, sizeof buf);
    CHECK_STR(buf, "2.28.9");
    fb_versions_nccl_str(21803, buf, sizeof buf);
    CHECK_STR(buf, "2.18.3");
    fb_versions_nccl_str(2408, buf, sizeof buf); /* before 2.9 the code had one digit less */
    CHECK_STR(buf, "2.4.8");
    fb_versions_nccl_str(0, buf, sizeof buf);
    CHECK_STR(buf, "not built");
}

/* The launcher from the environment each one sets (in order of precedence). */
static void launcher_from_env(void)
{
    unsetenv("OMPI_MCA_orte_hnp_uri");
    unsetenv("PRTE_LAUNCHED");
    unsetenv("SLURM_STEP_ID");
    CHECK_STR(fb_facts_launcher(), "");
    setenv("SLURM_STEP_ID", "0", 1);
    CHECK_STR(fb_facts_launcher(), "srun");
    setenv("PRTE_LAUNCHED", "1", 1); /* Open MPI 5's mpirun inside an allocation */
    CHECK_STR(fb_facts_launcher(), "mpirun");
    unsetenv("PRTE_LAUNCHED");
    setenv("OMPI_MCA_orte_hnp_uri", "1234.0;tcp://10.0.0.1:5000", 1); /* Open MPI 4's */
    CHECK_STR(fb_facts_launcher(), "mpirun");
    unsetenv("SLURM_STEP_ID");
    unsetenv("OMPI_MCA_orte_hnp_uri");
    setenv("PRTE_LAUNCHED", "", 1); /* set but empty: not a launcher's mark */
    CHECK_STR(fb_facts_launcher(), "");
    unsetenv("PRTE_LAUNCHED");
}

int main(void)
{
    launcher_from_env();
    the_list();
    gpu_build_and_visible();
    one_rank_per_gpu();
    binding_gpu();
    binding_host();
    cuda_aware();
    infiniband();
    ib_here();
    version_strings();
    TEST_DONE();
}

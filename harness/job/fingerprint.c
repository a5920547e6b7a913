/* Per-rank facts (collected on each rank, gathered to rank 0; each node's InfiniBand ports read
 * by its local rank 0) and the fingerprint JSON built from them on rank 0, with the versions
 * and launcher environment that decide how a run behaves. */
#define _GNU_SOURCE
#include "fingerprint.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <fb_version.h>
#include <hwloc.h>
#include <mpi.h>

#include "atomic_file.h"
#include "backend.h"
#include "coll.h"
#include "escape.h"
#include "ib.h"
#include "log.h"
#include "versions.h"
#include "world.h"

extern char **environ;

/* This node's InfiniBand ports, read by its local rank 0 for env.json's per-node block. */
static void collect_node(struct fb_rank_facts *mine)
{
    struct fb_ib_port *ports = NULL;
    size_t n = 0;
    fb_status st = fb_ib_ports(&ports, &n);

    mine->node_read = true;
    if (st != FB_OK) {
        mine->nports = -1;
        snprintf(mine->ib_why, sizeof mine->ib_why, "unknown (the ports could not be read: %s)",
                 fb_status_str(st));
    } else {
        mine->nports = n > INT_MAX ? INT_MAX : (int)n;
        for (size_t i = 0; i < n && i < FB_FACTS_PORTS; i++)
            mine->ports[i] = ports[i];
        if (!n)
            snprintf(mine->ib_why, sizeof mine->ib_why, "%s",
                     fb_ib_built() ? "none" : "none (built without libibverbs)");
    }
    free(ports);
}

fb_status fb_fingerprint_collect(const struct fb_session *s, struct fb_topo *topo,
                                 struct fb_rank_facts *mine)
{
    if (!s || !mine)
        return FB_ERR_USAGE;
    memset(mine, 0, sizeof *mine);
    mine->rank = s->world.rank;
    mine->local_rank = s->world.local_rank;
    mine->node = s->world.node;
    snprintf(mine->host, sizeof mine->host, "%s", s->world.host);
    mine->gpu_index = -1;

    /* A binding the OS will not tell stays "" and is judged "unknown" below, not an error:
     * the fingerprint must still be written. */
    if (topo && fb_topo_is_this_system(topo) &&
        fb_topo_my_binding(topo, mine->cpus, sizeof mine->cpus, mine->cpu_numa,
                           sizeof mine->cpu_numa, &mine->bound) != FB_OK) {
        mine->cpus[0] = mine->cpu_numa[0] = '\0';
        mine->bound = false;
    }

    mine->cuda_built = fb_backend_cuda.built;
    mine->visible_gpus = s->visible_gpus;
    snprintf(mine->no_gpu_why, sizeof mine->no_gpu_why, "%s", s->no_gpu_why);

    if (s->be == &fb_backend_cuda && s->opened) {
        mine->gpu_index = s->dev.index;
        snprintf(mine->gpu_name, sizeof mine->gpu_name, "%s", s->dev.name);
        snprintf(mine->gpu_busid, sizeof mine->gpu_busid, "%s", s->dev.pci_bus_id);
        mine->gpu_mem_bytes = (uint64_t)s->dev.mem_bytes;
        if (!topo) {
            mine->binding = FB_SKIP;
            snprintf(mine->binding_why, sizeof mine->binding_why,
                     "this node's topology could not be loaded");
        } else {
            fb_topo_pci_locality(topo, mine->gpu_busid, mine->gpu_cpus, sizeof mine->gpu_cpus,
                                 mine->gpu_numa, sizeof mine->gpu_numa);
            mine->binding = fb_topo_binding_verdict(topo, mine->cpus, mine->gpu_busid,
                                                    mine->binding_why, sizeof mine->binding_why);
        }
    } else {
        mine->binding = FB_SKIP;
        snprintf(mine->binding_why, sizeof mine->binding_why, "no GPU: rank uses host memory");
    }
    mine->mpi_cuda_aware = fb_mpi_cuda_aware(mine->mpi_cuda_aware_why,
                                             sizeof mine->mpi_cuda_aware_why);
    if (mine->local_rank == 0)
        collect_node(mine);
    return FB_OK;
}

fb_status fb_fingerprint_gather(const struct fb_session *s, const struct fb_rank_facts *mine,
                                struct fb_rank_facts **all)
{
    struct fb_rank_facts *buf = NULL;
    fb_status st = FB_OK;
    int rc;

    *all = NULL;
    if (s->world.rank == 0 && !(buf = calloc((size_t)s->world.size, sizeof *buf)))
        st = FB_ERR_NOMEM;
    /* Agree before gathering: a root without a buffer must not enter MPI_Gather. */
    if ((st = fb_world_agree(&s->world, st)) != FB_OK)
        goto out;
    rc = MPI_Gather(mine, (int)sizeof *mine, MPI_BYTE, buf, (int)sizeof *buf, MPI_BYTE, 0,
                    s->world.comm);
    if ((st = fb_world_agree(&s->world, rc == MPI_SUCCESS ? FB_OK : FB_ERR_MPI)) != FB_OK)
        goto out;
    *all = buf;
    buf = NULL;
out:
    free(buf);
    return st;
}

/* cJSON answers NULL when out of memory and accepts NULL parents, so the builders below only
 * remember that something failed and the object is thrown away at the end. */
struct jb {
    bool ok;
};

static cJSON *j_obj(struct jb *b, cJSON *parent, const char *key)
{
    cJSON *o = cJSON_AddObjectToObject(parent, key);
    if (!o)
        b->ok = false;
    return o;
}

static cJSON *j_arr(struct jb *b, cJSON *parent, const char *key)
{
    cJSON *o = cJSON_AddArrayToObject(parent, key);
    if (!o)
        b->ok = false;
    return o;
}

/* A new object appended to an array. */
static cJSON *j_item(struct jb *b, cJSON *arr)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !arr || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        b->ok = false;
        return NULL;
    }
    return o;
}

static void j_str(struct jb *b, cJSON *o, const char *key, const char *val)
{
    if (!cJSON_AddStringToObject(o, key, val ? val : ""))
        b->ok = false;
}

static void j_num(struct jb *b, cJSON *o, const char *key, double val)
{
    if (!cJSON_AddNumberToObject(o, key, val))
        b->ok = false;
}

static void j_bool(struct jb *b, cJSON *o, const char *key, bool val)
{
    if (!cJSON_AddBoolToObject(o, key, val))
        b->ok = false;
}

static void cpu_model(char *buf, size_t len, const char *fallback)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");

    snprintf(buf, len, "%s", fallback && *fallback ? fallback : "unknown");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        /* x86 says "model name"; POWER says "cpu"; ARM says neither, so hwloc's answer stays. */
        if (colon && (strncmp(line, "model name", 10) == 0 || strncmp(line, "cpu\t", 4) == 0)) {
            colon += 1 + strspn(colon + 1, " \t");
            colon[strcspn(colon, "\n")] = '\0';
            if (*colon) {
                snprintf(buf, len, "%s", colon);
                break;
            }
        }
    }
    fclose(f);
}

static void add_host(struct jb *b, cJSON *root, const struct fb_session *s,
                     const struct fb_topo_summary *sum, bool have_topo)
{
    cJSON *h = j_obj(b, root, "host");
    struct utsname u;
    char kernel[300], model[256];

    j_str(b, h, "name", s->world.host);
    if (uname(&u) == 0) {
        snprintf(kernel, sizeof kernel, "%s %s", u.sysname, u.release);
        j_str(b, h, "kernel", kernel);
        j_str(b, h, "arch", u.machine);
    } else {
        j_str(b, h, "kernel", "unknown");
    }
    cpu_model(model, sizeof model, sum->cpu_model);
    j_str(b, h, "cpu_model", model);
    if (have_topo) {
        j_num(b, h, "sockets", sum->sockets);
        j_num(b, h, "numa_nodes", sum->numa_nodes);
        j_num(b, h, "cores", sum->cores);
        j_num(b, h, "pus", sum->pus);
        j_num(b, h, "memory_bytes", (double)sum->memory_bytes);
        /* 0 where hwloc sees no cache; the headline's "fits in the cache" note reads it */
        j_num(b, h, "llc_bytes", (double)sum->llc_bytes);
    } else {
        j_str(b, h, "topology", "hwloc could not load this machine's topology");
    }
}

static void add_gpu_fields(struct jb *b, cJSON *g, const struct fb_rank_facts *f)
{
    j_num(b, g, "index", f->gpu_index);
    j_str(b, g, "name", f->gpu_name);
    j_str(b, g, "pci_bus_id", f->gpu_busid);
    j_str(b, g, "numa", f->gpu_numa);
    j_str(b, g, "local_cpus", f->gpu_cpus);
    j_num(b, g, "memory_bytes", (double)f->gpu_mem_bytes);
}

static void add_ranks(struct jb *b, cJSON *root, const struct fb_rank_facts *all, int n)
{
    cJSON *ranks = j_arr(b, root, "ranks");

    for (int r = 0; r < n; r++) {
        const struct fb_rank_facts *f = &all[r];
        cJSON *o = j_item(b, ranks), *bind;

        j_num(b, o, "rank", f->rank);
        j_num(b, o, "local_rank", f->local_rank);
        j_num(b, o, "node", f->node);
        j_str(b, o, "host", f->host);
        j_str(b, o, "cpus", f->cpus);
        j_bool(b, o, "bound", f->bound);
        j_str(b, o, "cpu_numa", f->cpu_numa);
        j_num(b, o, "visible_gpus", f->visible_gpus);
        if (f->gpu_index >= 0)
            add_gpu_fields(b, j_obj(b, o, "gpu"), f);
        else if (!cJSON_AddNullToObject(o, "gpu"))
            b->ok = false;
        bind = j_obj(b, o, "binding");
        j_str(b, bind, "verdict", fb_verdict_str(f->binding));
        j_str(b, bind, "why", f->binding_why);
    }
}

/* The GPUs in use, once each (a GPU is a node and a bus id), with the ranks driving it, so a
 * shared GPU shows at a glance. */
static void add_gpus(struct jb *b, cJSON *root, const struct fb_rank_facts *all, int n)
{
    cJSON *gpus = j_arr(b, root, "gpus");

    for (int r = 0; r < n; r++) {
        const struct fb_rank_facts *f = &all[r];
        cJSON *g, *users;
        bool seen = false;

        if (f->gpu_index < 0)
            continue;
        for (int q = 0; q < r && !seen; q++)
            seen = fb_facts_same_gpu(&all[q], f);
        if (seen)
            continue;
        g = j_item(b, gpus);
        j_num(b, g, "node", f->node);
        j_str(b, g, "host", f->host);
        add_gpu_fields(b, g, f);
        users = j_arr(b, g, "ranks");
        for (int q = r; q < n; q++) {
            cJSON *num;
            if (!fb_facts_same_gpu(&all[q], f))
                continue;
            if (!(num = cJSON_CreateNumber(all[q].rank)) || !users ||
                !cJSON_AddItemToArray(users, num)) {
                cJSON_Delete(num);
                b->ok = false;
            }
        }
    }
}

static void add_versions(struct jb *b, cJSON *root, const struct fb_rank_facts *all,
                         const struct fb_topo_summary *sum)
{
    cJSON *o;
    char text[MPI_MAX_LIBRARY_VERSION_STRING + 1], v[32];
    int driver = 0, runtime = 0, len = 0, level = MPI_THREAD_SINGLE;
    unsigned api = hwloc_get_api_version();

    o = j_obj(b, root, "cuda");
    if (fb_backend_cuda.versions)
        fb_backend_cuda.versions(&driver, &runtime);
    j_bool(b, o, "built", fb_backend_cuda.built);
    j_num(b, o, "driver", driver);
    fb_versions_cuda_str(driver, v, sizeof v);
    j_str(b, o, "driver_version", v);
    j_num(b, o, "runtime", runtime);
    fb_versions_cuda_str(runtime, v, sizeof v);
    j_str(b, o, "runtime_version", v);

    /* The library loaded at run time (FB_NCCL_LIBRARY), so two runs of one binary against
     * two NCCL versions say which was which; 0 and "not loaded" when none could be (or "not
     * built" without NCCL). */
    o = j_obj(b, root, "nccl");
    int nccl = fb_nccl_version_code();
    j_num(b, o, "version_code", nccl);
    fb_versions_nccl_str(nccl, v, sizeof v);
    if (nccl <= 0 && fb_coll_nccl.built)
        snprintf(v, sizeof v, "not loaded"); /* built with NCCL; `list` says why */
    j_str(b, o, "version", v);
    j_str(b, o, "library", fb_nccl_library_path());

    o = j_obj(b, root, "mpi");
    text[0] = '\0';
    if (MPI_Get_library_version(text, &len) == MPI_SUCCESS && len >= 0 &&
        len <= MPI_MAX_LIBRARY_VERSION_STRING)
        text[len] = '\0';
    /* MPICH and others answer several lines; the first names the library and version. */
    text[strcspn(text, "\r\n")] = '\0';
    j_str(b, o, "library", text);
    /* the level MPI gave (--mpi-thread): above single Open MPI locks in every call */
    MPI_Query_thread(&level);
    j_str(b, o, "thread_level", fb_mpi_thread_name(level));
    j_bool(b, o, "cuda_aware", all[0].mpi_cuda_aware);
    j_str(b, o, "cuda_aware_why", all[0].mpi_cuda_aware_why);
    /* who started the job (rank 0's environment): doctor's and accept's fixes speak its options */
    j_str(b, o, "launcher", fb_facts_launcher());

    o = j_obj(b, root, "hwloc");
    j_str(b, o, "version", sum->hwloc_version[0] ? sum->hwloc_version : "unknown");
    snprintf(text, sizeof text, "%u.%u.%u", api >> 16, (api >> 8) & 0xff, api & 0xff);
    j_str(b, o, "api_version", text);
}

static void add_port(struct jb *b, cJSON *arr, const struct fb_ib_port *port)
{
    cJSON *p = j_item(b, arr);

    j_str(b, p, "device", port->device);
    j_num(b, p, "port", port->port);
    j_str(b, p, "state", port->state);
    j_str(b, p, "link_layer", port->link_layer);
    j_num(b, p, "rate_gbps", port->rate_gbps);
    j_num(b, p, "width", port->width);
    j_str(b, p, "speed", port->speed);
}

static void add_infiniband(struct jb *b, cJSON *root)
{
    struct fb_ib_port *ports = NULL;
    size_t n = 0;
    cJSON *arr;

    if (fb_ib_ports(&ports, &n) != FB_OK || n == 0) {
        j_str(b, root, "infiniband", fb_ib_built() ? "none" : "none (built without libibverbs)");
        goto out;
    }
    arr = j_arr(b, root, "infiniband");
    for (size_t i = 0; i < n; i++)
        add_port(b, arr, &ports[i]);
out:
    free(ports);
}

/* Every node once, in the order of its first rank: its host, how many ranks ran there, its
 * GPUs (the most any of its ranks sees: CUDA_VISIBLE_DEVICES may narrow a rank's view) and its
 * InfiniBand ports as its local rank 0 read them. accept judges every node from this block. */
static void add_hosts(struct jb *b, cJSON *root, const struct fb_rank_facts *all, int n)
{
    cJSON *hosts = j_arr(b, root, "hosts");

    for (int r = 0; r < n; r++) {
        const struct fb_rank_facts *lead = NULL;
        cJSON *h, *arr;
        int gpus = 0, nranks = 0;
        bool seen = false;

        for (int q = 0; q < r && !seen; q++)
            seen = all[q].node == all[r].node;
        if (seen)
            continue;
        for (int q = r; q < n; q++) {
            if (all[q].node != all[r].node)
                continue;
            nranks++;
            gpus = all[q].visible_gpus > gpus ? all[q].visible_gpus : gpus;
            if (!lead && all[q].node_read)
                lead = &all[q];
        }
        h = j_item(b, hosts);
        j_num(b, h, "node", all[r].node);
        j_str(b, h, "host", all[r].host);
        j_num(b, h, "ranks", nranks);
        j_num(b, h, "gpus", gpus);
        if (!lead) {
            j_str(b, h, "infiniband", "unknown (no local rank 0 read this node's ports)");
        } else if (lead->nports <= 0) {
            j_str(b, h, "infiniband", lead->ib_why);
        } else {
            arr = j_arr(b, h, "infiniband");
            for (int i = 0; i < lead->nports && i < FB_FACTS_PORTS; i++)
                add_port(b, arr, &lead->ports[i]);
            if (lead->nports > FB_FACTS_PORTS) /* the rest not kept: say how many there were */
                j_num(b, h, "infiniband_ports", lead->nports);
        }
    }
}

static bool env_wanted(const char *entry)
{
    /* what the libraries and fabricbench read: compare and trend show their differences
     * (CUDA_LAUNCH_BLOCKING, NVIDIA_TF32_OVERRIDE, an FB_TEST_ hook change figures) */
    static const char *const prefixes[] = {"NCCL_", "OMPI_", "UCX_", "SLURM_",
                                           "CUDA_", "NVIDIA_", "FB_"};
    /* Set by mpirun for each job: a contact address and a per-job key. They differ in every
     * run, would show as a change in every comparison, and the key is nobody's business. */
    static const char *const per_job[] = {"OMPI_MCA_orte_hnp_uri=",
                                          "OMPI_MCA_orte_precondition_transports=",
                                          "OMPI_MCA_ess_base_jobid=", "OMPI_MCA_pmix_"};

    for (size_t i = 0; i < sizeof per_job / sizeof per_job[0]; i++)
        if (strncmp(entry, per_job[i], strlen(per_job[i])) == 0)
            return false;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(entry, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether text holds a control character env.json's readers refuse, C1 included (escape.h). */
static bool has_control(const char *t)
{
    return t[fb_escape_control_at(t)] != '\0';
}

static void add_environment(struct jb *b, cJSON *root)
{
    cJSON *env = j_obj(b, root, "environment");
    const char **keep = NULL;
    size_t n = 0, cap = 0;

    for (char **e = environ; e && *e; e++)
        cap++;
    if (cap && !(keep = malloc(cap * sizeof *keep))) {
        b->ok = false;
        return;
    }
    for (char **e = environ; e && *e; e++)
        if (env_wanted(*e))
            keep[n++] = *e;
    /* Sorted, so two fingerprints diff cleanly. */
    qsort(keep, n, sizeof *keep, cmp_str);
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(keep[i], '=');
        char name[256];
        size_t len = eq ? (size_t)(eq - keep[i]) : strlen(keep[i]);

        if (len >= sizeof name)
            continue;
        memcpy(name, keep[i], len);
        name[len] = '\0';
        if (has_control(name))
            continue; /* no such name is ever one a run reads */
        if (eq && has_control(eq + 1)) {
            /* escaped at the door (fb_escape: \xNN, and \\ for a backslash): what a run
             * writes, its own readers accept, and the byte is still shown */
            size_t vlen = strlen(eq + 1), cap = 4 * vlen + 4;
            char *shown = malloc(cap);
            if (!shown) {
                b->ok = false;
                break;
            }
            j_str(b, env, name, fb_escape(eq + 1, vlen, 0, shown, cap));
            free(shown);
            continue;
        }
        j_str(b, env, name, eq ? eq + 1 : "");
    }
    free(keep);
}

cJSON *fb_fingerprint_json(const struct fb_session *s, struct fb_topo *topo,
                           const struct fb_rank_facts *all, const char *run_status)
{
    struct jb b = {.ok = true};
    struct fb_topo_summary sum;
    cJSON *root = cJSON_CreateObject(), *o;
    char started[32] = "";
    time_t now = time(NULL);
    struct tm tm;

    if (gmtime_r(&now, &tm)) /* when the fingerprint was taken: the run's start (trend orders) */
        strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", &tm);

    if (!root || !all)
        goto fail;
    memset(&sum, 0, sizeof sum);
    if (topo)
        fb_topo_summary(topo, &sum);
    o = j_obj(&b, root, "fabricbench");
    j_str(&b, o, "version", FB_VERSION);
    j_str(&b, o, "git_commit", FB_GIT_COMMIT);
    j_str(&b, root, "run_status", run_status ? run_status : "unknown");
    j_str(&b, root, "started", started);
    add_host(&b, root, s, &sum, topo != NULL);

    o = j_obj(&b, root, "backend");
    j_str(&b, o, "name", s->be ? s->be->name : "none");
    j_str(&b, o, "why", s->be_why);
    if (s->be && !s->be->measures) /* host-strict: a test of CUDA's rules, not a figure */
        j_str(&b, o, "note", FB_STRICT_NOTE);
    o = j_obj(&b, root, "collectives");
    j_str(&b, o, "name", s->coll ? s->coll->name : "none");
    j_str(&b, o, "why", s->coll_why);
    j_num(&b, root, "nodes", s->world.nodes);
    j_num(&b, root, "nranks", s->world.size);
    j_bool(&b, root, "oversubscribed", s->oversubscribed);

    add_ranks(&b, root, all, s->world.size);
    add_gpus(&b, root, all, s->world.size);
    add_versions(&b, root, all, &sum);
    add_infiniband(&b, root);
    add_hosts(&b, root, all, s->world.size);
    add_environment(&b, root);
    if (b.ok)
        return root;
fail:
    fb_error("out of memory while building the environment fingerprint");
    cJSON_Delete(root);
    return NULL;
}

/* Backend, collectives and GPU selection, agreed by all ranks; a rank alone on its node moved
 * to its GPU's socket. */
#include "session.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_pick.h"
#include "log.h"
#include "topo.h"
#include "watchdog.h"

static fb_status pick_backend(struct fb_session *s, const char *name)
{
    if (strcmp(name, "auto") == 0) {
        /* All ranks must use one backend: cuda only when every rank sees a GPU. */
        if (s->min_local_gpus > 0) {
            s->be = &fb_backend_cuda;
            snprintf(s->be_why, sizeof s->be_why, "auto: %d GPU(s) visible on every rank",
                     s->min_local_gpus);
        } else {
            s->be = &fb_backend_host;
            snprintf(s->be_why, sizeof s->be_why, "auto: no GPU visible (%s)",
                     s->visible_gpus ? "another rank sees none" : s->no_gpu_why);
        }
        return FB_OK;
    }
    if (!(s->be = fb_backend_find(name))) {
        if (s->world.rank == 0)
            fb_error("unknown backend '%s' (use auto, host, cuda or host-strict)", name);
        return FB_ERR_USAGE;
    }
    if (s->be == &fb_backend_cuda && s->min_local_gpus == 0) {
        if (s->world.rank == 0)
            fb_error("backend 'cuda' asked for, but %s", s->visible_gpus ? "a rank sees no GPU" : s->no_gpu_why);
        /* a build without CUDA can never run it: bad usage (exit 2), as --coll nccl without
         * NCCL; a CUDA build that sees no GPU: a node without its GPU (exit 1) */
        return fb_backend_cuda.built ? FB_ERR_NO_DEVICE : FB_ERR_USAGE;
    }
    snprintf(s->be_why, sizeof s->be_why, "asked for with --backend");
    return FB_OK;
}

/* "rank R: " when the reason is another rank's than rank 0's, else "" (a job where every rank
 * lacks the same thing reads as before). */
static const char *whose(int first, char *buf, size_t len)
{
    if (first <= 0)
        return "";
    snprintf(buf, len, "rank %d: ", first);
    return buf;
}

/* Collective: the choice is agreed, not made by each rank alone: a rank that cannot load NCCL
 * (another library path, a node without it) would otherwise run MPI's collectives while the
 * others wait in NCCL's, until the timeout (issue 29). */
static fb_status pick_coll(struct fb_session *s, const char *name)
{
    char why[160] = "", who[32]; /* zeroed: fb_world_all broadcasts all of why */
    int first = -1;
    const struct fb_coll *coll;

    if (strcmp(name, "auto") == 0) {
        bool mine = fb_coll_nccl.usable(s->be, why, sizeof why);
        if (fb_world_all(&s->world, mine, why, sizeof why, &first)) {
            s->coll = &fb_coll_nccl;
            snprintf(s->coll_why, sizeof s->coll_why, "auto: %s on GPU buffers", why);
        } else {
            s->coll = &fb_coll_mpi;
            snprintf(s->coll_why, sizeof s->coll_why, "auto: MPI (%s%s)",
                     whose(first, who, sizeof who), why);
        }
        return FB_OK;
    }
    /* the same answer on every rank: a name is known everywhere or nowhere */
    if (!(coll = fb_coll_find(name))) {
        if (s->world.rank == 0)
            fb_error("unknown collectives '%s' (use auto, nccl or mpi)", name);
        return FB_ERR_USAGE;
    }
    if (!fb_world_all(&s->world, coll->usable(s->be, why, sizeof why), why, sizeof why,
                      &first)) {
        if (s->world.rank == 0)
            fb_error("collectives '%s' cannot run here: %s%s", name,
                     whose(first, who, sizeof who), why);
        return FB_ERR_USAGE;
    }
    s->coll = coll;
    snprintf(s->coll_why, sizeof s->coll_why, "asked for with --coll");
    return FB_OK;
}

/* Moves this rank to where it belongs, best effort (a warning at most). Unasked: a rank alone on
 * its node, to its GPU's socket (fb_topo_gpu_rebind), as the launcher's socket layout puts
 * several: Open MPI binds one rank to core 0, which may be the socket away from the GPU, and h2d
 * then measures the inter-socket link. Asked (--self-bind): every rank, to its GPU's socket or
 * without a GPU its block of the node's sockets (fb_topo_rank_home). */
static void move_home(const struct fb_session *s, bool asked)
{
    const char *busid = s->be == &fb_backend_cuda && s->dev.pci_bus_id[0] ? s->dev.pci_bus_id
                                                                          : NULL;
    const char *who = asked ? "--self-bind: " : "";
    struct fb_topo *t = NULL;
    char cur[512], numa[64], want[512], near[96];
    bool bound;
    fb_status st;

    if (!asked && (!busid || s->world.local_size != 1))
        return;
    if (fb_topo_load(&t, NULL) != FB_OK) {
        if (asked)
            fb_warn("--self-bind: no topology (hwloc); the launcher's binding stays");
        return;
    }
    if (fb_topo_my_binding(t, cur, sizeof cur, numa, sizeof numa, &bound) != FB_OK)
        cur[0] = '\0';
    st = asked ? fb_topo_rank_home(t, busid, s->world.local_rank, s->world.local_size, cur, want,
                                   sizeof want)
               : fb_topo_gpu_rebind(t, busid, 1, cur, want, sizeof want);
    if (busid)
        snprintf(near, sizeof near, "GPU %s's socket", busid);
    else
        snprintf(near, sizeof near, "local rank %d's socket", s->world.local_rank);
    if (st != FB_OK)
        fb_warn("%sno socket found for %s: %s; staying on %s", who, near, fb_status_str(st),
                cur[0] ? cur : "unknown CPUs");
    else if (want[0] && fb_topo_bind(t, want) == FB_OK)
        fb_info("%sbound to CPUs %s, %s (was %s)", who, want, near, cur[0] ? cur : "unknown");
    else if (want[0])
        fb_warn("%scannot bind to CPUs %s, %s; staying on %s", who, want, near,
                cur[0] ? cur : "unknown CPUs");
    fb_topo_free(t);
}

/* Collective over the node (the CUDA backend on every rank): which visible GPU this rank
 * drives, its position among the node's ranks that see the same GPUs (their PCI bus ids
 * gathered), and whether more ranks share that set than it has GPUs. */
static fb_status pick_gpu(struct fb_session *s, int *device, int *over)
{
    char mine[FB_GPU_SET_LEN] = "", *all;
    size_t used = 0;
    int sharing = 0, d;
    fb_status st;

    for (int k = 0; k < s->visible_gpus && s->be->device_bus; k++) {
        char bus[32];
        if (s->be->device_bus(k, bus, sizeof bus) != FB_OK)
            snprintf(bus, sizeof bus, "?%d", k);
        used += (size_t)snprintf(mine + used, used < sizeof mine ? sizeof mine - used : 0, "%s%s",
                                 k ? "," : "", bus);
        if (used >= sizeof mine)
            break; /* truncated alike on every rank that sees the same GPUs */
    }
    all = malloc((size_t)s->world.local_size * FB_GPU_SET_LEN);
    if ((st = fb_world_agree(&s->world, all ? FB_OK : FB_ERR_NOMEM)) != FB_OK) {
        free(all);
        return st;
    }
    MPI_Allgather(mine, FB_GPU_SET_LEN, MPI_CHAR, all, FB_GPU_SET_LEN, MPI_CHAR,
                  s->world.node_comm);
    d = fb_gpu_pick(all, s->world.local_size, s->world.local_rank, s->visible_gpus, &sharing);
    free(all);
    *device = d < 0 ? 0 : d;
    *over = d >= 0 && sharing > s->visible_gpus;
    if (d >= 0 && sharing < s->world.local_size && s->world.local_rank == 0)
        fb_info("the %d ranks on %s do not all see the same GPUs (the launcher gave tasks GPUs "
                "of their own: srun --gpus-per-task, --gpu-bind): each drives its place among "
                "the ranks that see its GPUs", s->world.local_size, s->world.host);
    return FB_OK;
}

fb_status fb_session_open(struct fb_session *s, const char *backend, const char *coll,
                          bool allow_oversubscribe)
{
    fb_status st;
    int over = 0, any_over = 0, device;

    memset(s, 0, sizeof *s);
    fb_watchdog_phase("MPI world");
    if ((st = fb_world_init(&s->world)) != FB_OK)
        return st;
    (void)fb_watchdog_attach(s->world.node_comm,
                             &(struct fb_watchdog_who){s->world.rank, s->world.size, s->world.nodes,
                                                       s->world.local_rank, s->world.local_size,
                                                       s->world.host});
    fb_watchdog_phase("session: backend and GPU");
    s->visible_gpus = fb_backend_cuda.device_count(s->no_gpu_why, sizeof s->no_gpu_why);
    MPI_Allreduce(&s->visible_gpus, &s->min_local_gpus, 1, MPI_INT, MPI_MIN, s->world.comm);

    st = pick_backend(s, backend);
    if (st == FB_OK)
        st = pick_coll(s, coll);
    if ((st = fb_world_agree(&s->world, st)) != FB_OK)
        return st;

    /* Local rank picks the GPU, among the node's ranks that see the same GPUs (a launcher may
     * have given each task its own: hw/gpu_pick.h). Two ranks on one GPU share its copy
     * engines and memory bandwidth and halve each other's figures: refuse unless asked. */
    device = 0;
    if (s->be == &fb_backend_cuda && (st = pick_gpu(s, &device, &over)) != FB_OK)
        return st;
    MPI_Allreduce(&over, &any_over, 1, MPI_INT, MPI_MAX, s->world.comm);
    s->oversubscribed = any_over != 0;
    if (over && !allow_oversubscribe)
        fb_error("%d ranks on host %s share %d GPU(s): run one rank per GPU, or pass "
                 "--allow-oversubscribe to measure anyway", s->world.local_size, s->world.host,
                 s->visible_gpus);
    if (s->oversubscribed && !allow_oversubscribe)
        return FB_ERR_OVERSUBSCRIBED;

    st = s->be->open(device, &s->dev);
    s->opened = st == FB_OK;
    if (s->opened)
        move_home(s, false);
    return fb_world_agree(&s->world, st);
}

void fb_session_bind_home(const struct fb_session *s) { move_home(s, true); }

fb_status fb_session_set_llc(struct fb_session *s, unsigned long long mine)
{
    return MPI_Allreduce(&mine, &s->llc_bytes, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
                         s->world.comm) == MPI_SUCCESS
               ? FB_OK
               : FB_ERR_MPI;
}

fb_status fb_session_device_memory(struct fb_session *s, size_t bytes)
{
    fb_status st = FB_OK;

    if (bytes && !s->be->set_capacity) {
        if (s->world.rank == 0)
            fb_error("--device-memory: the %s backend's device memory is its own; only "
                     "host-strict takes a capacity (--backend host-strict)", s->be->name);
        st = FB_ERR_USAGE;
    } else if (bytes) {
        st = s->be->set_capacity(bytes);
    }
    return fb_world_agree(&s->world, st);
}

void fb_session_close(struct fb_session *s)
{
    if (s->opened && s->be->close)
        s->be->close();
    s->opened = false;
    fb_watchdog_detach();
    fb_world_release(&s->world);
}

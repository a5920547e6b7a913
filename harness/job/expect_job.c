/* The expected-figure model for one job: every rank's node read, its figures gathered on rank 0,
 * and the rows annotated (expect_job.h). */
#define _GNU_SOURCE /* getifaddrs' NI_* */
#include "expect_job.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <math.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "escape.h"
#include "health.h"
#include "log.h"
#include "units.h"
#include "world.h"

/* Whether IPv4 address a lies in "A.B.C.D/N". */
static bool in_subnet(const struct in_addr *a, const char *cidr)
{
    char net[64];
    const char *slash = strchr(cidr, '/');
    struct in_addr n;
    long bits;
    uint32_t mask;

    if (!slash || (size_t)(slash - cidr) >= sizeof net)
        return false;
    memcpy(net, cidr, (size_t)(slash - cidr));
    net[slash - cidr] = '\0';
    bits = strtol(slash + 1, NULL, 10);
    if (inet_pton(AF_INET, net, &n) != 1 || bits < 0 || bits > 32)
        return false;
    mask = bits == 0 ? 0 : htonl(0xffffffffu << (32 - bits));
    return (a->s_addr & mask) == (n.s_addr & mask);
}

/* Appends a name to a comma list, once. */
static void add_name(char *list, size_t len, const char *name)
{
    size_t n = strlen(name), have = strlen(list);

    for (const char *p = list; *p;) {
        size_t l = strcspn(p, ",");
        if (l == n && strncmp(p, name, n) == 0)
            return;
        p += l + (p[l] == ',');
    }
    if (have + n + 2 < len)
        snprintf(list + have, len - have, "%s%s", have ? "," : "", name);
}

/* The ports the job's transport is told to use: Open MPI's TCP interfaces (names or subnets,
 * the subnets mapped to this host's interfaces), NCCL_IB_HCA and NCCL_SOCKET_IFNAME (as names;
 * an exclusion list "^..." tells nothing). */
static void transport_ports(struct fb_expect_job *j)
{
    static const char *const vars[] = {"NCCL_IB_HCA", "NCCL_SOCKET_IFNAME",
                                       "OMPI_MCA_btl_tcp_if_include"};

    j->only[0] = j->only_from[0] = '\0';
    for (size_t v = 0; v < sizeof vars / sizeof vars[0] && !j->only[0]; v++) {
        const char *val = getenv(vars[v]);
        char item[128];

        if (!val || !*val || *val == '^')
            continue;
        for (const char *p = val; *p;) {
            size_t l = strcspn(p, ",");
            snprintf(item, sizeof item, "%.*s", (int)(l < sizeof item ? l : sizeof item - 1), p);
            p += l + (p[l] == ',');
            if (item[0] == '=')
                memmove(item, item + 1, strlen(item));
            if (strchr(item, '/') && strchr(item, '.')) {
                struct ifaddrs *all, *i;
                if (getifaddrs(&all) != 0)
                    continue;
                for (i = all; i; i = i->ifa_next)
                    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
                        in_subnet(&((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, item))
                        add_name(j->only, sizeof j->only, i->ifa_name);
                freeifaddrs(all);
            } else {
                char *colon = strchr(item, ':'); /* NCCL_IB_HCA's "mlx5_0:1" */
                if (colon)
                    *colon = '/';
                add_name(j->only, sizeof j->only, item);
            }
        }
        if (j->only[0])
            snprintf(j->only_from, sizeof j->only_from, "%s", vars[v]);
    }
}

/* Whether two PCI addresses name one device: sysfs writes "0000:3b:00.0", CUDA "0000:3B:00.0"
 * and NVML "00000000:3B:00.0"; compared as numbers. */
static bool same_pci(const char *a, const char *b)
{
    unsigned x[4], y[4];

    return sscanf(a, "%x:%x:%x.%x", &x[0], &x[1], &x[2], &x[3]) == 4 &&
           sscanf(b, "%x:%x:%x.%x", &y[0], &y[1], &y[2], &y[3]) == 4 && x[0] == y[0] &&
           x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
}

static int by_host(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* This rank's check of the site files (fb_expect_job_site): the line to say in why. */
static fb_status site_check(char *why, size_t len)
{
    const char *site = getenv("FB_EXPECT_EFFICIENCY"), *facts = getenv("FB_NVML_FACTS");
    const char *root = getenv("FB_SYSFS_ROOT");
    char err[512] = "";
    struct fb_expect_node *scratch;
    fb_status st;
    DIR *d;

    /* a description named but not there would read as a machine with nothing in it */
    if (root && *root) {
        if (!(d = opendir(root))) {
            snprintf(why, len, "FB_SYSFS_ROOT: cannot open '%s' (a sysfs tree: docs/expected.md)",
                     fb_escape_str(root, 200, err, sizeof err));
            return FB_ERR_USAGE;
        }
        closedir(d);
    }
    if (site && *site && fb_expect_eff_load(site, err, sizeof err) != FB_OK) {
        snprintf(why, len, "FB_EXPECT_EFFICIENCY: %s", err);
        return FB_ERR_USAGE;
    }
    if (!facts || !*facts)
        return FB_OK;
    if (!(scratch = calloc(1, sizeof *scratch))) {
        snprintf(why, len, "out of memory checking FB_NVML_FACTS");
        return FB_ERR_NOMEM;
    }
    /* checked on this node's GPUs as the run will load it (fb_expect_job_gather), so that a
     * file whose GPUs fit alone but not beside sysfs's is refused here, not dropped there */
    fb_expect_node_read(fb_health_sysfs_root(), NULL, scratch);
    st = fb_expect_nvml_load(facts, scratch, err, sizeof err);
    free(scratch);
    if (st != FB_OK)
        snprintf(why, len, "FB_NVML_FACTS: %s", err);
    return st == FB_OK ? FB_OK : FB_ERR_USAGE;
}

fb_status fb_expect_job_site(bool say)
{
    /* what the lowest failing rank says, with its host: one buffer, broadcast whole */
    struct {
        char host[64];
        char why[640];
    } msg;
    /* before the session's world exists: fb_world_all needs only the communicator and this
     * rank's place in it */
    struct fb_world w = {.comm = MPI_COMM_WORLD};
    int low = -1;
    fb_status st;

    memset(&msg, 0, sizeof msg);
    st = site_check(msg.why, sizeof msg.why);
    if (st != FB_OK && gethostname(msg.host, sizeof msg.host - 1) != 0)
        snprintf(msg.host, sizeof msg.host, "?");
    MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w.size);
    /* the ranks agree, so that a file missing on one node alone stops every rank, said once,
     * instead of leaving the others waiting for it in the session's first collective */
    if (fb_world_all(&w, st == FB_OK, (char *)&msg, sizeof msg, &low))
        return FB_OK;
    msg.host[sizeof msg.host - 1] = '\0';
    if (say) {
        char host[160];
        if (low == w.rank)
            fb_error("%s", msg.why);
        else
            fb_error("rank %d on %s: %s", low, fb_escape_str(msg.host, 60, host, sizeof host),
                     msg.why);
    }
    return st != FB_OK ? st : FB_ERR_USAGE;
}

/* Rank r's host-device copies while the point's first `ranks` ranks copy at once: the GPUs of
 * those ranks behind the same root port of its host (of its node, with `node_only`: pretend
 * nodes of one host stand on the same described GPUs) share that port's link. */
static void shared_h2d(const struct fb_expect_job *j, int r, int ranks, bool node_only,
                       struct fb_expect_fig *f)
{
    const struct fb_expect_rank *me = &j->ranks[r];
    int sharing = 0;

    for (int k = 0; k < ranks; k++)
        sharing += me->gpu.up[0] && strcmp(j->ranks[k].host, me->host) == 0 &&
                   (!node_only || j->ranks[k].node == me->node) &&
                   strcmp(j->ranks[k].gpu.up, me->gpu.up) == 0 &&
                   strcmp(j->ranks[k].gpu.bus, me->gpu.bus) != 0 ? 1 : 0;
    fb_expect_gpu_h2d_shared(&me->gpu, sharing + 1, f);
}

/* An NCCL collective over every rank, each with a GPU: its ranks by host, as many on each host
 * as it has, for the model's ring (fb_expect_ring_nodes); NAN when a rank has no GPU. */
static void nccl_busbw(const struct fb_expect_job *j, struct fb_expect_fig *f)
{
    struct fb_expect_ring_node *nodes = calloc((size_t)j->size, sizeof *nodes);
    int *lead = calloc((size_t)j->size, sizeof *lead);
    int n = 0;
    bool gpus = nodes && lead;

    f->gbps = NAN;
    f->bound[0] = '\0';
    for (int r = 0; r < j->size && gpus; r++) {
        int k = 0;
        gpus = j->ranks[r].gpu.bus[0] != '\0';
        while (k < n && strcmp(j->ranks[lead[k]].host, j->ranks[r].host) != 0)
            k++;
        if (k == n) {
            lead[n++] = r;
            nodes[k].rails = j->ranks[r].rails; /* each rank of a host read the same */
        }
        if (nodes[k].ngpus < FB_EXPECT_GPUS)
            nodes[k].gpu[nodes[k].ngpus++] = &j->ranks[r].gpu;
    }
    if (gpus)
        fb_expect_ring_nodes(nodes, n, f);
    free(lead);
    free(nodes);
}

fb_status fb_expect_job_gather(const struct fb_session *s, struct fb_expect_job *j)
{
    struct fb_expect_rank mine;
    const struct fb_world *w = &s->world;
    const char *bus, *fake;
    char fake_bus[32];
    fb_status st;

    memset(j, 0, sizeof *j);
    j->size = w->size;

    j->nodes = w->nodes;
    /* the ports the transport is told to use first: a node with more ports than the model
     * holds keeps those */
    transport_ports(j);
    fb_expect_node_read_for(fb_health_sysfs_root(), w->host, j->only, &j->me);
    {
        char err[256] = "";
        /* a bad facts file was refused by fb_expect_job_site before anything started, on the
         * same node's GPUs; one that fails here all the same (changed since) says so */
        const char *facts = getenv("FB_NVML_FACTS");
        if (fb_expect_node_nvml(facts, &j->me, err, sizeof err) != FB_OK) {
            size_t len = strlen(j->me.note);
            snprintf(j->me.note + len, sizeof j->me.note - len, "%s%s%s", len ? "; " : "",
                     facts && *facts ? "FB_NVML_FACTS: " : "", err);
        }
    }

    memset(&mine, 0, sizeof mine);
    mine.node = w->node;
    snprintf(mine.host, sizeof mine.host, "%s", w->host);
    fb_expect_node_net(&j->me, j->only, &mine.net);
    fb_expect_node_rails(&j->me, j->only, w->local_size, &mine.rails);
    mine.h2d.gbps = NAN;
    bus = s->be->on_cpu ? NULL : s->dev.pci_bus_id;
    if (s->be->on_cpu && (fake = getenv("FB_TEST_GPU_BUSES"))) {
        /* test hook (docs/timeouts.md): the local rank's item of a list stands for its GPU */
        for (int k = 0; k < w->local_rank && fake; k++)
            fake = strchr(fake, ',') ? strchr(fake, ',') + 1 : NULL;
        if (fake) {
            snprintf(fake_bus, sizeof fake_bus, "%.*s", (int)strcspn(fake, ","), fake);
            bus = fake_bus;
        }
    }
    if (bus && bus[0]) {
        for (int i = 0; i < j->me.ngpus; i++)
            if (same_pci(j->me.gpu[i].bus, bus)) {
                fb_expect_gpu_h2d(&j->me.gpu[i], &mine.h2d);
                mine.gpu = j->me.gpu[i];
            }
    }

    if (!s->be->on_cpu && !mine.gpu.model[0]) /* no NVML: the device's own name */
        snprintf(mine.gpu.model, sizeof mine.gpu.model, "%.47s", s->dev.name);

    st = FB_OK;
    if (w->rank == 0 && !(j->ranks = calloc((size_t)w->size, sizeof *j->ranks)))
        st = FB_ERR_NOMEM;
    if ((st = fb_world_agree(w, st)) != FB_OK)
        return st;
    if (MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, j->ranks, (int)sizeof mine, MPI_BYTE, 0,
                   w->comm) != MPI_SUCCESS)
        return FB_ERR_MPI;
    /* every rank on a host of its own (the names each rank read, sorted); the NCCL figure
     * over every rank, worked out once */
    if (w->rank == 0) {
        j->nccl.gbps = NAN;
        j->nccl.bound[0] = '\0';
        nccl_busbw(j, &j->nccl);
        char(*names)[64] = malloc((size_t)w->size * sizeof *names);
        if (names) {
            for (int r = 0; r < w->size; r++)
                memcpy(names[r], j->ranks[r].host, sizeof names[r]);
            qsort(names, (size_t)w->size, sizeof *names, by_host);
            j->hosts_distinct = true;
            for (int r = 1; r < w->size; r++)
                j->hosts_distinct = j->hosts_distinct && strcmp(names[r - 1], names[r]) != 0;
            free(names);
        }
    }
    return FB_OK;
}

static bool valid_rank(const struct fb_expect_job *j, int r)
{
    return r >= 0 && r < j->size;
}

/* A rank's GPU link as a hop of a path from its memory: the path is unknown when the rank
 * drives a GPU whose link is not known, and the hop is none when its buffers are host memory
 * (no GPU: its h2d has no figure, and none is needed). */
static void gpu_hop(const struct fb_expect_rank *k, struct fb_expect_fig *f)
{
    if (k->gpu.bus[0])
        fb_expect_path_min(f, &k->h2d, f);
    else
        fb_expect_min(f, &k->h2d, f);
}

void fb_expect_job_annotate(void *ctx, struct fb_row *row)
{
    const struct fb_expect_job *j = ctx;
    struct fb_expect_fig f = {NAN, ""};

    if (!j || !j->ranks || row->expected > 0)
        return;
    if (strcmp(row->bench, "p2p") == 0 && strcmp(row->metric, "bandwidth") == 0 &&
        strcmp(row->link, "network") == 0 && row->bytes >= FB_EXPECT_MIN_BYTES &&
        valid_rank(j, row->src) && valid_rank(j, row->dst) &&
        strcmp(j->ranks[row->src].host, j->ranks[row->dst].host) != 0) {
        /* (two ranks of one host are not behind a NIC, whatever the link label says: the
         * pretend nodes of FB_TEST_RANKS_PER_NODE) */
        /* one way only: both ways at once over MPI's TCP transport read half a direction each
         * on the shaped test link (docs/expected.md), so the model says nothing there yet */
        if (strstr(row->kase, "_uni")) {
            fb_expect_path_min(&j->ranks[row->src].net, &j->ranks[row->dst].net, &f);
            /* GPU memory at either end: its PCIe link is on the path too (GPUDirect RDMA or
             * staged through host memory) */
            if (f.gbps > 0) {
                gpu_hop(&j->ranks[row->src], &f);
                gpu_hop(&j->ranks[row->dst], &f);
            }
        }
    } else if (strcmp(row->metric, "busbw") == 0 && row->nodes >= 2 &&
               row->ranks == row->nodes && row->ranks == j->size && j->hosts_distinct &&
               row->bytes >= FB_EXPECT_MIN_BYTES) {
        /* one rank a node, every rank in it: each ring hop is a NIC (and, from GPU memory, the
         * GPU's PCIe link) */
        f = j->ranks[0].net;
        for (int r = 1; r < j->size; r++)
            fb_expect_path_min(&f, &j->ranks[r].net, &f);
        for (int r = 0; r < j->size && f.gbps > 0; r++)
            gpu_hop(&j->ranks[r], &f);
    } else if (strcmp(row->bench, "p2p") == 0 && strcmp(row->transport, "ipc") == 0 &&
               (strstr(row->kase, "_uni") || strstr(row->kase, "_bidir")) &&
               strncmp(row->metric, "bandwidth", 9) == 0 &&
               row->bytes >= FB_EXPECT_MIN_BYTES && valid_rank(j, row->src) &&
               valid_rank(j, row->dst) && j->ranks[row->src].gpu.bus[0] &&
               j->ranks[row->dst].gpu.bus[0] &&
               strcmp(j->ranks[row->src].host, j->ranks[row->dst].host) == 0) {
        /* a copy into the peer GPU's memory: NVLink or the PCIe path between the two, each
         * full duplex, so both ways at once is that figure each way, twice it in all */
        fb_expect_gpu_pair(&j->ranks[row->src].gpu, &j->ranks[row->dst].gpu, &f);
        if (strcmp(row->metric, "bandwidth_total") == 0 && f.gbps > 0) {
            size_t len = strlen(f.bound);
            f.gbps *= 2;
            snprintf(f.bound + len, sizeof f.bound - len, " both ways");
        }
    } else if (strcmp(row->metric, "busbw") == 0 && strcmp(row->transport, "nccl") == 0 &&
               row->ranks == j->size && row->ranks >= 2 && row->ranks > row->nodes &&
               row->bytes >= FB_EXPECT_MIN_BYTES) {
        f = j->nccl;
    } else if (strcmp(row->bench, "h2d") == 0 && strcmp(row->metric, "bandwidth") == 0 &&
               row->ranks == 1 && strncmp(row->kase, "pinned_", 7) == 0 &&
               row->bytes >= FB_EXPECT_MIN_BYTES && valid_rank(j, row->src)) {
        f = j->ranks[row->src].h2d;
    } else if (strcmp(row->bench, "h2d") == 0 && strcmp(row->metric, "bandwidth") == 0 &&
               row->ranks > 1 && row->ranks <= j->size && strncmp(row->kase, "pinned_", 7) == 0 &&
               row->bytes >= FB_EXPECT_MIN_BYTES && valid_rank(j, row->src) &&
               j->ranks[row->src].gpu.bus[0]) {
        shared_h2d(j, row->src, row->ranks, false, &f);
    } else if (strcmp(row->bench, "h2d") == 0 && strcmp(row->metric, "bandwidth_total") == 0 &&
               row->ranks == j->size && strncmp(row->kase, "pinned_", 7) == 0 &&
               row->bytes >= FB_EXPECT_MIN_BYTES) {
        /* every rank at once, summed: each one's share (NAN when one has no GPU link known) */
        struct fb_expect_fig one;
        f.gbps = 0;
        for (int r = 0; r < j->size && f.gbps == f.gbps; r++) {
            shared_h2d(j, r, j->size, false, &one);
            f.gbps = j->ranks[r].gpu.bus[0] && one.gbps > 0 ? f.gbps + one.gbps : NAN;
            if (r == 0 || strstr(one.bound, "uplink"))
                snprintf(f.bound, sizeof f.bound, "%s", one.bound);
        }
    }
    if (strcmp(row->bench, "compute") == 0 && strcmp(row->metric, "tflops") == 0 &&
        strncmp(row->kase, "step_", 5) == 0 && valid_rank(j, row->src) &&
        j->ranks[row->src].gpu.model[0] && strrchr(row->transport, '-'))
        /* the compute stand-in: its GPU's datasheet peak for the precision (the transport's
         * last word), shown as a share, never judged (fb_row_expected_judged) */
        fb_expect_gpu_peak(j->ranks[row->src].gpu.model, strrchr(row->transport, '-') + 1, &f);
    if (!(f.gbps > 0) && j->copies && strcmp(row->bench, "h2d") == 0 &&
        row->bytes >= (long long)j->copy_bytes) {
        /* the host backend's copies: memcpy, as calibrated on each rank (alone, or all at once;
         * the all-at-once total, their sum) */
        if (strcmp(row->metric, "bandwidth") == 0 && valid_rank(j, row->src) &&
            (row->ranks == 1 || row->ranks == j->size)) {
            f = row->ranks == 1 ? j->copies[row->src].alone : j->copies[row->src].all;
        } else if (strcmp(row->metric, "bandwidth_total") == 0 && row->ranks == j->size) {
            f = j->copies[0].all;
            for (int r = 1; r < j->size; r++)
                f.gbps += j->copies[r].all.gbps;
        }
    }
    if (f.gbps > 0 && isfinite(f.gbps)) {
        row->expected = f.gbps;
        snprintf(row->bound, sizeof row->bound, "%s", f.bound);
    }
}

/* The slower of *acc and f, where an unknown figure (NAN) makes the slowest unknown: *known
 * false from then on. */
static void slowest(struct fb_expect_fig *acc, const struct fb_expect_fig *f, bool *known)
{
    *known = *known && f->gbps > 0;
    if (*known && (isnan(acc->gbps) || f->gbps < acc->gbps))
        *acc = *f;
}

void fb_expect_job_node_alone(const struct fb_expect_job *j, int node, size_t bytes, bool nccl,
                              const char *compute_transport, struct fb_expect_alone *out)
{
    const struct fb_expect_fig none = {NAN, ""};
    const struct fb_expect_gpu *g[FB_EXPECT_GPUS];
    const char *prec = compute_transport ? strrchr(compute_transport, '-') : NULL;
    bool copies = bytes >= FB_EXPECT_MIN_BYTES, peak = prec != NULL, all = true;
    int n = 0;

    out->h2d = out->allreduce = out->compute = none;
    for (int r = 0; j && j->ranks && r < j->size && all; r++) {
        struct fb_expect_fig f;
        if (j->ranks[r].node != node)
            continue;
        all = j->ranks[r].gpu.bus[0] && n < FB_EXPECT_GPUS;
        if (!all)
            break;
        g[n++] = &j->ranks[r].gpu;
        /* the node's ranks copy at once: each its share of an uplink they share */
        shared_h2d(j, r, j->size, true, &f);
        slowest(&out->h2d, &f, &copies);
        if (peak) {
            fb_expect_gpu_peak(j->ranks[r].gpu.model, prec + 1, &f);
            slowest(&out->compute, &f, &peak);
        }
    }
    if (!all || n == 0)
        copies = peak = false;
    if (!copies)
        out->h2d = none;
    if (!peak)
        out->compute = none;
    if (all && nccl && n >= 2 && bytes >= FB_EXPECT_MIN_BYTES)
        fb_expect_node_ring(g, n, &out->allreduce);
}

fb_status fb_expect_job_gather_nodes(const struct fb_session *s, struct fb_expect_job *j)
{
    const struct fb_world *w = &s->world;
    fb_status st = FB_OK;

    if (w->rank == 0 && !(j->descs = calloc((size_t)w->size, sizeof *j->descs)))
        st = FB_ERR_NOMEM;
    if ((st = fb_world_agree(w, st)) != FB_OK)
        return st;
    if (MPI_Gather(&j->me, (int)sizeof j->me, MPI_BYTE, j->descs, (int)sizeof j->me, MPI_BYTE, 0,
                   w->comm) != MPI_SUCCESS)
        return FB_ERR_MPI;
    return FB_OK;
}

void fb_expect_job_say(const struct fb_expect_job *j)
{
    const struct fb_expect_rank *slow = NULL;
    int net = 0, gpus = 0;

    if (!j->ranks)
        return;
    for (int r = 0; r < j->size; r++) {
        const struct fb_expect_rank *k = &j->ranks[r];
        net += k->net.gbps > 0;
        gpus += k->h2d.gbps > 0;
        if (k->net.gbps > 0 && (!slow || k->net.gbps < slow->net.gbps))
            slow = k;
    }
    if (slow)
        fb_info("expected figures (docs/expected.md): between nodes %.4g GB/s (%s on %s, the "
                "slowest NIC of %d rank(s)%s%s); GPU copies: %d rank(s) with a PCIe link",
                slow->net.gbps, slow->net.bound, slow->host, net, j->only[0] ? ", as " : "",
                j->only[0] ? j->only_from : "", gpus);
    else
        fb_info("expected figures (docs/expected.md): no NIC with a rate on any node%s%s; GPU "
                "copies: %d rank(s) with a PCIe link",
                j->me.note[0] ? ": " : "", j->me.note, gpus);
}

void fb_expect_job_release(struct fb_expect_job *j)
{
    free(j->ranks);
    free(j->descs);
    free(j->copies);
    j->ranks = NULL;
    j->descs = NULL;
    j->copies = NULL;
}

/* expect's calibration copies 64 MiB whatever the cache (run's: the size of the rows it judges):
 * larger, touching the buffers costs seconds on a VM (the project's 2-core CI VMs zeroed pages
 * at about 0.6 GB/s, 2026-12-06: 256 MiB ran past a 5 s --timeout beside other tests); the two
 * buffers of all a node's ranks may take a quarter of its memory at most */
enum { COPY_REPS = 5, COPY_BYTES = 64 << 20, COPY_MEM_SHARE = 4 };

/* The kinds of h2d's pinned copies, where the backend's device memory is host memory any code
 * may read (host); pinned both (host-strict, whose device memory no host code may touch). */
static enum fb_mem copy_kind(const struct fb_backend *be, int which)
{
    return which == 1 && be->host_memory ? FB_MEM_DEVICE : FB_MEM_PINNED;
}

/* Gives back what backend_buffers took (NULL: nothing). */
static void release_buffers(const struct fb_backend *be, char *a, char *b)
{
    be->free(copy_kind(be, 0), a);
    be->free(copy_kind(be, 1), b);
}

/* Two buffers from the backend's own allocator: the memory h2d's copies use, in 4 KiB pages (a
 * plain memcpy of 64 MiB between huge pages ran 15-40% faster on the project's CI VM, measured
 * 2026-12-07: best of 9, alternated, 14.1-14.9 against 12.2-13.0 GB/s; once 22.5 against 16.1).
 * Its large mappings are kept when freed for the next allocation of their kind and size, so
 * h2d's copies of that size then reuse them instead of making their own resident
 * (docs/expected.md). */
static bool backend_buffers(const struct fb_backend *be, size_t bytes, char **a, char **b)
{
    void *pa = NULL, *pb = NULL;

    if (be->alloc(copy_kind(be, 0), bytes, &pa) != FB_OK ||
        be->alloc(copy_kind(be, 1), bytes, &pb) != FB_OK) {
        release_buffers(be, pa, pb);
        *a = *b = NULL;
        return false;
    }
    *a = pa;
    *b = pb;
    return true;
}

size_t fb_expect_job_copy_from(unsigned long long llc_bytes)
{
    /* rows past twice the cache measure memory; none judged below the copies' own size */
    size_t past = fb_size_past_cache(llc_bytes);

    return past && past < COPY_BYTES ? COPY_BYTES : past;
}

fb_status fb_expect_job_calibrate(const struct fb_session *s, struct fb_expect_job *j,
                                  bool whole)
{
    const struct fb_world *w = &s->world;
    struct fb_expect_copy mine = {{NAN, ""}, {NAN, ""}};
    size_t bytes = COPY_BYTES, judged;
    int most = 0;
    char *a = NULL, *b = NULL;
    fb_status st = FB_OK;

    if (!s->be->on_cpu)
        return FB_OK;
    if (!(judged = fb_expect_job_copy_from(s->llc_bytes))) {
        if (w->rank == 0)
            fb_info("expected figures: no memcpy calibration (the last-level cache is not "
                    "known): the host backend's copies get no expected figure");
        return FB_OK;
    }
    if (whole)
        bytes = judged; /* the rows' own size: memory, whatever the cache */
    if (MPI_Allreduce(&w->local_size, &most, 1, MPI_INT, MPI_MAX, w->comm) != MPI_SUCCESS)
        return FB_ERR_MPI;
    {
        double mem = (double)fb_size_machine_memory();
        if (mem > 0.0 && 2.0 * (double)bytes * most > mem / COPY_MEM_SHARE) {
            if (w->rank == 0)
                fb_info("expected figures: no memcpy calibration (two buffers of %zu MiB on "
                        "each of %d rank(s) of a node would take more than a quarter of its "
                        "%.0f GiB): the host backend's copies get no expected figure",
                        bytes >> 20, most, mem / (1 << 30));
            return FB_OK;
        }
    }
    if (!backend_buffers(s->be, bytes, &a, &b))
        st = FB_ERR_NOMEM;
    if ((st = fb_world_agree(w, st)) != FB_OK) {
        release_buffers(s->be, a, b);
        if (w->rank == 0)
            fb_warn("expected figures: no memcpy calibration: two buffers of %zu MiB could not "
                    "be had on every rank", bytes >> 20);
        return st == FB_ERR_NOMEM ? FB_OK : st;
    }
    memset(a, 1, bytes); /* touched, so no page fault is timed */
    memset(b, 2, bytes);
    /* alone: the ranks of a node one after another (nodes at once: they share no memory) */
    for (int k = 0; k < most; k++) {
        if (MPI_Barrier(w->comm) != MPI_SUCCESS) {
            st = FB_ERR_MPI;
            break;
        }
        if (w->local_rank == k)
            fb_expect_memcpy_calibrate(b, a, bytes, COPY_REPS, &mine.alone);
    }
    if (st == FB_OK && MPI_Barrier(w->comm) != MPI_SUCCESS)
        st = FB_ERR_MPI;
    if (st == FB_OK)
        fb_expect_memcpy_calibrate(b, a, bytes, COPY_REPS, &mine.all);
    release_buffers(s->be, a, b);
    if (st != FB_OK)
        return st;
    if (w->rank == 0 && !(j->copies = calloc((size_t)w->size, sizeof *j->copies)))
        st = FB_ERR_NOMEM;
    if ((st = fb_world_agree(w, st)) != FB_OK)
        return st;
    if (MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, j->copies, (int)sizeof mine, MPI_BYTE, 0,
                   w->comm) != MPI_SUCCESS)
        return FB_ERR_MPI;
    j->copy_bytes = judged;
    if (w->rank == 0 && judged > bytes)
        fb_info("expected figures: memcpy calibrated on every rank, %zu MiB (the most it "
                "copies; the last-level cache reported, %llu MiB, is larger than half of it: "
                "where a process can use all of it, these are partly the cache's figures and "
                "the rows judged by them read short), best of %d: rank 0 %.4g GB/s alone, %.4g at "
                "once with all %d rank(s); h2d's host rows of %zu MiB and more are judged on "
                "them", bytes >> 20, s->llc_bytes >> 20, COPY_REPS, mine.alone.gbps,
                mine.all.gbps, w->size, judged >> 20);
    else if (w->rank == 0)
        fb_info("expected figures: memcpy calibrated on every rank, %zu MiB (twice the "
                "last-level cache or more), best of %d: rank 0 %.4g GB/s alone, %.4g at once "
                "with all %d rank(s); h2d's host rows of that size and more are judged on them",
                bytes >> 20, COPY_REPS, mine.alone.gbps, mine.all.gbps, w->size);
    return FB_OK;
}

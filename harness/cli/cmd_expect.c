/* `fabricbench expect`: the expected-figure model for this job, before anything is measured
 * (docs/expected.md): every node's NICs and GPU PCIe links as sysfs shows them, the NIC the
 * job's traffic between nodes takes, each pair of nodes' figure and the part that bounds it,
 * and what could not be determined. Launched like `doctor` (one rank per GPU); between
 * MPI_Init and MPI_Finalize, which main owns. */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "expect_job.h"
#include "log.h"
#include "session.h"
#include "topo.h"

enum { OPT_BACKEND = 256, OPT_COLL, OPT_TIMEOUT, OPT_PAIRS };

static void usage(void)
{
    printf("usage: mpirun -np N fabricbench expect [--backend B] [--coll C] [--timeout S]\n\n"
           "Prints what each measurement of this job should reach on its hardware, and the part\n"
           "that bounds it, before any benchmark runs (docs/expected.md): every node's NICs\n"
           "(sysfs class/net and class/infiniband) and GPU PCIe links (bus/pci/devices), the NIC\n"
           "its traffic to other nodes takes (the one NCCL_IB_HCA, NCCL_SOCKET_IFNAME or\n"
           "OMPI_MCA_btl_tcp_if_include names, else the fastest InfiniBand port, else the fastest\n"
           "Ethernet port that is up), every pair of nodes' p2p figure and the all-reduce bus\n"
           "bandwidth with one rank a node, each node's GPU pairs and NCCL ring, on the host\n"
           "backend a memcpy calibration (what its copies should reach), and what could not be\n"
           "determined and why.\n"
           "`run` writes the same figures into results.csv's expected and bound columns.\n"
           "Launch it as you launch `run`. sysfs is read under $FB_SYSFS_ROOT when set (default\n"
           "/sys); $FB_EXPECT_EFFICIENCY names a site file of efficiencies (`key = value`);\n"
           "$FB_NVML_FACTS names a file of GPU names and NVLinks read instead of NVML.\n\n"
           "options:\n"
           "  --backend auto|host|cuda|host-strict   device backend to open (default auto)\n"
           "  --coll auto|nccl|mpi       collectives to choose (default auto)\n"
           "  --timeout SECONDS          limit of every phase (default 300; 0 = none)\n"
           "  --help                     this text\n\n"
           "exit code: 0 printed, 2 bad options, efficiency or NVML facts file, 3 timed out, 4 "
           "interrupted.\n");
}

static bool parse(int argc, char **argv, const char **backend, const char **coll, bool *help,
                  char *err, size_t errlen)
{
    static const struct option options[] = {
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"coll", required_argument, NULL, OPT_COLL},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char why[160];
    double unused;
    int c;

    optind = 0; /* a full restart of getopt (see cli.c) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case OPT_BACKEND:
        case OPT_COLL:
            if (fb_cli_choice(optarg, c == OPT_BACKEND ? fb_cli_backends : fb_cli_colls, why,
                              sizeof why) != FB_OK) {
                snprintf(err, errlen, "bad value for --%s: %s",
                         c == OPT_BACKEND ? "backend" : "coll", why);
                return false;
            }
            *(c == OPT_BACKEND ? backend : coll) = optarg;
            break;
        case OPT_TIMEOUT: /* in force since before MPI_Init (main.c) */
            if (fb_cli_timeout_parse(optarg, &unused, why, sizeof why) != FB_OK) {
                snprintf(err, errlen, "bad value for --timeout: %s", why);
                return false;
            }
            break;
        case 'h': *help = true; break;
        default: fb_cli_option_error(c, argv, err, errlen); return false;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%.80s'", argv[optind]);
        return false;
    }
    return true;
}

/* A GPU's name and NVLinks, as NVML (or the facts file) gave them. */
static void print_nvlinks(const struct fb_expect_gpu *g)
{
    int gen = fb_expect_gpu_nvlink_gen(g->model);
    struct fb_expect_fig p32, p16;

    if (!g->model[0] && !g->npeers && !g->nvl_switch)
        return;
    fb_out("    %s%s", g->model[0] ? g->model : "(no name)",
           gen ? "" : g->npeers || g->nvl_switch ? " (NVLink generation not known)" : "");
    if (gen && (g->npeers || g->nvl_switch))
        fb_out(", NVLink%d:", gen);
    for (int p = 0; p < g->npeers && p < FB_EXPECT_PEERS; p++)
        fb_out(" %d to %s", g->peer[p].links, g->peer[p].bus);
    if (g->nvl_switch)
        fb_out(" %d to NVSwitches", g->nvl_switch);
    fb_out("\n");
    fb_expect_gpu_peak(g->model, "fp32", &p32);
    fb_expect_gpu_peak(g->model, "fp16", &p16);
    if (p32.gbps > 0)
        fb_out("    datasheet peaks: fp32 %g, fp16 and bf16 %g TFLOP/s (compute's whole-step rows "
               "show their share; not judged)\n", p32.gbps, p16.gbps);
}

/* The NICs near a GPU: behind its PCIe switch (its root port), else on its NUMA node; nothing
 * when no NIC says where it sits. */
static void print_near(const struct fb_expect_node *n, const struct fb_expect_gpu *g)
{
    char bound[FB_EXPECT_BOUND];
    int placed = 0, shown = 0;

    for (int i = 0; i < n->nnics; i++)
        placed += n->nic[i].numa >= 0 || n->nic[i].root[0];
    if (!placed)
        return;
    fb_out("    near NICs:");
    for (int best = 2; best >= 1; best--)
        for (int i = 0; i < n->nnics; i++)
            if (fb_expect_nic_near(&n->nic[i], g) == best) {
                fb_expect_nic_bound(&n->nic[i], bound, sizeof bound);
                fb_out("%s %s (%s)", shown++ ? "," : "", bound,
                       best == 2 ? "behind its PCIe switch" : "on its NUMA node");
            }
    fb_out("%s\n", shown ? "" : " none behind its switch or on its NUMA node");
}

/* Every pair of a node's GPUs (one-way copy over IPC) and a ring collective over them all. */
static void print_pairs(const struct fb_expect_node *n)
{
    const struct fb_expect_gpu *all[FB_EXPECT_GPUS];
    struct fb_expect_fig f;

    if (n->ngpus < 2)
        return;
    fb_out("  GPU pairs (p2p over IPC one way, GB/s; messages of %d MiB and more):\n",
           FB_EXPECT_MIN_BYTES >> 20);
    for (int a = 0; a < n->ngpus; a++) {
        all[a] = &n->gpu[a];
        for (int b = a + 1; b < n->ngpus; b++) {
            fb_expect_gpu_pair(&n->gpu[a], &n->gpu[b], &f);
            if (f.gbps > 0)
                fb_out("    %s <-> %s: %.4g, bound %s\n", n->gpu[a].bus, n->gpu[b].bus, f.gbps,
                       f.bound);
            else
                fb_out("    %s <-> %s: not determined (%s)\n", n->gpu[a].bus, n->gpu[b].bus,
                       n->gpu[a].numa != n->gpu[b].numa && n->gpu[a].numa >= 0 &&
                               n->gpu[b].numa >= 0
                           ? "across NUMA nodes: the inter-socket link's rate is not in sysfs"
                           : "a link or the NVLink generation is not known");
        }
    }
    fb_expect_node_ring(all, n->ngpus, &f);
    if (f.gbps > 0)
        fb_out("  NCCL collectives over its %d GPUs: busbw %.4g GB/s, bound %s\n", n->ngpus,
               f.gbps, f.bound);
    else
        fb_out("  NCCL collectives over its %d GPUs: not determined (a hop of the ring has no "
               "figure)\n", n->ngpus);
}

/* One node's description: its NICs (the one taken marked), its GPUs, what is missing. */
static void print_node(const struct fb_expect_rank *k, const struct fb_expect_node *n,
                       int first, int last)
{
    char bound[FB_EXPECT_BOUND];

    fb_out("node %s (rank%s %d%s%.0d)\n", k->host, first == last ? "" : "s", first,
           first == last ? "" : "-", first == last ? 0 : last);
    if (n->nnics == 0)
        fb_out("  no NIC with a rate\n");
    for (int i = 0; i < n->nnics; i++) {
        const struct fb_expect_nic *c = &n->nic[i];
        bool used;
        fb_expect_nic_bound(c, bound, sizeof bound);
        used = strcmp(bound, k->net.bound) == 0; /* the one this node's rank took */
        if (c->kind == FB_NIC_ETH)
            fb_out("  NIC %-24s MTU %d, %s: payload %.4g GB/s per direction%s\n", bound,
                   c->mtu > 0 ? c->mtu : 1500, c->up ? "up" : "down", fb_expect_nic_payload(c),
                   used ? "  <- between nodes" : "");
        else
            fb_out("  NIC %-24s %s: payload %.4g GB/s per direction%s\n", bound,
                   c->up ? "ACTIVE" : "not active", fb_expect_nic_payload(c),
                   used ? "  <- between nodes" : "");
    }
    for (int i = 0; i < n->ngpus; i++) {
        struct fb_expect_fig f;
        fb_expect_gpu_h2d(&n->gpu[i], &f);
        int behind = 0;
        struct fb_expect_fig all;
        for (int k2 = 0; k2 < n->ngpus; k2++)
            behind += n->gpu[i].up[0] && strcmp(n->gpu[k2].up, n->gpu[i].up) == 0;
        fb_expect_gpu_h2d_shared(&n->gpu[i], behind, &all);
        if (f.gbps > 0 && behind > 1 && all.gbps < f.gbps)
            fb_out("  GPU %s: host-device copies %.4g GB/s alone; %.4g GB/s each with the %d "
                   "GPUs behind root port %s at once (%s)\n", f.bound, f.gbps, all.gbps, behind,
                   n->gpu[i].up, all.bound);
        else if (f.gbps > 0)
            fb_out("  GPU %s: host-device copies %.4g GB/s\n", f.bound, f.gbps);
        if (!(f.gbps > 0))
            fb_out("  GPU %s: PCIe link not known\n", n->gpu[i].bus);
        else if (n->gpu[i].cur_gts > 0 && n->gpu[i].cur_gts < n->gpu[i].gts)
            fb_out("    its link runs at %g GT/s now: an idle GPU lowers its speed, and it rises "
                   "under load (`nvidia-smi -q -d PCIE` shows it then)\n", n->gpu[i].cur_gts);
        print_nvlinks(&n->gpu[i]);
        print_near(n, &n->gpu[i]);
    }
    if (n->ngpus)
        fb_out("  GPUDirect RDMA: %s%s\n", n->gdr[0] ? n->gdr : "no nvidia_peermem or nv_peer_mem module",
               n->gdr[0] ? " loaded (NICs reach GPU memory)"
                         : " (NCCL stages GPU data through host memory between nodes)");
    print_pairs(n);
    if (n->note[0])
        fb_out("  not determined: %s\n", n->note);
}

static void print_model(const struct fb_expect_job *j)
{
    struct fb_expect_fig ring = {NAN, ""};
    int *lead = calloc((size_t)j->nodes, sizeof *lead), *last = calloc((size_t)j->nodes,
                                                                       sizeof *last);

    if (!lead || !last) {
        fb_error("expect: out of memory");
        free(lead);
        free(last);
        return;
    }
    for (int n = 0; n < j->nodes; n++)
        lead[n] = -1;
    for (int r = 0; r < j->size; r++) {
        int n = j->ranks[r].node;
        if (n < 0 || n >= j->nodes)
            continue;
        if (lead[n] < 0)
            lead[n] = r;
        last[n] = r;
    }
    fb_out("fabricbench expect: what this job's measurements should reach (docs/expected.md)\n");
    fb_out("efficiencies:");
    for (size_t i = 0; i < fb_expect_neff; i++)
        fb_out(" %s %.3g", fb_expect_efficiencies[i].key, fb_expect_efficiencies[i].value);
    fb_out("%s%s\n", getenv("FB_EXPECT_EFFICIENCY") && *getenv("FB_EXPECT_EFFICIENCY")
                         ? " (site file: $FB_EXPECT_EFFICIENCY)" : " (defaults)", "");
    if (j->only[0])
        fb_out("between nodes: the ports %s names (rank 0: %s)\n", j->only_from, j->only);
    for (int n = 0; n < j->nodes; n++)
        if (lead[n] >= 0)
            print_node(&j->ranks[lead[n]], &j->descs[lead[n]], lead[n], last[n]);
    if (j->nodes > 1) {
        fb_out("between nodes (p2p bandwidth one way, GB/s; both ways twice that; messages of "
               "%d MiB and more):\n", FB_EXPECT_MIN_BYTES >> 20);
        for (int a = 0; a < j->nodes; a++) {
            for (int b = a + 1; b < j->nodes && lead[a] >= 0; b++) {
                struct fb_expect_fig f;
                if (lead[b] < 0)
                    continue;
                fb_expect_path_min(&j->ranks[lead[a]].net, &j->ranks[lead[b]].net, &f);
                if (f.gbps > 0)
                    fb_out("  %s <-> %s: %.4g, bound %s\n", j->ranks[lead[a]].host,
                           j->ranks[lead[b]].host, f.gbps, f.bound);
                else
                    fb_out("  %s <-> %s: not determined (no NIC with a rate on one side)\n",
                           j->ranks[lead[a]].host, j->ranks[lead[b]].host);
            }
        }
        /* every node's NIC is a hop of the ring: one unknown leaves the ring unknown */
        for (int n = 0, first = 1; n < j->nodes; n++)
            if (lead[n] >= 0) {
                if (first)
                    ring = j->ranks[lead[n]].net;
                else
                    fb_expect_path_min(&ring, &j->ranks[lead[n]].net, &ring);
                first = 0;
            }
        if (ring.gbps > 0)
            fb_out("all-reduce busbw, one rank a node: %.4g GB/s, bound %s (the ring's slowest "
                   "hop)\n", ring.gbps, ring.bound);
        else
            fb_out("all-reduce busbw, one rank a node: not determined (a node's NIC has no "
                   "rate)\n");
        ring.gbps = NAN;
        ring.bound[0] = '\0';
        for (int n = 0, first = 1; n < j->nodes; n++)
            if (lead[n] >= 0 && last[n] > lead[n]) {
                if (first)
                    ring = j->ranks[lead[n]].rails;
                else
                    fb_expect_path_min(&ring, &j->ranks[lead[n]].rails, &ring);
                first = 0;
            }
        if (ring.gbps > 0)
            fb_out("between nodes with several ranks a node (NCCL): the rails carry %.4g GB/s, "
                   "bound %s; a collective's busbw is the slower of that and each node's ring\n",
                   ring.gbps, ring.bound);
    }
    if (j->copies) {
        fb_out("host backend copies (h2d's rows of %zu MiB and more; memcpy, GB/s):\n",
               j->copy_bytes >> 20);
        for (int r = 0; r < j->size; r++)
            fb_out("  rank %d on %s: %.4g alone, %.4g with all %d rank(s) at once (%s)\n", r,
                   j->ranks[r].host, j->copies[r].alone.gbps, j->copies[r].all.gbps, j->size,
                   j->copies[r].alone.bound);
    }
    /* the job's own ring, every rank on its GPU, however many a node (NCCL's busbw rows) */
    bool gpus = true;
    for (int r = 0; r < j->size; r++)
        gpus = gpus && j->ranks[r].gpu.bus[0];
    if (j->size >= 2 && gpus && j->nccl.gbps > 0)
        fb_out("NCCL collectives over all %d ranks: busbw %.4g GB/s, bound %s (the ring's slowest "
               "hop, each node's GPUs and NICs)\n", j->size, j->nccl.gbps, j->nccl.bound);
    else if (j->size >= 2 && gpus)
        fb_out("NCCL collectives over all %d ranks: not determined (a node's ring or NICs have no "
               "figure)\n", j->size);
    /* what the model does not cover yet: those rows keep an empty `expected` (docs/expected.md) */
    fb_out("not modelled (their rows have no expected figure): GPU copies across NUMA nodes "
           "(the inter-socket link's rate is not in sysfs), both directions at once between "
           "nodes, MPI collectives on GPU memory, the host backend's copies inside the "
           "last-level cache and its transfers between ranks, its compute (no CPU peak)\n");
    free(lead);
    free(last);
}

/* Before MPI starts (main.c): bad options and --help end here, on every rank, with no MPI
 * (a process started alone would spawn Open MPI's daemon first). -1: go on. */
int fb_cmd_expect_options(int argc, char **argv)
{
    const char *backend = "auto", *coll = "auto";
    bool help = false;
    char err[256] = "", line[320];
    bool ok = parse(argc, argv, &backend, &coll, &help, err, sizeof err);

    snprintf(line, sizeof line, "%s (see `fabricbench expect --help`)", err);
    return fb_cli_answer_early("expect", ok, help, line, usage);
}

int fb_cmd_expect(int argc, char **argv)
{
    const char *backend = "auto", *coll = "auto";
    bool help = false;
    char err[256] = "";
    int rank = 0, code = 0;
    struct fb_session s;
    struct fb_expect_job j;
    fb_status st;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* --help and bad options were answered before MPI started (fb_cmd_expect_options) */
    if (!parse(argc, argv, &backend, &coll, &help, err, sizeof err)) {
        if (rank == 0)
            fb_error("expect: %s", err);
        return 2;
    }
    if (help)
        return 0;
    if (fb_expect_job_site(rank == 0) != FB_OK)
        return 2;
    if ((st = fb_session_open(&s, backend, coll, true)) != FB_OK)
        return fb_status_exit_code(st);
    {
        /* the last-level cache, for the host copies' calibration, as run reads it */
        struct fb_topo *topo = NULL;
        struct fb_topo_summary sum = {0};
        if (fb_topo_load(&topo, NULL) == FB_OK)
            fb_topo_summary(topo, &sum);
        fb_topo_free(topo);
        st = fb_world_agree(&s.world, fb_session_set_llc(&s, sum.llc_bytes));
    }
    if (st != FB_OK || (st = fb_expect_job_gather(&s, &j)) != FB_OK ||
        (st = fb_expect_job_gather_nodes(&s, &j)) != FB_OK ||
        (st = fb_world_agree(&s.world, fb_expect_job_calibrate(&s, &j, false))) != FB_OK)
        code = fb_status_exit_code(st);
    else if (rank == 0)
        print_model(&j);
    fb_expect_job_release(&j);
    fb_session_close(&s);
    return code;
}

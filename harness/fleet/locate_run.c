/* locate's orchestration (fleet layer, locate_run.h): names the slow node, link or rank of a
 * job in one launch. Phase 1 runs every node alone at once, phase 2 a round-robin tournament of
 * disjoint node pairs (locate_pairs.c), then retests of each suspect against healthy partners and
 * a straggler check; all through the one runner (bench/locate.c), the plan and decisions from
 * harness/analysis/locate_*.c, the outputs in locate_out.c. The command (cli/cmd_locate.c)
 * parses the options and calls fb_locate_main. */
#define _POSIX_C_SOURCE 200809L
#include "locate_run.h"

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fb_version.h>

#include "atomic_file.h"
#include "clock.h"
#include "fingerprint.h"
#include "json_file.h"
#include "locate.h"
#include "locate_judge.h"
#include "locate_plan.h"
#include "log.h"
#include "run_record.h"
#include "runner.h"
#include "sysfs.h"
#include "topo.h"
#include "watchdog.h"

bool loc_suspect_add(struct loc *l, const struct loc_suspect *s)
{
    if (l->nsus == l->capsus) {
        size_t cap = l->capsus ? 2 * l->capsus : 16;
        struct loc_suspect *grown = realloc(l->sus, cap * sizeof *grown);
        if (!grown)
            return false;
        l->sus = grown;
        l->capsus = cap;
    }
    l->sus[l->nsus++] = *s;
    return true;
}

/* ---- the run folder, as `run` makes it ---- */

static fb_status open_folder(struct loc *l)
{
    const struct fb_world *w = &l->s.world;
    struct fb_topo *topo = NULL;
    struct fb_rank_facts mine, *all = NULL;
    char path[4300];
    fb_status st = FB_OK;

    if (w->rank == 0) {
        st = fb_results_prepare(&l->res, l->opt.out_dir, l->opt.results_root, w->host,
                                l->opt.force);
        if (st == FB_OK) {
            snprintf(path, sizeof path, "%s/fabricbench.log", l->res.dir);
            snprintf(l->env_path, sizeof l->env_path, "%s/env.json", l->res.dir);
            if (!(l->log = fb_file_create(path))) {
                fb_error("cannot write '%s'", path);
                st = FB_ERR_USAGE;
            }
            fb_log_set_file(l->log);
        }
    }
    if ((st = fb_world_agree(w, st)) != FB_OK)
        return st;
    fb_watchdog_phase("fingerprint");
    st = fb_topo_load(&topo, NULL);
    if (st == FB_OK)
        st = fb_fingerprint_collect(&l->s, topo, &mine);
    if ((st = fb_world_agree(w, st)) == FB_OK &&
        (st = fb_fingerprint_gather(&l->s, &mine, &all)) == FB_OK && w->rank == 0) {
        l->env = fb_fingerprint_json(&l->s, topo, all, "running");
        st = l->env ? fb_json_file_write(l->env_path, l->env) : FB_ERR_NOMEM;
    }
    st = fb_world_agree(w, st);
    if (st == FB_OK && w->rank == 0)
        fb_run_record_set(l->env, l->env_path, &l->res);
    free(all);
    fb_topo_free(topo);
    return st;
}

/* Every rank: the nodes, the lead rank of each (its local rank 0: on the host backend the rank
 * nearest the NIC) and their labels. */
static fb_status map_nodes(struct loc *l, const int *node_of)
{
    const struct fb_world *w = &l->s.world;

    l->nodes = w->nodes;
    l->lead = malloc((size_t)l->nodes * sizeof *l->lead);
    l->name = calloc((size_t)l->nodes, sizeof *l->name);
    if (!l->lead || !l->name)
        return FB_ERR_NOMEM;
    for (int i = 0; i < l->nodes; i++)
        l->lead[i] = -1;
    for (int k = 0; k < w->size; k++)
        if (l->lead[node_of[k]] < 0)
            l->lead[node_of[k]] = k;
    for (int i = 0; i < l->nodes; i++) {
        const char *h = fb_world_host_of(w, l->lead[i]);
        bool repeated = false;
        for (int j = 0; j < l->nodes; j++)
            repeated |= j != i && strcmp(fb_world_host_of(w, l->lead[j]), h) == 0;
        /* pretend nodes on one machine (FB_TEST_RANKS_PER_NODE) share a host name */
        if (repeated)
            snprintf(l->name[i], sizeof l->name[i], "%.60s/n%d", h, i);
        else
            snprintf(l->name[i], sizeof l->name[i], "%.70s", h);
    }
    return FB_OK;
}

/* Collective: whether the nodes are one machine's: rank 0 gathers each rank's kernel boot_id
 * (/proc/sys/kernel/random/boot_id, the same in every container and network namespace of one
 * boot) and sets l->one_kernel where 2 nodes or more, all with host names of their own, share
 * one. Pretend nodes (FB_TEST_RANKS_PER_NODE) share one host name and stay nodes to judge. */
static fb_status one_kernel(struct loc *l)
{
    const struct fb_world *w = &l->s.world;
    enum { ID = 40 };
    char mine[ID] = "", *all = NULL;
    fb_status st;

    if (!fb_sysfs_line("/proc/sys/kernel/random/boot_id", mine, sizeof mine))
        mine[0] = '\0';
    st = w->rank == 0 && !(all = calloc((size_t)w->size, ID)) ? FB_ERR_NOMEM : FB_OK;
    if ((st = fb_world_agree(w, st)) != FB_OK)
        return st;
    MPI_Gather(mine, ID, MPI_CHAR, all, ID, MPI_CHAR, 0, w->comm);
    if (w->rank == 0) {
        bool one = l->nodes >= 2 && all[(size_t)l->lead[0] * ID] != '\0';
        for (int i = 1; one && i < l->nodes; i++)
            one = strcmp(all + (size_t)l->lead[i] * ID, all + (size_t)l->lead[0] * ID) == 0;
        for (int i = 0; one && i < l->nodes; i++)
            for (int j = i + 1; one && j < l->nodes; j++)
                one = strcmp(fb_world_host_of(w, l->lead[i]), fb_world_host_of(w, l->lead[j])) != 0;
        l->one_kernel = one;
        if (one)
            snprintf(l->boot_id, sizeof l->boot_id, "%s", all + (size_t)l->lead[0] * ID);
        free(all);
    }
    return FB_OK;
}

/* Rank 0: the per-rank figure (metric, src == rank) of case `kase` in rows [first, nrows) of
 * benchmark `bench`; NaN when absent. */
double loc_rank_figure(const struct fb_results *res, size_t first, const char *bench,
                          const char *kase, const char *metric, int rank)
{
    for (size_t i = first; i < res->nrows; i++) {
        const struct fb_row *w = &res->rows[i];
        if (w->src == rank && strcmp(w->metric, metric) == 0 && strcmp(w->bench, bench) == 0 &&
            strcmp(w->kase, kase) == 0)
            return strcmp(w->unit, "us") == 0 ? w->st.min : w->st.max;
    }
    return NAN;
}

/* Collective: runs one benchmark through the runner with these pairings. */
fb_status loc_run_bench(struct loc *l, struct fb_runner *r, const struct fb_bench *b,
                           const struct fb_pairing *p, size_t np)
{
    fb_status st;

    l->opt.pairings = p;
    l->opt.npairings = np;
    fb_watchdog_point(b->name, "(preparing)");
    st = fb_runner_run(r, b);
    fb_watchdog_point("", "%s", "");
    l->opt.pairings = NULL;
    l->opt.npairings = 0;
    return st == FB_ERR_UNSUPPORTED ? FB_OK : st;
}

/* ---- phase 1: every node alone ---- */

const char *const loc_node_cases[LOC_NODE_CASES] = {"node_h2d", "node_p2p", "node_allreduce",
                                                     "node_compute"};
const char *const loc_node_benches[LOC_NODE_CASES] = {"locate_node", "locate_node", "locate_node",
                                                       "locate_compute"};
const char *const loc_node_metrics[LOC_NODE_CASES] = {"bandwidth", "bandwidth", "bandwidth",
                                                       "tflops"};
const char *const loc_node_units[LOC_NODE_CASES] = {"GB/s", "GB/s", "GB/s", "TFLOP/s"};
#define node_cases loc_node_cases
enum { NODE_CASES = LOC_NODE_CASES };

/* A node's lead sends world rank 0 its node's answer after each pass of phase 1: its status,
 * row count and failed rank (three int32), then its rows as bytes (every rank runs the same
 * binary). */
enum { ANSWER_TAG = 7101 };
/* World rank 0 -> the deputy, once it has heard the nodes (or given up on some): one byte per
 * node, whether its answer came. The deputy then knows rank 0 is alive and which answers it
 * must still take itself. */
enum { HEARD_TAG = 7102 };
/* World rank 0 -> the deputy, as soon as rank 0's own node has finished its pass (an empty
 * message): rank 0's node answered, and rank 0 will judge the others. */
enum { ALIVE_TAG = 7103 };

/* Rank 0: marks flag[i * NODE_CASES + c] for node i far below the other nodes in case c, with
 * its figure and the median node's in fig[] and typ[]. Each node's figure is its slowest
 * rank's. Judges the nodes that answered (answered[i]; NULL: all), 3 of them or more: with two
 * there is nothing to compare with. */
static void judge_nodes(struct loc *l, const int *node_of, const bool *answered, size_t first,
                        bool *flag, double *fig, double *typ, double *v)
{
    const struct fb_world *w = &l->s.world;
    double *got = v + l->nodes; /* the answered nodes' figures, packed */
    int present = 0;

    for (int i = 0; i < l->nodes; i++)
        present += !answered || answered[i];
    for (int c = 0; c < NODE_CASES; c++) {
        double med, mad;
        int n = 0;
        for (int i = 0; i < l->nodes; i++) {
            double least = NAN;
            for (int k = 0; k < w->size; k++) {
                double x;
                if (node_of[k] != i)
                    continue;
                x = loc_rank_figure(&l->res, first, loc_node_benches[c], node_cases[c],
                                    loc_node_metrics[c], k);
                if (!isnan(x) && (isnan(least) || x < least))
                    least = x;
            }
            v[i] = least;
            if (!isnan(least))
                got[n++] = least;
            if (l->node_fig)
                l->node_fig[(size_t)i * NODE_CASES + (size_t)c] = least;
        }
        l->node_med[c] = NAN;
        if (l->one_kernel && l->s.be->on_cpu) /* shares of one machine's CPUs (one_kernel) */
            continue;
        if (present < 3 || n < present || fb_locate_typical(got, (size_t)n, &med, &mad) != FB_OK)
            continue;
        l->node_med[c] = med;
        /* each node against the others alone (their median, and the MAD of their
         * logarithms): among a few nodes, a slow node's own figure would pull the median down
         * and widen the spread that judges it; and healthy nodes spread by factors (5 pretend
         * nodes on one core, the 4 healthy ones split in two groups: their linear MAD hid one
         * many times slower than them in some runs) */
        for (int i = 0; i < l->nodes; i++) {
            size_t at = (size_t)i * NODE_CASES + (size_t)c;
            double omed;
            bool sus;
            int m = 0;
            if (isnan(v[i]))
                continue;
            for (int j = 0; j < l->nodes; j++)
                if (j != i && !isnan(v[j]))
                    got[m++] = v[j];
            if (m == 0 || fb_locate_rate_suspect(v[i], got, (size_t)m, l->tolerance, &sus,
                                                 &omed) != FB_OK)
                continue;
            flag[at] = sus;
            fig[at] = v[i];
            typ[at] = omed;
        }
    }
}

/* Rank 0: what each node's own hardware allows in each case of phase 1 (l->node_exp; left
 * NULL when out of memory: the table then shows none): its copies, its all-reduce on NCCL and
 * its compute stand-in's peak, from the model (fb_expect_job_node_alone); its p2p, MPI's or
 * NCCL's send and receive inside a node, is not modelled. */
static void node_expected(struct loc *l)
{
    const char *compute = NULL;
    size_t bytes = 0; /* phase 1's message, as its rows say */

    for (size_t i = 0; i < l->res.nrows; i++) {
        const struct fb_row *w = &l->res.rows[i];
        if (!compute && strcmp(w->bench, "locate_compute") == 0)
            compute = w->transport;
        if (!bytes && strcmp(w->bench, "locate_node") == 0 && w->bytes > 0)
            bytes = (size_t)w->bytes;
    }
    free(l->node_exp);
    if (!(l->node_exp = malloc((size_t)l->nodes * NODE_CASES * sizeof *l->node_exp)))
        return;
    for (int i = 0; i < l->nodes; i++) {
        struct fb_expect_alone a;
        struct fb_expect_fig *e = l->node_exp + (size_t)i * NODE_CASES;
        fb_expect_job_node_alone(&l->expect, i, bytes, strcmp(l->s.coll->name, "nccl") == 0,
                                 compute, &a);
        e[0] = a.h2d;
        e[1] = (struct fb_expect_fig){NAN, ""};
        e[2] = a.allreduce;
        e[3] = a.compute;
    }
}

/* One node's own run of phase 1: the job's session with its world narrowed to the node's ranks
 * (the node communicator), so each node measures itself at its own pace and a node that hangs
 * holds up no other; its runner; on its lead (local rank 0) its rows, in memory, which the lead
 * sends world rank 0. */
struct node_run {
    struct fb_session s;
    struct fb_runner r;
    struct fb_results res;
    int *member;        /* local rank -> world rank */
    int *partner;       /* local rank -> its partner's local rank in node_p2p, -1: none */
    char (*hosts)[64];  /* local rank -> host */
    bool up;            /* r initialised */
};

/* Collective over the node. */
static fb_status node_run_open(struct loc *l, const int *node_of, struct node_run *n)
{
    const struct fb_world *w = &l->s.world;
    size_t ln = (size_t)w->local_size;
    int m = 0;
    fb_status st = FB_OK;

    memset(n, 0, sizeof *n);
    n->res.in_memory = true;
    n->member = malloc(ln * sizeof *n->member);
    n->partner = malloc(ln * sizeof *n->partner);
    n->hosts = calloc(ln, sizeof *n->hosts);
    if (!n->member || !n->partner || !n->hosts)
        st = FB_ERR_NOMEM;
    /* the node communicator orders its ranks by world rank (fb_world_init) */
    for (int k = 0; st == FB_OK && k < w->size; k++)
        if (node_of[k] == w->node && m < w->local_size) {
            snprintf(n->hosts[m], sizeof n->hosts[m], "%s", fb_world_host_of(w, k));
            n->member[m++] = k;
        }
    if (st == FB_OK && m != w->local_size)
        st = FB_ERR_INTERNAL;
    /* inside the node: its 1st and 2nd ranks, its 3rd and 4th, ... both ways at once */
    for (int j = 0; st == FB_OK && j < m; j++)
        n->partner[j] = j % 2 == 0 ? (j + 1 < m ? j + 1 : -1) : j - 1;
    n->s = l->s;
    n->s.world.comm = w->node_comm;
    n->s.world.rank = w->local_rank;
    n->s.world.size = w->local_size;
    n->s.world.nodes = 1;
    n->s.world.hosts = n->hosts;
    if ((st = fb_world_agree(&n->s.world, st)) != FB_OK)
        return st;
    st = fb_runner_init(&n->r, &n->s, &l->opt, w->local_rank == 0 ? &n->res : NULL);
    n->up = st == FB_OK;
    return st;
}

static void node_run_close(struct node_run *n)
{
    if (n->up)
        fb_runner_release(&n->r);
    fb_results_release(&n->res);
    free(n->member);
    free(n->partner);
    free(n->hosts);
}

/* Collective over the node: one pass of phase 1 on this node alone (its transfers, then its
 * compute stand-in, timed apart); on the lead, the rows from `first` on name world ranks. */
static fb_status node_pass(struct loc *l, struct node_run *n, size_t first)
{
    struct fb_pairing pair = {.name = "node_p2p", .partner = n->partner};
    double t0 = fb_clock_now_us();
    fb_status st = loc_run_bench(l, &n->r, &fb_bench_locate_node, &pair,
                                 n->s.world.size > 1 ? 1 : 0);

    l->phase_s[0] += (fb_clock_now_us() - t0) / 1e6;
    t0 = fb_clock_now_us();
    if (st == FB_OK && !l->no_compute)
        st = loc_run_bench(l, &n->r, &fb_bench_locate_compute, NULL, 0);
    l->phase_s[4] += (fb_clock_now_us() - t0) / 1e6;
    for (size_t i = first; i < n->res.nrows; i++) {
        struct fb_row *row = &n->res.rows[i];
        if (row->src >= 0 && row->src < n->s.world.size)
            row->src = n->member[row->src];
        if (row->dst >= 0 && row->dst < n->s.world.size)
            row->dst = n->member[row->dst];
    }
    return st;
}

/* World rank 0: adds rows to the run's results (rewritten as after any point). */
static fb_status add_rows(struct loc *l, const struct fb_row *rows, size_t nrows)
{
    fb_status st = FB_OK;

    fb_run_record_lock();
    for (size_t i = 0; i < nrows && st == FB_OK; i++)
        st = fb_results_add(&l->res, &rows[i]);
    if (st == FB_OK)
        st = fb_results_flush(&l->res);
    fb_run_record_unlock();
    return st;
}

/* The job's rank that reported this node's failure (agreed over the node), -1 when none. */
static int node_culprit(const struct node_run *n, fb_status st)
{
    fb_status cst;
    int who = -1;
    char host[64];

    if (st == FB_OK || !fb_world_culprit(&n->s.world, &cst, &who, host, sizeof host) ||
        who < 0 || who >= n->s.world.size)
        return -1;
    return n->member[who];
}

/* A lead's answer on its way: its node's status, row count and failed rank (the job's, three
 * int32), then its rows from `first` on, sent to world rank 0 and to the deputy (unless it is
 * the deputy) each on its own, so that either hears it whatever the other's state. */
struct answer {
    int32_t head[3];
    unsigned char *buf; /* head and rows; NULL: head alone */
    MPI_Request req[2];
    int nreq;
};

static void answer_post(const struct loc *l, const struct node_run *n, size_t first,
                        fb_status st, struct answer *a)
{
    const struct fb_world *w = &l->s.world;
    size_t nrows = n->res.nrows - first;
    size_t bytes = sizeof a->head + nrows * sizeof(struct fb_row);
    const void *what;
    int count, to[2] = {0, l->deputy};

    a->head[0] = (int32_t)st;
    a->head[1] = (int32_t)nrows;
    a->head[2] = (int32_t)node_culprit(n, st);
    a->buf = bytes <= INT32_MAX ? malloc(bytes) : NULL;
    a->nreq = 0;
    if (!a->buf) { /* the header alone: rank 0 hears the failure */
        a->head[0] = FB_ERR_NOMEM;
        a->head[1] = 0;
        a->head[2] = w->rank;
        what = a->head;
        count = (int)sizeof a->head;
    } else {
        memcpy(a->buf, a->head, sizeof a->head);
        if (nrows)
            memcpy(a->buf + sizeof a->head, n->res.rows + first, nrows * sizeof(struct fb_row));
        what = a->buf;
        count = (int)bytes;
    }
    for (int k = 0; k < 2; k++)
        if (to[k] >= 0 && to[k] != w->rank && (k == 0 || to[k] != to[0]))
            MPI_Isend(what, count, MPI_BYTE, to[k], ANSWER_TAG, w->comm, &a->req[a->nreq++]);
}

/* Waits until the answer's sends are done, and frees it. */
static void answer_wait(struct answer *a)
{
    MPI_Waitall(a->nreq, a->req, MPI_STATUSES_IGNORE);
    a->nreq = 0;
    free(a->buf);
    a->buf = NULL;
}

/* Rank 0 or the deputy: takes one node's answer (probed: status), its rows into l->res; *node
 * gets the node; *worst and *worst_rank the worse status. */
static fb_status recv_answer(struct loc *l, const int *node_of, const MPI_Status *status,
                             fb_status *worst, int *worst_rank, int *node)
{
    int32_t head[3];
    unsigned char *buf;
    int from = status->MPI_SOURCE, bytes = 0;
    fb_status st = FB_OK;

    *node = node_of[from];
    MPI_Get_count(status, MPI_BYTE, &bytes);
    buf = malloc(bytes > 0 ? (size_t)bytes : 1);
    MPI_Recv(buf ? buf : (unsigned char *)head, buf ? bytes : 0, MPI_BYTE, from, ANSWER_TAG,
             l->s.world.comm, MPI_STATUS_IGNORE);
    if (!buf)
        return FB_ERR_NOMEM;
    if (bytes < (int)sizeof head) {
        st = FB_ERR_INTERNAL;
    } else {
        memcpy(head, buf, sizeof head);
        if (head[1] < 0 || (size_t)bytes != sizeof head + (size_t)head[1] * sizeof(struct fb_row))
            st = FB_ERR_INTERNAL;
        else if (head[1] > 0) {
            /* the rows follow the header unaligned: copied out first */
            struct fb_row *rows = malloc((size_t)head[1] * sizeof *rows);
            if (rows) {
                memcpy(rows, buf + sizeof head, (size_t)head[1] * sizeof *rows);
                st = add_rows(l, rows, (size_t)head[1]);
            } else {
                st = FB_ERR_NOMEM;
            }
            free(rows);
        }
        if (fb_status_severity((fb_status)head[0]) > fb_status_severity(*worst)) {
            *worst = (fb_status)head[0];
            *worst_rank = head[2];
        }
    }
    free(buf);
    return st;
}

/* When the wait for phase 1's answers ends, from now: --timeout less a second (before the
 * watchdog's own deadline, so that the node table is written first); never with no timeout. */
static bool answers_late(const struct loc *l, double since)
{
    double t = l->opt.timeout_s;

    return t > 0 && fb_clock_now_s() - since > (t > 2.0 ? t - 1.0 : t / 2.0);
}

/* World rank 0, after its own node's pass: every other node's answer, as it comes, until all
 * came, --timeout ran out (a second before the watchdog's own deadline, so that the node table
 * is written first) or a signal came (mpirun stopping the job because a rank died). The rows go
 * into the results as they come; *worst gets the worst node status. */
static fb_status collect_answers(struct loc *l, const int *node_of, bool *answered,
                                 fb_status *worst, int *worst_rank)
{
    const struct fb_world *w = &l->s.world;
    double since = fb_clock_now_s();
    int left = 0;
    fb_status st = FB_OK;

    for (int i = 0; i < l->nodes; i++)
        left += !answered[i];
    fb_watchdog_phase("phase 1: the nodes' answers");
    fb_watchdog_wait_begin(); /* arrived: waiting on the others */
    while (left > 0 && st == FB_OK) {
        MPI_Status status;
        int flag = 0;

        MPI_Iprobe(MPI_ANY_SOURCE, ANSWER_TAG, w->comm, &flag, &status);
        if (flag) {
            int i;
            st = recv_answer(l, node_of, &status, worst, worst_rank, &i);
            if (!answered[i]) {
                answered[i] = true;
                left--;
            }
            continue;
        }
        if (fb_watchdog_interrupted())
            st = FB_ERR_INTERRUPTED;
        else if (answers_late(l, since))
            st = FB_ERR_TIMEOUT;
        else
            fb_clock_sleep_s(0.001);
    }
    fb_watchdog_wait_end();
    return st;
}

/* Rank 0 (or the deputy), when a node did not answer: the others judged among themselves
 * (judge_nodes, over the rows from `first`), and each such node a suspect, so that a hang or a
 * dead node still leaves the fleet's verdict once the outputs are written. */
static void judge_unanswered(struct loc *l, const int *node_of, const bool *answered,
                             size_t first, bool *flag, double *fig, double *typ, double *v,
                             fb_status why)
{
    char ranks[200];

    judge_nodes(l, node_of, answered, first, flag, fig, typ, v);
    for (int i = 0; i < l->nodes; i++) {
        struct loc_suspect s = {.kind = "node", .node = i, .peer = -1, .rank = -1,
                                .measured = NAN, .typical = NAN};
        size_t used = 0;
        if (answered[i])
            continue;
        ranks[0] = '\0';
        for (int k = 0; k < l->s.world.size && used + 12 < sizeof ranks; k++)
            if (node_of[k] == i)
                used += (size_t)snprintf(ranks + used, sizeof ranks - used, "%s%d",
                                         used ? "," : "", k);
        snprintf(s.bench, sizeof s.bench, "locate_node");
        snprintf(s.metric, sizeof s.metric, "answer");
        snprintf(s.evidence, sizeof s.evidence,
                 "no answer: rank(s) %s did not finish phase 1 (each node alone) %s (hung or "
                 "dead); the other nodes were judged without it",
                 ranks, why == FB_ERR_TIMEOUT ? "within --timeout" : "before the job was stopped");
        l->unanswered++;
        if (!loc_suspect_add(l, &s))
            break;
    }
}

/* The watchdog's line for a phase 1 that some nodes did not answer in time: which, and where
 * the others' verdicts are. */
static void unanswered_line(const struct loc *l, const bool *answered, char *what, size_t len)
{
    size_t used = (size_t)snprintf(what, len, "no answer from");

    for (int i = 0; i < l->nodes && used < len - 1; i++)
        if (!answered[i])
            used += (size_t)snprintf(what + used, len - used, " %s", l->name[i]);
    if (used < len - 1)
        used += (size_t)snprintf(what + used, len - used, "; the others are judged in nodes.csv");
    if (l->by_deputy && used < len - 1)
        snprintf(what + used, len - used, ", written by the deputy, rank %d on %s",
                 l->s.world.rank, l->s.world.host);
}

/* Collective: what the deputy (struct loc) needs to write the node table and results.csv in rank
 * 0's stead: the run folder's path, the run's id and whether the nodes are one machine's
 * (one_kernel); on the deputy, its rows in memory and the table's figures. */
static fb_status share_with_deputy(struct loc *l)
{
    const struct fb_world *w = &l->s.world;
    int one = l->one_kernel;
    fb_status st = FB_OK;

    l->deputy = l->nodes >= 2 ? l->lead[1] : -1;
    if (l->deputy < 0)
        return FB_OK;
    MPI_Bcast(l->res.dir, (int)sizeof l->res.dir, MPI_CHAR, 0, w->comm);
    MPI_Bcast(l->res.run_id, (int)sizeof l->res.run_id, MPI_CHAR, 0, w->comm);
    MPI_Bcast(&one, 1, MPI_INT, 0, w->comm);
    MPI_Bcast(l->boot_id, (int)sizeof l->boot_id, MPI_CHAR, 0, w->comm);
    l->one_kernel = one;
    if (w->rank == l->deputy) {
        l->res.in_memory = true;
        snprintf(l->res.csv_path, sizeof l->res.csv_path, "%s/results.csv", l->res.dir);
        if (!(l->node_fig = malloc((size_t)l->nodes * NODE_CASES * sizeof *l->node_fig)))
            st = FB_ERR_NOMEM;
        for (size_t i = 0; l->node_fig && i < (size_t)l->nodes * NODE_CASES; i++)
            l->node_fig[i] = NAN;
        for (int c = 0; c < NODE_CASES; c++)
            l->node_med[c] = NAN;
    }
    return fb_world_agree(w, st);
}

/* The deputy, after its own node's pass (its rows from `first` on in l->res): the other nodes'
 * answers (rank 0's node's too), as they come, until rank 0 says it heard the nodes (HEARD_TAG),
 * then the answers rank 0 heard that have not come here yet. Returns whether rank 0 heard the
 * deputy's own node. When rank 0's node has not finished its pass (ALIVE_TAG) within --timeout
 * (as long as rank 0 waits for the others, collect_answers), it has not answered and rank 0
 * cannot write: the deputy judges the nodes that answered among themselves, names the others
 * (rank 0's among them), writes the node table into rank 0's run folder (made here when this
 * node cannot see it) and stops the job with exit code 3; it does not return then. A signal
 * ends the watch (rank 0, if alive, writes the table of a node that died). */
static bool deputy_watch(struct loc *l, const int *node_of, size_t first, bool *answered,
                         bool *flag, double *fig, double *typ, double *v)
{
    const struct fb_world *w = &l->s.world;
    double since = fb_clock_now_s();
    unsigned char *heard = calloc((size_t)l->nodes, 1);
    bool alive = false, told = false, mine = false;
    fb_status worst = FB_OK, st = heard ? FB_OK : FB_ERR_NOMEM;
    int worst_rank = -1;
    char what[240];
    double t0 = fb_clock_now_us();

    for (int i = 0; i < l->nodes; i++)
        answered[i] = i == w->node;
    fb_watchdog_phase("phase 1: the nodes' answers (the deputy)");
    fb_watchdog_wait_begin();
    while (st == FB_OK) {
        MPI_Status status;
        int got = 0, left = 0;

        MPI_Iprobe(MPI_ANY_SOURCE, ANSWER_TAG, w->comm, &got, &status);
        if (got) {
            int i;
            st = recv_answer(l, node_of, &status, &worst, &worst_rank, &i);
            answered[i] = true;
            continue;
        }
        if (!alive) {
            MPI_Iprobe(0, ALIVE_TAG, w->comm, &got, &status);
            if (got) {
                MPI_Recv(NULL, 0, MPI_BYTE, 0, ALIVE_TAG, w->comm, MPI_STATUS_IGNORE);
                alive = true;
            }
        }
        if (!told) {
            MPI_Iprobe(0, HEARD_TAG, w->comm, &got, &status);
            if (got) {
                MPI_Recv(heard, l->nodes, MPI_UNSIGNED_CHAR, 0, HEARD_TAG, w->comm,
                         MPI_STATUS_IGNORE);
                told = true;
                mine = heard[w->node] != 0;
            }
        }
        for (int i = 0; told && i < l->nodes; i++)
            left += heard[i] && !answered[i];
        if (told && left == 0)
            break;
        if (fb_watchdog_interrupted())
            break;
        if (!alive && answers_late(l, since))
            st = FB_ERR_TIMEOUT;
        else
            fb_clock_sleep_s(0.001);
    }
    fb_watchdog_wait_end();
    free(heard);
    l->phase_s[5] += (fb_clock_now_us() - t0) / 1e6;
    if (st != FB_ERR_TIMEOUT)
        return mine;
    /* a phase of its own, with its own --timeout: on a loaded machine the writing below once
     * outlasted the second left of the last one, and this rank's watchdog stopped the job
     * without the deputy's line */
    fb_watchdog_phase("phase 1: the deputy writes the node table");
    l->by_deputy = true;
    judge_unanswered(l, node_of, answered, first, flag, fig, typ, v, FB_ERR_TIMEOUT);
    /* results.csv with every row the nodes sent (rank 0's, during phase 1, holds no more: it
     * was rewritten as each answer came, and its stop hook leaves it be) */
    l->res.in_memory = false;
    if (fb_mkdirs(l->res.dir) != 0)
        fb_error("locate: the deputy cannot make the run folder '%s' on %s: %s", l->res.dir,
                 w->host, strerror(errno));
    else if (fb_results_flush(&l->res) != FB_OK || loc_write_outputs(l) != FB_OK)
        fb_error("locate: the deputy could not write results.csv and the node table in '%s'",
                 l->res.dir);
    unanswered_line(l, answered, what, sizeof what);
    /* rank 0's own watchdog marks the run when it can; frozen or dead, it cannot: env.json
     * still "running" in a folder the deputy shares is marked here */
    {
        char env_path[4400], detail[400];
        bool marked = false;
        snprintf(env_path, sizeof env_path, "%s/env.json", l->res.dir);
        snprintf(detail, sizeof detail, "phase 1: %s (rank 0 had not marked the run)", what);
        if (fb_run_record_mark_file(env_path, "timeout", detail, &marked) == FB_OK && marked)
            fb_warn("locate: the deputy marked %s 'timeout': rank 0 had not", env_path);
    }
    fb_watchdog_leave_rank0(0.0); /* rank 0's own watchdog has marked the run, or soon will */
    fb_watchdog_wait_begin();
    fb_watchdog_expire(what);
}

/* Collective. Every node alone at once, each in its own communicator (node_run); a node far
 * below the others is measured again and named only when it is far below both times (noise
 * passes). A node that does not answer in time is named, the others are judged without it and
 * the outputs written; then the job stops (exit code 3 on a timeout). */
static fb_status phase_nodes(struct loc *l, struct fb_runner *r)
{
    const struct fb_world *w = &l->s.world;
    size_t cells = (size_t)l->nodes * NODE_CASES;
    struct node_run n;
    bool *flag = calloc(cells, sizeof *flag), *flag2 = calloc(cells, sizeof *flag2);
    bool *answered = calloc((size_t)l->nodes, sizeof *answered);
    double *fig = calloc(cells, sizeof *fig), *typ = calloc(cells, sizeof *typ);
    double *v = malloc(2 * (size_t)l->nodes * sizeof *v);
    int shared[2]; /* from rank 0: the worst node's status, and whether to measure again */
    fb_status st = flag && flag2 && answered && fig && typ && v ? FB_OK : FB_ERR_NOMEM;

    memset(&n, 0, sizeof n);
    /* A node that hangs: its own watchdog fires --timeout into its stuck phase, while rank 0
     * may still be measuring its own node; rank 0 then waits --timeout for the answers. So the
     * other ranks leave rank 0 twice --timeout to stop the job with the node table written,
     * not the watchdog's 5 s. */
    fb_watchdog_leave_rank0(2.0 * l->opt.timeout_s);
    /* and rank 0's own node hanging: its watchdog leaves the deputy as long to write the others'
     * table (deputy_watch) */
    if (l->deputy >= 0)
        fb_watchdog_hold_rank0(2.0 * l->opt.timeout_s);
    /* results.csv is rewritten as each node's answer comes: rank 0's stop hook leaves it be,
     * and a deputy that writes it in rank 0's stead is not undone */
    if (w->rank == 0 && l->deputy >= 0)
        fb_run_record_file_current(true);
    if ((st = fb_world_agree(w, st)) != FB_OK ||
        (st = fb_world_agree(w, node_run_open(l, r->node_of, &n))) != FB_OK)
        goto out;
    for (int pass = 0; pass < 2; pass++) {
        /* rank 0's and the deputy's rows of this pass from `first` on (none elsewhere) */
        size_t first = l->res.nrows, nfirst = n.res.nrows;
        fb_status mine;
        unsigned char *heard = NULL;
        MPI_Request heard_req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}; /* alive, heard */
        struct answer own = {.buf = NULL, .nreq = 0}; /* rank 0's node's, to the deputy */

        /* one table on the terminal, rank 0's node's: the others' figures go to its rows */
        fb_log_set_report(w->rank == 0);
        mine = node_pass(l, &n, nfirst);
        fb_log_set_report(1);
        if (w->rank == 0 && l->deputy >= 0) {
            MPI_Isend(NULL, 0, MPI_BYTE, l->deputy, ALIVE_TAG, w->comm, &heard_req[0]);
            answer_post(l, &n, nfirst, mine, &own);
        }

        if (w->local_rank == 0 && w->rank != 0) {
            struct answer a;
            bool wait = true;
            answer_post(l, &n, nfirst, mine, &a);
            if (w->rank == l->deputy) {
                if (add_rows(l, n.res.rows + nfirst, n.res.nrows - nfirst) != FB_OK)
                    fb_warn("locate: the deputy keeps no rows of its own node (out of memory)");
                wait = deputy_watch(l, r->node_of, first, answered, flag2, fig, typ, v);
            }
            /* rank 0 took this answer, unless it gave up on this node (it is stopping the
             * job then, and the send is left to that) */
            if (wait) {
                fb_watchdog_phase("phase 1: the node's answer to rank 0");
                fb_watchdog_wait_begin();
                answer_wait(&a);
                fb_watchdog_wait_end();
            }
        }
        if (w->rank == 0) {
            fb_status worst = mine, got;
            int worst_rank = node_culprit(&n, mine);
            for (int i = 0; i < l->nodes; i++)
                answered[i] = i == w->node;
            got = add_rows(l, n.res.rows + nfirst, n.res.nrows - nfirst);
            if (got == FB_OK) {
                double t0 = fb_clock_now_us();
                got = collect_answers(l, r->node_of, answered, &worst, &worst_rank);
                l->phase_s[5] += (fb_clock_now_us() - t0) / 1e6;
            }
            /* rank 0 is alive and heard these nodes: the deputy stands down */
            if (l->deputy >= 0 && (heard = malloc((size_t)l->nodes))) {
                for (int i = 0; i < l->nodes; i++)
                    heard[i] = answered[i];
                MPI_Isend(heard, l->nodes, MPI_UNSIGNED_CHAR, l->deputy, HEARD_TAG, w->comm,
                          &heard_req[1]);
            } else if (l->deputy >= 0 && got == FB_OK) {
                got = FB_ERR_NOMEM;
            }
            if (got == FB_ERR_TIMEOUT || got == FB_ERR_INTERRUPTED) {
                judge_unanswered(l, r->node_of, answered, first, pass ? flag2 : flag, fig, typ,
                                 v, got);
                (void)loc_write_outputs(l);
                if (got == FB_ERR_TIMEOUT) {
                    char what[240];
                    unanswered_line(l, answered, what, sizeof what);
                    fb_watchdog_hold_rank0(0.0); /* the table is written: no deputy needed */
                    fb_watchdog_wait_begin(); /* rank 0 waited on the others */
                    fb_watchdog_expire(what);
                }
            }
            if (got != FB_OK) {
                worst = got;
                worst_rank = -1;
            }
            /* the failure as the job's rank, for locate's last line and env.json */
            if (worst != FB_OK)
                fb_world_culprit_set(worst, worst_rank);
            shared[0] = (int)worst;
            shared[1] = 0;
            if (worst == FB_OK) {
                judge_nodes(l, r->node_of, NULL, first, pass ? flag2 : flag, fig, typ, v);
                for (size_t i = 0; i < cells; i++)
                    shared[1] |= flag[i];
            }
        } else {
            fb_watchdog_phase("phase 1: waiting for the other nodes");
        }
        fb_watchdog_wait_begin();
        MPI_Waitall(2, heard_req, MPI_STATUSES_IGNORE); /* the deputy answered: it takes these */
        free(heard);
        answer_wait(&own);
        MPI_Bcast(shared, 2, MPI_INT, 0, w->comm);
        fb_watchdog_wait_end();
        if ((st = (fb_status)shared[0]) != FB_OK || !shared[1])
            goto out;
    }
    for (size_t at = 0; w->rank == 0 && at < cells; at++)
        if (flag[at] && flag2[at]) {
            int i = (int)(at / NODE_CASES), c = (int)(at % NODE_CASES);
            struct loc_suspect s = {.kind = "node", .node = i, .peer = -1, .rank = -1,
                                    .measured = fig[at], .typical = typ[at]};
            snprintf(s.bench, sizeof s.bench, "%s", loc_node_benches[c]);
            snprintf(s.metric, sizeof s.metric, "%s", node_cases[c]);
            snprintf(s.evidence, sizeof s.evidence,
                     "%s alone %.3g %s against the other nodes' median of %.3g %s (%.0f%%), "
                     "twice",
                     node_cases[c] + 5, fig[at], loc_node_units[c], typ[at], loc_node_units[c],
                     100.0 * fig[at] / typ[at]);
            if (!loc_suspect_add(l, &s))
                st = FB_ERR_NOMEM;
        }
out:
    if (w->rank == 0 && l->deputy >= 0)
        fb_run_record_file_current(false);
    fb_watchdog_leave_rank0(0.0);
    fb_watchdog_hold_rank0(0.0);
    node_run_close(&n);
    free(answered);
    free(v);
    free(flag);
    free(flag2);
    free(fig);
    free(typ);
    return st;
}

/* ---- stragglers ---- */

/* Rank 0: a link suspect with a straggler's node at one end is that straggler's doing, not the
 * link's (a starved CPU moves the node's traffic late: TCP on a host fabric, or staging): the
 * link is dropped from the suspects and its figure kept in the straggler's evidence, so an
 * innocent peer is not named. */
static void links_to_stragglers(struct loc *l)
{
    size_t kept = 0;

    for (size_t i = 0; i < l->nsus; i++) {
        struct loc_suspect *s = &l->sus[i];
        bool explained = false;

        for (size_t j = 0; j < l->nsus && !explained && strcmp(s->kind, "link") == 0; j++) {
            struct loc_suspect *g = &l->sus[j];
            size_t used;

            if (strcmp(g->kind, "rank") != 0 || (g->node != s->node && g->node != s->peer))
                continue;
            explained = true;
            used = strlen(g->evidence);
            snprintf(g->evidence + used, sizeof g->evidence - used,
                     "; its node's link %s-%s read %.3g GB/s against a typical %.3g (the "
                     "straggler's, not the link's)", l->name[s->node], l->name[s->peer],
                     s->measured, s->typical);
        }
        if (!explained)
            l->sus[kept++] = *s;
    }
    l->nsus = kept;
}

/* Collective: every rank's compute-free loop at once; a rank far slower than the median rank
 * twice in a row is named. */
static fb_status phase_stragglers(struct loc *l, struct fb_runner *r)
{
    const struct fb_world *w = &l->s.world;
    double *t = malloc((size_t)w->size * sizeof *t), *t1 = malloc((size_t)w->size * sizeof *t1);
    bool *f = calloc((size_t)w->size, sizeof *f), *f1 = calloc((size_t)w->size, sizeof *f1);
    double med = 0.0, med1 = 0.0;
    int any = 0;
    fb_status st = t && t1 && f && f1 ? FB_OK : FB_ERR_NOMEM;

    if ((st = fb_world_agree(w, st)) != FB_OK || w->size < 3)
        goto out;
    for (int pass = 0; pass < 2; pass++) {
        size_t first = w->rank == 0 ? l->res.nrows : 0;
        if ((st = loc_run_bench(l, r, &fb_bench_locate_arrive, NULL, 0)) != FB_OK)
            goto out;
        if (w->rank == 0) {
            for (int k = 0; k < w->size; k++)
                (pass ? t : t1)[k] = loc_rank_figure(&l->res, first, "locate_arrive", "loop",
                                                     "time", k);
            any = fb_locate_stragglers(pass ? t : t1, w->size, l->tolerance, pass ? f : f1,
                                       pass ? &med : &med1) > 0;
        }
        MPI_Bcast(&any, 1, MPI_INT, 0, w->comm);
        if (!any)
            goto out;
    }
    if (w->rank == 0)
        loc_table_lock();
    for (int k = 0; w->rank == 0 && k < w->size; k++)
        if (f[k] && f1[k]) {
            struct loc_suspect s = {.kind = "rank", .node = r->node_of[k], .peer = -1, .rank = k,
                                    .measured = t[k], .typical = med};
            snprintf(s.bench, sizeof s.bench, "locate_arrive");
            snprintf(s.metric, sizeof s.metric, "time");
            snprintf(s.evidence, sizeof s.evidence,
                     "rank=%d; its compute-free loop took %.0f and %.0f us against a median rank's "
                     "%.0f and %.0f us (%.1fx)", k, t1[k], t[k], med1, med, t[k] / med);
            if (!loc_suspect_add(l, &s))
                st = FB_ERR_NOMEM;
        }
    if (w->rank == 0) {
        links_to_stragglers(l);
        loc_table_unlock();
    }
out:
    free(t);
    free(t1);
    free(f);
    free(f1);
    return st;
}

/* ---- the whole locate ---- */

const char *loc_stage_name(enum loc_stage s)
{
    switch (s) {
    case LOC_STAGE_NODES: return "phase 1 (each node alone)";
    case LOC_STAGE_PAIRS: return "phase 2 (the tournament and its retests)";
    case LOC_STAGE_STRAGGLERS: return "the straggler check";
    default: return "its outputs";
    }
}

static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;

void loc_table_lock(void) { pthread_mutex_lock(&table_mu); }
void loc_table_unlock(void) { pthread_mutex_unlock(&table_mu); }

/* Rank 0's watchdog, at a timeout after phase 1, from fb_watchdog_view (every rank's watchdog
 * told rank 0 where it was): each node with a rank still working while the others waited is a
 * `node` suspect of metric "hang"; else each node with a rank that sent nothing while others
 * did (dead, frozen, or cut off: under srun the others live on after a rank dies) is one of
 * metric "silent". None without the view (below MPI_THREAD_MULTIPLE), nor when every rank
 * waited (a link, or MPI itself: no node to blame). */
static void name_working(struct loc *l)
{
    int size = l->s.world.size, n, working = 0;
    struct fb_watchdog_rank *v;

    if (!l->node_of || !(v = calloc((size_t)size, sizeof *v)))
        return;
    n = fb_watchdog_view(v, size);
    for (int k = 0; k < n; k++)
        working += v[k].reported && v[k].working;
    for (int i = 0; i < l->nodes && n > 0; i++) {
        struct loc_suspect s = {.kind = "node", .node = i, .peer = -1, .rank = -1,
                                .measured = NAN, .typical = NAN};
        char ranks[48] = "";
        size_t used = 0;
        int first = -1;
        for (int k = 0; k < n; k++) {
            /* the working ranks when some are; else the silent ones */
            if (l->node_of[k] != i || (working ? !v[k].reported || !v[k].working
                                               : v[k].reported))
                continue;
            if (first < 0)
                first = k;
            if (used + 12 < sizeof ranks)
                used += (size_t)snprintf(ranks + used, sizeof ranks - used, "%s%d",
                                         used ? "," : "", k);
        }
        if (first < 0)
            continue;
        if (working) {
            snprintf(s.bench, sizeof s.bench, "%s",
                     v[first].bench[0] ? v[first].bench : "locate");
            snprintf(s.metric, sizeof s.metric, "hang");
            snprintf(s.evidence, sizeof s.evidence,
                     "no answer in %s: rank(s) %s still working in '%.48s' of %.24s %.64s "
                     "after %d s, while the ranks that answered waited (hung)",
                     loc_stage_name(l->stage), ranks, v[first].phase, s.bench, v[first].point,
                     (int)(v[first].age_s + 0.5));
        } else {
            snprintf(s.bench, sizeof s.bench, "locate");
            snprintf(s.metric, sizeof s.metric, "silent");
            snprintf(s.evidence, sizeof s.evidence,
                     "no answer in %s: rank(s) %s sent rank 0 no state at the timeout, while "
                     "the others waited (dead, frozen, or cut off)",
                     loc_stage_name(l->stage), ranks);
        }
        if (!loc_suspect_add(l, &s))
            break;
    }
    free(v);
}

void loc_write_stopped(void *arg, const char *state, const char *detail)
{
    struct loc *l = arg;

    (void)detail;
    /* the main thread may be changing the table (a signal while rank 0 judges): half a
     * second, as for results.csv (run_record.c), then the table is left unwritten */
    if (!fb_clock_lock_within(&table_mu, 0.5)) {
        fb_warn("locate: the node table of the stopped job was not written (rank 0 was "
                "changing it)");
        return;
    }
    if (!l->stopped[0] && l->stage > LOC_STAGE_NODES && l->stage < LOC_STAGE_DONE) {
        snprintf(l->stopped, sizeof l->stopped, "%s", state);
        /* the tournament's verdicts come at its end: none of it is shown unfinished */
        if (l->stage == LOC_STAGE_PAIRS)
            l->nsus = l->nsus_nodes;
        if (strcmp(state, "timeout") == 0)
            name_working(l);
        if (loc_write_outputs(l) != FB_OK)
            fb_error("locate: the node table of the stopped job was not written");
    }
    pthread_mutex_unlock(&table_mu);
}

int fb_locate_main(struct loc *l)
{
    const struct fb_world *w = &l->s.world;
    struct fb_runner runner = {0};
    bool runner_up = false;
    double t0;
    char kind, why[160] = "";
    int a, b;
    fb_status st;

    st = fb_session_open(&l->s, l->opt.backend, l->opt.coll, l->opt.allow_oversubscribe);
    if (st == FB_OK)
        st = fb_world_agree(w, fb_locate_test_slow(&kind, &a, &b));
    if (st != FB_OK) {
        fb_session_close(&l->s);
        return fb_status_exit_code(st);
    }
    /* the compute stand-in's step on the host: 1 image at 32x32 (bench/locate.c), a figure to
     * compare the nodes by in tens of milliseconds, not compute's 8 images at 64x64 */
    if (l->s.be->on_cpu && l->opt.resolution == 0)
        l->opt.resolution = 32;
    fb_watchdog_phase("run folder");
    if ((st = open_folder(l)) != FB_OK)
        goto out;
    if ((st = fb_runner_init(&runner, &l->s, &l->opt, w->rank == 0 ? &l->res : NULL)) != FB_OK)
        goto out;
    runner_up = true;
    l->node_of = runner.node_of;
    if ((st = fb_world_agree(w, map_nodes(l, runner.node_of))) != FB_OK ||
        (st = one_kernel(l)) != FB_OK || (st = share_with_deputy(l)) != FB_OK ||
        (st = fb_world_agree(w, fb_expect_job_gather(&l->s, &l->expect))) != FB_OK)
        goto out;
    if (w->rank == 0) {
        fb_info("fabricbench %s (%s) locate: %d rank(s) on %d node(s)", FB_VERSION,
                FB_GIT_COMMIT, w->size, w->nodes);
        fb_info("backend: %s; collectives: %s; results: %s", l->s.be->name, l->s.coll->name,
                l->res.dir);
        if (l->one_kernel && l->s.be->on_cpu)
            fb_info("the %d nodes run on one kernel (boot_id %.8s...: containers or namespaces "
                    "of one machine): phase 1 measures them but does not judge them, each "
                    "node's figure being its share of the same CPUs", l->nodes, l->boot_id);
        if (!(l->heat = malloc((size_t)l->nodes * (size_t)l->nodes * sizeof *l->heat)) ||
            !(l->node_fig = malloc((size_t)l->nodes * NODE_CASES * sizeof *l->node_fig)))
            st = FB_ERR_NOMEM;
        for (size_t i = 0; l->node_fig && i < (size_t)l->nodes * NODE_CASES; i++)
            l->node_fig[i] = NAN;
        for (int c = 0; c < NODE_CASES; c++)
            l->node_med[c] = NAN;
        for (size_t i = 0; l->heat && i < (size_t)l->nodes * (size_t)l->nodes; i++)
            l->heat[i] = NAN;
    }
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;
    if ((st = phase_nodes(l, &runner)) != FB_OK)
        goto out;
    /* phase 1 is judged: a job stopped from here on still leaves its node table */
    if (w->rank == 0) {
        node_expected(l);
        l->nsus_nodes = l->nsus;
        fb_run_record_also(loc_write_stopped, l);
    }
    l->stage = LOC_STAGE_PAIRS;
    if ((st = loc_phase_pairs(l, &runner)) != FB_OK)
        goto out;
    loc_table_lock();
    l->stage = LOC_STAGE_STRAGGLERS;
    loc_table_unlock();
    t0 = fb_clock_now_us();
    if ((st = phase_stragglers(l, &runner)) != FB_OK)
        goto out;
    l->phase_s[3] = (fb_clock_now_us() - t0) / 1e6;
    if (w->rank == 0) {
        fb_run_record_also(NULL, NULL);
        loc_table_lock();
        l->stage = LOC_STAGE_DONE;
        loc_table_unlock();
        fb_run_record_lock();
        st = fb_results_flush(&l->res);
        fb_run_record_unlock();
        if (st == FB_OK)
            st = loc_write_outputs(l);
    }
    st = fb_world_agree(w, st);
out:
    loc_table_lock();
    l->node_of = NULL;
    loc_table_unlock();
    if (runner_up)
        fb_runner_release(&runner);
    if (st != FB_OK)
        fb_world_stop_reason(w, st, why, sizeof why);
    /* the failed rank and its error, as run names them (docs/timeouts.md) */
    if (w->rank == 0 && st != FB_OK && st != FB_ERR_USAGE) /* bad usage was said above */
        fb_error("locate %s: %s", st == FB_ERR_INTERRUPTED ? "interrupted" : "stopped", why);
    if (w->rank == 0 && l->env) {
        const char *state = st == FB_OK ? "complete" : st == FB_ERR_INTERRUPTED ? "interrupted"
                                       : st == FB_ERR_TIMEOUT ? "timeout" : "failed";
        if (fb_run_record_mark(state, st == FB_OK ? "" : why) != FB_OK && st == FB_OK)
            st = FB_ERR_IO;
        fb_run_record_also(NULL, NULL);
        if (st != FB_OK) /* a rank's error or a signal after phase 1: what finished is judged */
            loc_write_stopped(l, state, why);
    }
    if (w->rank == 0) {
        fb_log_set_file(NULL);
        if (l->log)
            fclose(l->log);
        fb_run_record_set(NULL, NULL, NULL);
        cJSON_Delete(l->env);
    }
    fb_results_release(&l->res); /* rank 0's, and the deputy's rows in memory */
    {
        int nsus = (int)l->nsus;
        MPI_Bcast(&nsus, 1, MPI_INT, 0, w->comm);
        fb_session_close(&l->s);
        if (st != FB_OK)
            return fb_status_exit_code(st);
        return nsus > 0 ? 1 : 0;
    }
}

void fb_locate_free(struct loc *l)
{
    if (!l)
        return;
    free(l->lead);
    free(l->name);
    free(l->sus);
    free(l->heat);
    free(l->node_fig);
    free(l->node_exp);
    fb_expect_job_release(&l->expect);
    free(l);
}

/* The verdicts on an NCCL log report: the classic misconfigurations every field guide checks
 * NCCL's INFO log for (shared memory where GPUs could talk directly, TCP sockets where
 * InfiniBand exists, GPUDirect RDMA off), each as one line with its likely cause. The rules
 * are documented in docs/nccl-log.md; keep the two in step. */
#define _POSIX_C_SOURCE 200809L
#include "nccl_verdict.h"

#include <stdio.h>
#include <string.h>

static size_t sum(const size_t *counts)
{
    size_t s = 0;

    for (int p = 0; p < FB_NCCL_PATHS; p++)
        s += counts[p];
    return s;
}

/* Whether the environment list holds NAME=VALUE with one of the given values ("" = any). */
static bool env_has(const char *env, const char *name, const char *const *values)
{
    char key[64];
    const char *p;

    snprintf(key, sizeof key, "%s=", name);
    for (p = strstr(env, key); p; p = strstr(p + 1, key)) {
        const char *v = p + strlen(key);
        size_t n = strcspn(v, ",");
        if (p != env && p[-1] != ',')
            continue;
        for (int i = 0; values[i]; i++)
            if (!values[i][0] || (strlen(values[i]) == n && strncmp(v, values[i], n) == 0))
                return true;
    }
    return false;
}

static void set(struct fb_nccl_verdict *v, const char *check, enum fb_verdict verdict)
{
    v->check = check;
    v->verdict = verdict;
    v->text[0] = '\0';
}

static void verdict_version(const struct fb_nccl_report *r, struct fb_nccl_verdict *v)
{
    if (!r->version[0]) {
        set(v, "nccl_version", FB_SKIP);
        snprintf(v->text, sizeof v->text, "no line states NCCL's version");
    } else if (r->version_other[0]) {
        /* ranks that load different NCCL libraries can hang or corrupt collectives */
        set(v, "nccl_version", FB_WARN);
        snprintf(v->text, sizeof v->text,
                 "ranks run different NCCL versions: %s and %s (different libraries on the "
                 "library path of some nodes?)", r->version, r->version_other);
    } else {
        set(v, "nccl_version", FB_PASS);
        snprintf(v->text, sizeof v->text, "NCCL %s", r->version);
    }
}

static void verdict_intra(const struct fb_nccl_report *r, struct fb_nccl_verdict *v)
{
    static const char *const disable[] = {"1", NULL};
    /* levels short of SYS keep P2P from GPUs further apart than the level */
    static const char *const level[] = {"LOC", "NVL", "PIX", "PXB", "PHB", "0", "1", "2", "3",
                                        "4", NULL};
    size_t total = sum(r->intra), shm = r->intra[FB_NCCL_SHM], p2p = r->intra[FB_NCCL_P2P];

    if (!total) {
        set(v, "nccl_intra", FB_SKIP);
        snprintf(v->text, sizeof v->text, "no intra-node connections in the log");
    } else if (!shm) {
        set(v, "nccl_intra", FB_PASS);
        snprintf(v->text, sizeof v->text, "%zu intra-node connections: %zu through GPU "
                 "peer-to-peer (P2P)", total, p2p);
    } else if (env_has(r->env, "NCCL_P2P_DISABLE", disable) ||
               env_has(r->env, "NCCL_P2P_LEVEL", level)) {
        /* the environment took the choice from NCCL: certainly a setting, not the machine */
        set(v, "nccl_intra", FB_FAIL);
        snprintf(v->text, sizeof v->text, "%zu of %zu intra-node connections through shared "
                 "memory (SHM), as the environment asks: %.200s", shm, total, r->env);
    } else if (p2p) {
        /* P2P works here for some pairs: the others are likely across CPU sockets */
        set(v, "nccl_intra", FB_WARN);
        snprintf(v->text, sizeof v->text, "%zu of %zu intra-node connections through shared "
                 "memory (SHM), %zu through P2P: those GPUs cannot reach each other "
                 "directly (across CPU sockets? ACS on their PCIe switch?)", shm, total, p2p);
    } else {
        set(v, "nccl_intra", FB_WARN);
        snprintf(v->text, sizeof v->text, "all %zu intra-node connections through shared "
                 "memory (SHM): P2P disabled or not possible (NCCL_P2P_DISABLE? IOMMU/ACS? "
                 "GPUs across sockets?)", total);
    }
}

static void verdict_inter(const struct fb_nccl_report *r, struct fb_nccl_verdict *v)
{
    size_t total = sum(r->inter), sock = r->inter[FB_NCCL_SOCKET];
    size_t ib = r->inter[FB_NCCL_IB] + r->inter[FB_NCCL_IB_GDR];

    if (!total) {
        set(v, "nccl_inter", FB_SKIP);
        snprintf(v->text, sizeof v->text, "no inter-node connections in the log");
    } else if (sock && (r->ib_available || ib)) {
        set(v, "nccl_inter", FB_FAIL);
        snprintf(v->text, sizeof v->text, "%zu of %zu inter-node connections through TCP "
                 "sockets although NCCL found InfiniBand (%.80s): NCCL_IB_DISABLE? NCCL_NET? "
                 "IB plugin failing?%s%.40s", sock, total, r->nics[0] ? r->nics : "NET/IB",
                 r->env[0] ? " environment: " : "", r->env);
    } else if (sock) {
        set(v, "nccl_inter", FB_WARN);
        snprintf(v->text, sizeof v->text, "%zu of %zu inter-node connections through TCP "
                 "sockets: NCCL %s (no InfiniBand, libibverbs missing, or NCCL_IB_DISABLE?)",
                 sock, total, r->ib_missing ? "found no InfiniBand device" : "used no InfiniBand");
    } else {
        set(v, "nccl_inter", FB_PASS);
        snprintf(v->text, sizeof v->text, "%zu inter-node connections, none through TCP "
                 "sockets (%zu InfiniBand, %zu another network plugin, %zu multi-node NVLink)",
                 total, ib, r->inter[FB_NCCL_NET_OTHER], r->inter[FB_NCCL_P2P]);
    }
}

static void verdict_gdr(const struct fb_nccl_report *r, struct fb_nccl_verdict *v)
{
    size_t off = r->inter[FB_NCCL_IB], on = r->inter[FB_NCCL_IB_GDR];

    if (!off && !on) {
        set(v, "nccl_gdr", FB_SKIP);
        snprintf(v->text, sizeof v->text, "no InfiniBand connections in the log");
    } else if (off && r->dmabuf[0]) {
        /* DMA-BUF gives GPUDirect RDMA without nvidia-peermem: the cause is elsewhere */
        set(v, "nccl_gdr", FB_WARN);
        snprintf(v->text, sizeof v->text, "GPUDirect RDMA off on %zu of %zu InfiniBand "
                 "connections: data is staged through host memory, although DMA-BUF is "
                 "available (GPU device %.40s) (NCCL_DMABUF_ENABLE=0? NCCL_NET_GDR_LEVEL? GPU "
                 "and NIC far apart in PCIe?)", off, off + on, r->dmabuf);
    } else if (off) {
        set(v, "nccl_gdr", FB_WARN);
        snprintf(v->text, sizeof v->text, "GPUDirect RDMA off on %zu of %zu InfiniBand "
                 "connections: data is staged through host memory (nvidia-peermem not "
                 "loaded? NCCL_NET_GDR_LEVEL? GPU and NIC far apart in PCIe?)", off, off + on);
    } else {
        set(v, "nccl_gdr", FB_PASS);
        snprintf(v->text, sizeof v->text, "GPUDirect RDMA on all %zu InfiniBand connections%s",
                 on, r->dmabuf[0] ? " (DMA-BUF available)" : "");
    }
}

/* Appends ", N what (devices)" for event e when the log has it. */
static size_t event_add(char *buf, size_t len, size_t used, const struct fb_nccl_report *r,
                        enum fb_nccl_event e, const char *what)
{
    if (!r->events[e] || used >= len)
        return used;
    used += (size_t)snprintf(buf + used, len - used, "%s%zu %s%s%.60s%s", used ? ", " : "",
                             r->events[e], what, r->event_nics[e][0] ? " (" : "",
                             r->event_nics[e], r->event_nics[e][0] ? ")" : "");
    return used < len ? used : len;
}

/* InfiniBand faults NCCL reported: a port error or a fatal event (any release), a device
 * marked as failed (2.29.7 on, when NCCL fails its traffic over to the other devices and the
 * run goes on with less bandwidth). Recovery (2.30) is said, not forgiven: the run measured a
 * degraded fabric for a while. */
static void verdict_faults(const struct fb_nccl_report *r, struct fb_nccl_verdict *v)
{
    const size_t *e = r->events;
    size_t faults = 0;
    bool ib = r->ib_available || r->inter[FB_NCCL_IB] || r->inter[FB_NCCL_IB_GDR] ||
              strncmp(r->network, "IB", 2) == 0;
    char what[320] = "";
    size_t used = 0;

    for (int k = 0; k < FB_NCCL_EVENTS; k++)
        faults += fb_nccl_event_fault((enum fb_nccl_event)k) ? e[k] : 0;

    used = event_add(what, sizeof what, used, r, FB_NCCL_EV_PORT_ERROR, "port error(s)");
    used = event_add(what, sizeof what, used, r, FB_NCCL_EV_FATAL, "fatal event(s)");
    used = event_add(what, sizeof what, used, r, FB_NCCL_EV_DEV_FAILED, "device(s) marked as "
                     "failed");
    used = event_add(what, sizeof what, used, r, FB_NCCL_EV_FAILOVER, "failover(s) of a "
                     "connection to another device");
    used = event_add(what, sizeof what, used, r, FB_NCCL_EV_SPEED_CHANGE, "speed change(s)");
    used = event_add(what, sizeof what, used, r, FB_NCCL_EV_RECOVERY_FAILED, "recovery "
                     "given up");
    used = event_add(what, sizeof what, used, r, FB_NCCL_EV_RECOVERED, "recovered");
    used = event_add(what, sizeof what, used, r, FB_NCCL_EV_PORT_ACTIVE, "port(s) active again");
    if (faults) {
        set(v, "nccl_faults", FB_FAIL);
        snprintf(v->text, sizeof v->text, "InfiniBand faults during the run: %s%s; first: "
                 "%.150s", what, e[FB_NCCL_EV_FAILOVER] || e[FB_NCCL_EV_DEV_FAILED]
                     ? " (NCCL failed over to its other ports: the run went on with less "
                       "bandwidth)" : " (a port went down: check ibstat and the cable)",
                 r->first_fault);
    } else if (e[FB_NCCL_EV_FAILOVER] || e[FB_NCCL_EV_RECOVERY_FAILED] ||
               e[FB_NCCL_EV_SPEED_CHANGE]) {
        /* the failover or a slower port without the fault that caused it (WARN lines cut?) */
        set(v, "nccl_faults", FB_WARN);
        snprintf(v->text, sizeof v->text, "the network changed during the run: %s (no port "
                 "error in the log; was it cut?)", what);
    } else if (!ib && !used) {
        set(v, "nccl_faults", FB_SKIP);
        snprintf(v->text, sizeof v->text, "no InfiniBand in the log");
    } else {
        set(v, "nccl_faults", FB_PASS);
        snprintf(v->text, sizeof v->text, "no InfiniBand port error, fatal event or failed "
                 "device in the log (%zu NCCL WARN line(s))%s%s", r->warns, used ? ": " : "",
                 what);
    }
}

enum fb_verdict fb_nccl_verdicts(const struct fb_nccl_report *r,
                                 struct fb_nccl_verdict out[FB_NCCL_VERDICTS])
{
    enum fb_verdict worst = FB_SKIP;

    verdict_version(r, &out[0]);
    verdict_intra(r, &out[1]);
    verdict_inter(r, &out[2]);
    verdict_gdr(r, &out[3]);
    verdict_faults(r, &out[4]);
    for (int i = 0; i < FB_NCCL_VERDICTS; i++)
        worst = fb_verdict_worst(worst, out[i].verdict);
    return worst;
}

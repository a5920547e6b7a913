/* The expected-figure model's links: PCIe, NICs, NVLink and the ring's slowest hop. The rates
 * are the standards' (PCIe's GT/s and encodings, Ethernet's framing, InfiniBand's data rates);
 * what hardware reaches of them is an efficiency from expect_eff.c. */
#include "expect.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"

double fb_expect_pcie_raw(double gts, int width, int *gen)
{
    static const struct {
        double gts;
        int gen;
        double encoding;
    } gens[] = {
        {2.5, 1, 8.0 / 10.0},    {5.0, 2, 8.0 / 10.0},    {8.0, 3, 128.0 / 130.0},
        {16.0, 4, 128.0 / 130.0}, {32.0, 5, 128.0 / 130.0}, {64.0, 6, 242.0 / 256.0},
    };

    if (gen)
        *gen = 0;
    if (!(width == 1 || width == 2 || width == 4 || width == 8 || width == 12 || width == 16 ||
          width == 32))
        return NAN;
    for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++) {
        if (fabs(gts - gens[i].gts) < 0.01) {
            if (gen)
                *gen = gens[i].gen;
            return gts * width * gens[i].encoding / 8.0;
        }
    }
    return NAN;
}

/* Ethernet framing, bytes: IPv4 20 + TCP 20 + TCP timestamps 12 inside the MTU; around it on
 * the wire the Ethernet header 14, FCS 4, preamble and start delimiter 8, inter-frame gap 12. */
enum { ETH_IN_MTU = 20 + 20 + 12, ETH_WIRE = 14 + 4 + 8 + 12 };

double fb_expect_nic_payload(const struct fb_expect_nic *nic)
{
    int mtu = nic->mtu > 0 ? nic->mtu : 1500;

    if (!(nic->gbps > 0) || !isfinite(nic->gbps))
        return NAN;
    if (nic->kind == FB_NIC_IB)
        return nic->gbps / 8.0 * fb_expect_eff("ib");
    if (mtu <= ETH_IN_MTU)
        return NAN;
    return nic->gbps / 8.0 * (double)(mtu - ETH_IN_MTU) / (double)(mtu + ETH_WIRE);
}

void fb_expect_nic_bound(const struct fb_expect_nic *nic, char *bound, size_t len)
{
    if (nic->kind == FB_NIC_IB)
        snprintf(bound, len, "IB %g Gb/s %s", nic->gbps, nic->name);
    else if (nic->gbps < 1)
        snprintf(bound, len, "eth %g Mb/s %s", nic->gbps * 1000, nic->name);
    else
        snprintf(bound, len, "eth %g Gb/s %s", nic->gbps, nic->name);
}

bool fb_expect_named(const char *only, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = only; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        /* an InfiniBand port "mlx5_0/1" is named by its device too */
        if (strchr(name, '/') && len == (size_t)(strchr(name, '/') - name) &&
            strncmp(p, name, len) == 0)
            return true;
        p += len;
        if (*p == ',')
            p++;
    }
    return false;
}

const struct fb_expect_nic *fb_expect_node_nic(const struct fb_expect_node *n, const char *only)
{
    const struct fb_expect_nic *best = NULL;

    for (int pass = 0; pass < 2 && !best; pass++) {
        enum fb_nic_kind kind = pass == 0 ? FB_NIC_IB : FB_NIC_ETH;
        for (int i = 0; i < n->nnics; i++) {
            const struct fb_expect_nic *c = &n->nic[i];
            if (c->kind != kind || !c->up || !(c->gbps > 0))
                continue;
            if (only && *only && !fb_expect_named(only, c->name))
                continue;
            if (!best || c->gbps > best->gbps)
                best = c;
        }
    }
    return best;
}

void fb_expect_node_net(const struct fb_expect_node *n, const char *only, struct fb_expect_fig *f)
{
    const struct fb_expect_nic *nic = fb_expect_node_nic(n, only);

    f->gbps = NAN;
    f->bound[0] = '\0';
    if (!nic)
        return;
    f->gbps = fb_expect_nic_payload(nic);
    fb_expect_nic_bound(nic, f->bound, sizeof f->bound);
}

void fb_expect_gpu_h2d(const struct fb_expect_gpu *g, struct fb_expect_fig *f)
{
    int gen;
    double raw = fb_expect_pcie_raw(g->gts, g->width, &gen);

    f->gbps = raw * fb_expect_eff("pcie_copy");
    if (isnan(raw))
        f->bound[0] = '\0';
    else if (g->cur_width > 0 && g->cur_width < g->width)
        /* trained narrower than it can: a fault the bound says (a lower speed now is an idle
         * GPU's, and it rises under load: `expect` shows it, the bound does not) */
        snprintf(f->bound, sizeof f->bound, "PCIe Gen%d x%d (GPU %.12s now x%d)", gen % 10,
                 g->width % 100, g->bus, g->cur_width % 100);
    else
        snprintf(f->bound, sizeof f->bound, "PCIe Gen%d x%d (GPU %s)", gen, g->width, g->bus);
}

void fb_expect_gpu_h2d_shared(const struct fb_expect_gpu *g, int sharing, struct fb_expect_fig *f)
{
    int gen;
    double up;

    fb_expect_gpu_h2d(g, f);
    if (!g->up[0] || sharing < 2)
        return;
    up = fb_expect_pcie_raw(g->up_gts, g->up_width, &gen) * fb_expect_eff("pcie_copy") / sharing;
    if (isnan(up) || !(up < f->gbps || isnan(f->gbps)))
        return;
    f->gbps = up;
    /* (gen 1-6, widths to 32, a job's GPUs behind a port under 1000: the text fits) */
    snprintf(f->bound, sizeof f->bound, "PCIe Gen%d x%d uplink %.12s / %d GPUs", gen % 10,
             g->up_width % 100, g->up, sharing % 1000);
}

/* links x the generation's per-link rate (25 GB/s a direction for NVLink 2-4, 50 for 5) x the
 * efficiency `eff`: a peer copy's or a ring's */
static void nvlinks(int gen, int links, const char *eff, struct fb_expect_fig *f)
{
    double per_link = gen >= 2 && gen <= 4 ? 25.0 : gen == 5 ? 50.0 : NAN;

    f->gbps = links > 0 ? per_link * links * fb_expect_eff(eff) : NAN;
    if (isnan(f->gbps))
        f->bound[0] = '\0';
    else
        snprintf(f->bound, sizeof f->bound, "NVLink%d x%d", gen, links);
}

void fb_expect_nvlink(int gen, int links, struct fb_expect_fig *f)
{
    nvlinks(gen, links, "nvlink", f);
}

void fb_expect_min(const struct fb_expect_fig *a, const struct fb_expect_fig *b,
                   struct fb_expect_fig *out)
{
    const struct fb_expect_fig *m;

    if (isnan(a->gbps))
        m = b;
    else if (isnan(b->gbps))
        m = a;
    else
        m = b->gbps < a->gbps ? b : a;
    if (m != out)
        *out = *m;
}

void fb_expect_path_min(const struct fb_expect_fig *a, const struct fb_expect_fig *b,
                        struct fb_expect_fig *out)
{
    if (isnan(a->gbps) || isnan(b->gbps)) {
        out->gbps = NAN;
        out->bound[0] = '\0';
        return;
    }
    fb_expect_min(a, b, out);
}

void fb_expect_ring_nodes(const struct fb_expect_ring_node *nodes, int n, struct fb_expect_fig *f)
{
    struct fb_expect_fig hop;
    bool known = true;
    int ranks = 0;

    f->gbps = NAN;
    f->bound[0] = '\0';
    for (int i = 0; i < n; i++)
        ranks += nodes[i].ngpus;
    if (n < 1 || ranks < 2)
        return;
    for (int i = 0; i < n && known; i++) {
        if (nodes[i].ngpus >= 2) {
            fb_expect_node_ring(nodes[i].gpu, nodes[i].ngpus, &hop);
            known = !isnan(hop.gbps);
            fb_expect_min(f, &hop, f);
        }
        if (n >= 2) {
            known = known && !isnan(nodes[i].rails.gbps);
            fb_expect_min(f, &nodes[i].rails, f);
        }
    }
    if (!known) {
        f->gbps = NAN;
        f->bound[0] = '\0';
    }
}

void fb_expect_node_rails(const struct fb_expect_node *n, const char *only, int ranks,
                          struct fb_expect_fig *f)
{
    const struct fb_expect_nic *best = fb_expect_node_nic(n, only);
    int rails = 0;

    f->gbps = NAN;
    f->bound[0] = '\0';
    if (!best || ranks < 1)
        return;
    for (int i = 0; i < n->nnics && rails < ranks; i++) {
        const struct fb_expect_nic *c = &n->nic[i];
        rails += c->kind == best->kind && c->up && c->gbps == best->gbps &&
                 (!only || !*only || fb_expect_named(only, c->name));
    }
    f->gbps = fb_expect_nic_payload(best) * rails;
    fb_expect_nic_bound(best, f->bound, sizeof f->bound);
    if (rails > 1) {
        /* "IB 200 Gb/s x8 mlx5_0/1...": the first port names the rails */
        char one[FB_EXPECT_BOUND];
        fb_expect_nic_bound(best, one, sizeof one);
        const char *name = strrchr(one, ' ');
        snprintf(f->bound, sizeof f->bound, "%.*s x%d%.20s...", (int)(name - one), one,
                 rails % 100, name);
    }
}

/* Links from a to the GPU at bus b: direct ones. */
static int direct_links(const struct fb_expect_gpu *a, const char *b)
{
    for (int i = 0; i < a->npeers && i < FB_EXPECT_PEERS; i++)
        if (strcmp(a->peer[i].bus, b) == 0)
            return a->peer[i].links;
    return 0;
}

/* NVLinks between two GPUs: direct, else through NVSwitches (the fewer of the two sides'). */
static int nvlinks_between(const struct fb_expect_gpu *a, const struct fb_expect_gpu *b)
{
    int d = direct_links(a, b->bus);

    if (d > 0)
        return d;
    if (a->nvl_switch > 0 && b->nvl_switch > 0)
        return a->nvl_switch < b->nvl_switch ? a->nvl_switch : b->nvl_switch;
    return 0;
}

void fb_expect_gpu_pair(const struct fb_expect_gpu *a, const struct fb_expect_gpu *b,
                        struct fb_expect_fig *f)
{
    int links = nvlinks_between(a, b), ga, gb;
    double ra, rb;
    const struct fb_expect_gpu *slow;

    f->gbps = NAN;
    f->bound[0] = '\0';
    if (links > 0) {
        fb_expect_nvlink(fb_expect_gpu_nvlink_gen(a->model), links, f);
        return;
    }
    ra = fb_expect_pcie_raw(a->gts, a->width, &ga);
    rb = fb_expect_pcie_raw(b->gts, b->width, &gb);
    if (isnan(ra) || isnan(rb))
        return;
    slow = rb < ra ? b : a;
    if (a->up[0] && strcmp(a->up, b->up) == 0) {
        f->gbps = (rb < ra ? rb : ra) * fb_expect_eff("pcie_copy");
        snprintf(f->bound, sizeof f->bound, "PCIe Gen%d x%d switch %.12s", (slow == a ? ga : gb) % 10,
                 slow->width % 100, a->up);
    } else if (a->numa == b->numa || a->numa < 0 || b->numa < 0) {
        f->gbps = (rb < ra ? rb : ra) * fb_expect_eff("pcie_copy");
        snprintf(f->bound, sizeof f->bound, "PCIe Gen%d x%d root complex", (slow == a ? ga : gb) % 10,
                 slow->width % 100);
    }
    /* across NUMA nodes: the inter-socket link (UPI, xGMI) is not in sysfs */
}

void fb_expect_nvring(int gen, int links, struct fb_expect_fig *f)
{
    nvlinks(gen, links, "nvlink_ring", f);
}

/* Whether the GPUs reach each other by NVLink: one connected graph. */
static bool nvlink_connected(const struct fb_expect_gpu *const *g, int n)
{
    bool seen[FB_EXPECT_GPUS] = {false};
    int stack[FB_EXPECT_GPUS], top = 0, count = 0;

    if (n > FB_EXPECT_GPUS)
        return false;
    seen[0] = true;
    stack[top++] = 0;
    while (top > 0) {
        int i = stack[--top];
        count++;
        for (int k = 0; k < n; k++)
            if (!seen[k] && nvlinks_between(g[i], g[k]) > 0) {
                seen[k] = true;
                stack[top++] = k;
            }
    }
    return count == n;
}

void fb_expect_node_ring(const struct fb_expect_gpu *const *g, int n, struct fb_expect_fig *f)
{
    f->gbps = NAN;
    f->bound[0] = '\0';
    if (n < 2)
        return;
    if (nvlink_connected(g, n)) {
        /* each GPU's links toward the others: direct ones, and its switch links once */
        int fewest = -1, who = 0;
        for (int i = 0; i < n; i++) {
            int links = 0;
            bool via_switch = false;
            for (int k = 0; k < n; k++) {
                if (k == i)
                    continue;
                links += direct_links(g[i], g[k]->bus);
                via_switch = via_switch || (direct_links(g[i], g[k]->bus) == 0 &&
                                            g[i]->nvl_switch > 0 && g[k]->nvl_switch > 0);
            }
            links += via_switch ? g[i]->nvl_switch : 0;
            if (fewest < 0 || links < fewest) {
                fewest = links;
                who = i;
            }
        }
        fb_expect_nvring(fb_expect_gpu_nvlink_gen(g[who]->model), fewest, f);
        if (!isnan(f->gbps)) {
            size_t len = strlen(f->bound);
            snprintf(f->bound + len, sizeof f->bound - len, " (GPU %.12s)", g[who]->bus);
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        struct fb_expect_fig hop;
        fb_expect_gpu_pair(g[i], g[(i + 1) % n], &hop);
        if (isnan(hop.gbps)) {
            f->gbps = NAN;
            f->bound[0] = '\0';
            return;
        }
        fb_expect_min(f, &hop, f);
    }
}

void fb_expect_memcpy_calibrate(void *dst, const void *src, size_t bytes, int reps,
                                struct fb_expect_fig *f)
{
    double best = 0;

    for (int i = 0; i < reps; i++) {
        double t0 = fb_clock_now_s(), t;
        memcpy(dst, src, bytes);
        t = fb_clock_now_s() - t0;
        if (t > 0 && (best == 0 || t < best))
            best = t;
    }
    f->gbps = best > 0 ? (double)bytes / best / 1e9 : NAN;
    snprintf(f->bound, sizeof f->bound, "memcpy calibration %zu MiB best of %d",
             (bytes >> 20) % 100000, reps % 1000);
}

int fb_expect_nic_near(const struct fb_expect_nic *nic, const struct fb_expect_gpu *g)
{
    if (nic->root[0] && g->up[0] && strcmp(nic->root, g->up) == 0)
        return 2;
    return nic->numa >= 0 && g->numa >= 0 && nic->numa == g->numa ? 1 : 0;
}

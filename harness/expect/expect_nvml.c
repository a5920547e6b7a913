/* What NVML says of a node's GPUs, for the expected-figure model: their names and NVLinks, from
 * NVML itself (through hw's loader, fb_pair_link_nvml_gpu) or from a facts file in its place
 * (FB_NVML_FACTS; docs/expected.md), and a GPU's NVLink generation by its name. */
#include "expect.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "file_read.h"
#include "pair_link.h"

int fb_expect_gpu_nvlink_gen(const char *model)
{
    /* the longer names first: "GH200" holds "H200", "GB200" holds "B200" */
    static const struct {
        const char *in;
        int gen;
    } gens[] = {{"GH200", 4}, {"GB200", 5}, {"V100", 2}, {"A100", 3}, {"H100", 4},
                {"H200", 4},  {"H800", 4},  {"B200", 5}};

    for (size_t i = 0; model && i < sizeof gens / sizeof gens[0]; i++)
        if (strstr(model, gens[i].in))
            return gens[i].gen;
    return 0;
}

void fb_expect_gpu_peak(const char *model, const char *precision, struct fb_expect_fig *f)
{
    /* dense peaks, TFLOP/s, NVIDIA's datasheets (docs/reference-figures.md, "GPUs"); a part
     * is matched by two words of its name, so a PCIe or NVL part is not taken for the SXM one */
    static const struct {
        const char *a, *b, *label;
        double fp32, fp16;
    } parts[] = {
        {"V100", "SXM2", "V100-SXM2", 15.7, 125},
        {"A100", "SXM4", "A100-SXM4", 19.5, 312},
        {"H100", "HBM3", "H100-SXM5", 67, 989}, /* NVML's name of the SXM5 part */
        {"H100", "SXM5", "H100-SXM5", 67, 989},
        {"H200", "H200", "H200-SXM", 67, 989},
    };
    bool half = precision && (strcmp(precision, "fp16") == 0 || strcmp(precision, "bf16") == 0);
    bool single = precision && strcmp(precision, "fp32") == 0;

    f->gbps = NAN;
    f->bound[0] = '\0';
    if (!model || (!half && !single) || strstr(model, "NVL") || strstr(model, "PCIe"))
        return;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (strstr(model, parts[i].a) && strstr(model, parts[i].b)) {
            f->gbps = half ? parts[i].fp16 : parts[i].fp32;
            snprintf(f->bound, sizeof f->bound, "peak %s %s %g TFLOP/s", parts[i].label,
                     precision, f->gbps);
            return;
        }
}

/* "0000:3b:00.0" (lower case, as sysfs names it) from any spelling of a PCI address; false when
 * s is not one. */
static bool canonical_bus(const char *s, char *out, size_t len)
{
    unsigned d, b, v, f;
    char tail;

    if (sscanf(s, "%x:%x:%x.%x%c", &d, &b, &v, &f, &tail) != 4 || d > 0xffff || b > 0xff ||
        v > 0x1f || f > 7)
        return false;
    snprintf(out, len, "%04x:%02x:%02x.%x", d, b, v, f);
    return true;
}

/* The GPU at bus in n, added (with no PCIe link) when the node has room; NULL when it has not. */
static struct fb_expect_gpu *gpu_at(struct fb_expect_node *n, const char *bus)
{
    struct fb_expect_gpu *g;

    for (int i = 0; i < n->ngpus; i++)
        if (strcmp(n->gpu[i].bus, bus) == 0)
            return &n->gpu[i];
    if (n->ngpus >= FB_EXPECT_GPUS)
        return NULL;
    g = &n->gpu[n->ngpus++];
    memset(g, 0, sizeof *g);
    g->numa = -1;
    snprintf(g->bus, sizeof g->bus, "%s", bus);
    return g;
}

/* Adds links from g to peer; false when g has no room for another peer. */
static bool add_peer(struct fb_expect_gpu *g, const char *peer, int links)
{
    for (int i = 0; i < g->npeers; i++)
        if (strcmp(g->peer[i].bus, peer) == 0) {
            g->peer[i].links += links;
            return true;
        }
    if (g->npeers >= FB_EXPECT_PEERS)
        return false;
    snprintf(g->peer[g->npeers].bus, sizeof g->peer[0].bus, "%s", peer);
    g->peer[g->npeers++].links = links;
    return true;
}

static int gpu_by_bus(const void *a, const void *b)
{
    return strcmp(((const struct fb_expect_gpu *)a)->bus, ((const struct fb_expect_gpu *)b)->bus);
}

/* The NVLinks g has to peer already; 0 when none. */
static int links_between(const struct fb_expect_gpu *g, const char *peer)
{
    for (int i = 0; i < g->npeers; i++)
        if (strcmp(g->peer[i].bus, peer) == 0)
            return g->peer[i].links;
    return 0;
}

static fb_status bad(char *err, size_t errlen, const char *path, size_t line, const char *what)
{
    char shown[256];

    snprintf(err, errlen, "%s:%zu: %s", fb_escape_str(path, 160, shown, sizeof shown), line, what);
    return FB_ERR_USAGE;
}

fb_status fb_expect_nvml_load(const char *path, struct fb_expect_node *n, char *err, size_t errlen)
{
    struct fb_expect_node *work;
    char line[512], why[160], *text = NULL;
    size_t len = 0, pos, lineno = 0, ln;
    const char *l;
    bool nul;
    fb_status st;

    if ((st = fb_file_read(path, FB_FILE_SITE, false, &text, &len, err, errlen)) != FB_OK)
        return st;
    if (!(work = malloc(sizeof *work))) {
        char shown[256];
        snprintf(err, errlen, "NVML facts file '%s': out of memory",
                 fb_escape_str(path, 160, shown, sizeof shown));
        free(text);
        return FB_ERR_NOMEM;
    }
    *work = *n;
    pos = fb_file_bom(text, len);
    /* each line: its content without line end, blanks and '#' comment (fb_file_line) */
    while (st == FB_OK && fb_file_line(text, len, &pos, &lineno, &l, &ln, &nul)) {
        char word[16], a[40], b[40], ca[16], cb[16], *p = line;
        int used = 0;
        struct fb_expect_gpu *ga, *gb;

        if (!nul && ln == 0)
            continue;
        /* a CR inside the line, an ESC in a GPU's name (which reaches the screen): refused */
        if (!fb_file_line_text(l, ln, nul, line, sizeof line, why, sizeof why)) {
            st = bad(err, errlen, path, lineno, why);
            break;
        }
        /* the keyword first, then its bus id: each a whole word (one longer than its field
         * is not cut into two) */
        if (sscanf(p, "%15s%n", word, &used) != 1 ||
            (p[used] && !isspace((unsigned char)p[used])) ||
            (strcmp(word, "gpu") != 0 && strcmp(word, "nvlink") != 0)) {
            st = bad(err, errlen, path, lineno, "unknown line (expected 'gpu' or 'nvlink')");
            break;
        }
        p += used;
        if (sscanf(p, " %39s%n", a, &used) != 1 || (p[used] && !isspace((unsigned char)p[used]))) {
            st = bad(err, errlen, path, lineno, "expected 'gpu BUS NAME' or 'nvlink BUS PEER LINKS'");
        } else if (!canonical_bus(a, ca, sizeof ca)) {
            st = bad(err, errlen, path, lineno, "not a PCI bus id (expected like 0000:3b:00.0)");
        } else if (strcmp(word, "gpu") == 0) {
            const char *name = p + used;
            while (isspace((unsigned char)*name))
                name++;
            if (!*name || strlen(name) >= sizeof work->gpu[0].model)
                st = bad(err, errlen, path, lineno, "a GPU name of 1 to 47 characters is needed");
            else if (!(ga = gpu_at(work, ca)))
                st = bad(err, errlen, path, lineno, "more GPUs than the model holds (16)");
            else if (ga->model[0])
                st = bad(err, errlen, path, lineno, "this GPU's name was given already");
            else
                snprintf(ga->model, sizeof ga->model, "%s", name);
        } else {
            char num[24], tail[2], *end;
            long v = 0;
            if (sscanf(p + used, "%39s %23s %1s", b, num, tail) != 2)
                st = bad(err, errlen, path, lineno, "expected 'nvlink BUS PEER_BUS|switch LINKS'");
            else if ((errno = 0, v = strtol(num, &end, 10), errno || *end || v < 1 || v > 18))
                st = bad(err, errlen, path, lineno, "a link count from 1 to 18 is needed");
            else if (!(ga = gpu_at(work, ca)))
                st = bad(err, errlen, path, lineno, "more GPUs than the model holds (16)");
            else if (strcmp(b, "switch") == 0) {
                if (ga->nvl_switch > 0)
                    st = bad(err, errlen, path, lineno,
                             "this GPU's NVLinks to NVSwitches were given already");
                else
                    ga->nvl_switch = (int)v;
            } else if (!canonical_bus(b, cb, sizeof cb) || strcmp(ca, cb) == 0)
                st = bad(err, errlen, path, lineno, "the peer is not another GPU's PCI bus id");
            else if (!(gb = gpu_at(work, cb)) || !(ga = gpu_at(work, ca)))
                st = bad(err, errlen, path, lineno, "more GPUs than the model holds (16)");
            else if (links_between(ga, cb) > 0)
                /* one line a pair: both directions of nvidia-smi's matrix are the same links */
                st = bad(err, errlen, path, lineno,
                         "the NVLinks between these two GPUs were given already");
            else if (!add_peer(ga, cb, (int)v) || !add_peer(gb, ca, (int)v))
                st = bad(err, errlen, path, lineno, "more NVLink peers than the model holds (8)");
        }
    }
    free(text);
    if (st == FB_OK) {
        /* GPUs the file adds come in bus order with sysfs's, not after them */
        qsort(work->gpu, (size_t)work->ngpus, sizeof work->gpu[0], gpu_by_bus);
        *n = *work;
    }
    free(work);
    return st;
}

fb_status fb_expect_node_nvml(const char *facts, struct fb_expect_node *n, char *err, size_t errlen)
{
    const char *bus[FB_EXPECT_GPUS];
    struct fb_nvml_gpu *v;
    bool known[FB_EXPECT_GPUS];
    char why[160], cb[16];
    size_t len;

    if (facts && *facts)
        return fb_expect_nvml_load(facts, n, err, errlen);
    if (n->ngpus == 0)
        return FB_OK;
    if (!(v = calloc((size_t)n->ngpus, sizeof *v)))
        return FB_ERR_NOMEM;
    for (int i = 0; i < n->ngpus; i++)
        bus[i] = n->gpu[i].bus;
    if (!fb_pair_link_nvml_gpus(n->ngpus, bus, v, known, why, sizeof why)) {
        len = strlen(n->note);
        snprintf(n->note + len, sizeof n->note - len, "%sGPU names and NVLinks: %s",
                 len ? "; " : "", why);
        free(v);
        return FB_OK;
    }
    for (int i = 0; i < n->ngpus; i++) {
        struct fb_expect_gpu *g = &n->gpu[i];
        if (!known[i]) {
            len = strlen(n->note);
            snprintf(n->note + len, sizeof n->note - len, "%sGPU %s: not known to NVML",
                     len ? "; " : "", g->bus);
            continue;
        }
        snprintf(g->model, sizeof g->model, "%.47s", v[i].name);
        g->nvl_switch = v[i].to_switch;
        g->npeers = 0;
        for (int k = 0; k < v[i].npeers; k++)
            if (canonical_bus(v[i].peer[k].bus, cb, sizeof cb))
                (void)add_peer(g, cb, v[i].peer[k].links);
    }
    free(v);
    return FB_OK;
}

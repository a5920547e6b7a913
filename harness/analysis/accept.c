/* accept's checks: a profile's expectations against a run folder's results.csv (read with
 * fb_results_read), env.json (cJSON) and NCCL logs (fb_nccl_report_dir). The binding check is
 * doctor's, replayed over the facts env.json recorded. Figures are medians of repeated trials;
 * the rule is in accept.h and docs/accept.md. */
#define _GNU_SOURCE
#include "accept.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "doctor.h"
#include "json_file.h"
#include "log.h"
#include "nccl_report.h"
#include "results_read.h"
#include "run_state.h"

/* What every check reads. */
struct ctx {
    const struct fb_profile *p;
    const char *run_dir;
    struct fb_read_results csv;
    cJSON *env;         /* NULL when the run has no env.json */
    size_t *used;       /* indexes of the rows judged by a figure check, for the spread */
    size_t nused;
    struct fb_accept *out;
    bool nomem;
};

static struct fb_accept_check *add(struct ctx *c, const char *name)
{
    struct fb_accept *a = c->out;
    struct fb_accept_check *k;

    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 16;
        void *m = realloc(a->checks, cap * sizeof *a->checks);
        if (!m) {
            c->nomem = true;
            return NULL;
        }
        a->checks = m;
        a->cap = cap;
    }
    k = &a->checks[a->n++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    snprintf(k->measured, sizeof k->measured, "-");
    k->margin_pct = NAN;
    k->verdict = FB_SKIP;
    return k;
}

static void set(char *buf, size_t len, const char *fmt, ...) FB_PRINTF(3, 4);
static void set(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

#define SET(field, ...) set(field, sizeof field, __VA_ARGS__)

/* ---- figures from results.csv ---------------------------------------------------------- */

/* Which rows a figure check judges: "" and -1 match anything. */
struct want {
    const char *bench, *kase, *metric, *link, *dtype;
    long long bytes;
    int ranks;
    bool per_rank; /* src must be set: one rank's (or one pair's) own figure */
};

static bool matches(const struct fb_row *r, const struct want *w)
{
    return strcmp(r->bench, w->bench) == 0 && (!*w->kase || strcmp(r->kase, w->kase) == 0) &&
           strcmp(r->metric, w->metric) == 0 && (!*w->link || strcmp(r->link, w->link) == 0) &&
           (!*w->dtype || strcmp(r->dtype, w->dtype) == 0) && (w->bytes < 0 || r->bytes == w->bytes) &&
           (w->ranks < 0 || r->ranks == w->ranks) && (!w->per_rank || r->src >= 0);
}

static void remember(struct ctx *c, size_t i)
{
    void *m = realloc(c->used, (c->nused + 1) * sizeof *c->used);

    if (!m) {
        c->nomem = true;
        return;
    }
    c->used = m;
    c->used[c->nused++] = i;
}

/* Judges every row that `w` selects against a floor `min` (unit `unit`): each row's median
 * must reach it, and the worst one is what the check shows. `what` describes the rows. */
static void floor_check(struct ctx *c, const char *name, const struct want *w, double min,
                        const char *unit, const char *what)
{
    struct fb_accept_check *k = add(c, name);
    const struct fb_read_row *worst = NULL;
    size_t nrows = 0, few = 0, fewest = (size_t)-1;
    size_t first_used = c->nused;

    if (!k)
        return;
    SET(k->expected, ">= %.4g %s", min, unit);
    for (size_t i = 0; i < c->csv.nrows; i++) {
        const struct fb_read_row *r = &c->csv.rows[i];
        if (!matches(&r->row, w))
            continue;
        nrows++;
        if (r->row.st.samples < (size_t)c->p->min_samples) {
            few++;
            if (r->row.st.samples < fewest)
                fewest = r->row.st.samples;
            continue;
        }
        remember(c, i);
        if (!worst || r->row.st.median < worst->row.st.median)
            worst = r;
    }
    if (nrows == 0) {
        SET(k->why, "not measured: results.csv has no %s", what);
        return;
    }
    if (few) {
        c->nused = first_used; /* a check that is not judged adds nothing to the spread */
        SET(k->why, "%zu of %zu rows (%s) have %zu trial(s); the rule needs %d to judge a median",
            few, nrows, what, fewest, c->p->min_samples);
        SET(k->from, "results.csv (%s)", what);
        return;
    }
    SET(k->measured, "%.4g %s", worst->row.st.median, unit);
    if (min > 0)
        k->margin_pct = (worst->row.st.median / min - 1) * 100;
    SET(k->from, "results.csv:%zu (%s, median of %zu trials", worst->line, what,
        worst->row.st.samples);
    set(k->from + strlen(k->from), sizeof k->from - strlen(k->from), nrows > 1 ?
        ", the worst of %zu rows)" : ")", nrows);
    if (worst->row.st.median >= min) {
        k->verdict = FB_PASS;
    } else {
        k->verdict = FB_FAIL;
        SET(k->why, "%.4g %s < %.4g %s", worst->row.st.median, unit, min, unit);
        if (worst->row.src >= 0 && worst->row.dst >= 0)
            set(k->why + strlen(k->why), sizeof k->why - strlen(k->why), " (pair %d -> %d)",
                worst->row.src, worst->row.dst);
        else if (worst->row.src >= 0)
            set(k->why + strlen(k->why), sizeof k->why - strlen(k->why), " (rank %d)",
                worst->row.src);
    }
}

static void check_p2p(struct ctx *c)
{
    for (size_t i = 0; i < c->p->np2p; i++) {
        const struct fb_profile_p2p *t = &c->p->p2p[i];
        struct want w = {"p2p", "matrix_uni", "bandwidth", t->link, "", -1, -1, true};
        char name[64], what[128];

        snprintf(name, sizeof name, "p2p.%s", t->link);
        snprintf(what, sizeof what, "p2p matrix_uni bandwidth rows with link %s", t->link);
        floor_check(c, name, &w, t->min_gbps, "GB/s", what);
    }
}

static void check_h2d(struct ctx *c)
{
    struct want w = {"h2d", "pinned_h2d", "bandwidth", "", "", c->p->h2d_bytes, -1, true};
    char what[160];

    if (c->p->h2d_min_gbps < 0)
        return;
    /* All GPUs copying at once: the point with the most ranks; the largest size unless the
     * profile names one. */
    w.ranks = 0;
    for (size_t i = 0; i < c->csv.nrows; i++) {
        const struct fb_row *r = &c->csv.rows[i].row;
        if (strcmp(r->bench, "h2d") == 0 && strcmp(r->kase, "pinned_h2d") == 0 &&
            strcmp(r->metric, "bandwidth") == 0 && r->ranks > w.ranks)
            w.ranks = r->ranks;
    }
    if (w.bytes < 0) {
        for (size_t i = 0; i < c->csv.nrows; i++) {
            const struct fb_row *r = &c->csv.rows[i].row;
            if (strcmp(r->bench, "h2d") == 0 && strcmp(r->kase, "pinned_h2d") == 0 &&
                r->ranks == w.ranks && r->bytes > w.bytes)
                w.bytes = r->bytes;
        }
    }
    snprintf(what, sizeof what, "h2d pinned_h2d per-rank bandwidth, %d rank(s) at once, %lld bytes",
             w.ranks, w.bytes);
    floor_check(c, "h2d_pinned_all", &w, c->p->h2d_min_gbps, "GB/s", what);
}

static void check_allreduce(struct ctx *c)
{
    for (size_t i = 0; i < c->p->nbusbw; i++) {
        const struct fb_profile_busbw *t = &c->p->busbw[i];
        struct want w = {"allreduce", c->p->allreduce_case, "busbw", "", c->p->allreduce_dtype,
                         t->bytes, t->ranks, false};
        char name[64], what[160];

        snprintf(name, sizeof name, "allreduce_busbw.%lld.%d", t->bytes, t->ranks);
        snprintf(what, sizeof what, "allreduce %s %s busbw at %lld bytes on %d ranks",
                 c->p->allreduce_case, c->p->allreduce_dtype, t->bytes, t->ranks);
        floor_check(c, name, &w, t->min_gbps, "GB/s", what);
    }
}

static void check_compute(struct ctx *c)
{
    struct want w = {"compute", c->p->compute_case, "tflops", "", "", -1, -1, true};
    char what[128];

    if (c->p->compute_min_tflops < 0)
        return;
    snprintf(what, sizeof what, "compute %s tflops rows per GPU", c->p->compute_case);
    floor_check(c, "compute_tflops", &w, c->p->compute_min_tflops, "TFLOP/s", what);
}

/* The spread between trials of every row the figure checks judged: (p95 - p05) / median. */
static void check_spread(struct ctx *c)
{
    struct fb_accept_check *k;
    const struct fb_read_row *worst = NULL;
    double worst_pct = -1;

    if (c->p->max_spread_pct < 0 || !(k = add(c, "spread")))
        return;
    SET(k->expected, "<= %.4g %%", c->p->max_spread_pct);
    for (size_t i = 0; i < c->nused; i++) {
        const struct fb_read_row *r = &c->csv.rows[c->used[i]];
        double pct;
        if (!(r->row.st.median > 0))
            continue; /* a busbw of 0 on one rank has no spread to speak of */
        pct = (r->row.st.p95 - r->row.st.p05) / r->row.st.median * 100;
        if (pct > worst_pct) {
            worst_pct = pct;
            worst = r;
        }
    }
    if (!worst) {
        SET(k->why, "no figure was judged, so no spread to judge");
        return;
    }
    SET(k->measured, "%.3g %%", worst_pct);
    k->margin_pct = worst_pct > 0 ? (c->p->max_spread_pct / worst_pct - 1) * 100 : NAN;
    SET(k->from, "results.csv:%zu ((p95 - p05) / median of %s %s, %zu trials; the widest of "
        "%zu judged rows)", worst->line, worst->row.bench, worst->row.kase, worst->row.st.samples,
        c->nused);
    if (worst_pct <= c->p->max_spread_pct) {
        k->verdict = FB_PASS;
    } else {
        k->verdict = FB_FAIL;
        SET(k->why, "trials spread %.3g %% > %.4g %%: the node was not quiet, or varies", worst_pct,
            c->p->max_spread_pct);
    }
}

/* ---- env.json ------------------------------------------------------------------------ */

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double jnum(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static bool need_env(struct ctx *c, struct fb_accept_check *k)
{
    if (c->env)
        return true;
    SET(k->why, "the run folder has no env.json");
    return false;
}

/* An incomplete run (a timeout, an interruption, a failure) is not accepted: its missing
 * points would otherwise pass as SKIPs. */
static void check_complete(struct ctx *c)
{
    struct fb_accept_check *k = add(c, "run_complete");
    char why[1200];

    if (!k)
        return;
    SET(k->expected, "complete");
    SET(k->from, "env.json run_status");
    if (!need_env(c, k))
        return;
    if (fb_run_state_incomplete(c->env, why, sizeof why)) {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(c->env, "run_status");
        k->verdict = FB_FAIL;
        SET(k->measured, "%s", cJSON_IsString(st) ? st->valuestring : "?");
        SET(k->why, "the run is incomplete: %s", why);
    } else if (!*jstr(c->env, "run_status")) {
        SET(k->why, "env.json records no run_status");
    } else {
        k->verdict = FB_PASS;
        SET(k->measured, "complete");
    }
}

static void check_node(struct ctx *c)
{
    const struct fb_profile *p = c->p;
    struct fb_accept_check *k;
    const cJSON *ranks, *gpus, *g;

    if (p->gpus >= 0 && (k = add(c, "gpu_count"))) {
        SET(k->expected, "== %d", p->gpus);
        if (need_env(c, k)) {
            const cJSON *r;
            int lo = -1, at = -1;
            ranks = cJSON_GetObjectItemCaseSensitive(c->env, "ranks");
            cJSON_ArrayForEach(r, ranks) {
                int v = (int)jnum(r, "visible_gpus", -1);
                if (lo < 0 || v < lo) {
                    lo = v;
                    at = (int)jnum(r, "rank", -1);
                }
            }
            if (lo < 0) {
                SET(k->why, "env.json records no rank's visible_gpus");
            } else {
                SET(k->measured, "%d", lo);
                k->margin_pct = p->gpus ? ((double)lo / p->gpus - 1) * 100 : NAN;
                SET(k->from, "env.json ranks[].visible_gpus (the fewest: rank %d)", at);
                k->verdict = lo == p->gpus ? FB_PASS : FB_FAIL;
                if (k->verdict == FB_FAIL)
                    SET(k->why, "rank %d sees %d GPU(s), the profile expects %d", at, lo, p->gpus);
            }
        }
    }
    if (p->gpu_model[0] && (k = add(c, "gpu_model"))) {
        SET(k->expected, "*%s*", p->gpu_model);
        if (need_env(c, k)) {
            size_t n = 0;
            const char *bad = NULL;
            gpus = cJSON_GetObjectItemCaseSensitive(c->env, "gpus");
            cJSON_ArrayForEach(g, gpus) {
                n++;
                if (!bad && !strcasestr(jstr(g, "name"), p->gpu_model))
                    bad = jstr(g, "name");
                if (n == 1)
                    SET(k->measured, "%.60s", jstr(g, "name"));
            }
            SET(k->from, "env.json gpus[].name (%zu GPU(s))", n);
            if (n == 0) {
                k->verdict = FB_FAIL;
                SET(k->why, "the run used no GPU (backend %s)",
                    jstr(cJSON_GetObjectItemCaseSensitive(c->env, "backend"), "name"));
            } else if (bad) {
                k->verdict = FB_FAIL;
                SET(k->measured, "%.60s", bad);
                SET(k->why, "GPU '%.100s' is not a %.60s", bad, p->gpu_model);
            } else {
                k->verdict = FB_PASS;
            }
        }
    }
}

static void check_infiniband(struct ctx *c)
{
    const struct fb_profile *p = c->p;
    struct fb_accept_check *k;
    const cJSON *ib, *port, *list;
    int want = p->ib_ports >= 0 ? p->ib_ports : 1, up = 0, total = 0;
    double rate = p->ib_rate_gbps >= 0 ? p->ib_rate_gbps : 0;

    if ((p->ib_ports < 0 && p->ib_rate_gbps < 0) || !(k = add(c, "infiniband")))
        return;
    SET(k->expected, ">= %d ACTIVE port(s) at >= %.4g Gb/s", want, rate);
    if (!need_env(c, k))
        return;
    ib = cJSON_GetObjectItemCaseSensitive(c->env, "infiniband");
    list = cJSON_IsArray(ib) ? ib : NULL; /* "none" when the host had no port */
    cJSON_ArrayForEach(port, list) {
        total++;
        if (strcmp(jstr(port, "state"), "ACTIVE") == 0 && jnum(port, "rate_gbps", 0) >= rate)
            up++;
    }
    SET(k->measured, "%d of %d", up, total);
    SET(k->from, "env.json infiniband (the ports of rank 0's host)");
    if (want > 0)
        k->margin_pct = ((double)up / want - 1) * 100;
    if (up >= want) {
        k->verdict = FB_PASS;
    } else {
        k->verdict = FB_FAIL;
        SET(k->why, "%d port(s) ACTIVE at >= %.4g Gb/s, %d wanted (%s)", up, rate, want,
            cJSON_IsString(ib) ? ib->valuestring : "check ibstat");
    }
}

/* doctor's binding rule over the facts env.json kept of every rank. */
static void check_binding(struct ctx *c)
{
    struct fb_accept_check *k;
    struct fb_rank_facts *facts = NULL;
    struct fb_doctor_job job = {0};
    struct fb_check dc[FB_DOCTOR_MAX_CHECKS];
    const cJSON *ranks, *r;
    int n;
    size_t nd;

    if (!c->p->binding_required || !(k = add(c, "binding")))
        return;
    SET(k->expected, "every rank bound (doctor's rule)");
    if (!need_env(c, k))
        return;
    ranks = cJSON_GetObjectItemCaseSensitive(c->env, "ranks");
    n = cJSON_GetArraySize(ranks);
    if (n <= 0) {
        SET(k->why, "env.json records no ranks");
        return;
    }
    if (!(facts = calloc((size_t)n, sizeof *facts))) {
        c->nomem = true;
        return;
    }
    int i = 0;
    cJSON_ArrayForEach(r, ranks) {
        struct fb_rank_facts *f = &facts[i++];
        const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(r, "gpu");
        const cJSON *bind = cJSON_GetObjectItemCaseSensitive(r, "binding");
        const char *v = jstr(bind, "verdict");
        f->rank = (int)jnum(r, "rank", i - 1);
        f->node = (int)jnum(r, "node", 0);
        snprintf(f->host, sizeof f->host, "%s", jstr(r, "host"));
        snprintf(f->cpus, sizeof f->cpus, "%s", jstr(r, "cpus"));
        f->bound = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "bound"));
        f->gpu_index = cJSON_IsObject(gpu) ? (int)jnum(gpu, "index", 0) : -1;
        snprintf(f->gpu_numa, sizeof f->gpu_numa, "%s", jstr(gpu, "numa"));
        f->binding = strcmp(v, "PASS") == 0   ? FB_PASS
                     : strcmp(v, "WARN") == 0 ? FB_WARN
                     : strcmp(v, "FAIL") == 0 ? FB_FAIL
                                              : FB_SKIP;
        snprintf(f->binding_why, sizeof f->binding_why, "%s", jstr(bind, "why"));
        f->mpi_cuda_aware = true;
    }
    job.backend =
        strcmp(jstr(cJSON_GetObjectItemCaseSensitive(c->env, "backend"), "name"), "cuda") == 0
            ? "cuda"
            : "host";
    nd = fb_doctor_checks(&job, facts, n, NULL, 0, dc, FB_DOCTOR_MAX_CHECKS);
    for (size_t j = 0; j < nd; j++) {
        if (strcmp(dc[j].name, "binding") != 0)
            continue;
        SET(k->measured, "%s", fb_verdict_str(dc[j].verdict));
        SET(k->from, "env.json ranks[] (%s backend)", job.backend);
        /* A WARN from doctor is a binding that is not right: the profile requires it. */
        k->verdict = dc[j].verdict == FB_PASS ? FB_PASS
                     : dc[j].verdict == FB_SKIP ? FB_SKIP
                                                : FB_FAIL;
        SET(k->why, "%.250s", k->verdict == FB_PASS ? "" : dc[j].why);
    }
    free(facts);
}

/* ---- NCCL logs ------------------------------------------------------------------------- */

static size_t sum(const size_t *v)
{
    size_t s = 0;
    for (int i = 0; i < FB_NCCL_PATHS; i++)
        s += v[i];
    return s;
}

static void transport_check(struct ctx *c, const char *name, const char *expect,
                            const size_t *conn, size_t good, const char *where, bool have,
                            const char *skip_why)
{
    struct fb_accept_check *k = add(c, name);
    size_t total = sum(conn);

    if (!k)
        return;
    SET(k->expected, "%s", expect);
    if (!have) {
        SET(k->why, "%s", skip_why);
        return;
    }
    SET(k->from, "NCCL logs in the run folder (%s)", where);
    if (total == 0) {
        SET(k->why, "no connection %s in the NCCL logs", where);
        return;
    }
    SET(k->measured, "%zu of %zu connections", good, total);
    k->margin_pct = ((double)good / (double)total - 1) * 100;
    if (good == total) {
        k->verdict = FB_PASS;
    } else {
        k->verdict = FB_FAIL;
        SET(k->why, "%zu of %zu connections %s went another way (p2p %zu, shm %zu, ib %zu, "
            "ib+gdr %zu, socket %zu)", total - good, total, where, conn[FB_NCCL_P2P],
            conn[FB_NCCL_SHM], conn[FB_NCCL_IB], conn[FB_NCCL_IB_GDR], conn[FB_NCCL_SOCKET]);
    }
}

static fb_status check_transports(struct ctx *c, char *err, size_t errlen)
{
    const struct fb_profile *p = c->p;
    struct fb_nccl_report rep;
    char why[512] = "";
    bool have;
    fb_status st;

    if (!p->intra[0] && !p->inter[0] && (p->gdrdma == FB_GDR_UNSET || p->gdrdma == FB_GDR_OPTIONAL))
        return FB_OK;
    memset(&rep, 0, sizeof rep);
    st = fb_nccl_report_dir(c->run_dir, &rep, why, sizeof why);
    if (st != FB_OK && st != FB_ERR_UNSUPPORTED) {
        snprintf(err, errlen, "%s", why[0] ? why : fb_status_str(st));
        fb_nccl_report_release(&rep);
        return st == FB_ERR_NOMEM ? st : FB_ERR_USAGE;
    }
    have = st == FB_OK;
    snprintf(why, sizeof why, "not measured: the run kept no NCCL log (nccl-rank*.log)");
    if (p->intra[0] && strcmp(p->intra, "any") != 0) {
        size_t good = strcmp(p->intra, "p2p") == 0 ? rep.intra[FB_NCCL_P2P] : rep.intra[FB_NCCL_SHM];
        char e[32];
        snprintf(e, sizeof e, "all %s", p->intra);
        transport_check(c, "transport_intra", e, rep.intra, good, "inside a node", have, why);
    }
    if (p->inter[0] && strcmp(p->inter, "any") != 0) {
        size_t good = strcmp(p->inter, "ib") == 0 ? rep.inter[FB_NCCL_IB] + rep.inter[FB_NCCL_IB_GDR]
                                                  : rep.inter[FB_NCCL_SOCKET];
        char e[32];
        snprintf(e, sizeof e, "all %s", p->inter);
        transport_check(c, "transport_inter", e, rep.inter, good, "between nodes", have, why);
    }
    if (p->gdrdma == FB_GDR_REQUIRED)
        transport_check(c, "gdrdma", "all ib with GPUDirect RDMA", rep.inter,
                        rep.inter[FB_NCCL_IB_GDR], "between nodes", have, why);
    else if (p->gdrdma == FB_GDR_OFF)
        transport_check(c, "gdrdma", "none with GPUDirect RDMA", rep.inter,
                        sum(rep.inter) - rep.inter[FB_NCCL_IB_GDR], "between nodes", have, why);
    fb_nccl_report_release(&rep);
    return FB_OK;
}

/* ---- the run ------------------------------------------------------------------------- */

static fb_status load_env(struct ctx *c, char *err, size_t errlen)
{
    char path[4200];

    snprintf(path, sizeof path, "%s/env.json", c->run_dir);
    return fb_json_file_read(path, true, &c->env, err, errlen);
}

fb_status fb_accept_run(const struct fb_profile *p, const char *run_dir, struct fb_accept *out,
                        char *err, size_t errlen)
{
    struct ctx c;
    char path[4200];
    struct stat sb;
    fb_status st;

    memset(out, 0, sizeof *out);
    memset(&c, 0, sizeof c);
    c.p = p;
    c.run_dir = run_dir;
    c.out = out;
    if (stat(run_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "run folder '%s': %s", run_dir,
                 stat(run_dir, &sb) != 0 ? strerror(errno) : "not a folder");
        return FB_ERR_USAGE;
    }
    snprintf(path, sizeof path, "%s/results.csv", run_dir);
    st = fb_results_read(path, &c.csv, err, errlen);
    if (st == FB_ERR_IO) {
        size_t len = strlen(err);
        snprintf(err + len, errlen - len, " (is '%s' a run folder?)", run_dir);
        st = FB_ERR_USAGE; /* bad input, not a broken machine */
    }
    if (st != FB_OK)
        goto out;
    if ((st = load_env(&c, err, errlen)) != FB_OK)
        goto out;

    check_complete(&c);
    check_node(&c);
    check_p2p(&c);
    check_h2d(&c);
    check_allreduce(&c);
    check_compute(&c);
    if ((st = check_transports(&c, err, errlen)) != FB_OK)
        goto out;
    check_infiniband(&c);
    check_binding(&c);
    check_spread(&c);
    if (c.nomem) {
        snprintf(err, errlen, "out of memory");
        st = FB_ERR_NOMEM;
    }
out:
    if (st != FB_OK)
        fb_accept_release(out);
    free(c.used);
    cJSON_Delete(c.env);
    fb_results_read_release(&c.csv);
    return st;
}

void fb_accept_release(struct fb_accept *a)
{
    if (!a)
        return;
    free(a->checks);
    memset(a, 0, sizeof *a);
}

size_t fb_accept_count(const struct fb_accept *a, enum fb_verdict v)
{
    size_t n = 0;

    for (size_t i = 0; i < a->n; i++)
        n += a->checks[i].verdict == v;
    return n;
}

/* ---- JUnit ------------------------------------------------------------------------------ */

void fb_xml_escape_write(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        switch (ch) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (ch >= 0x20 || ch == '\t' || ch == '\n' || ch == '\r')
                fputc(ch, f);
        }
    }
}

int fb_accept_junit_write(FILE *f, const struct fb_accept *a, const struct fb_profile *p,
                          const char *run_dir)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"", f);
    fb_xml_escape_write(f, p->name);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n", a->n,
            fb_accept_count(a, FB_FAIL), fb_accept_count(a, FB_SKIP));
    fputs("    <properties>\n      <property name=\"profile\" value=\"", f);
    fb_xml_escape_write(f, p->path);
    fputs("\"/>\n      <property name=\"run_dir\" value=\"", f);
    fb_xml_escape_write(f, run_dir);
    fputs("\"/>\n    </properties>\n", f);
    for (size_t i = 0; i < a->n; i++) {
        const struct fb_accept_check *k = &a->checks[i];
        char margin[32] = "-";
        if (!isnan(k->margin_pct))
            snprintf(margin, sizeof margin, "%+.1f%%", k->margin_pct);
        fputs("    <testcase classname=\"fabricbench.accept\" name=\"", f);
        fb_xml_escape_write(f, k->name);
        fputs("\">\n", f);
        if (k->verdict == FB_FAIL || k->verdict == FB_SKIP) {
            fputs(k->verdict == FB_FAIL ? "      <failure message=\"" : "      <skipped message=\"", f);
            fb_xml_escape_write(f, k->why);
            fputs("\"/>\n", f);
        }
        fputs("      <system-out>measured ", f);
        fb_xml_escape_write(f, k->measured);
        fputs(", expected ", f);
        fb_xml_escape_write(f, k->expected);
        fprintf(f, ", margin %s, from ", margin);
        fb_xml_escape_write(f, k->from[0] ? k->from : "-");
        fputs("</system-out>\n    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    return ferror(f) ? -1 : 0;
}

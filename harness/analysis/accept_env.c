/* accept's checks on what the run recorded besides its figures: env.json (the run complete, the
 * GPUs and InfiniBand ports of every node, through accept_nodes.c, and the binding: doctor's
 * rule replayed over the facts env.json kept of every rank) and the NCCL logs of the run
 * folder (fb_nccl_report_dir: the transports NCCL chose inside and between nodes, GPUDirect
 * RDMA). */
#define _GNU_SOURCE
#include "accept.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cJSON.h>

#include "accept_impl.h"
#include "doctor.h"
#include "nccl_report.h"
#include "run_state.h"

/* ---- env.json's checks ----------------------------------------------------------------- */

const char *fb_accept_jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

double fb_accept_jnum(const cJSON *o, const char *key, double dflt)
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

/* ---- env.json's types ------------------------------------------------------------------ */

/* What a field of env.json must be when it is there (a field that is absent is judged by its
 * check: a SKIP that says what env.json does not record). */
enum jtype { J_STRING, J_INT, J_NUMBER, J_BOOL, J_OBJECT, J_ARRAY, J_OBJECT_OR_NULL,
             J_ARRAY_OR_STRING };

struct jfield {
    const char *key;
    enum jtype type;
};

/* Every field a check of accept reads, as fingerprint.c writes it. */
static const struct jfield top_fields[] = {
    {"run_status", J_STRING}, {"run_stop", J_OBJECT}, {"ranks", J_ARRAY},
    {"gpus", J_ARRAY},        {"backend", J_OBJECT},  {"infiniband", J_ARRAY_OR_STRING},
    {"hosts", J_ARRAY},
};
static const struct jfield host_fields[] = {
    {"host", J_STRING}, {"node", J_INT}, {"gpus", J_INT}, {"infiniband", J_ARRAY_OR_STRING},
};
static const struct jfield stop_fields[] = {{"state", J_STRING}, {"detail", J_STRING}};
static const struct jfield backend_fields[] = {{"name", J_STRING}};
static const struct jfield rank_fields[] = {
    {"rank", J_INT},     {"node", J_INT},  {"visible_gpus", J_INT},       {"host", J_STRING},
    {"cpus", J_STRING},  {"bound", J_BOOL}, {"gpu", J_OBJECT_OR_NULL}, {"binding", J_OBJECT},
};
static const struct jfield rank_gpu_fields[] = {{"index", J_INT}, {"numa", J_STRING}};
static const struct jfield binding_fields[] = {{"verdict", J_STRING}, {"why", J_STRING}};
static const struct jfield gpu_fields[] = {{"name", J_STRING}};
static const struct jfield port_fields[] = {{"state", J_STRING}, {"rate_gbps", J_NUMBER}};

#define NFIELDS(a) (sizeof(a) / sizeof *(a))

static const char *jtype_str(enum jtype t)
{
    static const char *const s[] = {"a string",  "an integer", "a number",
                                    "true or false", "an object", "an array",
                                    "an object or null", "an array or a string"};
    return s[t];
}

static const char *json_kind(const cJSON *v)
{
    return cJSON_IsString(v)   ? "a string"
           : cJSON_IsNumber(v) ? "a number"
           : cJSON_IsBool(v)   ? "a boolean"
           : cJSON_IsNull(v)   ? "null"
           : cJSON_IsArray(v)  ? "an array"
                               : "an object";
}

static bool jtype_ok(const cJSON *v, enum jtype t)
{
    switch (t) {
    case J_STRING: return cJSON_IsString(v);
    case J_INT:
        return cJSON_IsNumber(v) && v->valuedouble == trunc(v->valuedouble) &&
               fabs(v->valuedouble) <= INT_MAX;
    case J_NUMBER: return cJSON_IsNumber(v);
    case J_BOOL: return cJSON_IsBool(v);
    case J_OBJECT: return cJSON_IsObject(v);
    case J_ARRAY: return cJSON_IsArray(v);
    case J_OBJECT_OR_NULL: return cJSON_IsObject(v) || cJSON_IsNull(v);
    case J_ARRAY_OR_STRING: return cJSON_IsArray(v) || cJSON_IsString(v);
    }
    return false;
}

/* Checks the fields of object o (called `where`, "" at the top) that are there. */
static bool fields_ok(const cJSON *o, const char *where, const struct jfield *f, size_t n,
                      const char *path, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, f[i].key);
        if (!v || jtype_ok(v, f[i].type))
            continue;
        snprintf(err, errlen, "%s: field '%s%s%s' is %s%s%.40s%s, expected %s", path, where,
                 *where ? "." : "", f[i].key, json_kind(v), cJSON_IsString(v) ? " ('" : "",
                 cJSON_IsString(v) ? v->valuestring : "", cJSON_IsString(v) ? "')" : "",
                 jtype_str(f[i].type));
        return false;
    }
    return true;
}

/* Each element of array `key` of o (o called `within`, "" at the top) must be an object with
 * fields f. */
static bool items_ok(const cJSON *o, const char *within, const char *key,
                     const struct jfield *f, size_t n, const char *path, char *err,
                     size_t errlen)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, key), *e;
    char where[96];
    int i = 0;

    if (!cJSON_IsArray(arr))
        return true;
    cJSON_ArrayForEach(e, arr) {
        snprintf(where, sizeof where, "%s%s%s[%d]", within, *within ? "." : "", key, i++);
        if (!cJSON_IsObject(e)) {
            snprintf(err, errlen, "%s: field '%s' is %s, expected an object", path, where,
                     json_kind(e));
            return false;
        }
        if (!fields_ok(e, where, f, n, path, err, errlen))
            return false;
    }
    return true;
}

fb_status fb_accept_env_check(const cJSON *env, const char *path, char *err, size_t errlen)
{
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(env, "ranks"), *r;
    char where[64];
    int i = 0;

    if (!fields_ok(env, "", top_fields, NFIELDS(top_fields), path, err, errlen) ||
        !fields_ok(cJSON_GetObjectItemCaseSensitive(env, "run_stop"), "run_stop", stop_fields,
                   NFIELDS(stop_fields), path, err, errlen) ||
        !fields_ok(cJSON_GetObjectItemCaseSensitive(env, "backend"), "backend", backend_fields,
                   NFIELDS(backend_fields), path, err, errlen) ||
        !items_ok(env, "", "ranks", rank_fields, NFIELDS(rank_fields), path, err, errlen) ||
        !items_ok(env, "", "gpus", gpu_fields, NFIELDS(gpu_fields), path, err, errlen) ||
        !items_ok(env, "", "infiniband", port_fields, NFIELDS(port_fields), path, err, errlen) ||
        !items_ok(env, "", "hosts", host_fields, NFIELDS(host_fields), path, err, errlen))
        return FB_ERR_USAGE;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(env, "hosts")) {
        snprintf(where, sizeof where, "hosts[%d]", i++);
        if (!items_ok(r, where, "infiniband", port_fields, NFIELDS(port_fields), path, err,
                      errlen))
            return FB_ERR_USAGE;
    }
    i = 0;
    cJSON_ArrayForEach(r, ranks) {
        snprintf(where, sizeof where, "ranks[%d].gpu", i);
        if (!fields_ok(cJSON_GetObjectItemCaseSensitive(r, "gpu"), where, rank_gpu_fields,
                       NFIELDS(rank_gpu_fields), path, err, errlen))
            return FB_ERR_USAGE;
        snprintf(where, sizeof where, "ranks[%d].binding", i++);
        if (!fields_ok(cJSON_GetObjectItemCaseSensitive(r, "binding"), where, binding_fields,
                       NFIELDS(binding_fields), path, err, errlen))
            return FB_ERR_USAGE;
    }
    return FB_OK;
}

/* An incomplete run (a timeout, an interruption, a failure) is not accepted: its missing
 * points would otherwise pass as SKIPs. */
void fb_accept_check_complete(struct ctx *c)
{
    struct fb_accept_check *k = fb_accept_add(c, "run_complete");
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
    } else if (!*fb_accept_jstr(c->env, "run_status")) {
        SET(k->why, "env.json records no run_status");
    } else {
        k->verdict = FB_PASS;
        SET(k->measured, "complete");
    }
}

void fb_accept_check_node(struct ctx *c)
{
    const struct fb_profile *p = c->p;
    struct fb_accept_check *k;
    const cJSON *ranks, *gpus, *g;

    if (p->gpus >= 0 && (k = fb_accept_add(c, "gpu_count"))) {
        SET(k->expected, "== %d", p->gpus);
        if (need_env(c, k) && fb_accept_hosts(c)) {
            fb_accept_nodes_gpus(c, k, fb_accept_hosts(c));
        } else if (c->env) { /* an env.json without "hosts": judged by its ranks, as before */
            const cJSON *r;
            int lo = -1, at = -1;
            ranks = cJSON_GetObjectItemCaseSensitive(c->env, "ranks");
            cJSON_ArrayForEach(r, ranks) {
                int v = (int)fb_accept_jnum(r, "visible_gpus", -1);
                if (lo < 0 || v < lo) {
                    lo = v;
                    at = (int)fb_accept_jnum(r, "rank", -1);
                }
            }
            if (lo < 0) {
                SET(k->why, "env.json records no rank's visible_gpus");
            } else {
                SET(k->measured, "%d", lo);
                k->margin_pct = p->gpus ? ((double)lo / p->gpus - 1) * 100 : NAN;
                SET(k->from, "env.json ranks[].visible_gpus (the fewest: rank %d; no per-node "
                    "block: an older env.json)", at);
                k->verdict = lo == p->gpus ? FB_PASS : FB_FAIL;
                if (k->verdict == FB_FAIL)
                    SET(k->why, "rank %d sees %d GPU(s), the profile expects %d", at, lo, p->gpus);
            }
        }
    }
    if (p->gpu_model[0] && (k = fb_accept_add(c, "gpu_model"))) {
        SET(k->expected, "*%s*", p->gpu_model);
        if (need_env(c, k)) {
            size_t n = 0;
            const char *bad = NULL;
            gpus = cJSON_GetObjectItemCaseSensitive(c->env, "gpus");
            cJSON_ArrayForEach(g, gpus) {
                n++;
                if (!bad && !strcasestr(fb_accept_jstr(g, "name"), p->gpu_model))
                    bad = fb_accept_jstr(g, "name");
                if (n == 1)
                    SET(k->measured, "%.60s", fb_accept_jstr(g, "name"));
            }
            SET(k->from, "env.json gpus[].name (%zu GPU(s))", n);
            if (n == 0) {
                k->verdict = FB_FAIL;
                SET(k->why, "the run used no GPU (backend %s)",
                    fb_accept_jstr(cJSON_GetObjectItemCaseSensitive(c->env, "backend"), "name"));
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

void fb_accept_check_infiniband(struct ctx *c)
{
    const struct fb_profile *p = c->p;
    struct fb_accept_check *k;
    const cJSON *ib, *port, *list;
    int want = p->ib_ports >= 0 ? p->ib_ports : 1, up = 0, total = 0;
    double rate = p->ib_rate_gbps >= 0 ? p->ib_rate_gbps : 0;

    if ((p->ib_ports < 0 && p->ib_rate_gbps < 0) || !(k = fb_accept_add(c, "infiniband")))
        return;
    SET(k->expected, ">= %d ACTIVE port(s) at >= %.4g Gb/s", want, rate);
    if (!need_env(c, k))
        return;
    if (fb_accept_hosts(c)) {
        fb_accept_nodes_ib(k, fb_accept_hosts(c), want, rate);
        return;
    }
    /* an env.json without "hosts" (an older fabricbench): rank 0's host alone, as before */
    ib = cJSON_GetObjectItemCaseSensitive(c->env, "infiniband");
    list = cJSON_IsArray(ib) ? ib : NULL; /* "none" when the host had no port */
    cJSON_ArrayForEach(port, list) {
        total++;
        if (strcmp(fb_accept_jstr(port, "state"), "ACTIVE") == 0 &&
            fb_accept_jnum(port, "rate_gbps", 0) >= rate)
            up++;
    }
    SET(k->measured, "%d of %d", up, total);
    SET(k->from, "env.json infiniband (the ports of rank 0's host alone: no per-node block, "
        "an older env.json)");
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
void fb_accept_check_binding(struct ctx *c)
{
    struct fb_accept_check *k;
    struct fb_rank_facts *facts = NULL;
    struct fb_doctor_job job = {0};
    struct fb_check dc[FB_DOCTOR_MAX_CHECKS];
    const cJSON *ranks, *r;
    int n;
    size_t nd;

    if (!c->p->binding_required || !(k = fb_accept_add(c, "binding")))
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
        const char *v = fb_accept_jstr(bind, "verdict");
        f->rank = (int)fb_accept_jnum(r, "rank", i - 1);
        f->node = (int)fb_accept_jnum(r, "node", 0);
        snprintf(f->host, sizeof f->host, "%s", fb_accept_jstr(r, "host"));
        snprintf(f->cpus, sizeof f->cpus, "%s", fb_accept_jstr(r, "cpus"));
        f->bound = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "bound"));
        f->gpu_index = cJSON_IsObject(gpu) ? (int)fb_accept_jnum(gpu, "index", 0) : -1;
        snprintf(f->gpu_numa, sizeof f->gpu_numa, "%s", fb_accept_jstr(gpu, "numa"));
        f->binding = strcmp(v, "PASS") == 0   ? FB_PASS
                     : strcmp(v, "WARN") == 0 ? FB_WARN
                     : strcmp(v, "FAIL") == 0 ? FB_FAIL
                                              : FB_SKIP;
        snprintf(f->binding_why, sizeof f->binding_why, "%s", fb_accept_jstr(bind, "why"));
        f->mpi_cuda_aware = true;
    }
    job.backend = strcmp(fb_accept_jstr(cJSON_GetObjectItemCaseSensitive(c->env, "backend"),
                                        "name"), "cuda") == 0
                      ? "cuda"
                      : "host";
    /* the launcher env.json records (runs before it: none, and mpirun's words) */
    job.launcher = fb_accept_jstr(cJSON_GetObjectItemCaseSensitive(c->env, "mpi"), "launcher");
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
    struct fb_accept_check *k = fb_accept_add(c, name);
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

fb_status fb_accept_check_transports(struct ctx *c, char *err, size_t errlen)
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
        size_t good =
            strcmp(p->intra, "p2p") == 0 ? rep.intra[FB_NCCL_P2P] : rep.intra[FB_NCCL_SHM];
        char e[32];
        snprintf(e, sizeof e, "all %s", p->intra);
        transport_check(c, "transport_intra", e, rep.intra, good, "inside a node", have, why);
    }
    if (p->inter[0] && strcmp(p->inter, "any") != 0) {
        size_t good = strcmp(p->inter, "ib") == 0
                          ? rep.inter[FB_NCCL_IB] + rep.inter[FB_NCCL_IB_GDR]
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

/* accept's private header, for its own files only (accept.c: the context and the run;
 * accept_results.c: the checks on results.csv's figures; accept_env.c: the checks on env.json
 * and the NCCL logs; accept_nodes.c: every node's GPUs and ports from env.json's "hosts"):
 * what every check reads, how a check is added, and the checks fb_accept_run calls. The
 * commands use accept.h. */
#ifndef FB_ACCEPT_IMPL_H
#define FB_ACCEPT_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "accept.h"
#include "log.h"
#include "profile.h"
#include "results_read.h"
#include "status.h"

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

/* ---- accept.c ---- */

/* Appends a check named `name` to c->out: a SKIP with nothing measured ("-") and no margin
 * (NAN) until the caller fills it in. The pointer is c->out's, good until the next call. NULL
 * when out of memory (c->nomem is then set). */
struct fb_accept_check *fb_accept_add(struct ctx *c, const char *name);

/* vsnprintf into buf (len bytes); SET(field, ...) for a char array field of a check. */
void fb_accept_set(char *buf, size_t len, const char *fmt, ...) FB_PRINTF(3, 4);

#define SET(field, ...) fb_accept_set(field, sizeof field, __VA_ARGS__)

/* ---- the checks ----
 * Each appends its checks to c->out, none when the profile does not ask for them; a check that
 * fails is a FAIL in c->out, not an error. fb_accept_run calls them in the order docs/accept.md
 * gives. */

/* accept_results.c: a floor on the worst median of the rows each selects (a row with too few
 * trials is a SKIP); the rows judged are remembered in c->used for the spread. */
void fb_accept_check_p2p(struct ctx *c);
void fb_accept_check_h2d(struct ctx *c);
void fb_accept_check_allreduce(struct ctx *c);
void fb_accept_check_compute(struct ctx *c);
/* Every series with an expected figure (results.csv's `expected`, the model's; docs/
 * expected.md), at its largest size: its median must reach the profile's expected_min_share of
 * it (none when that is 0). The FAIL names the bound. */
void fb_accept_check_expected(struct ctx *c);
/* The spread between trials of every row the checks above judged: call it after them. */
void fb_accept_check_spread(struct ctx *c);
void fb_accept_check_cpu_wait(struct ctx *c);

/* accept_env.c: env.json's string field `key` of o ("" when absent or not a string), and its
 * number field (dflt when absent or not a number). */
const char *fb_accept_jstr(const cJSON *o, const char *key);
double fb_accept_jnum(const cJSON *o, const char *key, double dflt);

/* accept_env.c: the type of every field of env.json that the checks below read, where it is
 * there (run_status a string, ranks[].visible_gpus an integer, ...). FB_OK, or FB_ERR_USAGE
 * with "path: field 'ranks[1].visible_gpus' is a string ('4'), expected an integer" in err. */
fb_status fb_accept_env_check(const cJSON *env, const char *path, char *err, size_t errlen);

/* accept_env.c: env.json's run_status, GPUs, InfiniBand ports and binding (a SKIP each when
 * the run has no env.json). */
void fb_accept_check_complete(struct ctx *c);
void fb_accept_check_node(struct ctx *c);
void fb_accept_check_infiniband(struct ctx *c);
void fb_accept_check_binding(struct ctx *c);

/* accept_nodes.c: every node judged from env.json's per-node block ("hosts", written since
 * fabricbench records it). fb_accept_hosts: that block, NULL when env.json has none (or an
 * empty one): the caller then judges the older fields, with a note. fb_accept_nodes_gpus:
 * every node's gpus == the profile's; fb_accept_nodes_ib: every node has `want` ports ACTIVE at
 * >= `rate` Gb/s. Both fill k (verdict, measured, from, margin, why naming the failing hosts). */
const cJSON *fb_accept_hosts(const struct ctx *c);
void fb_accept_nodes_gpus(struct ctx *c, struct fb_accept_check *k, const cJSON *hosts);
void fb_accept_nodes_ib(struct fb_accept_check *k, const cJSON *hosts, int want, double rate);

/* accept_env.c: the transports NCCL's logs in the run folder say it used. FB_OK, also when the
 * run kept no log (the checks are SKIPs); FB_ERR_USAGE with a message in err for a log that
 * cannot be read; FB_ERR_NOMEM. */
fb_status fb_accept_check_transports(struct ctx *c, char *err, size_t errlen);

#endif

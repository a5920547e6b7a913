/* accept: a run folder judged against a hardware profile. This file holds what every check
 * reads (results.csv, read with fb_results_read, and env.json) and how a check is added, and it
 * runs the checks in the order docs/accept.md gives: those on results.csv's figures are in
 * accept_results.c, those on env.json and the NCCL logs in accept_env.c; the JUnit report is in
 * accept_junit.c. Figures are medians of repeated trials; the rule is in accept.h and
 * docs/accept.md. */
#include "accept.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "accept_impl.h"
#include "json_file.h"
#include "results_read.h"

struct fb_accept_check *fb_accept_add(struct ctx *c, const char *name)
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

void fb_accept_set(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* ---- the run ------------------------------------------------------------------------- */

/* env.json, when the run has one, with the type of every field the checks read checked. */
static fb_status load_env(struct ctx *c, char *err, size_t errlen)
{
    char path[4200];
    fb_status st;

    snprintf(path, sizeof path, "%s/env.json", c->run_dir);
    if ((st = fb_json_file_read(path, true, &c->env, err, errlen)) != FB_OK || !c->env)
        return st;
    return fb_accept_env_check(c->env, path, err, errlen);
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

    fb_accept_check_complete(&c);
    fb_accept_check_node(&c);
    fb_accept_check_p2p(&c);
    fb_accept_check_h2d(&c);
    fb_accept_check_allreduce(&c);
    fb_accept_check_compute(&c);
    fb_accept_check_expected(&c);
    if ((st = fb_accept_check_transports(&c, err, errlen)) != FB_OK)
        goto out;
    fb_accept_check_infiniband(&c);
    fb_accept_check_binding(&c);
    fb_accept_check_spread(&c);
    fb_accept_check_cpu_wait(&c);
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

/* `fabricbench nccl-log FILE...`: what NCCL_DEBUG=INFO logs say about a job's transports (per
 * pair of ranks and channel), its NCCL version and NICs, with the verdicts of
 * nccl_verdict.c, as text or JSON. No MPI: it reads logs of any job, not only fabricbench's. */
#define _GNU_SOURCE
#include <cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "log.h"
#include "nccl_report.h"
#include "nccl_verdict.h"

static void usage(void)
{
    printf("usage: fabricbench nccl-log [--json] [--brief] FILE...\n"
           "Reads NCCL_DEBUG=INFO logs (NCCL 2.3 on; launcher prefixes and other programs'\n"
           "lines are fine) and prints which transport carried each connection, the NCCL\n"
           "version, the NICs NCCL chose, the InfiniBand faults it reported (port errors, a\n"
           "device failed over from, its recovery: 2.26-2.30), and verdicts on them (see\n"
           "docs/nccl-log.md).\n\n"
           "  --json    the report and verdicts as one JSON object on stdout\n"
           "  --brief   no table of connections: counts and verdicts only\n"
           "  --help    this text\n\n"
           "exit: 0 no verdict FAILs, 1 a verdict FAILs, 2 a file missing, unreadable or\n"
           "malformed (one line naming file:line), or no NCCL line in any file\n");
}

static void counts_str(const size_t *counts, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int p = 0; p < FB_NCCL_PATHS; p++)
        if (counts[p] && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s %zu", used ? ", " : "",
                                     fb_nccl_path_str((enum fb_nccl_path)p), counts[p]);
    if (!used)
        snprintf(buf, len, "none");
}

static void print_text(const struct fb_nccl_report *r, const struct fb_nccl_verdict *v,
                       size_t nfiles, int brief)
{
    char intra[160], inter[160];

    printf("# NCCL log: %zu file(s), %zu lines, %zu of them NCCL's, %zu NCCL WARN\n", nfiles,
           r->lines, r->nccl_lines, r->warns);
    printf("# version: %s%s%s\n", r->version[0] ? r->version : "(not stated)",
           r->version_other[0] ? " and " : "", r->version_other);
    printf("# network: %s; InfiniBand %s; NICs: %s\n", r->network[0] ? r->network : "(not stated)",
           r->ib_available ? "found" : r->ib_missing ? "not found" : "not mentioned",
           r->nics[0] ? r->nics : "(none named)");
    if (r->env[0])
        printf("# environment: %s\n", r->env);
    if (r->dmabuf[0])
        printf("# DMA-BUF: available on GPU device(s) %s\n", r->dmabuf);
    for (int e = 1; e < FB_NCCL_EVENTS; e++)
        if (r->events[e])
            printf("# network event: %s, %zu line(s)%s%s\n",
                   fb_nccl_event_str((enum fb_nccl_event)e), r->events[e],
                   r->event_nics[e][0] ? ": " : "", r->event_nics[e]);
    if (!brief && r->nconns) {
        printf("# %7s %6s %6s %-7s %-5s %s\n", "channel", "src", "dst", "path", "node", "transport");
        for (size_t i = 0; i < r->nconns; i++) {
            const struct fb_nccl_conn *c = &r->conns[i];
            printf("  %7d %6d %6d %-7s %-5s %s\n", c->channel, c->src, c->dst,
                   fb_nccl_path_str(c->path), c->inter ? "inter" : "intra", c->transport);
        }
    }
    counts_str(r->intra, intra, sizeof intra);
    counts_str(r->inter, inter, sizeof inter);
    printf("# connections: %zu; intra-node: %s; inter-node: %s\n", r->nconns, intra, inter);
    for (int i = 0; i < FB_NCCL_VERDICTS; i++)
        printf("%s %s: %s\n", fb_verdict_str(v[i].verdict), v[i].check, v[i].text);
}

static cJSON *counts_json(const size_t *counts)
{
    cJSON *o = cJSON_CreateObject();

    for (int p = 0; o && p < FB_NCCL_PATHS; p++)
        cJSON_AddNumberToObject(o, fb_nccl_path_str((enum fb_nccl_path)p), (double)counts[p]);
    return o;
}

/* "events": {"port error": {"lines": 2, "devices": "mlx5_0:1"}, ...} for the events seen, and
 * "first_fault". Returns 0, or 1 when out of memory. */
static int add_events(cJSON *o, const struct fb_nccl_report *r)
{
    cJSON *events = cJSON_AddObjectToObject(o, "events");

    if (!events || !cJSON_AddStringToObject(o, "first_fault", r->first_fault))
        return 1;
    for (int e = 1; e < FB_NCCL_EVENTS; e++) {
        cJSON *one;
        if (!r->events[e])
            continue;
        if (!(one = cJSON_AddObjectToObject(events, fb_nccl_event_str((enum fb_nccl_event)e))) ||
            !cJSON_AddNumberToObject(one, "lines", (double)r->events[e]) ||
            !cJSON_AddStringToObject(one, "devices", r->event_nics[e]))
            return 1;
    }
    return 0;
}

/* Returns 0, or 1 when out of memory. */
static int print_json(const struct fb_nccl_report *r, const struct fb_nccl_verdict *v)
{
    cJSON *o = cJSON_CreateObject(), *conns = cJSON_CreateArray(), *verdicts = cJSON_CreateArray();
    char *s = NULL;
    int rc = 1;

    if (!o || !conns || !verdicts)
        goto out;
    cJSON_AddStringToObject(o, "version", r->version);
    cJSON_AddStringToObject(o, "version_other", r->version_other);
    cJSON_AddNumberToObject(o, "lines", (double)r->lines);
    cJSON_AddNumberToObject(o, "nccl_lines", (double)r->nccl_lines);
    cJSON_AddNumberToObject(o, "warns", (double)r->warns);
    cJSON_AddBoolToObject(o, "ib_available", r->ib_available);
    cJSON_AddBoolToObject(o, "ib_missing", r->ib_missing);
    cJSON_AddStringToObject(o, "network", r->network);
    cJSON_AddStringToObject(o, "nics", r->nics);
    cJSON_AddStringToObject(o, "env", r->env);
    cJSON_AddStringToObject(o, "dmabuf", r->dmabuf);
    if (add_events(o, r))
        goto out;
    cJSON_AddItemToObject(o, "intra", counts_json(r->intra));
    cJSON_AddItemToObject(o, "inter", counts_json(r->inter));
    for (size_t i = 0; i < r->nconns; i++) {
        const struct fb_nccl_conn *c = &r->conns[i];
        cJSON *e = cJSON_CreateObject();
        if (!e)
            goto out;
        cJSON_AddNumberToObject(e, "channel", c->channel);
        cJSON_AddNumberToObject(e, "src", c->src);
        cJSON_AddNumberToObject(e, "dst", c->dst);
        cJSON_AddStringToObject(e, "path", fb_nccl_path_str(c->path));
        cJSON_AddBoolToObject(e, "inter", c->inter);
        cJSON_AddStringToObject(e, "transport", c->transport);
        cJSON_AddItemToArray(conns, e);
    }
    for (int i = 0; i < FB_NCCL_VERDICTS; i++) {
        cJSON *e = cJSON_CreateObject();
        if (!e)
            goto out;
        cJSON_AddStringToObject(e, "check", v[i].check);
        cJSON_AddStringToObject(e, "verdict", fb_verdict_str(v[i].verdict));
        cJSON_AddStringToObject(e, "text", v[i].text);
        cJSON_AddItemToArray(verdicts, e);
    }
    cJSON_AddItemToObject(o, "connections", conns);
    conns = NULL;
    cJSON_AddItemToObject(o, "verdicts", verdicts);
    verdicts = NULL;
    if (!(s = cJSON_Print(o)))
        goto out;
    printf("%s\n", s);
    rc = 0;
out:
    free(s);
    cJSON_Delete(conns);
    cJSON_Delete(verdicts);
    cJSON_Delete(o);
    return rc;
}

int fb_cmd_nccl_log(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"brief", no_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct fb_nccl_report r;
    struct fb_nccl_verdict v[FB_NCCL_VERDICTS];
    enum fb_verdict worst;
    int json = 0, brief = 0, c, rc;
    char why[512];
    fb_status st;

    optind = 0; /* a full restart of getopt (see cli.c) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'b': brief = 1; break;
        case 'h': usage(); return 0;
        default:
            fb_cli_option_error(c, argv, why, sizeof why);
            fb_error("nccl-log: %s", why);
            return 2;
        }
    }
    if (optind >= argc) {
        fb_error("nccl-log: no log file given (see `fabricbench nccl-log --help`)");
        return 2;
    }
    st = fb_nccl_report_files((const char *const *)argv + optind, (size_t)(argc - optind), &r,
                              why, sizeof why);
    if (st != FB_OK) {
        /* unreadable and malformed alike are bad input */
        fb_error("nccl-log: %s", why);
        return st == FB_ERR_NOMEM ? 1 : 2;
    }
    if (!r.nccl_lines) {
        if (argc - optind == 1)
            fb_error("nccl-log: no NCCL line in '%s' (was NCCL_DEBUG=INFO set?)", argv[optind]);
        else
            fb_error("nccl-log: no NCCL line in any of the %d files given (was NCCL_DEBUG=INFO "
                     "set?)", argc - optind);
        fb_nccl_report_release(&r);
        return 2;
    }
    worst = fb_nccl_verdicts(&r, v);
    if (json)
        rc = print_json(&r, v);
    else {
        print_text(&r, v, (size_t)(argc - optind), brief);
        rc = 0;
    }
    if (rc)
        fb_error("nccl-log: out of memory writing the report");
    else
        rc = worst == FB_FAIL ? 1 : 0;
    fb_nccl_report_release(&r);
    return rc;
}

/* accept's judgement of every node: env.json's per-node block ("hosts": each node's host, GPUs
 * and InfiniBand ports, as its local rank 0 read them) against the profile's GPU count and
 * ports, the failing hosts named in the check's line. An env.json without the block (written
 * before it existed) is judged by accept_env.c as before, with a note. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "accept_impl.h"

const cJSON *fb_accept_hosts(const struct ctx *c)
{
    const cJSON *hosts = c->env ? cJSON_GetObjectItemCaseSensitive(c->env, "hosts") : NULL;

    return cJSON_IsArray(hosts) && cJSON_GetArraySize(hosts) > 0 ? hosts : NULL;
}

/* Appends "host what" to a "; "-separated list, "..." once it is full. */
static void list_host(char *list, size_t size, const char *fmt, ...) FB_PRINTF(3, 4);
static void list_host(char *list, size_t size, const char *fmt, ...)
{
    size_t used = strlen(list);
    char item[160];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(item, sizeof item, fmt, ap);
    va_end(ap);
    if (used >= 3 && strcmp(list + used - 3, "...") == 0)
        return;
    if (used + strlen(item) + 2 + 4 >= size) {
        if (used + 6 < size)
            strcat(list, used ? "; ..." : "...");
        return;
    }
    if (used)
        strcat(list, "; ");
    strcat(list, item);
}

void fb_accept_nodes_gpus(struct ctx *c, struct fb_accept_check *k, const cJSON *hosts)
{
    const cJSON *h;
    char bad[200] = "";
    int lo = -1, n = 0, nbad = 0;
    const char *at = "";

    cJSON_ArrayForEach(h, hosts) {
        int g = (int)fb_accept_jnum(h, "gpus", -1);
        n++;
        if (g < 0)
            continue;
        if (lo < 0 || g < lo) {
            lo = g;
            at = fb_accept_jstr(h, "host");
        }
        if (g != c->p->gpus) {
            nbad++;
            list_host(bad, sizeof bad, "%.60s has %d", fb_accept_jstr(h, "host"), g);
        }
    }
    if (lo < 0) {
        SET(k->why, "env.json records no node's gpus");
        return;
    }
    SET(k->measured, "%d", lo);
    k->margin_pct = c->p->gpus ? ((double)lo / c->p->gpus - 1) * 100 : NAN;
    SET(k->from, "env.json hosts[].gpus (every node, %d; the fewest: %.60s)", n, at);
    k->verdict = nbad ? FB_FAIL : FB_PASS;
    if (nbad)
        SET(k->why, "%d of %d node(s) without %d GPU(s): %s", nbad, n, c->p->gpus, bad);
}

/* A node's ports up at the rate; the others, with their state and rate, into `down`. */
static int ports_up(const cJSON *ib, double rate, char *down, size_t size)
{
    const cJSON *port;
    int up = 0;

    cJSON_ArrayForEach(port, ib) {
        const char *state = fb_accept_jstr(port, "state");
        double gbps = fb_accept_jnum(port, "rate_gbps", 0);
        if (strcmp(state, "ACTIVE") == 0 && gbps >= rate) {
            up++;
            continue;
        }
        if (strlen(down) + 40 < size)
            snprintf(down + strlen(down), size - strlen(down), "%s%.24s:%d %.12s %.4g Gb/s",
                     down[0] ? ", " : "", fb_accept_jstr(port, "device"),
                     (int)fb_accept_jnum(port, "port", 0), state[0] ? state : "?", gbps);
    }
    return up;
}

void fb_accept_nodes_ib(struct fb_accept_check *k, const cJSON *hosts, int want, double rate)
{
    const cJSON *h;
    char bad[240] = "", unseen[240] = "";
    int n = 0, nbad = 0, nunseen = 0, lo = -1, lo_total = 0;

    cJSON_ArrayForEach(h, hosts) {
        const cJSON *ib = cJSON_GetObjectItemCaseSensitive(h, "infiniband");
        char down[120] = "";
        int up = ports_up(cJSON_IsArray(ib) ? ib : NULL, rate, down, sizeof down);
        int total = cJSON_IsArray(ib) ? cJSON_GetArraySize(ib) : 0;
        /* the node's own count: env.json keeps its first FB_FACTS_PORTS ports (16) */
        double all = fb_accept_jnum(h, "infiniband_ports", total);

        n++;
        if (lo < 0 || up < lo) {
            lo = up;
            lo_total = total;
        }
        if (up >= want)
            continue;
        if (all > total && up + (all - total) >= want) {
            /* short among the ports kept, but the ports not kept could make up the rest */
            nunseen++;
            list_host(unseen, sizeof unseen, "%.60s %d of its %.0f kept", fb_accept_jstr(h, "host"),
                      total, all);
            continue;
        }
        nbad++;
        list_host(bad, sizeof bad, "%.60s %d of %d up (%.80s)", fb_accept_jstr(h, "host"), up,
                  total, cJSON_IsString(ib) ? ib->valuestring : down[0] ? down : "no port");
    }
    SET(k->measured, "%d of %d", lo, lo_total);
    SET(k->from, "env.json hosts[].infiniband (every node's ports, %d node(s); the fewest up)",
        n);
    if (want > 0)
        k->margin_pct = ((double)lo / want - 1) * 100;
    k->verdict = nbad ? FB_FAIL : nunseen ? FB_SKIP : FB_PASS;
    if (nbad)
        SET(k->why, "%d of %d node(s) with fewer than %d port(s) ACTIVE at >= %.4g Gb/s: %s",
            nbad, n, want, rate, bad);
    else if (nunseen)
        SET(k->why, "%d of %d node(s) short of %d port(s) among the ports env.json keeps, with more "
            "it does not (%s): `fabricbench health` on the node judges every port", nunseen, n,
            want, unseen);
}

/* locate's plan of node pairs: the circle method's rounds, the sampled plan above the cap, and
 * the retest rounds. Deterministic: our own generator with a fixed seed, not the C library's. */
#include "locate_plan.h"

#include <stdlib.h>
#include <string.h>

int fb_locate_full_rounds(int nodes)
{
    if (nodes < 2)
        return 0;
    return nodes % 2 == 0 ? nodes - 1 : nodes;
}

void fb_locate_circle_round(int nodes, int r, int *partner)
{
    int m = nodes % 2 == 0 ? nodes : nodes + 1; /* odd: a phantom node m - 1 is the bye */

    for (int i = 0; i < nodes; i++)
        partner[i] = -1;
    if (nodes < 2)
        return;
    /* Seats 0..m-1: seat 0 keeps node 0, seat k > 0 holds node 1 + (k - 1 + r) mod (m - 1);
     * seat i meets seat m - 1 - i. */
    for (int i = 0; i < m / 2; i++) {
        int a = i == 0 ? 0 : 1 + (i - 1 + r) % (m - 1);
        int j = m - 1 - i;
        int b = 1 + (j - 1 + r) % (m - 1);
        if (a < nodes && b < nodes) {
            partner[a] = b;
            partner[b] = a;
        }
    }
}

void fb_locate_rounds_release(struct fb_locate_rounds *r)
{
    free(r->partner);
    memset(r, 0, sizeof *r);
}

/* xorshift64*: small, and the same sequence everywhere. */
static uint64_t next_random(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545F4914F6CDD1DULL;
}

fb_status fb_locate_plan(int nodes, int cap, int sample, uint64_t seed,
                         struct fb_locate_rounds *out)
{
    int full = fb_locate_full_rounds(nodes);
    int *pick = NULL;

    memset(out, 0, sizeof *out);
    if (nodes < 1)
        return FB_ERR_USAGE;
    cap = cap > 0 ? cap : FB_LOCATE_CAP;
    sample = sample > 0 ? sample : FB_LOCATE_SAMPLED_ROUNDS;
    out->nodes = nodes;
    out->full = full;
    out->sampled = nodes > cap && sample < full;
    out->nrounds = out->sampled ? sample : full;
    out->partner = malloc(((size_t)out->nrounds * (size_t)nodes + 1) * sizeof *out->partner);
    pick = malloc(((size_t)full + 1) * sizeof *pick);
    if (!out->partner || !pick) {
        free(pick);
        fb_locate_rounds_release(out);
        return FB_ERR_NOMEM;
    }
    for (int r = 0; r < full; r++)
        pick[r] = r;
    if (out->sampled) {
        /* A partial Fisher-Yates shuffle: the first `sample` entries, then in round order. */
        uint64_t x = seed ^ ((uint64_t)nodes * 0x9E3779B97F4A7C15ULL);
        if (!x)
            x = 1;
        for (int r = 0; r < sample; r++) {
            int k = r + (int)(next_random(&x) % (uint64_t)(full - r));
            int t = pick[r];
            pick[r] = pick[k];
            pick[k] = t;
        }
        for (int r = 1; r < sample; r++) /* insertion sort: sample is small */
            for (int k = r; k > 0 && pick[k - 1] > pick[k]; k--) {
                int t = pick[k];
                pick[k] = pick[k - 1];
                pick[k - 1] = t;
            }
    }
    for (int r = 0; r < out->nrounds; r++)
        fb_locate_circle_round(nodes, pick[r], out->partner + (size_t)r * (size_t)nodes);
    free(pick);
    return FB_OK;
}

/* Appends an empty round (every node idle) to *out; false when out of memory. */
static bool add_round(struct fb_locate_rounds *out)
{
    size_t n = (size_t)out->nodes;
    int *grown = realloc(out->partner, ((size_t)out->nrounds + 1) * n * sizeof *grown);

    if (!grown)
        return false;
    out->partner = grown;
    for (size_t i = 0; i < n; i++)
        grown[(size_t)out->nrounds * n + i] = -1;
    out->nrounds++;
    return true;
}

/* The first round from `from` on where a and b are both idle, a new one when none is. */
static int *free_round(struct fb_locate_rounds *out, int from, int a, int b)
{
    size_t n = (size_t)out->nodes;

    for (int r = from; r < out->nrounds; r++) {
        int *p = out->partner + (size_t)r * n;
        if (p[a] < 0 && p[b] < 0)
            return p;
    }
    if (!add_round(out))
        return NULL;
    return out->partner + (size_t)(out->nrounds - 1) * n;
}

/* Whether a and b already meet in one of the rounds. */
static bool met(const struct fb_locate_rounds *out, int a, int b)
{
    for (int r = 0; r < out->nrounds; r++)
        if (out->partner[(size_t)r * (size_t)out->nodes + (size_t)a] == b)
            return true;
    return false;
}

fb_status fb_locate_retests(int nodes, const int *want, const bool *healthy, const int (*pairs)[2],
                            size_t npairs, struct fb_locate_rounds *out)
{
    int *load = calloc((size_t)(nodes > 0 ? nodes : 1), sizeof *load);
    fb_status st = FB_OK;

    memset(out, 0, sizeof *out);
    out->nodes = nodes;
    if (!load)
        return FB_ERR_NOMEM;
    /* Pairs alone first: each in a round of its own, so nothing else shares the fabric. */
    for (size_t k = 0; k < npairs; k++) {
        int *p;
        if (!add_round(out)) {
            st = FB_ERR_NOMEM;
            goto out;
        }
        p = out->partner + (size_t)(out->nrounds - 1) * (size_t)nodes;
        p[pairs[k][0]] = pairs[k][1];
        p[pairs[k][1]] = pairs[k][0];
    }
    /* Then each node against healthy partners, spreading the load over the healthy nodes. */
    for (int i = 0; i < nodes; i++)
        for (int w = 0; want && w < want[i]; w++) {
            int best = -1;
            int *p;
            for (int h = 0; h < nodes; h++)
                if (h != i && healthy[h] && !met(out, i, h) && (best < 0 || load[h] < load[best]))
                    best = h;
            if (best < 0)
                break; /* no healthy partner left */
            if (!(p = free_round(out, (int)npairs, i, best))) {
                st = FB_ERR_NOMEM;
                goto out;
            }
            p[i] = best;
            p[best] = i;
            load[best]++;
        }
out:
    free(load);
    if (st != FB_OK)
        fb_locate_rounds_release(out);
    return st;
}

double fb_locate_miss_odds(int full, int sample)
{
    if (full <= 0 || sample >= full)
        return 0.0;
    return 1.0 - (double)sample / (double)full;
}

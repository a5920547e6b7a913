/* The p2p matrices' plan of pairs: all of them, or the sample of p2p_sample.h. Deterministic:
 * a rank count and a node map give the same points on every rank (the random pairs come from
 * our own generator with a fixed seed, not from the C library). */
#include "p2p_sample.h"

#include <stdlib.h>
#include <string.h>

struct list {
    struct fb_p2p_point *v;
    size_t n, cap;
};

static bool push(struct list *l, int a, int b, int stride)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        struct fb_p2p_point *grown = realloc(l->v, cap * sizeof *grown);
        if (!grown)
            return false;
        l->v = grown;
        l->cap = cap;
    }
    l->v[l->n++] = (struct fb_p2p_point){a, b, stride};
    return true;
}

/* xorshift64*: small, and the same sequence everywhere. */
static uint64_t next_random(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545F4914F6CDD1DULL;
}

static int cmp_point(const void *p, const void *q)
{
    const struct fb_p2p_point *x = p, *y = q;
    if (x->a != y->a)
        return (x->a > y->a) - (x->a < y->a);
    return (x->b > y->b) - (x->b < y->b);
}

enum fb_p2p_matrix_mode fb_p2p_sample_mode_parse(const char *name)
{
    if (name && strcmp(name, "all") == 0)
        return FB_P2P_MATRIX_ALL;
    if (name && strcmp(name, "sampled") == 0)
        return FB_P2P_MATRIX_SAMPLED;
    return FB_P2P_MATRIX_AUTO;
}

void fb_p2p_sample_release(struct fb_p2p_sample *s)
{
    free(s->uni);
    free(s->sym);
    free(s->shifts);
    memset(s, 0, sizeof *s);
}

/* Whether every pair (k, k + shift) lies on one node. */
static bool shift_on_nodes(int n, const int *node_of, int shift)
{
    for (int k = 0; k < n; k++)
        if (node_of[k] != node_of[(k + shift) % n])
            return false;
    return true;
}

static bool add_shift(struct fb_p2p_sample *s, const int *node_of, bool intra_only, int shift)
{
    if (shift <= 0 || shift >= s->n || (intra_only && !shift_on_nodes(s->n, node_of, shift)))
        return true;
    for (size_t i = 0; i < s->nshifts; i++)
        if (s->shifts[i] == shift)
            return true;
    s->shifts[s->nshifts++] = shift;
    return true;
}

/* Every pair, one at a time: the plan the matrices always had. */
static bool plan_all(struct fb_p2p_sample *s, const int *node_of, bool intra_only, struct list *uni,
                     struct list *sym)
{
    int n = s->n;
    bool ok = true;

    for (int a = 0; ok && a < n; a++)
        for (int b = 0; ok && b < n; b++)
            if (a != b && (!intra_only || node_of[a] == node_of[b]))
                ok = push(uni, a, b, 0);
    for (int a = 0; ok && a < n; a++)
        for (int b = a + 1; ok && b < n; b++)
            if (!intra_only || node_of[a] == node_of[b])
                ok = push(sym, a, b, 0);
    for (int shift = 1; ok && shift < n; shift++)
        ok = add_shift(s, node_of, intra_only, shift);
    s->cells_uni = uni->n;
    s->cells_sym = sym->n;
    return ok;
}

static bool plan_sampled(struct fb_p2p_sample *s, const int *node_of, bool intra_only,
                         struct list *uni, struct list *sym)
{
    int n = s->n, g = s->per_node, nodes = s->nodes;
    int *first = NULL, *count = NULL, *order = NULL;
    struct list cross = {0};
    bool ok = true;

    /* Inside each node: every pair. On equal blocks, one point per ordered pair of local ranks,
     * on all nodes at once; otherwise one pair at a time. */
    if (g > 0) {
        for (int a = 0; ok && a < g; a++)
            for (int b = 0; ok && b < g; b++)
                if (a != b)
                    ok = push(uni, a, b, g);
        for (int a = 0; ok && a < g; a++)
            for (int b = a + 1; ok && b < g; b++)
                ok = push(sym, a, b, g);
        s->cells_uni = (size_t)nodes * uni->n;
        s->cells_sym = (size_t)nodes * sym->n;
    } else {
        for (int a = 0; ok && a < n; a++)
            for (int b = 0; ok && b < n; b++)
                if (a != b && node_of[a] == node_of[b])
                    ok = push(uni, a, b, 0);
        for (int a = 0; ok && a < n; a++)
            for (int b = a + 1; ok && b < n; b++)
                if (node_of[a] == node_of[b])
                    ok = push(sym, a, b, 0);
        s->cells_uni = uni->n;
        s->cells_sym = sym->n;
    }

    if (!intra_only && nodes > 1 && ok) {
        /* The ranks of each node in order: order[first[i] .. first[i] + count[i]). */
        first = calloc((size_t)nodes, sizeof *first);
        count = calloc((size_t)nodes, sizeof *count);
        order = malloc((size_t)n * sizeof *order);
        ok = first && count && order;
        for (int k = 0; ok && k < n; k++)
            count[node_of[k]]++;
        for (int i = 1; ok && i < nodes; i++)
            first[i] = first[i - 1] + count[i - 1];
        if (ok) {
            memset(count, 0, (size_t)nodes * sizeof *count);
            for (int k = 0; k < n; k++)
                order[first[node_of[k]] + count[node_of[k]]++] = k;
        }
        /* The ring: local rank r of node i to local rank r of node i + 1 (r modulo the size of
         * a smaller node), so every boundary between neighbouring nodes is crossed by every
         * local rank. */
        for (int i = 0; ok && i < nodes; i++) {
            int j = (i + 1) % nodes;
            for (int r = 0; ok && r < count[i]; r++)
                ok = push(&cross, order[first[i] + r], order[first[j] + r % count[j]], 0);
        }
        /* A few random cross-node pairs, seeded by the rank count: the same on every rank. */
        {
            uint64_t x = FB_P2P_SAMPLE_SEED ^ ((uint64_t)n * 0x9E3779B97F4A7C15ULL);
            for (int tries = 0; ok && s->random < FB_P2P_SAMPLE_RANDOM &&
                                tries < 64 * FB_P2P_SAMPLE_RANDOM; tries++) {
                int a = (int)(next_random(&x) % (uint64_t)n), b = (int)(next_random(&x) % (uint64_t)n);
                bool known = node_of[a] == node_of[b];
                for (size_t k = 0; !known && k < cross.n; k++)
                    known = cross.v[k].a == a && cross.v[k].b == b;
                if (known)
                    continue;
                ok = push(&cross, a, b, 0);
                s->random++;
            }
        }
        for (size_t k = 0; ok && k < cross.n; k++)
            ok = push(uni, cross.v[k].a, cross.v[k].b, 0);
        s->cells_uni += cross.n;
        /* Both ways and latency: the same pairs unordered, each once. */
        for (size_t k = 0; k < cross.n; k++)
            if (cross.v[k].a > cross.v[k].b) {
                int t = cross.v[k].a;
                cross.v[k].a = cross.v[k].b;
                cross.v[k].b = t;
            }
        qsort(cross.v, cross.n, sizeof *cross.v, cmp_point);
        for (size_t k = 0; ok && k < cross.n; k++)
            if (k == 0 || cmp_point(&cross.v[k], &cross.v[k - 1]) != 0) {
                ok = push(sym, cross.v[k].a, cross.v[k].b, 0);
                s->cells_sym++;
            }
    }

    /* All at once: neighbours (mostly inside nodes), the ring (every rank to the same local
     * rank of the next node) and the bisection (each node to the node half the job away, so
     * half the nodes send to the other half and back). */
    if (ok) {
        add_shift(s, node_of, intra_only, 1);
        if (g > 0)
            add_shift(s, node_of, intra_only, g);
        if (g > 0 && nodes % 2 == 0)
            add_shift(s, node_of, intra_only, n / 2);
    }
    free(first);
    free(count);
    free(order);
    free(cross.v);
    return ok;
}

fb_status fb_p2p_sample_plan(int n, const int *node_of, enum fb_p2p_matrix_mode mode,
                             bool intra_only, struct fb_p2p_sample *out)
{
    struct list uni = {0}, sym = {0};
    bool ok;

    memset(out, 0, sizeof *out);
    out->n = n;
    for (int k = 0; k < n; k++)
        out->nodes = node_of[k] + 1 > out->nodes ? node_of[k] + 1 : out->nodes;
    if (n > 0 && out->nodes > 0 && n % out->nodes == 0) {
        out->per_node = n / out->nodes;
        for (int k = 0; k < n && out->per_node; k++)
            if (node_of[k] != k / out->per_node)
                out->per_node = 0;
    }
    out->sampled = mode == FB_P2P_MATRIX_SAMPLED ||
                   (mode == FB_P2P_MATRIX_AUTO && n > FB_P2P_SAMPLE_THRESHOLD);
    ok = (out->shifts = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->shifts)) != NULL;
    if (ok)
        ok = out->sampled ? plan_sampled(out, node_of, intra_only, &uni, &sym)
                          : plan_all(out, node_of, intra_only, &uni, &sym);
    out->uni = uni.v;
    out->nuni = uni.n;
    out->sym = sym.v;
    out->nsym = sym.n;
    if (!ok) {
        fb_p2p_sample_release(out);
        return FB_ERR_NOMEM;
    }
    return FB_OK;
}

uint64_t fb_p2p_sample_hash(const struct fb_p2p_sample *s)
{
    uint64_t h = 1469598103934665603ULL;
#define MIX(x) (h = (h ^ (uint64_t)(uint32_t)(x)) * 1099511628211ULL)
    MIX(s->sampled);
    MIX(s->n);
    for (size_t i = 0; i < s->nuni; i++) {
        MIX(s->uni[i].a);
        MIX(s->uni[i].b);
        MIX(s->uni[i].stride);
    }
    for (size_t i = 0; i < s->nsym; i++) {
        MIX(s->sym[i].a);
        MIX(s->sym[i].b);
        MIX(s->sym[i].stride);
    }
    for (size_t i = 0; i < s->nshifts; i++)
        MIX(s->shifts[i]);
#undef MIX
    return h;
}

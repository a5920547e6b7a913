/* The p2p matrices' sample (p2p_sample.h): every pair inside each node present, the ring
 * crossing every node boundary with every local rank, the random pairs cross-node, distinct
 * and reproducible, the counts equal to the formulas of docs/scale.md, and every pair below
 * the threshold. */
#include <stdlib.h>

#include "p2p_sample.h"
#include "test.h"

/* The cells a list of points fills, as an n x n bitmap; returns how many, or -1 when a cell
 * is filled twice (a wasted measurement) or a point names a rank outside 0..n-1. */
static long expand(const struct fb_p2p_point *pts, size_t npts, int n, unsigned char *map)
{
    long cells = 0;

    memset(map, 0, (size_t)n * (size_t)n);
    for (size_t i = 0; i < npts; i++) {
        int step = pts[i].stride > 0 ? pts[i].stride : n;
        for (int base = 0; base + (pts[i].stride > 0 ? step : 0) <= n; base += step) {
            int a = pts[i].a + (pts[i].stride > 0 ? base : 0);
            int b = pts[i].b + (pts[i].stride > 0 ? base : 0);
            if (a < 0 || b < 0 || a >= n || b >= n || a == b || map[(size_t)a * n + b])
                return -1;
            map[(size_t)a * n + b] = 1;
            cells++;
            if (pts[i].stride <= 0)
                break;
        }
    }
    return cells;
}

static int *blocks(int n, int g)
{
    int *node_of = malloc((size_t)n * sizeof *node_of);
    for (int k = 0; k < n; k++)
        node_of[k] = k / g;
    return node_of;
}

/* The checks every sample must pass; g = ranks per node when nodes are equal blocks. */
static void check_sample(int n, const int *node_of, int nodes, const struct fb_p2p_sample *s)
{
    unsigned char *uni = malloc((size_t)n * n), *sym = malloc((size_t)n * n);
    long cu = expand(s->uni, s->nuni, n, uni), cs = expand(s->sym, s->nsym, n, sym);
    long intra = 0, cross = 0;

    CHECK(s->sampled);
    CHECK(cu == (long)s->cells_uni);
    CHECK(cs == (long)s->cells_sym);
    for (size_t i = 0; i < s->nsym; i++)
        CHECK(s->sym[i].a < s->sym[i].b);
    /* every pair inside each node, one way and both ways */
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (a != b && node_of[a] == node_of[b]) {
                intra++;
                if (!uni[(size_t)a * n + b] || (a < b && !sym[(size_t)a * n + b])) {
                    CHECK(!"a pair inside a node is missing");
                    a = b = n; /* one message is enough */
                }
            } else if (a != b && uni[(size_t)a * n + b]) {
                cross++;
                /* both ways and latency measure the same cross pairs, unordered */
                CHECK(sym[(size_t)(a < b ? a : b) * n + (a < b ? b : a)]);
            }
    /* the ring: each node's local rank r reaches local rank r of the next node */
    for (int i = 0; i < nodes; i++) {
        int j = (i + 1) % nodes, r = 0, in_j = 0, crossed = 0;
        for (int k = 0; k < n; k++)
            in_j += node_of[k] == j;
        for (int a = 0; a < n; a++) {
            int t = r % in_j;
            if (node_of[a] != i)
                continue;
            for (int b = 0; b < n; b++)
                if (node_of[b] == j && t-- == 0) {
                    crossed += uni[(size_t)a * n + b];
                    break;
                }
            r++;
        }
        if (crossed != r)
            fprintf(stderr, "ring %d -> %d: %d of %d local ranks\n", i, j, crossed, r);
        CHECK(crossed == r && r > 0);
    }
    /* the random pairs: all across nodes */
    CHECK(cross == (long)s->cells_uni - intra);
    free(uni);
    free(sym);
}

int main(void)
{
    struct fb_p2p_sample s, t;
    int *node_of;

    CHECK(fb_p2p_sample_mode_parse("all") == FB_P2P_MATRIX_ALL);
    CHECK(fb_p2p_sample_mode_parse("sampled") == FB_P2P_MATRIX_SAMPLED);
    CHECK(fb_p2p_sample_mode_parse("auto") == FB_P2P_MATRIX_AUTO &&
          fb_p2p_sample_mode_parse(NULL) == FB_P2P_MATRIX_AUTO);

    /* At the threshold (64 ranks, 8 nodes of 8): every pair, one at a time, every shift. */
    node_of = blocks(64, 8);
    CHECK(fb_p2p_sample_plan(64, node_of, FB_P2P_MATRIX_AUTO, false, &s) == FB_OK);
    CHECK(!s.sampled && s.per_node == 8 && s.nodes == 8);
    CHECK(s.nuni == 64 * 63 && s.cells_uni == 64 * 63 && s.nsym == 64 * 63 / 2);
    CHECK(s.nshifts == 63);
    for (size_t i = 0; i < s.nuni; i++)
        CHECK(s.uni[i].stride == 0);
    fb_p2p_sample_release(&s);
    /* --matrix all above it */
    free(node_of);
    node_of = blocks(72, 8);
    CHECK(fb_p2p_sample_plan(72, node_of, FB_P2P_MATRIX_ALL, false, &s) == FB_OK);
    CHECK(!s.sampled && s.cells_uni == 72 * 71);
    fb_p2p_sample_release(&s);
    free(node_of);

    /* Above it: 128 ranks, N = 16 nodes x G = 8. Points: G(G-1) rounds + N G ring + 16 random;
     * cells: N G (G-1) + N G + 16. */
    node_of = blocks(128, 8);
    CHECK(fb_p2p_sample_plan(128, node_of, FB_P2P_MATRIX_AUTO, false, &s) == FB_OK);
    CHECK(s.sampled && s.per_node == 8 && s.nodes == 16);
    CHECK(s.random == FB_P2P_SAMPLE_RANDOM);
    CHECK(s.nuni == 8 * 7 + 16 * 8 + FB_P2P_SAMPLE_RANDOM);
    CHECK(s.cells_uni == 16 * 8 * 7 + 16 * 8 + FB_P2P_SAMPLE_RANDOM);
    CHECK(s.cells_sym >= 16 * 8 * 7 / 2 + 16 * 8 &&
          s.cells_sym <= 16 * 8 * 7 / 2 + 16 * 8 + FB_P2P_SAMPLE_RANDOM);
    CHECK(s.nsym == 8 * 7 / 2 + (s.cells_sym - 16 * 8 * 7 / 2));
    /* neighbours, the ring and the bisection, all at once */
    CHECK(s.nshifts == 3 && s.shifts[0] == 1 && s.shifts[1] == 8 && s.shifts[2] == 64);
    check_sample(128, node_of, 16, &s);
    /* reproducible: planned again (another rank), the same points */
    CHECK(fb_p2p_sample_plan(128, node_of, FB_P2P_MATRIX_AUTO, false, &t) == FB_OK);
    CHECK(fb_p2p_sample_hash(&s) == fb_p2p_sample_hash(&t));
    CHECK(s.nuni == t.nuni && memcmp(s.uni, t.uni, s.nuni * sizeof *s.uni) == 0);
    CHECK(s.nsym == t.nsym && memcmp(s.sym, t.sym, s.nsym * sizeof *s.sym) == 0);
    fb_p2p_sample_release(&t);
    /* IPC: the pairs inside the nodes only, no all-at-once shift stays inside them */
    CHECK(fb_p2p_sample_plan(128, node_of, FB_P2P_MATRIX_AUTO, true, &t) == FB_OK);
    CHECK(t.nuni == 8 * 7 && t.cells_uni == 16 * 8 * 7 && t.nsym == 28 && t.nshifts == 0);
    CHECK(fb_p2p_sample_hash(&s) != fb_p2p_sample_hash(&t));
    fb_p2p_sample_release(&t);
    fb_p2p_sample_release(&s);
    free(node_of);

    /* 4096 ranks, 512 nodes x 8: the count docs/scale.md states. */
    node_of = blocks(4096, 8);
    CHECK(fb_p2p_sample_plan(4096, node_of, FB_P2P_MATRIX_AUTO, false, &s) == FB_OK);
    CHECK(s.nuni == 56 + 4096 + 16 && s.cells_uni == 512 * 56 + 4096 + 16);
    CHECK(s.nsym >= 28 + 4096 && s.nsym <= 28 + 4096 + 16);
    check_sample(4096, node_of, 512, &s);
    fb_p2p_sample_release(&s);
    free(node_of);

    /* Two nodes (forced): the ring goes there and back, one unordered pair per local rank. */
    node_of = blocks(16, 8);
    CHECK(fb_p2p_sample_plan(16, node_of, FB_P2P_MATRIX_SAMPLED, false, &s) == FB_OK);
    check_sample(16, node_of, 2, &s);
    CHECK(s.cells_uni == 2 * 56 + 16 + s.random);
    fb_p2p_sample_release(&s);
    free(node_of);

    /* Ranks dealt round-robin over 4 nodes (not blocks): pairs inside nodes one at a time. */
    node_of = malloc(80 * sizeof *node_of);
    for (int k = 0; k < 80; k++)
        node_of[k] = k % 4;
    CHECK(fb_p2p_sample_plan(80, node_of, FB_P2P_MATRIX_AUTO, false, &s) == FB_OK);
    CHECK(s.per_node == 0 && s.nodes == 4);
    CHECK(s.cells_uni == 4 * 20 * 19 + 80 + s.random && s.nuni == s.cells_uni);
    check_sample(80, node_of, 4, &s);
    fb_p2p_sample_release(&s);
    free(node_of);
    TEST_DONE();
}

/* locate's pure parts (harness/analysis/locate_plan.c, locate_judge.c): the circle method's
 * rounds for 2..17 nodes (every pair met exactly once, each round's pairs disjoint, one bye per
 * round for odd n, n - 1 or n rounds), the sampled plan above the cap (its size, no repeated
 * round, reproducible), the retest rounds, and the decisions on synthetic measurements: a slow
 * node, a slow link, noise, stragglers, no false alarm on spread-out healthy figures. */
#include <math.h>
#include <stdlib.h>

#include "locate_judge.h"
#include "locate_plan.h"
#include "test.h"

static void check_tournament(int n)
{
    struct fb_locate_rounds r;
    unsigned char *met = calloc((size_t)n * (size_t)n, 1);
    int expect = n % 2 == 0 ? n - 1 : n;

    CHECK(fb_locate_plan(n, 0, 0, FB_LOCATE_SEED, &r) == FB_OK);
    CHECK(r.nrounds == expect && r.full == expect && !r.sampled);
    CHECK(fb_locate_full_rounds(n) == expect);
    for (int k = 0; k < r.nrounds; k++) {
        const int *p = r.partner + (size_t)k * (size_t)n;
        int byes = 0;
        for (int i = 0; i < n; i++) {
            int j = p[i];
            if (j < 0) {
                byes++;
                continue;
            }
            CHECK(j != i && j < n && p[j] == i); /* disjoint and symmetric */
            if (j > i) {
                CHECK(!met[(size_t)i * n + j]); /* never twice */
                met[(size_t)i * n + j] = 1;
            }
        }
        CHECK(byes == n % 2); /* a bye per round when n is odd, none when even */
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            CHECK(met[(size_t)i * n + j]); /* every pair met */
    fb_locate_rounds_release(&r);
    free(met);
}

static void check_sampled(void)
{
    struct fb_locate_rounds a, b, c;
    unsigned char *met;
    int n = 200, again = 0;

    CHECK(fb_locate_plan(n, 0, 0, FB_LOCATE_SEED, &a) == FB_OK);
    CHECK(a.sampled && a.nrounds == FB_LOCATE_SAMPLED_ROUNDS && a.full == 199);
    CHECK(fb_locate_plan(n, 0, 0, FB_LOCATE_SEED, &b) == FB_OK);
    CHECK(memcmp(a.partner, b.partner, (size_t)a.nrounds * n * sizeof *a.partner) == 0);
    /* the rounds are distinct rounds of the tournament: no pair met twice, every node in each */
    met = calloc((size_t)n * n, 1);
    for (int k = 0; k < a.nrounds; k++)
        for (int i = 0; i < n; i++) {
            int j = a.partner[(size_t)k * n + i];
            CHECK(j >= 0 && a.partner[(size_t)k * n + j] == i);
            if (j > i) {
                again += met[(size_t)i * n + j];
                met[(size_t)i * n + j] = 1;
            }
        }
    CHECK(again == 0);
    /* at or below the cap: the whole tournament */
    CHECK(fb_locate_plan(64, 0, 0, FB_LOCATE_SEED, &c) == FB_OK);
    CHECK(!c.sampled && c.nrounds == 63);
    CHECK_NEAR(fb_locate_miss_odds(199, 16), 1.0 - 16.0 / 199.0, 1e-12);
    CHECK_NEAR(fb_locate_miss_odds(63, 63), 0.0, 0.0);
    fb_locate_rounds_release(&a);
    fb_locate_rounds_release(&b);
    fb_locate_rounds_release(&c);
    free(met);
}

static void check_retests(void)
{
    /* node 1 a node candidate (2 partners), pair 3-4 slow alone plus one healthy partner each */
    int want[6] = {0, 2, 0, 1, 1, 0};
    bool healthy[6] = {true, false, true, false, false, true};
    const int pairs[1][2] = {{3, 4}};
    struct fb_locate_rounds r;
    int meet[6] = {0}, alone = 0;

    CHECK(fb_locate_retests(6, want, healthy, pairs, 1, &r) == FB_OK);
    CHECK(r.nrounds >= 2);
    /* round 1: the pair alone, nothing else */
    for (int i = 0; i < 6; i++)
        alone += r.partner[i] >= 0;
    CHECK(alone == 2 && r.partner[3] == 4 && r.partner[4] == 3);
    for (int k = 1; k < r.nrounds; k++)
        for (int i = 0; i < 6; i++) {
            int j = r.partner[(size_t)k * 6 + i];
            if (j < 0)
                continue;
            CHECK(r.partner[(size_t)k * 6 + j] == i);
            if (!healthy[i])
                CHECK(healthy[j]); /* suspects meet healthy partners only */
            meet[i] += !healthy[i];
        }
    CHECK(meet[1] == 2 && meet[3] == 1 && meet[4] == 1);
    fb_locate_rounds_release(&r);
}

/* Pairs of the full tournament over n nodes with bandwidth 10 (+- a small spread), node `slow`
 * at a third on all its pairs, or only the pair la-lb at a third. */
static size_t synth(int n, int slow, int la, int lb, struct fb_locate_pair *p)
{
    size_t k = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double v = 10.0 + 0.2 * ((i * 7 + j * 3) % 5 - 2);
            if (i == slow || j == slow || (i == la && j == lb))
                v /= 3.0;
            p[k++] = (struct fb_locate_pair){i, j, v};
        }
    return k;
}

static void check_decisions(void)
{
    struct fb_locate_pair p[200];
    bool slow[200], cand[20];
    double med, mad, t[8] = {100, 103, 98, 101, 99, 250, 102, 97};
    bool strag[8];
    int which;

    for (int n = 3; n <= 17; n++) {
        size_t np = synth(n, 2, -1, -1, p), nslow = 0;
        CHECK(fb_locate_classify(n, p, np, 25.0, slow, cand, &med, &mad) == FB_OK);
        /* 3 nodes: the two healthy nodes' median pairs are half slow (6.67) */
        CHECK(n == 3 ? med > 6.0 && med < 7.0 : med > 9.0 && med < 11.0);
        for (int i = 0; i < n; i++)
            CHECK(cand[i] == (i == 2)); /* the slow node, and only it */
        for (size_t k = 0; k < np; k++)
            nslow += slow[k];
        CHECK(nslow == (size_t)n - 1);
    }
    for (int n = 4; n <= 17; n++) {
        size_t np = synth(n, -1, 1, 3, p);
        CHECK(fb_locate_classify(n, p, np, 25.0, slow, cand, &med, &mad) == FB_OK);
        for (int i = 0; i < n; i++)
            CHECK(!cand[i]); /* a slow link names no node */
        for (size_t k = 0; k < np; k++)
            CHECK(slow[k] == (p[k].a == 1 && p[k].b == 3));
    }
    /* healthy but spread out (+-20%): nothing suspect at 25% */
    {
        size_t np = synth(6, -1, -1, -1, p);
        for (size_t k = 0; k < np; k++)
            p[k].value *= 0.8 + 0.4 * (double)(k % 3) / 2.0;
        CHECK(fb_locate_classify(6, p, np, 25.0, slow, cand, &med, &mad) == FB_OK);
        for (size_t k = 0; k < np; k++)
            CHECK(!slow[k]);
    }
    /* 4 nodes with spread-out healthy figures and a slow node: the slow node's own figure
     * must not widen the spread until it hides (the MAD counts from 8 nodes on) */
    {
        /* node figures (median pairs) 1, 2, 1 and 0.01: a MAD of 0.5 would hide node 3 */
        const struct fb_locate_pair q[6] = {{0, 1, 2.0}, {0, 2, 1.0}, {1, 2, 4.0},
                                            {0, 3, 0.01}, {1, 3, 0.01}, {2, 3, 0.01}};
        CHECK(fb_locate_classify(4, q, 6, 75.0, slow, cand, &med, &mad) == FB_OK);
        CHECK(mad > 0.4);
        CHECK(cand[3] && !cand[0] && !cand[1] && !cand[2]);
    }
    /* The shaped cluster's slow link (docs/cluster-tests.md): hosts 1 and 3 at a third between
     * themselves; two-way TCP read node 1's pair with node 0 at 0.72x typical. */
    {
        /* 5 nodes: node 1 has 2 slow pairs of 4 (the link and the low read), its median pair
         * is normal: no node candidate (the old rule, half of its pairs slow, made it one) */
        struct fb_locate_pair q[10];
        size_t nq = synth(5, -1, 1, 3, q);
        for (size_t k = 0; k < nq; k++)
            if (q[k].a == 0 && q[k].b == 1)
                q[k].value = 7.2;
        CHECK(fb_locate_classify(5, q, nq, 25.0, slow, cand, &med, &mad) == FB_OK);
        for (int i = 0; i < 5; i++)
            CHECK(!cand[i]);
        /* both low pairs are link candidates (retested alone: the low read proves noise) */
        for (size_t k = 0; k < nq; k++)
            CHECK(fb_locate_link_like(q, nq, k, 25.0) ==
                  ((q[k].a == 1 && q[k].b == 3) || (q[k].a == 0 && q[k].b == 1)));
    }
    {
        /* 4 nodes, tournament, then the retests as measured (GB/s): 1-3 alone 0.0100, 1 with
         * 0 0.0146, 3 with 2 0.0200; the typical pair 0.0202. Node 1's median over its other
         * pairs (0.0146, 0.0200, 0.0210) is 0.0200: not a slow node, though its one retest
         * with a healthy partner is past the tolerance; the link is far below both ends. */
        const struct fb_locate_pair all[9] = {
            {0, 1, 0.0200}, {0, 2, 0.0205}, {0, 3, 0.0199}, {1, 2, 0.0210}, {1, 3, 0.0098},
            {2, 3, 0.0198}, {1, 3, 0.0100}, {0, 1, 0.0146}, {2, 3, 0.0200}};
        double m1 = fb_locate_node_median(1, all, 9, 3), m3 = fb_locate_node_median(3, all, 9, 1);
        CHECK(fb_locate_is_suspect(0.0146, 0.0202, 0.0, 25.0, true)); /* the one retest */
        CHECK_NEAR(m1, 0.0200, 1e-12);
        CHECK_NEAR(m3, 0.0199, 1e-12);
        CHECK(!fb_locate_is_suspect(m1, 0.0202, 0.0, 25.0, true));
        CHECK(fb_locate_is_suspect(0.0100, m1, 0.0, 25.0, true) &&
              fb_locate_is_suspect(0.0100, m3, 0.0, 25.0, true));
        CHECK(fb_locate_link_like(all, 6, 4, 25.0));
        CHECK(isnan(fb_locate_node_median(0, all, 9, 0)));
        /* the slow node's pairs are not link-like: its other pairs are as slow */
        {
            size_t nq = synth(4, 2, -1, -1, p);
            for (size_t k = 0; k < nq; k++)
                CHECK(!fb_locate_link_like(p, nq, k, 25.0));
        }
    }
    /* A healthy shaped cluster (5 hosts at 400 Mbit/s): host 0's own direction read ~0.028 GB/s
     * in every pair, its partners' ~0.05 (two-way TCP split unevenly), the other pairs 0.035 to
     * 0.055 both ways (GB/s, from 4 healthy locates). The slower direction made host 0 a slow
     * node (0.029 against 0.040); the mean of the two names nothing. */
    {
        const double d[10][4] = {
            {0, 1, 0.0288, 0.0547}, {0, 2, 0.0289, 0.0477}, {0, 3, 0.0274, 0.0547},
            {0, 4, 0.0299, 0.0553}, {1, 2, 0.0375, 0.0412}, {1, 3, 0.0420, 0.0476},
            {1, 4, 0.0549, 0.0519}, {2, 3, 0.0457, 0.0477}, {2, 4, 0.0350, 0.0419},
            {3, 4, 0.0389, 0.0419}};
        struct fb_locate_pair q[10];
        for (int k = 0; k < 10; k++)
            q[k] = (struct fb_locate_pair){(int)d[k][0], (int)d[k][1],
                                           fb_locate_pair_figure(d[k][2], d[k][3])};
        CHECK_NEAR(q[0].value, (0.0288 + 0.0547) / 2.0, 1e-12);
        CHECK(isnan(fb_locate_pair_figure(NAN, 1.0)));
        CHECK(fb_locate_classify(5, q, 10, 25.0, slow, cand, &med, &mad) == FB_OK);
        for (int i = 0; i < 5; i++)
            CHECK(!cand[i]);
        for (int k = 0; k < 10; k++)
            CHECK(!slow[k] && !fb_locate_link_like(q, 10, (size_t)k, 25.0));
        /* both ways at a third (a slow node or link): as slow in the mean */
        CHECK_NEAR(fb_locate_pair_figure(0.0159, 0.0159), 0.0159, 1e-12);
    }
    /* two nodes: one pair, nothing to compare with */
    p[0] = (struct fb_locate_pair){0, 1, 1.0};
    CHECK(fb_locate_classify(2, p, 1, 25.0, slow, cand, &med, &mad) == FB_OK);
    CHECK(!slow[0] && !cand[0] && !cand[1]);
    /* the tolerance and the spread */
    CHECK(fb_locate_is_suspect(7.0, 10.0, 0.1, 25.0, true));
    CHECK(!fb_locate_is_suspect(8.0, 10.0, 0.1, 25.0, true));
    CHECK(!fb_locate_is_suspect(7.0, 10.0, 1.0, 25.0, true)); /* 3 scaled MADs: 4.45 */
    CHECK(fb_locate_is_suspect(0.0, 10.0, 0.0, 25.0, true));
    CHECK(fb_locate_is_suspect(140.0, 100.0, 1.0, 25.0, false));
    CHECK(!fb_locate_is_suspect(130.0, 100.0, 1.0, 25.0, false));
    /* phase 1's rates judged by the spread of their logarithms: the 4 healthy nodes of a
     * locate_compute run that named nobody (two groups on one core) and node 4 at 6% of them */
    {
        const double healthy[4] = {0.00582, 0.01002, 0.00903, 0.00597}, tight[4] = {1, 1.01,
                                                                                0.99, 1};
        double med4, mad4;
        bool sus;
        CHECK(fb_locate_typical(healthy, 4, &med4, &mad4) == FB_OK);
        /* their linear MAD hides it: 3 scaled MADs below the median is 0.00036 */
        CHECK(!fb_locate_is_suspect(0.000480, med4, mad4, 25.0, true));
        CHECK(fb_locate_rate_suspect(0.000480, healthy, 4, 25.0, &sus, &med) == FB_OK && sus);
        CHECK_NEAR(med, 0.0075, 1e-12);
        /* the line: 0.0075 / exp(3 x 1.4826 x 0.2195) = 0.00283 */
        CHECK(fb_locate_rate_suspect(0.0027, healthy, 4, 25.0, &sus, &med) == FB_OK && sus);
        CHECK(fb_locate_rate_suspect(0.0030, healthy, 4, 25.0, &sus, &med) == FB_OK && !sus);
        /* each healthy node against the other three: none named */
        for (int i = 0; i < 4; i++) {
            double o[3];
            for (int k = 0, m = 0; k < 4; k++)
                if (k != i)
                    o[m++] = healthy[k];
            CHECK(fb_locate_rate_suspect(healthy[i], o, 3, 25.0, &sus, &med) == FB_OK && !sus);
        }
        /* tight others: the tolerance decides (74% named, 76% not); 0 and NaN are suspect;
         * nothing to compare with is no suspect */
        CHECK(fb_locate_rate_suspect(0.74, tight, 4, 25.0, &sus, &med) == FB_OK && sus);
        CHECK(fb_locate_rate_suspect(0.76, tight, 4, 25.0, &sus, &med) == FB_OK && !sus);
        CHECK(fb_locate_rate_suspect(0.0, tight, 4, 25.0, &sus, &med) == FB_OK && sus);
        CHECK(fb_locate_rate_suspect(NAN, tight, 4, 25.0, &sus, &med) == FB_OK && sus);
        CHECK(fb_locate_rate_suspect(0.1, tight, 0, 25.0, &sus, &med) == FB_OK && !sus &&
              isnan(med));
    }
    /* retest verdicts */
    CHECK(fb_locate_decide_node(2, 2) == FB_LOCATE_NODE);
    CHECK(fb_locate_decide_node(0, 2) == FB_LOCATE_NOISE);
    CHECK(fb_locate_decide_node(1, 2) == FB_LOCATE_LINK);
    CHECK(fb_locate_decide_node(0, 0) == FB_LOCATE_NOISE);
    CHECK(fb_locate_decide_link(true, false, false, &which) == FB_LOCATE_LINK && which == -1);
    CHECK(fb_locate_decide_link(false, true, true, &which) == FB_LOCATE_NOISE);
    CHECK(fb_locate_decide_link(true, false, true, &which) == FB_LOCATE_NODE && which == 1);
    CHECK(fb_locate_decide_link(true, true, true, &which) == FB_LOCATE_NODE && which == 2);
    /* stragglers: rank 5 at 2.5x */
    CHECK(fb_locate_stragglers(t, 8, 25.0, strag, &med) == 1);
    CHECK(strag[5] && !strag[0] && med > 99.0 && med < 102.0);
}

int main(void)
{
    for (int n = 2; n <= 17; n++)
        check_tournament(n);
    check_sampled();
    check_retests();
    check_decisions();
    TEST_DONE();
}

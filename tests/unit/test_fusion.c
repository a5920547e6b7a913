/* The fusion plan covers every DenseNet-121 tensor exactly once, in gradient-ready order, and
 * no bucket exceeds its threshold unless it is one tensor larger than the threshold alone; the
 * scaling curve's rank counts and the p2p outlier finder give the expected answers. */
#include <math.h>
#include <stdlib.h>

#include "fusion.h"
#include "p2p_matrix.h"
#include "runner.h"
#include "test.h"

static void check_plan(const struct fb_densenet *d, size_t esize, size_t threshold,
                       size_t want_buckets)
{
    struct fb_bucket *b = NULL;
    size_t n = 0, next = 0, elements = 0, largest = 0;

    CHECK(fb_fusion_plan(d, esize, threshold, &b, &n) == FB_OK);
    if (want_buckets)
        CHECK(n == want_buckets);
    for (size_t i = 0; i < n; i++) {
        size_t sum = 0;
        CHECK(b[i].first == next); /* consecutive, in order: nothing skipped or repeated */
        CHECK(b[i].count >= 1);
        for (size_t k = b[i].first; k < b[i].first + b[i].count && k < d->ntensors; k++)
            sum += d->tensors[k].elements;
        CHECK(sum == b[i].elements);
        if (threshold != FB_FUSION_FLAT && b[i].elements * esize > threshold)
            CHECK(b[i].count == 1); /* only a lone oversize tensor may exceed it */
        /* greedy: the next tensor would not have fitted */
        if (threshold != FB_FUSION_OFF && threshold != FB_FUSION_FLAT && i + 1 < n)
            CHECK((b[i].elements + d->tensors[b[i + 1].first].elements) * esize > threshold);
        next += b[i].count;
        elements += b[i].elements;
        if (b[i].elements > largest)
            largest = b[i].elements;
    }
    CHECK(next == d->ntensors);
    CHECK(elements == d->parameters);
    free(b);
}

int main(void)
{
    struct fb_densenet d;
    struct fb_options o;
    int groups[16];
    double m[16];
    int out[3];
    size_t nout, measured;
    double median;

    CHECK(fb_densenet121(14, &d) == FB_OK);
    CHECK(d.ntensors == 364 && d.parameters == 6968206);
    check_plan(&d, 4, FB_FUSION_OFF, 364);
    check_plan(&d, 4, FB_FUSION_FLAT, 1);
    /* 27.9 MB of fp32 gradients: Horovod's 64 MiB and 128 MiB thresholds fuse everything */
    check_plan(&d, 4, 64u << 20, 1);
    check_plan(&d, 4, 128u << 20, 1);
    check_plan(&d, 4, 25u << 20, 2);
    check_plan(&d, 2, 25u << 20, 1); /* fp16 halves the bytes */
    check_plan(&d, 4, 1u << 20, 0);
    check_plan(&d, 2, 4u << 20, 0);
    /* A threshold smaller than many tensors: each of those goes alone, none is dropped. */
    check_plan(&d, 4, 1000, 0);
    check_plan(&d, 4, 1, 364);
    fb_densenet_free(&d);

    /* Rank counts of the scaling curve: powers of two, then all ranks; --ranks as given. */
    fb_options_defaults(&o);
    CHECK(fb_runner_groups(&o, 1, groups, 16) == 1 && groups[0] == 1);
    CHECK(fb_runner_groups(&o, 4, groups, 16) == 3 && groups[0] == 1 && groups[1] == 2 &&
          groups[2] == 4);
    CHECK(fb_runner_groups(&o, 6, groups, 16) == 4 && groups[2] == 4 && groups[3] == 6);
    o.ngroups = 2;
    o.groups[0] = 3;
    o.groups[1] = 5;
    CHECK(fb_runner_groups(&o, 8, groups, 16) == 2 && groups[0] == 3 && groups[1] == 5);

    /* Outliers of a 4 x 4 bandwidth matrix: pair 2>3 reads half of the others. */
    for (int i = 0; i < 16; i++)
        m[i] = i / 4 == i % 4 ? NAN : 10.0 + 0.01 * i;
    m[2 * 4 + 3] = 5.0;
    m[1 * 4 + 0] = NAN; /* not measured */
    measured = fb_p2p_matrix_outliers(m, 4, true, out, 3, &nout, &median);
    CHECK(measured == 11 && nout == 3);
    CHECK(out[0] == 2 * 4 + 3);
    CHECK(median > 10.0 && median < 10.2);
    CHECK(out[1] != out[0] && out[2] != out[1]);
    /* Latency: higher is worse. */
    m[2 * 4 + 3] = 50.0;
    fb_p2p_matrix_outliers(m, 4, false, out, 1, &nout, &median);
    CHECK(nout == 1 && out[0] == 2 * 4 + 3);
    TEST_DONE();
}

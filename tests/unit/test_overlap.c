/* The bucket engine (harness/train/overlap.c) on one rank over MPI, host backend: gradients made
 * ready in DenseNet-121's backward order, layer by layer as the step hands them over, give the
 * pattern's sums in every bucket, with the communication thread (overlap on) and without, in
 * float32 and float16; the first bucket is reduced before backward's last layer is ready; a
 * skipped bucket, a layer out of order and a missing layer are caught. And the optimizer's
 * host loop against its formula. */
#include <mpi.h>
#include <stdlib.h>

#include "backend.h"
#include "clock.h"
#include "coll.h"
#include "densenet.h"
#include "densenet_layers.h"
#include "half.h"
#include "mpi_half.h"
#include "overlap.h"
#include "test.h"

static const struct fb_backend *be = &fb_backend_host;

struct rig {
    struct fb_densenet model;
    struct fb_densenet_layers layers;
    struct fb_coll_comm *comm;
    struct fb_stream *stream;
    struct fb_event *ev;
    void *send, *recv;
};

static const struct fb_pattern mine = {.seed = 11, .scale = 1, .offset = -3}; /* rank 0 */

/* The ready calls of one backward pass: every parameter layer, last to first. With `swap`,
 * two neighbouring layers trade places; with `drop`, the last one is never made ready; with
 * `settle`, a pause before the last one.
 * Returns the first status that is not FB_OK. *before_last: host time before the last call. */
static fb_status backward(struct rig *g, struct fb_overlap *ov, bool swap, bool drop,
                          bool settle, double *before_last)
{
    size_t order[512], n = 0;
    fb_status st = FB_OK;

    for (size_t i = g->layers.nlayers; i-- > 0;)
        if (g->layers.layers[i].params > 0)
            order[n++] = i;
    if (swap) { /* a BatchNorm (2c) and the convolution before it trade places */
        size_t t = order[1];
        order[1] = order[2];
        order[2] = t;
    }
    for (size_t k = 0; k < n - (drop ? 1 : 0) && st == FB_OK; k++) {
        /* the layer's gradient kernels: 50 us, so a bucket handed over early can finish
         * before backward does */
        be->busy_wait(50.0, g->stream);
        if (k == n - 1) {
            /* Before the last layer, give the communication thread time to reduce what it
             * was handed: on a loaded 2-core machine (CI, under ASan) it may not have been
             * scheduled in the ~12 ms backward takes. Overlap that works has the first bucket
             * done long before this sleep ends; a thread that waits for finish does not. */
            if (settle)
                fb_clock_sleep_s(0.3);
            *before_last = fb_clock_now_us();
        }
        be->event_record(g->ev, g->stream);
        st = fb_overlap_ready(ov, g->layers.layers[order[k]].params, g->ev);
    }
    return st;
}

/* One step through a fresh engine; *wrong = sums that are not the pattern's. */
static fb_status one_step(struct rig *g, enum fb_dtype dtype, size_t threshold, bool overlap,
                          long skip, bool swap, bool drop, size_t *wrong, size_t *nbuckets,
                          double *first_end, double *before_last)
{
    struct fb_overlap_config cfg = {.be = be, .coll = &fb_coll_mpi, .comm = g->comm,
                                    .model = &g->model, .threshold = threshold, .dtype = dtype,
                                    .send = g->send, .recv = g->recv, .compute = g->stream,
                                    .overlap = overlap, .skip_bucket = skip};
    struct fb_overlap *ov = NULL;
    double start[512], end[512];
    fb_status st, fin;

    fb_pattern_fill_host(g->send, g->model.parameters, dtype, mine);
    fb_pattern_fill_host(g->recv, g->model.parameters, dtype,
                         (struct fb_pattern){.seed = 0, .scale = 0, .offset = -77});
    if ((st = fb_overlap_create(&cfg, &ov)) != FB_OK)
        return st;
    *nbuckets = fb_overlap_nbuckets(ov);
    CHECK(fb_overlap_threaded(ov) == overlap);
    fb_overlap_begin(ov);
    st = backward(g, ov, swap, drop, overlap, before_last);
    fin = fb_overlap_finish(ov);
    st = st != FB_OK ? st : fin;
    if (st == FB_OK && *nbuckets <= 512 &&
        (st = fb_overlap_spans(ov, g->ev, 0.0, start, end)) == FB_OK)
        *first_end = end[0];
    *wrong = fb_pattern_check_host(g->recv, g->model.parameters, dtype, mine);
    fb_overlap_free(ov);
    return st;
}

static void check_optimizer(void)
{
    float w[5] = {1, 2, 3, 4, 5}, v[5] = {0, 1, 0, -1, 0.5f};
    const float g[5] = {2, 4, -6, 8, 0};
    uint16_t gh[5];
    float w2[5], v2[5];

    for (int i = 0; i < 5; i++)
        gh[i] = fb_half_from_float(g[i]);
    memcpy(w2, w, sizeof w);
    memcpy(v2, v, sizeof v);
    CHECK(fb_sgd_momentum_host(w, v, g, FB_DTYPE_FLOAT32, 5, 0.5f, 0.9f, 0.5f) == FB_OK);
    CHECK(fb_sgd_momentum_host(w2, v2, gh, FB_DTYPE_FLOAT16, 5, 0.5f, 0.9f, 0.5f) == FB_OK);
    /* v = 0.9 v + 0.5 g; w -= 0.5 v */
    CHECK_NEAR(v[1], 0.9 + 2.0, 1e-6);
    CHECK_NEAR(w[1], 2.0 - 0.5 * 2.9, 1e-6);
    CHECK_NEAR(v[2], -3.0, 1e-6);
    CHECK_NEAR(w[2], 4.5, 1e-6);
    CHECK_NEAR(v[3], -0.9 + 4.0, 1e-6);
    for (int i = 0; i < 5; i++) {
        CHECK(w[i] == w2[i]); /* small integers are exact halves */
        CHECK(v[i] == v2[i]);
    }
    CHECK(fb_sgd_momentum_host(w, v, g, FB_DTYPE_INT32, 5, 0.5f, 0.9f, 0.5f) == FB_ERR_USAGE);
}

int main(int argc, char **argv)
{
    static const size_t thresholds[] = {0, (size_t)4 << 20, (size_t)25 << 20};
    static const enum fb_dtype dtypes[] = {FB_DTYPE_FLOAT32, FB_DTYPE_FLOAT16};
    struct rig g = {0};
    size_t wrong, nb, nplan;
    double first_end = 0, before_last = 0;
    int provided;
    struct fb_bucket *plan;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    check_optimizer();
    CHECK(fb_densenet121(14, &g.model) == FB_OK);
    CHECK(fb_densenet_layers_build(1, 32, 14, &g.layers) == FB_OK);
    CHECK(fb_coll_mpi.comm_create(MPI_COMM_SELF, be, &g.comm) == FB_OK);
    CHECK(be->stream_create(&g.stream) == FB_OK && be->event_create(&g.ev) == FB_OK);
    g.send = malloc(g.model.parameters * 4);
    g.recv = malloc(g.model.parameters * 4);
    CHECK(!fb_coll_mpi.stream_ordered);

    for (size_t d = 0; d < 2; d++)
        for (size_t t = 0; t < 3; t++)
            for (int overlap = 0; overlap < 2; overlap++) {
                char why[200];
                if (overlap && !fb_overlap_possible(&fb_coll_mpi, why, sizeof why)) {
                    fprintf(stderr, "skipping overlap: %s\n", why);
                    continue;
                }
                CHECK(one_step(&g, dtypes[d], thresholds[t], overlap, -1, false, false, &wrong,
                               &nb, &first_end, &before_last) == FB_OK);
                CHECK(wrong == 0);
                CHECK(fb_fusion_plan(&g.model, fb_dtype_size(dtypes[d]), thresholds[t], &plan,
                                     &nplan) == FB_OK);
                CHECK(nb == nplan);
                free(plan);
                /* overlap: the first bucket was reduced while backward still had layers to go
                 * (unless it is the only one: float16 gradients fit one 25M bucket) */
                if (overlap && nb > 1)
                    CHECK(first_end > 0 && first_end < before_last);
                if (!overlap)
                    CHECK(first_end >= before_last);
            }
    /* a bucket that is never reduced leaves its poison: verify sees it */
    CHECK(one_step(&g, FB_DTYPE_FLOAT32, (size_t)4 << 20, true, 2, false, false, &wrong, &nb,
                   &first_end, &before_last) == FB_OK);
    CHECK(wrong > 0);
    CHECK(one_step(&g, FB_DTYPE_FLOAT16, 0, false, 5, false, false, &wrong, &nb, &first_end,
                   &before_last) == FB_OK);
    CHECK(wrong > 0);
    /* a layer out of order, and a missing one, are errors, with overlap on and off */
    for (int overlap = 0; overlap < 2; overlap++) {
        CHECK(one_step(&g, FB_DTYPE_FLOAT32, (size_t)4 << 20, overlap, -1, true, false, &wrong,
                       &nb, &first_end, &before_last) == FB_ERR_INTERNAL);
        CHECK(one_step(&g, FB_DTYPE_FLOAT32, (size_t)4 << 20, overlap, -1, false, true, &wrong,
                       &nb, &first_end, &before_last) == FB_ERR_INTERNAL);
    }
    free(g.send);
    free(g.recv);
    be->event_destroy(g.ev);
    be->stream_destroy(g.stream);
    fb_coll_mpi.comm_destroy(g.comm);
    fb_densenet_layers_free(&g.layers);
    fb_densenet_free(&g.model);
    fb_mpi_half_free();
    MPI_Finalize();
    TEST_DONE();
}

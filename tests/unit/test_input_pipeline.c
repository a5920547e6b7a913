/* The loader's ring: every batch 0..N-1 reaches the consumer exactly once and in order, with
 * several workers finishing out of order and a ring smaller than the workers; release in any
 * order; a worker's failure reaches the consumer; stopping never hangs, even with every worker
 * blocked on a full ring; misuse (taking more than the ring holds) is refused. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "input_pipeline.h"
#include "test.h"

enum { SLOT = 4096, MAXB = 1024 };

struct counts {
    atomic_int filled[MAXB];
    long fail_at; /* -1: never */
};

/* Writes the batch number all over the slot, after a pause that varies per batch so that
 * workers finish out of order. */
static fb_status fill(void *arg, struct fb_pipeline *p, int worker, long n, void *dst)
{
    struct counts *k = arg;
    struct timespec nap = {0, (long)((n * 2654435761u) % 300u) * 1000};
    long *words = dst;

    (void)worker;
    fb_pipeline_gate_wait(p);
    if (n == k->fail_at)
        return FB_ERR_IO;
    nanosleep(&nap, NULL);
    for (size_t i = 0; i < SLOT / sizeof(long); i++)
        words[i] = n;
    if (n < MAXB)
        atomic_fetch_add(&k->filled[n], 1);
    return FB_OK;
}

static int batch_is(const struct fb_batch *b, long n)
{
    const long *words = b->data;
    for (size_t i = 0; i < SLOT / sizeof(long); i++)
        if (words[i] != n)
            return 0;
    return 1;
}

static void run(int threads, int depth, long nbatches)
{
    struct counts *k = calloc(1, sizeof *k);
    struct fb_pipeline_config cfg = {&fb_backend_host, FB_MEM_PINNED, SLOT, threads, depth,
                                     fill, k};
    struct fb_pipeline *p = NULL;
    long misordered = 0, wrong = 0;

    k->fail_at = -1;
    CHECK(fb_pipeline_start(&cfg, &p) == FB_OK);
    for (long n = 0; p && n < nbatches; n++) {
        struct fb_batch b;
        if (fb_pipeline_take(p, &b) != FB_OK) {
            CHECK(0);
            break;
        }
        misordered += b.seq != n;
        wrong += !batch_is(&b, n);
        fb_pipeline_release(p, &b);
    }
    fb_pipeline_stop(p);
    CHECK(misordered == 0);
    CHECK(wrong == 0);
    /* each batch taken was built exactly once; none beyond what the ring could hold ahead */
    for (long n = 0; n < MAXB; n++) {
        int f = atomic_load(&k->filled[n]);
        if (n < nbatches && f != 1)
            fprintf(stderr, "batch %ld filled %d times\n", n, f);
        CHECK(n < nbatches ? f == 1 : n < nbatches + depth ? f <= 1 : f == 0);
    }
    free(k);
}

int main(void)
{
    struct counts *k = calloc(1, sizeof *k);
    struct fb_pipeline *p = NULL;
    struct fb_batch b[4];

    run(4, 3, 300);
    run(3, 8, 300);
    run(1, 1, 50);
    run(8, 2, 200);

    /* release out of order: hold two, give back the second first */
    {
        struct fb_pipeline_config cfg = {&fb_backend_host, FB_MEM_PAGEABLE, SLOT, 2, 2, fill, k};
        k->fail_at = -1;
        CHECK(fb_pipeline_start(&cfg, &p) == FB_OK);
        CHECK(fb_pipeline_take(p, &b[0]) == FB_OK && b[0].seq == 0);
        CHECK(fb_pipeline_take(p, &b[1]) == FB_OK && b[1].seq == 1);
        /* a third would wait forever for a slot the consumer holds: refused */
        CHECK(fb_pipeline_take(p, &b[2]) == FB_ERR_USAGE);
        fb_pipeline_release(p, &b[1]);
        fb_pipeline_release(p, &b[0]);
        CHECK(fb_pipeline_take(p, &b[2]) == FB_OK && b[2].seq == 2 && batch_is(&b[2], 2));
        CHECK(fb_pipeline_take(p, &b[3]) == FB_OK && b[3].seq == 3 && batch_is(&b[3], 3));
        fb_pipeline_release(p, &b[2]);
        fb_pipeline_release(p, &b[3]);
        fb_pipeline_stop(p);
    }

    /* a worker fails on batch 5: the consumer gets 0..4, then the failure, and stop returns */
    {
        struct fb_pipeline_config cfg = {&fb_backend_host, FB_MEM_PINNED, SLOT, 3, 4, fill, k};
        fb_status st = FB_OK;
        long got = 0;
        memset(k, 0, sizeof *k);
        k->fail_at = 5;
        CHECK(fb_pipeline_start(&cfg, &p) == FB_OK);
        while (p && (st = fb_pipeline_take(p, &b[0])) == FB_OK) {
            CHECK(b[0].seq == got);
            got++;
            fb_pipeline_release(p, &b[0]);
        }
        CHECK(st == FB_ERR_IO);
        CHECK(got == 5);
        fb_pipeline_stop(p);
    }

    /* stop with every worker blocked on a full ring, and stop right after start */
    {
        struct fb_pipeline_config cfg = {&fb_backend_host, FB_MEM_PINNED, SLOT, 4, 2, fill, k};
        struct timespec wait = {0, 20 * 1000 * 1000};
        k->fail_at = -1;
        CHECK(fb_pipeline_start(&cfg, &p) == FB_OK);
        nanosleep(&wait, NULL);
        fb_pipeline_stop(p);
        CHECK(fb_pipeline_start(&cfg, &p) == FB_OK);
        fb_pipeline_stop(p);
        fb_pipeline_stop(NULL);
    }

    /* a closed gate: nothing new is built until it opens again */
    {
        struct fb_pipeline_config cfg = {&fb_backend_host, FB_MEM_PINNED, SLOT, 2, 4, fill, k};
        struct timespec wait = {0, 30 * 1000 * 1000};
        int built;
        memset(k, 0, sizeof *k);
        k->fail_at = -1;
        CHECK(fb_pipeline_start(&cfg, &p) == FB_OK);
        CHECK(fb_pipeline_take(p, &b[0]) == FB_OK && b[0].seq == 0);
        fb_pipeline_gate(p, false);
        nanosleep(&wait, NULL);
        built = 0;
        for (int n = 0; n < MAXB; n++)
            built += atomic_load(&k->filled[n]);
        fb_pipeline_release(p, &b[0]);
        nanosleep(&wait, NULL);
        for (int n = 0; n < MAXB; n++)
            built -= atomic_load(&k->filled[n]);
        CHECK(built == 0); /* the freed slot stayed empty while the gate was closed */
        fb_pipeline_gate(p, true);
        for (long n = 1; n < 10; n++) {
            CHECK(fb_pipeline_take(p, &b[0]) == FB_OK && b[0].seq == n && batch_is(&b[0], n));
            fb_pipeline_release(p, &b[0]);
        }
        fb_pipeline_gate(p, false);
        fb_pipeline_stop(p); /* with the gate closed: must not hang */
    }

    /* bad configurations */
    {
        struct fb_pipeline_config cfg = {&fb_backend_host, FB_MEM_PINNED, SLOT, 0, 2, fill, k};
        CHECK(fb_pipeline_start(&cfg, &p) == FB_ERR_USAGE && !p);
        cfg.threads = 1;
        cfg.depth = 0;
        CHECK(fb_pipeline_start(&cfg, &p) == FB_ERR_USAGE && !p);
    }
    CHECK(fb_pipeline_cpus() >= 1);
    free(k);
    TEST_DONE();
}

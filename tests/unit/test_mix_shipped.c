/* The shipped mixes (profiles/mixes/NAME.mix) are what their generators compute (mix_gen.c): each
 * file equals fb_mix_shipped's text byte for byte and parses back. FB_UPDATE_GOLDEN=1 rewrites
 * the files instead. Argument: the folder profiles/mixes. Also checks what the generators
 * compute against the models' own figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "densenet.h"
#include "file_read.h"
#include "mix.h"
#include "mix_gen.h"
#include "test.h"

static void check_file(const char *dir, const char *name)
{
    char path[1024], err[512] = "", *want = NULL, *have = NULL;
    size_t len = 0;
    struct fb_mix m;
    const char *golden = getenv("FB_UPDATE_GOLDEN");

    snprintf(path, sizeof path, "%s/%s.mix", dir, name);
    CHECK(fb_mix_shipped(name, &want) == FB_OK);
    if (!want)
        return;
    if (golden && strcmp(golden, "1") == 0) {
        FILE *f = fopen(path, "w");
        CHECK(f && fputs(want, f) >= 0 && fclose(f) == 0);
        fprintf(stderr, "rewrote %s\n", path);
    }
    CHECK(fb_file_read(path, FB_FILE_MIX, false, &have, &len, err, sizeof err) == FB_OK);
    if (have && strcmp(have, want) != 0) {
        fprintf(stderr, "%s differs from what its generator computes (FB_UPDATE_GOLDEN=1 "
                "rewrites it); it should be:\n%s", path, want);
        fb_test_failures++;
    }
    CHECK(fb_mix_read(path, FB_DTYPE_FLOAT32, &m, err, sizeof err) == FB_OK);
    fb_mix_free(&m);
    free(have);
    free(want);
}

/* The generators against the models' own figures. */
static void check_generators(void)
{
    struct fb_mix m;
    struct fb_densenet d;
    size_t sum = 0, el[3] = {10, 20, 30};
    const char *names[3] = {"a", NULL, "c"};
    static const char *const order[] = {"fwd.a", "fwd.unit1", "fwd.c", "bwd.c", "grad.c",
                                        "bwd.unit1", "grad.unit1", "bwd.a", "grad.a"};

    CHECK(fb_densenet121(14, &d) == FB_OK);
    CHECK(fb_mix_densenet_horovod(14, FB_DTYPE_FLOAT32, (size_t)4 << 20, &m) == FB_OK);
    for (size_t i = 0; i < m.nops; i++) {
        CHECK(m.ops[i].coll == FB_MIX_ALLREDUCE && m.ops[i].bytes <= (size_t)4 << 20);
        sum += m.ops[i].bytes;
    }
    CHECK(sum == d.parameters * 4);
    CHECK(m.nops > 1);
    fb_mix_free(&m);
    CHECK(fb_mix_densenet_horovod(14, FB_DTYPE_FLOAT16, (size_t)128 << 20, &m) == FB_OK);
    CHECK(m.nops == 1 && m.ops[0].bytes == d.parameters * 2);
    fb_mix_free(&m);
    fb_densenet_free(&d);

    CHECK(fb_mix_fsdp(el, names, 3, FB_DTYPE_FLOAT16, &m) == FB_OK);
    CHECK(m.nops == 9);
    for (size_t i = 0; i < m.nops && i < 9; i++) {
        CHECK_STR(m.ops[i].name, order[i]);
        CHECK(m.ops[i].coll == (strncmp(order[i], "grad", 4) == 0 ? FB_MIX_REDUCE_SCATTER
                                                                   : FB_MIX_ALLGATHER));
    }
    CHECK(m.ops[0].bytes == 20 && m.ops[3].bytes == 60 && m.ops[8].bytes == 20);
    fb_mix_free(&m);
    el[1] = 0;
    CHECK(fb_mix_fsdp(el, names, 3, FB_DTYPE_FLOAT16, &m) == FB_ERR_USAGE && m.nops == 0);

    CHECK(fb_mix_moe(2, 8, 4, 2, FB_DTYPE_FLOAT32, &m) == FB_OK);
    CHECK(m.nops == 8);
    if (m.nops == 8) {
        static const char *const moe[] = {"fwd0.dispatch", "fwd0.combine", "fwd1.dispatch",
                                          "fwd1.combine", "bwd1.combine", "bwd1.dispatch",
                                          "bwd0.combine", "bwd0.dispatch"};
        for (size_t i = 0; i < 8; i++) {
            CHECK_STR(m.ops[i].name, moe[i]);
            CHECK(m.ops[i].coll == FB_MIX_ALLTOALL && m.ops[i].bytes == 8 * 4 * 2 * 4);
        }
    }
    fb_mix_free(&m);
    CHECK(fb_mix_moe(0, 8, 4, 2, FB_DTYPE_FLOAT32, &m) == FB_ERR_USAGE);

    /* any model's tensors under Horovod's fusion: 40 + 80 bytes fill 120, 120 goes alone */
    el[0] = 10, el[1] = 20, el[2] = 30;
    CHECK(fb_mix_horovod(el, 3, FB_DTYPE_FLOAT32, 120, &m) == FB_OK);
    CHECK(m.nops == 2);
    if (m.nops == 2) {
        CHECK(m.ops[0].bytes == 120 && m.ops[1].bytes == 120);
        CHECK_STR(m.ops[0].name, "bucket0");
        CHECK_STR(m.ops[1].name, "bucket1");
        CHECK(m.ops[0].coll == FB_MIX_ALLREDUCE && m.ops[0].dtype == FB_DTYPE_FLOAT32);
    }
    fb_mix_free(&m);
    CHECK(fb_mix_horovod(el, 3, FB_DTYPE_FLOAT16, 0, &m) == FB_OK && m.nops == 3);
    CHECK(m.nops == 3 && m.ops[2].bytes == 60);
    fb_mix_free(&m);
    el[2] = 0;
    CHECK(fb_mix_horovod(el, 3, FB_DTYPE_FLOAT16, 120, &m) == FB_ERR_USAGE && m.nops == 0);

    /* PyTorch DDP's buckets: a bucket closes once it reaches its limit, the tensor that
     * reached it inside (so it may pass the limit); the first has its own limit */
    {
        size_t t[] = {10, 20, 30, 40, 5, 1};
        /* float32: 40 | 80+120 = 200 >= 200 | 160+20 = 180 < 200, then 4: the rest */
        CHECK(fb_mix_ddp(t, 6, FB_DTYPE_FLOAT32, 40, 200, &m) == FB_OK);
        CHECK(m.nops == 3);
        if (m.nops == 3) {
            CHECK(m.ops[0].bytes == 40 && m.ops[1].bytes == 200 && m.ops[2].bytes == 184);
            CHECK_STR(m.ops[2].name, "bucket2");
            CHECK(m.ops[1].coll == FB_MIX_ALLREDUCE && m.ops[1].dtype == FB_DTYPE_FLOAT32);
        }
        fb_mix_free(&m);
        /* the first limit is the first bucket's alone: 41 bytes take two tensors (120) */
        CHECK(fb_mix_ddp(t, 6, FB_DTYPE_FLOAT32, 41, 1, &m) == FB_OK && m.nops == 5);
        CHECK(m.nops == 5 && m.ops[0].bytes == 120 && m.ops[1].bytes == 120 &&
              m.ops[4].bytes == 4);
        fb_mix_free(&m);
        /* limits above the whole model: one bucket */
        CHECK(fb_mix_ddp(t, 6, FB_DTYPE_FLOAT16, 1000, 1000, &m) == FB_OK && m.nops == 1 &&
              m.ops[0].bytes == 212);
        fb_mix_free(&m);
        CHECK(fb_mix_ddp(t, 6, FB_DTYPE_FLOAT32, 0, 200, &m) == FB_ERR_USAGE && m.nops == 0);
        CHECK(fb_mix_ddp(t, 6, FB_DTYPE_FLOAT32, 40, 0, &m) == FB_ERR_USAGE && m.nops == 0);
        t[3] = 0;
        CHECK(fb_mix_ddp(t, 6, FB_DTYPE_FLOAT32, 40, 200, &m) == FB_ERR_USAGE && m.nops == 0);
        /* two tensors of 6e17 and 5e17 bytes, each a valid op, make a bucket past 1e18 */
        t[0] = 150000000000000000u, t[1] = 125000000000000000u;
        CHECK(fb_mix_ddp(t, 2, FB_DTYPE_FLOAT32, FB_MIX_MAX_BYTES, FB_MIX_MAX_BYTES, &m) ==
                  FB_ERR_USAGE && m.nops == 0);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_mix_shipped profiles/mixes\n");
        return 2;
    }
    for (size_t i = 0; fb_mix_shipped_names[i]; i++)
        check_file(argv[1], fb_mix_shipped_names[i]);
    check_generators();
    TEST_DONE();
}

/* The registry of benchmarks. */
#include "registry.h"

#include <string.h>

const struct fb_bench *const fb_benches[] = {
    &fb_bench_h2d,
    &fb_bench_p2p,
    &fb_bench_allreduce,
    &fb_bench_densenet_allreduce,
    &fb_bench_pipeline,
    &fb_bench_compute,
    &fb_bench_memfit,
    &fb_bench_step,
    &fb_bench_replay,
    &fb_bench_all_gather,
    &fb_bench_reduce_scatter,
    &fb_bench_alltoall,
    &fb_bench_broadcast,
    &fb_bench_reduce,
    NULL,
};

const struct fb_bench *fb_bench_find(const char *name)
{
    for (size_t i = 0; fb_benches[i]; i++)
        if (strcmp(fb_benches[i]->name, name) == 0)
            return fb_benches[i];
    return NULL;
}

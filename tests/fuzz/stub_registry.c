/* The benchmark registry as the command line sees it: names only. The real registry
 * (bench/registry.c) points at every benchmark, and through them at MPI and the device code,
 * which a parser fuzzer has no use for. Keep the names in step with bench/registry.c
 * (tests/fuzz/run.sh checks that they are the same). */
#include <stddef.h>
#include <string.h>

#include "registry.h"

static const char *const names[] = {
    "h2d",    "p2p",    "allreduce",  "densenet_allreduce", "pipeline",  "compute",
    "memfit", "step",   "replay",     "all_gather",         "reduce_scatter",
    "alltoall", "broadcast", "reduce"};
static struct fb_bench benches[sizeof names / sizeof names[0]];

const struct fb_bench *fb_bench_find(const char *name)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i], name) == 0) {
            benches[i].name = names[i];
            return &benches[i];
        }
    return NULL;
}

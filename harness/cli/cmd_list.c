/* `fabricbench list` and `--version`: what this binary can do, without starting MPI. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include <fb_version.h>

#include "coll.h"
#include "log.h"
#include "commands.h"
#include "registry.h"

static void print_builds(void)
{
    char why[160] = "";
    int driver = 0, runtime = 0, nccl = fb_nccl_version_code();
    int gpus = fb_backend_cuda.device_count(why, sizeof why);

    fb_backend_cuda.versions(&driver, &runtime);
    if (fb_backend_cuda.built)
        printf("  cuda  built, CUDA runtime %d.%d (static); %d GPU(s) visible%s%s\n",
               runtime / 1000, runtime % 1000 / 10, gpus, gpus ? "" : ": ", gpus ? "" : why);
    else
        printf("  cuda  not built: %s\n", why);
    printf("  host  built: host memory, memcpy, CLOCK_MONOTONIC\n");
    printf("  host-strict  built: host with CUDA's rules enforced, for tests (figures are not "
           "measurements)\n");
    if (nccl)
        printf("  nccl  built, NCCL %d.%d.%d loaded from %s\n", nccl / 10000, nccl / 100 % 100,
               nccl % 100, fb_nccl_library_path());
    else if (fb_coll_nccl.built)
        printf("  nccl  built, not usable: %s\n", fb_nccl_missing_why());
    else
        printf("  nccl  not built\n");
    printf("  mpi   built\n");
}

int fb_cmd_list(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: fabricbench list\nLists the benchmarks, and the backends and collectives "
               "built into this binary.\n");
        return 0;
    }
    if (argc > 1) {
        fb_error("list: unexpected argument '%s'", argv[1]);
        return 2;
    }
    printf("benchmarks:\n");
    for (size_t i = 0; fb_benches[i]; i++)
        printf("  %-18s %s\n", fb_benches[i]->name, fb_benches[i]->summary);
    printf("backends and collectives:\n");
    print_builds();
    return 0;
}

int fb_cmd_version(void)
{
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;

    MPI_Get_library_version(mpi, &len);
    mpi[strcspn(mpi, "\n")] = '\0';
    printf("fabricbench %s (commit %s)\n", FB_VERSION, FB_GIT_COMMIT);
    print_builds();
    printf("  MPI library: %s\n", mpi);
    return 0;
}

/* The sanitizer build still reports our leaks around MPI (tests/sanitize/leak_check.sh): Open
 * MPI's own allocations are untracked (mpi_untracked.c), ours must not be.
 *   leak_check_alive MODE
 * MODE: none (leaks nothing), main (the main thread leaks a block after MPI_Init), thread (a
 * thread started after MPI_Init leaks one), before (the main thread leaks one before MPI_Init),
 * finalized (after MPI_Finalize). Each leaking function has a name of its own for the report. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

static __attribute__((noinline)) void fb_leak_in_main(void)
{
    sink = malloc(4242);
    sink = NULL;
}

static __attribute__((noinline)) void *fb_leak_in_thread(void *arg)
{
    (void)arg;
    sink = malloc(4343);
    sink = NULL;
    return NULL;
}

/* Overwrites the stack below the caller's frame. LeakSanitizer scans the stack conservatively
 * at exit, and a leaking function's dead frame still holds the block's address until a deeper
 * call overwrites it: after MPI_Finalize nothing does, and one rank in CI found its block
 * "reachable" and reported nothing. */
static __attribute__((noinline)) void fb_scrub_stack(void)
{
    volatile unsigned char junk[16384];

    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = 0; /* volatile stores: not removed as dead */
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    pthread_t t;

    if (strcmp(mode, "none") && strcmp(mode, "main") && strcmp(mode, "thread") &&
        strcmp(mode, "before") && strcmp(mode, "finalized")) {
        fprintf(stderr, "usage: leak_check_alive none|main|thread|before|finalized\n");
        return 2;
    }
    if (!strcmp(mode, "before"))
        fb_leak_in_main();
    MPI_Init(&argc, &argv);
    if (!strcmp(mode, "main"))
        fb_leak_in_main();
    if (!strcmp(mode, "thread")) {
        if (pthread_create(&t, NULL, fb_leak_in_thread, NULL) != 0)
            return 1;
        pthread_join(t, NULL);
    }
    MPI_Finalize();
    if (!strcmp(mode, "finalized"))
        fb_leak_in_main();
    fb_scrub_stack();
    return 0;
}

/* Test only (docs/testing.md): preloaded into the ranks of the tests that run side by side
 * (FB_TEST_ENV), with Open MPI's mpi_yield_when_idle. Open MPI then calls sched_yield each time
 * a rank polls and finds nothing to do; under CFS a yielding rank keeps its fair share of the
 * CPU, so a rank that waits for a late peer spends it spinning (measured: a spin-and-yield loop
 * on this 2-core VM is half system time). Here a rank that has found nothing 64 times in a row
 * sleeps 200 us at each call instead, until it does something else for 300 us or more (its wait
 * ended): short waits stay polls, long ones give the CPU to the other tests. Over the MPI tests
 * run side by side: 382 CPU-s against 462, in the same wall time. The tests that judge a figure
 * a neighbour would move run alone, without it (FB_TEST_ENV_ALONE). Not part of fabricbench. */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { POLLS = 64, NAP_NS = 200000, GAP_POLL_NS = 50000, GAP_NAP_NS = 300000 };

static __thread long long last_ns;
static __thread unsigned polls;

static long long now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int sched_yield(void)
{
    long long gap = now_ns() - last_ns;

    /* the caller did something else for a while since its last call: a new wait */
    if (gap > (polls > POLLS ? GAP_NAP_NS : GAP_POLL_NS))
        polls = 0;
    if (++polls <= POLLS) {
        syscall(SYS_sched_yield);
    } else {
        struct timespec nap = {0, NAP_NS};
        nanosleep(&nap, NULL);
    }
    last_ns = now_ns();
    return 0;
}

/* The run-queue wait a row's cpu_wait comes from (clock.h): schedstat's text parsed, and on this
 * kernel a thread that shares its CPU with a busy process is seen waiting, one that sleeps not. */
#define _GNU_SOURCE
#include "clock.h"
#include "test.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void spin_s(double s)
{
    double end = fb_clock_now_s() + s;
    while (fb_clock_now_s() < end)
        ;
}

int main(void)
{
    CHECK(fb_clock_parse_schedstat("5520004 10099094 3\n") == 10099094.0);
    CHECK(fb_clock_parse_schedstat("  1 0 7") == 0.0);
    CHECK(fb_clock_parse_schedstat("5520004 10099094") < 0);      /* two fields */
    CHECK(fb_clock_parse_schedstat("1 2 3 4") < 0);               /* four */
    CHECK(fb_clock_parse_schedstat("1 -2 3") < 0);                /* a sign */
    CHECK(fb_clock_parse_schedstat("1 2x 3") < 0);
    CHECK(fb_clock_parse_schedstat("") < 0);
    CHECK(fb_clock_parse_schedstat("1 99999999999999999999999 3") < 0); /* out of range */

    /* seconds as a timespec: split, and kept under a whole second of nanoseconds */
    struct timespec ts = fb_clock_timespec(2.5);
    CHECK(ts.tv_sec == 2 && ts.tv_nsec == 500000000L);
    ts = fb_clock_timespec(3.9999999999);
    CHECK(ts.tv_sec >= 3 && ts.tv_sec <= 4 && ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
    ts = fb_clock_timespec(1e6 + 0.05);
    CHECK(ts.tv_sec == 1000000 && ts.tv_nsec > 49000000L && ts.tv_nsec < 51000000L);

    double w0 = fb_clock_cpu_wait_ns();
    if (w0 < 0) {
        fprintf(stderr, "SKIP: this kernel does not report /proc/thread-self/schedstat\n");
        return fb_test_failures ? 1 : 77;
    }
    /* Sleeping is not waiting for a CPU. */
    fb_clock_sleep_s(0.2);
    double slept = fb_clock_cpu_wait_ns() - w0;
    CHECK(slept >= 0 && slept < 0.05e9);
    if (slept >= 0.05e9)
        fprintf(stderr, "waited %.3f s of a 0.2 s sleep\n", slept / 1e9);

    /* A child that spins on this thread's CPU: spinning 0.6 s beside it, this thread waits for
     * the CPU about half of that (the scheduler shares it fairly); anything over a fifth shows
     * the wait is seen. */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        perror("sched_setaffinity");
        return 1;
    }
    pid_t child = fork();
    if (child == 0) {
        spin_s(5.0); /* killed long before */
        _exit(0);
    }
    CHECK(child > 0);
    double t0 = fb_clock_now_s(), a = fb_clock_cpu_wait_ns();
    spin_s(0.6);
    double waited = fb_clock_cpu_wait_ns() - a, wall = fb_clock_now_s() - t0;
    if (child > 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
    }
    CHECK(waited > 0.2 * wall);
    fprintf(stderr, "beside a spinning process on its CPU: waited %.3f s of %.3f s\n",
            waited / 1e9, wall);
    TEST_DONE();
}

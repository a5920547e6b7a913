/* The monotonic clock and sleeping on it (clock.h). */
#define _POSIX_C_SOURCE 200809L
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

double fb_clock_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double fb_clock_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

struct timespec fb_clock_timespec(double s)
{
    struct timespec ts;

    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

void fb_clock_sleep_s(double s)
{
    struct timespec ts;

    if (s <= 0.0)
        return;
    ts = fb_clock_timespec(s);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

double fb_clock_parse_schedstat(const char *text)
{
    unsigned long long v[3];
    char *end;

    for (int i = 0; i < 3; i++) {
        while (*text == ' ')
            text++;
        if (*text < '0' || *text > '9')
            return -1.0;
        errno = 0;
        v[i] = strtoull(text, &end, 10);
        if (errno || end == text)
            return -1.0;
        text = end;
    }
    while (*text == ' ' || *text == '\n')
        text++;
    return *text ? -1.0 : (double)v[1];
}

double fb_clock_cpu_wait_ns(void)
{
    char buf[128];
    ssize_t n;
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -1.0;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1.0;
    buf[n] = '\0';
    return fb_clock_parse_schedstat(buf);
}

bool fb_clock_lock_within(pthread_mutex_t *mu, double s)
{
    double until = fb_clock_now_s() + s;

    while (pthread_mutex_trylock(mu) != 0) {
        if (fb_clock_now_s() > until)
            return false;
        fb_clock_sleep_s(0.01);
    }
    return true;
}

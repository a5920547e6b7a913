/* The one clock fabricbench times with on the host: CLOCK_MONOTONIC (never the wall clock, which
 * steps under NTP). Device work is timed with the backend's events; the host backend's events
 * read this clock too. */
#ifndef FB_CLOCK_H
#define FB_CLOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

/* Seconds on the monotonic clock (an arbitrary origin, the same for every thread and process of
 * one machine). */
double fb_clock_now_s(void);

/* The same clock in microseconds. */
double fb_clock_now_us(void);

/* Nanoseconds the calling thread has spent runnable but waiting for a CPU since it started: the
 * scheduler's run-queue wait, the second field of Linux's /proc/thread-self/schedstat (kept where
 * the kernel has CONFIG_SCHED_INFO, as Debian's do). Another process on this thread's CPU, or
 * more busy threads than CPUs, make it grow; a thread that sleeps or blocks does not. -1 where
 * the kernel does not report it. */
double fb_clock_cpu_wait_ns(void);

/* The wait field of a schedstat text ("RUN_NS WAIT_NS TIMESLICES"); -1 when the text is not
 * three numbers. */
double fb_clock_parse_schedstat(const char *text);

/* A time of this clock (fb_clock_now_s's seconds) as a timespec: the deadline
 * pthread_cond_timedwait takes for a condition that waits on CLOCK_MONOTONIC
 * (pthread_condattr_setclock). Also a duration in seconds as a timespec. */
struct timespec fb_clock_timespec(double s);

/* Sleeps `s` seconds (nothing for s <= 0), sleeping on after a signal interrupts it. */
void fb_clock_sleep_s(double s);

/* Locks `mu` if it comes free within `s` seconds (tried every 10 ms): true when locked. For a
 * thread that must not wait on a holder that may be stuck (the watchdog's stop hooks). */
bool fb_clock_lock_within(pthread_mutex_t *mu, double s);

#endif

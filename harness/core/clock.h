/* The one clock fabricbench times with on the host: CLOCK_MONOTONIC (never the wall clock, which
 * steps under NTP). Device work is timed with the backend's events; the host backend's events
 * read this clock too. */
#ifndef FB_CLOCK_H
#define FB_CLOCK_H

/* Seconds on the monotonic clock (an arbitrary origin, the same for every thread and process of
 * one machine). */
double fb_clock_now_s(void);

/* The same clock in microseconds. */
double fb_clock_now_us(void);

/* Sleeps `s` seconds (nothing for s <= 0), sleeping on after a signal interrupts it. */
void fb_clock_sleep_s(double s);

#endif

/* Diagnostics and report output.
 * Diagnostics go to stderr with a "[rank host]" prefix once the rank is known; report text goes
 * to stdout. Both are copied to the run's log file when one is open (rank 0 only). */
#ifndef FB_LOG_H
#define FB_LOG_H

#include <stdio.h>

#if defined(__GNUC__)
#define FB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FB_PRINTF(a, b)
#endif

/* Sets the prefix used by later diagnostics. rank < 0 means "not launched yet": no prefix. */
void fb_log_set_identity(int rank, const char *host);

/* Copies everything printed from now on into `f` (NULL stops copying). Not owned. */
void fb_log_set_file(FILE *f);

/* Quiet mode drops fb_info from the terminal (the log file still gets it); warnings and errors
 * are always printed. */
void fb_log_set_quiet(int quiet);

void fb_error(const char *fmt, ...) FB_PRINTF(1, 2);
void fb_warn(const char *fmt, ...) FB_PRINTF(1, 2);
/* How many warnings this process has printed (fb_warn) so far. */
unsigned long fb_log_warnings(void);
void fb_info(const char *fmt, ...) FB_PRINTF(1, 2);

/* Report text off (0) or on (1, the default): a process whose tables another prints (locate's
 * node leads other than rank 0, each running its node's phase 1 alone) prints none. */
void fb_log_set_report(int on);

/* Report text (tables, summaries) on stdout, copied to the log file. */
void fb_out(const char *fmt, ...) FB_PRINTF(1, 2);

#endif

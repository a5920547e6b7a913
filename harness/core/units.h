/* Parsing and printing of sizes and counts given on the command line.
 * Size suffixes are binary: K = 2^10, M = 2^20, G = 2^30 bytes (an optional trailing "B" or
 * "iB" is accepted). Rates printed by fabricbench are decimal: GB/s = 1e9 B/s. */
#ifndef FB_UNITS_H
#define FB_UNITS_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

/* Parses "4096", "64K", "256M", "1G", "8MiB" into bytes. On failure returns FB_ERR_USAGE and
 * writes a one-line reason (without the option name) into why. */
fb_status fb_size_parse(const char *text, size_t *bytes, char *why, size_t whylen);

/* Parses a decimal integer in [min, max]: digits, a minus where min allows one, no plus sign.
 * Same error convention as fb_size_parse. */
fb_status fb_count_parse(const char *text, long min, long max, long *value, char *why, size_t whylen);

/* The one strict parser of a number read from a file or the command line: the `len` bytes at
 * text must be a decimal number and nothing else: an optional '-', digits with an optional
 * fraction (".5" and "5." too), an optional exponent ("1e-3"). Refused, with FB_ERR_USAGE and a
 * one-line reason in why (quoting the text, without the file or option): an empty text, a
 * sign '+', blanks, hex ("0x10"), "inf", "nan", trailing bytes, a NUL byte inside the `len`
 * bytes, and a value too large for a double (overflow: "1e999"). A value too small for a double
 * rounds to 0 or a subnormal, as the C library rounds it. On success *value is finite. */
fb_status fb_decimal_parse(const char *text, size_t len, double *value, char *why,
                           size_t whylen);

/* Parses a decimal floating-point number in [min, max] (fb_decimal_parse over the string). */
fb_status fb_real_parse(const char *text, double min, double max, double *value, char *why,
                        size_t whylen);

/* Checked size arithmetic: true with the result in *out, false (*out untouched) when it does
 * not fit in size_t. Every size that comes from the command line goes through these before it
 * reaches an allocation: suffixes, page rounding, per-rank multiples, buffer counts. */
bool fb_size_add(size_t a, size_t b, size_t *out);
bool fb_size_mul(size_t a, size_t b, size_t *out);
/* bytes rounded up to a multiple of align (> 0); 0 stays 0. */
bool fb_size_round_up(size_t bytes, size_t align, size_t *out);

/* This machine's physical memory in bytes (sysconf), the most one buffer could be given;
 * 0 when it cannot be told. */
size_t fb_size_machine_memory(void);

/* The power of two at or past twice a cache of cache_bytes: the smallest buffer whose copies
 * measure memory rather than that cache (h2d's --beyond-llc size, the memcpy calibration's rows).
 * 0 when the cache is not known (0) or the figure could not be allocated. */
size_t fb_size_past_cache(unsigned long long cache_bytes);

/* Formats bytes with a binary suffix when exact ("64K", "256M", "1G"), else plain digits. */
void fb_size_format(size_t bytes, char *buf, size_t len);

/* The same size with its unit named, for text a reader sees: "64 KiB", "256 MiB", "1 GiB",
 * "27872824 B" (never "64MB", which is another size). */
void fb_size_format_named(size_t bytes, char *buf, size_t len);

#endif

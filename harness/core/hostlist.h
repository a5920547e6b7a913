/* Host names in Slurm's hostlist syntax, as scontrol, sinfo and `scontrol show hostnames` read
 * them: names that differ only in a trailing number of the same width folded into one bracket,
 * "node03,node17,node18" -> "node[03,17-18]"; others joined by commas. */
#ifndef FB_HOSTLIST_H
#define FB_HOSTLIST_H

#include <stdbool.h>
#include <stddef.h>

/* Whether s is a name scontrol takes as one host: letters, digits, '.', '_', '-', 1 to 127
 * bytes (no bracket, comma, blank or quote). */
bool fb_hostlist_name_ok(const char *s);

/* Writes names[0..n) (each fb_hostlist_name_ok; duplicates once) folded into out (len bytes),
 * in order of prefix, width and number. false when a name is not ok or out is too small (out
 * then empty). */
bool fb_hostlist_fold(const char *const *names, size_t n, char *out, size_t len);

#endif

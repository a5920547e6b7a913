/* Fingerprint entries that differ between any two runs and say nothing about the machine:
 * Open MPI's and PMIx's session folders, daemon URIs, process ids, the command line's argv
 * (which holds --out), Slurm's job ids, the run's own memory peak. docs/trend.md lists them. */
#ifndef FB_FP_VOLATILE_H
#define FB_FP_VOLATILE_H

#include <stdbool.h>

/* Whether a fingerprint difference at `path` (a struct fb_fp_diff path, e.g.
 * "environment.OMPI_FILE_LOCATION") is volatile and left out of labels and summaries. */
bool fb_fp_volatile(const char *path);

#endif

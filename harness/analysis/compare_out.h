/* compare's outputs: the fingerprint difference and the verdict table on the terminal,
 * compare.csv, and compare.md (which lists the plots of compare_plots.c), each file written
 * atomically. The rule that decides the verdicts is compare.h's. */
#ifndef FB_COMPARE_OUT_H
#define FB_COMPARE_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "compare.h"
#include "results_read.h"

/* BASE or NEW as `fabricbench compare` opened it: its folder, its results.csv and env.json,
 * the run id, and the rows read. */
struct fb_cmp_side {
    char dir[4096];
    char csv[4200];
    char env[4200];
    char id[128];
    bool has_env;
    struct fb_read_results res;
};

/* Writes the fingerprint difference d[0..n) to f: a Markdown table with md (bname and nname
 * head its columns), else at most limit lines of "path base -> new" and a count of the rest. */
void fb_compare_print_fingerprint(FILE *f, bool md, const struct fb_fp_diff *d, size_t n,
                                  const char *bname, const char *nname, size_t limit);

/* Prints each joined row's verdict, keys, medians and ratio on stdout (fb_out), under a head
 * line; with machines, "first"/"second" and better/worse replace base/new and
 * improved/REGRESSION. */
void fb_compare_print_table(const struct fb_comparison *c, bool machines);

/* Writes compare.csv at path, atomically: a row per joined row (docs/compare.md names the
 * columns). Returns 0, or 1 when it cannot be written (said on stderr). */
int fb_compare_write_csv(const char *path, const struct fb_comparison *c, bool machines);

/* Writes compare.md at path, atomically: the two runs b and n and the rule, the fingerprint
 * differences d[0..nd) (or fp_note, when not NULL, in their place), the count of each verdict,
 * the rows of each verdict, and the plots, written into the folder out (skipped with a
 * warning without gnuplot). Returns 0, or 1 when a file cannot be written (said on stderr). */
int fb_compare_write_md(const char *path, const char *out, const struct fb_cmp_side *b,
                        const struct fb_cmp_side *n, const struct fb_comparison *c,
                        double threshold, bool machines, const struct fb_fp_diff *d, size_t nd,
                        const char *fp_note);

#endif

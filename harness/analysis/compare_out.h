/* compare's outputs: the screen (compare_glance.c),
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

/* Writes the fingerprint difference d[0..n) to f as a Markdown table, bname and nname heading
 * its columns, every text escaped (md_text.h). */
void fb_compare_print_fingerprint(FILE *f, const struct fb_fp_diff *d, size_t n,
                                  const char *bname, const char *nname);

/* The terminal screen's limits: about 60 lines for two different runs. */
enum {
    FB_GLANCE_MAX_REGRESSIONS = 20,
    FB_GLANCE_MAX_IMPROVEMENTS = 10,
    FB_GLANCE_MAX_FINGERPRINT = 15,
};

/* Prints compare's screen (compare_glance.c): the verdict and the count of each verdict; the
 * regressions ranked by the size of the change (at most FB_GLANCE_MAX_REGRESSIONS, the rest
 * counted); the improvements beyond noise (at most FB_GLANCE_MAX_IMPROVEMENTS); then the
 * fingerprint differences that can explain a change (versions, GPUs, binding and layout, host
 * and build, the run's options, NCCL_/CUDA_/UCX_/OMPI_MCA_/FB_/NVIDIA_ variables), volatile
 * entries (fp_volatile.h) left out and the others counted; fp_note (not NULL) stands for the
 * differences when they could not be read. */
void fb_compare_print_glance(const struct fb_comparison *c, bool machines, const char *bid,
                             const char *nid, double threshold, const struct fb_fp_diff *d,
                             size_t nd, const char *fp_note);

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

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

/* One run of BASE or NEW as `fabricbench compare` opened it: its name, its folder, its results.csv and env.json,
 * the run id, and the rows read. */
struct fb_cmp_side {
    char name[4096]; /* as given on the command line (or found in a folder of runs) */
    char dir[4096];
    char csv[4200];
    char env[4200];
    char id[128];
    bool has_env;
    struct fb_read_results res;
};

/* A side of a comparison as the outputs show it: its runs (one, or several pooled) and its
 * label (the folder given, or "3 runs: a, b, c"). */
struct fb_cmp_set {
    const struct fb_cmp_side *run;
    size_t n;
    const char *label;
};

/* Whether the comparison's rows were judged run by run (several runs on a side). */
bool fb_compare_by_runs(const struct fb_comparison *c);

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

/* Prints compare's screen (compare_glance.c): the verdict and the count of each verdict; with
 * several runs on a side, each benchmark's run-to-run spread and the runs per side a change of
 * the threshold needs (fb_compare_spread), with one run on each side a line saying the
 * run-to-run noise is unknown; the
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

/* Writes compare.md at path, atomically: the runs of b and n and the rule, with several runs
 * each benchmark's run-to-run spread, the fingerprint
 * differences d[0..nd) (or fp_note, when not NULL, in their place), the count of each verdict,
 * the rows of each verdict, and the plots, written into the folder out (skipped with a
 * warning without gnuplot). Returns 0, or 1 when a file cannot be written (said on stderr). */
int fb_compare_write_md(const char *path, const char *out, const struct fb_cmp_set *b,
                        const struct fb_cmp_set *n, const struct fb_comparison *c,
                        double threshold, bool machines, const struct fb_fp_diff *d, size_t nd,
                        const char *fp_note);

#endif

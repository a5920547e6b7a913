/* Private to report_series.c and report_data.c: the text buffer, the series keys, a plot's
 * selection of rows, the plot set being built and the series plot, which report_series.c
 * defines and report_data.c's plots use; and the x values the series plot tells apart, which
 * report_data.c defines. Not for other modules. */
#ifndef FB_REPORT_DATA_IMPL_H
#define FB_REPORT_DATA_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "log.h"
#include "report_data.h"
#include "results.h"

/* A growing text buffer: p (malloc'ed, NUL-terminated once written to) holds len of cap bytes;
 * ok turns false for good when a write fails. Start it as {.ok = true}. */
struct sb {
    char *p;
    size_t len, cap;
    bool ok;
};

/* Appends printf-formatted text to b, growing it; on failure (out of memory, an encoding error)
 * b->ok turns false and this and later calls append nothing. */
void FB_PRINTF(2, 3) fb_report_sb_printf(struct sb *b, const char *fmt, ...);

/* Appends s as a gnuplot string expression (fb_gp_string: no raw line break, quotes doubled). */
void fb_report_sb_quote(struct sb *b, const char *s);

/* Appends s as the inside of a `#` comment (fb_gp_comment: one line, no trailing backslash). */
void fb_report_sb_comment(struct sb *b, const char *s);

/* ---- series keys ---- */

enum {
    K_RANKS = 1 << 0,
    K_CASE = 1 << 1,
    K_DTYPE = 1 << 2,
    K_BYTES = 1 << 3,
    K_BATCH = 1 << 4,
    K_TRANSPORT = 1 << 5,
};

/* Compares two rows on the keys of mask (case, transport, dtype, bytes, batch, ranks, in that
 * order), strcmp-like. */
int fb_report_key_cmp(const struct fb_row *a, const struct fb_row *b, unsigned mask);

/* The sort of one plot: its series key, then the x value. */
struct sel {
    const struct fb_row **r;
    double *x;
    size_t n;
    unsigned mask;
};

/* Sorts s by series (the keys of s->mask) then x, rows of equal keys and x in the order they
 * were added. false when out of memory (s unchanged). Not thread-safe. */
bool fb_report_sel_sort(struct sel *s);

/* Frees s's arrays and zeroes it. */
void fb_report_sel_free(struct sel *s);

/* Adds row r (not copied: it must outlive s) at x; false when s already holds cap rows. */
bool fb_report_sel_add(struct sel *s, size_t cap, const struct fb_row *r, double x);

/* An empty selection with room for cap rows, keyed by mask (free with fb_report_sel_free).
 * false when out of memory (s is then zeroed). */
bool fb_report_sel_init(struct sel *s, size_t cap, unsigned mask);

/* Which of mask's keys take more than one value among the selected rows. */
unsigned fb_report_varying(const struct sel *s, unsigned mask);

/* A series' title: the keys in `show` (always) and those of `mask` that vary, written into buf
 * (len bytes, truncated to fit): "4 GPUs, batch 32, fp16, fusion 64 MiB, ...". */
void fb_report_series_title(const struct fb_row *r, unsigned show, char *buf, size_t len);

/* ---- the plots ---- */

/* The plot set being built from rows[0..n); ok turns false for good when out of memory. */
struct build {
    const struct fb_row *rows;
    size_t n;
    struct fb_plot_set *set;
    bool ok;
};

/* Appends a plot with its name, template and caption, and no text yet, to b's set and returns
 * it (valid until the next plot is added); NULL, with b->ok false, when out of memory. */
struct fb_plot *fb_report_plot_new(struct build *b, const char *name, const char *tmpl,
                                   const char *caption);

/* Hands the two buffers to the plot p, the last one fb_report_plot_new added, with its count
 * of data lines (or drops the plot and frees them when out of memory, b->ok false). */
void fb_report_plot_finish(struct build *b, struct fb_plot *p, struct sb *dat, struct sb *vars,
                           size_t lines);

/* Starts a plot's gnuplot variables: name, dat (its .dat file), width and height. */
void fb_report_vars_start(struct sb *v, const char *name);

/* An extra columns' writer: appends to dat the extra columns of point i of s (first: the first
 * point of its series). */
typedef void (*extra_fn)(struct sb *dat, const struct sel *s, size_t i, size_t first);

/* One plot of series against x: rows chosen by pred, x from xof, series keyed by mask, titles
 * showing `always` and whichever of mask's keys vary. Adds nothing when no row is chosen; b->ok
 * false when out of memory. The median, p05 and p95 are multiplied by scale; columns names
 * them in the .dat; extra (NULL: none) appends columns; more_vars (NULL: none) is gnuplot code
 * added to the variables. An x axis of fb_report_x_ranks starts at one GPU; those of
 * fb_report_x_bytes and fb_report_x_fusion have byte tics. */
typedef bool (*pred_fn)(const struct fb_row *r, const void *arg);
typedef double (*x_fn)(const struct fb_row *r);
void fb_report_series_plot(struct build *b, const char *name, const char *tmpl,
                           const char *caption, pred_fn pred, const void *arg, x_fn xof,
                           unsigned mask, unsigned always, double scale, const char *columns,
                           extra_fn extra, const char *more_vars);

/* ---- x values (report_data.c) ---- */

/* A row's bytes and ranks. */
double fb_report_x_bytes(const struct fb_row *r);
double fb_report_x_ranks(const struct fb_row *r);

/* densenet_allreduce's threshold: fusion_<SIZE>; NAN for flat, per_tensor and the rest. */
double fb_report_x_fusion(const struct fb_row *r);

#endif

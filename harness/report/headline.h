/* A run's headline: the figure each benchmark is read for (bus bandwidth, bandwidth, images/s,
 * TFLOP/s, a batch) at the largest size of each case and, of a scaling curve, the whole job.
 * `run` prints it at the end from the rows it holds; `report` writes it into summary.md from a
 * results.csv read back, where the rows' detail flags are inferred (fb_headline_infer_detail). */
#ifndef FB_HEADLINE_H
#define FB_HEADLINE_H

#include <stdbool.h>
#include <stddef.h>

#include "results.h"
#include "status.h"

/* Whether a metric is one a headline shows: busbw, bandwidth, bandwidth_total, images_per_s,
 * tflops, batch_max. */
bool fb_headline_metric(const char *metric);

/* The headline rows of rows[0..n) in file order: their indexes go into idx (room for n), their
 * count into *count. Of each series the row at the largest bytes, then the largest batch. Rows
 * marked detail (matrix cells, per-rank shares) are left out, and so are host-strict's (its
 * figures are not measurements). O(n log n). FB_ERR_NOMEM (and
 * *count 0) when its index arrays cannot be had. */
fb_status fb_headline_select(const struct fb_row *rows, size_t n, size_t *idx, size_t *count);

/* results.csv does not carry the detail flag the benchmarks set: this sets rows[i].detail as
 * they do. p2p's matrix and all-pairs cases, compute's cases other than step_ours/step_ref,
 * densenet_allreduce's fusion_* cases and overhead_vs_flat rows, pipeline's ratio rows, and a
 * rank's share of a point (src set, more than one rank) whose all-ranks row (src empty, or a
 * bandwidth_total row) is also there. A test (tests/report.sh) checks that the headline of a
 * read-back run holds every row `run` printed. */
fb_status fb_headline_infer_detail(struct fb_row *rows, size_t n); /* O(n log n); FB_ERR_NOMEM */

/* Whether a headline row's figure comes from a buffer that fits in a last-level cache of
 * llc_bytes, so it measures the cache rather than memory: a bandwidth or busbw row of the host
 * backend (CPU memory) at a size of at most llc_bytes. False when llc_bytes is 0 (unknown),
 * for batches, rows without a size and every other backend (a GPU's copies do not go through
 * the CPU's cache). */
bool fb_headline_in_cache(const struct fb_row *w, unsigned long long llc_bytes);

/* The mark `run` puts after such a row, and the line that explains it:
 * "(in cache): the buffer fits in the 32M last-level cache (hwloc): a cache figure, not
 * memory". */
#define FB_HEADLINE_CACHE_MARK "(in cache)"
void fb_headline_cache_note(unsigned long long llc_bytes, char *buf, size_t len);

/* The size and "who" cells of a headline row: "b32" for a batch, "64M" for bytes, "-" for
 * neither; "0>1" for a pair (0<>1 for both ways), "3" for one rank, "all" for the whole job. */
void fb_headline_cells(const struct fb_row *w, char *size, size_t size_len, char *who,
                       size_t who_len);

/* A row's share of its expected figure and the part that bounds it (docs/expected.md):
 * "102% of 0.09415 GB/s (eth 800 Mb/s fbv0)"; "" when the row has no expected figure. */
void fb_headline_expected(const struct fb_row *w, char *buf, size_t len);

#endif
